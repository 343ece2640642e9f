"""Speed of the likelihood families (issue 28), each against PyMC + nutpie in the same run.

Every workload runs end to end in a fresh Python process (imports, reading or simulating the
table, loading the compiled kernel, sampling, diagnostics, model check and summary),
measured from outside by ``bench_speed.run_child``: wall and CPU seconds (user + system of
the child) and peak memory. Workloads (targets from the issue):

1. ZOIB on Robust04 AP (249 x 110): bulk and tail ESS >= 4,000, R-hat <= 1.01, <= 60 s;
2. Bernoulli on 500 items x 100 systems (simulated, seeded): <= 30 s;
3. ``compare_likelihoods`` on Robust04 AP (its default candidates): <= 3 min, <= 2 GB;
4. the Polya-Gamma alternative for workload 2: the cost of one Gibbs sweep's unavoidable
   work (a Polya-Gamma draw per cell with the ``polyagamma`` package, and the joint draw of
   the effects given those weights: the systems' Schur complement, its Cholesky factor and
   two triangular solves) against the NUTS cost per effective draw of the same table.

The reference of 1 and 2 is the family's PyMC model (``build_model(table, likelihood=...)``,
the same priors and parameterisation) compiled and sampled by nutpie with the draws given.
Run: ``python benchmarks/bench_families.py [--no-reference] [--only N ...]``. Figures are
for whatever machine runs it; they are noisy when it is shared (the load average is
printed first).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_speed import HEADER, ratio, run_child, show  # noqa: E402

CHILD = r'''
import json, sys, time, warnings
t_start = time.perf_counter()
import numpy as np
spec = json.loads(sys.argv[1])
DATA = spec["data"]


def robust():
    from bayes_ir.readers import read_scores
    t = read_scores(DATA + "/robust2004/robust2004_ap.csv", measure="AP")
    return t.with_roles(champion="sys1", challengers=["sys2", "sys3", "sys4", "sys5"])


def items(n_t=500, n_s=100, seed=0):
    from scipy import special
    from bayes_ir.table import ScoreTable
    rng = np.random.default_rng(seed)
    eta = rng.normal(0.0, 1.5, (n_t, 1)) + rng.normal(1.0, 0.4, (1, n_s))
    y = (rng.random((n_t, n_s)) < special.expit(eta)).astype(float)
    names = ["champ", "chal"] + [f"m{i:03d}" for i in range(n_s - 2)]
    t = ScoreTable.from_matrix(y, systems=names, measure="accuracy")
    return t.with_roles(champion="champ", challengers=["chal"])


def reference(table, likelihood, draws, tune, seed):
    """The family's PyMC model compiled and sampled by nutpie (compile time apart)."""
    import nutpie
    from bayes_ir.hierarchical import diagnose
    from bayes_ir.hierarchical.families import get_family
    from bayes_ir.hierarchical.fit import assemble_datatree
    from bayes_ir.hierarchical.model import build_model, design_of
    design = design_of(table)
    family = get_family(likelihood).resolved(design)
    pri = family.resolve_priors(design, None)
    t0 = time.perf_counter()
    compiled = nutpie.compile_pymc_model(build_model(design, likelihood=likelihood, priors=pri))
    t1 = time.perf_counter()
    trace = nutpie.sample(compiled, draws=draws, tune=tune, chains=4, seed=seed,
                          progress_bar=False, target_accept=0.9)
    post = trace["posterior"].to_dataset()[[v for v in family.posterior_names]]
    post = family.finish(post.drop_vars([c for c in post.coords
                                         if c not in ("chain", "draw", *post.dims)]), design,
                         pri, seed)
    tree = assemble_datatree(post, design, sample_stats=trace["sample_stats"].to_dataset())
    return t1 - t0, diagnose(tree)


