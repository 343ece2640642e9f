"""The PyMC model: structure, skew-normal parameterisation, sufficient-statistics likelihood."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayes_ir.errors import BayesIRError, InsufficientDataError, ScoreTableError
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
    got = pytensor.function([m, s, a], [xi, omega])(*vals)
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
    assert "skewness" in {rv.name for rv in skew.free_RVs} and "alpha" in skew.named_vars
    assert "y" in {rv.name for rv in skew.observed_RVs}


def test_build_model_rejects_bad_input():
    table = _table(6, 5, seed=0)
    with pytest.raises(ScoreTableError, match="roles"):
        build_model(ScoreTable.from_matrix(np.full((3, 3), 0.5) + np.eye(3) * 0.1, measure="AP"))
    two = pd.concat([table.data, table.data.assign(measure="P@10")])
    table2 = ScoreTable.from_frame(two).with_roles(champion="champ", challengers="chal*")
    with pytest.raises(ScoreTableError, match="several measures"):
        build_model(table2)
    with pytest.raises(BayesIRError, match="unknown likelihood"):
        build_model(table, likelihood="student")
    with pytest.raises(BayesIRError, match="complete"):
        build_model(_table(6, 5, seed=0, missing=2), loglik="sufficient")
    with pytest.raises(InsufficientDataError):
        build_model(table.select(topics=["q0"]))


# ------------------------------------------------------------------ sufficient statistics
def _random_point(model, rng):
    point = {}
    for name, value in model.initial_point().items():
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
    f_logp, s_logp = full.compile_logp(), suff.compile_logp()
    f_dlogp, s_dlogp = full.compile_dlogp(), suff.compile_dlogp()
    rng = np.random.default_rng(1)
    for k in range(4):
        design = design_of(_table(9, 6, seed=10 + k))
        for model, sufficient in ((full, False), (suff, True)):
            updates = data_updates(design, suff.priors, sufficient=sufficient)
            names = set(model.named_vars)
            with model:
                pm.set_data({n: v for n, v in updates.items() if n in names})
        for _ in range(3):
            point = _random_point(full, rng)
            assert s_logp(point) == pytest.approx(f_logp(point), rel=1e-10, abs=1e-8)
            np.testing.assert_allclose(s_dlogp(point), f_dlogp(point), rtol=1e-8, atol=1e-7)
    # the data really changed: the log density moved with the matrix
    assert np.isfinite(f_logp(point))


def test_full_gaussian_and_skewnormal_terms_match_scipy():
    table = _table(5, 4, seed=4)
    y = table.matrix().values
    rng = np.random.default_rng(5)
    for likelihood in ("gaussian", "skew_normal"):
        model = build_model(table, likelihood=likelihood, loglik="full")
        point = _random_point(model, rng)
        logp_fn = model.compile_fn(
            model.logp(vars=model.observed_RVs), inputs=model.value_vars, on_unused_input="ignore"
        )
        value_fn = model.compile_fn(
            model.unobserved_value_vars, inputs=model.value_vars, on_unused_input="ignore"
        )
        values = dict(
            zip([v.name for v in model.unobserved_value_vars], value_fn(point), strict=True)
        )
        mu = values["b0"] + values["topic_effect"][:, None] + values["system_effect"][None, :]
        if likelihood == "gaussian":
            want = stats.norm.logpdf(y, mu, values["sigma"]).sum()
        else:
            xi, omega = skewnormal_location_scale(mu, values["sigma"], values["alpha"])
            want = stats.skewnorm.logpdf(y, values["alpha"], xi, omega).sum()
        assert float(logp_fn(point)) == pytest.approx(want, rel=1e-7)
