"""Wide matrices: one row per topic, one column per system, optional ``topic`` column.

This is the layout of Urbano's TREC ad hoc and Robust04 score matrices
(``adhoc6_ap.csv`` has no topic column: topics are numbered by row from 1).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.measures import is_measure_name
from bayes_ir.readers._io import (
    delimited_head,
    guess_separator,
    head_lines,
    number_text,
    read_delimited,
)
from bayes_ir.table import Missing, ScoreTable

#: Names of an id column (compared case-insensitively): it holds topic ids, not scores.
TOPIC_COLUMNS = ("topic", "topic_id", "topics", "qid", "query_id", "query", "id")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def looks_wide(path: Path) -> bool:
    """Return True for delimited files with a header and numeric cells below it."""
    sep, rows = delimited_head(path, 2)
    if len(rows) < 2 or sep == " ":
        return False
    header, cells = rows
    numbers = sum(_is_number(number_text(c, sep)) for c in cells)
    return len(cells) == len(header) >= 2 and numbers >= len(cells) - 1


def read_wide(
    path: Path,
    *,
    measure: str | None = None,
    collection: str | None = None,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Read a topic x system matrix.

    Parameters
    ----------
    path
        CSV/TSV with a header of system names. A column named ``topic``, ``topic_id``,
        ``qid``, ``query_id``, ``query`` or ``id`` (any case), or else a first column of
        text, gives the topic ids (``table.notes`` says which); without one, topics are
        numbered 1..n.
    measure, collection
        Names to record; by default the measure is guessed from a file name such as
        ``adhoc6_ap.csv`` (``AP``) and the collection from the rest of the name.
    missing, check_range
        See :meth:`ScoreTable.from_frame`. Empty cells are missing scores.
    """
    path = Path(path)
    frame = read_delimited(path, numeric=_score_columns(path))
    read_notes = list(frame.attrs.get("notes", []))
    unnamed = list(frame.attrs.get("unnamed", []))
    frame.columns = [str(c).strip() for c in frame.columns]
    if all(_is_number(c) for c in frame.columns):
        raise ScoreTableError(
            "the first line holds numbers, not system names: a wide matrix needs a header "
            "row naming the systems",
            source=str(path),
            line=1,
        )
    frame, index_notes = _unnamed_columns(frame, unnamed, source=str(path))
    guessed_coll, guessed_meas = _guess_names(path)
    long, lines, notes = wide_to_long(frame, source=str(path))
    notes = [*read_notes, *index_notes, *notes]
    return ScoreTable.from_frame(
        long,
        collection=collection or guessed_coll,
        measure=measure or guessed_meas,
        missing=missing,
        source=str(path),
        check_range=check_range,
        lines=lines,
        notes=notes,
    )


def read_wide_frame(
    frame: pd.DataFrame,
    *,
    measure: str | None = None,
    collection: str | None = None,
    missing: Missing = "error",
    check_range: bool = True,
    source: str = "<DataFrame>",
    notes: tuple[str, ...] = (),
) -> ScoreTable:
    """Read a topic x system DataFrame in memory (topics from an id column or the index).

    Parameters
    ----------
    frame
        One column per system; topic ids as in :func:`wide_to_long` (an id column, a
        text first column, or the index, e.g. ``df.set_index("qid")``).
    measure
        The measure the cells hold (required: a frame in memory has no file name to
        guess it from).
    collection, missing, check_range, source, notes
        See :meth:`ScoreTable.from_frame`.

    Raises
    ------
    ScoreTableError
        No ``measure=``, a topic in two rows, no system column, a cell not a number.
    """
    if measure is None:
        raise ScoreTableError(
            f"a wide DataFrame (one column per system: {_listed(frame.columns)}) does not "
            "name its measure: pass measure=, e.g. measure='AP'",
            source=source,
        )
    long, _, found = wide_to_long(frame, source=source)
    return ScoreTable.from_frame(
        long,
        collection=collection,
        measure=measure,
        missing=missing,
        source=source,
        check_range=check_range,
        notes=[*found, *notes],
    )


