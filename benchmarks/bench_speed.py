"""Speed of the everyday commands and of the samplers (issues 21, 33), with references.

Each workload runs end to end in a fresh Python process (imports, building or reading
the table, compilation or loading of compiled code, sampling, diagnostics and the
printed summary) and is measured from outside: wall and CPU seconds (user + system of
the child, from ``os.wait4``) and peak memory (the child's maximum resident set). The
child reports the compile (or compiled-code loading) seconds, the minimum bulk and
tail ESS over every hyperparameter, system effect and challenger - champion contrast
(``fit.diagnostics``) and the largest R-hat. In the same run the same figures are
printed for the reference: the full PyMC model (``bayes_ir.hierarchical.build_model``,
the same priors) sampled by nutpie, with the ratio of ESS per second.

Workloads (targets from the issues; ``../shared/data`` must be present):

1. rb04 with 10% of the cells missing at random, Gaussian: ESS >= 10,000 in <= 15 s;
2. a pooled table shaped like TREC DL 2019 + 2020 passage (43 + 54 topics in two
   disjoint sets, 90 systems: 10 in both years, 30 in 2019 only, 50 in 2020 only, and
   3% of the remaining cells missing), Gaussian: ESS >= 10,000 in <= 20 s;
3. rb04 skew-normal: ESS >= 10,000 in <= 15 s;
4. Robust04 AP skew-normal (249 x 110) with 5 seeds: each ESS >= 4,000 in <= 30 s;
5. 5,000 topics x 1,000 systems complete Gaussian, default options: <= 20 s and peak
   memory <= 2 GB (no reference: nutpie on 5M cells would take hours);
6. a sweep of 10 rb04-shaped tables with gaps (Gibbs) and 10 with the skew-normal:
   compiled-code cost of the whole sweep against one fit's;
7. the diagnostics (R-hat, bulk and tail ESS, MCSE) of 1,000 quantities x 4 chains x
   10,000 draws: <= 2 s; reference ArviZ (arviz_stats) on 50 of them, times 20;
8. ``bayes-ir fit`` on rb04 (50 x 45), default options, process start to printed
   summary: <= 3 s; reference: the same model in PyMC sampled by nutpie (4 x 1,000);
9. the same on Robust04 AP (249 x 110): <= 6 s;
10. ``bayes-ir review`` on a TREC DL-shaped table (54 topics x 59 runs, 3 challengers,
    BRisk at r = 1, 2, 5, 10): <= 20 s;
11. ``bayes-ir risk --r 5`` on rb04: <= 5 s;
12. ``compare_likelihoods`` on Robust04 AP: <= 180 s and <= 2 GB;
13. Gaussian, 2,000 topics x 500 systems with 10% of the cells missing: ESS >= 10,000
    in <= 120 s (the blocked Gibbs sampler factorises a (K+1)^2 matrix per iteration in
    the smaller dimension K; about 2 minutes, not run by default, ``--only 13``);
14. Robust04 AP, Gaussian with one residual SD per system (``sigma="system"``, NUTS on its
    kernel; no target in the issues): the reference is the same PyMC model with nutpie.

Rows 8-12 run the command line (or the function) end to end in a fresh process; their
ESS columns are empty (``-``). Every process uses the interpreter that runs this script:
run it with the interpreter of a plain install (``pip install bayes_ir``, no extras) to
time what a user's command takes. The ``dev`` extra installs dask (for the sweeps' tests),
and xarray imports an installed dask at its first array (about 0.6 s of a command's
start; bayes_ir itself never imports it).

Run: ``python benchmarks/bench_speed.py [--no-reference] [--no-stan] [--only N ...]
[--seeds K]``. Our rows use the package defaults (draws included); a reference whose
R-hat fails 1.01 gets no ratio. Stan (rstanarm) runs on workload 1 when R has it.
Figures are for whatever machine runs it; they are noisy when it is shared (the load
average is printed first).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BAYES_IR_DATA", ROOT.parent / "shared" / "data"))

CHILD = r'''
import json, sys, time, warnings
t_start = time.perf_counter()
import numpy as np
spec = json.loads(sys.argv[1])
DATA = spec["data"]


def rb04(missing=0.0, seed=0):
    from bayes_ir.readers import read_scores
    from bayes_ir.table import ScoreTable
    t = read_scores(DATA + "/bayesian_risk/rb04_data.csv", measure="AP")
    if missing:
        d = t.data
        keep = np.random.default_rng(seed).uniform(size=len(d)) >= missing
        t = ScoreTable.from_frame(d[keep].reset_index(drop=True), missing="keep")
    return t.with_roles(champion="Champion", challengers="Chal.*")


def pooled(seed=0):
    """TREC DL 2019 + 2020 passage in shape: disjoint topic sets, systems per year."""
    from bayes_ir.table import ScoreTable
    rng = np.random.default_rng(seed)
    n19, n20, both, only19, only20 = 43, 54, 10, 30, 50
    n_t, n_s = n19 + n20, both + only19 + only20
    a = rng.normal(0, 0.15, n_t) + np.r_[np.zeros(n19), np.full(n20, -0.03)]
    c = rng.normal(0, 0.06, n_s)
    y = np.clip(0.55 + a[:, None] + c[None, :] + rng.normal(0, 0.12, (n_t, n_s)), 0, 1)
    y[n19:, both:both + only19] = np.nan
    y[:n19, both + only19:] = np.nan
    gaps = rng.uniform(size=y.shape) < 0.03
    gaps[:, :both] = False
    y[gaps] = np.nan
    systems = ["bm25", "chal_dense", "chal_splade"] + [f"run{i:02d}" for i in range(n_s - 3)]
    topics = [f"q19_{i}" for i in range(n19)] + [f"q20_{i}" for i in range(n20)]
    t = ScoreTable.from_matrix(y, systems=systems, topics=topics, measure="nDCG@10",
                               collection="dl19+20", missing="keep")
    return t.with_roles(champion="bm25", challengers="chal_*")


def robust():
    from bayes_ir.readers import read_scores
    t = read_scores(DATA + "/robust2004/robust2004_ap.csv", measure="AP")
    return t.with_roles(champion="sys1", challengers=["sys2", "sys3", "sys4", "sys5"])


def gaps_at_scale(n_t=2000, n_s=500, seed=0):
    from bayes_ir.table import ScoreTable
    rng = np.random.default_rng(seed)
    y = (0.3 + rng.normal(0, 0.2, (n_t, 1)) + rng.normal(0, 0.02, (1, n_s))
         + rng.normal(0, 0.1, (n_t, n_s)))
    y[rng.uniform(size=y.shape) < 0.10] = np.nan
    y[:, :2] = np.where(np.isnan(y[:, :2]), 0.3, y[:, :2])
    names = ["champ", "chal"] + [f"r{i}" for i in range(n_s - 2)]
    return ScoreTable.from_matrix(y, systems=names, measure="sim", missing="keep").with_roles(
        champion="champ", challengers=["chal"])


def big(n_t=5000, n_s=1000, seed=0):
    from bayes_ir.table import ScoreTable
    rng = np.random.default_rng(seed)
    y = (0.3 + rng.normal(0, 0.2, (n_t, 1)) + rng.normal(0, 0.02, (1, n_s))
         + rng.normal(0, 0.1, (n_t, n_s)))
    names = ["champ", "chal"] + [f"r{i}" for i in range(n_s - 2)]
    return ScoreTable.from_matrix(y, systems=names, measure="sim").with_roles(
        champion="champ", challengers=["chal"])


RSTANARM = """
suppressMessages(library(rstanarm))
d <- read.csv(commandArgs(TRUE)[1], colClasses = c("character", "character", "numeric"))
t0 <- proc.time()[["elapsed"]]
f <- stan_glmer(score ~ (1 | topic) + (1 | system), data = d, chains = 4, iter = 2000,
                cores = 2, seed = 1, refresh = 0)
