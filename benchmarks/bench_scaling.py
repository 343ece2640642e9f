"""Scaling of the exact sampler's fit with the numbers of topics T and systems S (issue 21).

For each (T, S) of a grid (topics 25..5,000 x systems 10..1,000; ``--quick``: a smaller
grid and 4 x 2,500 draws) a complete Gaussian table is simulated and fitted in this
process with the package defaults, and the stages are timed (wall and CPU seconds):

- ``sample``: :func:`bayes_ir.hierarchical.exact.sample_exact` alone (sufficient
  statistics, rejection sampling of the three scales, effects given the scales);
- ``fit``: :func:`bayes_ir.hierarchical.fit` without the model check (sampling, the
  DataTree and the diagnostics of every hyperparameter, system effect and contrast);
- ``check``: :func:`bayes_ir.hierarchical.check_model` (posterior predictive checks);
- ``summary``: ``fit.summary()`` (intervals of every system, the contrasts' table).

Then ``log(time) = c + a log T + b log S`` is fitted by least squares to each stage
(points under 0.05 s are left out: timer noise), and ``a``, ``b`` are printed with the
exponent ``e`` of ``log(time) = c + e log(T S)``. The exact sampler reads the data once
(sufficient statistics, O(TS)); per draw it costs O(T + S): the physical limit of a
fit is one pass over the data plus writing the draws.

Then (unless ``--no-end-to-end``) the issue's workloads end to end, each in a fresh
process (imports, building the table, ``fit`` with the defaults, ``fit.summary()``): 2,000
x 500 and 5,000 x 1,000 (``--quick``: 500 x 100 and 2,000 x 500), with wall and CPU
seconds, peak resident memory and min bulk/tail ESS (target for 5,000 x 1,000: ESS >=
10,000 in <= 120 s, peak <= 4 GB).

Run: ``python benchmarks/bench_scaling.py [--quick] [--no-end-to-end]``. Figures are for
the machine that runs it (noisy when shared; CPU seconds are steadier than wall seconds).
The peak RSS is the largest of the processes run so far (they grow).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

TOPICS = (25, 100, 500, 1000, 5000)
SYSTEMS = (10, 50, 200, 1000)
QUICK_TOPICS = (25, 100, 500, 2000)
QUICK_SYSTEMS = (10, 50, 250)
STAGES = ("sample", "fit", "check", "summary")
ROOT = Path(__file__).resolve().parents[1]
END_TO_END = """
import sys
sys.path.insert(0, sys.argv[3])
from bench_scaling import simulated_table
from bayes_ir.hierarchical import fit
f = fit(simulated_table(int(sys.argv[1]), int(sys.argv[2])), seed=1)
text = f.summary()
d = f.diagnostics
print(f"@@ {d.min_ess_bulk:.0f} {d.min_ess_tail:.0f} {d.max_rhat:.4f}")
"""


def simulated_table(n_topics: int, n_systems: int, seed: int = 0):
    """A complete table with rb04-like scales: topic SD 0.2, system SD 0.02, residual 0.1."""
    from bayes_ir.table import ScoreTable

    rng = np.random.default_rng([seed, n_topics, n_systems])
    y = (
        0.3
        + rng.normal(0, 0.2, (n_topics, 1))
        + rng.normal(0, 0.02, (1, n_systems))
        + rng.normal(0, 0.1, (n_topics, n_systems))
    )
    n_chal = min(4, n_systems - 1)
    names = ["champ", *[f"chal{i}" for i in range(n_chal)]]
    names += [f"run{i}" for i in range(n_systems - len(names))]
    return ScoreTable.from_matrix(y, systems=names, measure="sim").with_roles(
        champion="champ", challengers="chal*"
    )


def _timed(func):
    """Return ``(result, wall seconds, CPU seconds)`` of ``func()``."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = func()
    return out, time.perf_counter() - w0, time.process_time() - c0


