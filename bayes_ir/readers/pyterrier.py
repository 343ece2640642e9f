"""PyTerrier ``pt.Experiment(..., perquery=True)`` results: ``name, qid, measure, value``.

The frame (or the CSV/TSV it was saved to) has one row per system (``name``), query
(``qid``) and measure; measures are named as the experiment named them
(``map``, ``ndcg_cut_10``, ``nDCG@10``) and read canonically (``AP``, ``nDCG@10``).
PyTerrier (and Java) is not needed: the frame is recognised by its columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from bayes_ir.readers._io import delimited_head, read_delimited
from bayes_ir.readers._measures import keep_measures
from bayes_ir.table import DEFAULT_COLLECTION, Missing, ScoreTable

#: The columns of a per-query ``pt.Experiment`` frame.
COLUMNS = ("name", "qid", "measure", "value")


def claims_pyterrier(obj: object) -> bool:
    """Tell a DataFrame with the columns ``name, qid, measure, value``."""
    return isinstance(obj, pd.DataFrame) and set(COLUMNS) <= {str(c) for c in obj.columns}


def looks_pyterrier(path: Path) -> bool:
    """Tell a delimited file whose header holds ``name, qid, measure, value``."""
    sep, rows = delimited_head(path, 1)
    return bool(rows) and sep != " " and set(COLUMNS) <= set(rows[0])


def read_pyterrier(
    experiment: pd.DataFrame | Path,
    *,
    measure: str | Sequence[str] | None = None,
    collection: str | None = None,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Per-topic scores from a per-query ``pt.Experiment`` frame, or a file holding one.

    Parameters
    ----------
    experiment
        The frame of ``pt.Experiment(..., perquery=True)`` (columns ``name``, ``qid``,
        ``measure``, ``value``; other columns are ignored), or a CSV/TSV of it.
    measure
        The measure(s) to keep, as the experiment named them or canonically (``"AP"``
        finds ``map``); required when the frame holds several measures.
    collection
        Collection name (default: the file name, or ``"default"`` for a frame).
    missing, check_range
        See :meth:`~bayes_ir.table.ScoreTable.from_frame`.

    Raises
    ------
    ScoreTableError
        Several measures without ``measure=``, a measure not in the frame, a query
        scored twice for one system and measure (naming both), a value not a number.
    """
    lines = None
    if isinstance(experiment, pd.DataFrame):
        frame, source = experiment, "<PyTerrier Experiment>"
        collection = collection or DEFAULT_COLLECTION
    else:
        path = Path(experiment)
        frame, source = read_delimited(path, numeric={"value"}), str(path)
        lines = frame.index.to_numpy()
        collection = collection or path.name.split(".")[0]
    frame = pd.DataFrame(
        {
            "system": frame["name"].to_numpy(),
            "topic": frame["qid"].to_numpy(),
            "measure": frame["measure"].to_numpy(),
            "score": frame["value"].to_numpy(),
        }
    )
    keep = keep_measures(frame["measure"], measure, source=source, require=True)
    if keep is not None:
        frame = frame[keep]
        lines = None if lines is None else lines[keep]
    return ScoreTable.from_frame(
        frame,
        collection=collection,
        missing=missing,
        source=source,
        check_range=check_range,
        lines=lines,
    )
