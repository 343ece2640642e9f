r"""Terms of a crossed design: what one term of the linear predictor is, and how to make one.

A *term* is one set of effects in the linear predictor of a score,

.. math::

    y_i = \sum_{j} f_{j,i}\, \theta^{(j)}_{\ell_j(i)} + e_i, \qquad
    e_i \sim N(0, \sigma^2_{g(i)}),

with :math:`\ell_j(i)` the level of term :math:`j` that cell :math:`i` has (every cell
has exactly one level of every term), :math:`f_{j,i} = 1`, or :math:`\sigma_{g(i)}` for
a *standardised* term (its effects are in units of the cell's residual SD). A term is

* an **intercept**: one level per group of cells (collection), each with its own fixed
  Normal prior; or
* a **random** term: its levels are :math:`\theta_\ell \sim N(0, s^2_{h(\ell)})`, with
  one scale per *scale group* :math:`h` (one topic SD per collection, one system SD),
  and optionally conditioned to sum to zero over each *zero-sum set* of levels
  (the ``ZeroSumNormal`` of the one-collection model: an i.i.d. normal conditioned on
  its sum, Rue and Held 2005, section 2.3.3).

Every sampler reads the same :class:`Term` objects; a new kind of effect (system x
language, replicate) is a new term built by :func:`random_term`, nothing else.

References
----------
Rue, H., Held, L. (2005). *Gaussian Markov Random Fields: Theory and Applications*.
Chapman & Hall, section 2.3.3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayes_ir.errors import BayesIRError

__all__ = ["Term", "intercept_term", "random_term"]


@dataclass(frozen=True, eq=False)
class Term:
    """One term of a crossed design.

    Attributes
    ----------
    name
        ``"b0"`` (the intercept), ``"topic"``, ``"system"``, ``"system:collection"``,
        ``"system:segment"`` (later ``"replicate"``, ``"topic:system"``).
    index
        Level of every observed cell, shape (n,), integers in ``[0, n_levels)``.
    levels
        Label of every level (unique), e.g. ``"trec-covid|bm25"`` for an interaction.
    components
        ``{factor: labels}``: the label of every level in each factor the term
        crosses (``{"system": ..., "collection": ...}``); results read these.
    kind
        ``"intercept"`` (fixed Normal prior per level) or ``"random"``.
    scale_group
        Scale group of every level (random terms; intercepts: the group of cells
        whose scores set its prior), integers in ``[0, len(scale_names))``.
    scale_names
        Label of every scale group (a collection's name; ``("all",)`` for one scale).
    scale_dim
        Name of the factor the scale groups are levels of (``"collection"``), or
        ``None`` for one scale.
    zero_sum
        Zero-sum set of every level (``-1``: unconstrained).
    standardized
        Whether the term's effects are in units of the residual SD of each cell.
    """

    name: str
    index: np.ndarray
    levels: tuple[str, ...]
    components: Mapping[str, tuple[str, ...]]
    kind: str
    scale_group: np.ndarray
    scale_names: tuple[str, ...]
    scale_dim: str | None
    zero_sum: np.ndarray
    standardized: bool = False

    def __post_init__(self) -> None:
        n_levels = len(self.levels)
        if self.kind not in ("intercept", "random"):
            raise BayesIRError(f"term {self.name!r}: kind must be 'intercept' or 'random'")
        for label, arr, top in (
            ("index", self.index, n_levels),
            ("scale_group", self.scale_group, len(self.scale_names)),
        ):
            if arr.size and (arr.min() < 0 or arr.max() >= top):
                raise BayesIRError(f"term {self.name!r}: {label} out of range")
        if self.scale_group.size != n_levels or self.zero_sum.size != n_levels:
            raise BayesIRError(f"term {self.name!r}: one scale group and zero-sum set per level")
        for key, labels in self.components.items():
            if len(labels) != n_levels:
                raise BayesIRError(f"term {self.name!r}: component {key!r} needs a label per level")
        sets = self.zero_sum[self.zero_sum >= 0]
        for s in np.unique(sets):
            groups = np.unique(self.scale_group[self.zero_sum == s])
            if groups.size != 1:
                raise BayesIRError(f"term {self.name!r}: a zero-sum set spans several scales")

    @property
    def n_levels(self) -> int:
        """Number of levels."""
        return len(self.levels)

    @property
    def n_scales(self) -> int:
        """Number of scale groups."""
        return len(self.scale_names)

    @property
    def scale_name(self) -> str:
        """Name of the term's scale variable: ``sigma_<term>`` (``:`` written ``_``)."""
        return f"sigma_{self.dim}"

    @property
    def dim(self) -> str:
        """Name of the term's dimension in a posterior (``:`` written ``_``)."""
        return self.name.replace(":", "_")

    def free_dims(self) -> np.ndarray:
        """Free dimensions per scale group: its levels less its zero-sum sets."""
        levels = np.bincount(self.scale_group, minlength=self.n_scales)
        sets = self.zero_sum >= 0
        if not sets.any():
            return levels
        _, first = np.unique(self.zero_sum[sets], return_index=True)
        return levels - np.bincount(self.scale_group[sets][first], minlength=self.n_scales)

    def cells_per_level(self) -> np.ndarray:
        """Observed cells of every level."""
        return np.bincount(self.index, minlength=self.n_levels)


def _factorize(keys: Sequence[tuple[str, ...]]) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    """Integer codes of ``keys`` (tuples of labels) in order of first appearance."""
    codes, uniques = pd.factorize(pd.Series(list(keys), dtype=object), sort=False)
    return codes.astype(np.int64), [tuple(u) for u in uniques]


def random_term(
    name: str,
    cells: Mapping[str, Sequence[str] | np.ndarray],
    *,
    factors: Sequence[str] | None = None,
    scale_by: str | None = None,
    zero_sum_by: str | None | bool = None,
    standardized: bool = False,
    order: Mapping[str, Sequence[str]] | None = None,
) -> Term:
    """Build a random term from the labels of its factors in every cell.

    Parameters
    ----------
    name
        The term's name (``"system:collection"``).
    cells
        ``{factor: label of every cell}`` of each factor the term crosses (their
        combinations are the levels) and of the factors named by ``scale_by`` and
        ``zero_sum_by``.
    factors
        The factors the term crosses (default: the parts of ``name`` split at ``:``);
        topics within collections are the term ``"topic"`` crossing
        ``("collection", "topic")``.
    scale_by
        Factor whose levels get one scale each (``None``: one scale for the term).
    zero_sum_by
        Factor within each of whose levels the effects sum to zero; ``True``: over all
        levels; ``None`` or ``False``: no constraint.
    standardized
        Effects in units of each cell's residual SD.
    order
        ``{factor: labels in order}`` to sort the levels by (default: first appearance).

    Returns
    -------
    Term
    """
    factors = list(name.split(":") if factors is None else factors)
    for f in (*factors, *(x for x in (scale_by, zero_sum_by) if isinstance(x, str))):
        if f not in cells:
            raise BayesIRError(f"term {name!r} needs the labels of {f!r} in every cell")
    columns = {f: np.asarray(cells[f]).astype(str) for f in factors}
    n = len(next(iter(columns.values())))
    keys = list(zip(*(columns[f] for f in factors), strict=True))
    index, levels = _factorize(keys)
    if order:
        rank = [
            tuple(
                (list(order[f]).index(lab) if f in order and lab in order[f] else 0)
                for f, lab in zip(factors, lev, strict=True)
            )
            for lev in levels
        ]
        perm = sorted(range(len(levels)), key=lambda k: rank[k])
        inverse = np.empty(len(levels), dtype=np.int64)
        inverse[perm] = np.arange(len(levels))
        index = inverse[index]
        levels = [levels[k] for k in perm]
    first = np.zeros(len(levels), dtype=np.int64)
    first[index[::-1]] = np.arange(n)[::-1]  # a cell of each level

    def per_level(factor: str) -> np.ndarray:
        return np.asarray(cells[factor]).astype(str)[first]

    if scale_by is None:
        scale_group = np.zeros(len(levels), dtype=np.int64)
        scale_names: tuple[str, ...] = ("all",)
    else:
        scale_group, uniq = pd.factorize(per_level(scale_by), sort=False)
        scale_names = tuple(map(str, uniq))
        scale_group = scale_group.astype(np.int64)
    if zero_sum_by is True:
        zero_sum = np.zeros(len(levels), dtype=np.int64)
    elif not zero_sum_by:
        zero_sum = -np.ones(len(levels), dtype=np.int64)
    else:
        zero_sum = pd.factorize(per_level(str(zero_sum_by)), sort=False)[0].astype(np.int64)
    return Term(
        name=name,
        index=index,
        levels=tuple("|".join(lev) for lev in levels),
        components={f: tuple(lev[k] for lev in levels) for k, f in enumerate(factors)},
        kind="random",
        scale_group=scale_group,
        scale_names=scale_names,
        scale_dim=scale_by,
        zero_sum=zero_sum,
        standardized=standardized,
    )


def intercept_term(groups: Sequence[str] | np.ndarray, *, factor: str = "collection") -> Term:
    """Build the intercept ``b0``: one level per group of cells (a collection), fixed priors.

    Parameters
    ----------
    groups
        Group (collection) of every cell.
    factor
        Name of the grouping factor.
    """
    labels = np.asarray(groups).astype(str)
    index, uniq = pd.factorize(labels, sort=False)
    levels = tuple(map(str, uniq))
    return Term(
        name="b0",
        index=index.astype(np.int64),
        levels=levels,
        components={factor: levels},
        kind="intercept",
        scale_group=np.arange(len(levels), dtype=np.int64),
        scale_names=levels,
        scale_dim=factor if len(levels) > 1 else None,
        zero_sum=-np.ones(len(levels), dtype=np.int64),
    )
