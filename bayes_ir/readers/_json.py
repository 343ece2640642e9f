"""What the readers of LLM evaluation logs share: JSON files, system names, the table.

Every reader of a JSON input reads it here, so that a truncated file, a byte that is not
UTF-8 or a line that is not JSON gives one error naming the file and the line, and builds
its table here (one measure chosen, one source name, the notes).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import read_text
from bayes_ir.readers._measures import keep_measures
from bayes_ir.table import Missing, ScoreTable


def parse_json(
    text: str, *, source: str, member: str | None = None, line: int | None = None
) -> Any:
    """Return the parsed JSON document ``text`` of ``source``.

    ``member`` names a file inside an archive (an Inspect ``.eval``); ``line`` is the
    line of a JSON Lines file that ``text`` is.

    Raises
    ------
    ScoreTableError
        Not JSON (naming the line and column of the first error), an integer of more
        digits than Python converts, or nesting deeper than the parser's recursion limit
        (no log nests more than a few levels); the message names ``source`` and ``member``.
    """
    inside = f"{member} in the archive: " if member else ""
    what = "not a JSON line" if line is not None else f"{inside}not valid JSON"
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        complete = "" if line is not None else "; is the file complete?"
        at = f"line {exc.lineno} column {exc.colno}" if member else f"column {exc.colno}"
        raise ScoreTableError(
            f"{what} ({exc.msg} at {at}){complete}",
            source=source,
            line=None if member else line if line is not None else exc.lineno,
        ) from None
    except ValueError:  # an integer longer than sys.get_int_max_str_digits()
        raise ScoreTableError(
            f"{what}: a number of more than {sys.get_int_max_str_digits():,} digits",
            source=source,
            line=line,
        ) from None
    except RecursionError:
        raise ScoreTableError(
            f"{what}: nested deeper than the JSON parser can follow (no log nests so deep)",
            source=source,
            line=line,
        ) from None


def load_json(path: Path, *, text: str | None = None) -> Any:
    """Return the parsed JSON document of ``path`` (gzip-aware; see :func:`parse_json`)."""
    text = read_text(path) if text is None else text
    return parse_json(text, source=str(path))


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, object)`` for every non-blank line of a JSON Lines file.

    Raises
    ------
    ScoreTableError
        A line that is not JSON (see :func:`parse_json`), naming the file and line.
    """
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if line.strip():
            yield number, parse_json(line, source=str(path), line=number)


def finite_number(value: Any) -> float | None:
    """Return ``value`` as a float when it is a finite number or a boolean, else ``None``.

    An integer too large for a float (``1e400`` written out) is not a finite number.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    return None


def as_list(value: Any, *, what: str, source: str) -> list:
    """Return ``value`` when it is a JSON array (``null``: an empty one), else raise.

    Only ``null`` stands for nothing: ``{}``, ``""`` or ``0`` where a list belongs is
    refused, naming ``what``.
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScoreTableError(f"{what} is not a list (got {_kind(value)})", source=source)
    return value


def as_dict(value: Any, *, what: str, source: str) -> dict:
    """Return ``value`` when it is a JSON object (``null``: an empty one), else raise.

    Only ``null`` stands for nothing: a list, ``""`` or ``0`` where an object belongs is
    refused, naming ``what``.
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ScoreTableError(f"{what} is not an object (got {_kind(value)})", source=source)
    return value


def name_field(value: Any) -> str | None:
    """Return a name read from JSON (a string or an integer), else ``None``.

    ``null``, an empty string, a list or an object is no name: the reader then names the
    thing otherwise (after its file) or refuses it, never ``"None"`` or ``"{'a': 1}"``.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value)
    return text if text.strip() else None


def shown(value: Any, width: int = 60) -> str:
    """Return ``repr(value)`` cut to ``width`` characters (a value may be a whole document)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _kind(value: Any) -> str:
    """Return the JSON name of ``value``'s type (``null``, ``a string``, ``a list``, ...)."""
    names = {type(None): "null", bool: "a boolean", int: "a number", float: "a number",
             str: "a string", list: "a list", dict: "an object"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


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
    sources: np.ndarray | None = None,
) -> ScoreTable:
    """Build the table of ``frame`` (columns system, collection, topic, measure, score).

    ``what`` names the files in the source (``"HELM runs"``); the rows of one measure are
    kept (``measure=`` required when there are several); ``lines`` numbers the rows in
    their file and ``sources`` names it (rows of several files), so that an error names
    the file (and line) of the row at fault.
    """
    source = str(paths[0]) if len(paths) == 1 else f"{len(paths)} {what}"
    if frame.empty:
        raise ScoreTableError(f"no per-item scores in the {what}", source=source)
    keep = keep_measures(frame["measure"], measure, source=source, require=True)
    if keep is not None:
        frame = frame[keep]
        lines = None if lines is None else lines[keep]
        sources = None if sources is None else sources[keep]
    several = len(paths) > 1 and sources is not None
    return ScoreTable.from_frame(
        frame,
        missing=missing,
        source=source,
        check_range=check_range,
        notes=notes,
        lines=lines if len(paths) == 1 or several else None,
        sources=sources if several else None,
    )
