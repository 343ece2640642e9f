"""Choosing the rows of one or more measures in inputs that hold several."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.measures import canonical_measure


def keep_measures(
    names: pd.Series,
    measure: str | Sequence[str] | None,
    *,
    source: str,
    require: bool = False,
) -> np.ndarray | None:
    """Boolean mask of the rows whose measure is one of ``measure``; ``None`` keeps all.

    A wanted name matches the names as written first, else by its canonical spelling
    (:func:`~bayes_ir.measures.canonical_measure`: ``map`` is ``AP``).

    Parameters
    ----------
    names
        The measure of each row, as written.
    measure
        One name, several, or ``None`` (keep every row).
    source
        Names the input in errors.
    require
        Refuse ``measure=None`` when the rows hold several measures.

    Raises
    ------
    ScoreTableError
        A wanted measure no row has (listing those present); several measures and
        ``measure=None`` when ``require``.
    """
    names = names.astype(str).str.strip()
    present = list(pd.unique(names))
    if measure is None:
        if require and len(present) > 1:
            raise ScoreTableError(
                f"the scores hold {len(present)} measures ({_listed(present)}): pass "
                "measure= to choose one (or a list of several)",
                source=source,
            )
        return None
    keep = np.zeros(len(names), dtype=bool)
    for wanted in [measure] if isinstance(measure, str) else list(measure):
        hit = (names == wanted).to_numpy()
        if not hit.any():
            target = canonical_measure(wanted)
            hit = names.isin([m for m in present if canonical_measure(m) == target]).to_numpy()
        if not hit.any():
            raise ScoreTableError(
                f"no rows with measure {wanted!r} (have: {_listed(present)})", source=source
            )
        keep |= hit
    return keep


def _listed(names: list[str], n: int = 10) -> str:
    return ", ".join(map(str, names[:n])) + (", ..." if len(names) > n else "")
