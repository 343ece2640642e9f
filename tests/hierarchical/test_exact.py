"""The exact collapsed sampler: marginal density, conditional draws, independent scale
draws by rejection sampling (against quadrature and NUTS), its report and its options."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from fixed_priors import PRIORS
from scipy import stats
from scipy.stats import kstest as stats_ks

import bayes_ir.hierarchical.exact as exact
from bayes_ir.errors import BayesIRError, IgnoredOptionWarning, OptionError
from bayes_ir.hierarchical import fit
from bayes_ir.hierarchical.exact import (
    SCALES,
    balanced_statistics,
    draw_effects,
    laplace_proposal,
    log_marginal_many,
    log_marginal_posterior,
    sample_exact,
)
from bayes_ir.table import ScoreTable


def _simulated(n_t: int, n_s: int, seed: int, *, tau=0.15, chi=0.02, sigma=0.1) -> ScoreTable:
    rng = np.random.default_rng(seed)
    a = rng.normal(0, tau, n_t)
    c = rng.normal(0, chi, n_s)
    y = 0.3 + a[:, None] + c[None, :] + rng.normal(0, sigma, (n_t, n_s))
    systems = ["champ", "chal_a", "chal_b", *[f"run{i:02d}" for i in range(n_s - 3)]]
    table = ScoreTable.from_matrix(
        y, systems=systems, topics=[f"t{i:03d}" for i in range(n_t)], measure="score"
    )
    return table.with_roles(champion="champ", challengers="chal_*")


def _zero_sum_basis(n: int) -> np.ndarray:
    """Orthonormal basis (n x n-1) of the sum-to-zero subspace (Helmert contrasts)."""
    q, _ = np.linalg.qr(np.column_stack([np.ones(n), np.eye(n)[:, : n - 1]]))
    return q[:, 1:]


def test_log_marginal_matches_multivariate_normal_density():
    """The closed form equals the N(m0 1, Cov) density of vec(y), up to a constant."""
    rng = np.random.default_rng(0)
    n_t, n_s = 6, 4
    y = rng.normal(0.3, 0.2, (n_t, n_s))
    st = balanced_statistics(y)
    p_t = np.eye(n_t) - 1.0 / n_t
    p_s = np.eye(n_s) - 1.0 / n_s
    ones = np.ones((n_t * n_s, n_t * n_s))

    def mvn(u):
        s, t, c = np.exp(u)
        cov = (
            s**2 * np.eye(n_t * n_s)
            + t**2 * np.kron(p_t, np.ones((n_s, n_s)))
            + c**2 * np.kron(np.ones((n_t, n_t)), p_s)
            + PRIORS.b0_sd**2 * ones
        )
        lik = stats.multivariate_normal(np.full(n_t * n_s, PRIORS.b0_mu), cov).logpdf(y.ravel())
        rates = np.array([PRIORS.sigma_rate, PRIORS.sigma_topic_rate, PRIORS.sigma_system_rate])
        return lik + np.sum(np.log(rates) - rates * np.exp(u) + u)

    points = [rng.normal(np.log([0.1, 0.15, 0.05]), 0.5) for _ in range(6)]
    ours = np.array([log_marginal_posterior(u, st, PRIORS)[0] for u in points])
    ref = np.array([mvn(u) for u in points])
    np.testing.assert_allclose(ours - ours[0], ref - ref[0], atol=1e-9)


def test_log_marginal_gradient_matches_finite_differences():
    y = np.random.default_rng(1).normal(0.3, 0.2, (20, 7))
    st = balanced_statistics(y)
    for u in (np.log([0.1, 0.15, 0.05]), np.array([-1.0, -3.0, -0.5])):
        _, grad = log_marginal_posterior(u, st, PRIORS)
        eps = 1e-6
        num = [
            (
                log_marginal_posterior(u + eps * e, st, PRIORS)[0]
                - log_marginal_posterior(u - eps * e, st, PRIORS)[0]
            )
            / (2 * eps)
            for e in np.eye(3)
        ]
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-6)


def test_conditional_effects_match_gaussian_linear_algebra():
    """Draws of (b0, a, c) given the scales have the mean and covariance of the exact
    Gaussian posterior, computed by brute force in a basis of the zero-sum subspace."""
    rng = np.random.default_rng(2)
    n_t, n_s = 5, 4
    y = rng.normal(0.3, 0.2, (n_t, n_s))
    st = balanced_statistics(y)
    sig, tau, chi = 0.12, 0.2, 0.07
    b_t, b_s = _zero_sum_basis(n_t), _zero_sum_basis(n_s)
    # design of vec(y) on theta = (b0, alpha in R^{T-1}, gamma in R^{S-1})
    x = np.column_stack(
        [
            np.ones(n_t * n_s),
            np.kron(b_t, np.ones((n_s, 1))),
            np.kron(np.ones((n_t, 1)), b_s),
        ]
    )
    prior_prec = np.diag(
        [1 / PRIORS.b0_sd**2] + [1 / tau**2] * (n_t - 1) + [1 / chi**2] * (n_s - 1)
    )
    prior_mean = np.zeros(x.shape[1])
    prior_mean[0] = PRIORS.b0_mu
    prec = x.T @ x / sig**2 + prior_prec
    cov = np.linalg.inv(prec)
    mean = cov @ (x.T @ y.ravel() / sig**2 + prior_prec @ prior_mean)
    lift = np.zeros((1 + n_t + n_s, x.shape[1]))
    lift[0, 0] = 1
    lift[1 : 1 + n_t, 1:n_t] = b_t
    lift[1 + n_t :, n_t:] = b_s
    want_mean, want_cov = lift @ mean, lift @ cov @ lift.T

    n = 200_000
    out = draw_effects(
        np.full(n, sig), np.full(n, tau), np.full(n, chi), st, PRIORS, np.random.default_rng(3)
    )
    draws = np.column_stack([out["b0"], out["topic_effect"], out["system_effect"]])
    # computed in float64, stored as float32: zero-sum up to float32 rounding
    for name, n_dim in (("topic_effect", n_t), ("system_effect", n_s)):
        eff = out[name]
        assert eff.dtype == np.float32
        bound = n_dim * np.finfo(np.float32).eps * np.abs(eff).max()
        np.testing.assert_allclose(eff.sum(axis=1, dtype=float), 0, atol=bound)
    sd = np.sqrt(np.diag(want_cov))
    np.testing.assert_allclose(draws.mean(axis=0), want_mean, atol=5 * (sd / np.sqrt(n)).max())
    np.testing.assert_allclose(np.cov(draws.T), want_cov, atol=0.02 * sd.max() ** 2)


# --------------------------------------------------------------------- exact vs NUTS
def _compare(exact, nuts) -> None:
    """Means (z-test on MCSE), SDs and 2.5/97.5% quantiles agree within Monte Carlo error."""
    de, dn = exact.diagnostics.table.set_index("parameter"), nuts.diagnostics.table
    dn = dn.set_index("parameter")
    z = (de["mean"] - dn["mean"]) / np.sqrt(de["mcse_mean"] ** 2 + dn["mcse_mean"] ** 2)
    assert np.abs(z).max() < 4.5, z.abs().sort_values().tail()
    np.testing.assert_allclose(de["sd"], dn["sd"], rtol=0.08)
    for part in ("system_effect_draws", "contrast_draws"):
        a = getattr(exact, part)()
        b = getattr(nuts, part)()
        dim = [d for d in a.dims if d not in ("chain", "draw")][0]
        qa = a.quantile([0.025, 0.975], dim=("chain", "draw")).transpose(dim, ...).values
        qb = b.quantile([0.025, 0.975], dim=("chain", "draw")).transpose(dim, ...).values
        sd = a.std(dim=("chain", "draw")).values[:, None]
        assert np.abs(qa - qb).max() / sd.min() < 0.2


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_exact_agrees_with_nuts_on_rb04(shared_data):
    from bayes_ir.readers import read_scores

    table = read_scores(shared_data / "bayesian_risk" / "rb04_data.csv", measure="AP")
    table = table.with_roles(champion="Champion", challengers="Chal.*")
    exact = fit(table, method="exact", draws=3000, seed=1)
    nuts = fit(table, method="nuts", draws=2000, tune=1000, seed=2)
    assert exact.method == "exact" and nuts.method == "nuts"
    _compare(exact, nuts)
    # nutpie: the same seed gives the same numbers
    a = fit(table, method="nuts", draws=200, tune=200, seed=5)
    b = fit(table, method="nuts", draws=200, tune=200, seed=5)
    assert a.posterior["posterior"].identical(b.posterior["posterior"])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_exact_agrees_with_nuts_on_simulated_data():
    # 50 x 45 like rb04, so the compiled NUTS model is reused (no second compilation)
    table = _simulated(50, 45, seed=7)
    from bayes_ir.hierarchical.sampling import clear_cache, compile_count

    exact = fit(table, method="exact", draws=3000, seed=3, priors=PRIORS)
    nuts = fit(table, method="nuts", draws=2000, tune=1000, seed=4, priors=PRIORS)
    _compare(exact, nuts)
    # another dataset of the same shape reuses the compiled model, with its own data
    before = compile_count()
    other = fit(_simulated(50, 45, seed=8, chi=0.05), method="nuts", draws=300, tune=300)
    assert compile_count() == before
    assert abs(float(other.draws["sigma_system"].mean()) - 0.05) < 0.02
    # its draws are those of a fresh compilation: the starting points follow the data too
    clear_cache()
    fresh = fit(_simulated(50, 45, seed=8, chi=0.05), method="nuts", draws=300, tune=300)
    assert compile_count() == before + 1
    assert fresh.posterior["posterior"].identical(other.posterior["posterior"])


@pytest.mark.slow
def test_rejection_sampler_agrees_with_nuts_on_the_scales():
    """Rejection sampling and nutpie draw the same marginal posterior of the three scales."""
    table = _simulated(30, 12, seed=21, chi=0.01)  # small sigma_system: a skewed marginal
    y = table.matrix().values
    a, _, info = sample_exact(y, PRIORS, chains=4, draws=3000, seed=1)
    b, _, _ = sample_exact(y, PRIORS, chains=4, draws=3000, tune=300, seed=2, hyper_sampler="nuts")
    assert info["restarts"] == 0 and 0 < info["acceptance_rate"] < 1
    for name in ("sigma", "sigma_topic", "sigma_system"):
        # log scale, in posterior SDs: MC SE of a 5% or 95% quantile ~ 0.05 SD here
        la, lb = np.log(a[name]), np.log(b[name])
        qa = np.quantile(la, [0.05, 0.5, 0.95])
        qb = np.quantile(lb, [0.05, 0.5, 0.95])
        assert np.abs(qa - qb).max() < 0.2 * la.std(), name


# ------------------------------------------------------- exactness of the scale draws
TINY = np.random.default_rng(3).normal(0.3, 0.1, (8, 5))  # a 1-D marginal with long tails


def _quadrature(y: np.ndarray):
    """Marginal densities of the three log scales and the log integral of the target, by
    quadrature of the closed-form log marginal posterior on a fine grid.

    The grid spans the mode +-1 (8 posterior SDs) in steps of 0.005 for the residual SD,
    and the mode -10 .. +4 in steps of 0.07 for the effect SDs (their left tails decay
    like e^u: e^-10 of the mass is cut). Returns ``(axes, marginals, log_z)``.
    """
    st = balanced_statistics(y)
    mode, _ = laplace_proposal(st, PRIORS)
    axes = [
        np.linspace(mode[0] - 1, mode[0] + 1, 401),
        np.linspace(mode[1] - 10, mode[1] + 4, 201),
        np.linspace(mode[2] - 10, mode[2] + 4, 201),
    ]
    g1, g2 = np.meshgrid(axes[1], axes[2], indexing="ij")
    ref = float(log_marginal_many(mode, st, PRIORS)[0])  # the joint maximum: no overflow
    marginals = [np.zeros(len(a)) for a in axes]
    for i, u0 in enumerate(axes[0]):
        pts = np.column_stack([np.full(g1.size, u0), g1.ravel(), g2.ravel()])
        dens = np.exp(log_marginal_many(pts, st, PRIORS) - ref).reshape(g1.shape)
        marginals[0][i] = dens.sum()
        marginals[1] += dens.sum(axis=1)
        marginals[2] += dens.sum(axis=0)
    volume = np.prod([a[1] - a[0] for a in axes])
    return axes, marginals, ref + np.log(marginals[0].sum() * volume)


@pytest.fixture(scope="module")
def tiny_reference():
    return _quadrature(TINY)


@pytest.fixture(scope="module")
def tiny_draws():
    return sample_exact(TINY, PRIORS, chains=4, draws=10_000, seed=11)


def _marginal_cdf(x: np.ndarray, dens: np.ndarray):
    cdf = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2 * np.diff(x))])
    return lambda v: np.interp(v, x, cdf / cdf[-1])


def test_scale_draws_match_quadrature_reference(tiny_reference, tiny_draws):
    """Kolmogorov-Smirnov of 40,000 draws of each log scale against the marginal CDF by
    quadrature of the closed-form density (alpha 0.001 per scale; valid because the
    draws are independent)."""
    axes, marginals, _ = tiny_reference
    post, stats, _ = tiny_draws
    assert stats is None
    for i, name in enumerate(SCALES):
        u = np.log(post[name]).ravel()
        res = stats_ks(u, _marginal_cdf(axes[i], marginals[i]))
        assert res.pvalue > 0.001, (name, res)


def test_reported_acceptance_matches_quadrature(tiny_reference, tiny_draws):
    """Acceptance = (integral of the target) / bound for a normalised envelope; the
    integral comes from the quadrature, the rate from the sampler's own count."""
    _, _, log_z = tiny_reference
    _, _, info = tiny_draws
    expected = np.exp(log_z - info["log_bound"])
    rate, n = info["acceptance_rate"], info["proposals"]
    assert rate == pytest.approx(40_000 / n)
    se = np.sqrt(expected * (1 - expected) / n)
    assert abs(rate - expected) < 5 * se + 0.01 * expected, (rate, expected)


