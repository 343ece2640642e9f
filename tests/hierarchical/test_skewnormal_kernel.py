"""The numba kernel of the skew-normal model equals the PyMC model it implements.

The reference is PyMC itself: ``compile_logp`` / ``compile_dlogp`` and the model's
deterministics, evaluated at the same unconstrained points, on a complete matrix and
on one with missing cells; then the two samplers (nutpie on the kernel, PyMC's NUTS on
the PyMC model) must agree within Monte Carlo error.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from kernel_checks import assert_callbacks_equal, assert_equals_pymc, logp_callback
from scipy import stats

from bayes_ir.defaults import SKEW_NORMAL_CELL_DRAWS, SKEW_NORMAL_DRAWS, SKEW_NORMAL_MIN_DRAWS
from bayes_ir.hierarchical import build_model, fit, sampling
from bayes_ir.hierarchical import skewnormal_kernel as kernel
from bayes_ir.hierarchical.fit import SKEW_NORMAL_TUNE, skew_normal_draws
from bayes_ir.hierarchical.model import SIGN_LOGODDS, centred_systems, design_of
from bayes_ir.hierarchical.priors import autoscale_priors
from bayes_ir.hierarchical.skewnormal import skewness_to_alpha, skewnormal_location_scale
from bayes_ir.table import ScoreTable

_DOUBLE_P = ctypes.POINTER(ctypes.c_double)


def _skewed_table(
    n_t: int, n_s: int, *, seed: int, missing: int = 0, system_sd: float = 0.03
) -> ScoreTable:
    rng = np.random.default_rng(seed)
    mu = 0.4 + rng.normal(0, 0.12, (n_t, 1)) + rng.normal(0, system_sd, (1, n_s))
    xi, omega = skewnormal_location_scale(mu, 0.07, 3.0)
    y = stats.skewnorm.rvs(3.0, loc=xi, scale=omega, random_state=rng)
    table = ScoreTable.from_matrix(y, systems=[f"s{i}" for i in range(n_s)], measure="sim")
    if missing:  # drop cells of the artifact runs
        artifacts = table.data.index[table.data["system"].isin([f"s{i}" for i in range(3, n_s)])]
        dropped = rng.choice(artifacts, size=missing, replace=False)
        table = ScoreTable.from_frame(table.data.drop(index=dropped), missing="keep")
    return table.with_roles(champion="s0", challengers=["s1", "s2"])


@pytest.fixture(
    scope="module",
    params=[(0, 0.03), (9, 0.03), (0, 0.2), (9, 0.2)],
    ids=["complete", "missing-cells", "complete-centred", "missing-cells-centred"],
)
def case(request):
    missing, system_sd = request.param
    design = design_of(_skewed_table(12, 6, seed=3, missing=missing, system_sd=system_sd))
    assert np.isnan(design.matrix).sum() == missing
    # the spread of the systems decides the form of their effects
    assert centred_systems(design.matrix) == (system_sd > 0.1)
    priors = autoscale_priors(design.score, None)
    constants = (
        priors.b0_mu,
        priors.b0_sd,
        priors.sigma_topic_rate,
        priors.sigma_system_rate,
        priors.sigma_rate,
        priors.skewness_max,
        float(centred_systems(design.matrix)),
    )
    model = build_model(design, likelihood="skew_normal", priors=priors)
    return design, priors, model, kernel.pack(design.matrix, constants)


def _points(design, priors, n: int = 6) -> list[np.ndarray]:
    """Jittered points, plus one far in the tails (the log-CDF's series branch)."""
    n_t, n_s = design.shape
    rng = np.random.default_rng(11)
    rates = (priors.sigma_topic_rate, priors.sigma_system_rate, priors.sigma_rate)
    points = [kernel.initial_point(n_t, n_s, priors.b0_mu, rates, rng) for _ in range(n)]
    tail = points[0].copy()
    tail[0] = priors.b0_mu + 0.5  # every cell far below its mean ...
    tail[3] = np.log(0.05)
    tail[4] = 5.0  # ... with |skewness| near its bound: alpha * z < -20 in some cells
    return [*points, tail]


def _pymc_point(theta: np.ndarray, n_t: int, model) -> dict[str, np.ndarray]:
    system = "system_z" if "system_z" in model.named_vars else "system_effect"
    return {
        "b0": theta[0],
        "sigma_topic_log__": theta[1],
        "sigma_system_log__": theta[2],
        "sigma_log__": theta[3],
        "abs_skewness_interval__": theta[4],
        "topic_effect_zerosum__": theta[5 : 5 + n_t - 1],
        f"{system}_zerosum__": theta[5 + n_t - 1 :],
    }


def test_log_density_and_gradient_equal_pymc(case):
    design, priors, model, data = case
    n_t = design.shape[0]
    points = _points(design, priors)
    # the last point really reaches the series branch of log Phi (below -20)
    tail = points[-1]
    abs_skew = priors.skewness_max / (1 + np.exp(-tail[4]))
    alpha = skewness_to_alpha(abs_skew)
    xi, omega = skewnormal_location_scale(tail[0], np.exp(tail[3]), alpha)
    assert np.nanmin(alpha * (design.matrix - xi) / omega) < -20
    assert_equals_pymc(kernel, model, data, points, lambda x: _pymc_point(x, n_t, model))


def test_c_callbacks_equal_the_python_entry_and_pymc_deterministics(case):
    design, priors, model, data = case
    n_t, n_s = design.shape
    outputs, shapes = kernel.expanded_layout(n_t, n_s)
    assert outputs[-1] == SIGN_LOGODDS and shapes[5:7] == [(n_t,), (n_s,)]
    assert_callbacks_equal(
        kernel, model, data, _points(design, priors, n=3),
        lambda x: _pymc_point(x, n_t, model), outputs, 5 + n_t + n_s + 1, 1e-10,
    )  # fmt: skip


def test_non_finite_density_is_reported_to_the_sampler(case):
    design, _, _, data = case
    n_t, n_s = design.shape
    dim = kernel.N_HYPER + n_t + n_s - 2
    # sigma = exp(800) overflows; sigma = exp(-800) and |skewness| = g expit(-800) are 0,
    # and divide by 0 (reported, not raised: an exception cannot leave a C callback)
    for index, value in ((3, 800.0), (3, -800.0), (4, -800.0)):
        theta = np.zeros(dim)
        theta[index] = value
        assert logp_callback(kernel, theta, data)[0] in (3, 4), (index, value)


def test_pack_checks_its_input():
    with pytest.raises(ValueError, match="7 constants"):
        kernel.pack(np.zeros((3, 2)), (0.0, 1.0))
    with pytest.raises(ValueError, match="sign=2"):
        kernel.pack(np.zeros((3, 2)), (0.0,) * 7, sign=2)


def test_log_ndtr_and_mills_ratio_equal_scipy():
    """The polynomial pieces (and the erfc and series branches) against scipy."""
    from scipy import special

    rng = np.random.default_rng(5)
    x = np.concatenate([np.linspace(-40, 40, 160_001), rng.normal(0, 4, 20_000), [-20, 8.5]])
    ours = np.array([kernel._log_ndtr_mills(v) for v in x])
    log_cdf = special.log_ndtr(x)
    # the Mills ratio from erfcx below 0, where Phi underflows
    upper = np.maximum(x, 0)
    mills = np.where(
        x < 0,
        np.sqrt(2 / np.pi) / special.erfcx(-np.minimum(x, 0) / np.sqrt(2)),
        stats.norm.pdf(upper) / special.ndtr(upper),
    )
    table = (x >= kernel._TABLE_LO) & (x < kernel._TABLE_HI)
    assert table.sum() > 70_000 and (~table).sum() > 70_000
    np.testing.assert_allclose(ours[table, 0], log_cdf[table], rtol=2e-13, atol=1e-16)
    np.testing.assert_allclose(ours[table, 1], mills[table], rtol=2e-13, atol=1e-300)
    # outside the table: erfc above (Phi = 1 within rounding), the series below -20
    np.testing.assert_allclose(ours[~table, 0], log_cdf[~table], rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(ours[~table, 1], mills[~table], rtol=2e-10, atol=1e-300)


def test_a_fixed_sign_block_gives_that_branch(case):
    """``pack(sign=+-1)``: the sampler's density is that sign's term, in every entry."""
    design, priors, _, data = case
    n_t, n_s = design.shape
    dim = kernel.N_HYPER + n_t + n_s - 2
    y, constants = design.matrix, tuple(data[2 : kernel.N_HEADER - 1])
    for sign, branch in ((1, 0), (-1, 1)):
        fixed = kernel.pack(y, constants, sign=sign)
        for theta in _points(design, priors, n=2):
            value, grad = kernel.logp_and_grad(theta, fixed)
            ref_value, ref_grad = kernel.logp_and_grad(theta, data, branch)
            assert value == ref_value and np.array_equal(grad, ref_grad)
            # the sign does not change the model's density, nor the C callbacks' inputs
            assert kernel.logp_and_grad(theta, fixed, -1)[0] == kernel.logp_and_grad(theta, data)[0]
            out, c_grad, c_value = np.empty(5 + n_t + n_s + 1), np.empty(dim), np.empty(1)
            kernel.logp_cfunc.ctypes(dim, *(a.ctypes.data_as(_DOUBLE_P)
                                            for a in (theta, c_grad, c_value, fixed)))  # fmt: skip
            assert c_value[0] == value and np.array_equal(c_grad, grad)
            # the reported sign log-odds still weighs both signs
            kernel.expand_cfunc.ctypes(dim, out.size, theta.ctypes.data_as(_DOUBLE_P),
                                       out.ctypes.data_as(_DOUBLE_P),
                                       fixed.ctypes.data_as(_DOUBLE_P))  # fmt: skip
            plus, minus = (kernel.logp_and_grad(theta, data, b)[0] for b in (0, 1))
            assert out[-1] == pytest.approx(plus - minus, rel=1e-10, abs=1e-9)


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
@pytest.mark.parametrize(
    "shape",
    [
        pytest.param((15, 5, 8, 0.0), id="sign-summed", marks=pytest.mark.slow),  # 5.5 nats
        pytest.param((40, 8, 4, 1.0), id="sign-fixed", marks=pytest.mark.slow),  # 39 nats
    ],
)
def test_kernel_sampler_agrees_with_pymc_nuts(shape):
    """nutpie on the kernel and PyMC's NUTS on the PyMC model: the same posterior.

    On a table whose sign is settled the kernel samples the + sign's term only, PyMC
    the sum over both signs.
    """
    import arviz as az

    n_t, n_s, seed, sign = shape
    table = _skewed_table(n_t, n_s, seed=seed)
    design = design_of(table)
    kernel_model = sampling.skewnormal_model(design, autoscale_priors(design.score, None))
    assert kernel_model.user_data[kernel.N_HEADER - 1] == sign
    run = {"chains": 2, "draws": 1500, "tune": 500, "seed": 6}
    ours = fit(table, likelihood="skew_normal", **run)
    ref = fit(table, likelihood="skew_normal", sampler="pymc", **run)
    assert ours.provenance["sampler"] == "nutpie+skewnormal_kernel"
    for name in ("b0", "sigma", "sigma_topic", "sigma_system", "skewness"):
        a, b = ours.draws[name].values, ref.draws[name].values
        se = np.hypot(float(az.mcse(a)), float(az.mcse(b)))
        assert abs(a.mean() - b.mean()) < 4.5 * se, name
    diff = ours.contrast_draws().values.mean(axis=(0, 1)) - ref.contrast_draws().values.mean(
        axis=(0, 1)
    )
    sd = ours.contrast_draws().values.std(axis=(0, 1))
    assert np.all(np.abs(diff) < 0.15 * sd)


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_skew_normal_defaults_and_no_compilation_per_dataset():
    before = sampling.compile_count()
    f = fit(_skewed_table(10, 4, seed=1), likelihood="skew_normal", seed=1)
    g = fit(_skewed_table(13, 7, seed=2, missing=5), likelihood="skew_normal", seed=1, draws=300)
    assert sampling.compile_count() == before  # no PyTensor compilation at all
    assert (f.provenance["draws"], f.provenance["tune"]) == (SKEW_NORMAL_DRAWS, SKEW_NORMAL_TUNE)
    assert f.draws.sizes["draw"] == SKEW_NORMAL_DRAWS and g.draws.sizes["draw"] == 300
    assert g.draws.sizes["topic"] == 13 and np.isfinite(g.draws["alpha"].values).all()


def test_the_two_sign_branches_add_up_to_the_model(case):
    """exp(branch +) + exp(branch -) = the model's density, value and gradient."""
    design, priors, _, data = case
    for theta in _points(design, priors, n=3):
        value, grad = kernel.logp_and_grad(theta, data)
        (plus, g_plus), (minus, g_minus) = (kernel.logp_and_grad(theta, data, b) for b in (0, 1))
        assert np.logaddexp(plus, minus) == pytest.approx(value, rel=1e-12)
        w = np.exp(plus - value)
        np.testing.assert_allclose(w * g_plus + (1 - w) * g_minus, grad, rtol=1e-9, atol=1e-9)


def _shifted(design, data, seed: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The block ``data`` with a random sign shift (0 in the log scales), and the shift."""
    n_t, n_s = design.shape
    y = data[kernel.N_HEADER : kernel.N_HEADER + n_t * n_s].reshape(n_t, n_s)
    half = np.random.default_rng(seed).normal(0.0, 0.3, kernel.n_coordinates(n_t, n_s))
    half[1:4] = 0.0
    return kernel.pack(y, tuple(data[2 : kernel.N_HEADER - 1]), shift=half), y, half


def test_a_sign_shift_moves_each_sign_term_to_its_own_point(case):
    """With a shift h, the sign s term at phi is the unshifted model's at phi + s h."""
    design, priors, _, data = case
    shifted, _, half = _shifted(design, data)
    for phi in _points(design, priors, n=3):
        terms = []
        for branch, sgn in ((0, 1.0), (1, -1.0)):
            value, grad = kernel.logp_and_grad(phi, shifted, branch)
            ref, ref_grad = kernel.logp_and_grad(phi + sgn * half, data, branch)
            assert value == pytest.approx(ref, rel=1e-13)
            np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12)
            terms.append((value, grad))
        value, grad = kernel.logp_and_grad(phi, shifted)
        (plus, g_plus), (minus, g_minus) = terms
        assert value == pytest.approx(np.logaddexp(plus, minus), rel=1e-12)
        w = np.exp(plus - value)
        np.testing.assert_allclose(grad, w * g_plus + (1 - w) * g_minus, rtol=1e-9, atol=1e-9)
        status, c_value, c_grad = logp_callback(kernel, phi, shifted)
        assert status == 0 and c_value == pytest.approx(value, rel=1e-13)
        np.testing.assert_allclose(c_grad, grad, rtol=1e-12, atol=1e-12)


def _expand(theta: np.ndarray, data: np.ndarray, n_t: int, n_s: int) -> np.ndarray:
    out = np.empty(5 + n_t + n_s + 1)
    status = kernel.expand_cfunc.ctypes(
        theta.size, out.size, theta.ctypes.data_as(_DOUBLE_P), out.ctypes.data_as(_DOUBLE_P),
        data.ctypes.data_as(_DOUBLE_P),
    )  # fmt: skip
    assert status == 0
    return out


def test_shifted_draws_are_the_model_values_at_the_moved_point(case):
    """expand at phi + shifted_draws of the sign = expand at phi + s h without a shift."""
    design, priors, _, data = case
    n_t, n_s = design.shape
    shifted, _, half = _shifted(design, data)
    for phi in _points(design, priors, n=3):
        out = _expand(phi, shifted, n_t, n_s)
        plus = kernel.logp_and_grad(phi, shifted, 0)[0]
        assert out[-1] == pytest.approx(plus - kernel.logp_and_grad(phi, shifted, 1)[0])
        draws = {"b0": out[0], "sigma_system": out[2], "abs_skewness": out[4],
                 "topic_effect": out[5 : 5 + n_t], "system_effect": out[5 + n_t : -1]}  # fmt: skip
        draws = {k: np.asarray(v)[None, None] for k, v in draws.items()}
        for sgn in (1.0, -1.0):
            moved = kernel.shifted_draws(draws, np.array([[sgn]]), shifted)
            ref = _expand(phi + sgn * half, data, n_t, n_s)
            names = ("b0", "abs_skewness", "topic_effect", "system_effect")
            got = np.concatenate([moved[k].ravel() for k in names])
            want = np.r_[ref[0], ref[4], ref[5:-1]]
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
        assert kernel.shifted_draws(draws, np.array([[1.0]]), data) is draws  # no shift


def test_both_signs_are_sampled_with_their_modes_on_top_of_each_other():
    """An unsettled sign: the block carries the modes' half difference (not the scales'
    nor the skewness's)."""
    table = _skewed_table(15, 5, seed=8)  # 5.5 nats between the signs' modes
    design = design_of(table)
    priors = autoscale_priors(design.score, None)
    model = sampling.skewnormal_model(design, priors)
    data, b0_mu, rates = _skew_data(table)
    modes = kernel.sign_modes(data, b0_mu, rates)[0]
    n_t, n_s = design.shape
    half = model.user_data[kernel.N_HEADER + n_t * n_s :]
    np.testing.assert_allclose(half, kernel.mode_shift(modes))
    assert half[1:5].tolist() == [0.0] * 4 and np.abs(half).max() > 0
    assert model.user_data[kernel.N_HEADER - 1] == 0.0


def _skew_data(table: ScoreTable) -> tuple[np.ndarray, float, tuple[float, float, float]]:
    design = design_of(table)
    h = autoscale_priors(design.score, None).values()
    rates = (h.sigma_topic_rate, h.sigma_system_rate, h.sigma_rate)
    centred = float(centred_systems(design.matrix))
    constants = (h.b0_mu, h.b0_sd, *rates, h.skewness_max, centred)
    return kernel.pack(design.matrix, constants), h.b0_mu, rates


def test_sign_modes_are_modes_and_the_higher_has_the_simulated_sign():
    # errors simulated with shape +3 (skewness +0.67) on 40 x 8 cells
    data, b0_mu, rates = _skew_data(_skewed_table(40, 8, seed=4))
    modes, logps, sds = kernel.sign_modes(data, b0_mu, rates)
    assert logps[0] - logps[1] > 20  # the + sign dominates
    for branch in (0, 1):
        value, grad = kernel.logp_and_grad(modes[branch], data, branch)
        assert value == pytest.approx(logps[branch])
        # stationary in b0, the topic scale, sigma, the shape and the topic effects (the
        # system scale and effects are moved off the degenerate joint mode)
        n_t = 40
        keep = [0, 1, 3, 4, *range(kernel.N_HYPER, kernel.N_HYPER + n_t - 1)]
        # (a Newton step from there is a small fraction of a conditional SD)
        assert np.abs(grad[keep] * sds[branch][keep]).max() < 0.05
        assert (sds[branch] > 0).all()
    # the skewness at the higher mode is large, as simulated (+0.67; the skew-normal's
    # likelihood is flat towards the largest skewness, so the mode may lie beyond)
    abs_skew = data[kernel.N_HEADER - 3] / (1 + np.exp(-modes[0][4]))
    assert abs_skew > 0.4


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_robust04_skew_normal_converges_with_a_seed_that_failed(shared_data):
    """Robust04 AP (249 x 110), seed 1: R-hat 1.71 and thousands of divergences before.

    The model's density has a mode per sign of the skewness, 46 nats apart at skewness
    +0.17 and -0.13; chains started at random fell into either basin by the seed. The
    data's own skewness (of the residuals of the additive moment fit) is the check
    that the chains now sit in the right one. At the default draws: with 1,000 a chain
    the largest of the 220 R-hats sits near 1.01 by Monte Carlo error alone (1.0103 for
    one contrast at seed 1, bulk ESS 4,900, no divergence).
    """
    from bayes_ir.readers import read_scores

    table = read_scores(shared_data / "robust2004" / "robust2004_ap.csv", measure="AP")
    systems = sorted(set(table.data["system"]), key=lambda s: int(s[3:]))
    table = table.with_roles(champion=systems[0], challengers=systems[1:])
    result = fit(table, likelihood="skew_normal", seed=1)  # the default draws (2,993 a chain)
    diag = result.diagnostics
    assert diag.passed, diag.failures()
    assert diag.max_rhat <= 1.01
    assert int(result.posterior["sample_stats"]["diverging"].sum()) == 0
    y = design_of(table).matrix
    resid = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0) + y.mean()
    # significantly right-skewed: more than 3 standard errors, sqrt(6 / n), above 0
    assert stats.skew(resid.ravel()) > 3 * np.sqrt(6 / resid.size)
    assert (result.draws["skewness"].values > 0).mean() > 0.999


def test_default_draws_fall_with_the_cells():
    assert skew_normal_draws(40) == skew_normal_draws(8_200) == SKEW_NORMAL_DRAWS == 10_000
    # Robust04 AP: 249 x 110 cells, within 8.2 x 10^7 cell evaluations per chain
    assert skew_normal_draws(249 * 110) == SKEW_NORMAL_CELL_DRAWS // 27_390 == 2993
    assert skew_normal_draws(5_000_000) == SKEW_NORMAL_MIN_DRAWS == 2000


def _settled_table() -> ScoreTable:
    return _skewed_table(60, 10, seed=4)  # shape +3: the - sign's mode far below


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_a_settled_sign_is_fixed_and_checked_on_every_draw(monkeypatch):
    design = design_of(_settled_table())
    priors = autoscale_priors(design.score, None)
    h = priors.values()
    data, b0_mu, rates = _skew_data(_settled_table())
    logps = kernel.sign_modes(data, b0_mu, rates)[1]
    assert logps[0] - logps[1] > sampling.SIGN_SETTLED
    model = sampling.skewnormal_model(design, priors)
    assert model.user_data[kernel.N_HEADER - 1] == 1.0
    assert sampling._sign_summed(model).user_data[kernel.N_HEADER - 1] == 0.0
    assert h.skewness_max > 0
    run = {"chains": 2, "draws": 300, "tune": 300, "target_accept": 0.8, "seed": 2}
    post, _ = sampling.sample_nuts(design, priors, "skew_normal", **run)
    assert (post["skewness"].values > 0).all()

    # a sign fixed by mistake (the modes made to look 100 nats apart on a table whose
    # sign is not settled) is caught on the draws and the run redone with both signs
    unsettled = design_of(_skewed_table(8, 4, seed=1))
    real = kernel.sign_modes
    calls = []

    def biased(*args):
        modes, logps, sds = real(*args)
        return modes, logps + np.array([100.0, 0.0]), sds

    def spy(model, **options):
        calls.append(float(model.user_data[kernel.N_HEADER - 1]))
        return nutpie_sample(model, **options)

    nutpie_sample = sampling.nutpie_sample
    monkeypatch.setattr(kernel, "sign_modes", biased)
    monkeypatch.setattr(sampling, "nutpie_sample", spy)
    pri = autoscale_priors(unsettled.score, None)
    post, _ = sampling.sample_nuts(unsettled, pri, "skew_normal", **run)
    assert calls == [1.0, 0.0]
    assert (post["skewness"].values < 0).any()  # the - sign is back in the posterior


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ModelCheckWarning")
def test_tiny_and_coarse_tables_start_inside_and_report_their_failure():
    """3 x 3 and binary scores: the topic scale's joint mode runs off to 0 (a funnel's
    neck); it raised ZeroDivisionError, then started chains at exp(+-400)."""
    rng = np.random.default_rng(0)
    for y in (rng.uniform(size=(3, 3)), (rng.uniform(size=(80, 10)) < 0.4).astype(float)):
        names = [f"s{i}" for i in range(y.shape[1])]
        table = ScoreTable.from_matrix(y, systems=names, measure="m")
        table = table.with_roles(champion="s0", challengers=["s1"])
        data, b0_mu, rates = _skew_data(table)
        modes, logps, sds = kernel.sign_modes(data, b0_mu, rates)
        assert np.isfinite(modes).all() and np.isfinite(logps).all()
        start = -np.log(rates)
        assert (np.abs(modes[:, 1:4] - start) < 12).all()
        assert (sds[:, : kernel.N_HYPER] <= 1).all()
        result = fit(table, likelihood="skew_normal", seed=3, draws=300, model_check=False)
        assert np.isfinite(result.draws["sigma_topic"].values).all()
        assert result.draws["sigma_topic"].values.max() < 100 * y.std()
