"""ScoreTable: building, views, selection, roles, multi-block tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import OptionError, ScoreTableError, UnknownSystemError
from bayes_ir.table import COLUMNS, ScoreTable, concat


def _two_blocks() -> ScoreTable:
    rows = [
        (c, m, s, str(t), 0.1 * i + 0.01 * t)
        for c in ("c1", "c2")
        for m in ("AP", "P@10")
        for i, s in enumerate(("a", "b", "c"))
        for t in (1, 2, 10)
    ]
    return ScoreTable.from_frame(pd.DataFrame(rows, columns=list(COLUMNS)))


def test_from_matrix_equals_the_tidy_table_of_its_cells():
    """The matrix path builds the same table as the long frame of its observed cells."""
    rng = np.random.default_rng(3)
    y = rng.uniform(size=(7, 5))
    y[rng.uniform(size=y.shape) < 0.2] = np.nan
    topics, systems = [10, 2, "q3", 4, 5, 6, 1], ["b", "a", "c", "e", "d"]
    long = pd.DataFrame(
        [
            (str(t), s, y[i, j])
            for i, t in enumerate(topics)
            for j, s in enumerate(systems)
            if np.isfinite(y[i, j])
        ],
        columns=["topic", "system", "score"],
    )
    a = ScoreTable.from_matrix(y, systems=systems, topics=topics, measure="AP", missing="keep")
    b = ScoreTable.from_frame(long, measure="AP", missing="keep")
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.notes == b.notes


def test_from_matrix_names_a_bad_matrix_in_one_line():
    with pytest.raises(OptionError, match="3 system names for 2 systems of the matrix"):
        ScoreTable.from_matrix(np.zeros((2, 2)), systems=["a", "b", "c"])
    with pytest.raises(ScoreTableError, match="duplicate"):
        ScoreTable.from_matrix(np.zeros((2, 2)), systems=["a", "a"])
    with pytest.raises(ScoreTableError, match="score"):
        ScoreTable.from_matrix(pd.DataFrame({"a": [0.1, "high"], "b": [0.2, 0.3]}))
    with pytest.raises(OptionError, match=r"2-D topic x system matrix, got shape \(2, 2, 2\)"):
        ScoreTable.from_matrix(np.zeros((2, 2, 2)))
    with pytest.raises(ScoreTableError, match="empty topic name"):
        ScoreTable.from_matrix(np.zeros((2, 2)), topics=[None, "q1"])
    with pytest.raises(ScoreTableError, match="empty system name"):
        ScoreTable.from_matrix(np.zeros((2, 2)), systems=["a", np.nan])
    with pytest.raises(ScoreTableError, match="every cell of the matrix is NaN"):
        ScoreTable.from_matrix(np.full((3, 2), np.nan), missing="keep")


def test_from_matrix_round_trips_through_matrix():
    values = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    table = ScoreTable.from_matrix(
        values, systems=["x", "y"], topics=["9", "10", "11"], measure="AP", collection="k"
    )
    da = table.matrix()
    assert da.dims == ("topic", "system")
    assert list(da.topic.values) == ["9", "10", "11"]  # natural order, not "10" < "9"
    np.testing.assert_allclose(da.to_numpy(), values)
    assert da.attrs == {"collection": "k", "measure": "AP", "source": "<matrix>"}
    pd.testing.assert_frame_equal(
        table.wide(),
        pd.DataFrame(values, index=["9", "10", "11"], columns=["x", "y"]),
        check_names=False,
    )


def test_several_blocks_need_a_choice():
    table = _two_blocks()
    assert table.collections == ("c1", "c2") and table.measures == ("AP", "P@10")
    assert table.blocks() == [("c1", "AP"), ("c1", "P@10"), ("c2", "AP"), ("c2", "P@10")]
    with pytest.raises(ScoreTableError, match="several collections"):
        table.matrix()
    with pytest.raises(ScoreTableError, match="several measures"):
        table.matrix(collection="c1")
    m = table.matrix(collection="c2", measure="P@10")
    assert m.shape == (3, 3) and m.sel(topic="10", system="c").item() == pytest.approx(0.3)
    with pytest.raises(ScoreTableError, match="collection 'c3' is not in the data"):
        table.select(collection="c3")


def test_select_systems_topics_and_unknown_system():
    table = _two_blocks().select(collection="c1", measure="AP")
    sub = table.select(systems=["a", "c"], topics=[1, 2])
    assert sub.systems == ("a", "c") and sub.topics == ("1", "2")
    with pytest.raises(UnknownSystemError, match="'d' is not in the data"):
        table.select(systems=["d"])
    with pytest.raises(ScoreTableError, match="selection leaves no score"):
        table.select(topics=["999"])


def test_system_means_to_frame_and_summary(small_table):
    means = small_table.system_means()
    assert list(means.columns) == [
        "collection",
        "measure",
        "system",
        "mean",
        "sd",
        "n_topics",
        "role",
    ]
    wide = small_table.wide()
    np.testing.assert_allclose(means.set_index("system")["mean"][wide.columns], wide.mean(axis=0))
    np.testing.assert_allclose(
        means.set_index("system")["sd"][wide.columns], wide.std(axis=0, ddof=1)
    )
    frame = small_table.to_frame()
    assert list(frame.columns) == [*COLUMNS, "role"]
    assert set(frame["role"]) == {"champion", "challenger", "artifact"}
    text = small_table.summary()
    assert "12 topics x 5 systems" in text and "champion 'bm25'" in text
    assert str(small_table) == text and "roles=set" in repr(small_table)


def test_roles_order_and_role_coordinate(small_table):
    da = small_table.matrix()
    assert list(da.system.values) == ["bm25", "chal_a", "chal_b", *small_table.artifacts]
    assert list(da.role.values[:3]) == ["champion", "challenger", "challenger"]
    no_champ = small_table.select(systems=["chal_a", "chal_b"])
    assert no_champ.roles is None  # removing the champion drops the roles
    with pytest.raises(ScoreTableError, match="no roles assigned"):
        _ = no_champ.champion


def test_concat_validates():
    a = ScoreTable.from_matrix(np.full((2, 2), 0.5), systems=["x", "y"], collection="c1")
    b = ScoreTable.from_matrix(np.full((2, 2), 0.4), systems=["x", "y"], collection="c2")
    both = concat([a, b])
    assert both.collections == ("c1", "c2") and len(both) == 8
    with pytest.raises(ScoreTableError, match="duplicate"):
        concat([a, a])


def test_is_complete_and_keep():
    frame = pd.DataFrame(
        {"system": ["a", "a", "b"], "topic": ["1", "2", "1"], "score": [0.1, 0.2, 0.3]}
    )
    table = ScoreTable.from_frame(frame, missing="keep")
    assert not table.is_complete
    assert np.isnan(table.matrix().sel(topic="2", system="b").item())
    assert any("1 missing cell(s) kept" in n for n in table.notes)


def test_boolean_and_integer_scores():
    frame = pd.DataFrame({"system": ["a", "b"], "topic": ["1", "1"], "score": [True, False]})
    table = ScoreTable.from_frame(frame, measure="accuracy")
    assert table.data["score"].tolist() == [1.0, 0.0]


def test_unknown_champion_names_the_file(tmp_path):
    from bayes_ir import read_scores
    from bayes_ir.errors import UnknownSystemError

    path = tmp_path / "scores.csv"
    path.write_text("system,topic,score\nbm25,1,0.1\nbm25,2,0.2\ndense,1,0.3\ndense,2,0.4\n")
    with pytest.raises(
        UnknownSystemError, match=r"scores\.csv: champion 'bm2' .*Close matches: bm25"
    ):
        read_scores(path).with_roles(champion="bm2")


def test_errors_name_the_file_and_line_of_the_row_when_rows_come_from_several_files():
    """``sources=`` (a reader of several files): the error names the row's file, not a row."""
    frame = pd.DataFrame({"system": ["a", "a", "b", "b"], "topic": ["1", "2", "1", "1"],
                          "score": [0.1, 0.2, 0.3, 0.4]})  # fmt: skip
    files = ["a.jsonl", "a.jsonl", "b.jsonl", "b2.jsonl"]
    with pytest.raises(ScoreTableError, match=r"^b\.jsonl:7: duplicate score for system 'b', "
                       r"topic '1' .*again at b2\.jsonl:3$"):  # fmt: skip
        ScoreTable.from_frame(frame, source="3 files", lines=[4, 5, 7, 3], sources=files)
    with pytest.raises(ScoreTableError, match=r"^b\.jsonl: duplicate .*again in b2\.jsonl$"):
        ScoreTable.from_frame(frame, source="3 files", sources=files)
    same = ["a.jsonl", "a.jsonl", "b.jsonl", "b.jsonl"]
    with pytest.raises(ScoreTableError, match=r"^b\.jsonl:7: duplicate .*again at line 3$"):
        ScoreTable.from_frame(frame, source="2 files", lines=[4, 5, 7, 3], sources=same)
    frame.loc[1, "score"] = 5.0  # out of AP's range: named at its file and line
    with pytest.raises(ScoreTableError, match=r"^a\.jsonl:5: score 5(\.0)? of system 'a'"):
        ScoreTable.from_frame(frame.iloc[:3], source="2 files", measure="AP", lines=[4, 5, 7],
                              sources=files[:3])  # fmt: skip
    with pytest.raises(OptionError, match="sources has 2 entries for 4 rows"):
        ScoreTable.from_frame(frame, sources=files[:2])
