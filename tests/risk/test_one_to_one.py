"""One-to-one Bayesian risk models: shape recovery on simulated skewed differences."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy import stats

from bayes_ir.errors import MeasureError, OptionError
from bayes_ir.hierarchical.skewnormal import skewnormal_moments
from bayes_ir.risk import build_one_to_one_model, one_to_one
from bayes_ir.risk.one_to_one import COLUMNS
from bayes_ir.table import ScoreTable

XI, OMEGA, ALPHA = 0.10, 0.12, -6.0
N_TOPICS = 300


@pytest.fixture(scope="session")
def skewed_table() -> ScoreTable:
    """Champion at 0.5; challenger = champion + SN(0.10, 0.12, -6) differences."""
    rng = np.random.default_rng(7)
    d = stats.skewnorm.rvs(ALPHA, loc=XI, scale=OMEGA, size=N_TOPICS, random_state=rng)
    champ = np.full(N_TOPICS, 0.5)
    return ScoreTable.from_matrix(
        np.column_stack([champ, champ + d]), systems=["champ", "chal"], measure="score"
    ).with_roles(champion="champ", challengers="chal")


@pytest.fixture(scope="session")
def fitted(skewed_table):
    with ThreadPoolExecutor(max_workers=1) as pool:
        return one_to_one(
            skewed_table,
            challenger="chal",
            r_levels=(1, 5),
            chains=2,
            draws=1000,
            tune=1000,
            seed=5,
            executor=pool,
        )


def test_skew_normal_recovers_sign_and_size_of_alpha(fitted):
    alpha = fitted.draws("skew_normal", 1, "alpha")
    assert alpha.mean() < -2.5
    assert alpha.mean() > -20
    assert (alpha < 0).mean() > 0.99
    # at r = 5 the losses stretch the left tail further: still negatively skewed
    assert fitted.draws("skew_normal", 5, "alpha").mean() < 0


def test_mean_is_recovered_by_both_likelihoods(fitted, skewed_table):
    true_mean, _ = skewnormal_moments(XI, OMEGA, ALPHA)
    ci = fitted.conf_int(0.99)
    d = skewed_table.wide()["chal"] - skewed_table.wide()["champ"]
    for row in ci[ci["r"] == 1].itertuples():
        assert row.ci_lower < float(true_mean) < row.ci_upper
        assert row.mean == pytest.approx(d.mean(), abs=0.01)
    # risk adjustment lowers the mean
    frame = fitted.to_frame()
    mu = frame[frame["parameter"] == "mu"].set_index(["likelihood", "r"])["mean"]
    assert mu[("gaussian", 5.0)] < mu[("gaussian", 1.0)]
    assert mu[("skew_normal", 5.0)] < mu[("skew_normal", 1.0)]


def test_result_api(fitted):
    frame = fitted.to_frame()
    assert list(frame.columns) == list(COLUMNS)
    assert set(frame["likelihood"]) == {"gaussian", "skew_normal"}
    assert not ((frame["likelihood"] == "gaussian") & (frame["parameter"] == "alpha")).any()
    assert fitted.passed and "PASS" in fitted.summary()
    x = fitted.draws("gaussian", 1)
    row = frame[
        (frame["likelihood"] == "gaussian") & (frame["r"] == 1) & (frame["parameter"] == "mu")
    ]
    assert row["ci_lower"].iat[0] == pytest.approx(np.quantile(x, 0.025))
    assert row["p_negative"].iat[0] == pytest.approx((x < 0).mean())
    assert fitted.differences.sizes == {"r": 2, "topic": N_TOPICS}
    np.testing.assert_allclose(
        fitted.differences.sel(r=5).values,
        np.where(fitted.differences.sel(r=1) >= 0, 1, 5) * fitted.differences.sel(r=1).values,
    )


def test_model_structure_without_sampling():
    model = build_one_to_one_model(np.array([0.1, -0.2, 0.05, 0.3]), likelihood="skew_normal")
    names = {v.name for v in model.free_RVs}
    assert names == {"mu", "sigma", "alpha"}
    assert {"xi", "omega"} <= {v.name for v in model.deterministics}
    gauss = build_one_to_one_model(np.array([0.1, -0.2, 0.05]), likelihood="normal")
    assert {v.name for v in gauss.free_RVs} == {"mu", "sigma"}
    with pytest.raises(MeasureError):
        build_one_to_one_model(np.zeros(3), likelihood="cauchy")


def test_bad_arguments(skewed_table):
    with pytest.raises(MeasureError):
        one_to_one(skewed_table, challenger="chal", r_levels=())
    with pytest.raises(OptionError, match="loss weight r"):
        one_to_one(skewed_table, challenger="chal", r_levels=(0.5,))
