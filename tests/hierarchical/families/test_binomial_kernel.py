"""The numba kernel of the binomial family equals the PyMC model it implements.

The reference is PyMC itself: ``compile_logp`` / ``compile_dlogp`` and the model's
deterministics of :func:`~bayes_ir.hierarchical.families.binomial.build_pymc_model`,
evaluated at the same unconstrained points, with topics centred on the intercept, not
centred and both in one table, centred and non-centred systems, a missing cell, Bernoulli
and k-of-10 scores; the logistic pieces against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from kernel_checks import assert_callbacks_equal, assert_equals_pymc, logp_callback
from scipy import special

from bayes_ir.hierarchical import build_model
from bayes_ir.hierarchical.families import _kernel, get_family
from bayes_ir.hierarchical.families import binomial_kernel as kernel
from bayes_ir.hierarchical.families.binomial import centred_effects
from bayes_ir.hierarchical.families.logit import UNPOOLED_SD
from bayes_ir.hierarchical.model import design_of
from bayes_ir.table import ScoreTable


def _table(
    n_t: int, n_s: int, trials: int, *, topic_sd: float, seed: int, unsolved: int = 0
) -> ScoreTable:
    rng = np.random.default_rng(seed)
    eta = rng.normal(0.3, topic_sd, (n_t, 1)) + rng.normal(0, 1.0, (1, n_s))
    y = rng.binomial(trials, special.expit(eta)) / trials
    y[5 : 5 + unsolved] = 0.0  # items no system solved
    y[2, 3] = np.nan  # one missing cell
    table = ScoreTable.from_matrix(
        y, systems=[f"s{i}" for i in range(n_s)], measure="P@10" if trials > 1 else "acc",
        missing="keep",
    )  # fmt: skip
    return table.with_roles(champion="s0", challengers=["s1", "s2"])


@pytest.fixture(
    scope="module",
    params=[
        ("bernoulli", 1, 0.3, "all", 0),
        ("binomial", 10, 1.5, "all", 0),
        ("binomial", 10, 1.5, "all", 6),
        ("bernoulli", 1, 2.5, "all", 0),
        ("bernoulli", 1, 0.3, "none", 0),
        ("binomial", 10, 1.5, "none", 6),
    ],
    ids=[
        "bernoulli-noncentred",
        "binomial-centred-topics",
        "binomial-mixed-topics",
        "bernoulli-wide-topics",
        "bernoulli-unpooled",
        "binomial-unpooled-mixed",
    ],
)
def case(request):
    name, trials, topic_sd, pooling, unsolved = request.param
    table = _table(40, 6, trials, topic_sd=topic_sd, seed=4, unsolved=unsolved)
    design = design_of(table)
    family = get_family(name).resolved(design)
    priors = family.resolve_priors(design, None)
    model = build_model(design, likelihood=name, priors=priors, pooling=pooling)
    return design, family, priors, model, family.data_block(design, priors, pooling)


def test_the_cases_cover_every_form_of_the_topic_effects():
    """Few trials per topic: no topic centred; many (10 x 6 per topic): all centred; with
    six items no system solved: all but those six."""
    forms = []
    for spec, trials, sd, unsolved in (("bernoulli", 1, 0.3, 0), ("binomial", 10, 1.5, 0),
                                       ("binomial", 10, 1.5, 6)):  # fmt: skip
        design = design_of(_table(40, 6, trials, topic_sd=sd, seed=4, unsolved=unsolved))
        forms.append(centred_effects(*get_family(spec).resolved(design).counts(design))[0])
    assert not forms[0].any()
    assert forms[1].all()
    assert np.flatnonzero(~forms[2]).tolist() == list(range(5, 11))


def _pymc_point(theta: np.ndarray, n_t: int, model) -> dict[str, np.ndarray]:
    system = "system_z" if "system_z" in model.named_vars else "system_effect"
    c = 3 if "sigma_system" in model.named_vars else 2  # unpooled systems: no sigma_system
    return {
        "intercept": theta[0],
        "sigma_topic_log__": theta[1],
        **({"sigma_system_log__": theta[2]} if c == 3 else {}),
        "topic_level": theta[c : c + n_t],
        f"{system}_zerosum__": theta[c + n_t :],
    }


def _points(design, priors, data, n: int = 5) -> list[np.ndarray]:
    n_t, n_s = design.shape
    c = _kernel.n_crossed(data)
    centred = data[data.size - n_t :] != 0.0
    rng = np.random.default_rng(7)
    points = []
    for _ in range(n):
        theta = rng.uniform(-1.5, 1.5, kernel.n_coordinates(data))
        theta[0] += priors.b0_mu
        theta[c : c + n_t][centred] += priors.b0_mu  # levels of the centred topics
        points.append(theta)
    far, farther = points[0].copy(), points[1].copy()
    for point, shift in ((far, 25.0), (farther, 45.0)):
        # 25: every cell beyond the polynomial pieces (|eta| > 16); 45: every row beyond
        # the products of factors (eta > 40), cell by cell
        point[0] += shift
        point[c : c + n_t][centred] += shift
    return [*points, far, farther]


def test_log_density_and_gradient_equal_pymc(case):
    design, _, priors, model, data = case
    n_t = design.shape[0]
    points = _points(design, priors, data)
    assert_equals_pymc(kernel, model, data, points, lambda x: _pymc_point(x, n_t, model))


def test_c_callbacks_equal_the_python_entry_and_pymc_deterministics(case):
    design, _, priors, model, data = case
    n_t, n_s = design.shape
    names, _ = kernel.expanded_layout(n_t, n_s)
    unpooled = "sigma_system" not in model.named_vars
    assert_callbacks_equal(
        kernel, model, data, _points(design, priors, data, n=3),
        lambda x: _pymc_point(x, n_t, model), names, 3 + n_t + n_s, 1e-12,
        fixed={"sigma_system": UNPOOLED_SD} if unpooled else None,
    )  # fmt: skip


def test_non_finite_density_is_reported_to_the_sampler(case):
    design, *_, data = case
    n_t, n_s = design.shape
    for index in range(1, _kernel.n_crossed(data)):  # a scale of exp(800) overflows
        theta = np.zeros(kernel.n_coordinates(data))
        theta[index] = 800.0
        assert logp_callback(kernel, theta, data)[0] in (3, 4), index


def test_softplus_and_expit_equal_numpy():
    x = np.concatenate([np.linspace(-40, 40, 160_001), [-16.0, 16.0, 15.999999]])
    ours = np.array([_kernel.softplus_expit(v) for v in x])
    np.testing.assert_allclose(ours[:, 0], np.logaddexp(0.0, x), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(ours[:, 1], special.expit(x), rtol=1e-14, atol=1e-300)


def _closed_form(k, n, theta, data):
    """Log-likelihood from numpy and scipy: log C(n, k) + k eta - n log(1 + e^eta)."""
    n_t, n_s = k.shape
    topic, system = np.empty(n_t), np.empty(n_s)
    _kernel.crossed_effects(theta, data, np.int64(0), topic, system)
    eta = theta[0] + topic[:, None] + system[None, :]
    obs = np.isfinite(k)
    k0, n0 = np.where(obs, k, 0.0), np.where(obs, n, 0.0)
    log_binom = special.gammaln(n0 + 1) - special.gammaln(k0 + 1) - special.gammaln(n0 - k0 + 1)
    cell = log_binom + k0 * eta - n0 * np.logaddexp(0.0, eta)
    g = k0 - n0 * special.expit(eta)
    return float(cell[obs].sum()), g.sum(axis=1), g.sum(axis=0)


@pytest.mark.parametrize("shift", [0.0, 30.0, 45.0])
@pytest.mark.parametrize("trials", ["common", "unequal"])
def test_likelihood_equals_the_closed_form_on_both_paths(trials, shift):
    """Products of factors (common trials, eta <= 40) and cell by cell (unequal trials, or
    rows beyond eta = 40, or an effect beyond exp's range) give numpy's value and gradient."""
    rng = np.random.default_rng(11)
    n_t, n_s = 37, 41  # rows of two full chunks of 16 and a partial one
    n = np.full((n_t, n_s), 10.0) if trials == "common" else rng.integers(1, 12, (n_t, n_s))
    k = rng.binomial(n.astype(int), 0.4).astype(float)
    k[3, 5] = np.nan  # missing
    header = _kernel.pack_header((n_t, n_s), (0.0, 1.0), (1.0, 1.0), None, True)
    data = kernel.pack(k, n, header)
    assert data[_kernel.N_CROSSED_HEADER + 1] == (10.0 if trials == "common" else 0.0)
    theta = rng.normal(0.0, 0.5, kernel.n_coordinates(data))
    theta[0] = shift - 1.0  # 44: every row beyond eta = 40, cell by cell
    want, want_topic, want_system = _closed_form(k, n, theta, data)
    topic, system = np.empty(n_t), np.empty(n_s)
    _kernel.crossed_effects(theta, data, np.int64(0), topic, system)
    g_topic, g_system = np.empty(n_t), np.empty(n_s)
    got = kernel._loglik(data, theta[0], topic, system, g_topic, g_system)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    np.testing.assert_allclose(g_topic, want_topic, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(g_system, want_system, rtol=1e-12, atol=1e-10)


def test_an_effect_beyond_exp_range_takes_the_cell_path():
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    header = _kernel.pack_header((3, 2), (0.0, 1.0), (1.0, 1.0), None, True)
    data = kernel.pack(k, np.ones_like(k), header)
    topic, system = np.array([-400.0, 0.0, 400.0]), np.array([350.0, -350.0])
    g_topic, g_system = np.empty(3), np.empty(2)
    got = kernel._loglik(data, 0.0, topic, system, g_topic, g_system)
    eta = topic[:, None] + system[None, :]
    np.testing.assert_allclose(got, (k * eta - np.logaddexp(0.0, eta)).sum(), rtol=1e-13)
    np.testing.assert_allclose(g_system, (k - special.expit(eta)).sum(axis=0), atol=1e-12)


def test_pack_checks_its_input():
    header = _kernel.pack_header((3, 2), (0.0, 1.0), (1.0, 1.0), np.ones(3, bool), True)
    with pytest.raises(ValueError, match="one shape"):
        kernel.pack(np.zeros((3, 2)), np.ones((2, 3)), header)
    with pytest.raises(ValueError, match="header values and 3 topic flags"):
        kernel.pack(np.zeros((3, 2)), np.ones((3, 2)), header[:-1])
    with pytest.raises(ValueError, match="crossed part"):
        kernel.pack(np.zeros((3, 2)), np.ones((3, 2)), header[:5])
    with pytest.raises(ValueError, match="expected 3 topic flags"):
        _kernel.pack_header((3, 2), (0.0, 1.0), (1.0, 1.0), np.ones(2, bool), True)