def test_a_bound_that_fails_is_detected_and_raised(monkeypatch, tiny_reference):
    """A bound 2 below the true maximum: a proposal exceeds it, the sampler restarts
    with a higher bound, and the draws still match the quadrature reference."""
    real = exact._log_bound

    def too_low(*args):
        log_m, rate = real(*args)
        return log_m - 2.0, rate

    monkeypatch.setattr(exact, "_log_bound", too_low)
    post, _, info = sample_exact(TINY, PRIORS, chains=2, draws=10_000, seed=12)
    assert info["restarts"] >= 1
    axes, marginals, _ = tiny_reference
    for i, name in enumerate(SCALES):
        cdf = _marginal_cdf(axes[i], marginals[i])
        assert stats_ks(np.log(post[name]).ravel(), cdf).pvalue > 0.001, name


def test_independent_draws_and_their_report(toy_table):
    """ESS per draw ~1 (ArviZ bulk ESS, recomputed here), lag-1 autocorrelation ~0, and
    both, with the acceptance rate, in the summary and the provenance."""
    import arviz_stats as azs

    f = fit(toy_table, chains=4, draws=5000, seed=3)
    n = f.n_draws
    ess = min(
        float(azs.ess(f.draws[name].transpose("chain", "draw").values, method="bulk"))
        for name in ("b0", "sigma", "sigma_topic", "sigma_system")
    )
    assert 0.9 < ess / n < 1.1
    assert f.diagnostics.ess_per_draw == pytest.approx(ess / n)
    for name in SCALES:
        x = np.log(f.draws[name].values.ravel())
        x = x - x.mean()
        assert abs(np.dot(x[1:], x[:-1]) / np.dot(x, x)) < 4 / np.sqrt(n), name
    prov = f.provenance
    assert prov["sampler"] == "exact-collapsed+rejection" and prov["tune"] == 0
    assert prov["acceptance_rate"] == pytest.approx(n / prov["proposals"])
    assert prov["ess_per_draw"] == pytest.approx(ess / n)
    line = f.summary().splitlines()[1]
    assert "rejection sampling" in line and f"{prov['acceptance_rate']:.1%}" in line
    assert f"ESS per draw {ess / n:.2f}" in line
    assert "sample_stats" not in f.posterior.children


