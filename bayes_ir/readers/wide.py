"""Wide matrices: one row per topic, one column per system, optional ``topic`` column.

This is the layout of Urbano's TREC ad hoc and Robust04 score matrices
(``adhoc6_ap.csv`` has no topic column: topics are numbered by row from 1).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import head_lines, read_delimited
from bayes_ir.table import ScoreTable

_TOPIC_COLUMNS = ("topic", "query_id", "qid", "query")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def looks_wide(path: Path) -> bool:
    """Return True for delimited files with a header and numeric cells below it."""
    lines = head_lines(path, 2)
    if len(lines) < 2:
        return False
    sep = "\t" if "\t" in lines[0] else ","
    cells = [c.strip().strip('"') for c in lines[1].split(sep)]
    header = [c.strip().strip('"') for c in lines[0].split(sep)]
    return len(cells) == len(header) >= 2 and sum(_is_number(c) for c in cells) >= len(cells) - 1


def read_wide(
    path: Path,
    *,
    measure: str | None = None,
    collection: str | None = None,
    missing: str = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Read a topic x system matrix.

    Parameters
    ----------
    path
        CSV/TSV with a header of system names. A first column named ``topic`` (or
        ``query_id``, ``qid``) gives topic ids; without one, topics are numbered 1..n.
    measure, collection
        Names to record; by default the measure is guessed from a file name such as
        ``adhoc6_ap.csv`` (``AP``) and the collection from the rest of the name.
    missing, check_range
        See :meth:`ScoreTable.from_frame`. Empty cells are missing scores.
    """
    path = Path(path)
    frame = read_delimited(path)
    frame.columns = [str(c).strip() for c in frame.columns]
    if all(_is_number(c) for c in frame.columns):
        raise ScoreTableError(
            "the first line holds numbers, not system names: a wide matrix needs a header "
            "row naming the systems",
            source=str(path),
            line=1,
        )
    if len(set(frame.columns)) != len(frame.columns):
        dup = next(c for c in frame.columns if list(frame.columns).count(c) > 1)
        raise ScoreTableError(
            f"system column {dup!r} appears twice in the header", source=str(path)
        )
    row_lines = frame.index.to_numpy()
    topic_col = next((c for c in frame.columns if c.lower() in _TOPIC_COLUMNS), None)
    if topic_col is not None:
        topics = frame[topic_col].astype(str).tolist()
        frame = frame.drop(columns=topic_col)
    else:
        topics = [str(i + 1) for i in range(len(frame))]
    if frame.shape[1] == 0:
        raise ScoreTableError("no system columns", source=str(path))
    guessed_coll, guessed_meas = _guess_names(path)
    n_sys = frame.shape[1]
    cells = frame.to_numpy(dtype=object).ravel()
    long = pd.DataFrame(
        {
            "topic": np.repeat(topics, n_sys),
            "system": np.tile(frame.columns.to_numpy(dtype=object), len(topics)),
            "score": cells,
        }
    )
    lines = np.repeat(row_lines, n_sys)
    present = np.array([str(c).strip() != "" for c in cells], dtype=bool)
    return ScoreTable.from_frame(
        long[present],
        collection=collection or guessed_coll,
        measure=measure or guessed_meas,
        missing=missing,
        source=str(path),
        check_range=check_range,
        lines=lines[present],
    )


_MEASURE_SUFFIXES = {"ap": "AP", "map": "AP", "p10": "P@10", "rr": "RR", "ndcg": "nDCG"}


def _guess_names(path: Path) -> tuple[str, str | None]:
    stem = path.name.split(".")[0]
    head, _, tail = stem.rpartition("_")
    if head and tail.lower() in _MEASURE_SUFFIXES:
        return head, _MEASURE_SUFFIXES[tail.lower()]
    return stem, None
