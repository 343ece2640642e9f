"""Speed of the hierarchical model (issue 8): wall time, min ESS and ESS/s per workload.

Workloads (``../shared/data`` must be present):

1. rb04 (50 topics x 45 systems), Gaussian, exact collapsed sampler: end to end in a
   fresh process (imports, reading, sampling, diagnostics, printed summary);
2. Robust04 AP (249 x 110), Gaussian, exact sampler, end to end;
3. rb04 skew-normal with the package defaults (nutpie on the numba kernel), end to end,
   once with an empty numba cache (first run on a machine: the kernel compiles) and
   once with the cache filled; then in process against PyMC's NUTS and nutpie on the
   PyTensor-compiled PyMC model (the same log density), and Stan when installed;
4. sweeps of 10 datasets of rb04's shape (Gaussian NUTS, skew-normal): compilations
   counted;
5. the rb04 Gaussian model with full-likelihood NUTS: nutpie and PyMC's own NUTS,
   and Stan (pystan 3) when installed, with the ratio to the exact sampler;
6. scaling of the exact sampler over topics (25..1000) and systems (10..500).

Run: ``python benchmarks/bench_hierarchical.py [--quick] [--no-pymc] [--no-stan]``.
Figures are wall-clock seconds on whatever machine runs it (noisy when shared).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BAYES_IR_DATA", ROOT.parent / "shared" / "data"))
RB04 = DATA / "bayesian_risk" / "rb04_data.csv"
ROBUST = DATA / "robust2004" / "robust2004_ap.csv"
ROWS: list[dict] = []

END_TO_END = """
import time, sys
t0 = time.perf_counter()
from bayes_ir.readers import read_scores
from bayes_ir.hierarchical import fit
table = read_scores(sys.argv[1], measure="AP").with_roles(
    champion=sys.argv[2], challengers=sys.argv[3].split(","))
f = fit(table, likelihood=sys.argv[4], seed=1)
print(f.summary())
d = f.diagnostics
print(f"@@ {time.perf_counter() - t0:.3f} {d.min_ess_bulk:.0f} {d.min_ess_tail:.0f} "
      f"{d.max_rhat:.4f}")
"""


def record(workload: str, sampler: str, wall: float, compile_s: float, diag, note: str = ""):
    """Store and print one row of the result table."""
    ess = min(diag.min_ess_bulk, diag.min_ess_tail) if diag is not None else float("nan")
    row = {
        "workload": workload,
        "sampler": sampler,
        "wall_s": wall,
        "compile_s": compile_s,
        "min_ess_bulk": diag.min_ess_bulk if diag is not None else float("nan"),
        "min_ess_tail": diag.min_ess_tail if diag is not None else float("nan"),
        "max_rhat": diag.max_rhat if diag is not None else float("nan"),
        "ess_per_s": ess / wall if wall > 0 else float("nan"),
        "note": note,
    }
    ROWS.append(row)
    print(
        f"{workload:<34} {sampler:<22} wall {wall:7.2f}s compile {compile_s:6.2f}s "
        f"ESS bulk/tail {row['min_ess_bulk']:8.0f}/{row['min_ess_tail']:<8.0f} "
        f"R-hat {row['max_rhat']:.4f} ESS/s {row['ess_per_s']:9.0f} {note}",
        flush=True,
    )


class _Diag:
    def __init__(self, bulk, tail, rhat):
        self.min_ess_bulk, self.min_ess_tail, self.max_rhat = bulk, tail, rhat


def end_to_end(
    label: str,
    path: Path,
    champion: str,
    challengers: list[str],
    likelihood: str = "gaussian",
    numba_cache: str | None = None,
    note: str = "",
) -> None:
    """Fresh process: import, read, fit (package defaults), print the summary."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if numba_cache is not None:
        env["NUMBA_CACHE_DIR"] = numba_cache
    t0 = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-c", END_TO_END, str(path), champion, ",".join(challengers), likelihood],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    wall = time.perf_counter() - t0
    if run.returncode != 0:
        print(run.stderr[-2000:])
        raise SystemExit(f"{label} failed")
    line = [x for x in run.stdout.splitlines() if x.startswith("@@")][0].split()
    inner, bulk, tail, rhat = float(line[1]), float(line[2]), float(line[3]), float(line[4])
    sampler = "exact" if likelihood == "gaussian" else "nutpie+kernel"
    record(
        label,
        f"{sampler} (end to end)",
        wall,
        0.0,
        _Diag(bulk, tail, rhat),
        f"in-process {inner:.2f}s {note}".strip(),
    )


