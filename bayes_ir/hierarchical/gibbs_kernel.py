r"""Compiled iteration loop of the blocked Gibbs sampler (:mod:`bayes_ir.hierarchical.gibbs`).

One call of :func:`run_chain` runs a stretch of one chain: every iteration draws the effects
jointly given the scales (one Cholesky factor of the :math:`(K+1)^2` Schur complement,
three triangular solves, the rows' diagonal block), imposes the two zero-sum
constraints, makes the two scale-expansion moves and the three Metropolis-Hastings
scale steps, exactly as the module docstring of :mod:`bayes_ir.hierarchical.gibbs`
writes them. Every sum over the observed cells of a row or a column goes through the
cell list of :class:`~bayes_ir.hierarchical.gibbs.Incidence` (:func:`_cell_sums`: the
missing cells when fewer are missing), and the residuals are those of the reference fit
plus an additive correction, so an iteration costs
:math:`O(L K^2 + K^3 + R + \min(n, RK - n))` for :math:`L` Gram terms. It is numba code
because an iteration is about a hundred small array operations: as numpy calls, their
overhead (5-10 us each) was 90% of the time on rb04. The function is compiled once per
machine (cached on disk) and releases the GIL, so chains run in parallel threads.

Each call draws from the generator it is given (one per stretch of a chain:
:func:`~bayes_ir.hierarchical.samplers.chains.stretch_rng`), so a chain's draws depend
on its seeds only, not on the thread or the order.

References
----------
Robert, C. P. (1995). Simulation of truncated normal variables. *Statistics and
Computing* 5(2), 121-125 (the exponential rejection sampler of :func:`_normal_above`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["run_chain"]

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _normal_above(rng: np.random.Generator, alpha: float) -> float:
    """Draw a standard normal truncated to ``(alpha, inf)`` (Robert 1995 for ``alpha > 0``)."""
    if alpha <= 0.0:  # plain rejection: acceptance >= 1/2
        while True:
            z = rng.standard_normal()
            if z > alpha:
                return z
    lam = 0.5 * (alpha + math.sqrt(alpha * alpha + 4.0))
    while True:
        z = alpha + rng.exponential(1.0 / lam)
        if rng.random() <= math.exp(-0.5 * (z - lam) ** 2):
            return z


@_jit
def _expansion(rng: np.random.Generator, vv: float, uv: float, s2: float, penalty: float) -> float:
    """Draw ``g > 0`` with density ``∝ exp(-(vv g^2 - 2 uv g) / (2 s2) - penalty g)``."""
    if vv <= 0.0:
        return 1.0
    prec = vv / s2
    mean = (uv / s2 - penalty) / prec
    sd = 1.0 / math.sqrt(prec)
    g = mean + sd * _normal_above(rng, -mean / sd)
    return max(g, 1e-300)


@_jit
def _mh_scale(
    rng: np.random.Generator, scale: float, ss: float, m: int, rate: float
) -> tuple[float, bool]:
    """Independence MH step for a scale with ``m`` Gaussian terms of sum of squares ``ss``."""
    power = max(m, 2)  # 2k + 1 of the Gamma(k, ss/2) proposal of scale^-2
    prop = 1.0 / math.sqrt(rng.gamma((power - 1) / 2.0, 2.0 / max(ss, 1e-300)))
    log_ratio = (power - m) * math.log(prop / scale) - rate * (prop - scale)
    if math.log(rng.random()) < log_ratio:
        return prop, True
    return scale, False


@_jit
def _cholesky_solve(chol: np.ndarray, rhs: np.ndarray) -> None:
    """Solve ``chol chol^T x = rhs`` in place (``rhs``: (n, m))."""
    n, m = rhs.shape
    for j in range(m):
        for i in range(n):
            s = rhs[i, j]
            for k in range(i):
                s -= chol[i, k] * rhs[k, j]
            rhs[i, j] = s / chol[i, i]
        for i in range(n - 1, -1, -1):  # by rows of chol: x_i known, removed from the rest
            rhs[i, j] /= chol[i, i]
            for k in range(i):
                rhs[k, j] -= chol[i, k] * rhs[i, j]


@_jit
def _cell_sums(to, frm, sign, complete, v, out):
    """``out[i, j]``: sum of ``v[k, j]`` over the observed cells with ``to = i``, ``frm = k``.

    ``(to, frm)`` is the cell list's (row, column) index for the sums per row of a
    vector over the columns, (column, row) for the sums per column; ``sign`` and
    ``complete`` say whether it lists the observed or the missing cells
    (:class:`~bayes_ir.hierarchical.gibbs.Incidence`).
    """
    m = v.shape[1]
    for j in range(m):
        total = 0.0
        if complete:
            for k in range(v.shape[0]):
                total += v[k, j]
        for i in range(out.shape[0]):
            out[i, j] = total
    for c in range(to.size):
        i = to[c]
        k = frm[c]
        for j in range(m):
            out[i, j] += sign * v[k, j]


@_jit
def _subtract_gram(m, gram, coef):
    """``m -= sum_l coef[l] gram[:, :, l]`` (symmetric: the upper triangle, then mirrored)."""
    k1 = m.shape[0]
    n_terms = coef.size
    for k in range(k1):
        for j in range(k, k1):
            s = 0.0
            for t in range(n_terms):
                s += coef[t] * gram[k, j, t]
            m[k, j] -= s
    for k in range(k1):
        for j in range(k + 1, k1):
            m[j, k] = m[k, j]


@_jit
def _gram_coefs(rho, centre, n_series, counts, weights, coef):
    """Fill ``coef`` with the Gram terms' coefficients at ``rho`` (see ``Incidence``)."""
    if centre == 0.0:
        for g in range(coef.size):
            coef[g] = 1.0 / (counts[g] + weights[g] * rho)
        return
    base = 1.0 / (centre + rho)
    u = centre * base
    for t in range(n_series):
        coef[t] = base
        base *= u
    for t in range(n_series, coef.size):
        coef[t] = 1.0