def measure(n_topics: int, n_systems: int, draws: int | None) -> dict[str, float]:
    """Wall and CPU seconds of each stage, and the fit's min bulk/tail ESS, for one table."""
    from bayes_ir.hierarchical import check_model, fit
    from bayes_ir.hierarchical.exact import sample_exact
    from bayes_ir.hierarchical.priors import autoscale_priors

    table = simulated_table(n_topics, n_systems)
    matrix = table.matrix().transpose("topic", "system").values
    priors = autoscale_priors(matrix.ravel())
    per_chain = 10_000 if draws is None else draws
    row: dict[str, float] = {"topics": n_topics, "systems": n_systems}
    _, row["sample_wall"], row["sample_cpu"] = _timed(
        lambda: sample_exact(matrix, priors, chains=4, draws=per_chain, seed=1)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, row["fit_wall"], row["fit_cpu"] = _timed(
            lambda: fit(table, draws=draws, seed=1, model_check=False)
        )
        _, row["check_wall"], row["check_cpu"] = _timed(lambda: check_model(f, seed=1))
    _, row["summary_wall"], row["summary_cpu"] = _timed(f.summary)
    row["ess"] = min(f.diagnostics.min_ess_bulk, f.diagnostics.min_ess_tail)
    return row


def end_to_end(n_topics: int, n_systems: int) -> None:
    """One fit in a fresh process: print wall, CPU seconds, peak RSS and min ESS."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-c", END_TO_END, str(n_topics), str(n_systems), str(ROOT / "benchmarks")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit(f"{n_topics} x {n_systems} failed:\n{run.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    bulk, tail, rhat = [x for x in run.stdout.splitlines() if x.startswith("@@")][0].split()[1:]
    print(
        f"{n_topics:>7} {n_systems:>8} wall {wall:7.1f}s cpu {cpu:7.1f}s "
        f"peak RSS {after.ru_maxrss / 1e6:5.2f} GB  min ESS bulk/tail {bulk}/{tail}  "
        f"max R-hat {rhat}",
        flush=True,
    )


def exponents(rows: list[dict[str, float]], column: str) -> tuple[float, float, float]:
    """Least-squares ``(a, b, e)``: time ~ T^a S^b, and time ~ (T S)^e."""
    keep = [r for r in rows if r[column] >= 0.05]
    if len(keep) < 3:
        return (float("nan"),) * 3
    t = np.log([r["topics"] for r in keep])
    s = np.log([r["systems"] for r in keep])
    y = np.log([r[column] for r in keep])
    (_, a, b), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(t), t, s]), y, rcond=None)
    (_, e), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(t), t + s]), y, rcond=None)
    return float(a), float(b), float(e)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller grid, 4 x 2,500 draws")
    parser.add_argument(
        "--no-end-to-end", action="store_true", help="skip the fresh-process workloads"
    )
    args = parser.parse_args()
    topics, systems = (QUICK_TOPICS, QUICK_SYSTEMS) if args.quick else (TOPICS, SYSTEMS)
    draws = 2500 if args.quick else None
    print(f"exact sampler scaling; {os.cpu_count()} CPUs; load {os.getloadavg()}")
    print(f"draws per chain: {draws or 10_000} x 4 chains; seconds wall/CPU per stage")
    head = " ".join(f"{s + ' wall/cpu':>17}" for s in STAGES)
    print(f"{'topics':>7} {'systems':>8} {head} {'min_ess':>8}")
    rows = []
    for n_t in topics:
        for n_s in systems:
            row = measure(n_t, n_s, draws)
            rows.append(row)
            cells = " ".join(f"{row[f'{s}_wall']:8.2f}/{row[f'{s}_cpu']:<8.2f}" for s in STAGES)
            print(f"{n_t:>7} {n_s:>8} {cells} {row['ess']:>8.0f}", flush=True)
    print("\nExponents of CPU time (log-log least squares): time ~ T^a S^b and ~ (T S)^e")
    for stage in STAGES:
        a, b, e = exponents(rows, f"{stage}_cpu")
        print(f"  {stage:<8} a (topics) {a:5.2f}  b (systems) {b:5.2f}  e (cells) {e:5.2f}")
    if args.no_end_to_end:
        return
    print("\nEnd to end in a fresh process (table, fit with the defaults, summary):")
    for n_t, n_s in ((500, 100), (2000, 500)) if args.quick else ((2000, 500), (5000, 1000)):
        end_to_end(n_t, n_s)


if __name__ == "__main__":
    main()