def tables():
    from bayes_ir.readers import read_scores

    rb04 = read_scores(RB04, measure="AP").with_roles(champion="Champion", challengers="Chal.*")
    robust = read_scores(ROBUST, measure="AP").with_roles(
        champion="sys1", challengers=["sys2", "sys3", "sys4", "sys5"]
    )
    return rb04, robust


def nuts_fit(table, label: str, likelihood: str = "gaussian", **kw):
    from bayes_ir.hierarchical import fit, sampling

    before = sampling.compile_count()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = fit(table, method="nuts", likelihood=likelihood, seed=1, **kw)
    t1 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        second = fit(table, method="nuts", likelihood=likelihood, seed=2, **kw)
    t2 = time.perf_counter()
    compiled = sampling.compile_count() - before
    # first call = compile + sample; second = sample only (model from the cache)
    compile_s = max((t1 - t0) - (t2 - t1), 0.0) if compiled else 0.0
    record(label, "nutpie NUTS", t1 - t0, compile_s, first.diagnostics, "first call")
    record(label, "nutpie NUTS (cached)", t2 - t1, 0.0, second.diagnostics, "no compile")
    return first


def exact_inprocess(table, label: str) -> None:
    """The exact sampler in this (warm) process: sampling + diagnostics, no imports."""
    from bayes_ir.hierarchical import fit

    t0 = time.perf_counter()
    f = fit(table, seed=3)
    record(label, "exact (in process)", time.perf_counter() - t0, 0.0, f.diagnostics)


def _bootstrap_tables(rb04, n: int):
    """``n`` datasets of rb04's shape: its topics resampled with replacement."""
    from bayes_ir.table import ScoreTable

    mat = rb04.wide()
    rng = np.random.default_rng(0)
    tables = []
    for _ in range(n):
        boot = mat.iloc[rng.choice(len(mat), size=len(mat), replace=True)].copy()
        boot.index = [f"b{k}" for k in range(len(boot))]
        tables.append(
            ScoreTable.from_matrix(boot, measure="AP").with_roles(
                champion="Champion", challengers="Chal.*"
            )
        )
    return tables


def sweep_no_recompile(rb04, n: int = 10) -> None:
    """10 datasets of rb04's shape, Gaussian model with nutpie NUTS: one compilation."""
    from bayes_ir.hierarchical import fit, sampling

    tables = _bootstrap_tables(rb04, n)
    before = sampling.compile_count()
    t0 = time.perf_counter()
    mins = []
    for i, table in enumerate(tables):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = fit(table, method="nuts", draws=1000, tune=500, seed=i)
        mins.append(min(f.diagnostics.min_ess_bulk, f.diagnostics.min_ess_tail))
    wall = time.perf_counter() - t0
    compiles = sampling.compile_count() - before
    record(
        f"sweep {n} x rb04-shaped Gaussian",
        "nutpie NUTS",
        wall,
        float("nan"),
        _Diag(min(mins), min(mins), float("nan")),
        f"compilations during sweep: {compiles}; {wall / n:.2f}s per dataset",
    )


def pymc_full(table, label: str, draws: int) -> None:
    """PyMC's own NUTS on the full (observation-wise) likelihood."""
    import pymc as pm

    from bayes_ir.hierarchical import diagnose
    from bayes_ir.hierarchical.fit import assemble_datatree
    from bayes_ir.hierarchical.model import build_model, design_of

    design = design_of(table)
    t0 = time.perf_counter()
    model = build_model(design, loglik="full")
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = pm.sample(
            draws=draws,
            tune=1000,
            chains=4,
            cores=2,
            random_seed=1,
            target_accept=0.9,
            progressbar=False,
            nuts_sampler="pymc",
            compute_convergence_checks=False,
        )
    wall = time.perf_counter() - t0
    keep = ["b0", "sigma", "sigma_topic", "sigma_system", "topic_effect", "system_effect"]
    post = trace["posterior"].to_dataset()[keep]
    tree = assemble_datatree(post, design, sample_stats=trace["sample_stats"].to_dataset())
    record(label, "PyMC NUTS full-lik", wall, float("nan"), diagnose(tree), "incl. C compile")


