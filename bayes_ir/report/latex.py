r"""The package's one LaTeX table style, used by every result's ``to_latex()`` and ``.tex`` output.

A table is a ``table`` float around a booktabs ``tabular`` (``\usepackage{booktabs}``)::

    \begin{table}[tbp]
    \centering
    \caption{Paired tests against 'bm25'}
    \label{tab:paired}
    \begin{tabular}{lrr}
    \toprule
    challenger & mean\_difference & p\_adjusted \\
    \midrule
    chal\_a & \textbf{0.0125} & 0.013$^{\dagger}$ \\
    chal\_b & $-$0.0042 & 0.412 \\
    \bottomrule
    \end{tabular}
    \par\smallskip\footnotesize
    $^{\dagger}$ p < 0.05 after Holm's adjustment.\par
    Bold: highest mean\_difference.\par
    \end{table}

- numbers have a fixed number of decimals (``digits``), a minus sign is a math minus,
  whole-number columns stay integers, an empty cell is empty;
- probabilities and p-values (columns named ``p``, ``p_*``, ``*_p`` or ``*_p_*``) are
  written by :func:`~bayes_ir.report.numbers.format_probability` (``<0.001``, ``>0.999``);
- the best value of each declared column (``best=``) is bold, and the line under the
  table says what "best" means;
- significance marks (``marks=``) are superscript symbols (dagger, double dagger,
  section, ...), one per meaning, each explained on its own line under the table (no
  ``threeparttable`` needed);
- every name (headers, text cells, caption, notes) is escaped by
  :func:`~bayes_ir.report.escape.latex_escape`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from bayes_ir import defaults
from bayes_ir.errors import BayesIRError
from bayes_ir.report.escape import latex_escape
from bayes_ir.report.frames import plain_frame
from bayes_ir.report.numbers import format_probability

__all__ = [
    "MARK_SYMBOLS",
    "best_cells",
    "latex_number",
    "latex_table",
    "result_to_latex",
    "tabular",
]

#: Superscript symbols of the significance marks, in the order the marks are declared.
MARK_SYMBOLS = (r"\dagger", r"\ddagger", r"\S", r"\P", r"\ast")

#: First line under the table of a result whose posterior failed its diagnostics.
DIAGNOSTICS_FAILED = "DIAGNOSTICS FAILED: do not act on these numbers (see the result's summary)."

type Cells = pd.DataFrame | Mapping[str, Any]


def latex_number(value: Any, digits: int = defaults.LATEX_DIGITS) -> str:
    r"""One number as a table cell: fixed ``digits`` decimals, ``$-$`` for the minus sign.

    Integers are written whole, NaN/None as an empty cell, infinities as ``$\infty$``;
    a value that rounds to zero carries no sign (``0.0000``, never ``-0.0000``).
    """
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        text = str(int(value))
    elif math.isinf(value):
        return "$-\\infty$" if value < 0 else "$\\infty$"
    else:
        text = f"{value:.{digits}f}"
        if text.startswith("-") and not any(c in "123456789" for c in text):
            text = text[1:]
    return "$-$" + text[1:] if text.startswith("-") else text


def _is_probability_name(name: str) -> bool:
    parts = str(name).lower().split("_")
    return "p" in parts or "pvalue" in parts or "pval" in parts


def _probability_columns(frame: pd.DataFrame) -> list[str]:
    """Columns named like a probability or p-value whose values all lie in [0, 1]."""
    out = []
    for col in frame.columns:
        values = frame[col]
        if not _is_probability_name(col) or not pd.api.types.is_float_dtype(values):
            continue
        known = values.dropna().to_numpy(dtype=float)
        if len(known) and np.all((known >= 0) & (known <= 1)):
            out.append(col)
    return out


def best_cells(values: pd.Series, how: Literal["max", "min"]) -> np.ndarray:
    """Boolean mask of the best value(s) of ``values`` (ties all best; NaN never)."""
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    if how not in ("max", "min"):
        raise BayesIRError(f"best: {how!r} is not 'max' or 'min'")
    if not np.isfinite(numbers).any():
        return np.zeros(len(numbers), dtype=bool)
    target = np.nanmax(numbers) if how == "max" else np.nanmin(numbers)
    return np.isclose(numbers, target, rtol=1e-12, atol=0.0)


def _mask(cells: Cells, frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """Cells given as a frame or a {column: booleans} mapping, aligned on ``frame``."""
    given = pd.DataFrame({k: np.asarray(v, dtype=bool) for k, v in dict(cells).items()})
    if given.columns.empty:
        return pd.DataFrame(False, index=range(len(frame)), columns=frame.columns)
    unknown = [c for c in given.columns if c not in frame.columns]
    if unknown:
        raise BayesIRError(f"{what}: no column {unknown[0]!r} in the table")
    if len(given) != len(frame):
        raise BayesIRError(f"{what}: {len(given)} rows given for a table of {len(frame)}")
    return given.reindex(columns=frame.columns, fill_value=False).fillna(False).astype(bool)


def _best_note(best: Mapping[str, str]) -> str:
    words = {"max": "highest", "min": "lowest"}
    return "Bold: " + "; ".join(f"{words[how]} {col}" for col, how in best.items()) + "."


def latex_table(
    frame: pd.DataFrame,
    *,
    caption: str | None = None,
    label: str | None = None,
    digits: int | Mapping[str, int] = defaults.LATEX_DIGITS,
    best: Mapping[str, Literal["max", "min"]] | None = None,
    bold: Cells | None = None,
    bold_note: str | None = None,
    marks: Mapping[str, Cells] | None = None,
    notes: Sequence[str] = (),
    probabilities: Iterable[str] | None = None,
    missing: str = "",
    escape: bool = True,
    rules: Sequence[int] = (),
) -> str:
    r"""Return ``frame`` as a LaTeX table in the package's style (see the module docstring).

    Parameters
    ----------
    frame
        The table; a named index becomes the leading column(s).
    caption, label
        ``\caption`` and ``\label`` of the float (left out when ``None``).
    digits
        Decimals of every float column, or a ``{column: decimals}`` mapping (other
        columns: :data:`bayes_ir.defaults.LATEX_DIGITS`).
    best
        ``{column: "max" | "min"}``: the highest or lowest value of each is bold.
    bold, bold_note
        Cells to set in bold instead of ``best`` (a boolean frame or ``{column:
        booleans}``), and the line saying why.
    marks
        ``{meaning: cells}``: each meaning that marks a cell gets the next of
        :data:`MARK_SYMBOLS`, put on its cells (a boolean frame or ``{column:
        booleans}``) and explained under the table.
    notes
        Further lines under the table (plain text, escaped).
    probabilities
        Columns written as probabilities (default: those named ``p``, ``p_*``, ``*_p``
        or ``*_p_*``, or holding ``pvalue``/``pval``, whose values all lie in [0, 1]).
    missing
        Text of an empty (NaN) cell.
    escape
        Escape headers and text cells (``False``: they are LaTeX already).
    rules
        Rows (0-based) above which a thin rule spans the table (groups of rows, e.g. the
        tie groups of a leaderboard; see :func:`tabular`).

    Returns
    -------
    str
        The ``table`` environment, ending in a newline.
    """
    frame = plain_frame(frame)
    esc = latex_escape if escape else str
    probs = set(_probability_columns(frame) if probabilities is None else probabilities)
    places = {c: defaults.LATEX_DIGITS for c in frame.columns}
    places.update(digits if isinstance(digits, Mapping) else dict.fromkeys(frame.columns, digits))
    unknown = [c for c in (best or {}) if c not in frame.columns]
    if unknown:
        raise BayesIRError(f"best: no column {unknown[0]!r} in the table")
    if bold is not None:
        strong = _mask(bold, frame, "bold")
    else:
        strong = _mask({c: best_cells(frame[c], how) for c, how in (best or {}).items()},
                       frame, "best")  # fmt: skip
        if best:
            bold_note = bold_note or _best_note(best)
    masks = [(note, _mask(cells, frame, "marks")) for note, cells in (marks or {}).items()]
    used = [(note, mask) for note, mask in masks if mask.to_numpy().any()]  # only marks shown
    if len(used) > len(MARK_SYMBOLS):
        raise BayesIRError(f"marks: {len(used)} meanings, but at most {len(MARK_SYMBOLS)} symbols")
    marked = [
        (symbol, note, mask) for symbol, (note, mask) in zip(MARK_SYMBOLS, used, strict=False)
    ]

    def cell(value: Any, col: str) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
            return missing
        if col in probs and isinstance(value, float | np.floating):
            return latex_escape(format_probability(float(value)))
        if isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool | np.bool_
        ):
            return latex_number(value, places[col])
        return esc(str(value))

    rows = []
    for i, values in enumerate(frame.itertuples(index=False, name=None)):
        cells = []
        for col, value in zip(frame.columns, values, strict=True):
            text = cell(value, col)
            if strong.at[i, col] and text:
                text = rf"\textbf{{{text}}}"
            for symbol, _, mask in marked:
                if mask.at[i, col]:
                    text += f"$^{{{symbol}}}$"
            cells.append(text)
        rows.append(cells)
    numeric = [
        pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
        for c in frame.columns
    ]
    lines = [f"$^{{{symbol}}}$ {latex_escape(note)}" for symbol, note, _ in marked]
    if bold_note and strong.to_numpy().any():
        lines.append(latex_escape(bold_note))
    lines += [latex_escape(note) for note in notes]
    return tabular(
        [esc(str(c)) for c in frame.columns],
        rows,
        align="".join("r" if n else "l" for n in numeric),
        caption=caption,
        label=label,
        notes=lines,
        rules=rules,
    )


def result_to_latex(result: Any, **options: Any) -> str:
    """Return ``result.to_frame()`` as LaTeX in the package's style: every ``to_latex()``.

    Parameters
    ----------
    result
        Any result object with ``to_frame()`` (its default arguments are used; for
        others, pass ``result.to_frame(...)`` to :func:`latex_table`).
    **options
        Options of :func:`latex_table`: ``caption``, ``label``, ``digits``, ``best``,
        ``marks``, ``notes``, ...

    Notes
    -----
    A result whose posterior failed its diagnostics (``diagnostics_passed`` False)
    says so in the first line under the table, so the warning travels with the numbers.
    """
    notes = list(options.pop("notes", ()))
    if getattr(result, "diagnostics_passed", True) is False:
        notes.insert(0, DIAGNOSTICS_FAILED)
    return latex_table(result.to_frame(), notes=notes, **options)


def tabular(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    align: str,
    caption: str | None = None,
    label: str | None = None,
    notes: Sequence[str] = (),
    rules: Sequence[int] = (),
) -> str:
    r"""Assemble cells that are LaTeX already into the package's ``table`` float.

    ``caption`` is plain text (escaped here); ``label`` is written as given; each of
    ``notes`` (LaTeX) is a line under the table in ``\footnotesize``; above each row
    listed in ``rules`` (0-based; the first row needs none) a booktabs
    ``\cmidrule`` spans every column.
    """
    if len(align) != len(header) or any(len(row) != len(header) for row in rows):
        raise BayesIRError("tabular: every row needs one cell per header")
    breaks = {int(r) for r in rules if 0 < int(r) < len(rows)}
    body = []
    for i, row in enumerate(rows):
        if i in breaks:
            body.append(rf"\cmidrule(lr){{1-{len(header)}}}")
        body.append(" & ".join(row) + r" \\")
    lines = [r"\begin{table}[tbp]", r"\centering"]
    if caption is not None:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label is not None:
        lines.append(rf"\label{{{label}}}")
    lines += [
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if notes:
        lines.append(r"\par\smallskip\footnotesize")
        lines += [f"{note}\\par" for note in notes]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
