r"""Compiled iteration loop of the blocked Gibbs sampler of a crossed design.

One call of :func:`run_design_chain` runs a stretch of one chain of the sampler of
:mod:`bayes_ir.hierarchical.samplers.blocked_gibbs`, whose docstring states each step
and why it leaves the posterior invariant. Numba code, compiled once per machine
(cached on disk), releasing the GIL so that chains run in parallel threads; each call
draws from the generator it is given (one per stretch of a chain), so a chain's draws
depend on its seeds only.

The helpers that draw a scale-expansion factor and make a scale's Metropolis-Hastings
step are those of the two-way sampler (:mod:`bayes_ir.hierarchical.gibbs_kernel`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bayes_ir.hierarchical.gibbs_kernel import _expansion, _mh_scale

__all__ = ["run_design_chain"]

_jit = numba.njit(cache=True, nogil=True)


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """``sum(x * y)`` of two contiguous vectors, vectorised (the sum may be reassociated).

    Called on one-dimensional slices: LLVM vectorises this loop (about four times the
    speed of a scalar loop), but not the same loop over two-dimensional indices.
    """
    s = 0.0
    for k in range(x.size):
        s += x[k] * y[k]
    return s


@_jit
def _cholesky(m: np.ndarray, out: np.ndarray, first: np.ndarray) -> None:
    """Lower Cholesky factor of the symmetric positive definite ``m`` into ``out``.

    Only the lower triangle of ``m`` is read, and only the envelope of ``out`` is
    written: ``first[i]`` is the first nonzero column of row ``i`` of ``m``'s lower
    triangle, the factor has no nonzero left of it (George and Liu 1981, chapter 4),
    and every reader of the factor (:func:`_envelope_solve`) skips those entries.
    Row by row (each row from the rows above it), so the products are dot products of
    contiguous rows. Hand-written rather than ``np.linalg.cholesky``: LAPACK through a
    threaded BLAS spins its threads on every call, which cost 50x the arithmetic on a
    shared machine once the matrix passed BLAS's threading threshold (about 100
    columns).
    """
    n = m.shape[0]
    for i in range(n):
        fi = first[i]
        ri = out[i]
        for j in range(fi, i):
            k0 = max(fi, first[j])
            ri[j] = (m[i, j] - _dot(ri[k0:j], out[j, k0:j])) / out[j, j]
        s = m[i, i] - _dot(ri[fi:i], ri[fi:i])
        if not s > 0.0:
            raise ValueError("the precision matrix is not positive definite")
        ri[i] = math.sqrt(s)


@_jit
def _envelope_solve(chol: np.ndarray, rhs: np.ndarray, first: np.ndarray) -> None:
    """Solve ``chol chol^T x = b`` in place for every row ``b`` of ``rhs`` ((m, n)).

    The zeros left of each row's ``first`` column (see :func:`_cholesky`) are skipped.
    """
    m, n = rhs.shape
    for j in range(m):
        b = rhs[j]
        for i in range(n):
            f = first[i]
            b[i] = (b[i] - _dot(chol[i, f:i], b[f:i])) / chol[i, i]
        for i in range(n - 1, -1, -1):  # chol^T x = v, column by column of chol^T
            x = b[i] / chol[i, i]
            b[i] = x
            for k in range(first[i], i):
                b[k] -= chol[i, k] * x


@_jit
def _add_gram(m: np.ndarray, idx: np.ndarray, gram: np.ndarray, f: np.ndarray, c: float) -> None:
    """``m[idx[p], idx[q]] += c f[p] f[q] gram[p, q]`` over the lower triangle (``q <= p``).

    ``idx``: ascending global columns of a local Gram matrix ``gram`` (flattened,
    ``idx.size`` squared). When they are consecutive (the usual case) each row is
    updated through contiguous slices, which vectorises.
    """
    width = idx.size
    consecutive = width > 0 and idx[width - 1] - idx[0] == width - 1
    for p in range(width):
        cp = c * f[p]
        gp = gram[p * width : p * width + p + 1]
        if consecutive:
            row = m[idx[p], idx[0] : idx[0] + p + 1]
            for q in range(p + 1):
                row[q] += cp * f[q] * gp[q]
        else:
            for q in range(p + 1):
                m[idx[p], idx[q]] += cp * f[q] * gp[q]


@_jit
def _residual_scale(
    rng: np.random.Generator, sigma: float, a: float, b: float, n: int, rate: float
) -> tuple[float, bool]:
    r"""MH step of a residual SD whose group's cells carry standardised effects.

    The conditional is :math:`\propto \sigma^{-n} \exp(-A/2\sigma^2 + B/\sigma -
    \lambda\sigma)`; the proposal is the normal approximation of :math:`\psi = \log
    \sigma` at its mode (unique: with :math:`x = e^{-\psi}` the score equation is the
    cubic :math:`A x^3 - B x^2 - (n-1) x - \lambda = 0`, with one sign change), an
    independence proposal since it depends on the other variables only.
    """
    nm1 = n - 1.0
    lo = 0.0
    hi = math.sqrt(max(n, 1) / max(a, 1e-300)) + 1e-300
    while a * hi**3 - b * hi**2 - nm1 * hi - rate <= 0.0:
        hi *= 2.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if a * mid**3 - b * mid**2 - nm1 * mid - rate > 0.0:
            hi = mid
        else:
            lo = mid
    x = 0.5 * (lo + hi)
    curv = 2.0 * a * x * x - b * x + rate / x
    if not curv > 0.0:
        curv = 2.0 * a * x * x
    sd = 1.2 / math.sqrt(curv)  # a little wider than the normal approximation
    mode = -math.log(x)

    def logf(psi: float) -> float:
        return (
            -nm1 * psi - 0.5 * a * math.exp(-2.0 * psi) + b * math.exp(-psi) - rate * math.exp(psi)
        )

    psi0 = math.log(sigma)
    psi1 = mode + sd * rng.standard_normal()
    log_ratio = (
        logf(psi1) - logf(psi0) + 0.5 * ((psi1 - mode) ** 2 - (psi0 - mode) ** 2) / (sd * sd)
    )
    if math.log(rng.random()) < log_ratio:
        return math.exp(psi1), True
    return sigma, False


@_jit
def _column_workspace(n_k: int, n_c: int, n_e: int) -> tuple:
    """Allocate the arrays step 1 (:func:`_draw_columns`, :func:`_condition`) works in."""
    return (
        np.empty((n_k, n_k)),  # M
        np.empty((1 + n_c, n_k)),  # right-hand sides
        np.empty((n_k, n_k)),  # M's factor
        np.empty(n_k),  # z
        np.empty((n_c, n_c)),  # AU
        np.empty((n_c, n_c)),  # its factor
        np.zeros(n_c, dtype=np.int64),  # its envelope (dense)
        np.empty((1, n_c)),  # lam
        np.empty(n_c),  # A x
        np.empty(n_k),  # w
        np.empty((n_e, n_k)),  # w in each residual group's cells
        np.empty(n_k),  # a local Gram matrix's column factors (sigma or 1)
    )


# fmt: off
@_jit
def _scales_given_effects(
    rng, scale, aa, bb, ss, res_n, scale_rate, scale_m, has_std, keep, accepted,
) -> None:
    # fmt: on
    """Draw every scale given the effects (step 3).

    Each residual SD from its group's sums ``aa`` (and ``bb``), every other scale from
    its effects' sum of squares ``ss``; acceptances are counted when ``keep``.
    """
    n_e = res_n.size
    for q in range(n_e):
        if has_std:
            scale[q], ok = _residual_scale(rng, scale[q], aa[q], bb[q], res_n[q], scale_rate[q])
        else:
            scale[q], ok = _mh_scale(rng, scale[q], aa[q], res_n[q], scale_rate[q])
        if keep:
            accepted[q] += ok
    for p in range(n_e, scale_rate.size):
        scale[p], ok = _mh_scale(rng, scale[p], ss[p], scale_m[p], scale_rate[p])
        if keep:
            accepted[p] += ok


# fmt: off
@_jit
def _draw_columns(
    rng, scale, w8, coef, inv_d, m, rhs, chol, z, fl, col_first, col_std, col_prior_mu,
    col_prior_prec, col_scale, grp_res, grp_scale, grp_set, grp_n, grp_ptr, grp_idx, grp_mptr,
    grp_gram, grp_bsum, grp_zb, res_ptr, res_idx, res_mptr, res_gram, res_h, n_row_sets,
    cset_ptr, cset_idx,
):
    # fmt: on
    r"""Step 1 before the constraints: the Schur complement :math:`M`, its factor and solves.

    Fills ``w8`` (residual precisions), ``coef`` and ``inv_d`` (per row group), and
    ``rhs`` with :math:`M^{-1}[h + Lz \mid A_w - Q_{wa}Q_{aa}^{-1}A_a]` (the
    unconstrained draw of the columns, then the columns of :math:`U`), drawing the
    :math:`K` standard normals :math:`z`.
    """
    n_k = col_std.size
    n_e = res_ptr.size - 1
    n_g = grp_res.size
    n_cs = cset_ptr.size - 1
    n_c = n_row_sets + n_cs
    for q in range(n_e):
        w8[q] = 1.0 / (scale[q] * scale[q])
    for k in range(n_k):  # the lower triangle: all the factorisation reads
        for j in range(k + 1):
            m[k, j] = 0.0
        for j in range(1 + n_c):
            rhs[j, k] = 0.0
    for q in range(n_e):
        s = scale[q]
        p0, p1 = res_ptr[q], res_ptr[q + 1]
        for p in range(p0, p1):
            kp = res_idx[p]
            fl[p - p0] = s if col_std[kp] > 0 else 1.0
            rhs[0, kp] += fl[p - p0] * res_h[p] * w8[q]
        _add_gram(m, res_idx[p0:p1], res_gram[res_mptr[q] : res_mptr[q + 1]], fl, w8[q])
    for gi in range(n_g):
        q = grp_res[gi]
        s2 = scale[q] * scale[q]
        t2 = scale[grp_scale[gi]] * scale[grp_scale[gi]]
        coef[gi] = 1.0 / (s2 * (grp_n[gi] + s2 / t2))
        inv_d[gi] = s2 * s2 * coef[gi]
        s = scale[q]
        p0, p1 = grp_ptr[gi], grp_ptr[gi + 1]
        for p in range(p0, p1):
            kp = grp_idx[p]
            fp = s if col_std[kp] > 0 else 1.0
            fl[p - p0] = fp
            rhs[0, kp] -= coef[gi] * fp * grp_zb[p]
            if grp_set[gi] >= 0:  # -Q_wa Q_aa^-1 A_a of the row's zero-sum set
                rhs[1 + grp_set[gi], kp] -= s2 * coef[gi] * fp * grp_bsum[p]
        _add_gram(m, grp_idx[p0:p1], grp_gram[grp_mptr[gi] : grp_mptr[gi + 1]], fl, -coef[gi])
    for k in range(n_k):
        if col_scale[k] < 0:
            m[k, k] += col_prior_prec[k]
            rhs[0, k] += col_prior_mu[k] * col_prior_prec[k]
        else:
            sk = scale[col_scale[k]]
            m[k, k] += 1.0 / (sk * sk)
    for c in range(n_cs):
        for p in range(cset_ptr[c], cset_ptr[c + 1]):
            rhs[1 + n_row_sets + c, cset_idx[p]] = 1.0
    _cholesky(m, chol, col_first)
    for k in range(n_k):
        z[k] = rng.standard_normal()
    for k in range(n_k):
        rhs[0, k] += _dot(chol[k, col_first[k] : k + 1], z[col_first[k] : k + 1])
    _envelope_solve(chol, rhs, col_first)


# fmt: off
@_jit
def _condition(
    ax, au, au_chol, au_first, lam, rhs, w, wf, scale, coef, inv_d, col_std, grp_res, grp_set,
    grp_rows, grp_ysum, grp_ptr, grp_idx, grp_bsum, n_row_sets, cset_ptr, cset_idx,
):
    # fmt: on
    r"""Step 1's conditioning on the zero-sum sets: the columns ``w`` and ``lam``.

    ``ax`` arrives holding the sum of the rows' noise over each of the rows' zero-sum
    sets (the only per-row quantity the conditioning reads); the group sums, the
    column sets and :math:`AU` are added here, and ``lam`` :math:`= (AU)^{-1}Ax`
    gives :math:`w` (and ``wf``, each column's value in each residual group's cells).
    """
    n_k = col_std.size
    n_e = wf.shape[0]
    n_g = grp_res.size
    n_cs = cset_ptr.size - 1
    n_c = n_row_sets + n_cs
    for i in range(n_c):
        for j in range(n_c):
            au[i, j] = 0.0
    for gi in range(n_g):
        sg = grp_set[gi]
        if sg < 0:
            continue
        s = scale[grp_res[gi]]
        s2c = s * s * coef[gi]
        ax[sg] += s2c * grp_ysum[gi]
        au[sg, sg] += grp_rows[gi] * inv_d[gi]
        for p in range(grp_ptr[gi], grp_ptr[gi + 1]):
            kp = grp_idx[p]
            fb = (s if col_std[kp] > 0 else 1.0) * grp_bsum[p] * s2c
            ax[sg] -= fb * rhs[0, kp]
            for j in range(n_c):
                au[sg, j] -= fb * rhs[1 + j, kp]
    for c in range(n_cs):
        i = n_row_sets + c
        for p in range(cset_ptr[c], cset_ptr[c + 1]):
            kp = cset_idx[p]
            ax[i] += rhs[0, kp]
            for j in range(n_c):
                au[i, j] += rhs[1 + j, kp]
    if n_c > 0:  # A U = A Q^-1 A^T is symmetric positive definite
        _cholesky(au, au_chol, au_first)
        for i in range(n_c):
            lam[0, i] = ax[i]
        _envelope_solve(au_chol, lam, au_first)
    for k in range(n_k):
        acc = rhs[0, k]
        for j in range(n_c):
            acc -= rhs[1 + j, k] * lam[0, j]
        w[k] = acc
    for q in range(n_e):  # each column's value in the cells of residual group q
        s = scale[q]
        for k in range(n_k):
            wf[q, k] = (s if col_std[k] > 0 else 1.0) * w[k]


# fmt: off
@_jit
def _cell_moves(
    rng, scale, w8, inv_d, lam, w, wf, zr, a, e, cfit, vv, uv, g, ss, aa, bb, y, cell_cols,
    cell_res, row_ptr, row_scale, row_set, row_group, row_y, col_std, col_scale, term_first,
    term_ncol, term_j, term_scale0, term_nscale, row_scale0, row_nscale, scale_rate, has_std,
) -> None:
    # fmt: on
    """Draw the rows and make the scale-expansion moves, visiting the cells.

    Fills the rows ``a``, the residuals ``e``, the residual groups' sums ``aa``, ``bb``
    and the scales' sums of squares ``ss``; moves ``scale``, ``w`` and ``wf``.
    """
    n_r = row_ptr.size - 1
    n_j = cell_cols.shape[1]
    n_k = w.size
    n_e = wf.shape[0]
    n_p = scale.size
    # ---- rows given the columns (conditioned on their sums), the residuals and the
    # statistics of the rows' scale expansion; then that move
    for p in range(n_p):
        vv[p] = 0.0
        uv[p] = 0.0
        g[p] = 1.0
    for r in range(n_r):
        q = cell_res[row_ptr[r]]
        bw = 0.0
        for i in range(row_ptr[r], row_ptr[r + 1]):
            acc = 0.0
            for jj in range(n_j):
                acc += wf[q, cell_cols[i, jj]]
            cfit[i] = acc
            bw += acc
        gi = row_group[r]
        val = (row_y[r] - bw) * w8[q] * inv_d[gi] + zr[r]
        if row_set[r] >= 0:
            val -= lam[0, row_set[r]] * inv_d[gi]
        a[r] = val
        esum = 0.0  # a row's cells share its residual group (q)
        for i in range(row_ptr[r], row_ptr[r + 1]):
            ei = y[i] - val - cfit[i]
            e[i] = ei
            esum += ei
        p = row_scale[r]
        vv[p] += (row_ptr[r + 1] - row_ptr[r]) * val * val * w8[q]
        uv[p] += esum * val * w8[q]
    for p in range(row_scale0, row_scale0 + row_nscale):
        g[p] = _expansion(rng, vv[p], uv[p] + vv[p], 1.0, scale_rate[p] * scale[p])
        scale[p] *= g[p]
    # ---- scale expansion of each random column term, then the sums of squares of
    # the residual groups (A, B): stage t applies the previous term's move to the
    # residuals and gathers term t's statistics (the last stage: the sums), one
    # pass over the cells each
    n_t = term_first.size
    for t in range(n_t + 1):
        jj = term_j[t] if t < n_t else -1
        if t < n_t:
            for p in range(term_scale0[t], term_scale0[t] + term_nscale[t]):
                vv[p] = 0.0
                uv[p] = 0.0
        else:
            for q in range(n_e):
                aa[q] = 0.0
                bb[q] = 0.0
        prev = term_j[t - 1] if t > 0 else -1
        # a term of one scale (the usual case) and the residual sums gather each
        # row's cells in locals, rather than through an array slot per cell
        one = t < n_t and term_nscale[t] == 1
        for r in range(n_r):
            q = cell_res[row_ptr[r]]  # a row's cells share its residual group
            lv = 0.0
            lu = 0.0
            gr = 0.0  # the first stage applies the rows' move to their cells
            if t == 0:
                gr = (g[row_scale[r]] - 1.0) * a[r]
                a[r] += gr
            for i in range(row_ptr[r], row_ptr[r + 1]):
                e[i] -= gr
                if prev >= 0:
                    kp = cell_cols[i, prev]
                    e[i] -= (g[col_scale[kp]] - 1.0) * wf[q, kp]
                if t < n_t:
                    kp = cell_cols[i, jj]
                    v = wf[q, kp]
                    if one:
                        lv += v * v
                        lu += e[i] * v
                    else:
                        p = col_scale[kp]
                        vv[p] += v * v * w8[q]
                        uv[p] += e[i] * v * w8[q]
                    continue
                d = 0.0
                if has_std:  # the last term's move reaches w after the pass
                    for j2 in range(n_j):
                        kp = cell_cols[i, j2]
                        if col_std[kp] > 0:
                            d += w[kp] * (g[col_scale[kp]] if j2 == prev else 1.0)
                u = e[i] + scale[q] * d
                lv += u * u
                lu += u * d
            if one:
                vv[term_scale0[t]] += lv * w8[q]
                uv[term_scale0[t]] += lu * w8[q]
            elif t == n_t:
                aa[q] += lv
                bb[q] += lu
        if t > 0:
            for k in range(term_first[t - 1], term_first[t - 1] + term_ncol[t - 1]):
                w[k] *= g[col_scale[k]]
                for q in range(n_e):
                    wf[q, k] *= g[col_scale[k]]
        if t < n_t:
            for p in range(term_scale0[t], term_scale0[t] + term_nscale[t]):
                g[p] = _expansion(rng, vv[p], uv[p] + vv[p], 1.0, scale_rate[p] * scale[p])
                scale[p] *= g[p]
    for p in range(n_p):
        ss[p] = 0.0
    for r in range(n_r):
        ss[row_scale[r]] += a[r] * a[r]
    for k in range(n_k):
        if col_scale[k] >= 0:
            ss[col_scale[k]] += w[k] * w[k]


# fmt: off
@_jit
def _pattern_noise(
    rng, inv_d, grp_rows, row_group, row_y, ybar, yc, keep_rows, zr, zbar, beta, n2,
):
    # fmt: on
    """Draw the rows' noise of each group (variance ``inv_d``) as its three statistics.

    Its mean ``zbar``, its projection ``beta`` on the centred row sums (of norm ``yc``)
    and its centred sum of squares ``n2``; with ``keep_rows``, row by row into ``zr``.
    """
    n_g = inv_d.size
    n_r = row_y.size
    if keep_rows:
        zbar[:] = 0.0
        beta[:] = 0.0
        n2[:] = 0.0
        for r in range(n_r):
            gi = row_group[r]
            zr[r] = rng.standard_normal() * math.sqrt(inv_d[gi])
            zbar[gi] += zr[r]
        for gi in range(n_g):
            zbar[gi] /= grp_rows[gi]
        for r in range(n_r):
            gi = row_group[r]
            dz = zr[r] - zbar[gi]
            beta[gi] += dz * (row_y[r] - ybar[gi])
            n2[gi] += dz * dz
        for gi in range(n_g):
            beta[gi] = beta[gi] / yc[gi] if yc[gi] > 0.0 else 0.0
    else:
        for gi in range(n_g):
            v = inv_d[gi]
            n_rows = grp_rows[gi]
            zbar[gi] = rng.standard_normal() * math.sqrt(v / n_rows)
            beta[gi] = 0.0
            n2[gi] = 0.0
            if n_rows >= 2.0:
                beta[gi] = rng.standard_normal() * math.sqrt(v)
                n2[gi] = beta[gi] * beta[gi]
            if n_rows > 2.0:
                n2[gi] += 2.0 * v * rng.standard_gamma(0.5 * (n_rows - 2.0))


@_jit
def _centred_square_sum(kap: float, syy: float, yc: float, beta: float, n2: float) -> float:
    r"""Return :math:`\sum_r (\kappa (Y_r - \bar Y) + \eta_r)^2` over a group's rows.

    :math:`= \kappa^2 S_{yy} + 2\kappa \lVert Y - \bar Y\rVert \beta + \sum_r \eta_r^2`
    (see :func:`_pattern_moves`): with ``kap`` = :math:`\kappa`, the rows' centred sum of
    squares :math:`\sum_r (a_r - \bar a)^2`; with :math:`\kappa - 1/n`, that of
    :math:`\delta_r - (a_r - \bar a)`.
    """
    return kap * kap * syy + 2.0 * kap * yc * beta + n2


# fmt: off
@_jit
def _pattern_moves(
    rng, scale, w8, inv_d, lam, w, wf, vv, uv, g, ss, aa, bb, col_std, col_scale, grp_res,
    grp_scale, grp_set, grp_n, grp_rows, term_first, term_ncol, term_j, term_scale0,
    term_nscale, row_scale0, row_nscale, scale_rate, pat_ptr, pat_cols, pat_mean, grp_syy,
    grp_ess, ybar, yc, zbar, beta, n2, abar, kap, slope, level, moved,
) -> None:
    # fmt: on
    r"""Do what :func:`_cell_moves` does, from the row groups' patterns and statistics.

    The rows of group :math:`g` are :math:`a_r = \bar a + \kappa (Y_r - \bar Y) +
    \eta_r` (``abar``, ``kap``; the noise's statistics ``beta``, ``n2``); before their
    move they are ``slope`` :math:`Y_r` + ``level`` + their noise, and ``moved`` is the
    move's factor (see :mod:`~bayes_ir.hierarchical.samplers.blocked_gibbs`).
    """
    n_k = w.size
    n_e = wf.shape[0]
    n_g = grp_res.size
    n_p = scale.size
    n_j = pat_cols.shape[1]
    # ---- the rows given the columns, and the statistics of the rows' expansion
    for p in range(n_p):
        vv[p] = 0.0
        uv[p] = 0.0
        g[p] = 1.0
    for gi in range(n_g):
        q = grp_res[gi]
        fit = 0.0
        for k in range(pat_ptr[gi], pat_ptr[gi + 1]):
            for jj in range(n_j):
                fit += wf[q, pat_cols[k, jj]]
        kap[gi] = w8[q] * inv_d[gi]
        slope[gi] = kap[gi]
        level[gi] = -fit * kap[gi]
        if grp_set[gi] >= 0:
            level[gi] -= lam[0, grp_set[gi]] * inv_d[gi]
        abar[gi] = kap[gi] * ybar[gi] + level[gi] + zbar[gi]
        n = grp_n[gi]
        caa = _centred_square_sum(kap[gi], grp_syy[gi], yc[gi], beta[gi], n2[gi])
        # sum_r (a_r - abar)(delta_r - (a_r - abar)), delta_r = (y_r - ybar) / n
        da = (
            (1.0 / n - kap[gi]) * kap[gi] * grp_syy[gi]
            + (1.0 / n - 2.0 * kap[gi]) * yc[gi] * beta[gi]
            - n2[gi]
        )
        p = grp_scale[gi]
        vv[p] += n * (caa + grp_rows[gi] * abar[gi] * abar[gi]) * w8[q]
        gap = ybar[gi] - n * abar[gi] - fit  # each row's residual sum less n(delta - a)
        uv[p] += (n * da + gap * grp_rows[gi] * abar[gi]) * w8[q]
    for p in range(row_scale0, row_scale0 + row_nscale):
        g[p] = _expansion(rng, vv[p], uv[p] + vv[p], 1.0, scale_rate[p] * scale[p])
        scale[p] *= g[p]
    for gi in range(n_g):
        f = g[grp_scale[gi]]
        moved[gi] = f
        abar[gi] *= f
        kap[gi] *= f
        beta[gi] *= f
        n2[gi] *= f * f
    # ---- scale expansion of each random column term (its moves applied at once)
    for t in range(term_first.size):
        jj = term_j[t]
        for p in range(term_scale0[t], term_scale0[t] + term_nscale[t]):
            vv[p] = 0.0
            uv[p] = 0.0
        for gi in range(n_g):
            q = grp_res[gi]
            for k in range(pat_ptr[gi], pat_ptr[gi + 1]):
                fit = 0.0
                for j2 in range(n_j):
                    fit += wf[q, pat_cols[k, j2]]
                kp = pat_cols[k, jj]
                v = wf[q, kp]
                p = col_scale[kp]
                vv[p] += grp_rows[gi] * v * v * w8[q]
                uv[p] += grp_rows[gi] * v * (pat_mean[k] - abar[gi] - fit) * w8[q]
        for p in range(term_scale0[t], term_scale0[t] + term_nscale[t]):
            g[p] = _expansion(rng, vv[p], uv[p] + vv[p], 1.0, scale_rate[p] * scale[p])
            scale[p] *= g[p]
        for k in range(term_first[t], term_first[t] + term_ncol[t]):
            w[k] *= g[col_scale[k]]
            for q in range(n_e):
                wf[q, k] *= g[col_scale[k]]
    # ---- the residual groups' sums (A, B) and the scales' sums of squares
    for q in range(n_e):
        aa[q] = 0.0
        bb[q] = 0.0
    for p in range(n_p):
        ss[p] = 0.0
    for gi in range(n_g):
        q = grp_res[gi]
        s = scale[q]
        n = grp_n[gi]
        sq = 0.0
        bd = 0.0
        for k in range(pat_ptr[gi], pat_ptr[gi + 1]):
            h = 0.0
            d = 0.0
            for j2 in range(n_j):
                kp = pat_cols[k, j2]
                h += wf[q, kp]
                if col_std[kp] > 0:
                    d += w[kp]
            h -= s * d  # the score less the other effects' fit, and d, per cell
            rk = pat_mean[k] - h - abar[gi]
            sq += rk * rk
            bd += d * rk
        off = 1.0 / n - kap[gi]
        dd = _centred_square_sum(-off, grp_syy[gi], yc[gi], beta[gi], n2[gi])
        aa[q] += grp_rows[gi] * sq + n * dd + grp_ess[gi]
        bb[q] += grp_rows[gi] * bd
        caa = _centred_square_sum(kap[gi], grp_syy[gi], yc[gi], beta[gi], n2[gi])
        ss[grp_scale[gi]] += caa + grp_rows[gi] * abar[gi] * abar[gi]
    for k in range(n_k):
        if col_scale[k] >= 0:
            ss[col_scale[k]] += w[k] * w[k]


@_jit
def run_design_chain(
    col_first,
    y,
    cell_cols,
    cell_res,
    row_ptr,
    col_std,
    col_prior_mu,
    col_prior_prec,
    col_scale,
    row_scale,
    row_set,
    row_group,
    row_y,
    grp_res,
    grp_scale,
    grp_set,
    grp_n,
    grp_rows,
    grp_ysum,
    grp_ptr,
    grp_idx,
    grp_mptr,
    grp_gram,
    grp_bsum,
    grp_zb,
    res_ptr,
    res_idx,
    res_mptr,
    res_gram,
    res_h,
    res_n,
    n_row_sets,
    cset_ptr,
    cset_idx,
    term_first,
    term_ncol,
    term_j,
    term_scale0,
    term_nscale,
    row_scale0,
    row_nscale,
    scale_rate,
    scale_m,
    has_std,
    pat_ptr,
    pat_cols,
    pat_mean,
    grp_syy,
    grp_ess,
    state,
    tune,
    rng,
    out_scales,
    out_cols,
    out_rows,
    keep_rows,
    accepted,
):
    r"""Run one chain of ``tune`` discarded and ``out_scales.shape[0]`` kept iterations.

    Each iteration: step 1 (:func:`_draw_columns`, the rows' noise, :func:`_condition`),
    the rows, the scale-expansion moves and the sums of squares, from the cells
    (:func:`_cell_moves`) or from the row groups' patterns (:func:`_pattern_moves`), and
    step 3 (:func:`_scales_given_effects`).

    Parameters
    ----------
    col_first
        First nonzero column of every row of the columns' precision (its envelope).
    y, cell_cols, cell_res, row_ptr
        Cells sorted by row: score, global column of each column term (n, J), residual
        group; the cells of row ``r`` are ``row_ptr[r]:row_ptr[r + 1]``.
    col_std, col_prior_mu, col_prior_prec, col_scale
        Per column: standardised (1.0/0.0), intercept prior mean and precision (0 for
        random columns), global scale index (-1: intercept).
    row_scale, row_set, row_group, row_y
        Per row: scale index, zero-sum set (-1: none), row group, sum of scores.
    grp_*
        Per row group (rows alike in residual group, scale, zero-sum set and count):
        residual group, scale, set, count, number of rows, score sum, and the local
        column lists (``grp_ptr``/``grp_idx``), Gram matrices (``grp_mptr``/``grp_gram``),
        column sums ``grp_bsum`` and ``grp_zb`` (:math:`\sum_r B_r y_r`).
    res_*
        Per residual group: local columns, Gram matrix, :math:`X^T y` and cell count.
    n_row_sets, cset_ptr, cset_idx
        Zero-sum sets of the rows (numbered first) and of the columns (their columns).
    term_first, term_ncol, term_j, term_scale0, term_nscale
        Per random column term: first column, columns, its column of ``cell_cols``,
        first scale and scales.
    row_scale0, row_nscale
        First scale and number of scales of the rows' term.
    scale_rate, scale_m
        Exponential rate and free dimensions of every scale (residual SDs first).
    has_std
        Whether any column is standardised (then the residual SDs use
        :func:`_residual_scale`).
    pat_ptr, pat_cols, pat_mean, grp_syy, grp_ess
        ``[0]`` and empty arrays, or, when every row group's rows have their cells at the
        same columns, each group's pattern
        (:func:`~bayes_ir.hierarchical.samplers.blocked_gibbs.row_patterns`): its cells
        ``pat_ptr[g]:pat_ptr[g + 1]``, their global column of each column term and mean
        score, and the group's two sums of squares. Then the iteration reads these
        instead of the cells (:func:`_pattern_moves`; ``y``, ``cell_cols``, ``cell_res``,
        ``row_ptr`` and ``row_scale`` may be empty).
    state
        Every scale: read as the starting point, overwritten with the last value.
    tune, rng
        Discarded iterations and this call's random generator (:class:`numpy.random.Generator`).
    out_scales, out_cols, out_rows, keep_rows
        Outputs (draws, P), (draws, K), (draws, R) (filled when ``keep_rows``).
    accepted
        Accepted MH proposals per scale (P,), incremented.
    """
    n_r = row_y.size
    n_k = col_std.size
    n_e = res_n.size
    n_g = grp_res.size
    n_c = n_row_sets + cset_ptr.size - 1
    n_p = scale_rate.size
    draws = out_scales.shape[0]
    pattern = pat_ptr.size > 1
    scale = state.copy()
    m, rhs, chol, z, au, au_chol, au_first, lam, ax, w, wf, fl = _column_workspace(n_k, n_c, n_e)
    coef = np.empty(n_g)
    inv_d = np.empty(n_g)
    w8 = np.empty(n_e)
    vv = np.empty(n_p)
    uv = np.empty(n_p)
    g = np.empty(n_p)
    ss = np.empty(n_p)
    aa = np.empty(n_e)
    bb = np.empty(n_e)
    zr = np.empty(n_r if keep_rows or not pattern else 0)
    a = np.empty(0 if pattern else n_r)
    e = np.empty(y.size)
    cfit = np.empty(y.size)
    # per group, with patterns: the rows' statistics (see _pattern_moves)
    ybar = grp_ysum / grp_rows
    yc = np.sqrt(grp_syy)
    zbar, beta, n2, abar, kap, slope, level, moved = np.empty((8, n_g if pattern else 0))
    for it in range(tune + draws):
        # ---- step 1: the columns' marginal draw, the rows' noise, the conditioning
        _draw_columns(
            rng, scale, w8, coef, inv_d, m, rhs, chol, z, fl, col_first, col_std, col_prior_mu,
            col_prior_prec, col_scale, grp_res, grp_scale, grp_set, grp_n, grp_ptr, grp_idx,
            grp_mptr, grp_gram, grp_bsum, grp_zb, res_ptr, res_idx, res_mptr, res_gram, res_h,
            n_row_sets, cset_ptr, cset_idx,
        )  # fmt: skip
        for i in range(n_c):
            ax[i] = 0.0
        if pattern:
            _pattern_noise(
                rng, inv_d, grp_rows, row_group, row_y, ybar, yc, keep_rows, zr, zbar, beta, n2
            )
            for gi in range(n_g):
                if grp_set[gi] >= 0:
                    ax[grp_set[gi]] += grp_rows[gi] * zbar[gi]
        else:
            for r in range(n_r):
                zr[r] = rng.standard_normal() * math.sqrt(inv_d[row_group[r]])
            for r in range(n_r):
                if row_set[r] >= 0:
                    ax[row_set[r]] += zr[r]
        _condition(
            ax, au, au_chol, au_first, lam, rhs, w, wf, scale, coef, inv_d, col_std, grp_res,
            grp_set, grp_rows, grp_ysum, grp_ptr, grp_idx, grp_bsum, n_row_sets, cset_ptr,
            cset_idx,
        )  # fmt: skip
        # ---- step 2: the rows, the scale-expansion moves, the sums of squares
        if pattern:
            _pattern_moves(
                rng, scale, w8, inv_d, lam, w, wf, vv, uv, g, ss, aa, bb, col_std, col_scale,
                grp_res, grp_scale, grp_set, grp_n, grp_rows, term_first, term_ncol, term_j,
                term_scale0, term_nscale, row_scale0, row_nscale, scale_rate, pat_ptr, pat_cols,
                pat_mean, grp_syy, grp_ess, ybar, yc, zbar, beta, n2, abar, kap, slope, level,
                moved,
            )  # fmt: skip
        else:
            _cell_moves(
                rng, scale, w8, inv_d, lam, w, wf, zr, a, e, cfit, vv, uv, g, ss, aa, bb, y,
                cell_cols, cell_res, row_ptr, row_scale, row_set, row_group, row_y, col_std,
                col_scale, term_first, term_ncol, term_j, term_scale0, term_nscale, row_scale0,
                row_nscale, scale_rate, has_std,
            )  # fmt: skip
        # ---- step 3: every scale given the effects
        keep = it >= tune
        _scales_given_effects(
            rng, scale, aa, bb, ss, res_n, scale_rate, scale_m, has_std, keep, accepted
        )
        if keep:
            i = it - tune
            for p in range(n_p):
                out_scales[i, p] = scale[p]
            for k in range(n_k):
                out_cols[i, k] = w[k]
            if keep_rows:
                for r in range(n_r):
                    if pattern:
                        gi = row_group[r]
                        out_rows[i, r] = moved[gi] * (slope[gi] * row_y[r] + level[gi] + zr[r])
                    else:
                        out_rows[i, r] = a[r]
    for p in range(n_p):
        state[p] = scale[p]
