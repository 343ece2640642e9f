r"""Compact letter display of all-pairs tests (Piepho 2004): systems sharing a letter do not differ.

The display turns the :math:`S(S-1)/2` rejections of an all-pairs test (e.g.
:class:`~bayes_ir.frequentist.glm.TukeyHSDResult`) into one short string per system, so
that a 45-system comparison reads as a column of letters rather than 990 rows.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from bayes_ir.errors import OptionError

__all__ = ["compact_letter_display"]

#: The alphabet, as R's ``multcomp::cld`` uses it: a-z, then A-Z, then ".a", ".b", ...
_LETTERS = string.ascii_lowercase + string.ascii_uppercase


def _letter_names(n: int) -> list[str]:
    """Name ``n`` letters ``a .. z, A .. Z, .a .. .Z, ..a ...`` (multcomp's names)."""
    return ["." * (k // len(_LETTERS)) + _LETTERS[k % len(_LETTERS)] for k in range(n)]


def _absorb(columns: list[np.ndarray]) -> list[np.ndarray]:
    """Drop every column whose systems are all in another column (the first of equals stays)."""
    held = np.array(columns, dtype=np.int64)
    outside = held @ (1 - held).T  # [k, j]: systems of column k that column j lacks
    inside = outside == 0
    np.fill_diagonal(inside, False)
    equal = inside & inside.T
    keep = ~(inside & ~equal).any(axis=1) & ~np.tril(equal).any(axis=1)
    return [columns[k] for k in np.flatnonzero(keep)]


def _sweep(columns: list[np.ndarray]) -> list[np.ndarray]:
    """Remove redundant letters: a system keeps a letter only if some pair needs it."""
    cols = [c.copy() for c in columns]
    for k, col in enumerate(cols):
        others = np.array([c for j, c in enumerate(cols) if j != k], dtype=np.int64)
        together = others.T @ others if len(others) else np.zeros((col.size, col.size))
        for i in np.flatnonzero(col):
            partners = col.copy()
            partners[i] = False
            if not np.any(partners & (together[i] == 0)):  # every partner also shares another
                col[i] = False
    return [c for c in cols if c.any()]


def compact_letter_display(
    systems: Sequence[str], significant: Iterable[tuple[str, str]], *, monospaced: bool = False
) -> pd.Series:
    r"""Letters per system such that two systems share a letter iff they do not differ.

    Parameters
    ----------
    systems
        The systems, in the order the letters are given out: the first system gets
        ``a``, and each further letter is named by the first system (in this order) that
        carries it (give them best first to read ``a`` as "the top group").
    significant
        The pairs that differ significantly, as ``(system, system)`` tuples (e.g.
        :meth:`~bayes_ir.frequentist.glm.TukeyHSDResult.significant_pairs`).
    monospaced
        Give each letter its own column, blanks where a system lacks it (R's
        ``monospacedLetters``), so that the groups line up in a fixed-width font.

    Returns
    -------
    pandas.Series
        Indexed by ``systems``: each system's letters, e.g. ``"ab"`` (``"ab "``,
        ``"  c"`` when ``monospaced``).

    Raises
    ------
    OptionError
        A pair names a system that is not in ``systems``.

    Notes
    -----
    The insert-absorb algorithm of Piepho (2004): start from one letter held by every
    system; for each rejected pair :math:`(i, j)`, every letter held by both is split in
    two (one copy without :math:`i`, one without :math:`j`), and a letter whose systems
    are all inside another letter's is absorbed by it. Then each letter is swept from the
    systems that do not need it (every partner it connects them with shares another
    letter with them). Letters are named ``a .. z, A .. Z, .a ...`` in order of their
    first system in ``systems``, smaller groups first on ties, as R's
    ``multcomp::cld`` names them.

    References
    ----------
    Piepho, H.-P. (2004). An algorithm for a letter-based representation of all-pairwise
    comparisons. *Journal of Computational and Graphical Statistics* 13(2), 456-466.
    doi:10.1198/1061860043515
    """
    names = [str(s) for s in systems]
    index = {s: i for i, s in enumerate(names)}
    n = len(names)
    columns = [np.ones(n, dtype=bool)]
    for a, b in significant:
        if a not in index or b not in index:
            unknown = a if a not in index else b
            raise OptionError(f"significant: the pair ({a}, {b}) names {unknown!r}, not a system")
        i, j = index[a], index[b]
        split: list[np.ndarray] = []
        for col in columns:
            if col[i] and col[j]:
                without_i, without_j = col.copy(), col.copy()
                without_i[i], without_j[j] = False, False
                split += [without_j, without_i]
            else:
                split.append(col)
        columns = _absorb(split)
    columns = _sweep(sorted(columns, key=lambda c: int(c.sum())))
    columns.sort(key=lambda c: (int(np.argmax(c)), int(c.sum())))
    letters = _letter_names(len(columns))
    out = [
        "".join(
            ltr if col[s] else " " * len(ltr) * monospaced
            for ltr, col in zip(letters, columns, strict=True)
        )
        for s in range(n)
    ]
    return pd.Series(out, index=pd.Index(names, name="system"), name="letters")
