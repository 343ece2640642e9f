"""URisk against hand-checkable values."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_ir.risk import urisk
from bayes_ir.table import ScoreTable


def test_urisk_by_hand():
    # differences +0.1, -0.05, 0, +0.2, -0.1: reward 0.3, loss 0.15 (Wang et al.'s form)
    champ = [0.3, 0.5, 0.4, 0.2, 0.6]
    chal = [0.4, 0.45, 0.4, 0.4, 0.5]
    table = ScoreTable.from_matrix(
        np.column_stack([champ, chal]), systems=["b", "c"], measure="AP"
    ).with_roles(champion="b", challengers="c")
    for r in (1, 2, 5, 10):
        res = urisk(table, r=r)
        expected = (0.3 - r * 0.15) / 5  # (Reward - (1 + alpha) Loss) / n
        assert res.urisk[0] == pytest.approx(expected)
        assert res.urisk_minus[0] == pytest.approx(-expected)
    frame = urisk(table, r=2).to_frame()
    assert list(frame.columns) == ["system", "r", "n_topics", "urisk", "urisk_minus"]
    assert frame.loc[0, "n_topics"] == 5


def test_urisk_decreases_with_r_and_r1_is_mean_difference(toy):
    wide = toy.wide()
    res1 = urisk(toy, r=1)
    np.testing.assert_allclose(
        res1.urisk, (wide[list(res1.systems)].sub(wide["base"], axis=0)).mean().to_numpy()
    )
    values = np.array([urisk(toy, r=r).urisk for r in (1, 2, 5, 10)])
    assert (np.diff(values, axis=0) <= 1e-15).all()


def test_summary_states_the_sign_convention(toy):
    text = urisk(toy).summary()
    assert "URisk-" in text and "higher = riskier" in text
    assert str(urisk(toy)) == text