el <- proc.time()[["elapsed"]] - t0
s <- summary(f)
keep <- grepl("system", rownames(s)) | rownames(s) %in% c("(Intercept)", "sigma")
keep <- keep & !grepl("mean_PPD|log-posterior", rownames(s))
cat("@@", el, min(s[keep, "n_eff"]), max(s[keep, "Rhat"]), "\\n")
"""


def compiled_code(kind):
    """Seconds to load (or compile, with an empty cache) the package's numba code."""
    t0 = time.perf_counter()
    if kind == "gibbs":
        import bayes_ir.hierarchical.gibbs_kernel as k
        k.run_chain  # noqa: B018
        from bayes_ir.hierarchical.gibbs import sample_gibbs
        from bayes_ir.hierarchical.priors import Priors
        pri = Priors(b0_mu=0, b0_sd=1, sigma_rate=1, sigma_topic_rate=1, sigma_system_rate=1,
                     skewness_max=0.9)
        sample_gibbs(np.array([0, 0, 1, 1, 2]), np.array([0, 1, 0, 1, 1]),
                     np.array([.1, .2, .3, .4, .5]), (3, 2), pri, chains=1, draws=2, tune=0,
                     seed=0)
    elif kind == "skew":
        import bayes_ir.hierarchical.skewnormal_kernel  # noqa: F401  (cfuncs load here)
    elif kind == "sigma":
        import bayes_ir.hierarchical.families.gaussian_kernel  # noqa: F401  (cfuncs load here)
    return time.perf_counter() - t0