def nutpie_full(table, label: str, draws: int) -> None:
    """nutpie on the full (observation-wise) likelihood, compile separated."""
    import nutpie

    from bayes_ir.hierarchical import diagnose
    from bayes_ir.hierarchical.fit import assemble_datatree
    from bayes_ir.hierarchical.model import build_model, design_of

    design = design_of(table)
    t0 = time.perf_counter()
    compiled = nutpie.compile_pymc_model(build_model(design, loglik="full"))
    t1 = time.perf_counter()
    trace = nutpie.sample(compiled, draws=draws, tune=1000, chains=4, seed=1, progress_bar=False)
    t2 = time.perf_counter()
    keep = ["b0", "sigma", "sigma_topic", "sigma_system", "topic_effect", "system_effect"]
    post = trace["posterior"].to_dataset()[keep]
    tree = assemble_datatree(post, design, sample_stats=trace["sample_stats"].to_dataset())
    record(label, "nutpie NUTS full-lik", t2 - t0, t1 - t0, diagnose(tree))


STAN_CODE = """
data { int<lower=1> T; int<lower=1> S; int<lower=1> N; array[N] int<lower=1,upper=T> tt;
       array[N] int<lower=1,upper=S> ss; vector[N] y; real m0; real s0; real rate; }
parameters { real b0; real<lower=0> sigma; real<lower=0> sigma_topic;
             real<lower=0> sigma_system; sum_to_zero_vector[T] a; sum_to_zero_vector[S] c; }
model {
  b0 ~ normal(m0, s0); sigma ~ exponential(rate); sigma_topic ~ exponential(rate);
  sigma_system ~ exponential(rate);
  a ~ normal(0, sigma_topic); c ~ normal(0, sigma_system);
  y ~ normal(b0 + a[tt] + c[ss], sigma);
}
"""


def stan_full(table, label: str, draws: int) -> None:
    """Stan (pystan 3), when installed: the same zero-sum model, full likelihood."""
    try:
        import stan  # pystan 3
    except ImportError:
        print(f"{label:<34} Stan: pystan not installed (pip install pystan), skipped")
        return
    from bayes_ir.hierarchical import diagnose
    from bayes_ir.hierarchical.fit import assemble_datatree
    from bayes_ir.hierarchical.model import design_of
    from bayes_ir.hierarchical.priors import autoscale_priors

    design = design_of(table)
    pri = autoscale_priors(design.score)
    n_t, n_s = design.shape
    data = {
        "T": n_t,
        "S": n_s,
        "N": int(design.score.size),
        "tt": (design.topic_idx + 1).tolist(),
        "ss": (design.system_idx + 1).tolist(),
        "y": design.score.tolist(),
        "m0": pri.b0_mu,
        "s0": pri.b0_sd,
        "rate": pri.sigma_rate,
    }
    t0 = time.perf_counter()
    posterior = stan.build(STAN_CODE, data=data, random_seed=1)
    t1 = time.perf_counter()
    fit = posterior.sample(num_chains=4, num_samples=draws, num_warmup=1000, delta=0.9)
    t2 = time.perf_counter()

    def arr(name, k=None):
        # pystan 3: shape (k, draws * chains) or (draws * chains,), chains concatenated
        x = np.asarray(fit[name])
        if k is None:
            return x.reshape(4, draws)
        return np.transpose(x.reshape(k, 4, draws), (1, 2, 0))

    post = {
        "b0": arr("b0"),
        "sigma": arr("sigma"),
        "sigma_topic": arr("sigma_topic"),
        "sigma_system": arr("sigma_system"),
        "topic_effect": arr("a", n_t),
        "system_effect": arr("c", n_s),
    }
    tree = assemble_datatree(post, design, sample_stats=None)
    record(label, "Stan NUTS full-lik", t2 - t0, t1 - t0, diagnose(tree))


