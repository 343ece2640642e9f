"""Numbers as the package prints them: one formatter of probabilities and p-values."""

from __future__ import annotations

import numpy as np

__all__ = ["format_probability"]


def format_probability(p: float) -> str:
    """Three decimals, but ``>0.999`` and ``<0.001`` rather than 1.000 and 0.000.

    Used for posterior probabilities and p-values alike, in text, Markdown, LaTeX and
    HTML. A probability estimated as a share of posterior draws is never certainty (all
    draws on one side says only that it exceeds about 1 - 1/draws), and a p-value is
    never exactly 0, so the ends are written as bounds.

    Notes
    -----
    ``p < 0.001`` gives ``<0.001``, ``p > 0.999`` gives ``>0.999``, anything else
    ``f"{p:.3f}"``; a value that is not finite gives ``nan``.
    """
    if not np.isfinite(p):
        return "nan"
    if p > 0.999:
        return ">0.999"
    if p < 0.001:
        return "<0.001"
    return f"{p:.3f}"
