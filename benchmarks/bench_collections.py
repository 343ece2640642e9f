"""Speed of the model across collections (issue 29): blocked Gibbs beside NUTS on its PyMC twin.

Each workload runs end to end in a fresh Python process (imports, building the table,
loading or compiling the numba code, sampling, diagnostics and the printed summary)
and is measured from outside (wall and CPU seconds of the child, from ``os.wait4``,
and peak memory), as ``bench_speed.py`` does. The child reports the smallest bulk and
tail ESS and the largest R-hat over every scale, intercept, system effect, overall
contrast and per-collection contrast (``fit.diagnostics``). In the same run the
reference samples the same model (the PyMC twin
:func:`bayes_ir.hierarchical.samplers.pymc_design.build_design_model`, the same
priors) with nutpie, and the ratio of ESS per wall second is printed.

Workloads (targets from the issue):

1. 13 collections x 50 to 1,000 topics (geometric) x 10 systems, Gaussian, a residual
   and topic SD per collection: ESS >= 10,000 in <= 60 s;
2. Ranger's retrieval runs (``../shared/data/ranger``), 6 collections x 2 systems,
   nDCG@10: a few seconds.

Run: ``python benchmarks/bench_collections.py [--no-reference] [--only N ...]``.
Figures are for whatever machine runs it; the load average is printed first.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("bench_speed", HERE / "bench_speed.py")
assert _spec is not None and _spec.loader is not None
bench_speed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_speed)

CHILD = r"""
import json, sys, time, warnings
t_start = time.perf_counter()
import numpy as np
spec = json.loads(sys.argv[1])
warnings.simplefilter("ignore")


def thirteen(seed=0):
    import pandas as pd
    from bayes_ir.table import ScoreTable
    rng = np.random.default_rng(seed)
    n_topics = np.round(np.geomspace(50, 1000, 13)).astype(int)
    beta = rng.normal(0, 0.03, 10)
    frames = []
    for c, n_t in enumerate(n_topics):
        sig = rng.uniform(0.08, 0.2)
        a = rng.normal(0, rng.uniform(0.1, 0.2), n_t)
        g = rng.normal(0, 0.02, 10)
        y = 0.4 + a[:, None] + beta[None] + g[None] + rng.normal(0, sig, (n_t, 10))
        frames.append(pd.DataFrame({
            "collection": f"coll{c:02d}", "measure": "AP",
            "system": np.tile([f"sys{s}" for s in range(10)], n_t),
            "topic": np.repeat([f"q{t}" for t in range(n_t)], 10), "score": y.ravel()}))
    table = ScoreTable.from_frame(pd.concat(frames), check_range=False)
    return table.with_roles(champion="sys0", challengers=["sys1", "sys2", "sys3"])


def ranger():
    from bayes_ir.readers import read_scores
    t = read_scores(spec["data"] + "/ranger/retrieval_perquery_tidy.csv.gz")
    return t.select(measure="nDCG@10").with_roles(champion="tasb_dim768_hf",
                                                 challengers=["colberter_dim1"])


table = {"thirteen": thirteen, "ranger": ranger}[spec["table"]]()
from bayes_ir.hierarchical import fit_across
t0 = time.perf_counter()
if spec["who"] == "ours":
    import bayes_ir.hierarchical.samplers.blocked_gibbs_kernel as k
    k.run_design_chain  # noqa: B018  (loads the cached numba code)
    compile_s = time.perf_counter() - t0
    f = fit_across(table, seed=spec["seed"])
    method = f.method
else:
    f = fit_across(table, seed=spec["seed"], method="nuts", draws=spec["draws"],
                   tune=spec["tune"], target_accept=0.9)
    compile_s = float("nan")  # nutpie compiles inside; in the wall time
    method = "PyMC twin + nutpie"
summary = f.summary()
d = f.diagnostics
print("@@" + json.dumps({"compile_s": compile_s, "method": method, "bulk": d.min_ess_bulk,
      "tail": d.min_ess_tail, "rhat": d.max_rhat, "passed": bool(d.passed),
      "draws": f.n_draws, "inner_s": time.perf_counter() - t_start}))
"""

WORKLOADS = {
    1: ("13 colls x 50-1000 topics x 10 sys", "thirteen", (10_000, 60, None), (3000, 1000)),
    2: ("Ranger 6 colls x 2 sys (nDCG@10)", "ranger", None, (3000, 1000)),
}


def main() -> None:
    """Run the workloads and print one row per sampler."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-reference", action="store_true", help="skip PyMC + nutpie")
    parser.add_argument("--only", type=int, nargs="*", help="workload numbers to run")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}; {os.cpu_count()} CPUs", flush=True)
    print(bench_speed.HEADER, flush=True)
    for number, (label, table, target, ref) in WORKLOADS.items():
        if args.only and number not in args.only:
            continue
        spec = {"who": "ours", "table": table, "seed": 20200725}
        rep, wall, cpu, mem = bench_speed.run_child(CHILD, spec)
        ours = bench_speed.show(label, f"bayes_ir ({rep['method']})", rep, wall, cpu, mem, target)
        if args.no_reference:
            continue
        draws, tune = ref
        spec = {"who": "ref", "table": table, "seed": 20200725, "draws": draws, "tune": tune}
        rep, wall, cpu, mem = bench_speed.run_child(CHILD, spec)
        rep["compile_s"] = 0.0 if rep["compile_s"] != rep["compile_s"] else rep["compile_s"]
        theirs = bench_speed.show(label, f"PyMC twin+nutpie {draws}+{tune}", rep, wall, cpu, mem)
        bench_speed.ratio(ours, theirs, rep)


if __name__ == "__main__":
    main()