def reference(table, likelihood, draws, tune, seed, sigma="pooled"):
    """The full PyMC model sampled by nutpie (compile time separate)."""
    import nutpie
    from bayes_ir.hierarchical import diagnose, sampling
    from bayes_ir.hierarchical.fit import assemble_datatree
    from bayes_ir.hierarchical.model import SIGN_LOGODDS, build_model, design_of
    from bayes_ir.hierarchical.priors import autoscale_priors
    design = design_of(table)
    pri = autoscale_priors(design.score)
    t0 = time.perf_counter()
    model = build_model(design, priors=pri, likelihood=likelihood, loglik="full", sigma=sigma)
    compiled = nutpie.compile_pymc_model(model)
    t1 = time.perf_counter()
    trace = nutpie.sample(compiled, draws=draws, tune=tune, chains=4, seed=seed,
                          progress_bar=False, target_accept=0.9,
                          **({"adaptation": "low_rank"} if likelihood != "gaussian" else {}))
    keep = ["b0", "sigma", "sigma_topic", "sigma_system", "topic_effect", "system_effect"]
    keep += ["sigma_typical", "sigma_log_sd"] if sigma == "system" else []
    post = trace["posterior"].to_dataset()
    if likelihood != "gaussian":
        post = sampling.signed_shape(post[keep + ["abs_skewness", SIGN_LOGODDS]], seed)
    else:
        post = post[keep]
    tree = assemble_datatree(post, design, sample_stats=trace["sample_stats"].to_dataset())
    d = diagnose(tree)
    return t1 - t0, d


warnings.simplefilter("ignore")
kind = spec["table"]
table = {"rb04": lambda: rb04(), "rb04_gaps": lambda: rb04(0.10), "pooled": pooled,
         "robust": robust, "big": big, "gaps_at_scale": gaps_at_scale}[kind]()
out = {}
if spec["who"] == "ours":
    out["compile_s"] = compiled_code(spec.get("code", ""))
    from bayes_ir.hierarchical import fit
    f = fit(table, likelihood=spec["likelihood"], seed=spec["seed"],
            sigma=spec.get("sigma", "pooled"))
    summary = f.summary()
    d = f.diagnostics
    out["method"] = f.method
    out["divergences"] = int(f.provenance.get("divergences", 0) or 0)
elif spec["who"] == "compare":
    from bayes_ir.hierarchical import compare_likelihoods
    out["compile_s"] = 0.0
    res = compare_likelihoods(table, seed=spec["seed"])
    d = res.chosen_fit.diagnostics
    out["method"] = f"compare_likelihoods -> {res.chosen}"
elif spec["who"] == "rstanarm":
    import subprocess, tempfile
    with tempfile.TemporaryDirectory() as tmp:
        table.data[["topic", "system", "score"]].to_csv(tmp + "/t.csv", index=False)
        run = subprocess.run(["Rscript", "-e", RSTANARM, tmp + "/t.csv"], capture_output=True,
                             text=True, check=True)
    line = [x for x in run.stdout.splitlines() if x.startswith("@@")][0].split()
    out.update(compile_s=0.0, method="rstanarm stan_glmer", sampling_s=float(line[1]))
    d = type("D", (), {"min_ess_bulk": float(line[2]), "min_ess_tail": float("nan"),
                       "max_rhat": float(line[3]), "passed": float(line[3]) <= 1.01})
