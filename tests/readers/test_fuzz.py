"""Fuzzing the readers: any input either loads into a valid table or raises BayesIRError.

Every reader and format gets arbitrary bytes (plain, gzipped, with a byte-order mark,
CRLF line ends or Latin-1 bytes), table-like text, run-shaped files, line files and
arbitrary small tables in memory (tidy and wide); each returns a valid
:class:`ScoreTable` or raises a :class:`BayesIRError`, never another exception, and never
changes its input. Each property runs twice: a quick profile in the default suite
(``BAYES_IR_FUZZ_EXAMPLES``, default 60) and a long one marked slow
(``BAYES_IR_FUZZ_SLOW_EXAMPLES``, default 500).
"""

from __future__ import annotations

import gzip
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayes_ir.errors import BayesIRError
from bayes_ir.readers import read_scores
from bayes_ir.table import COLUMNS, ScoreTable

FORMATS = [None, "tidy", "wide", "trec_eval", "lines", "run"]
SUFFIXES = [".txt", ".csv", ".tsv", ".parquet", ".gz"]


def _settings(variable: str, default: int) -> settings:
    return settings(
        max_examples=int(os.environ.get(variable, default)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )


QUICK = _settings("BAYES_IR_FUZZ_EXAMPLES", 60)
LONG = _settings("BAYES_IR_FUZZ_SLOW_EXAMPLES", 500)


def both_profiles(**strategies):
    """Turn one property into a quick test and a long test marked slow."""

    def wrap(body):
        return QUICK(given(**strategies)(body)), pytest.mark.slow(LONG(given(**strategies)(body)))

    return wrap


TOKENS = st.sampled_from(
    [
        "system",
        "topic",
        "score",
        "measure",
        "collection",
        "run",
        "qid",
        "topic_id",
        "map",
        "P_10",
        "all",
        "runid",
        "Q0",
        "0",
        "1",
        "2",
        "-1",
        "0.5",
        "1e-4",
        "1.5",
        "nan",
        "inf",
        "",
        " ",
        "a",
        "b",
        "t_1",
        '"',
        '"a,b"',
        "x y",
        "nDCG@10",
        "é",
    ]
)
SEPARATORS = st.sampled_from([",", "\t", " ", ";"])


@st.composite
def table_like_text(draw) -> str:
    sep = draw(SEPARATORS)
    rows = draw(st.lists(st.lists(TOKENS, min_size=1, max_size=6), min_size=0, max_size=8))
    return "\n".join(sep.join(r) for r in rows) + draw(st.sampled_from(["", "\n", "\r\n"]))


def _valid(table: ScoreTable) -> None:
    assert isinstance(table, ScoreTable)
    assert list(table.data.columns) == list(COLUMNS)
    assert len(table.data) > 0
    assert np.isfinite(table.data["score"].to_numpy()).all()
    labels = ["collection", "measure", "system", "topic"]
    assert not table.data.duplicated(labels).any()
    for col in labels:
        assert (table.data[col].str.strip() == table.data[col]).all()
        assert (table.data[col] != "").all()
    key = table.data[labels].astype(object)
    assert key.equals(key.sort_values(labels, kind="stable"))


def _read(paths, fmt, **options) -> ScoreTable | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = read_scores(paths, format=fmt, **options)
    except BayesIRError:
        return None
    _valid(table)
    return table


def _attempt(data: bytes, fmt: str | None, suffix: str = ".txt", **options) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"input{suffix}"
        path.write_bytes(data)
        if fmt == "run" and "qrels" not in options:
            options = {**options, "qrels": path, "measure": "AP"}
        _read(path, fmt, **options)
        assert path.read_bytes() == data  # never modified


def _encoded(text: str, variant: str) -> bytes:
    raw = text.encode("utf-8")
    if variant == "crlf":
        return raw.replace(b"\n", b"\r\n")
    if variant == "bom":
        return b"\xef\xbb\xbf" + raw
    if variant == "gzip":
        return gzip.compress(raw)
    if variant == "latin1":
        return text.encode("latin-1", errors="replace")
    return raw


@both_profiles(
    data=st.binary(max_size=300), fmt=st.sampled_from(FORMATS), suffix=st.sampled_from(SUFFIXES)
)
def _random_bytes(data, fmt, suffix):
    _attempt(data, fmt, suffix)


test_random_bytes, test_random_bytes_long = _random_bytes


@both_profiles(
    text=table_like_text(),
    fmt=st.sampled_from(FORMATS),
    missing=st.sampled_from(["error", "keep", "intersect"]),
    variant=st.sampled_from(["plain", "crlf", "bom", "gzip", "latin1"]),
)
def _table_like_text(text, fmt, missing, variant):
    _attempt(_encoded(text, variant), fmt, missing=missing)


test_table_like_text, test_table_like_text_long = _table_like_text


@both_profiles(
    text=table_like_text(),
    qrels=table_like_text(),
    measure=st.sampled_from(["AP", "P@1", "P_5", "nDCG@10", "recip_rank", "ndcg_cut_3"]),
)
def _runs_and_qrels(text, qrels, measure):
    with tempfile.TemporaryDirectory() as tmp:
        qpath = Path(tmp) / "qrels.txt"
        qpath.write_text(qrels, encoding="utf-8")
        _attempt(text.encode("utf-8"), "run", qrels=qpath, measure=measure)
        _attempt(text.encode("utf-8"), "run", qrels=Path(tmp) / "absent.txt", measure="P@1")


test_runs_and_qrels, test_runs_and_qrels_long = _runs_and_qrels


RUN_LINE = st.builds(
    "{} Q0 {} {} {} {}".format,
    st.sampled_from(["1", "2", "3"]),
    st.sampled_from(["d1", "d2", "d3", "d4"]),
    st.integers(0, 5),
    st.sampled_from(["1", "0.5", "-2", "nan", "x"]),
    st.sampled_from(["r1", "r2"]),
)
QRELS_LINE = st.builds(
    "{} 0 {} {}".format,
    st.sampled_from(["1", "2", "4"]),
    st.sampled_from(["d1", "d2", "d3", "d4"]),
    st.sampled_from(["0", "1", "2", "-1", "x"]),
)


@both_profiles(
    run=st.lists(RUN_LINE, max_size=12),
    qrels=st.lists(QRELS_LINE, max_size=8),
    split=st.booleans(),
)
def _run_shaped_lines(run, qrels, split):
    """Run files like real ones: several tags, partial overlap, bad scores and grades."""
    with tempfile.TemporaryDirectory() as tmp:
        qpath = Path(tmp) / "qrels.txt"
        qpath.write_text("\n".join(qrels) + "\n", encoding="utf-8")
        parts = [run[: len(run) // 2], run[len(run) // 2 :]] if split else [run]
        paths = []
        for k, lines in enumerate(parts):
            paths.append(Path(tmp) / f"run{k}.txt")
            paths[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
        _read(paths, "run", qrels=qpath, measure=["P@1", "RR"])


test_run_shaped_lines, test_run_shaped_lines_long = _run_shaped_lines


@both_profiles(
    files=st.lists(
        st.lists(st.sampled_from(["0.5", "1", "x", "", "nan", "0", "2"]), max_size=5),
        min_size=1,
        max_size=3,
    ),
    measure=st.sampled_from([None, "accuracy", "P_10"]),
)
def _line_files(files, measure):
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, lines in enumerate(files):
            folder = Path(tmp) / f"sys{k}" / "task"
            folder.mkdir(parents=True)
            paths.append(folder / "eval_accuracy.txt")
            paths[-1].write_text("\n".join(lines), encoding="utf-8")
        _read(paths, "lines", measure=measure)


test_line_files, test_line_files_long = _line_files


CELLS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-3, 3),
    st.text(max_size=4),
    st.none(),
    st.booleans(),
)
COLUMN_NAMES = st.sampled_from(
    ["system", "topic", "score", "measure", "collection", "qid", "topic_id", "run", "value",
     "a", "b", "id", "Score", " system ", 0, 1.5]
)  # fmt: skip


@both_profiles(
    columns=st.lists(COLUMN_NAMES, min_size=1, max_size=5),
    rows=st.integers(0, 5),
    data=st.data(),
    measure=st.sampled_from([None, "AP", "P_10", "score", "nDCG@10"]),
    missing=st.sampled_from(["error", "keep", "intersect"]),
)
def _frames_in_memory(columns, rows, data, measure, missing):
    """Arbitrary small tables in memory, tidy or wide, through read_scores."""
    cells = [data.draw(st.lists(CELLS, min_size=rows, max_size=rows)) for _ in columns]
    frame = pd.DataFrame({i: pd.Series(c, dtype=object) for i, c in enumerate(cells)})
    frame.columns = columns
    _read(frame, None, measure=measure, missing=missing)


test_frames_in_memory, test_frames_in_memory_long = _frames_in_memory


@QUICK
@given(
    values=st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4)),
        min_size=1,
        max_size=6,
    )
)
def test_from_frame_any_scores(values):
    frame = pd.DataFrame(
        {
            "system": ["s"] * len(values),
            "topic": [str(i) for i in range(len(values))],
            "score": values,
        }
    )
    try:
        table = ScoreTable.from_frame(frame, measure="AP")
    except BayesIRError:
        return
    _valid(table)
