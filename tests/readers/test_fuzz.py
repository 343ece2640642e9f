"""Fuzzing the readers: any input either loads into a valid table or raises BayesIRError.

Set ``BAYES_IR_FUZZ_EXAMPLES`` (default 60 per test) for a longer local run.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayes_ir.errors import BayesIRError
from bayes_ir.readers import read_scores
from bayes_ir.table import COLUMNS, ScoreTable

FORMATS = [None, "tidy", "wide", "trec_eval", "lines"]
SETTINGS = settings(
    max_examples=int(os.environ.get("BAYES_IR_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)

TOKENS = st.sampled_from(
    [
        "system",
        "topic",
        "score",
        "measure",
        "collection",
        "run",
        "qid",
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
        "a",
        "b",
        "t_1",
        '"',
        "x y",
        "nDCG@10",
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
    assert not table.data.duplicated(["collection", "measure", "system", "topic"]).any()


def _attempt(data: bytes, fmt: str | None, **options) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.txt"
        path.write_bytes(data)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                table = read_scores(path, format=fmt, **options)
        except BayesIRError:
            return
        assert path.read_bytes() == data  # never modified
        _valid(table)


@SETTINGS
@given(data=st.binary(max_size=300), fmt=st.sampled_from(FORMATS))
def test_random_bytes(data, fmt):
    _attempt(data, fmt)


@SETTINGS
@given(
    text=table_like_text(), fmt=st.sampled_from(FORMATS), missing=st.sampled_from(["error", "keep"])
)
def test_table_like_text(text, fmt, missing):
    _attempt(text.encode("utf-8"), fmt, missing=missing)


@SETTINGS
@given(text=table_like_text(), qrels=table_like_text())
def test_runs_and_qrels(text, qrels):
    with tempfile.TemporaryDirectory() as tmp:
        qpath = Path(tmp) / "qrels.txt"
        qpath.write_text(qrels, encoding="utf-8")
        _attempt(text.encode("utf-8"), "run", qrels=qpath, measure="AP")
        _attempt(text.encode("utf-8"), "run", qrels=Path(tmp) / "absent.txt", measure="P@1")


@SETTINGS
@given(
    values=st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4)),
        min_size=1,
        max_size=6,
    )
)
def test_from_frame_any_scores(values):
    import pandas as pd

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
