"""The bad-input catalogue of issue 2: every case raises the package's error, naming the place.

Every test also checks that the input file is left byte-for-byte unchanged.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import (
    BayesIRError,
    DataWarning,
    InsufficientDataError,
    MeasureError,
    ScoreTableError,
)
from bayes_ir.readers import read_scores
from bayes_ir.table import ScoreTable


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check(path: Path | list[Path], error: type[BaseException], match: str, **options) -> None:
    """``read_scores`` raises ``error`` matching ``match`` and leaves the files unchanged."""
    paths = path if isinstance(path, list) else [path]
    before = [sha(p) for p in paths]
    with pytest.raises(error, match=match) as info:
        read_scores(path, **options)
    assert isinstance(info.value, BayesIRError)
    assert [sha(p) for p in paths] == before


def write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", [None, "tidy", "wide", "trec_eval", "lines"])
def test_empty_file(tmp_path, fmt):
    check(write(tmp_path / "empty.csv", ""), ScoreTableError, r"empty\.csv: .*empty", format=fmt)
    check(write(tmp_path / "blank.csv", "\n  \n"), ScoreTableError, "empty", format=fmt)


def test_header_only(tmp_path):
    check(write(tmp_path / "h.csv", "system,topic,score\n"), ScoreTableError, "no data rows")


def test_unreadable_encoding(tmp_path):
    path = write(
        tmp_path / "latin1.csv", "system,topic,score\nsyst\xe8me,1,0.5\n".encode("latin-1")
    )
    check(path, ScoreTableError, r"latin1\.csv:2: not UTF-8", format="tidy")
    check(path, ScoreTableError, "not UTF-8")  # detection fails the same way


def test_binary_and_corrupt_gzip(tmp_path):
    check(write(tmp_path / "b.csv", b"system,topic\x00,score\n"), ScoreTableError, "NUL")
    check(write(tmp_path / "g.csv", b"\x1f\x8b\x08\x00garbage"), ScoreTableError, "gzip")


def test_wrong_column_count(tmp_path):
    path = write(tmp_path / "t.csv", "system,topic,score\na,1,0.5\na,2,0.5,9\n")
    check(
        path, ScoreTableError, r"t\.csv:3: wrong number of columns: 4 field\(s\), the header has 3"
    )
    wide = write(tmp_path / "w.csv", "s1,s2\n0.1,0.2\n0.3\n")
    check(wide, ScoreTableError, r"w\.csv:3: wrong number of columns", format="wide")


def test_missing_required_columns(tmp_path):
    path = write(tmp_path / "t.csv", "system,query,points\na,1,0.5\n")
    check(path, ScoreTableError, "missing column", format="tidy")


def test_non_numeric_score(tmp_path):
    path = write(tmp_path / "t.csv", "system,topic,score\na,1,0.5\na,2,high\n")
    check(path, ScoreTableError, r"t\.csv:3: score 'high' of system 'a', topic '2' is not a number")
    wide = write(tmp_path / "w.csv", "topic,s1,s2\n1,0.1,0.2\n2,0.3,x\n")
    check(wide, ScoreTableError, r"w\.csv:3: score 'x' of system 's2', topic '2'", format="wide")


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity"])
def test_nan_and_inf(tmp_path, value):
    path = write(tmp_path / "t.csv", f"system,topic,score\na,1,0.5\na,2,{value}\n")
    check(path, ScoreTableError, r"t\.csv:3: score .* is NaN or infinite", check_range=False)


def test_nan_and_inf_in_other_formats(tmp_path):
    check(
        write(tmp_path / "e.txt", "map\t1\t0.1\nmap\t2\tnan\n"),
        ScoreTableError,
        r"e\.txt:2: map value 'nan' is not finite",
    )
    check(
        write(tmp_path / "l.txt", "1.0\ninf\n"),
        ScoreTableError,
        r"l\.txt:2: .*infinite",
        format="lines",
    )


def test_duplicate_system_topic(tmp_path):
    path = write(tmp_path / "t.csv", "system,topic,score\na,1,0.5\nb,1,0.4\na,1,0.6\n")
    check(path, ScoreTableError, r"t\.csv:2: duplicate score for system 'a', topic '1'.*line 4")
    two = [write(tmp_path / "x.txt", "map\t1\t0.1\n"), write(tmp_path / "y.txt", "map\t1\t0.2\n")]
    check(two, ScoreTableError, "duplicate score", format="trec_eval", system="same")


def test_duplicate_in_frame_names_rows():
    frame = pd.DataFrame({"system": ["a", "a"], "topic": [1, 1], "score": [0.1, 0.2]})
    with pytest.raises(ScoreTableError, match=r"<DataFrame> row 1: duplicate .* row 2"):
        ScoreTable.from_frame(frame)


def test_system_missing_topics(tmp_path):
    path = write(tmp_path / "t.csv", "system,topic,score\na,1,0.5\na,2,0.5\nb,1,0.4\n")
    check(path, ScoreTableError, r"system 'b' has no score for 1 topic.*\(e\.g\. 2\).*intersect")
    with pytest.warns(DataWarning, match="dropped 1 topic"):
        inter = read_scores(path, missing="intersect")
    assert inter.topics == ("1",) and any("dropped" in n for n in inter.notes)
    keep = read_scores(path, missing="keep")
    assert keep.topics == ("1", "2") and np.isnan(keep.wide().loc["2", "b"])
    assert not keep.is_complete and "1 missing cells" in keep.summary()
    check(path, ScoreTableError, "missing must be", missing="sometimes")


def test_score_outside_range_of_bounded_measure(tmp_path):
    path = write(tmp_path / "t.csv", "system,topic,score\na,1,0.5\na,2,1.7\n")
    check(
        path,
        ScoreTableError,
        r"t\.csv:3: score 1\.7 .* outside the range \[0, 1\] of measure 'AP'",
        measure="AP",
    )
    assert read_scores(path, measure="AP", check_range=False).data["score"].max() == 1.7
    assert read_scores(path, measure="log_loss").data["score"].max() == 1.7  # unbounded name


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("1 Q0 d1 first 1.0 run", "rank 'first' is not an integer"),
        ("1 Q0 d1 1.5 1.0 run", "rank '1.5' is not an integer"),
        ("1 Q0 d1 -1 1.0 run", "rank '-1' is negative"),
        ("1 Q0 d1 1 high run", "score 'high' is not a number"),
        ("1 Q0 d1 1 nan run", "score 'nan' is not finite"),
        ("1 Q0 d1 1", "found 4"),  # 4 fields but 'Q0' makes rank/score wrong
        ("1 Q0 d1 1 1.0 run extra", "found 7"),
        ("1 Q0 d0 1 1.0 run", "retrieved twice"),
    ],
)
def test_bad_run_lines(tmp_path, line, match):
    qrels = write(tmp_path / "qrels.txt", "1 0 d0 1\n")
    run = write(tmp_path / "bad.run", f"1 Q0 d0 1 2.0 run\n{line}\n")
    if line == "1 Q0 d1 1":
        match = "is not an integer"  # read as 'qid docid rank score': rank 'd1'
    check(run, ScoreTableError, rf"bad\.run:2: .*{match}", qrels=qrels, measure="AP")


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("1 0 d1 0.5", "grade '0.5' is not an integer"),
        ("1 0 d1 yes", "grade 'yes'"),
        ("1 0 d1", "found 3"),
        ("1 0 d0 2", "judged twice with different grades"),
    ],
)
def test_bad_qrels(tmp_path, line, match):
    qrels = write(tmp_path / "q.txt", f"1 0 d0 1\n{line}\n")
    run = write(tmp_path / "r.run", "1 Q0 d0 1 2.0 run\n")
    check(run, ScoreTableError, rf"q\.txt:2: .*{match}", qrels=qrels, measure="AP")
    assert sha(qrels) == sha(qrels)


@pytest.mark.parametrize("measure", ["nDCG@", "NotAMeasure@10", "AP(rel=", "P@ten"])
def test_unparsable_measure(tmp_path, measure):
    qrels = write(tmp_path / "q.txt", "1 0 d0 1\n")
    run = write(tmp_path / "r.run", "1 Q0 d0 1 2.0 run\n")
    check(run, MeasureError, "is not a measure ir_measures can parse", qrels=qrels, measure=measure)


def test_too_few_topics():
    table = ScoreTable.from_matrix(np.full((3, 2), 0.5), systems=["a", "b"], measure="AP")
    table.require_topics(3, method="test")
    with pytest.raises(InsufficientDataError, match="needs at least 5 topics.*has 3") as info:
        table.require_topics(5, method="the hierarchical model")
    assert isinstance(info.value, BayesIRError)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(ScoreTableError, match="file not found"):
        read_scores(tmp_path / "nope.csv")
    with pytest.raises(ScoreTableError, match="folder holds no score files"):
        read_scores(tmp_path)  # an empty folder (a folder stands for its files)
    with pytest.raises(ScoreTableError, match="no input files"):
        read_scores([])


def test_empty_names(tmp_path):
    path = write(tmp_path / "t.csv", "system,topic,score\na,1,0.5\n,2,0.5\n")
    check(path, ScoreTableError, r"t\.csv:3: empty system name")


def test_lines_with_junk(tmp_path):
    path = write(tmp_path / "l.txt", "1.0\n0.0\nabc\n")
    check(path, ScoreTableError, r"l\.txt:3: score 'abc' is not a number", format="lines")
    gap = write(tmp_path / "g.txt", "1.0\n\n0.0\n")
    check(gap, ScoreTableError, r"g\.txt:2: blank line", format="lines")


def test_trec_eval_bad_lines(tmp_path):
    check(
        write(tmp_path / "e.txt", "map\t1\t0.1\nmap\t2\n"),
        ScoreTableError,
        r"e\.txt:2: expected 3 fields",
        format="trec_eval",
    )
    check(
        write(tmp_path / "f.txt", "map\t1\t0.1\nmap\t2\tzero\n"),
        ScoreTableError,
        r"f\.txt:2: map value 'zero' is not a number",
        format="trec_eval",
    )


def test_bundled_data_untouched_by_reading():
    data = Path(__file__).resolve().parents[2] / "data"
    files = [data / "example_scores.csv", data / "example_trec_eval.txt"]
    before = [sha(p) for p in files]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        for path in files:
            read_scores(path)
    assert [sha(p) for p in files] == before


def test_utf16_and_headerless_wide(tmp_path):
    utf16 = write(tmp_path / "u.csv", "system,topic,score\na,1,0.5\n".encode("utf-16"))
    check(utf16, ScoreTableError, r"u\.csv:1: UTF-16 text")
    headerless = write(tmp_path / "m.csv", "0.1,0.2\n0.3,0.4\n")
    check(headerless, ScoreTableError, r"m\.csv:1: the first line holds numbers", format="wide")
