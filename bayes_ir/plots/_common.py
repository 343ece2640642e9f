"""What every figure shares: the data it shows, its axes, a measure's range."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from bayes_ir.errors import OptionError
from bayes_ir.measures import measure_range

__all__ = [
    "MISFIT_COLOR",
    "bounded",
    "data_names",
    "grid_axes",
    "mark_tick_labels",
    "misfit_note",
    "one_axes",
    "thinned",
    "where",
]

#: Colour of the names (and the note) of systems the model does not describe.
MISFIT_COLOR = "#c0392b"


def data_names(result: Any) -> tuple[str, str]:
    """Return ``(measure, collection)`` of a result; empty strings when it does not know.

    Read from the result's own ``measure`` and ``collection`` fields, else from the score
    table of its ``fit`` (or its ``table`` when that is a :class:`~bayes_ir.ScoreTable`).
    """
    measure = str(getattr(result, "measure", "") or "")
    collection = str(getattr(result, "collection", "") or "")
    table: Any = getattr(result, "table", None)
    if not hasattr(table, "measures"):
        table = getattr(getattr(result, "fit", None), "table", None)
    if hasattr(table, "measures") and hasattr(table, "collections"):
        if not measure and len(table.measures) == 1:
            measure = str(table.measures[0])
        if not collection and len(table.collections) == 1:
            collection = str(table.collections[0])
    return measure, collection


def where(result: Any) -> str:
    """``"AP on robust04"``, or whichever of the two is known (``""`` when neither)."""
    measure, collection = data_names(result)
    if measure and collection:
        return f"{measure} on {collection}"
    return measure or collection


def bounded(measure: str | None) -> tuple[float, float] | None:
    """Return the finite range of a measure (``(0, 1)`` for AP, nDCG, ...), else ``None``."""
    low, high = measure_range(measure or None)
    return (low, high) if np.isfinite(low) and np.isfinite(high) else None


def one_axes(ax: Any, figsize: tuple[float, float], **kwargs: Any) -> tuple[Any, Any]:
    """``(figure, axes)``: the given axes and its figure, or a new figure of ``figsize``."""
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, **kwargs)
        return fig, ax
    return ax.figure, ax


def grid_axes(
    axes: Any, nrows: int, ncols: int, figsize: tuple[float, float], **kwargs: Any
) -> tuple[Any, np.ndarray]:
    """``(figure, axes as an (nrows, ncols) array)``: new, or the ``axes`` given.

    Raises
    ------
    OptionError
        ``axes`` holds fewer than ``nrows * ncols`` axes.
    """
    if axes is None:
        fig, grid = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, **kwargs)
        return fig, grid
    flat = np.asarray(axes, dtype=object).ravel()
    if flat.size < nrows * ncols:
        raise OptionError(f"axes: this figure needs {nrows * ncols} axes, got {flat.size}")
    return flat[0].figure, flat[: nrows * ncols].reshape(nrows, ncols)


def thinned(labels: list[str], limit: int, *, keep: Iterable[str] = ()) -> tuple[list[str], int]:
    """Blank all but every k-th label so that at most about ``limit`` are written.

    Returns the labels (``""`` where blanked) and k (1: all kept). Labels in ``keep``
    (the champion, the challengers) are always written.
    """
    step = max(1, math.ceil(len(labels) / limit)) if limit > 0 else len(labels) or 1
    kept = set(keep)
    return [
        label if (i % step == 0 or label in kept) else "" for i, label in enumerate(labels)
    ], step


def misfit_note(
    fig: Any, misfit: Iterable[str], *, champion: str | None = None, text: str | None = None
) -> None:
    """Write the misfit legend under ``fig`` in :data:`MISFIT_COLOR` (nothing when none).

    The legend is a figure legend placed outside the axes ("outside lower left"), so
    that a figure with the constrained layout makes room for it; the text
    (:func:`~bayes_ir.report.marks.misfit_caption`, or ``text``) is wrapped to the
    figure's width.
    """
    from bayes_ir.report.marks import misfit_caption

    misfit = list(misfit)
    text = (text or misfit_caption(misfit, champion=champion)) if misfit else ""
    if not text:
        return
    width = max(40, int(fig.get_figwidth() * 12))  # characters of "small" text per line
    handle = Line2D([], [], linestyle="none")
    fig.legend([handle], [textwrap.fill(text, width)], loc="outside lower left",
               handlelength=0, handletextpad=0, frameon=False, fontsize="small",
               labelcolor=MISFIT_COLOR)  # fmt: skip


def mark_tick_labels(labels: Iterable[Any], misfit: Iterable[str]) -> None:
    """Colour the tick labels whose text names a system of ``misfit`` (marked with †)."""
    from bayes_ir.report.marks import MISFIT_MARK

    names = set(misfit)
    for label in labels:
        text = label.get_text()
        if MISFIT_MARK in text and any(name in text for name in names):
            label.set_color(MISFIT_COLOR)
