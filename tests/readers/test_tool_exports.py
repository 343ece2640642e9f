"""Files as other tools write them (issue 32): pandas' index column, Excel's CSV with a
decimal comma, CR-only line ends, runs that share pyserini's or PyTerrier's run tag, and
gzip data that would not fit in memory. Each is read right (means equal numpy's on the
same numbers) or refused naming the file and what to do."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers import read_scores

SCORES = np.round(np.random.default_rng(3).uniform(0.05, 0.95, (6, 3)), 4)
SYSTEMS = ["bm25", "dense", "fusion"]
TOPICS = ["401", "402", "403", "404", "405", "406"]


def _means(table) -> dict[str, float]:
    return table.system_means().set_index("system")["mean"].to_dict()


EXPECTED = dict(zip(SYSTEMS, SCORES.mean(axis=0), strict=True))


def _write(tmp_path, name: str, data: str | bytes):
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8", newline="")
    else:
        path.write_bytes(data)
    return path


@pytest.mark.parametrize("layout", ["range", "reread", "reset", "topics", "named"])
def test_pandas_to_csv_keeps_the_index_and_it_is_not_a_system(tmp_path, layout):
    frame = pd.DataFrame(SCORES, columns=SYSTEMS)
    if layout in ("topics", "named"):
        frame.index = [int(t) for t in TOPICS]
        frame.index.name = "topic" if layout == "named" else None
    elif layout == "reset":
        frame.insert(0, "qid", TOPICS)
    text = frame.to_csv()
    if layout == "reread":  # read without index_col, written again: "Unnamed: 0"
        text = pd.read_csv(io.StringIO(text)).to_csv(index=False)
    table = read_scores(_write(tmp_path, "w.csv", text))
    assert _means(table) == pytest.approx(EXPECTED, abs=1e-12)
    if layout in ("topics", "named", "reset"):
        assert table.topics == tuple(TOPICS)
    if layout != "named":
        assert any("pandas" in note for note in table.notes), table.notes


def test_pandas_index_of_a_tidy_file_is_left_out_with_a_note(tmp_path):
    rows = [(s, t, SCORES[i, j]) for j, s in enumerate(SYSTEMS) for i, t in enumerate(TOPICS)]
    text = pd.DataFrame(rows, columns=["system", "topic", "score"]).to_csv()
    table = read_scores(_write(tmp_path, "t.csv", text))
    assert _means(table) == pytest.approx(EXPECTED, abs=1e-12)
    assert any("pandas' row index" in note for note in table.notes)


def test_unnamed_columns_with_values_are_refused_and_empty_ones_left_out(tmp_path):
    path = _write(tmp_path, "w.csv", "topic,a,,b\n1,0.1,0.2,0.3\n2,0.2,0.4,0.1\n")
    with pytest.raises(ScoreTableError, match=r"w\.csv:1: column 3 has no name .*line 2"):
        read_scores(path)
    path = _write(tmp_path, "w.csv", "topic,a,b,\n1,0.1,0.3,\n2,0.2,0.1,\n")  # Excel's ","
    table = read_scores(path)
    assert table.systems == ("a", "b")
    assert any("column 4 has no name and no value" in note for note in table.notes)
    path = _write(tmp_path, "w.csv", "topic,a,b,ghost\n1,0.1,0.3,\n2,0.2,0.1,\n")
    table = read_scores(path)
    assert table.systems == ("a", "b")
    assert any("'ghost' hold no score at all" in note for note in table.notes)


def _tidy_text(sep: str = ",", decimal: str = ".") -> str:
    lines = [sep.join(["system", "topic", "score"])]
    for j, system in enumerate(SYSTEMS):
        for i, topic in enumerate(TOPICS):
            lines.append(sep.join([system, topic, repr(float(SCORES[i, j])).replace(".", decimal)]))
    return "\r\n".join(lines) + "\r\n"


@pytest.mark.parametrize(
    "text",
    [
        _tidy_text(";", ","),
        _tidy_text(";", "."),
        "sep=;\r\n" + _tidy_text(";", ","),
        _tidy_text(",", ".").replace("\r\n", "\r"),  # classic Mac OS line ends
    ],
    ids=["semicolon-decimal-comma", "semicolon-point", "sep-line", "cr-only"],
)
def test_excel_and_old_mac_csv_are_read_right(tmp_path, text):
    table = read_scores(_write(tmp_path, "t.csv", text))
    assert _means(table) == pytest.approx(EXPECTED, abs=1e-12)


def test_a_decimal_comma_outside_semicolon_files_is_still_an_error(tmp_path):
    text = "system\ttopic\tscore\nbm25\t1\t0,5\nbm25\t2\t0.25\n"
    with pytest.raises(ScoreTableError, match=r"t\.csv:2: score '0,5'"):
        read_scores(_write(tmp_path, "t.csv", text))


def _run(tag: str, order: list[str]) -> str:
    return "".join(
        f"{q} Q0 {d} {r} {10 - r} {tag}\n" for q in ("1", "2") for r, d in enumerate(order, 1)
    )


def test_runs_that_share_a_tag_are_named_after_their_files(tmp_path):
    qrels = _write(tmp_path, "qrels.txt", "1 0 d1 1\n1 0 d2 0\n2 0 d2 1\n2 0 d3 1\n")
    folder = tmp_path / "runs"
    folder.mkdir()
    bm25 = _write(folder, "run.msmarco-passage.bm25.txt", _run("Anserini", ["d1", "d2", "d3"]))
    dense = _write(folder, "run.msmarco-passage.dense.txt", _run("Anserini", ["d3", "d2", "d1"]))
    table = read_scores([bm25, dense], qrels=qrels, measure="RR")
    assert table.systems == ("bm25", "dense")
    rr = table.wide()
    assert rr["bm25"].tolist() == [1.0, 0.5] and rr["dense"].tolist() == [1 / 3, 1.0]  # by hand
    assert any("run tag 'Anserini' is on 2 run files" in note for note in table.notes)


def test_gzip_data_larger_than_the_memory_limit_is_refused(tmp_path, monkeypatch):
    data = gzip.compress(b"system,topic,score\n" + b"a,1,0.5\n" * 400_000, mtime=0)
    path = _write(tmp_path, "t.csv.gz", data)
    monkeypatch.setenv("BAYES_IR_MEMORY_LIMIT", "1000000")  # 3.2 MB once decompressed
    with pytest.raises(ScoreTableError, match=r"t\.csv\.gz: the gzip data holds more than"):
        read_scores(path, format="tidy")
