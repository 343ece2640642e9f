"""Speed of the model of runs (issue 30): blocked Gibbs beside NUTS on its PyMC twin.

Each workload runs end to end in a fresh Python process (imports, building the table,
loading the cached numba code, sampling, diagnostics, the model check and the printed
summary) and is measured from outside (wall and CPU seconds of the child, from
``os.wait4``, and peak memory), as ``bench_speed.py`` does. The child reports the
smallest bulk and tail ESS and the largest R-hat over every scale, the intercept, the
system effects and every challenger's contrast (``fit.diagnostics``). In the same run
the reference samples the same model (the PyMC twin
:func:`bayes_ir.hierarchical.samplers.pymc_design.build_design_model`, the same priors)
with nutpie, and the ratio of ESS per wall second is printed.

Workload (target from the issue): 100 topics x 20 systems x 10 seeds, Gaussian (topic
SD 0.15, topic x system SD 0.05, seed SD 0.03, residual SD 0.05): ESS >= 10,000 in
<= 30 s on 2 cores.

Run: ``python benchmarks/bench_replicates.py [--no-reference]``.
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
import pandas as pd
spec = json.loads(sys.argv[1])
warnings.simplefilter("ignore")
from bayes_ir.table import ScoreTable

rng = np.random.default_rng(30)
n_t, n_s, n_r = spec["shape"]
a = rng.normal(0, 0.15, n_t)
beta = rng.normal(0, 0.03, n_s)
ts = rng.normal(0, 0.05, (n_t, n_s))
rho = rng.normal(0, 0.03, (n_s, n_r))
y = (0.4 + a[:, None, None] + beta[None, :, None] + ts[:, :, None] + rho[None]
     + rng.normal(0, 0.05, (n_t, n_s, n_r)))
t, s, r = np.meshgrid(np.arange(n_t), np.arange(n_s), np.arange(n_r), indexing="ij")
frame = pd.DataFrame({"system": [f"sys{i:02d}" for i in s.ravel()],
                      "topic": [f"q{i}" for i in t.ravel()],
                      "seed": [f"seed{i}" for i in r.ravel()], "score": y.ravel()})
table = ScoreTable.from_frame(frame, measure="AP", check_range=False).with_roles(
    champion="sys00", challengers=["sys01", "sys02", "sys03"])
from bayes_ir.hierarchical import fit_replicates
t0 = time.perf_counter()
if spec["who"] == "ours":
    import bayes_ir.hierarchical.samplers.blocked_gibbs_kernel as k
    k.run_design_chain  # noqa: B018  (loads the cached numba code)
    compile_s = time.perf_counter() - t0
    f = fit_replicates(table, seed=spec["seed"])
    method = f.method
else:
    f = fit_replicates(table, seed=spec["seed"], method="nuts", draws=spec["draws"],
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
    1: ("100 topics x 20 sys x 10 seeds", (100, 20, 10), (10_000, 30, None), (3000, 1000)),
}


def main() -> None:
    """Run the workloads and print one row per sampler."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-reference", action="store_true", help="skip PyMC + nutpie")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}; {os.cpu_count()} CPUs", flush=True)
    print(bench_speed.HEADER, flush=True)
    for label, shape, target, ref in WORKLOADS.values():
        spec = {"who": "ours", "shape": shape, "seed": 20200725}
        rep, wall, cpu, mem = bench_speed.run_child(CHILD, spec)
        ours = bench_speed.show(label, f"bayes_ir ({rep['method']})", rep, wall, cpu, mem, target)
        if args.no_reference:
            continue
        draws, tune = ref
        spec = {"who": "ref", "shape": shape, "seed": 20200725, "draws": draws, "tune": tune}
        rep, wall, cpu, mem = bench_speed.run_child(CHILD, spec)
        rep["compile_s"] = 0.0 if rep["compile_s"] != rep["compile_s"] else rep["compile_s"]
        theirs = bench_speed.show(label, f"PyMC twin+nutpie {draws}+{tune}", rep, wall, cpu, mem)
        bench_speed.ratio(ours, theirs, rep)


if __name__ == "__main__":
    main()