STAN_SKEW_CODE = """
functions {
  real alpha_of(real m) {  // shape of the skew-normal with skewness m (Azzalini)
    real r = cbrt(2 * m / (4 - pi()));
    real delta = r / sqrt(1 + r^2) / sqrt(2 / pi());
    return delta / sqrt(1 - delta^2);
  }
  real sn_mean_sd_lpdf(vector y, vector mu, real sigma, real alpha) {  // brms mean/SD form
    real delta = alpha / sqrt(1 + alpha^2);
    real omega = sigma / sqrt(1 - 2 * delta^2 / pi());
    return skew_normal_lpdf(y | mu - omega * delta * sqrt(2 / pi()), omega, alpha);
  }
}
data { int<lower=1> T; int<lower=1> S; vector[T * S] y; array[T * S] int tt;
       array[T * S] int ss; real m0; real s0; real rate_t; real rate_s; real rate;
       real gmax; }
parameters { real b0; real<lower=0> sigma; real<lower=0> sigma_topic;
             real<lower=0> sigma_system; sum_to_zero_vector[T] a; sum_to_zero_vector[S] z;
             real<lower=0, upper=gmax> abs_skewness; }
model {
  vector[T * S] mu = b0 + a[tt] + sigma_system * z[ss];
  real big_a = alpha_of(abs_skewness);
  b0 ~ normal(m0, s0); sigma ~ exponential(rate); sigma_topic ~ exponential(rate_t);
  sigma_system ~ exponential(rate_s);
  // PyMC's ZeroSumNormal: N(0, s) on the T - 1 free coordinates of an isometry
  a ~ normal(0, sigma_topic); target += log(sigma_topic);
  z ~ normal(0, 1);
  // the sign of the skewness summed out, as in bayes_ir.hierarchical.model
  target += log_mix(0.5, sn_mean_sd_lpdf(y | mu, sigma, big_a),
                    sn_mean_sd_lpdf(y | mu, sigma, -big_a));
}
"""


def skew_comparison(table, label: str, draws: int, pymc: bool, stan_ok: bool) -> None:
    """rb04 skew-normal: the package (nutpie on the kernel) against other samplers."""
    import nutpie

    from bayes_ir.hierarchical import diagnose, fit, sampling
    from bayes_ir.hierarchical.fit import assemble_datatree
    from bayes_ir.hierarchical.model import SIGN_LOGODDS, design_of
    from bayes_ir.hierarchical.priors import autoscale_priors

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = fit(table, likelihood="skew_normal", seed=1)
    record(label, "nutpie+kernel", time.perf_counter() - t0, 0.0, ours.diagnostics, "defaults")

    design = design_of(table)
    pri = autoscale_priors(design.score)
    tune = ours.provenance["tune"]
    t0 = time.perf_counter()
    compiled, _ = sampling.compiled_model(design, pri, "skew_normal")
    t1 = time.perf_counter()
    trace = nutpie.sample(compiled, draws=draws, tune=tune, chains=4, seed=1,
                          progress_bar=False, target_accept=0.9, adaptation="low_rank")  # fmt: skip
    t2 = time.perf_counter()
    keep = ["b0", "sigma", "sigma_topic", "sigma_system", "topic_effect", "system_effect",
            "abs_skewness", SIGN_LOGODDS]  # fmt: skip
    post = sampling.signed_shape(trace["posterior"].to_dataset()[keep], 1)
    tree = assemble_datatree(post, design, sample_stats=trace["sample_stats"].to_dataset())
    record(label, "nutpie on PyTensor", t2 - t0, t1 - t0, diagnose(tree), "same density")

    if pymc:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = fit(table, likelihood="skew_normal", sampler="pymc", draws=draws, tune=tune,
                      seed=1)  # fmt: skip
        record(label, "PyMC NUTS", time.perf_counter() - t0, float("nan"), ref.diagnostics,
               "incl. C compile")  # fmt: skip
    if stan_ok:
        _stan_skew(design, pri, label, draws, tune)


