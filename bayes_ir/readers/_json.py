"""JSON and JSON Lines files for the readers of LLM evaluation logs: clear errors, gzip kept.

Every reader of a JSON input reads it here, so that a truncated file, a byte that is not
UTF-8 or a line that is not JSON gives one error naming the file and the line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import read_text


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