else:
    out["compile_s"], d = reference(table, spec["likelihood"], spec["draws"], spec["tune"],
                                    spec["seed"], spec.get("sigma", "pooled"))
    out["method"] = "PyMC model + nutpie"
out.update(bulk=float(d.min_ess_bulk), tail=float(d.min_ess_tail), rhat=float(d.max_rhat),
           passed=bool(d.passed), inner_s=time.perf_counter() - t_start)
print("@@" + json.dumps(out))
'''

SWEEP = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[1])
from bayes_ir.readers import read_scores
from bayes_ir.table import ScoreTable
from bayes_ir.hierarchical import fit
base = read_scores(spec["data"] + "/bayesian_risk/rb04_data.csv", measure="AP")
tables = []
for i in range(10):
    rng = np.random.default_rng(100 + i)
    d = base.data.copy()
    d["score"] = np.clip(d["score"] + rng.normal(0, 0.02, len(d)), 0, 1)
    keep = rng.uniform(size=len(d)) >= (0.10 if spec["likelihood"] == "gaussian" else 0.0)
    t = ScoreTable.from_frame(d[keep].reset_index(drop=True), missing="keep")
    tables.append(t.with_roles(champion="Champion", challengers="Chal.*"))
from bayes_ir.hierarchical import sampling
import bayes_ir.hierarchical.gibbs_kernel as gk
before = sampling.compile_count()
walls, ess = [], []
for i, t in enumerate(tables):
    t1 = time.perf_counter()
    f = fit(t, likelihood=spec["likelihood"], seed=i, model_check=False,
            **({"draws": 1000} if spec["likelihood"] != "gaussian" else {}))
    walls.append(time.perf_counter() - t1)
    ess.append(min(f.diagnostics.min_ess_bulk, f.diagnostics.min_ess_tail))
print("@@" + json.dumps({"walls": walls, "min_ess": min(ess), "method": f.method,
      "pytensor_compilations": sampling.compile_count() - before,
      "numba_compilations": sum(gk.run_chain.stats.cache_misses.values())}))
"""


def run_child(code: str, spec: dict, env: dict | None = None) -> tuple[dict, float, float, float]:
    """Run ``code`` in a fresh interpreter; return its report, wall s, CPU s and peak MB."""
    spec = {"data": str(DATA), **spec}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", code, json.dumps(spec)],
            stdout=out,
            stderr=err,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        print(errors[-3000:])
        raise SystemExit(f"workload failed: {spec}")
    report = json.loads([ln for ln in text.splitlines() if ln.startswith("@@")][-1][2:])
    return report, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


HEADER = (
    f"{'workload':<34} {'sampler':<26} {'wall s':>7} {'CPU s':>7} {'compile':>7} "
    f"{'bulk':>7} {'tail':>7} {'R-hat':>6} {'ESS/s':>7} {'peak MB':>8}  target"
)


def show(label: str, sampler: str, rep: dict, wall: float, cpu: float, mem: float, target=None):
    """Print one row; return ESS per wall second."""
    ess = rep["bulk"] if rep["tail"] != rep["tail"] else min(rep["bulk"], rep["tail"])
    rate = ess / wall
    verdict = ""
    if target is not None:
        ess_min, wall_max, mem_max = target
        ok = ess >= ess_min and wall <= wall_max and rep["rhat"] <= 1.01
        ok = ok and (mem_max is None or mem <= mem_max)
        bound = f"ESS>={ess_min:,} in <={wall_max}s" + (
            f", <={mem_max / 1024:.0f} GB" if mem_max else ""
        )
        verdict = f"{'MET' if ok else 'MISSED'} ({bound})"
    print(
        f"{label:<34} {sampler:<26} {wall:7.1f} {cpu:7.1f} {rep['compile_s']:7.2f} "
        f"{rep['bulk']:7.0f} {rep['tail']:7.0f} {rep['rhat']:6.3f} {rate:7.0f} {mem:8.0f}  "
        f"{verdict}",
        flush=True,
    )
    return rate


def reference_row(label: str, table: str, likelihood: str, draws: int, tune: int,
                  ours_wall: float) -> None:  # fmt: skip
    """The PyMC model sampled by nutpie, end to end in a fresh process, beside a command."""
    spec = {"who": "ref", "table": table, "likelihood": likelihood, "seed": 20200725,
            "draws": draws, "tune": tune}  # fmt: skip
    rep, wall, cpu, mem = run_child(CHILD, spec)
    show(label, f"PyMC+nutpie {draws}+{tune}", rep, wall, cpu, mem)
    print(f"{'':<34} {'ratio of wall s (ref/ours)':<26} {wall / ours_wall:7.1f}x", flush=True)


def workload(label, table, likelihood, code, target, ref, seed=20200725, stan=False,
             sigma="pooled"):  # fmt: skip
    """Ours, then (unless ``ref`` is None) the reference, then the ratio.

    ``stan``: also Stan through rstanarm (Gaussian only; run on workload 1, where it takes
    minutes: its centred random effects mix slowly)."""
    spec = {"who": "ours", "table": table, "likelihood": likelihood, "seed": seed, "code": code,
            "sigma": sigma}  # fmt: skip
    rep, wall, cpu, mem = run_child(CHILD, spec)
    ours = show(label, f"bayes_ir ({rep['method']})", rep, wall, cpu, mem, target)
    if ref is None:
        return
    draws, tune = ref
    spec = {"who": "ref", "table": table, "likelihood": likelihood, "seed": seed,
            "draws": draws, "tune": tune, "sigma": sigma}  # fmt: skip
    rep, wall, cpu, mem = run_child(CHILD, spec)
    theirs = show(label, f"PyMC+nutpie {draws}+{tune}", rep, wall, cpu, mem)
    ratio(ours, theirs, rep)
    if stan and likelihood == "gaussian":
        spec["who"] = "rstanarm"
        rep, wall, cpu, mem = run_child(CHILD, spec)
        stan_rate = show(label, "Stan (rstanarm) 1000+1000", rep, wall, cpu, mem)
        ratio(ours, stan_rate, rep,
              f"  (Stan: n_eff, sampling {rep['sampling_s']:.0f}s; CPU includes R)")  # fmt: skip


def ratio(ours: float, theirs: float, rep: dict, note: str = "") -> None:
    """Print our ESS/s over the reference's, unless the reference failed its R-hat."""
    if rep["rhat"] > 1.01:  # an ESS of chains that disagree is no rate to compare with
        print(f"{'':<34} reference failed its diagnostics (R-hat {rep['rhat']:.3f}): no ratio"
              f"{note}", flush=True)  # fmt: skip
    else:
        print(f"{'':<34} {'ratio of ESS/s':<26} {ours / theirs:7.1f}x{note}", flush=True)


def sweep(likelihood: str) -> None:
    """10 datasets of one shape in one process: compiled code loaded once, never recompiled."""
    rep, wall, cpu, mem = run_child(SWEEP, {"likelihood": likelihood})
    walls = sorted(rep["walls"][1:])
    first, typical = rep["walls"][0], walls[len(walls) // 2]
    print(
        f"sweep of 10 rb04-shaped tables, {likelihood:<11} ({rep['method']}): first fit "
        f"{first:.1f}s, median of the other 9 {typical:.1f}s (one-time cost "
        f"{max(first - typical, 0):.1f}s); compilations during the sweep: PyTensor "
        f"{rep['pytensor_compilations']}, numba {rep['numba_compilations']}; total {wall:.1f}s "
        f"wall, {cpu:.1f}s CPU; min ESS {rep['min_ess']:.0f}",
        flush=True,
    )


DIAGNOSTICS = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[1])
rng = np.random.default_rng(0)
x = rng.standard_normal((4, 10_000, 1000))
x[..., ::10] = np.cumsum(x[..., ::10], axis=1) / 30  # every 10th quantity mixes slowly
if spec["who"] == "ours":
    from bayes_ir.hierarchical import draw_diagnostics
    draw_diagnostics(x[:, :100, :2])  # load the compiled loop
    t0, w0 = time.process_time(), time.perf_counter()
    draw_diagnostics(x)
    share = 1
else:
    from arviz_stats.base import array_stats as azs
    xa = np.moveaxis(x[..., :50], -1, 0)
    t0, w0 = time.process_time(), time.perf_counter()
    azs.rhat(xa), azs.ess(xa, method="bulk"), azs.ess(xa, method="tail", prob=0.05)
    azs.mcse(xa, method="mean"), azs.mcse(xa, method="sd")
    share = 20
print("@@" + json.dumps({"cpu": (time.process_time() - t0) * share,
                         "wall": (time.perf_counter() - w0) * share, "share": share}))
"""


def run_command(argv: list[str]) -> tuple[float, float, float]:
    """Run a command in a fresh process; return wall s, CPU s (with children) and peak MB."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=ROOT)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 3):  # 3: a --strict gate failure
        raise SystemExit(f"command failed: {' '.join(argv)}")
    # children of the command (the sweep's worker processes) are counted by RUSAGE_CHILDREN
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def command_row(label: str, argv: list[str], wall_max: float, mem_max: float | None = None):
    """One row for a command run end to end (no ESS: the command's own gate decides)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, _, mem = run_command(argv)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ok = wall <= wall_max and (mem_max is None or mem <= mem_max)
    bound = f"<={wall_max:g}s" + (f", <={mem_max / 1024:.0f} GB" if mem_max else "")
    print(f"{label:<34} {'bayes_ir (command line)':<26} {wall:7.1f} {cpu:7.1f} {'-':>7} "
          f"{'-':>7} {'-':>7} {'-':>6} {'-':>7} {mem:8.0f}  "
          f"{'MET' if ok else 'MISSED'} ({bound})", flush=True)  # fmt: skip
    return wall


def dl_shaped(path: Path) -> None:
    """Write a TREC DL 2020-shaped nDCG@10 table: 54 topics x 59 runs, 3 challengers."""
    rng = np.random.default_rng(0)
    n_t, n_s = 54, 59
    y = 0.55 + rng.normal(0, 0.18, (n_t, 1)) + rng.normal(0, 0.05, (1, n_s))
    y = np.clip(y + rng.normal(0, 0.12, (n_t, n_s)), 0, 1)
    systems = ["bm25", "chal_dense", "chal_splade", "chal_colbert"]
    systems += [f"run{i:02d}" for i in range(n_s - 4)]
    lines = ["topic,system,score"] + [
        f"q{t},{s},{float(y[t, j])!r}" for t in range(n_t) for j, s in enumerate(systems)
    ]
    path.write_text("\n".join(lines) + "\n")


def diagnostics_rows() -> None:
    """Workload 7: ours on 1,000 quantities, ArviZ on 50 of them (times 20).

    The wall and CPU seconds are those of the call (ours runs blocks of quantities in
    :data:`bayes_ir.hierarchical.diagnostics.DIAGNOSE_THREADS` threads: its wall is below
    its CPU on an idle machine); the target is read on the CPU seconds.
    """
    for who, name in (("ours", "bayes_ir draw_diagnostics"), ("arviz", "ArviZ, 50 x 20")):
        rep, wall, cpu, mem = run_child(DIAGNOSTICS, {"who": who})
        target = "MET" if rep["cpu"] <= 2 else "MISSED"
        print(f"{'diagnostics 1000 x 4 x 10,000':<34} {name:<26} {rep['wall']:7.1f} "
              f"{rep['cpu']:7.1f} {'-':>7} {'-':>7} {'-':>7} {'-':>6} {'-':>7} {mem:8.0f}  "
              + (f"{target} (CPU <=2s; process wall {wall:.1f}s)" if who == "ours" else ""),
              flush=True)  # fmt: skip
        if who == "ours":
            ours = rep["cpu"]
    print(f"{'':<34} {'ratio of CPU s':<26} {rep['cpu'] / ours:7.1f}x", flush=True)


def _has_rstanarm() -> bool:
    """True when ``Rscript`` can load rstanarm (the Stan reference of the Gaussian rows)."""
    try:
        run = subprocess.run(
            ["Rscript", "-e", "library(rstanarm)"], capture_output=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return run.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-reference", action="store_true", help="skip PyMC+nutpie")
    parser.add_argument("--only", type=int, nargs="*", help="workload numbers to run (1-14)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds of workload 4")
    parser.add_argument(
        "--no-stan", action="store_true", help="skip Stan (rstanarm, when R has it installed)"
    )
    args = parser.parse_args()
    if not (DATA / "bayesian_risk" / "rb04_data.csv").exists():
        raise SystemExit(f"data not found under {DATA} (set BAYES_IR_DATA)")
    run = set(args.only or [*range(1, 13), 14])
    ref = not args.no_reference
    stan = ref and not args.no_stan and _has_rstanarm()
    if ref and not stan:
        print("Stan reference not run: R's rstanarm is not installed (or --no-stan)")
    print(f"bayes_ir speed benchmark; {os.cpu_count()} CPUs; load average {os.getloadavg()}")
    print(HEADER)
    if 1 in run:
        workload("rb04 10% missing, Gaussian", "rb04_gaps", "gaussian", "gibbs",
                 (10_000, 15, None), (2000, 1000) if ref else None, stan=stan)  # fmt: skip
    if 2 in run:
        workload("pooled DL19+20-shaped, Gaussian", "pooled", "gaussian", "gibbs",
                 (10_000, 20, None), (2000, 1000) if ref else None, stan=False)  # fmt: skip
    if 3 in run:
        workload("rb04 skew-normal", "rb04", "skew_normal", "skew", (10_000, 15, None),
                 (4000, 500) if ref else None)  # fmt: skip
    if 4 in run:
        for seed in range(args.seeds):
            workload(f"Robust04 AP skew-normal, seed {seed}", "robust", "skew_normal", "skew",
                     (4_000, 30, None), (2000, 500) if ref and seed == 0 else None,
                     seed=seed)  # fmt: skip
    if 5 in run:
        workload("5000 x 1000 complete, Gaussian", "big", "gaussian", "",
                 (10_000, 20, 2048), None)  # fmt: skip
        print(f"{'':<34} reference not run: nutpie on 5M cells needs hours (one gradient "
              "is a pass over 5M cells, times ~10^5-10^6 gradients)")  # fmt: skip
    if 6 in run:
        sweep("gaussian")
        sweep("skew_normal")
    if 7 in run:
        diagnostics_rows()
    cli = [sys.executable, "-m", "bayes_ir"]
    rb04_file = str(DATA / "bayesian_risk" / "rb04_data.csv")
    robust_file = str(DATA / "robust2004" / "robust2004_ap.csv")
    if 8 in run:
        wall = command_row("rb04 fit, command line", [*cli, "fit", rb04_file, "-c",
                           "Champion", "-C", "Chal.*"], 3)  # fmt: skip
        if ref:
            reference_row("rb04 fit, command line", "rb04", "gaussian", 1000, 1000, wall)
    if 9 in run:
        wall = command_row("Robust04 AP fit, command line", [*cli, "fit", robust_file, "-c",
                           "sys1", "-C", "sys2", "-C", "sys3", "-C", "sys4", "-C", "sys5"],
                           6)  # fmt: skip
        if ref:
            reference_row("Robust04 AP fit, command line", "robust", "gaussian", 1000, 1000,
                          wall)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        if 10 in run:
            table = Path(tmp) / "dl.csv"
            dl_shaped(table)
            command_row("review, DL-shaped 54 x 59", [*cli, "review", str(table), "-c", "bm25",
                        "-C", "chal_*", "-m", "nDCG@10", "--r", "1,2,5,10", "-o",
                        str(Path(tmp) / "review.html")], 20)  # fmt: skip
        if 11 in run:
            command_row("risk --r 5, rb04", [*cli, "risk", rb04_file, "-c", "Champion", "-C",
                        "Chal.*", "--r", "5"], 5)  # fmt: skip
    if 12 in run:
        spec = {"who": "compare", "table": "robust", "likelihood": "auto", "seed": 1}
        rep, wall, cpu, mem = run_child(CHILD, spec)
        show("compare_likelihoods Robust04 AP", rep["method"][:26], rep, wall, cpu, mem,
             (400, 180, 2048))  # fmt: skip
    if 14 in run:
        workload("Robust04 AP, per-system SD", "robust", "gaussian", "sigma", None,
                 (2000, 1000) if ref else None, sigma="system")  # fmt: skip
    if 13 in (args.only or ()):
        workload("2000 x 500, 10% missing", "gaps_at_scale", "gaussian", "gibbs",
                 (10_000, 120, None), None)  # fmt: skip


if __name__ == "__main__":
    main()