def _unnamed_columns(
    frame: pd.DataFrame, unnamed: list[str], *, source: str
) -> tuple[pd.DataFrame, list[str]]:
    """Handle header cells that name nothing: pandas' row index, empty columns, stray ones.

    ``df.to_csv()`` keeps the index as a first column with an empty header (``Unnamed:
    0`` once read and written again). It is left out when it holds the row numbers
    ``0..n-1`` or when another column holds the topic ids; otherwise it holds the topic
    ids (``df.set_index("qid")`` with the index's name dropped). An unnamed column
    elsewhere is left out when it is empty (Excel's trailing separators) and refused
    when it holds values: no system can be named after it.

    Returns the frame without the columns left out (the first unnamed one renamed
    ``topic`` when it holds the topic ids) and a note per column handled.

    Raises
    ------
    ScoreTableError
        An unnamed column that is not the first and holds values.
    """
    notes: list[str] = []
    columns = list(frame.columns)
    for position, name in enumerate(columns):
        if name not in unnamed:
            continue
        cells = frame[name].astype(str).str.strip()
        filled = cells != ""
        if not filled.any():
            frame = frame.drop(columns=name)
            notes.append(f"{source}: column {position + 1} has no name and no value: left out")
            continue
        if position > 0:
            line = int(frame.index[int(np.argmax(filled.to_numpy()))])
            raise ScoreTableError(
                f"column {position + 1} has no name in the header but holds values (line "
                f"{line}: {cells[filled].iat[0]!r}); name the system it holds in the header "
                "or delete the column",
                source=source,
                line=1,
            )
        has_ids = any(c.lower() in TOPIC_COLUMNS for c in columns if c != name)
        rows = pd.to_numeric(cells, errors="coerce")
        row_numbers = bool(rows.notna().all()) and sorted(rows) == list(range(len(rows)))
        if has_ids or row_numbers:
            frame = frame.drop(columns=name)
            what = "the row numbers 0..n-1" if row_numbers else "an old row index"
            notes.append(
                f"{source}: the first column has no name and holds {what}: pandas' index, "
                "written by to_csv() without index=False; left out"
            )
        else:
            frame = frame.rename(columns={name: "topic"})
            notes.append(
                f"{source}: topic ids from the first column, which has no name (pandas' "
                "index, written by to_csv())"
            )
    return frame, notes


def _listed(names: Iterable[object], n: int = 4) -> str:
    shown = [str(c) for c in names]
    return ", ".join(shown[:n]) + (", ..." if len(shown) > n else "")


