"""Highest-density intervals of many quantities at once (ArviZ's ``hdi``, vectorised)."""

from __future__ import annotations

import numpy as np

__all__ = ["hdi_bounds"]


def hdi_bounds(flat: np.ndarray, prob: float, *, sorted_rows: bool = False) -> np.ndarray:
    r"""Shortest interval holding ``prob`` of the draws of each row of ``flat`` (K, S).

    ArviZ's ``hdi(method="nearest")`` (:func:`arviz_stats.hdi`), written again here for
    every row at once: importing :mod:`arviz_stats` costs more than a second, more than
    a whole fit of a small table (the tests check that the two agree).

    Parameters
    ----------
    flat
        Draws, one row per quantity.
    prob
        Probability mass of the interval, in (0, 1).
    sorted_rows
        The rows of ``flat`` are already sorted (they are not sorted again).

    Returns
    -------
    numpy.ndarray
        Shape (K, 2): lower and upper bound of each row.

    Notes
    -----
    With the draws sorted, :math:`m = \min(\lfloor p S \rfloor, S - 1)`; the interval is
    :math:`[x_{(i)}, x_{(i + m)}]` for the first :math:`i` minimising
    :math:`x_{(i + m)} - x_{(i)}`.

    References
    ----------
    Hyndman, R. J. (1996). Computing and graphing highest density regions. *The American
    Statistician* 50(2), 120-126.
    """
    flat = np.asarray(flat, dtype=float)
    if not sorted_rows:
        flat = np.sort(flat, axis=1)
    n = flat.shape[1]
    inc = min(int(np.floor(prob * n)), n - 1)
    width = flat[:, inc:] - flat[:, : n - inc]
    start = np.argmin(width, axis=1)
    rows = np.arange(flat.shape[0])
    return np.column_stack([flat[rows, start], flat[rows, start + inc]])
