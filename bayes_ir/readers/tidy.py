"""Tidy long tables: one row per (system, topic) with a score, CSV, TSV or Parquet."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import check_input, delimited_head, read_delimited
from bayes_ir.readers._measures import keep_measures
from bayes_ir.table import ScoreTable
from bayes_ir.table_checks import Missing, column_name, normalise_columns

_TOPIC = {"topic", "topic_id", "query_id", "qid", "query", "sample"}
_SYSTEM = {"system", "run", "run_id", "model"}
_SCORE = {"score", "value"}


def looks_tidy(path: Path) -> bool:
    """Return True for Parquet files and files whose header has system, topic and score."""
    if path.suffix.lower() == ".parquet":
        return True
    sep, rows = delimited_head(path, 1)
    if not rows or sep == " ":
        return False
    names = {c.lower() for c in rows[0]}
    return bool(names & _TOPIC and names & _SYSTEM and names & _SCORE)


def claims_tidy_frame(obj: object) -> bool:
    """Tell a DataFrame with a ``system`` or ``score`` column (or an alias), or no column."""
    if not isinstance(obj, pd.DataFrame):
        return False
    names = {column_name(c) for c in obj.columns}
    return bool(names & {"system", "score"}) or obj.shape[1] == 0


def read_tidy_frame(
    frame: pd.DataFrame,
    *,
    measure: str | None = None,
    collection: str | None = None,
    missing: Missing = "error",
    check_range: bool = True,
    source: str = "<DataFrame>",
    notes: tuple[str, ...] = (),
) -> ScoreTable:
    """Read a tidy DataFrame in memory (see :meth:`ScoreTable.from_frame`).

    ``measure`` keeps that measure's rows when the frame has a ``measure`` column (as
    :func:`read_tidy` does), and names the measure otherwise.
    """
    if measure is not None and isinstance(frame, pd.DataFrame):
        cols = [c for c in frame.columns if column_name(c) == "measure"]
        if len(cols) == 1:
            frame = frame[keep_measures(frame[cols[0]], measure, source=source)]
    return ScoreTable.from_frame(
        frame,
        collection=collection,
        measure=measure,
        missing=missing,
        source=source,
        check_range=check_range,
        notes=notes,
    )


def read_tidy(
    path: Path,
    *,
    measure: str | None = None,
    collection: str | None = None,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Read a long table with columns ``system, topic, score`` (+ ``collection``, ``measure``).

    Parameters
    ----------
    path
        CSV or TSV (optionally gzipped; delimiter from the header) or Parquet.
    measure, collection
        Fill-in values when the file has no such column.
    missing, check_range
        See :meth:`ScoreTable.from_frame`.
    """
    path = Path(path)
    lines = None
    notes: list[str] = []
    if path.suffix.lower() == ".parquet":
        try:
            frame = pd.read_parquet(check_input(path))
        except ScoreTableError:
            raise
        except Exception as exc:  # pyarrow raises many types for corrupt files
            raise ScoreTableError(f"cannot read Parquet: {exc}", source=str(path)) from None
    else:
        frame = read_delimited(path, numeric=_SCORE)
        lines = frame.index.to_numpy()
        notes += frame.attrs.get("notes", [])
        notes += _unused_columns(frame, path)
    frame = normalise_columns(frame, source=str(path))
    if measure is not None and "measure" in frame:
        keep = keep_measures(frame["measure"], measure, source=str(path))
        frame = frame[keep]
        lines = None if lines is None else lines[keep]
    return ScoreTable.from_frame(
        frame,
        collection=collection or path.name.split(".")[0],
        measure=measure,
        missing=missing,
        source=str(path),
        check_range=check_range,
        lines=lines,
        notes=notes,
    )


def _unused_columns(frame: pd.DataFrame, path: Path) -> list[str]:
    """Return notes naming the columns a tidy file holds beyond the five the table reads.

    pandas' row index (``to_csv()`` without ``index=False``: an empty header, or
    ``Unnamed: 0`` once read and written again) is named as such.
    """
    used = {"collection", "measure", "system", "topic", "replicate", "score"}
    unnamed = set(frame.attrs.get("unnamed", []))
    index = [c for c in frame.columns if c in unnamed]
    other = [str(c) for c in frame.columns if c not in unnamed and column_name(c) not in used]
    notes = []
    if index:
        notes.append(
            f"{path}: {len(index)} column(s) without a name (pandas' row index, written by "
            "to_csv() without index=False) left out"
        )
    if other:
        notes.append(f"{path}: column(s) {', '.join(repr(c) for c in other)} not used")
    return notes
