"""What the readers of LLM evaluation logs share: JSON files, system names, the table.

Every reader of a JSON input reads it here, so that a truncated file, a byte that is not
UTF-8 or a line that is not JSON gives one error naming the file and the line, and builds
its table here (one measure chosen, one source name, the notes).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import read_text
from bayes_ir.readers._measures import keep_measures
from bayes_ir.table import Missing, ScoreTable


def load_json(path: Path, *, text: str | None = None) -> Any:
    """Return the parsed JSON document of ``path`` (gzip-aware).

    Raises
    ------
    ScoreTableError
        Not JSON (naming the line and column of the first error).
    """
    text = read_text(path) if text is None else text
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoreTableError(
            f"not valid JSON ({exc.msg} at column {exc.colno}); is the file complete?",
            source=str(path),
            line=exc.lineno,
        ) from None


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, object)`` for every non-blank line of a JSON Lines file.

    Raises
    ------
    ScoreTableError
        A line that is not JSON, naming the file and line.
    """
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise ScoreTableError(
                f"not a JSON line ({exc.msg} at column {exc.colno})", source=str(path), line=number
            ) from None


def finite_number(value: Any) -> float | None:
    """Return ``value`` as a float when it is a finite number or a boolean, else ``None``."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def as_list(value: Any, *, what: str, source: str) -> list:
    """Return ``value`` when it is a JSON array, else raise naming ``what``."""
    if not isinstance(value, list):
        raise ScoreTableError(f"{what} is not a list (got {type(value).__name__})", source=source)
    return value


def system_names(systems: Sequence[str] | None, paths: Sequence[Path]) -> list[str] | None:
    """Return ``systems`` as strings, checked to name one system per file (``None`` stays)."""
    if systems is None:
        return None
    if len(systems) != len(paths):
        raise ScoreTableError(f"systems= has {len(systems)} names for {len(paths)} files")
    return [str(s) for s in systems]


def log_table(
    frame: pd.DataFrame,
    *,
    paths: Sequence[Path],
    what: str,
    measure: str | Sequence[str] | None,
    missing: Missing,
    check_range: bool,
    notes: Sequence[str],
    lines: np.ndarray | None = None,
) -> ScoreTable:
    """Build the table of ``frame`` (columns system, collection, topic, measure, score).

    ``what`` names the files in the source (``"HELM runs"``); the rows of one measure are
    kept (``measure=`` required when there are several); ``lines`` numbers the rows of a
    single file.
    """
    source = str(paths[0]) if len(paths) == 1 else f"{len(paths)} {what}"
    if frame.empty:
        raise ScoreTableError(f"no per-item scores in the {what}", source=source)
    keep = keep_measures(frame["measure"], measure, source=source, require=True)
    if keep is not None:
        frame = frame[keep]
        lines = None if lines is None else lines[keep]
    return ScoreTable.from_frame(
        frame,
        missing=missing,
        source=source,
        check_range=check_range,
        notes=notes,
        lines=lines if len(paths) == 1 else None,
    )
