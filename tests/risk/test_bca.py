"""BCa intervals of URisk: equal to a direct scipy call; Bonferroni widens them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayes_ir.errors import DataWarning, OptionError
from bayes_ir.risk import bca_urisk, bonferroni_level, risk_adjusted_differences
from bayes_ir.table import ScoreTable


@pytest.fixture(scope="module")
def bca(toy):
    return bca_urisk(toy, r=5, n_resamples=2000, seed=11)


def test_agrees_with_scipy(toy, bca):
    d = risk_adjusted_differences(toy, r=5)
    k = len(bca.systems)
    assert bca.level == pytest.approx(1 - 0.05 / k)
    for j, system in enumerate(bca.systems):
        ref = stats.bootstrap(
            (d.sel(system=system).values,),
            np.mean,
            n_resamples=2000,
            confidence_level=1 - 0.05 / k,
            method="BCa",
            rng=np.random.default_rng([11, j]),
        )
        assert bca.ci_lower[j] == pytest.approx(ref.confidence_interval.low, rel=1e-12)
        assert bca.ci_upper[j] == pytest.approx(ref.confidence_interval.high, rel=1e-12)
        assert bca.urisk[j] == pytest.approx(d.sel(system=system).values.mean())


def test_bonferroni_widens(toy, bca):
    plain = bca_urisk(toy, r=5, n_resamples=2000, seed=11, bonferroni=False)
    assert plain.level == pytest.approx(0.95)
    assert (bca.ci_lower < plain.ci_lower).all()
    assert (bca.ci_upper > plain.ci_upper).all()
    assert bonferroni_level(0.9, 4) == pytest.approx(0.975)


def test_minus_convention_and_marks(bca):
    ci = bca.conf_int()
    np.testing.assert_allclose(ci["estimate"], -bca.urisk)
    np.testing.assert_allclose(ci["ci_lower"], -bca.ci_upper)
    frame = bca.to_frame()
    np.testing.assert_array_equal(
        frame["significant"], (frame["ci_lower"] > 0) | (frame["ci_upper"] < 0)
    )
    # the "good" challenger is clearly better than the champion: its URisk- interval is < 0
    assert ci.loc["good", "ci_upper"] < 0
    assert "Bonferroni over 3" in bca.summary()


def test_seed_reproducible(toy, bca):
    again = bca_urisk(toy, r=5, n_resamples=2000, seed=11)
    np.testing.assert_array_equal(again.ci_lower, bca.ci_lower)
    with pytest.raises(ValueError):
        bca_urisk(toy, n_resamples=10)


def test_constant_differences_give_nan_interval_with_a_warning(toy):
    # 'same2' is the champion itself, 'up' the champion + 0.05 on every topic: every
    # resample has the same mean, so BCa (and its acceleration) is undefined.
    wide = toy.wide()
    frame = wide.assign(twin=wide["base"], up=wide["base"] + 0.05)
    table = ScoreTable.from_matrix(
        frame.to_numpy(), systems=list(frame.columns), topics=list(frame.index), measure="AP"
    ).with_roles(champion="base", challengers=["good", "twin", "up"])
    with pytest.warns(DataWarning, match=r"undefined \(NaN\) for 'twin', 'up'"):
        res = bca_urisk(table, r=5, n_resamples=500, seed=1)
    out = res.to_frame().set_index("system")
    assert out.loc[["twin", "up"], ["ci_lower", "ci_upper"]].isna().all().all()
    assert out.loc["up", "urisk"] == pytest.approx(0.05, abs=1e-12)
    assert out.loc["good", ["ci_lower", "ci_upper"]].notna().all()
    assert not bool(out.loc["up", "significant"])


@pytest.mark.parametrize("bad", [99, 0, -5, 1e4, "1000", True])
def test_bad_n_resamples(toy, bad):
    with pytest.raises(OptionError, match="n_resamples"):
        bca_urisk(toy, n_resamples=bad)
