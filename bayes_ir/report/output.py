"""Write a result table as CSV, JSON, Markdown or LaTeX, chosen by the file extension."""

from __future__ import annotations

import math
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from bayes_ir.errors import BayesIRError
from bayes_ir.files import TABLE_FORMATS, write_text
from bayes_ir.report.escape import latex_escape, markdown_escape


def render_table(
    frame: pd.DataFrame, fmt: str, *, float_format: str = "%.6g", escape: bool = True
) -> str:
    """Return ``frame`` as text in ``fmt`` (``csv``, ``json``, ``markdown`` or ``latex``).

    JSON is a list of records with the table's column names as keys; CSV and JSON
    keep 15 significant digits (all a double holds reliably, so ``0.3714659999999999``
    is written ``0.371466``), Markdown and LaTeX use ``float_format``. Integer columns
    that pandas turned into floats because of empty cells (``n`` of a pooled row) are
    written as integers.

    Names are kept exactly: CSV and JSON read back with pandas (or ``json``) give the
    same strings (commas, quotes, line breaks, unicode, a leading ``=``); Markdown and
    LaTeX escape their special characters in headers and text cells
    (:mod:`bayes_ir.report.escape`) unless ``escape=False`` (cells already written in
    the format), and text that looks like a number (a system ``007``) stays text.
    """
    named = any(name is not None for name in frame.index.names)
    frame = _restore_integers(frame.reset_index(drop=not named))
    if fmt == "csv":
        return frame.to_csv(index=False, float_format="%.15g")
    if fmt == "json":
        return frame.to_json(orient="records", indent=2, double_precision=15) + "\n"
    if fmt == "markdown":
        shown = frame.astype(object)
        if escape:
            shown = shown.map(lambda v: markdown_escape(v) if isinstance(v, str) else v)
            shown.columns = [markdown_escape(str(c)) for c in frame.columns]
        shown = shown.astype(object).where(frame.notna().to_numpy(), None)
        text = [i for i, c in enumerate(frame.columns) if not _is_numeric(frame[c])]
        return (
            shown.to_markdown(
                index=False,
                floatfmt=float_format.strip("%"),
                missingval="",
                disable_numparse=text or False,
            )
            + "\n"
        )
    if fmt == "latex":
        return _latex(frame, float_format=float_format, escape=escape)
    raise BayesIRError(
        f"unknown table format {fmt!r}; choose one of {sorted(TABLE_FORMATS.values())}"
    )


def _restore_integers(frame: pd.DataFrame) -> pd.DataFrame:
    """Turn float columns holding only whole numbers and NaN into nullable integers."""
    out = frame.copy()
    for col in frame.columns:
        values = frame[col]
        if not pd.api.types.is_float_dtype(values) or not values.isna().any():
            continue
        known = values.dropna().to_numpy()
        if len(known) and np.isfinite(known).all() and (known == np.round(known)).all():
            out[col] = values.astype("Int64")
    return out


def _is_numeric(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def _latex(frame: pd.DataFrame, *, float_format: str, escape: bool) -> str:
    """Render a booktabs ``tabular`` (hand-written: pandas' ``to_latex`` needs jinja2)."""
    _escape = latex_escape if escape else str

    def cell(value: object) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
            return ""
        if isinstance(value, float | np.floating):
            return float_format % value
        return _escape(str(value))

    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    spec = "".join("r" if n else "l" for n in numeric)
    lines = [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(_escape(str(c)) for c in frame.columns) + r" \\",
        r"\midrule",
    ]
    for row in frame.itertuples(index=False, name=None):
        lines.append(" & ".join(cell(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def write_table(frame: pd.DataFrame, path: str | PathLike[str]) -> Path:
    """Write ``frame`` to ``path`` in the format its extension selects, atomically.

    Raises
    ------
    BayesIRError
        If the extension is not one of ``.csv``, ``.json``, ``.md``, ``.tex``, or the path
        cannot be written (see :func:`bayes_ir.files.atomic_path`).
    """
    path = Path(path)
    fmt = TABLE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise BayesIRError(
            f"cannot tell the output format from {path.name!r}: use one of "
            + ", ".join(sorted(TABLE_FORMATS))
        )
    return write_text(path, render_table(frame, fmt))
