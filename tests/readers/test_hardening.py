"""Issue 20, reading side: measure spellings, wide id columns, runs vs qrels, odd inputs.

Every case either loads the right table (checked against the file's own numbers) or
raises a :class:`~bayes_ir.errors.BayesIRError` subclass naming the place.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import warnings

import pandas as pd
import pytest

from bayes_ir.errors import DataWarning, OptionError, ScoreTableError
from bayes_ir.readers import read_scores
from bayes_ir.readers._io import read_delimited
from bayes_ir.table import ScoreTable

#: (spelling in the file, canonical label): trec_eval names and ir_measures strings.
SPELLINGS = [
    ("P_10", "P@10"),
    ("ndcg_cut_10", "nDCG@10"),
    ("map", "AP"),
    ("recip_rank", "RR"),
    ("Rprec", "Rprec"),
    ("recall_1000", "R@1000"),
    ("bpref", "Bpref"),
    ("ndcg", "nDCG"),
    ("P@10", "P@10"),
]


def tidy_text(measure: str, bad: float | None = None) -> str:
    rows = ["system,topic,measure,score"]
    for system in ("a", "b"):
        for topic in ("1", "2", "3"):
            rows.append(f"{system},{topic},{measure},0.25")
    if bad is not None:
        rows[-1] = f"b,3,{measure},{bad}"
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize(("spelled", "label"), SPELLINGS)
def test_range_check_fires_for_every_spelling(tmp_path, spelled, label):
    path = tmp_path / "scores.csv"
    path.write_text(tidy_text(spelled, bad=1.5), encoding="utf-8")
    written = "" if spelled == label else f" \\(written '{spelled}'\\)"
    with pytest.raises(
        ScoreTableError,
        match=rf"scores\.csv:7: score 1\.5 .*range \[0, 1\] of measure '{label}'{written}",
    ):
        read_scores(path)
    frame = pd.DataFrame({"system": ["a", "b"], "topic": ["1", "1"], "score": [0.5, 1.5]})
    with pytest.raises(ScoreTableError, match="outside the range"):
        ScoreTable.from_frame(frame, measure=spelled)


@pytest.mark.parametrize(("spelled", "label"), SPELLINGS)
def test_label_is_canonical_and_the_spelling_is_noted(tmp_path, spelled, label):
    path = tmp_path / "scores.csv"
    path.write_text(tidy_text(spelled), encoding="utf-8")
    table = read_scores(path)
    assert table.measures == (label,)
    noted = [n for n in table.notes if spelled in n]
    assert bool(noted) == (spelled != label)
    # every spelling selects the same block
    assert table.select(measure=spelled).measures == (label,)
    assert read_scores(path, measure=spelled).measures == (label,)


@pytest.mark.parametrize(("spelled", "label"), SPELLINGS)
def test_wide_and_trec_eval_labels_match(tmp_path, spelled, label):
    wide = tmp_path / "wide.csv"
    wide.write_text("topic,a,b\n1,0.1,0.2\n2,0.3,1.5\n", encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"wide\.csv:3: score 1\.5"):
        read_scores(wide, measure=spelled)
    wide.write_text("topic,a,b\n1,0.1,0.2\n2,0.3,0.4\n", encoding="utf-8")
    assert read_scores(wide, measure=spelled).measures == (label,)


# ---------------------------------------------------------------------- odd inputs
FORMATS = [None, "tidy", "wide", "trec_eval", "lines", "run"]


def _refused_quickly(path, fmt, match):
    """read_scores raises within seconds (a FIFO or /dev/zero must never block or fill memory)."""
    outcome: list[BaseException | None] = []

    def attempt():
        try:
            read_scores(path, format=fmt, qrels=path if fmt == "run" else None, measure="AP")
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert outcome, f"read_scores({path}, format={fmt}) hangs"
    assert isinstance(outcome[0], ScoreTableError), outcome[0]
    assert str(path) in str(outcome[0]) and match in str(outcome[0])


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.parametrize("fmt", FORMATS)
def test_device_refused(fmt):
    _refused_quickly("/dev/zero", fmt, "character device, not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
@pytest.mark.parametrize("fmt", FORMATS)
def test_fifo_refused_without_blocking(tmp_path, fmt):
    fifo = tmp_path / "scores.csv"
    os.mkfifo(fifo)
    _refused_quickly(fifo, fmt, "FIFO")


@pytest.mark.skipif(sys.platform == "win32", reason="no Unix sockets")
def test_socket_refused(tmp_path):
    path = tmp_path / "s.csv"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        _refused_quickly(path, None, "socket")


def test_folder_and_missing_file_with_close_matches(tmp_path):
    (tmp_path / "scores_ap.csv").write_text("topic,a\n1,0.5\n", encoding="utf-8")
    folder = read_scores(tmp_path)  # a folder stands for the files in it
    assert folder.systems == ("a",) and f"{tmp_path}: read 1 file" in folder.notes
    with pytest.raises(ScoreTableError, match=r"scores_pa\.csv: file not found; close .*scores_ap"):
        read_scores(tmp_path / "scores_pa.csv")
    with pytest.raises(ScoreTableError, match=r"nothing\.csv: file not found$"):
        read_scores(tmp_path / "nothing.csv")


@pytest.mark.parametrize(
    ("given", "match"),
    [
        (None, "got NoneType"),
        ([None], "expected a file name, got NoneType"),
        (["a.csv", None], "input 2 of 2 is NoneType"),
        (["a.csv", ""], "input 2 of 2 is ''"),
        (3, "got int"),
        (b"a.csv", "got bytes"),
    ],
)
def test_arguments_that_are_not_files(given, match):
    with pytest.raises(OptionError, match=match):
        read_scores(given)


def test_empty_list():
    with pytest.raises(ScoreTableError, match="no input files given"):
        read_scores([])


@pytest.mark.parametrize("fmt", [None, "tidy", "wide", "trec_eval", "lines"])
def test_latin1_names_file_and_line(tmp_path, fmt):
    path = tmp_path / "latin.csv"
    path.write_bytes("system,topic,score\na,1,0.5\nb,1,0.25\nnaïve,1,0.5\n".encode("latin-1"))
    with pytest.raises(ScoreTableError, match=r"latin\.csv:4: not UTF-8 text \(byte 0xef"):
        read_scores(path, format=fmt)


def test_latin1_after_the_sniffed_head(tmp_path):
    path = tmp_path / "long.csv"
    rows = "".join(f"a,{t},0.5\nb,{t},0.25\n" for t in range(1, 6001))
    path.write_bytes(("system,topic,score\n" + rows).encode() + "c\xe9,1,0.5\n".encode("latin-1"))
    with pytest.raises(ScoreTableError, match=r"long\.csv:12002: not UTF-8"):
        read_scores(path)


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_bom_and_crlf_read_like_plain_text(tmp_path, bom, newline):
    lines = [b"system,topic,score", b"a,1,0.5", b"a,2,0.25", b"b,1,0.75", b"b,2,1"]
    path = tmp_path / "s.csv"
    path.write_bytes(bom + newline.join(lines) + newline)
    table = read_scores(path)
    assert table.systems == ("a", "b")
    assert table.wide().loc["2", "b"] == 1.0
    assert table.data["score"].tolist() == [0.5, 0.25, 0.75, 1.0]
    wide = tmp_path / "w.csv"
    wide.write_bytes(bom + newline.join([b"topic,a,b", b"1,0.5,0.75", b"2,0.25,1"]) + newline)
    assert read_scores(wide).wide().equals(table.wide())


# ---------------------------------------------------------------------- wide id columns
@pytest.mark.parametrize("name", ["topic_id", "QID", "query_id", "Query", "topic", "id", "ID"])
def test_wide_id_column_is_the_topic_not_a_system(tmp_path, name):
    path = tmp_path / "w.csv"
    path.write_text(f"a,{name},b\n0.1,401,0.2\n0.3,402,0.4\n", encoding="utf-8")
    table = read_scores(path)
    assert table.systems == ("a", "b")
    assert table.topics == ("401", "402")
    assert table.wide().loc["402", "b"] == 0.4
    assert f"topic ids from column {name!r}" in table.notes


def test_wide_text_first_column_is_the_topic(tmp_path):
    path = tmp_path / "w.tsv"
    path.write_text("name\ta\tb\nq-one\t0.1\t0.2\nq-two\t0.3\t0.4\n", encoding="utf-8")
    table = read_scores(path)
    assert table.systems == ("a", "b") and table.topics == ("q-one", "q-two")
    assert any("first column 'name'" in n for n in table.notes)
    # a typo in a score column keeps the column a system: the error names the cell
    path.write_text("a\tb\n0.1\t0.2\n0.3x\t0.4\n0.5\t0.6\n", encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"w\.tsv:3: score '0\.3x' of system 'a'"):
        read_scores(path)


def test_tidy_topic_id_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("system,topic_id,score\na,1,0.5\nb,1,0.25\n", encoding="utf-8")
    assert read_scores(path).topics == ("1",)


def test_wide_frame_in_memory():
    frame = pd.DataFrame({"topic_id": ["q1", "q2"], "a": [0.1, 0.2], "b": [0.3, None]})
    table = read_scores(frame, measure="P_10", missing="keep")
    assert table.systems == ("a", "b") and table.measures == ("P@10",)
    assert table.wide().loc["q1", "b"] == 0.3 and pd.isna(table.wide().loc["q2", "b"])
    indexed = read_scores(pd.DataFrame({"a": [0.5], "b": [1.0]}, index=["t9"]), measure="AP")
    assert indexed.topics == ("t9",) and "topic ids from the index" in indexed.notes
    with pytest.raises(ScoreTableError, match=r"score 1\.5 .* measure 'AP'"):
        read_scores(pd.DataFrame({"a": [0.5], "b": [1.5]}), measure="map")
    with pytest.raises(OptionError, match="does not take the option"):
        read_scores(pd.DataFrame({"a": [0.5]}), qrels="q.txt")


# ---------------------------------------------------------------------- runs and qrels
QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n2 0 d4 0\n"


def test_run_and_qrels_with_no_query_in_common(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS, encoding="utf-8")
    run = tmp_path / "sys.run"
    run.write_text("7 Q0 d1 1 2.0 sys\n8 Q0 d3 1 1.0 sys\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(
            ScoreTableError, match=r"sys\.run: .*qrels\.txt have no query in common"
        ):
            read_scores(run, qrels=qrels, measure="P@1")


def test_partial_overlap_counted_in_the_notes(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS + "3 0 d5 1\n", encoding="utf-8")
    run = tmp_path / "sys.run"
    run.write_text("1 Q0 d1 1 2.0 sys\n9 Q0 d3 1 1.0 sys\n", encoding="utf-8")
    with pytest.warns(DataWarning, match="1 retrieved query has no judgments"):
        table = read_scores(run, qrels=qrels, measure="P_1")
    notes = " ".join(table.notes)
    assert "retrieved 1 of 3 judged queries" in notes and "did not retrieve 2 judged" in notes
    # closed form: d1 relevant at rank 1 -> P@1 = 1; queries 2, 3 unretrieved -> 0
    assert table.wide()["sys"].to_dict() == {"1": 1.0, "2": 0.0, "3": 0.0}
    assert table.measures == ("P@1",)


def test_several_runids_in_one_file_are_several_systems(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS, encoding="utf-8")
    both = tmp_path / "both.run"
    good = "1 Q0 d1 1 2.0 good\n1 Q0 d2 2 1.0 good\n2 Q0 d3 1 1.0 good\n"
    bad = "1 Q0 d2 1 2.0 bad\n1 Q0 d1 2 1.0 bad\n2 Q0 d4 1 1.0 bad\n"
    both.write_text(good + bad, encoding="utf-8")
    table = read_scores(both, qrels=qrels, measure=["P@1", "RR"])
    assert table.systems == ("bad", "good")
    p1 = table.select(measure="P@1").wide()
    rr = table.select(measure="RR").wide()
    # closed forms: good puts a relevant document first (P@1 = RR = 1); bad puts it second
    # on query 1 (P@1 = 0, RR = 1/2) and retrieves no relevant document on query 2
    assert p1["good"].tolist() == [1.0, 1.0] and p1["bad"].tolist() == [0.0, 0.0]
    assert rr["good"].tolist() == [1.0, 1.0] and rr["bad"].tolist() == [0.5, 0.0]
    assert any("run tag 'good' read as system 'good' (one of 2 runs)" in n for n in table.notes)
    # the same runs in two files give the same table
    (tmp_path / "a.run").write_text(good, encoding="utf-8")
    (tmp_path / "b.run").write_text(bad, encoding="utf-8")
    apart = read_scores([tmp_path / "a.run", tmp_path / "b.run"], qrels=qrels, measure="RR")
    assert apart.wide().equals(rr)
    with pytest.raises(ScoreTableError, match="holds 2 runs .* systems= gives it one name"):
        read_scores(both, qrels=qrels, measure="RR", systems=["x"])


def test_runid_different_from_file_name_is_noted_and_shared_tags_named_by_file(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS, encoding="utf-8")
    one = tmp_path / "first.run"
    one.write_text("1 Q0 d1 1 2.0 same\n2 Q0 d3 1 1.0 same\n", encoding="utf-8")
    table = read_scores(one, qrels=qrels, measure="RR")
    assert table.systems == ("same",)
    assert any("named 'same' after the run tag" in n for n in table.notes)
    two = tmp_path / "second.run"
    two.write_text("1 Q0 d2 1 2.0 same\n2 Q0 d3 1 1.0 same\n", encoding="utf-8")
    shared = read_scores([one, two], qrels=qrels, measure="RR")  # pyserini tags all 'Anserini'
    assert shared.systems == ("first", "second")
    assert shared.wide()["second"].tolist() == [0.0, 1.0]
    assert any("run tag 'same' is on 2 run files" in n for n in shared.notes)
    named = read_scores([one, two], qrels=qrels, measure="RR", systems=["a", "b"])
    assert named.wide()["b"].tolist() == [0.0, 1.0]


# ---------------------------------------------------------------------- fast and exact paths
CLEAN = (
    "collection,measure,system,topic,score\nc,AP,b,2,0.5\nc,AP,a,10,0.25\nc,AP,a,2,1\nc,AP,b,10,0\n"
)


@pytest.mark.parametrize(
    "text",
    [
        CLEAN,
        CLEAN.replace("\n", "\r\n"),
        "\ufeff" + CLEAN,
        CLEAN.replace(",", "\t"),
        CLEAN.replace("c,AP,b,2", '"c","AP"," b ","2"'),
        CLEAN.rstrip("\n"),
        CLEAN.replace("\nc,AP,a,10", "\n\nc,AP,a,10"),  # a blank line: exact path
        CLEAN.replace("c,AP,b,2", 'c,AP,"b\nx",2'),  # a quoted line break: exact path
    ],
)
def test_pyarrow_path_equals_the_line_by_line_reader(tmp_path, text):
    # reference: the exact csv-module reader (numeric=() never takes the pyarrow path)
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode("utf-8"))
    fast = read_delimited(path, numeric={"score"})
    exact = read_delimited(path)
    assert list(fast.columns) == list(exact.columns)
    assert fast.index.tolist() == exact.index.tolist()  # file line numbers
    for col in exact.columns:
        if col == "score":
            assert fast[col].astype(float).tolist() == exact[col].astype(float).tolist()
        else:
            assert fast[col].astype(str).tolist() == exact[col].tolist()
    table = read_scores(path, missing="keep")
    assert table.data.equals(ScoreTable.from_frame(exact, missing="keep", source=str(path)).data)


def test_clean_csv_takes_the_pyarrow_path(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.csv"
    path.write_text(CLEAN, encoding="utf-8")
    fast = read_delimited(path, numeric={"score"})
    assert isinstance(fast["system"].dtype, pd.CategoricalDtype)
    assert fast["score"].dtype == float
    table = read_scores(path)
    assert table.data["system"].tolist() == ["a", "a", "b", "b"]
    assert table.data["topic"].tolist() == ["10", "2", "10", "2"]  # sorted as text
    assert table.data["score"].tolist() == [0.25, 1.0, 0.0, 0.5]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (CLEAN + "c,AP,a,3,1.5\n", r"t\.csv:6: score 1\.5 of system 'a', topic '3' is outside"),
        (CLEAN + "c,AP,a,2,0.5\n", r"t\.csv:4: duplicate score .* again at line 6"),
        (CLEAN + "c,AP,a,3,x\n", r"t\.csv:6: score 'x' of system 'a'"),
        (CLEAN + "c,AP,a,3\n", r"t\.csv:6: wrong number of columns"),
        (CLEAN + "c,AP, ,3,0.5\n", r"t\.csv:6: empty system name"),
        (CLEAN + "c,AP,a,3,nan\n", r"t\.csv:6: score .*nan.* NaN or infinite"),
        (CLEAN + "c,AP,a,3,\n", r"t\.csv:6: score of system 'a', topic '3' is not a number"),
    ],
)
def test_errors_name_the_line_on_both_paths(tmp_path, text, match):
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScoreTableError, match=match):
        read_scores(path)


def test_missing_cells_detected_from_codes(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(CLEAN + "d,AP,a,1,0.5\nd,AP,b,1,0.5\nd,AP,b,3,0.5\n", encoding="utf-8")
    with pytest.raises(ScoreTableError, match="system 'a' has no score for 1 topic.* 'd'"):
        read_scores(path)
    kept = read_scores(path, missing="keep")
    assert kept.is_complete is False
    assert "collection 'd', measure 'AP': 2 topics x 2 systems, 1 missing cells" in kept.summary()


def test_file_name_does_not_choose_the_compression(tmp_path):
    plain = tmp_path / "scores.gz"
    plain.write_text(CLEAN, encoding="utf-8")
    assert read_scores(plain).data["score"].tolist() == [0.25, 1.0, 0.0, 0.5]
    junk = tmp_path / "junk.gz"
    junk.write_bytes(b"\x01\t")
    with pytest.raises(ScoreTableError, match=r"junk\.gz: "):
        read_scores(junk, format="tidy")


def test_trec_eval_file_range_checked_under_its_ir_measures_name(tmp_path):
    path = tmp_path / "run.eval"
    path.write_text("P_10\t1\t0.3\nP_10\t2\t1.5\nrunid\tall\tr\n", encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"run\.eval:2: score 1\.5 .* measure 'P@10'"):
        read_scores(path)
    path.write_text("P_10\t1\t0.3\nP_10\t2\t0.5\nrunid\tall\tr\n", encoding="utf-8")
    assert read_scores(path, measure="P_10").measures == ("P@10",)


def test_unknown_option_named_and_readers_with_any_option_get_them(tmp_path):
    from bayes_ir.readers import READERS, Reader, register_reader

    path = tmp_path / "t.csv"
    path.write_text(CLEAN, encoding="utf-8")
    with pytest.raises(OptionError, match="format 'tidy' does not take the option.* systems"):
        read_scores(path, systems=["a"])
    seen = {}

    def read_any(path, **options):
        seen.update(options)
        return read_scores(path, format="tidy")

    register_reader(Reader("any_options", read_any, lambda path: False, "test"))
    try:
        read_scores(path, format="any_options", flavour="x")
    finally:
        del READERS["any_options"]
    assert seen == {"flavour": "x"}


WIDE = "topic,a,b\n301,0.5,0.25\n302,1,0\n"


@pytest.mark.parametrize(
    "text",
    [
        WIDE,
        WIDE.replace("\n", "\r\n"),
        '"topic","a","b"\n301,0.5,0.25\n302,1,0\n',
        "a\tb\n0.5\t0.25\n1\t0\n",
        "name,a,b\nq1,0.5,0.25\nq2,1,0\n",
        WIDE.replace("302,1,0", "302,1,"),  # an empty cell: exact path, a missing score
        WIDE.replace("301,0.5", "301,nan"),  # NaN in a file stays an error
    ],
)
def test_wide_pyarrow_path_equals_the_line_by_line_reader(tmp_path, text):
    from bayes_ir.readers.wide import wide_to_long

    path = tmp_path / "w.csv"
    path.write_text(text, encoding="utf-8")
    exact = read_delimited(path)  # reference: the csv-module reader
    long, lines, notes = wide_to_long(exact, source=str(path))
    try:
        expected = ScoreTable.from_frame(
            long, missing="keep", source=str(path), lines=lines, notes=notes, collection="w"
        )
    except ScoreTableError as exc:
        with pytest.raises(ScoreTableError, match=str(exc).replace("(", r"\(").split(" is ")[0]):
            read_scores(path, missing="keep", format="wide")
        return
    table = read_scores(path, missing="keep", format="wide")
    assert table.data.equals(expected.data)
    assert table.notes == expected.notes