# ------------------------------------------------------------------- options
@pytest.fixture(scope="module")
def toy_table():
    return _simulated(12, 6, seed=4)


@pytest.mark.parametrize(
    "option", [{"tune": 100}, {"target_accept": 0.95}, {"sampler": "pymc"}], ids=str
)
def test_options_the_exact_sampler_ignores_warn(toy_table, option):
    with pytest.warns(IgnoredOptionWarning, match=next(iter(option))):
        f = fit(toy_table, draws=500, seed=1, **option)
    assert f.method == "exact" and f.provenance["tune"] == 0


def test_no_warning_without_options(toy_table):
    with warnings.catch_warnings():
        warnings.simplefilter("error", IgnoredOptionWarning)
        fit(toy_table, draws=500, seed=1)


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_nuts_tune_is_honoured_or_refused(toy_table):
    """NUTS takes ``tune`` as given (nutpie's minimum is 1; 0 is refused, not raised).

    The skew-normal model runs on the numba kernel: no PyTensor compilation here."""
    opts = {"likelihood": "skew_normal", "draws": 50, "chains": 1, "seed": 1}
    f = fit(toy_table, tune=1, **opts)
    assert f.method == "nuts" and f.provenance["tune"] == 1
    assert 0 <= f.provenance["acceptance_rate"] <= 1
    lines = f.summary().splitlines()  # a failed fit opens with the DIAGNOSTICS FAILED banner
    assert any(ln.startswith("  NUTS (nutpie+skewnormal_kernel, mean acc") for ln in lines)
    with pytest.raises(OptionError, match="tune=0"):
        fit(toy_table, tune=0, **opts)
    with pytest.raises(BayesIRError, match="tune"):
        fit(toy_table, tune=-1)
    with pytest.raises(BayesIRError, match="draws"):
        fit(toy_table, draws=0)


