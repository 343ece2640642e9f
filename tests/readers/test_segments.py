"""Segments of topics and folders per collection, read with clear errors."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import OptionError, ScoreTableError
from bayes_ir.readers import read_collections, read_segments, segments_from_pattern


def test_two_columns_with_or_without_a_header(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("topic,segment\n101,nav\n102,info\n")
    assert read_segments(a) == {"101": "nav", "102": "info"}
    b = tmp_path / "b.tsv"
    b.write_text("101\tnav\n102\tinfo\n")
    assert read_segments(b) == {"101": "nav", "102": "info"}
    c = tmp_path / "c.csv.gz"
    c.write_bytes(gzip.compress(b"qid,segment\n7,x\n"))
    assert read_segments(c) == {"7": "x"}


def test_a_tidy_score_file_with_a_segment_column(tmp_path):
    path = tmp_path / "scores.csv"
    pd.DataFrame({"system": ["a", "b", "a", "b"], "topic": ["1", "1", "2", "2"],
                  "score": [0.1, 0.2, 0.3, 0.4], "segment": ["s", "s", "l", "l"]}).to_csv(
        path, index=False
    )  # fmt: skip
    assert read_segments(path) == {"1": "s", "2": "l"}


def test_bad_segment_files_name_the_line(tmp_path):
    two = tmp_path / "two.csv"
    two.write_text("topic,segment\n1,a\n1,b\n")
    with pytest.raises(ScoreTableError, match=r"two.csv:3: topic '1' is in two segments"):
        read_segments(two)
    three = tmp_path / "three.csv"
    three.write_text("1,a,x\n")
    with pytest.raises(ScoreTableError, match="two columns"):
        read_segments(three)
    empty = tmp_path / "empty.csv"
    empty.write_text("topic,segment\n1,\n")
    with pytest.raises(ScoreTableError, match="empty.csv:2: empty topic or segment"):
        read_segments(empty)


def test_a_pattern_on_the_topic_ids():
    assert segments_from_pattern(["106_1", "106_2", "107_1"], r"re:^(\d+)_") == {
        "106_1": "106", "106_2": "106", "107_1": "107"}  # fmt: skip
    assert read_segments("re:^.", topics=["ab", "cd"]) == {"ab": "a", "cd": "c"}
    with pytest.raises(OptionError, match="does not match topic 'x1'"):
        segments_from_pattern(["x1"], r"re:^\d")
    with pytest.raises(OptionError, match="not a regular expression"):
        segments_from_pattern(["1"], "re:(")


def test_a_folder_per_collection(tmp_path):
    for name in ("trec-covid", "nfcorpus"):
        (tmp_path / name).mkdir()
        pd.DataFrame({"system": ["a", "b"] * 2, "topic": ["1", "1", "2", "2"],
                      "score": np.linspace(0.1, 0.4, 4)}).to_csv(tmp_path / name / "s.csv",
                                                                index=False)  # fmt: skip
    (tmp_path / ".hidden").mkdir()
    table = read_collections(tmp_path)
    assert table.collections == ("nfcorpus", "trec-covid") and len(table) == 8
    with pytest.raises(ScoreTableError, match="holds no folder"):
        read_collections(tmp_path / "nfcorpus")