def wide_to_long(
    frame: pd.DataFrame, *, source: str
) -> tuple[pd.DataFrame, np.ndarray | None, list[str]]:
    """Turn a topic x system frame into long rows ``topic, system, score``.

    The topic ids are, in this order: a column named like an id (:data:`TOPIC_COLUMNS`,
    any case); else a first column of text (unique, non-empty cells, at least half of
    them not numbers); else the frame's index when it is not the default ``0..n-1``
    (frames in memory); else the row numbers ``1..n``. Empty or NaN cells are missing.

    Returns
    -------
    long, lines, notes
        The long frame, the file line of each long row (``None`` for frames without line
        numbers in their index) and one note saying where the topic ids came from.
    """
    columns = [str(c).strip() for c in frame.columns]
    if len(set(columns)) != len(columns):
        dup = next(c for c in columns if columns.count(c) > 1)
        raise ScoreTableError(f"system column {dup!r} appears twice in the header", source=source)
    frame = frame.set_axis(columns, axis=1)
    topic_col = next((c for c in columns if c.lower() in TOPIC_COLUMNS), None)
    has_lines = frame.index.name == "line"
    if topic_col is not None:
        note = f"topic ids from column {topic_col!r}"
    elif columns and _is_id_column(frame[columns[0]]):
        topic_col = columns[0]
        note = f"topic ids from the first column {topic_col!r} (text, not scores)"
    if topic_col is not None:
        topics = frame[topic_col].astype(str).str.strip().to_numpy(dtype=object)
        frame = frame.drop(columns=topic_col)
    elif not has_lines and not isinstance(frame.index, pd.RangeIndex):
        topics = frame.index.astype(str).to_numpy(dtype=object)
        named = "" if frame.index.name is None else f" {frame.index.name!r}"
        note = f"topic ids from the index{named}"
    else:
        topics = np.arange(1, len(frame) + 1).astype(str).astype(object)
        note = "no topic column: topics numbered by row from 1"
    if frame.shape[1] == 0:
        raise ScoreTableError("no system columns", source=source)
    if all(is_measure_name(str(c)) for c in frame.columns):
        named = f"column {topic_col!r}" if topic_col is not None else "the rows"
        raise ScoreTableError(
            f"the columns are measures ({_listed(frame.columns)}), not systems: this is a table "
            f"of mean scores, one row per system ({named}), as pt.Experiment(...) without "
            "perquery=True or a ranx report writes it; the tests need per-topic scores: "
            "pt.Experiment(..., perquery=True), trec_eval -q, or the runs with their qrels",
            source=source,
        )
    codes, _ = pd.factorize(np.asarray(topics, dtype=object), use_na_sentinel=False)
    seen = np.bincount(codes) if len(codes) else np.zeros(0, dtype=int)
    if not has_lines and (seen > 1).any():  # a file's rows are named by line in from_frame
        rows = np.flatnonzero(codes == np.flatnonzero(seen > 1)[0])[:2] + 1
        raise ScoreTableError(
            f"topic {topics[rows[0] - 1]!r} is in two rows ({rows[0]} and {rows[1]}): "
            "one row per topic",
            source=source,
        )
    n_sys = frame.shape[1]
    if all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
           for t in frame.dtypes):  # fmt: skip
        cells = frame.to_numpy(dtype=float).ravel()
        # a NaN read from a file ("nan") is an error for from_frame; in memory, a gap
        present = np.ones(len(cells), dtype=bool) if has_lines else ~np.isnan(cells)
    else:
        cells = frame.to_numpy(dtype=object).ravel()
        text = pd.Series(cells, dtype=object).astype(str).str.strip()
        present = np.asarray(~pd.isna(cells) & (text != ""), dtype=bool)
    topic_codes, topic_names = pd.factorize(np.asarray(topics, dtype=object))
    long = pd.DataFrame(
        {  # categoricals: codes repeat, names are stored once
            "topic": pd.Categorical.from_codes(np.repeat(topic_codes, n_sys), topic_names),
            "system": pd.Categorical.from_codes(
                np.tile(np.arange(n_sys), len(topics)), frame.columns.to_numpy(dtype=object)
            ),
            "score": cells,
        }
    )
    lines = np.repeat(frame.index.to_numpy(), n_sys) if has_lines else None
    if present.all():
        return long, lines, [note]
    notes = [note]
    empty = ~present.reshape(len(topics), n_sys).any(axis=0)
    if empty.any():
        names = ", ".join(repr(str(c)) for c in frame.columns[empty])
        notes.append(f"{source}: system column(s) {names} hold no score at all: left out")
    lines = None if lines is None else lines[present]
    return long[present].reset_index(drop=True), lines, notes


def _score_columns(path: Path) -> set[str]:
    """Lower-case header names that should hold scores: all but the first and id columns."""
    head = head_lines(path, 1)
    if not head:
        return set()
    names = [n.strip().lower() for n in next(csv.reader(head, delimiter=guess_separator(head[0])))]
    return {n for n in names[1:] if n not in TOPIC_COLUMNS}


def _is_id_column(values: pd.Series) -> bool:
    """Tell whether the cells are unique, non-empty and at least half not numbers."""
    text_like = (
        pd.api.types.is_object_dtype(values)
        or pd.api.types.is_string_dtype(values)
        or isinstance(values.dtype, pd.CategoricalDtype)
    )
    if not text_like:
        return False
    text = values.astype(str).str.strip()
    if len(text) == 0 or (text == "").any() or pd.isna(values).any() or text.duplicated().any():
        return False
    numeric = pd.to_numeric(text, errors="coerce").notna()
    return int((~numeric).sum()) * 2 >= len(text)


_MEASURE_SUFFIXES = {"ap": "AP", "map": "AP", "p10": "P@10", "rr": "RR", "ndcg": "nDCG"}


def _guess_names(path: Path) -> tuple[str, str | None]:
    stem = path.name.split(".")[0]
    head, _, tail = stem.rpartition("_")
    if head and tail.lower() in _MEASURE_SUFFIXES:
        return head, _MEASURE_SUFFIXES[tail.lower()]
    return stem, None