# --------------------------------------------------------------------- memory of large tables
def _reference_effects(scales, matrix, priors, seed):
    """The effects given the scales as one float64 numpy computation over all draws."""
    rng = np.random.default_rng([seed, 8])
    y = np.asarray(matrix, dtype=float)
    n_t, n_s = y.shape
    sig2 = scales["sigma"] ** 2
    b0_prec = n_t * n_s / sig2 + 1 / priors.b0_sd**2
    b0_mean = (n_t * n_s * y.mean() / sig2 + priors.b0_mu / priors.b0_sd**2) / b0_prec
    out = {"b0": b0_mean + rng.standard_normal(sig2.shape) / np.sqrt(b0_prec)}
    for name, scale, n_other, dev in (
        ("topic_effect", scales["sigma_topic"], n_s, y.mean(axis=1) - y.mean()),
        ("system_effect", scales["sigma_system"], n_t, y.mean(axis=0) - y.mean()),
    ):
        prec = n_other / sig2[..., None] + 1 / scale[..., None] ** 2
        z = rng.standard_normal(sig2.shape + dev.shape)
        z = z - z.mean(axis=-1, keepdims=True)
        out[name] = n_other / sig2[..., None] / prec * dev + z / np.sqrt(prec)
    return out


def test_effects_are_float32_roundings_of_one_float64_computation(monkeypatch):
    """Effects drawn in blocks and stored as float32 are the float64 draws of one numpy
    computation over all draws (the same random stream), rounded to float32; b0 and the
    scales stay float64. The block size changes nothing."""
    table = _simulated(23, 7, 5)
    matrix = table.matrix().transpose("topic", "system").values
    draws = {}
    for block in (exact.EFFECTS_BLOCK, 23 * 3 + 1, 1):
        monkeypatch.setattr(exact, "EFFECTS_BLOCK", block)
        draws[block], _, _ = sample_exact(matrix, PRIORS, chains=3, draws=50, seed=9)
    got = draws[exact.EFFECTS_BLOCK]
    ref = _reference_effects({k: got[k] for k in SCALES}, matrix, PRIORS, 9)
    assert got["b0"].dtype == np.float64 and all(got[k].dtype == np.float64 for k in SCALES)
    np.testing.assert_allclose(got["b0"], ref["b0"], rtol=1e-12)
    for name in ("topic_effect", "system_effect"):
        assert got[name].dtype == np.float32
        np.testing.assert_allclose(got[name], ref[name].astype(np.float32), rtol=1e-6, atol=1e-12)
        for other in draws.values():
            np.testing.assert_array_equal(other[name], got[name])


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_fit_of_a_large_table_stores_no_draws_x_cells_array():
    """What bounds the memory of a large fit, checked on a moderate one: the effects are
    float32, no group has a (draw, topic, system) array, and the model check uses fewer
    draws once draws x cells exceeds its budget."""
    from bayes_ir.hierarchical import adequacy

    table = _simulated(300, 40, 6)
    f = fit(table, draws=400, seed=2)
    tree = f.posterior
    assert set(tree.children) == {"posterior", "observed_data"}
    post = tree["posterior"]
    assert post["topic_effect"].dtype == np.float32 and post["system_effect"].dtype == np.float32
    assert post["topic_effect"].shape == (4, 400, 300)
    for node in tree.subtree:
        for var in node.data_vars.values():
            assert not {"draw", "topic", "system"} <= set(var.dims), var.name
    cells = 300 * 40
    assert f.model_check.n_draws == min(adequacy.N_DRAWS, 1600)
    assert adequacy.MAX_REPLICATES // cells >= adequacy.N_DRAWS  # this table is not capped
    small = adequacy.MIN_DRAWS * cells * 2
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(adequacy, "MAX_REPLICATES", small)
        capped = adequacy.check_model(f, seed=3)
        mp.setattr(adequacy, "MAX_REPLICATES", 1)
        floor = adequacy.check_model(f, seed=3)
    assert capped.n_draws == 2 * adequacy.MIN_DRAWS and floor.n_draws == adequacy.MIN_DRAWS
    pd.testing.assert_frame_equal(
        capped.to_frame(), adequacy.check_model(f, seed=3, n_draws=capped.n_draws).to_frame()
    )
