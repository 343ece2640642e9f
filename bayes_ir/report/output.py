"""Write a result table as CSV, JSON, Markdown or LaTeX, chosen by the file extension."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import pandas as pd

from bayes_ir.errors import BayesIRError

#: File extensions and the format each selects.
TABLE_FORMATS = {".csv": "csv", ".json": "json", ".md": "markdown", ".tex": "latex"}


def render_table(frame: pd.DataFrame, fmt: str, *, float_format: str = "%.6g") -> str:
    """Return ``frame`` as text in ``fmt`` (``csv``, ``json``, ``markdown`` or ``latex``).

    JSON is a list of records with the table's column names as keys; CSV and JSON
    keep full precision, Markdown and LaTeX use ``float_format``.
    """
    named = any(name is not None for name in frame.index.names)
    frame = frame.reset_index(drop=not named)
    if fmt == "csv":
        return frame.to_csv(index=False)
    if fmt == "json":
        return frame.to_json(orient="records", indent=2, double_precision=15) + "\n"
    if fmt == "markdown":
        return frame.to_markdown(index=False, floatfmt=float_format.strip("%")) + "\n"
    if fmt == "latex":
        return frame.to_latex(index=False, float_format=lambda x: float_format % x)
    raise BayesIRError(f"unknown table format {fmt!r}; choose one of {sorted(TABLE_FORMATS.values())}")


def write_table(frame: pd.DataFrame, path: str | PathLike[str]) -> Path:
    """Write ``frame`` to ``path`` in the format its extension selects.

    Raises
    ------
    BayesIRError
        If the extension is not one of ``.csv``, ``.json``, ``.md``, ``.tex``.
    """
    path = Path(path)
    fmt = TABLE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise BayesIRError(
            f"cannot tell the output format from {path.name!r}: use one of "
            + ", ".join(sorted(TABLE_FORMATS))
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_table(frame, fmt), encoding="utf-8")
    return path
