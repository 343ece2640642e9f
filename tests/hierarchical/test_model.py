"""The PyMC model: structure, skew-normal parameterisation, sufficient-statistics likelihood."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from kernel_checks import REFERENCE_MODE
from scipy import stats

from bayes_ir.errors import BayesIRError, InsufficientDataError, OptionError, ScoreTableError
from bayes_ir.hierarchical import build_model, skewnormal_location_scale, skewnormal_moments
from bayes_ir.table import ScoreTable


def _table(n_t: int, n_s: int, seed: int, missing: int = 0) -> ScoreTable:
    rng = np.random.default_rng(seed)
    y = 0.4 + rng.normal(0, 0.1, (n_t, 1)) + rng.normal(0, 0.03, (1, n_s))
    y = np.clip(y + rng.normal(0, 0.05, (n_t, n_s)), 0, 1)
    for k in range(missing):
        y[k, (k + 1) % n_s] = np.nan
    systems = ["champ", *[f"chal{i}" for i in range(2)], *[f"run{i}" for i in range(n_s - 3)]]
    wide = pd.DataFrame(y, index=[f"q{i}" for i in range(n_t)], columns=systems)
    long = wide.rename_axis(index="topic", columns="system").stack(future_stack=True)
    long = long.rename("score").reset_index().dropna()
    table = ScoreTable.from_frame(long, measure="AP", missing="keep" if missing else "error")
    return table.with_roles(champion="champ", challengers="chal*")


# ------------------------------------------------------------------ skew-normal
@pytest.mark.parametrize("alpha", [-6.0, -1.0, 0.0, 0.5, 3.0, 20.0])
def test_skewnormal_location_scale_gives_requested_moments(alpha):
    mean, sd = 0.3, 0.12
    xi, omega = skewnormal_location_scale(mean, sd, alpha)
    dist = stats.skewnorm(alpha, loc=xi, scale=omega)
    assert dist.mean() == pytest.approx(mean, abs=1e-12)
    assert dist.std() == pytest.approx(sd, rel=1e-12)
    back = skewnormal_moments(xi, omega, alpha)
    assert back[0] == pytest.approx(mean) and back[1] == pytest.approx(sd)


@pytest.mark.parametrize("alpha", [-8.0, -1.0, -0.05, 0.2, 2.5, 30.0])
def test_skewness_alpha_round_trip_matches_scipy(alpha):
    from bayes_ir.hierarchical.skewnormal import (
        SKEWNESS_MAX,
        alpha_to_skewness,
        skewness_to_alpha,
    )

    gamma = alpha_to_skewness(alpha)
    assert gamma == pytest.approx(float(stats.skewnorm(alpha).stats(moments="s")), rel=1e-9)
    assert skewness_to_alpha(gamma) == pytest.approx(alpha, rel=1e-6)
    assert abs(gamma) < SKEWNESS_MAX


def test_skewnormal_location_scale_pytensor_matches_numpy():
    import pytensor
    import pytensor.tensor as pt

    m, s, a = pt.dvector("m"), pt.dvector("s"), pt.dvector("a")
    xi, omega = skewnormal_location_scale(m, s, a)
    assert isinstance(xi, pt.TensorVariable)
    vals = (np.array([0.1, 0.5]), np.array([0.2, 0.05]), np.array([-2.0, 4.0]))
    got = pytensor.function([m, s, a], [xi, omega], mode=REFERENCE_MODE)(*vals)
    want = skewnormal_location_scale(*vals)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


# ------------------------------------------------------------------ structure
def test_build_model_names_coords_and_data():
    table = _table(6, 5, seed=0)
    model = build_model(table)
    free = {rv.name for rv in model.free_RVs}
    assert free == {"b0", "sigma", "sigma_topic", "sigma_system", "topic_effect", "system_effect"}
    assert list(model.coords["system"]) == list(table.systems)
    assert list(model.coords["topic"]) == list(table.topics)
    assert {"topic_idx", "system_idx", "score"} <= set(model.named_vars)
    assert model.role == ("champion", "challenger", "challenger", "artifact", "artifact")
    skew = build_model(table, likelihood="skew_normal")
    assert {rv.name for rv in skew.free_RVs} == {
        "b0",
        "sigma",
        "sigma_topic",
        "sigma_system",
        "topic_effect",
        "system_z",
        "abs_skewness",
    }
    assert {"system_effect", "skew_sign_logodds", "y", "score_matrix"} <= set(skew.named_vars)


def test_build_model_rejects_bad_input():
    table = _table(6, 5, seed=0)
    # a table without roles builds the same model, every system alike (a leaderboard)
    plain = build_model(
        ScoreTable.from_matrix(np.full((3, 3), 0.5) + np.eye(3) * 0.1, measure="AP")
    )
    assert list(plain.coords["system"]) == ["0", "1", "2"]
    two = pd.concat([table.data, table.data.assign(measure="P@10")])
    table2 = ScoreTable.from_frame(two).with_roles(champion="champ", challengers="chal*")
    with pytest.raises(ScoreTableError, match="several measures"):
        build_model(table2)
    with pytest.raises(OptionError, match="^likelihood must be one of 'gaussian', 'skew_normal'"):
        build_model(table, likelihood="student")
    with pytest.raises(BayesIRError, match="complete"):
        build_model(_table(6, 5, seed=0, missing=2), loglik="sufficient")
    with pytest.raises(InsufficientDataError):
        build_model(table.select(topics=["q0"]))


# ------------------------------------------------------------------ sufficient statistics
def _random_point(model, rng, start=None):
    """Random values of the model's value variables (``start``: its initial point, which
    gives their shapes; computed when not given)."""
    point = {}
    for name, value in (start or model.initial_point()).items():
        point[name] = rng.normal(0, 0.7, size=np.shape(value))
    return point


def test_sufficient_likelihood_equals_full_value_and_gradient():
    """Same log density and gradient on random complete matrices and random points.

    One compiled function per likelihood form; new random matrices are swapped in
    through the model's data containers.
    """
    import pymc as pm

    from bayes_ir.hierarchical.model import data_updates, design_of

    table = _table(9, 6, seed=1)
    full = build_model(table, loglik="full")
    suff = build_model(table, loglik="sufficient")
    assert "y_sufficient" in suff.named_vars and "y" in full.named_vars
    f_logp, s_logp = full.compile_logp(mode=REFERENCE_MODE), suff.compile_logp(mode=REFERENCE_MODE)
    f_dlogp = full.compile_dlogp(mode=REFERENCE_MODE)
    s_dlogp = suff.compile_dlogp(mode=REFERENCE_MODE)
    rng = np.random.default_rng(1)
    start = full.initial_point()  # the shapes of the values, unchanged by new data
    for k in range(4):
        design = design_of(_table(9, 6, seed=10 + k))
        for model, sufficient in ((full, False), (suff, True)):
            updates = data_updates(design, suff.priors, sufficient=sufficient)
            names = set(model.named_vars)
            with model:
                pm.set_data({n: v for n, v in updates.items() if n in names})
        for _ in range(3):
            point = _random_point(full, rng, start)
            assert s_logp(point) == pytest.approx(f_logp(point), rel=1e-10, abs=1e-8)
            np.testing.assert_allclose(s_dlogp(point), f_dlogp(point), rtol=1e-8, atol=1e-7)
    # the data really changed: the observed term is scipy's on the last matrix swapped in
    y = _table(9, 6, seed=13).matrix().values
    observed = full.compile_fn(
        full.logp(vars=full.observed_RVs),
        inputs=full.value_vars,
        on_unused_input="ignore",
        mode=REFERENCE_MODE,
    )
    v = _values(full, point)
    mu = v["b0"] + v["topic_effect"][:, None] + v["system_effect"][None, :]
    assert float(observed(point)) == pytest.approx(
        stats.norm.logpdf(y, mu, v["sigma"]).sum(), rel=1e-10
    )


def test_full_gaussian_term_matches_scipy():
    table = _table(5, 4, seed=4)
    y = table.matrix().values
    model = build_model(table, likelihood="gaussian", loglik="full")
    point = _random_point(model, np.random.default_rng(5))
    logp_fn = model.compile_fn(
        model.logp(vars=model.observed_RVs),
        inputs=model.value_vars,
        on_unused_input="ignore",
        mode=REFERENCE_MODE,
    )
    values = _values(model, point)
    mu = values["b0"] + values["topic_effect"][:, None] + values["system_effect"][None, :]
    want = stats.norm.logpdf(y, mu, values["sigma"]).sum()
    assert float(logp_fn(point)) == pytest.approx(want, rel=1e-7)


def _values(model, point, value_fn=None):
    """The model's variables at ``point`` (``value_fn``: from :func:`_value_fn`, compiled
    once for several points)."""
    value_fn = value_fn or _value_fn(model)
    return dict(zip([v.name for v in model.unobserved_value_vars], value_fn(point), strict=True))


def _value_fn(model):
    return model.compile_fn(
        model.unobserved_value_vars,
        inputs=model.value_vars,
        on_unused_input="ignore",
        mode=REFERENCE_MODE,
    )


@pytest.mark.parametrize("missing", [0, 3], ids=["complete-matrix", "gather"])
def test_skewnormal_term_is_the_sign_marginal_of_scipy(missing):
    """The potential equals log((L(+alpha) + L(-alpha)) / 2), L from scipy.stats.skewnorm."""
    from bayes_ir.hierarchical.skewnormal import skewness_to_alpha

    table = _table(6, 5, seed=4, missing=missing)
    y = table.matrix().values
    obs = np.isfinite(y)
    model = build_model(table, likelihood="skew_normal")
    assert ("score_matrix" in model.named_vars) == (missing == 0)
    pot_fn = model.compile_fn(
        model.logp(vars=model.potentials),
        inputs=model.value_vars,
        on_unused_input="ignore",
        mode=REFERENCE_MODE,
    )
    rng = np.random.default_rng(5)
    start, value_fn = model.initial_point(), _value_fn(model)
    for _ in range(3):
        point = _random_point(model, rng, start)
        values = _values(model, point, value_fn)
        mu = values["b0"] + values["topic_effect"][:, None] + values["system_effect"][None, :]
        alpha = float(skewness_to_alpha(values["abs_skewness"]))
        total = []
        for a in (alpha, -alpha):
            xi, omega = skewnormal_location_scale(mu, values["sigma"], a)
            total.append(stats.skewnorm.logpdf(y, a, xi, omega)[obs].sum())
        want = np.logaddexp(*total) - np.log(2.0)
        assert float(pot_fn(point)) == pytest.approx(want, rel=1e-9)
        assert values["skew_sign_logodds"] == pytest.approx(total[0] - total[1], rel=1e-9)


def test_skewnormal_logpdf_matches_scipy_numpy_and_pytensor():
    import pytensor
    import pytensor.tensor as pt

    from bayes_ir.hierarchical.skewnormal import skewnormal_logpdf

    rng = np.random.default_rng(11)
    y = rng.normal(0.3, 0.3, (40, 30))
    mean = rng.normal(0.3, 0.1, (40, 30))
    for sd, alpha in ((0.1, -3.0), (0.05, 0.0), (0.2, 0.7), (0.02, 25.0), (0.01, -80.0)):
        xi, omega = skewnormal_location_scale(mean, sd, alpha)
        want = stats.skewnorm.logpdf(y, alpha, xi, omega)
        np.testing.assert_allclose(skewnormal_logpdf(y, mean, sd, alpha), want, rtol=1e-10)
        ty, tm = pt.dmatrix("y"), pt.dmatrix("m")
        ts, ta = pt.dscalar("s"), pt.dscalar("a")
        f = pytensor.function(
            [ty, tm, ts, ta], skewnormal_logpdf(ty, tm, ts, ta), mode=REFERENCE_MODE
        )
        np.testing.assert_allclose(f(y, mean, sd, alpha), want, rtol=1e-9)


def test_log_ndtr_value_and_gradient_over_the_whole_range():
    import pytensor
    import pytensor.tensor as pt
    from scipy import special

    from bayes_ir.hierarchical.skewnormal import log_ndtr

    x = pt.dvector("x")
    f = pytensor.function([x], [log_ndtr(x), pt.grad(log_ndtr(x).sum(), x)], mode=REFERENCE_MODE)
    xv = np.linspace(-200.0, 40.0, 24001)
    value, grad = f(xv)
    want = special.log_ndtr(xv)
    np.testing.assert_allclose(value, want, rtol=1e-9, atol=1e-15)
    # d/dx log Phi(x) = phi(x) / Phi(x), the inverse Mills ratio
    mills = np.exp(stats.norm.logpdf(xv) - want)
    np.testing.assert_allclose(grad, mills, rtol=1e-8, atol=1e-300)


def test_draw_skewness_sign_follows_the_log_odds_and_the_seed():
    from bayes_ir.hierarchical.model import draw_skewness_sign
    from bayes_ir.hierarchical.skewnormal import alpha_to_skewness

    abs_skew = np.full((4, 5000), 0.2)
    logodds = np.repeat([[-40.0], [0.0], [np.log(3.0)], [40.0]], 5000, axis=1)
    skew, alpha = draw_skewness_sign(abs_skew, logodds, seed=3)
    share = (skew > 0).mean(axis=1)
    assert share[0] == 0.0 and share[3] == 1.0
    # binomial SE of a share of 5000 is <= 0.0071: 4 SE
    assert share[1] == pytest.approx(0.5, abs=0.03)
    assert share[2] == pytest.approx(0.75, abs=0.03)
    np.testing.assert_allclose(alpha_to_skewness(alpha), skew, rtol=1e-9)
    again, _ = draw_skewness_sign(abs_skew, logodds, seed=3)
    np.testing.assert_array_equal(skew, again)
