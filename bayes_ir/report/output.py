"""Write a result table as CSV, JSON, Markdown or LaTeX, chosen by the file extension."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import pandas as pd

from bayes_ir.errors import BayesIRError, OptionError
from bayes_ir.files import TABLE_FORMATS, write_text
from bayes_ir.report.escape import markdown_escape
from bayes_ir.report.frames import plain_frame
from bayes_ir.report.latex import latex_table


def render_table(
    frame: pd.DataFrame, fmt: str, *, float_format: str = "%.6g", escape: bool = True
) -> str:
    """Return ``frame`` as text in ``fmt`` (``csv``, ``json``, ``markdown`` or ``latex``).

    JSON is a list of records with the table's column names as keys; CSV and JSON
    keep 15 significant digits (all a double holds reliably, so ``0.3714659999999999``
    is written ``0.371466``), Markdown uses ``float_format``, and LaTeX is the
    package's one table style (:func:`bayes_ir.report.latex.latex_table`: booktabs,
    fixed decimals, probabilities as ``<0.001``). Integer columns
    that pandas turned into floats because of empty cells (``n`` of a pooled row) are
    written as integers.

    Names are kept exactly: CSV and JSON read back with pandas (or ``json``) give the
    same strings (commas, quotes, line breaks, unicode, a leading ``=``); Markdown and
    LaTeX escape their special characters in headers and text cells
    (:mod:`bayes_ir.report.escape`) unless ``escape=False`` (cells already written in
    the format), and text that looks like a number (a system ``007``) stays text.
    """
    frame = plain_frame(frame)
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
        return latex_table(frame, escape=escape)
    raise BayesIRError(
        f"unknown table format {fmt!r}; choose one of {sorted(TABLE_FORMATS.values())}"
    )


def _is_numeric(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def write_table(frame: pd.DataFrame, path: str | PathLike[str]) -> Path:
    """Write ``frame`` to ``path`` in the format its extension selects, atomically.

    Raises
    ------
    OptionError
        ``frame`` is not a DataFrame or ``path`` not a file name.
    BayesIRError
        If the extension is not one of ``.csv``, ``.json``, ``.md``, ``.tex``, or the path
        cannot be written (see :func:`bayes_ir.files.atomic_path`).
    """
    if not isinstance(frame, pd.DataFrame):
        raise OptionError(
            f"write_table writes a pandas DataFrame (a result's to_frame()), got "
            f"{type(frame).__name__}"
        )
    if not isinstance(path, str | PathLike) or not str(path).strip():
        raise OptionError(f"write_table needs a file name, got {path!r}")
    path = Path(path)
    fmt = TABLE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise BayesIRError(
            f"cannot tell the output format from {path.name!r}: use one of "
            + ", ".join(sorted(TABLE_FORMATS))
        )
    return write_text(path, render_table(frame, fmt))