def _stan_skew(design, pri, label: str, draws: int, tune: int) -> None:
    try:
        import stan  # pystan 3
    except ImportError:
        print(f"{label:<34} Stan: pystan not installed (pip install pystan), skipped")
        return
    from bayes_ir.hierarchical import diagnose
    from bayes_ir.hierarchical.fit import assemble_datatree
    from bayes_ir.hierarchical.model import draw_skewness_sign
    from bayes_ir.hierarchical.skewnormal import skewness_to_alpha, skewnormal_logpdf

    n_t, n_s = design.shape
    tt, ss = np.meshgrid(np.arange(n_t), np.arange(n_s), indexing="ij")
    data = {"T": n_t, "S": n_s, "y": design.matrix.ravel().tolist(),
            "tt": (tt.ravel() + 1).tolist(), "ss": (ss.ravel() + 1).tolist(),
            "m0": pri.b0_mu, "s0": pri.b0_sd, "rate_t": pri.sigma_topic_rate,
            "rate_s": pri.sigma_system_rate, "rate": pri.sigma_rate,
            "gmax": pri.skewness_max}  # fmt: skip
    t0 = time.perf_counter()
    posterior = stan.build(STAN_SKEW_CODE, data=data, random_seed=1)
    t1 = time.perf_counter()
    fitted = posterior.sample(num_chains=4, num_samples=draws, num_warmup=tune, delta=0.9)
    t2 = time.perf_counter()

    def arr(name, k=None):
        x = np.asarray(fitted[name])
        return x.reshape(4, draws) if k is None else np.transpose(x.reshape(k, 4, draws), (1, 2, 0))

    post = {"b0": arr("b0"), "sigma": arr("sigma"), "sigma_topic": arr("sigma_topic"),
            "sigma_system": arr("sigma_system"), "topic_effect": arr("a", n_t)}  # fmt: skip
    post["system_effect"] = post["sigma_system"][..., None] * arr("z", n_s)
    abs_skew = arr("abs_skewness")
    # the sign's log-odds per draw, from the same density (as the package does)
    mu = (
        post["b0"][..., None, None]
        + post["topic_effect"][..., :, None]
        + post["system_effect"][..., None, :]
    )
    big_a = skewness_to_alpha(abs_skew)[..., None, None]
    sig = post["sigma"][..., None, None]
    logodds = (skewnormal_logpdf(design.matrix, mu, sig, big_a).sum(axis=(-2, -1))
               - skewnormal_logpdf(design.matrix, mu, sig, -big_a).sum(axis=(-2, -1)))  # fmt: skip
    post["skewness"], post["alpha"] = draw_skewness_sign(abs_skew, logodds, seed=1)
    tree = assemble_datatree(post, design, sample_stats=None)
    record(label, "Stan NUTS", t2 - t0, t1 - t0, diagnose(tree), "same density")


def skew_sweep(rb04, n: int = 10) -> None:
    """10 rb04-shaped datasets with the skew-normal: nothing is compiled per dataset."""
    from bayes_ir.hierarchical import fit, sampling

    tables = _bootstrap_tables(rb04, n)
    before = sampling.compile_count()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [fit(t, likelihood="skew_normal", draws=1000, seed=i) for i, t in enumerate(tables)]
    wall = time.perf_counter() - t0
    ess = min(min(f.diagnostics.min_ess_bulk, f.diagnostics.min_ess_tail) for f in fits)
    record(f"sweep {n} x rb04-shaped skew-normal", "nutpie+kernel", wall, float("nan"),
           _Diag(ess, ess, float("nan")),
           f"compilations: {sampling.compile_count() - before}; {wall / n:.2f}s per dataset "
           "(4 x 1,000 draws)")  # fmt: skip


