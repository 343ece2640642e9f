"""ScoreTable with replicates (seeds, folds, samples): column, order, checks, reductions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import OptionError, ScoreTableError
from bayes_ir.frequentist import effect_size, paired_tests
from bayes_ir.hierarchical import fit, fit_across
from bayes_ir.report import render_trec_eval
from bayes_ir.risk import urisk
from bayes_ir.simulate import simulate_judged
from bayes_ir.table import ScoreTable, concat

#: champion "prod": one run; challenger "dense": seeds 1, 2 and 10 (natural order 1, 2, 10).
SCORES = {
    ("prod", "1"): {"t1": 0.50, "t2": 0.30, "t3": 0.10},
    ("dense", "10"): {"t1": 0.60, "t2": 0.40, "t3": 0.20},
    ("dense", "2"): {"t1": 0.70, "t2": 0.20, "t3": 0.30},
    ("dense", "1"): {"t1": 0.80, "t2": 0.30, "t3": 0.40},
}


def _frame(column: str = "seed") -> pd.DataFrame:
    rows = [
        {"system": s, "topic": t, column: r, "score": v}
        for (s, r), cells in SCORES.items()
        for t, v in cells.items()
    ]
    return pd.DataFrame(rows)


def _table(**options) -> ScoreTable:
    return ScoreTable.from_frame(_frame(), source="runs.csv", **options)


def test_the_replicate_column_comes_before_score_sorted_naturally():
    table = _table()
    assert list(table.data.columns) == [
        "collection",
        "measure",
        "system",
        "topic",
        "replicate",
        "score",
    ]
    assert table.has_replicates
    dense = table.data[(table.data["system"] == "dense") & (table.data["topic"] == "t1")]
    assert list(dense["replicate"]) == ["1", "2", "10"]
    assert list(dense["score"]) == [0.80, 0.70, 0.60]
    assert table.replicates() == ("1", "2", "10")
    assert table.replicates("dense") == ("1", "2", "10")
    assert table.replicates("prod") == ("1",)
    assert "replicates per system: dense 3, prod 1" in table.summary()


@pytest.mark.parametrize(
    "alias", ["replicate", "Seed", "fold", "repeat", "epoch", "trial", "run_seed"]
)
def test_every_alias_names_the_replicate_column(alias):
    table = ScoreTable.from_frame(_frame(alias))
    assert table.replicates("dense") == ("1", "2", "10")


def test_a_table_without_replicates_has_no_column():
    table = ScoreTable.from_frame(
        _frame().drop(columns="seed").drop_duplicates(["system", "topic"])
    )
    assert "replicate" not in table.data
    assert not table.has_replicates
    assert table.replicates() == ()
    table.require_one_per_cell("anything")  # no error
    assert table.mean_over_replicates() is table


def test_one_label_per_system_drops_the_column_and_says_so():
    frame = _frame()
    frame = frame[frame["seed"].isin(["1"])]  # prod 1, dense 1: one run each
    table = ScoreTable.from_frame(frame)
    assert not table.has_replicates
    assert "replicate" not in table.data
    assert any("one score per cell" in n for n in table.notes)
    assert table.matrix().sel(system="dense", topic="t1").item() == 0.80


def test_duplicates_are_checked_per_replicate():
    frame = pd.concat([_frame(), _frame().iloc[[4]]], ignore_index=True)
    with pytest.raises(ScoreTableError) as info:
        ScoreTable.from_frame(frame, source="runs.csv")
    message = str(info.value)
    assert "\n" not in message
    assert "duplicate score for system 'dense', topic 't2', replicate '10'" in message


def test_the_same_topic_in_two_replicates_is_no_duplicate():
    table = _table()
    assert len(table.data) == 12


def test_mean_over_replicates_against_a_hand_computation():
    table = _table().with_roles(champion="prod", challengers=["dense"])
    mean = table.mean_over_replicates()
    assert not mean.has_replicates
    assert mean.roles == table.roles
    wide = mean.wide()
    # dense t1: (0.6 + 0.7 + 0.8) / 3; t2: (0.4 + 0.2 + 0.3) / 3; t3: (0.2 + 0.3 + 0.4) / 3
    np.testing.assert_allclose(wide["dense"].loc[["t1", "t2", "t3"]], [0.7, 0.3, 0.3])
    np.testing.assert_allclose(wide["prod"].loc[["t1", "t2", "t3"]], [0.5, 0.3, 0.1])
    assert mean.notes[-1] == "scores averaged over 1 to 3 replicates per system"


def test_system_means_average_the_replicates_first():
    means = _table().system_means().set_index("system")
    assert means.loc["dense", "mean"] == pytest.approx((0.7 + 0.3 + 0.3) / 3)
    assert means.loc["dense", "n_topics"] == 3
    assert _table().is_complete


def test_one_replicate_by_index_takes_each_systems_kth_run():
    table = _table().with_roles(champion="prod", challengers=["dense"])
    first = table.one_replicate(0)
    assert not first.has_replicates
    assert first.roles == table.roles
    assert first.wide().loc["t1"].to_dict() == {"prod": 0.50, "dense": 0.80}
    with pytest.raises(ScoreTableError, match=r"system 'prod' has no replicate number 1 "):
        table.one_replicate(1)
    with pytest.raises(OptionError, match="replicate must be at least 0"):
        table.one_replicate(-1)


def test_one_replicate_by_label():
    table = _table().select(systems=["dense"])
    assert table.one_replicate("2").wide()["dense"].to_list() == [0.70, 0.20, 0.30]
    with pytest.raises(ScoreTableError, match=r"system 'dense' has no replicate '7' \(its"):
        table.one_replicate("7")
    with pytest.raises(ScoreTableError, match="has no replicates"):
        table.one_replicate(0).one_replicate(0)


def test_matrix_refuses_replicates_in_one_line_naming_the_source():
    with pytest.raises(ScoreTableError) as info:
        _table().matrix()
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("runs.csv: 1 to 3 replicates per system")
    assert "fit_replicates" in message and "table.mean_over_replicates()" in message
    with pytest.raises(ScoreTableError, match="runs.csv: 1 to 3 replicates"):
        _table().wide()


def test_missing_topics_are_judged_per_replicate():
    frame = _frame()
    gap = frame[~((frame["system"] == "dense") & (frame["seed"] == "2") & (frame["topic"] == "t3"))]
    with pytest.raises(ScoreTableError, match=r"system 'dense', replicate '2', has no score for 1"):
        ScoreTable.from_frame(gap)
    with pytest.warns(UserWarning, match="dropped 1 topic"):
        kept = ScoreTable.from_frame(gap, missing="intersect")
    assert kept.topics == ("t1", "t2")
    assert len(kept.data) == 8


def test_empty_replicate_label_is_refused():
    frame = _frame()
    frame.loc[5, "seed"] = " "
    with pytest.raises(ScoreTableError, match="row 6: empty replicate name"):
        ScoreTable.from_frame(frame)


def test_two_replicate_columns_are_refused_naming_both():
    frame = _frame().assign(fold="a")
    with pytest.raises(ScoreTableError, match="columns 'seed' and 'fold' both name the replicate"):
        ScoreTable.from_frame(frame)


def test_select_down_to_one_run_per_system_drops_the_column():
    one = _table().select(systems=["prod"])
    assert not one.has_replicates
    assert one.matrix().shape == (3, 1)


def test_concat_reads_a_table_without_replicates_as_replicate_1():
    single = ScoreTable.from_frame(
        _frame().drop(columns="seed").drop_duplicates(["system", "topic"]), collection="other"
    )
    table = concat([_table(collection="main"), single], source="both")
    assert table.has_replicates
    assert table.select(collection="other").data["system"].tolist() == ["dense"] * 3 + ["prod"] * 3
    assert table.replicates("dense") == ("1", "2", "10")
    other = table.data[table.data["collection"] == "other"]
    assert set(other["replicate"]) == {"1"}
    assert any("read as replicate '1'" in n for n in table.notes)


def _roled() -> ScoreTable:
    return _table().with_roles(champion="prod", challengers=["dense"])


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda t: fit(t, seed=1), id="fit"),
        pytest.param(lambda t: fit_across(t, seed=1), id="fit_across"),
        pytest.param(urisk, id="urisk"),
        pytest.param(paired_tests, id="paired_tests"),
        pytest.param(lambda t: effect_size(t, measure="MD"), id="effect_size"),
        pytest.param(render_trec_eval, id="render_trec_eval"),
        pytest.param(lambda t: simulate_judged(t, rates={"prod": 0.5}), id="simulate_judged"),
    ],
)
def test_methods_refuse_replicates_in_one_line(call):
    with pytest.raises(ScoreTableError) as info:
        call(_roled())
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("runs.csv: 1 to 3 replicates per system")
    assert "mean_over_replicates()" in message
