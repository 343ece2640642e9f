"""Risk-adjusted differences and scores."""

from __future__ import annotations

import numpy as np
import pytest
from results.risk import ADJUSTED_EXAMPLE

from bayes_ir.errors import (
    InsufficientDataError,
    OptionError,
    ScoreTableError,
    UnknownSystemError,
)
from bayes_ir.risk import risk_adjusted_differences, risk_adjusted_scores, risk_measure_name
from bayes_ir.table import ScoreTable


def two_systems(champion, challenger, topics=None):
    return ScoreTable.from_matrix(
        np.column_stack([champion, challenger]),
        systems=["champ", "chal"],
        topics=topics,
        measure="AP",
    ).with_roles(champion="champ", challengers="chal")


def test_worked_example_of_the_issue():
    ex = ADJUSTED_EXAMPLE
    table = two_systems([ex["champion"], 0.3, 0.2], [ex["challenger"], 0.4, 0.2])
    adj = risk_adjusted_scores(table, r=ex["r"])
    wide = adj.wide()
    assert wide.loc["0", "chal"] == pytest.approx(ex["adjusted"])
    # wins and ties are not adjusted; the champion is unchanged
    assert wide.loc["1", "chal"] == pytest.approx(0.4)
    assert wide.loc["2", "chal"] == pytest.approx(0.2)
    np.testing.assert_allclose(wide["champ"], [0.5, 0.3, 0.2])


def test_differences_by_hand():
    table = two_systems([0.5, 0.2, 0.4, 0.9], [0.45, 0.3, 0.4, 0.1])
    d = risk_adjusted_differences(table, r=5)
    np.testing.assert_allclose(d.sel(system="chal").values, [-0.25, 0.1, 0.0, -4.0])
    assert d.attrs["champion"] == "champ" and d.attrs["r"] == 5.0
    d1 = risk_adjusted_differences(table, r=1)
    np.testing.assert_allclose(d1.sel(system="chal").values, [-0.05, 0.1, 0.0, -0.8])


def test_adjusted_table_keeps_roles_and_names_the_measure(toy):
    adj = risk_adjusted_scores(toy, r=5)
    assert adj.measures == ("AP~risk(r=5)",)
    assert adj.roles == toy.roles
    assert risk_measure_name("nDCG@10", 2.5) == "nDCG@10~risk(r=2.5)"
    # adjusted = champion + adjusted difference, for artifacts too
    d = risk_adjusted_differences(toy, r=5, challengers=["run1", "good"])
    base = toy.wide()["base"]
    np.testing.assert_allclose(adj.wide()["run1"], base + d.sel(system="run1").values)
    np.testing.assert_allclose(adj.wide()["good"], base + d.sel(system="good").values)
    # scores can leave [0, 1]: the table is built without the range check
    assert (adj.wide()["risky"] < 0).any()


@pytest.mark.parametrize("r", [0.5, -1, float("nan"), "x", 2j, True])
def test_bad_r(toy, r):
    with pytest.raises(OptionError, match=r"loss weight r .* got"):
        risk_adjusted_differences(toy, r=r)


def test_bad_input(toy):
    with pytest.raises(UnknownSystemError, match="nope"):
        risk_adjusted_differences(toy, champion="nope")
    with pytest.raises(ScoreTableError, match="champion"):
        risk_adjusted_differences(ScoreTable.from_frame(toy.data))
    with pytest.raises(ScoreTableError, match="itself"):
        risk_adjusted_differences(toy, challengers=["base"])
    short = two_systems([0.1, 0.2], [0.2, 0.3])
    with pytest.raises(InsufficientDataError, match="topics"):
        risk_adjusted_differences(short)


def test_missing_cells_are_refused():
    frame = two_systems([0.1, 0.2, 0.3, 0.4], [0.2, 0.3, 0.4, 0.5]).data
    frame = frame.drop(index=frame.index[-1])
    table = ScoreTable.from_frame(frame, missing="keep").with_roles(champion="champ")
    with pytest.raises(ScoreTableError, match="complete"):
        risk_adjusted_differences(table)
