"""Posterior predictive intervals: closed-form quantiles and nominal coverage on model data."""

from __future__ import annotations

import numpy as np
import pytest
from predictive_reference import check_coverage, exact_pit
from scipy import stats
from synthetic_posterior import SyntheticFit, make_posterior

from bayes_ir.hierarchical.predictive import PREDICTIVE_COLUMNS, posterior_predictive
from bayes_ir.hierarchical.skewnormal import skewnormal_location_scale
from bayes_ir.table import ScoreTable


def point_mass_fit(*, alpha: float | None, n_topic=100, n_system=10, seed=5, n_draw=2000):
    """Posterior concentrated on the true parameters; scores simulated from the same model."""
    rng = np.random.default_rng(seed)
    b0, sigma = 0.4, 0.1
    topic = rng.normal(0, 0.1, n_topic)
    system = rng.normal(0, 0.03, n_system)
    mu = b0 + topic[:, None] + system[None, :]
    if alpha is None:
        scores = mu + sigma * rng.standard_normal(mu.shape)
    else:
        xi, omega = skewnormal_location_scale(mu, sigma, alpha)
        scores = stats.skewnorm.rvs(alpha, loc=xi, scale=omega, random_state=rng)
    systems = ["champ"] + [f"chal_{i}" for i in range(2)] + [f"r{i}" for i in range(n_system - 3)]
    topics = [f"t{i:03d}" for i in range(n_topic)]
    table = ScoreTable.from_matrix(scores, systems=systems, topics=topics)
    table = table.with_roles(champion="champ", challengers="chal_*")
    shape = (2, n_draw)
    raw = {
        "b0": np.full(shape, b0),
        "topic": np.broadcast_to(topic, (*shape, n_topic)).copy(),
        "system": np.broadcast_to(system, (*shape, n_system)).copy(),
        "sigma": np.full(shape, sigma),
    }
    if alpha is not None:
        raw["alpha"] = np.full(shape, alpha)
    roles = [table.roles.role_of(s) for s in systems]
    tree = make_posterior(raw, systems, topics, roles)
    likelihood = "gaussian" if alpha is None else "skew_normal"
    return SyntheticFit(tree, table, likelihood=likelihood, raw={"mu": mu, "sigma": sigma})


@pytest.fixture(scope="module", params=[None, 4.0], ids=["gaussian", "skew_normal"])
def truth(request):
    return point_mass_fit(alpha=request.param), request.param


def test_point_mass_intervals_equal_closed_form(truth):
    fit, alpha = truth
    res = posterior_predictive(fit, ci_prob=0.9, seed=1)
    frame = res.to_frame()
    assert list(frame.columns) == list(PREDICTIVE_COLUMNS)
    mu = fit.raw["mu"].T.reshape(-1)  # rows are ordered system-major
    sigma = fit.raw["sigma"]
    if alpha is None:
        lo, hi = stats.norm.ppf([0.05, 0.95], loc=mu[:, None], scale=sigma).T
    else:
        xi, omega = skewnormal_location_scale(mu, sigma, alpha)
        lo = stats.skewnorm.ppf(0.05, alpha, loc=xi, scale=omega)
        hi = stats.skewnorm.ppf(0.95, alpha, loc=xi, scale=omega)
    assert np.allclose(frame["mean"], mu, atol=1e-12)
    # Monte Carlo SE of a 5% or 95% quantile from 4000 draws is 0.035-0.06 sigma (the
    # skew-normal's long tail is the larger); the max over 1000 cells is about 3.3 SE
    assert np.abs(frame["ci_lower"] - lo).max() < 0.03
    assert np.abs(frame["ci_upper"] - hi).max() < 0.03
    assert np.abs((frame["ci_lower"] - lo).mean()) < 0.002


def test_coverage_is_nominal_on_model_data(truth):
    fit, _ = truth
    res = posterior_predictive(fit, ci_prob=0.9, seed=2)
    n = len(res.frame)
    assert n == 1000
    # binomial SE sqrt(.9 * .1 / 1000) = 0.0095; allow 3.5 SE
    assert res.coverage == pytest.approx(0.9, abs=0.034)
    by = res.coverage_by_system()
    assert list(by.columns) == ["system", "role", "coverage", "n"]
    assert (by["n"] == 100).all()
    assert "Coverage per system" in res.summary()


def test_seed_reproducible_and_conf_int(truth):
    fit, _ = truth
    a = posterior_predictive(fit, seed=3, systems=["champ", "chal_0"])
    b = posterior_predictive(fit, seed=3, systems=["champ", "chal_0"])
    assert a.frame.equals(b.frame)
    assert set(a.frame["system"]) == {"champ", "chal_0"}
    ci = a.conf_int(ci_prob=0.5)
    assert list(ci.columns) == ["topic", "system", "estimate", "ci_lower", "ci_upper"]
    width50 = (ci["ci_upper"] - ci["ci_lower"]).mean()
    width95 = (a.frame["ci_upper"] - a.frame["ci_lower"]).mean()
    assert width50 < width95


def test_errors(synth):
    from bayes_ir.errors import UnknownSystemError

    with pytest.raises(UnknownSystemError):
        posterior_predictive(synth, systems=["nope"])
    with pytest.raises(TypeError, match="table"):
        posterior_predictive(synth.posterior)


def test_real_fit_coverage_on_data_simulated_from_the_model():
    """Fit the Gaussian model to data drawn from it: 90% predictive intervals cover ~90%."""
    from bayes_ir.hierarchical import fit

    rng = np.random.default_rng(21)
    n_topic, n_system = 60, 15
    mu = 0.4 + rng.normal(0, 0.12, n_topic)[:, None] + rng.normal(0, 0.03, n_system)[None, :]
    scores = mu + 0.1 * rng.standard_normal(mu.shape)
    systems = ["champ", "chal_1"] + [f"r{i:02d}" for i in range(n_system - 2)]
    table = ScoreTable.from_matrix(scores, systems=systems).with_roles(
        champion="champ", challengers="chal_*"
    )
    result = fit(table, chains=2, draws=1000, seed=5)
    pred = posterior_predictive(result, ci_prob=0.9, seed=6)
    assert pred.diagnostics_passed and pred.likelihood == "gaussian"
    # 900 cells; binomial SE 0.01 (cells are not independent given the fit: allow 0.04)
    assert pred.coverage == pytest.approx(0.9, abs=0.04)
    # the predictive mean of a cell is the posterior mean of b0 + topic + system
    post = result.posterior["posterior"]
    expect = (post["b0"] + post["topic_effect"] + post["system_effect"]).mean(("chain", "draw"))
    got = pred.frame.set_index(["topic", "system"])["mean"]
    assert got.loc[("3", "chal_1")] == pytest.approx(float(expect.sel(topic="3", system="chal_1")))


def test_example_fit_predictive(example_fit):
    pred = posterior_predictive(example_fit, ci_prob=0.95, seed=1)
    assert len(pred.frame) == 50 * 45
    # against the exact coverage of the same posterior (predictive_reference.py): the
    # simulated intervals differ from it by Monte Carlo error only
    reference = exact_pit(example_fit, example_fit.table.wide(), 0.95)
    check_coverage(pred.frame, reference, example_fit.n_draws)
    by = pred.coverage_by_system().set_index("system")
    # chal_risky loses badly on some topics: its scores escape the model's intervals most
    assert by.loc["chal_risky", "coverage"] == by["coverage"].min()