def polya_gamma(table, seed):
    """Seconds of one Gibbs sweep's unavoidable work (see the module docstring)."""
    import polyagamma
    from scipy import linalg
    from bayes_ir.hierarchical.model import design_of
    y = design_of(table).matrix
    n_t, n_s = y.shape
    rng = np.random.default_rng(seed)
    eta = rng.normal(0, 1, (n_t, n_s))
    sweeps = []
    for _ in range(5):
        t0 = time.perf_counter()
        w = polyagamma.random_polyagamma(1.0, eta, random_state=rng)  # (T, S)
        kappa = y - 0.5
        # precision of (topics, systems) given w: diag(w row sums) | w | diag(w col sums)
        d_t = w.sum(axis=1) + 1.0
        schur = np.diag(w.sum(axis=0) + 1.0) - (w.T / d_t) @ w
        rhs = kappa.sum(axis=0) - (w.T / d_t) @ kappa.sum(axis=1)
        chol = linalg.cholesky(schur, lower=True)
        c = linalg.cho_solve((chol, True), rhs + chol @ rng.standard_normal(n_s))
        a = (kappa.sum(axis=1) - w @ c) / d_t + rng.standard_normal(n_t) / np.sqrt(d_t)
        eta = a[:, None] + c[None, :]
        sweeps.append(time.perf_counter() - t0)
    return float(np.median(sweeps))


warnings.simplefilter("ignore")
table = {"robust": robust, "items": items}[spec["table"]]()
out = {"compile_s": 0.0}
if spec["who"] == "ours":
    from bayes_ir.hierarchical import fit
    f = fit(table, likelihood=spec["likelihood"], seed=spec["seed"])
    f.summary()
    d = f.diagnostics
    out["method"] = f.provenance["sampler"]
    out["draws"] = int(f.provenance["draws"])
elif spec["who"] == "compare":
    from bayes_ir.hierarchical import compare_likelihoods
    res = compare_likelihoods(table, seed=spec["seed"])
    d = res.chosen_fit.diagnostics
    out["method"] = "compare_likelihoods -> " + res.chosen
elif spec["who"] == "pg":
    out["sweep_s"] = polya_gamma(table, spec["seed"])
    d = None
else:
    out["compile_s"], d = reference(table, spec["likelihood"], spec["draws"], spec["tune"],
                                    spec["seed"])
    out["method"] = "PyMC model + nutpie"
if d is not None:
    out.update(bulk=float(d.min_ess_bulk), tail=float(d.min_ess_tail), rhat=float(d.max_rhat),
               passed=bool(d.passed))
print("@@" + json.dumps(out))
'''


def workload(label, table, likelihood, target, ref, seed=20200725) -> tuple[dict, float]:
    """Ours, then (unless ``ref`` is None) the reference and the ratio; return ours."""
    spec = {"who": "ours", "table": table, "likelihood": likelihood, "seed": seed}
    rep, wall, cpu, mem = run_child(CHILD, spec)
    ours = show(label, f"bayes_ir ({rep['method']})", rep, wall, cpu, mem, target)
    if ref is not None:
        draws, tune = ref
        spec = {**spec, "who": "ref", "draws": draws, "tune": tune}
        theirs_rep, wall2, cpu2, mem2 = run_child(CHILD, spec)
        theirs = show(label, f"PyMC+nutpie {draws}+{tune}", theirs_rep, wall2, cpu2, mem2)
        ratio(ours, theirs, theirs_rep)
    return rep, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--only", nargs="*", type=int, default=[1, 2, 3, 4])
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    print(HEADER, flush=True)
    if 1 in args.only:
        workload("1 Robust04 AP zoib", "robust", "zoib", (4000, 60, None),
                 None if args.no_reference else (2200, 500))  # fmt: skip
    if 2 in args.only or 4 in args.only:
        rep, wall = workload("2 Bernoulli 500 x 100", "items", "bernoulli", (400, 30, None),
                             None if args.no_reference else (1000, 500))  # fmt: skip
    if 3 in args.only:
        spec = {"who": "compare", "table": "robust", "likelihood": "auto", "seed": 20200725}
        rep3, wall3, cpu3, mem3 = run_child(CHILD, spec)
        show("3 compare_likelihoods Robust04 AP", rep3["method"], rep3, wall3, cpu3, mem3,
             (400, 180, 2048))  # fmt: skip
    if 4 in args.only:
        pg, _, _, _ = run_child(CHILD, {"who": "pg", "table": "items", "seed": 1})
        per_ess = wall / max(min(rep["bulk"], rep["tail"]), 1.0)
        print(
            f"4 Polya-Gamma Gibbs, 500 x 100: one sweep's PG draws + effects draw take "
            f"{pg['sweep_s'] * 1e3:.0f} ms (a lower bound, before the scales' updates and "
            f"before mixing), against {per_ess * 1e3:.1f} ms of NUTS wall time per effective "
            f"draw end to end (workload 2)",
            flush=True,
        )


if __name__ == "__main__":
    main()
