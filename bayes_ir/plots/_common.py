"""What every figure shares: the data it shows, its axes, a measure's range."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from bayes_ir.errors import OptionError
from bayes_ir.measures import measure_range

__all__ = ["bounded", "data_names", "grid_axes", "one_axes", "where"]


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