@_jit
def _subtract_rows(m, row_ptr, col, n_row, w_row, rho):
    """``m -= B^T diag(1 / (n_r + w_r rho)) B`` summed row by row (no Gram terms kept)."""
    for r in range(n_row.size):
        coef = 1.0 / (n_row[r] + w_row[r] * rho)
        m[0, 0] -= coef * n_row[r] * n_row[r]
        for p in range(row_ptr[r], row_ptr[r + 1]):
            kp = col[p] + 1
            m[0, kp] -= coef * n_row[r]
            m[kp, 0] -= coef * n_row[r]
            for q in range(row_ptr[r], row_ptr[r + 1]):
                m[kp, col[q] + 1] -= coef


@_jit
def run_chain(
    table,
    prior_weights,
    cells,
    reference,
    residuals,
    schur,
    b0_mu,
    b0_sd,
    rates,
    state,
    tune,
    rng,
    out_b0,
    out_scales,
    out_row,
    out_col,
    accepted,
):
    """Run one chain of ``tune`` discarded and ``out_b0.size`` kept iterations.

    Parameters
    ----------
    table
        ``(y, row, col, row_ptr, n_row, n_col, y_row, y_col)``: score, row and column of
        each observed cell (sorted by row; row ``r``'s are ``row_ptr[r]:row_ptr[r + 1]``),
        cells and score sums per row and per column.
    prior_weights
        ``(w_row, w_col)``: weights (1 or 0) of the rows' and columns' prior precisions: a
        row or column of weight 0 has a flat prior, and the zero-sum constraint and the
        scale steps run over the rows and columns of weight 1.
    cells
        ``(list_row, list_col, sign, complete)``: the cell list of the sums over observed
        cells (:class:`~bayes_ir.hierarchical.gibbs.Incidence`).
    reference, residuals
        ``(b0, rows, columns)`` of the reference fit and ``(per row, per column, sum, sum
        of squares)`` of its residuals.
    schur
        ``(gram, use_gram, centre, n_series, counts, weights)``: the Gram terms of the
        Schur complement (:class:`~bayes_ir.hierarchical.gibbs.Incidence`); without them
        (``use_gram`` false) it is summed row by row.
    b0_mu, b0_sd, rates
        Prior of ``b0`` (``b0_sd = inf``: flat) and the Exponential rates of (sigma, row
        SD, column SD).
    state
        (sigma, row SD, column SD): read as the starting point, overwritten with the last
        iteration's values, so that a chain runs as a sequence of calls.
    tune, rng
        Discarded iterations and this call's random generator (:class:`numpy.random.Generator`).
    out_b0, out_scales, out_row, out_col
        Outputs, filled in: (draws,), (draws, 3), (draws, R), (draws, K).
    accepted
        Counts of accepted MH proposals of the three kept iterations' scale steps (3,),
        incremented.
    """
    y, row, col, row_ptr, n_row, n_col, y_row, y_col = table
    w_row, w_col = prior_weights
    fit_b0, fit_row, fit_col = reference
    resid_row, resid_col, resid_sum, resid_ss = residuals
    gram, use_gram, centre, n_series, counts, weights = schur
    list_row, list_col, sign, complete = cells
    n_r = n_row.size
    n_k = n_col.size
    k1 = n_k + 1
    n = y.size
    draws = out_b0.size
    sigma, tau, chi = state[0], state[1], state[2]
    m = np.empty((k1, k1))
    coef = np.empty(gram.shape[2])
    rhs = np.empty((k1, 3))
    z = np.empty(k1)
    a = np.empty((n_r, 3))
    u = np.empty((n_r, 2))
    at_cols = np.empty((n_k, 2))
    at_rows = np.empty((n_r, 3))
    dc = np.empty((n_k, 2))
    da = np.empty((n_r, 1))
    da_cols = np.empty((n_k, 1))
    e_row = np.empty(n_r)
    e_col = np.empty(n_k)
    y_sum = y.sum()
    pooled_rows = w_row.sum()
    pooled_cols = w_col.sum()
    for it in range(tune + draws):
        s2, t2, c2 = sigma * sigma, tau * tau, chi * chi
        rho = s2 / t2
        # Schur complement M of the (b0, columns) block, times s2
        for k in range(k1):
            for j in range(k1):
                m[k, j] = 0.0
        m[0, 0] = n
        for k in range(n_k):
            m[0, k + 1] = n_col[k]
            m[k + 1, 0] = n_col[k]
            m[k + 1, k + 1] = n_col[k]
        if use_gram:
            _gram_coefs(rho, centre, n_series, counts, weights, coef)
            _subtract_gram(m, gram, coef)
        else:
            _subtract_rows(m, row_ptr, col, n_row, w_row, rho)
        for k in range(k1):
            for j in range(k1):
                m[k, j] /= s2
        m[0, 0] += 1.0 / (b0_sd * b0_sd)
        for k in range(1, k1):
            m[k, k] += w_col[k - 1] / c2
        chol = np.linalg.cholesky(m)
        # right-hand sides: the draw, and the two columns of Q^-1 A^T
        rhs[0, 0] = y_sum / s2 + b0_mu / (b0_sd * b0_sd)
        rhs[0, 1] = 0.0
        rhs[0, 2] = 0.0
        for r in range(n_r):
            inv = 1.0 / (n_row[r] + w_row[r] * rho)
            u[r, 0] = y_row[r] * inv / s2
            u[r, 1] = inv * w_row[r]
            rhs[0, 0] -= n_row[r] * u[r, 0]
            rhs[0, 1] -= n_row[r] * u[r, 1]
        _cell_sums(list_col, list_row, sign, complete, u, at_cols)
        for k in range(n_k):
            rhs[k + 1, 0] = y_col[k] / s2 - at_cols[k, 0]
            rhs[k + 1, 1] = -at_cols[k, 1]
            rhs[k + 1, 2] = w_col[k]
        for k in range(k1):
            z[k] = rng.standard_normal()
        for k in range(k1):
            s = 0.0
            for j in range(k + 1):
                s += chol[k, j] * z[j]
            rhs[k, 0] += s
        _cholesky_solve(chol, rhs)  # rhs now holds W = M^-1 [h + L z, r1, r2]
        # rows given (b0, columns)
        _cell_sums(list_row, list_col, sign, complete, rhs[1:], at_rows)
        for r in range(n_r):
            d = n_row[r] / s2 + w_row[r] / t2
            bw0 = n_row[r] * rhs[0, 0] + at_rows[r, 0]
            bw1 = n_row[r] * rhs[0, 1] + at_rows[r, 1]
            bw2 = n_row[r] * rhs[0, 2] + at_rows[r, 2]
            a[r, 0] = (y_row[r] - bw0) / s2 / d + rng.standard_normal() / math.sqrt(d)
            a[r, 1] = (w_row[r] - bw1 / s2) / d
            a[r, 2] = -bw2 / s2 / d
        # condition on sum(w_row * rows) = sum(w_col * columns) = 0
        sa0 = sa1 = sa2 = sc0 = sc1 = sc2 = 0.0
        for r in range(n_r):
            sa0 += w_row[r] * a[r, 0]
            sa1 += w_row[r] * a[r, 1]
            sa2 += w_row[r] * a[r, 2]
        for k in range(1, k1):
            sc0 += w_col[k - 1] * rhs[k, 0]
            sc1 += w_col[k - 1] * rhs[k, 1]
            sc2 += w_col[k - 1] * rhs[k, 2]
        det = sa1 * sc2 - sa2 * sc1
        g0 = (sa0 * sc2 - sa2 * sc0) / det
        g1 = (sa1 * sc0 - sa0 * sc1) / det
        b0 = rhs[0, 0] - rhs[0, 1] * g0 - rhs[0, 2] * g1
        for r in range(n_r):
            a[r, 0] -= a[r, 1] * g0 + a[r, 2] * g1
        for k in range(1, k1):
            rhs[k, 0] -= rhs[k, 1] * g0 + rhs[k, 2] * g1
        # residuals y - b0 - a - c = (those of the reference fit) - (db0 + da + dc), with
        # their sums per row and column and their sum of squares
        db0 = b0 - fit_b0
        for k in range(n_k):
            dc[k, 0] = rhs[k + 1, 0] - fit_col[k]
            dc[k, 1] = w_col[k] * rhs[k + 1, 0]
        for r in range(n_r):
            da[r, 0] = a[r, 0] - fit_row[r]
        _cell_sums(list_row, list_col, sign, complete, dc, at_rows)
        _cell_sums(list_col, list_row, sign, complete, da, da_cols)
        sse = resid_ss - 2.0 * db0 * resid_sum
        for r in range(n_r):
            p = db0 + da[r, 0]
            e_row[r] = resid_row[r] - n_row[r] * p - at_rows[r, 0]
            sse += -2.0 * da[r, 0] * resid_row[r] + n_row[r] * p * p + 2.0 * p * at_rows[r, 0]
        for k in range(n_k):
            e_col[k] = resid_col[k] - n_col[k] * (db0 + dc[k, 0]) - da_cols[k, 0]
            sse += -2.0 * dc[k, 0] * resid_col[k] + n_col[k] * dc[k, 0] * dc[k, 0]
        sse = max(sse, 0.0)
        # scale expansion of (pooled columns, chi)
        vv = 0.0
        ev = 0.0
        for k in range(n_k):
            vv += w_col[k] * n_col[k] * rhs[k + 1, 0] ** 2
            ev += w_col[k] * e_col[k] * rhs[k + 1, 0]
        g = _expansion(rng, vv, ev + vv, s2, rates[2] * chi)
        sse += -2.0 * (g - 1.0) * ev + (g - 1.0) ** 2 * vv
        for r in range(n_r):
            e_row[r] -= (g - 1.0) * at_rows[r, 1]
        for k in range(1, k1):
            if w_col[k - 1] > 0.0:
                rhs[k, 0] *= g
        chi *= g
        # scale expansion of (pooled rows, tau)
        vv = 0.0
        ev = 0.0
        for r in range(n_r):
            vv += w_row[r] * n_row[r] * a[r, 0] ** 2
            ev += w_row[r] * e_row[r] * a[r, 0]
        g = _expansion(rng, vv, ev + vv, s2, rates[1] * tau)
        sse += -2.0 * (g - 1.0) * ev + (g - 1.0) ** 2 * vv
        ssa = 0.0
        for r in range(n_r):
            if w_row[r] > 0.0:
                a[r, 0] *= g
                ssa += a[r, 0] ** 2
        tau *= g
        ssc = 0.0
        for k in range(1, k1):
            ssc += w_col[k - 1] * rhs[k, 0] ** 2
        # the three scales given the effects
        sigma, ok0 = _mh_scale(rng, sigma, sse, n, rates[0])
        tau, ok1 = _mh_scale(rng, tau, ssa, int(pooled_rows) - 1, rates[1])
        chi, ok2 = _mh_scale(rng, chi, ssc, int(pooled_cols) - 1, rates[2])
        if it >= tune:
            i = it - tune
            out_b0[i] = b0
            out_scales[i, 0] = sigma
            out_scales[i, 1] = tau
            out_scales[i, 2] = chi
            for r in range(n_r):
                out_row[i, r] = a[r, 0]
            for k in range(n_k):
                out_col[i, k] = rhs[k + 1, 0]
            accepted[0] += ok0
            accepted[1] += ok1
            accepted[2] += ok2
    state[0] = sigma
    state[1] = tau
    state[2] = chi
