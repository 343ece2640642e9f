r"""Blocked Gibbs sampler of the Gaussian model of any crossed design.

It generalises the two-way sampler of :mod:`bayes_ir.hierarchical.gibbs` to an
intercept per collection, several column terms, one scale per group of levels, one
residual SD per collection and effects in units of a residual SD
(:mod:`bayes_ir.hierarchical.design`). Each iteration:

1. **All effects at once given the scales.** The *rows* are the levels of the largest
   random term whose levels each lie in one residual group and are not standardised
   (topics within collections): every cell has one row, so their block of the
   posterior precision is diagonal, :math:`D_r = n_r/\sigma^2_r + 1/\tau^2_r`. Every
   other effect (intercepts, system, system x collection, ...) is a *column*
   :math:`w` (:math:`K` of them). With :math:`B_r` the count of row :math:`r`'s cells
   at each column (scaled by :math:`\sigma_r` for standardised columns), :math:`w` is
   drawn from its marginal :math:`N(M^{-1}h, M^{-1})`,

   .. math::

       M = \sum_e \frac{X_e^\top X_e}{\sigma_e^2} + P_w
           - \sum_r \frac{B_r B_r^\top}{\sigma_r^2 (n_r + \sigma_r^2/\tau_r^2)}, \qquad
       h = \sum_e \frac{X_e^\top y_e}{\sigma_e^2} + P_w m_w
           - \sum_r \frac{B_r\, y_{r\cdot}}{\sigma_r^2 (n_r + \sigma_r^2/\tau_r^2)},

   (:math:`X_e` the column design of residual group :math:`e`, :math:`P_w, m_w` the
   prior precisions and means), and then the rows from independent Gaussians. Rows
   alike in residual group, scale, zero-sum set and cell count form a *group*
   :math:`g`, and :math:`\sum_{r \in g} B_r B_r^\top`, :math:`\sum_{r\in g} B_r` and
   :math:`\sum_{r \in g} B_r y_{r\cdot}` are precomputed (on the few columns the group
   touches), so forming :math:`M` costs :math:`O(\sum_g k_g^2)` and a draw
   :math:`O(K^3 + nJ)` for :math:`n` cells and :math:`J` column terms.
   Every zero-sum set (topics of a collection, systems, systems within a collection)
   is imposed exactly by conditioning the unconstrained draw :math:`x` on
   :math:`Ax = 0` (Rue and Held 2005, section 2.3.3):
   :math:`x^* = x - U (AU)^{-1} A x` with :math:`U = Q^{-1} A^\top`, computed through
   the same Schur complement; :math:`AU` and :math:`Ax` need only the group sums and
   the rows' noise, so the rows are drawn in one pass over the cells.
2. **Scale-expansion moves** (Liu and Wu 1999): for every random term, the effects of
   each scale group and their scale are multiplied by :math:`g > 0` drawn from
   :math:`p(g) \propto \exp(-\sum_i (u_i - g v_i)^2/2\sigma_i^2 - \lambda s g)`, a
   normal truncated at 0 (the groups of one term touch disjoint cells, so they move
   together). See :mod:`bayes_ir.hierarchical.gibbs`.
3. **Every scale given the effects.** A term's scale with :math:`m` free effects of
   sum of squares :math:`S`: the independence Metropolis-Hastings step of the
   two-way sampler (proposal :math:`s^{-2} \sim \mathrm{Gamma}((m'-1)/2, S/2)`,
   :math:`m' = \max(m, 2)`). A residual SD :math:`\sigma_e`: the same with the
   residual sum of squares, or, when some effects are in its units (their mean is
   :math:`\sigma_e \delta_i`), with the conditional
   :math:`\propto \sigma^{-n} e^{-A/2\sigma^2 + B/\sigma - \lambda\sigma}`
   (:math:`A = \sum u_i^2`, :math:`B = \sum u_i\delta_i`, :math:`u_i` the score less the
   other effects) and a normal proposal for :math:`\log\sigma` at its mode.

**Designs of complete groups.** When the rows of each group have their cells at the
same columns (a complete collection or segment; a system absent from a whole collection
is allowed), every per-cell sum above is a function of few statistics, and the loop
of :func:`~bayes_ir.hierarchical.samplers.blocked_gibbs_kernel.run_design_chain` never
visits the cells. Write group :math:`g`'s scores as :math:`y_{rk}` (row :math:`r` of
:math:`R`, pattern cell :math:`k` of :math:`n`), the row sums :math:`Y_r` about their
mean :math:`\bar Y`, :math:`m_k` the pattern cell's mean score, and
:math:`y_{rk} = m_k + \delta_r + \varepsilon_{rk}` with
:math:`\delta_r = (Y_r - \bar Y)/n` (the :math:`\varepsilon` sum to zero over rows and
over cells). Given the columns, the rows are
:math:`a_r = \bar a + \kappa (Y_r - \bar Y) + \eta_r` with :math:`\kappa = 1/(n +
\sigma^2/\tau^2)` and :math:`\eta` the centred noise, so with :math:`h_k` the fit of
cell :math:`k` by the columns (less the standardised part),

.. math::

    \sum_{rk} (y_{rk} - a_r - h_k)^2 = R \sum_k (m_k - h_k - \bar a)^2
        + n \sum_r (\delta_r - a_r + \bar a)^2 + \sum_{rk} \varepsilon_{rk}^2,

and the scale-expansion statistics are sums of the same pieces. They need the noise
only through its mean :math:`\bar z`, its projection :math:`\beta = \sum_r \eta_r (Y_r
- \bar Y)/\lVert Y - \bar Y\rVert` and :math:`\sum_r \eta_r^2`: for :math:`R` i.i.d.
:math:`N(0, v)` these are :math:`\bar z \sim N(0, v/R)` and :math:`\beta \sim N(0, v)`,
independent, and :math:`\sum \eta^2 = \beta^2 + v\chi^2_{R-2}` (rotate the noise to a
basis of the constant, the centred row sums and the rest), drawn exactly in
:math:`O(1)` per group. The chain is the per-cell sampler's in distribution; an
iteration costs :math:`O(K^3 + \sum_g n_g J)` whatever the number of topics. When the
rows are kept, their noise is drawn row by row instead (:math:`O(R)` more).

Every step leaves the posterior of the design's model (:mod:`bayes_ir.hierarchical.design`,
the PyMC twin :func:`bayes_ir.hierarchical.samplers.build_design_model`) invariant;
chains run in parallel threads and start from over-dispersed moment estimates; the
first ``tune`` iterations are discarded.

References
----------
Liu, J. S., Wu, Y. N. (1999). Parameter expansion for data augmentation. *JASA* 94(448),
1264-1274.

Rue, H., Held, L. (2005). *Gaussian Markov Random Fields: Theory and Applications*.
Chapman & Hall, section 2.3.3 (sampling under a hard linear constraint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from bayes_ir import validate
from bayes_ir.errors import BayesIRError
from bayes_ir.hierarchical.design import CrossedDesign, DesignPriors
from bayes_ir.hierarchical.samplers.blocked_gibbs_kernel import run_design_chain
from bayes_ir.hierarchical.samplers.chains import (
    grow_draws,
    run_stretches,
    run_to_ess,
    stretch_rng,
)

__all__ = ["GibbsLayout", "sample_design_gibbs"]

#: Largest number of entries of the precomputed local Gram matrices (8 bytes each).
_GRAM_LIMIT: int = 50_000_000
#: Most row-effect values kept (chains x draws x rows): beyond it the rows' draws
#: (topic effects) are not stored.
ROWS_KEPT_LIMIT: int = 20_000_000
#: Most columns for which every order of the column terms is priced (K x K work each).
_ORDER_LIMIT: int = 2000
#: The layout's arrays that only the per-cell loop reads.
_CELL_ARRAYS: tuple[str, ...] = ("y", "cell_cols", "cell_res", "row_ptr", "row_scale")


def _no_pattern(n_j: int) -> dict:
    """Return the pattern arguments of :func:`run_design_chain` for a design without any."""
    return {
        "pat_ptr": np.zeros(1, dtype=np.int64),
        "pat_cols": np.zeros((0, n_j), dtype=np.int32),
        "pat_mean": np.zeros(0),
        "grp_syy": np.zeros(0),
        "grp_ess": np.zeros(0),
    }


def rows_term(design: CrossedDesign) -> int | None:
    """Index of the term whose levels are the sampler's rows (``None``: no such term).

    The largest random term that is not standardised and whose levels each lie in
    one residual group.
    """
    best, size = None, 0
    for j, t in enumerate(design.terms):
        if t.kind != "random" or t.standardized:
            continue
        res = design.residual.index
        first = np.full(t.n_levels, -1)
        first[t.index] = res
        if not np.array_equal(first[t.index], res):
            continue
        if t.n_levels > size:
            best, size = j, t.n_levels
    return best


@dataclass(frozen=True, eq=False)
class GibbsLayout:
    """The arrays the compiled loop reads, built once per design (see the module docstring).

    Attributes
    ----------
    rows
        Index of the rows' term in ``design.terms``.
    columns
        Indices of the column terms (intercept first) and their first column.
    arrays
        Keyword arguments of :func:`run_design_chain` that do not change between chains.
    scale_slices
        ``{name: slice of the scale vector}``: ``"sigma"`` (residual SDs), then each
        random term's scale name.
    n_rows, n_cols, n_scales
        R, K and P.
    pattern
        With every row group's rows at the same columns, the pattern arguments of
        :func:`run_design_chain` (:func:`row_patterns`), else ``None``.
    """

    rows: int
    columns: tuple[tuple[int, int], ...]
    arrays: dict
    pattern: dict | None
    scale_slices: dict[str, slice]
    n_rows: int
    n_cols: int
    n_scales: int

    def chain_arrays(self) -> dict:
        """Return the keyword arguments of :func:`run_design_chain` that do not change.

        With patterns, the cells' arrays are passed empty (the loop reads the groups'
        statistics instead); without, the patterns' are.
        """
        if self.pattern is None:
            n_j = self.arrays["cell_cols"].shape[1]
            return self.arrays | _no_pattern(n_j)
        empty = {k: v[:0] for k, v in self.arrays.items() if k in _CELL_ARRAYS}
        empty["row_ptr"] = self.arrays["row_ptr"][:1]  # no rows visited
        return self.arrays | empty | self.pattern

    @classmethod
    def of(cls, design: CrossedDesign, priors: DesignPriors) -> GibbsLayout:
        """Build the layout of ``design`` with ``priors``."""
        terms = design.terms
        row_j = rows_term(design)
        col_terms = column_order(design, row_j)
        n = design.n_cells
        # ---- columns
        offsets, k = [], 0
        for j in col_terms:
            offsets.append(k)
            k += terms[j].n_levels
        n_k = k
        cell_cols = np.stack(
            [terms[j].index + off for j, off in zip(col_terms, offsets, strict=True)], axis=1
        ).astype(np.int64)
        col_std = np.zeros(n_k)
        col_mu = np.zeros(n_k)
        col_prec = np.zeros(n_k)
        col_scale = -np.ones(n_k, dtype=np.int64)
        # ---- scales: residual SDs, then each random term's groups
        e_count = design.residual.n_levels
        slices = {"sigma": slice(0, e_count)}
        rates = [np.asarray(priors.residual_rate, dtype=float)]
        free = [np.bincount(design.residual.index, minlength=e_count)]
        scale0 = {}
        p = e_count
        for j, t in enumerate(terms):
            if t.kind != "random":
                continue
            scale0[j] = p
            slices[t.scale_name] = slice(p, p + t.n_scales)
            rates.append(np.asarray(priors.rates[t.name], dtype=float))
            free.append(t.free_dims())
            p += t.n_scales
        scale_rate = np.concatenate(rates)
        scale_m = np.concatenate(free).astype(np.int64)
        term_first, term_ncol, term_j, term_scale0, term_nscale = [], [], [], [], []
        cset_ptr, cset_idx = [0], []
        for jj, (j, off) in enumerate(zip(col_terms, offsets, strict=True)):
            t = terms[j]
            cols = slice(off, off + t.n_levels)
            col_std[cols] = float(t.standardized)
            if t.kind == "intercept":
                col_mu[cols] = priors.intercept_mu
                col_prec[cols] = 1.0 / np.asarray(priors.intercept_sd) ** 2
                continue
            col_scale[cols] = scale0[j] + t.scale_group
            term_first.append(off)
            term_ncol.append(t.n_levels)
            term_j.append(jj)
            term_scale0.append(scale0[j])
            term_nscale.append(t.n_scales)
            for s in np.unique(t.zero_sum[t.zero_sum >= 0]):
                cset_idx.extend((off + np.flatnonzero(t.zero_sum == s)).tolist())
                cset_ptr.append(len(cset_idx))
        # ---- rows
        if row_j is None:
            raise BayesIRError(
                "the blocked Gibbs sampler needs a random term whose levels each lie in one "
                "residual group (topics): use method='nuts'"
            )
        t = terms[row_j]
        row_of_cell = t.index
        n_r = t.n_levels
        row_scale = scale0[row_j] + t.scale_group
        row_set = t.zero_sum.astype(np.int64)
        row_scale0, row_nscale = scale0[row_j], t.n_scales
        n_row_sets = int(row_set.max() + 1) if (row_set >= 0).any() else 0
        order = np.argsort(row_of_cell, kind="stable")
        y = design.y[order]
        cell_cols = cell_cols[order]
        cell_res = design.residual.index[order].astype(np.int64)
        rsorted = row_of_cell[order]
        n_row = np.bincount(rsorted, minlength=n_r)
        row_ptr = np.concatenate([[0], np.cumsum(n_row)]).astype(np.int64)
        row_res = cell_res[row_ptr[:-1]]
        row_y = np.bincount(rsorted, weights=y, minlength=n_r)
        # ---- row groups: alike in residual group, scale, zero-sum set and count
        keys = np.stack([row_res, row_scale, row_set, n_row], axis=1)
        uniq, row_group = np.unique(keys, axis=0, return_inverse=True)
        row_group = row_group.ravel().astype(np.int64)
        b = sp.csr_matrix(
            (
                np.ones(n * cell_cols.shape[1]),
                (np.repeat(rsorted, cell_cols.shape[1]), cell_cols.ravel()),
            ),
            shape=(n_r, n_k),
        )
        b.sum_duplicates()
        grp = _local_blocks(b, row_group, uniq.shape[0], weights=row_y)
        xe = sp.csr_matrix(
            (
                np.ones(n * cell_cols.shape[1]),
                (np.repeat(np.arange(n), cell_cols.shape[1]), cell_cols.ravel()),
            ),
            shape=(n, n_k),
        )
        res = _local_blocks(xe, cell_res, e_count, weights=y)
        if grp["gram"].size + res["gram"].size > _GRAM_LIMIT:
            raise BayesIRError(
                "the design is too large for the blocked Gibbs sampler's precomputed "
                "matrices: use method='nuts'"
            )
        arrays = {
            "col_first": envelope(b),
            "y": y,
            # 32-bit indices: the per-cell passes read half the bytes (about 20% faster
            # on 20,000 cells, whose arrays then fit in the second-level cache)
            "cell_cols": cell_cols.astype(np.int32),
            "cell_res": cell_res.astype(np.int32),
            "row_ptr": row_ptr,
            "col_std": col_std,
            "col_prior_mu": col_mu,
            "col_prior_prec": col_prec,
            "col_scale": col_scale,
            "row_scale": row_scale.astype(np.int64),
            "row_set": row_set.astype(np.int64),
            "row_group": row_group,
            "row_y": row_y,
            "grp_res": uniq[:, 0].astype(np.int64),
            "grp_scale": uniq[:, 1].astype(np.int64),
            "grp_set": uniq[:, 2].astype(np.int64),
            "grp_n": uniq[:, 3].astype(float),
            "grp_rows": np.bincount(row_group, minlength=uniq.shape[0]).astype(float),
            "grp_ysum": grp["wsum"],
            "grp_ptr": grp["ptr"],
            "grp_idx": grp["idx"],
            "grp_mptr": grp["mptr"],
            "grp_gram": grp["gram"],
            "grp_bsum": grp["sum"],
            "grp_zb": grp["zb"],
            "res_ptr": res["ptr"],
            "res_idx": res["idx"],
            "res_mptr": res["mptr"],
            "res_gram": res["gram"],
            "res_h": res["zb"],
            "res_n": np.bincount(cell_res, minlength=e_count).astype(np.int64),
            "n_row_sets": n_row_sets,
            "cset_ptr": np.asarray(cset_ptr, dtype=np.int64),
            "cset_idx": np.asarray(cset_idx, dtype=np.int64),
            "term_first": np.asarray(term_first, dtype=np.int64),
            "term_ncol": np.asarray(term_ncol, dtype=np.int64),
            "term_j": np.asarray(term_j, dtype=np.int64),
            "term_scale0": np.asarray(term_scale0, dtype=np.int64),
            "term_nscale": np.asarray(term_nscale, dtype=np.int64),
            "row_scale0": int(row_scale0),
            "row_nscale": int(row_nscale),
            "scale_rate": scale_rate,
            "scale_m": scale_m,
            "has_std": bool(col_std.any()),
        }
        return cls(
            rows=row_j,
            pattern=row_patterns(
                cell_cols, y, row_ptr, row_group, uniq.shape[0], row_y, arrays["grp_rows"]
            ),
            columns=tuple(zip(col_terms, offsets, strict=True)),
            arrays=arrays,
            scale_slices=slices,
            n_rows=n_r,
            n_cols=n_k,
            n_scales=int(scale_rate.size),
        )


def row_patterns(
    cell_cols: np.ndarray,
    y: np.ndarray,
    row_ptr: np.ndarray,
    row_group: np.ndarray,
    n_groups: int,
    row_y: np.ndarray,
    grp_rows: np.ndarray,
) -> dict | None:
    r"""Each row group's pattern and statistics, when its rows all have the same columns.

    Cells sorted by row (``row_ptr``); ``None`` when some group's rows differ in the
    columns of their cells (a gap that not every row of the group shares). With
    :math:`y_{rk}` the score of row :math:`r` at the group's pattern cell :math:`k`
    (of :math:`n`), :math:`Y_r` the row sums and :math:`\bar Y` their mean:
    ``pat_mean`` :math:`m_k = \bar y_{\cdot k}`, ``grp_syy``
    :math:`\sum_r (Y_r - \bar Y)^2` and ``grp_ess``
    :math:`\sum_{rk} (y_{rk} - m_k - (Y_r - \bar Y)/n)^2`, the statistics
    :func:`run_design_chain` reads instead of the cells.
    """
    n, n_j = cell_cols.shape
    row_of = np.repeat(np.arange(row_ptr.size - 1), np.diff(row_ptr))
    keys = [cell_cols[:, j] for j in range(n_j - 1, -1, -1)]
    order = np.lexsort([*keys, row_of])  # by row, then by columns within a row
    cols, ys = cell_cols[order], y[order]
    pos = np.arange(n) - row_ptr[row_of]
    first = np.unique(row_group, return_index=True)[1]  # each group's first row
    ref = row_ptr[first[row_group[row_of]]] + pos
    if not np.array_equal(cols, cols[ref]):
        return None
    size = np.diff(row_ptr)[first]
    pat_ptr = np.concatenate([[0], np.cumsum(size)]).astype(np.int64)
    slot = pat_ptr[row_group[row_of]] + pos
    pat_mean = np.bincount(slot, weights=ys, minlength=pat_ptr[-1]) / np.repeat(grp_rows, size)
    ybar = np.bincount(row_group, weights=row_y, minlength=n_groups) / grp_rows
    dev = row_y - ybar[row_group]
    grp_syy = np.bincount(row_group, weights=dev**2, minlength=n_groups)
    inter = ys - pat_mean[slot] - (dev / size[row_group])[row_of]
    grp_ess = np.bincount(row_group[row_of], weights=inter**2, minlength=n_groups)
    starts = (
        np.repeat(row_ptr[first], size) + np.arange(pat_ptr[-1]) - np.repeat(pat_ptr[:-1], size)
    )
    return {
        "pat_ptr": pat_ptr,
        "pat_cols": np.ascontiguousarray(cols[starts], dtype=np.int32),
        "pat_mean": pat_mean,
        "grp_syy": grp_syy,
        "grp_ess": grp_ess,
    }


def envelope(b: sp.spmatrix) -> np.ndarray:
    r"""First column of every row of the lower triangle of :math:`B^\top B`'s pattern.

    ``b`` is any matrix whose columns share a row exactly where the posterior precision
    :math:`M` of the columns has a nonzero (the rows x columns count matrix). The
    Cholesky factor of :math:`M` has no nonzero left of it (its envelope; George and
    Liu 1981, chapter 4), which the compiled factorisation skips.
    """
    pattern = (b.T @ b).tocsr()
    pattern.sum_duplicates()
    n = pattern.shape[0]
    first = np.arange(n, dtype=np.int64)
    rows = np.repeat(np.arange(n), np.diff(pattern.indptr))
    np.minimum.at(first, rows, pattern.indices.astype(np.int64))
    return first


def column_order(design: CrossedDesign, row_j: int | None) -> list[int]:
    r"""Return the column terms in the order whose Cholesky factorisation is cheapest.

    With :math:`f_i` the first column of row :math:`i` of the columns' precision
    (:func:`envelope`), the factorisation computes
    :math:`\sum_i \sum_{f_i \le j < i} (j - \max(f_i, f_j))` products. A term whose
    levels do not touch each other (replicates nested in systems: a block-diagonal
    block) placed first keeps its block sparse, and the intercept, which touches every
    column, goes last. Every order of the (at most a handful of) column terms is tried
    on designs of up to :data:`_ORDER_LIMIT` columns; the design's own order is kept
    unless another is at least twice as cheap.
    """
    import itertools

    natural = [j for j in range(len(design.terms)) if j != row_j]
    sizes = [design.terms[j].n_levels for j in natural]
    n_k = int(sum(sizes))
    if row_j is None or len(natural) > 6 or n_k > _ORDER_LIMIT:
        return natural
    rows = design.terms[row_j].index
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    cols = np.concatenate(
        [design.terms[j].index + o for j, o in zip(natural, offsets[:-1], strict=True)]
    )
    b = sp.csr_matrix(
        (np.ones(cols.size), (np.tile(rows, len(natural)), cols)),
        shape=(design.terms[row_j].n_levels, n_k),
    )
    pattern = (b.T @ b).tocsr()
    owner = np.repeat(np.arange(len(natural)), sizes)
    local = np.arange(n_k) - offsets[owner]
    col = np.arange(n_k)

    def cost(order: tuple[int, ...]) -> float:
        start = np.empty(len(natural), dtype=np.int64)
        start[list(order)] = np.concatenate([[0], np.cumsum([sizes[k] for k in order])])[:-1]
        new = start[owner] + local
        first = np.empty(n_k, dtype=np.int64)
        first[new] = np.minimum.reduceat(new[pattern.indices], pattern.indptr[:-1])
        inside = (col[None, :] >= first[:, None]) & (col[None, :] < col[:, None])
        work = col[None, :] - np.maximum(first[:, None], first[None, :])
        return float(np.sum(work, where=inside))

    base = tuple(range(len(natural)))
    best = min(itertools.permutations(base), key=cost)
    if cost(best) * 2 > cost(base):
        return natural
    return [natural[k] for k in best]


def _local_blocks(
    b: sp.csr_matrix, group: np.ndarray, n_groups: int, *, weights: np.ndarray
) -> dict:
    r"""Sum the rows of ``b`` by group, on the columns each group touches.

    Per group: the columns touched (in ascending order: the compiled loop fills the
    lower triangle of :math:`M` from them), :math:`\sum B_r B_r^\top` on them,
    :math:`\sum B_r`, :math:`\sum B_r w_r` and :math:`\sum w_r`, flattened.
    """
    ptr, idx, mptr, gram, sums, zb, wsum = [0], [], [0], [], [], [], []
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(n_groups + 1))
    for g in range(n_groups):
        rows = order[bounds[g] : bounds[g + 1]]
        part = b[rows]
        cols = np.unique(part.indices)
        local = part[:, cols]
        gram.append((local.T @ local).toarray().ravel())
        sums.append(np.asarray(local.sum(axis=0)).ravel())
        zb.append(np.asarray(local.T @ weights[rows]).ravel())
        wsum.append(float(weights[rows].sum()))
        idx.extend(cols.tolist())
        ptr.append(len(idx))
        mptr.append(mptr[-1] + cols.size**2)
    return {
        "ptr": np.asarray(ptr, dtype=np.int64),
        "idx": np.asarray(idx, dtype=np.int64),
        "mptr": np.asarray(mptr, dtype=np.int64),
        "gram": np.concatenate(gram) if gram else np.zeros(0),
        "sum": np.concatenate(sums) if sums else np.zeros(0),
        "zb": np.concatenate(zb) if zb else np.zeros(0),
        "wsum": np.asarray(wsum),
    }


def moment_scales(design: CrossedDesign) -> np.ndarray:
    """Moment estimates of every scale (residual SDs first, then each random term's).

    From a few sweeps of backfitting over the terms (each term's level means of the
    partial residuals, centred within its zero-sum sets); standardised terms' SDs are
    divided by the geometric mean of the residual SDs.
    """
    y = design.y
    fits = [np.zeros(t.n_levels) for t in design.terms]
    for _ in range(10):
        for j, t in enumerate(design.terms):
            others = sum(fits[i][design.terms[i].index] for i in range(len(fits)) if i != j)
            part = y - others
            est = np.bincount(t.index, part, t.n_levels) / np.maximum(t.cells_per_level(), 1)
            for s in np.unique(t.zero_sum[t.zero_sum >= 0]):
                sel = t.zero_sum == s
                est[sel] -= est[sel].mean()
            fits[j] = est
    resid = y - sum(f[t.index] for f, t in zip(fits, design.terms, strict=True))
    res = design.residual
    spread = max(float(np.std(y)), 1e-8)
    sig = np.array(
        [
            max(float(np.sqrt(np.mean(resid[res.index == g] ** 2))), 1e-3 * spread)
            for g in range(res.n_levels)
        ]
    )
    guess = [sig]
    for t, f in zip(design.terms, fits, strict=True):
        if t.kind != "random":
            continue
        unit = 1.0
        if t.standardized:
            unit = float(np.exp(np.mean(np.log(sig))))
        sd = np.array(
            [
                max(float(np.std(f[t.scale_group == g])) / unit, 1e-3 * spread / unit)
                for g in range(t.n_scales)
            ]
        )
        guess.append(sd)
    return np.concatenate(guess)


def read_by_results(design: CrossedDesign, layout: GibbsLayout) -> np.ndarray:
    """Which of the sampler's quantities (columns, then scales) the results read.

    The effects of every term with a system component (the contrasts, per group and
    overall, are made of them) and the scale of every term that crosses systems with
    another factor (system x collection, system x segment, topic x system, replicate:
    the predictive contrast on a new collection, segment, topic or run reads it). Not
    read beyond the diagnostics gate: the intercepts, the residual and topic SDs and
    the SD of the system effects themselves.
    """
    read = np.zeros(layout.n_cols + layout.n_scales, dtype=bool)
    for j, off in layout.columns:
        t = design.terms[j]
        read[off : off + t.n_levels] = "system" in t.components
    for t in design.terms:
        if t.kind == "random" and "system" in t.components and len(t.components) > 1:
            sl = layout.scale_slices[t.scale_name]
            read[layout.n_cols + sl.start : layout.n_cols + sl.stop] = True
    return read


def sample_design_gibbs(
    design: CrossedDesign,
    priors: DesignPriors,
    *,
    chains: int,
    draws: int,
    tune: int,
    seed: int,
    keep_rows: bool | None = None,
    label: str = "sampling (Gibbs)",
    ess: float | None = None,
    ess_rest: float | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Sample the Gaussian model of ``design`` by blocked Gibbs sampling.

    Parameters
    ----------
    design, priors
        The design and its resolved priors.
    chains, draws, tune
        ``chains`` chains of ``tune`` discarded and ``draws`` kept iterations (with
        ``ess``, ``draws`` is the most).
    seed
        Random seed (each chain has its own streams; the same seed, the same draws).
    keep_rows
        Store the rows' effects (topics within collections); default: when chains x
        draws x rows is at most :data:`ROWS_KEPT_LIMIT`.
    label
        What the progress report calls the work.
    ess, ess_rest
        Bulk and tail ESS to reach: a pilot sets the draws
        (:func:`~bayes_ir.hierarchical.samplers.chains.run_to_ess`) from the bulk and
        tail ESS per draw of the scales and the columns' effects, the quantities the
        diagnostics check (the rows' effects, topics, are drawn jointly with them given
        the scales). ``ess`` is asked of what the results read (:func:`read_by_results`:
        the effects the contrasts are made of and the scales of the terms that cross
        systems with another factor), ``ess_rest`` (default ``ess``) of the intercepts
        and the other scales, which only the diagnostics gate reads.

    Returns
    -------
    posterior : dict
        ``{term name: (chains, draws, levels)}`` for every term kept (``b0``
        included) and ``{scale name: (chains, draws, groups)}`` (``sigma`` the
        residual SDs).
    info : dict
        ``accept_<scale name>``: mean acceptance rate of each scale's MH step; with
        ``ess``, the pilot's ESS per draw ``pilot_ess_per_draw``.
    """
    chains = validate.positive_int("chains", chains)
    draws = validate.positive_int("draws", draws)
    tune = validate.positive_int("tune", tune, minimum=0)
    layout = GibbsLayout.of(design, priors)
    rows = {"keep": layout.rows is not None and (keep_rows is None or bool(keep_rows))}

    def check(total: int) -> None:  # the rows are kept while the draws allow it
        if keep_rows is None:
            rows["keep"] = rows["keep"] and chains * total * layout.n_rows <= ROWS_KEPT_LIMIT
        values = layout.n_cols + layout.n_scales + (layout.n_rows if rows["keep"] else 0)
        validate.memory("the Gibbs draws", {"chains": chains, "draws": total, "values": values})

    rng = np.random.default_rng([int(seed), 29])
    # over-dispersed starts: the moment estimates times exp(U(-0.5, 0.5))
    starts = moment_scales(design) * np.exp(rng.uniform(-0.5, 0.5, (chains, layout.n_scales)))
    out: dict[str, np.ndarray] = {}
    no_rows = np.empty((1, 0))
    accepted = np.zeros((chains, layout.n_scales))

    arrays = layout.chain_arrays()

    def run(n_draws: int, n_tune: int, kept: int, phase: str) -> None:
        """Run every chain on by ``n_tune`` + ``n_draws`` iterations, kept from ``kept``."""
        salt = 30 if phase == "rest" else 29

        def stretch(c: int, k: int, i0: int, i1: int, n_tune: int) -> None:
            kept_draws = slice(kept + i0, kept + i1)
            run_design_chain(
                **arrays,
                state=starts[c],
                tune=n_tune,
                rng=stretch_rng(seed, salt, c, k),
                out_scales=out["scales"][c, kept_draws],
                out_cols=out["cols"][c, kept_draws],
                out_rows=out["rows"][c, kept_draws] if rows["keep"] else no_rows,
                keep_rows=rows["keep"],
                accepted=accepted[c],
            )

        what = f"{label}: pilot" if phase == "pilot" else label
        run_stretches(stretch, chains=chains, tune=n_tune, draws=n_draws, label=what)

    def grow(total: int) -> None:
        widths: dict[str, tuple[int, ...]] = {
            "scales": (layout.n_scales,),
            "cols": (layout.n_cols,),
        }
        if rows["keep"]:
            widths["rows"] = (layout.n_rows,)
        else:
            out.pop("rows", None)
        grow_draws(out, widths, chains, total)

    target = None
    if ess is not None:
        read = read_by_results(design, layout)
        target = np.where(read, ess, ess if ess_rest is None else ess_rest)
    draws, per_draw = run_to_ess(
        run,
        grow,
        lambda: np.concatenate([out["cols"], out["scales"]], axis=-1),
        chains=chains,
        draws=draws,
        tune=tune,
        ess=target,
        check=check,
    )
    posterior: dict[str, np.ndarray] = {}
    for j, off in layout.columns:
        t = design.terms[j]
        posterior[t.name] = out["cols"][..., off : off + t.n_levels]
    if rows["keep"] and layout.rows is not None:
        posterior[design.terms[layout.rows].name] = out["rows"]
    rates = accepted.sum(axis=0) / (chains * draws)
    info = {} if per_draw is None else {"pilot_ess_per_draw": per_draw}
    for name, sl in layout.scale_slices.items():
        posterior[name] = out["scales"][..., sl]
        info[f"accept_{name}"] = float(rates[sl].mean())
    return posterior, info
