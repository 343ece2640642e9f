"""ZRisk and GeoRisk: a matrix worked by hand, and invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from results.risk import ZRISK_HAND, ZRISK_MATRIX, ZRISK_TOL

from bayes_ir.errors import InsufficientDataError, ScoreTableError
from bayes_ir.risk import zrisk
from bayes_ir.table import ScoreTable


def hand_table(matrix=ZRISK_MATRIX) -> ScoreTable:
    # ZRISK_MATRIX rows are systems; ScoreTable.from_matrix wants rows = topics
    x = np.array(matrix).T
    return ScoreTable.from_matrix(x, systems=["s0", "s1", "s2"], topics=["1", "2", "3", "4"])


def by_hand(matrix, alpha):
    """Plain-Python ZRisk/GeoRisk: i = system (row), j = topic (column)."""
    n_sys, c = len(matrix), len(matrix[0])
    s = [sum(row) for row in matrix]
    t = [sum(matrix[i][j] for i in range(n_sys)) for j in range(c)]
    n = sum(s)
    out = []
    for i in range(n_sys):
        z = []
        for j in range(c):
            e = s[i] * t[j] / n
            z.append((matrix[i][j] - e) / math.sqrt(e))
        zr = sum(z) + alpha * sum(v for v in z if v < 0)
        phi = 0.5 * (1 + math.erf(zr / c / math.sqrt(2)))
        out.append((zr, math.sqrt(s[i] / c * phi)))
    return out


@pytest.mark.parametrize("alpha", sorted(ZRISK_HAND))
def test_hand_matrix(alpha):
    res = zrisk(hand_table(), r=1 + alpha)
    hand = by_hand(ZRISK_MATRIX, alpha)
    for i, (zr_ref, geo_ref) in enumerate(ZRISK_HAND[alpha]):
        assert res.zrisk[i] == pytest.approx(zr_ref, abs=ZRISK_TOL)
        assert res.georisk[i] == pytest.approx(geo_ref, abs=ZRISK_TOL)
        assert res.zrisk[i] == pytest.approx(hand[i][0], rel=1e-12)
        assert res.georisk[i] == pytest.approx(hand[i][1], rel=1e-12)
    frame = res.to_frame()
    np.testing.assert_allclose(frame["zrisk_minus"], -res.zrisk)
    np.testing.assert_allclose(frame["georisk_minus"], -res.georisk)
    np.testing.assert_allclose(frame["mean"], np.mean(ZRISK_MATRIX, axis=1))


def test_r1_is_the_plain_sum_of_z(toy):
    res = zrisk(toy, r=1)
    np.testing.assert_allclose(res.zrisk, res.z.sum("topic").values)
    assert res.z.dims == ("system", "topic")


def test_more_loss_weight_never_raises_zrisk(toy):
    values = np.array([zrisk(toy, r=r).zrisk for r in (1, 2, 5, 10)])
    assert (np.diff(values, axis=0) <= 1e-12).all()


def test_scaling_scores_keeps_z_ordering(toy):
    base = zrisk(toy, r=5)
    scaled = ScoreTable.from_frame(toy.data.assign(score=toy.data["score"] * 0.5)).with_roles(
        champion="base", challengers=["good", "risky", "same"]
    )
    half = zrisk(scaled, r=5)
    # z scales by sqrt(0.5): same order of z, ZRisk and (with the same Phi argument sign) ranks
    np.testing.assert_allclose(half.z.values, base.z.values * np.sqrt(0.5))
    np.testing.assert_array_equal(
        np.argsort(half.z.values, axis=None), np.argsort(base.z.values, axis=None)
    )
    np.testing.assert_array_equal(np.argsort(half.zrisk), np.argsort(base.zrisk))


def test_zero_topic_and_bad_input(toy):
    m = np.array(ZRISK_MATRIX).T.copy()
    m = np.vstack([m, np.zeros(3)])  # a topic on which every system scores 0
    table = ScoreTable.from_matrix(m, systems=["s0", "s1", "s2"])
    res = zrisk(table, r=2)
    assert (res.z.isel(topic=-1).values == 0).all()
    # a zero topic adds nothing to S_i, T_j or N, and its z are 0: the hand ZRisk stands
    for i, (zr_ref, _) in enumerate(ZRISK_HAND[1]):
        assert res.zrisk[i] == pytest.approx(zr_ref, abs=ZRISK_TOL)
    with pytest.raises(InsufficientDataError):
        zrisk(toy, systems=["base"])
    neg = ScoreTable.from_frame(toy.data.assign(score=toy.data["score"] - 0.5), check_range=False)
    with pytest.raises(ScoreTableError, match="non-negative"):
        zrisk(neg)


def test_systems_subset_changes_expected_scores(toy):
    full = zrisk(toy, r=5).to_frame().set_index("system")
    sub = zrisk(toy, r=5, systems=["base", "good", "risky"]).to_frame().set_index("system")
    assert list(sub.index) == ["base", "good", "risky"]
    assert not np.isclose(full.loc["base", "zrisk"], sub.loc["base", "zrisk"])