def scaling(quick: bool) -> None:
    """Exact sampler cost over topics and systems (simulated, 4 x 2500 draws)."""
    from bayes_ir.hierarchical import fit
    from bayes_ir.table import ScoreTable

    topics = (25, 100, 250, 1000) if quick else (25, 50, 100, 250, 500, 1000)
    systems = (10, 100, 500) if quick else (10, 25, 50, 100, 250, 500)
    print("\nScaling of the exact sampler (simulated data, 4 chains x 2500 draws):")
    print(f"{'topics':>7} {'systems':>8} {'wall_s':>8} {'min_ess':>8} {'ess_per_s':>10}")
    for n_t, n_s in [(t, 45) for t in topics] + [(50, s) for s in systems]:
        rng = np.random.default_rng(n_t * 1000 + n_s)
        y = (
            0.3
            + rng.normal(0, 0.2, (n_t, 1))
            + rng.normal(0, 0.02, (1, n_s))
            + rng.normal(0, 0.1, (n_t, n_s))
        )
        names = ["champ", "chal", *[f"r{i}" for i in range(n_s - 2)]]
        table = ScoreTable.from_matrix(y, systems=names, measure="sim").with_roles(
            champion="champ", challengers=["chal"]
        )
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = fit(table, draws=2500, seed=1)
        wall = time.perf_counter() - t0
        ess = min(f.diagnostics.min_ess_bulk, f.diagnostics.min_ess_tail)
        print(f"{n_t:>7} {n_s:>8} {wall:>8.2f} {ess:>8.0f} {ess / wall:>10.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer draws and scaling points")
    parser.add_argument("--no-pymc", action="store_true", help="skip PyMC's own NUTS")
    parser.add_argument("--no-stan", action="store_true", help="skip Stan")
    parser.add_argument("--no-skew", action="store_true", help="skip the skew-normal workload")
    parser.add_argument(
        "--exact-only", action="store_true", help="only the exact sampler (and its scaling)"
    )
    args = parser.parse_args()
    if not RB04.exists():
        raise SystemExit(f"data not found: {RB04} (set BAYES_IR_DATA)")
    print(f"bayes_ir hierarchical benchmark; {os.cpu_count()} CPUs; load {os.getloadavg()}")
    end_to_end(
        "rb04 Gaussian 50x45", RB04, "Champion", ["Chal. 1", "Chal. 2", "Chal. 3", "Chal. 4"]
    )
    end_to_end("Robust04 AP Gaussian 249x110", ROBUST, "sys1", ["sys2", "sys3", "sys4", "sys5"])
    rb04, robust = tables()
    exact_inprocess(rb04, "rb04 Gaussian")
    exact_inprocess(robust, "Robust04 AP Gaussian 249x110")
    if args.exact_only:
        scaling(args.quick)
        return
    draws = 1000 if args.quick else 2500
    nuts_fit(rb04, "rb04 Gaussian (suff-stat NUTS)", draws=draws)
    if not args.no_skew:
        # issue 8 target: min ESS >= 4,000 in <= 30 s from process start
        challengers = ["Chal. 1", "Chal. 2", "Chal. 3", "Chal. 4"]
        with tempfile.TemporaryDirectory() as cache:
            for note in ("empty numba cache", "numba cache filled"):
                end_to_end("rb04 skew-normal", RB04, "Champion", challengers,
                           likelihood="skew_normal", numba_cache=cache, note=note)  # fmt: skip
        skew_comparison(rb04, "rb04 skew-normal", 500 if args.quick else 1000,
                        pymc=not args.no_pymc, stan_ok=not args.no_stan)  # fmt: skip
        ours = [r for r in ROWS if r["workload"] == "rb04 skew-normal"
                and r["sampler"] == "nutpie+kernel"][0]  # fmt: skip
        print("\nRatio of ESS/s, nutpie on the kernel / other samplers on rb04 skew-normal:")
        for r in ROWS:
            if r["workload"] == "rb04 skew-normal" and "end to end" not in r["sampler"] \
                    and r is not ours and r["ess_per_s"] > 0:  # fmt: skip
                print(f"  vs {r['sampler']:<22} {ours['ess_per_s'] / r['ess_per_s']:8.1f}x")
        skew_sweep(rb04)
    sweep_no_recompile(rb04)
    nutpie_full(rb04, "rb04 Gaussian", draws)
    if not args.no_pymc:
        pymc_full(rb04, "rb04 Gaussian", 1000)
    if not args.no_stan:
        stan_full(rb04, "rb04 Gaussian", 1000)
    exact = [r for r in ROWS if r["sampler"] == "exact (in process)"][0]
    print("\nRatio of ESS/s, exact sampler (in process) / other samplers on rb04 Gaussian:")
    for r in ROWS:
        if r["workload"] == "rb04 Gaussian" and r is not exact and r["ess_per_s"] > 0:
            print(f"  vs {r['sampler']:<22} {exact['ess_per_s'] / r['ess_per_s']:8.1f}x")
    scaling(args.quick)


if __name__ == "__main__":
    main()
