"""BCa intervals of URisk: equal to a direct scipy call; Bonferroni widens them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayes_ir.risk import bca_urisk, bonferroni_level, risk_adjusted_differences


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
