r"""Pareto-smoothed importance sampling LOO of many observations at once.

ArviZ (:func:`arviz_stats.loo`) smooths the importance weights of one observation at a
time in Python, about 1-2 ms each: 30-60 s per model for the 27,390 cells of Robust04 AP,
the largest part of :func:`~bayes_ir.hierarchical.compare_likelihoods`. Every
observation of a posterior has the same number of draws and the same ``r_eff``, hence
the same number of tail draws, so the whole algorithm runs on a (draws x observations)
array: one sort per column, the generalised Pareto fit of Zhang and Stephens with
ArviZ's weakly informative prior on :math:`k`, the smoothed tail, and the ELPD. Its two
costliest loops, the log-sum-exp of each row and the fit's sums of
:math:`\log(1 - b x)` over the tail, are compiled and run on the vectorised
exponential and logarithm of :mod:`~bayes_ir.hierarchical.families._vmath`.

For observation :math:`i` with log-likelihood draws :math:`\ell_s`, raw log weights
:math:`r_s = -\ell_s - \max_s(-\ell_s)`; the :math:`M` largest, with
:math:`M = \lfloor 3\sqrt{S / r_{\rm eff}}\rfloor` (:math:`\lfloor S/5 \rfloor` when
:math:`S r_{\rm eff} \le 225`), are replaced by the quantiles
:math:`(j - 1/2)/M` of the generalised Pareto fitted to :math:`e^{r} - e^{c}` above the
cutoff :math:`c` (the largest value below the tail), capped at the largest raw weight;
then :math:`\mathrm{elpd}_i = \log\sum_s \tilde w_s e^{\ell_s}` with normalised smoothed
weights :math:`\tilde w`, :math:`\mathrm{lppd}_i = \log(\frac1S\sum_s e^{\ell_s})` and
:math:`p_i = \mathrm{lppd}_i - \mathrm{elpd}_i`.

Observations the vectorised path does not cover exactly as ArviZ does (a non-finite
value, a constant tail, a fit with no finite :math:`k` or a non-positive scale) are
handed to ArviZ one by one, so the result equals :func:`arviz_stats.loo` (tested).

References
----------
Vehtari, A., Simpson, D., Gelman, A., Yao, Y., Gabry, J. (2024). Pareto smoothed
importance sampling. *Journal of Machine Learning Research* 25(72), 1-58.

Zhang, J., Stephens, M. A. (2009). A new and efficient estimation method for the
generalized Pareto distribution. *Technometrics* 51(3), 316-325.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bayes_ir.hierarchical.families._vmath import exp_into, log_into

__all__ = ["psis_loo", "tail_draws"]

#: Observations per block of the generalised Pareto fit (its grid is candidates x tail x
#: observations: 48 x 190 x 512 doubles, 37 MB, at 4,000 draws).
_BLOCK = 512
#: ArviZ's prior on k: ``PRIOR_K`` pseudo-observations at 0.5; ``PRIOR_BS`` scales the grid.
_PRIOR_K, _PRIOR_BS = 10, 3
_TINY = float(np.finfo(float).tiny)  # the smallest normal double
# IEEE division and the C library's rounding, as numpy (no fast-math reassociation)
jit = numba.njit(nogil=True, cache=True, error_model="numpy")


def _logsumexp(x: np.ndarray) -> np.ndarray:
    """``log(sum(exp(x)))`` of each row, max-shifted (as numpy, NaN and infinities too)."""
    out = np.empty(x.shape[0])
    _logsumexp_rows(np.ascontiguousarray(x, dtype=float), out)
    return out


@jit
def _logsumexp_rows(x, out):
    """Fill ``out[r]`` with the log-sum-exp of row ``r`` of ``x``.

    The exponentials of a finite row go through :func:`~._vmath.exp_into` (vectorised;
    shifted values below -700, which add less than 1e-300 to a sum of at least 1, count
    as ``exp(-700)``); a row with a NaN gives NaN and a row whose maximum is infinite its
    maximum, as numpy's ``log(sum(exp(x - m))) + m`` with ``m = 0`` there.
    """
    n = x.shape[1]
    shifted, e, work = np.empty(n), np.empty(n), np.empty(n)
    for r in range(x.shape[0]):
        m = -np.inf
        nan = False
        for i in range(n):
            v = x[r, i]
            nan |= v != v
            m = max(m, v)
        if nan:
            out[r] = np.nan
        elif m == np.inf or m == -np.inf:
            out[r] = m  # all -inf: log 0; an inf: log inf
        else:
            for i in range(n):
                shifted[i] = x[r, i] - m
            exp_into(shifted, e, n, work)
            total = 0.0
            for i in range(n):
                total += e[i]
            out[r] = math.log(total) + m


@jit
def _mean_log1p(b, x, out):
    r"""``out[r, j] = mean_i log1p(-b[r, j] x[r, i])``: the Zhang-Stephens profile's sums.

    With :math:`u = 1 - bx`, :math:`\log(1 + (-bx)) = \log u - ((u - 1) + bx)/u`
    (Goldberg 1991, theorem 4) from the vectorised :func:`~._vmath.log_into`; a row with
    a ``u`` that is not a positive normal double is summed with ``math.log1p``, as numpy.
    """
    n_rows, n = x.shape
    u, lu, work = np.empty(n), np.empty(n), np.empty(n)
    for r in range(n_rows):
        for j in range(b.shape[1]):
            bj = b[r, j]
            regular = True
            for i in range(n):
                u[i] = 1.0 - bj * x[r, i]
                regular &= _TINY <= u[i] < np.inf
            total = 0.0
            if regular:
                log_into(u, lu, n, work)
                for i in range(n):
                    total += lu[i] - ((u[i] - 1.0) + bj * x[r, i]) / u[i]
            else:
                for i in range(n):
                    total += math.log1p(-bj * x[r, i])
            out[r, j] = total / n


def tail_draws(n_draws: int, r_eff: float) -> int:
    """Return the number of draws in the smoothed tail (ArviZ's ``_get_ps_tails``)."""
    if n_draws * r_eff > 225:
        return int(math.floor(3 * (n_draws / r_eff) ** 0.5))
    return max(int(math.floor(n_draws / 5)), 5)


def _gpd_fit(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Zhang-Stephens fit with ArviZ's prior, of each row of ``x`` (sorted ascending).

    Returns ``kappa``, ``sigma`` and whether the row is regular (ArviZ would give a
    finite ``kappa`` and a positive ``sigma`` from the same arithmetic).
    """
    n = x.shape[1]
    m = 30 + int(n**0.5)
    xstar = x[:, int((n / 4 + 0.5) - 1)]
    regular = xstar > x[:, 0]
    grid = 1 - np.sqrt(m / (np.arange(1, m + 1, dtype=float) - 0.5))
    b = grid[None, :] / (_PRIOR_BS * xstar)[:, None] + (1 / x[:, -1])[:, None]
    k = np.empty_like(b)
    _mean_log1p(b, np.ascontiguousarray(x), k)
    scale = n * (np.log(-b / k) - k - 1)
    w = np.exp(scale - _logsumexp(scale)[:, None])
    w[w < 10 * np.finfo(float).eps] = 0.0
    w /= w.sum(axis=1, keepdims=True)
    b_post = np.sum(b * w, axis=1)
    kappa = np.mean(np.log1p(-b_post[:, None] * x), axis=1)
    sigma = -kappa / b_post
    kappa = (n * kappa + _PRIOR_K * 0.5) / (n + _PRIOR_K)
    regular &= np.isfinite(kappa) & (sigma > 0)
    return kappa, sigma, regular


def _smooth(lw: np.ndarray, n_tail: int) -> tuple[np.ndarray, np.ndarray]:
    """Pareto-smooth the raw log weights ``lw`` (observations x draws) in place.

    Returns Pareto k of each row and whether the row was smoothed as ArviZ does. Only
    the tail and the cutoff are sorted (a partition finds them): the tail's values
    and the cutoff are ArviZ's, and draws tied there have equal weights whichever
    place each takes.
    """
    n_draws = lw.shape[1]
    kth = n_draws - n_tail - 1
    top = np.argpartition(lw, kth, axis=1)[:, kth:]
    values = np.take_along_axis(lw, top, axis=1)
    ranks = np.argsort(values, axis=1)
    top = np.take_along_axis(top, ranks, axis=1)
    values = np.take_along_axis(values, ranks, axis=1)
    cutoff, tail_at, tail = values[:, 0], top[:, 1:], values[:, 1:]
    max_tail = tail[:, -1]
    regular = np.abs(max_tail - tail[:, 0]) >= np.finfo(float).tiny
    exp_cut = np.exp(cutoff)
    kappa, sigma, fitted = _gpd_fit(np.exp(tail) - exp_cut[:, None])
    regular &= fitted
    p = (np.arange(n_tail, dtype=float) + 0.5)[None, :] / n_tail
    zero = (kappa == 0)[:, None]
    safe = np.where(kappa == 0, 1.0, kappa)[:, None]
    q = np.where(
        zero,
        exp_cut[:, None] - sigma[:, None] * np.log1p(-p),
        exp_cut[:, None] + sigma[:, None] * np.expm1(-safe * np.log1p(-p)) / safe,
    )
    smoothed = np.minimum(np.log(q), max_tail[:, None])
    rows = np.flatnonzero(regular)
    part = lw[rows]
    np.put_along_axis(part, tail_at[rows], smoothed[rows], axis=1)
    lw[rows] = part
    return kappa, regular


def psis_loo(ll: np.ndarray, r_eff: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""PSIS-LOO of each row of ``ll`` (observations x draws): as :func:`arviz_stats.loo`.

    Parameters
    ----------
    ll
        Pointwise log-likelihood, one row per observation, one column per posterior
        draw (chains one after the other).
    r_eff
        Relative effective sample size of the posterior (one value, as ArviZ's).

    Returns
    -------
    elpd_i, pareto_k, p_i
        Each observation's expected log predictive density, Pareto :math:`\hat k` and
        effective number of parameters (the formulas are in the module docstring).

    Raises
    ------
    ValueError
        As ArviZ, for an observation whose tail of raw weights is constant.
    """
    from arviz_stats.base.array import array_stats

    ll = np.ascontiguousarray(ll, dtype=float)
    n_obs, n_draws = ll.shape
    n_tail = tail_draws(n_draws, r_eff)
    elpd, khat, p = np.empty(n_obs), np.empty(n_obs), np.empty(n_obs)
    for lo in range(0, n_obs, _BLOCK):
        block = ll[lo : lo + _BLOCK]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            lw = -block - np.max(-block, axis=1, keepdims=True)
            k, regular = _smooth(lw, n_tail)
            lw -= _logsumexp(lw)[:, None]
            e = _logsumexp(lw + block)
            lppd = _logsumexp(block) - math.log(n_draws)
        regular &= np.isfinite(block).all(axis=1)
        for j in np.flatnonzero(~regular):  # ArviZ itself, one observation at a time
            e[j], k[j], pj = array_stats.loo(block[j][None, :], r_eff=r_eff)
            lppd[j] = e[j] + pj
        end = lo + block.shape[0]
        elpd[lo:end], khat[lo:end], p[lo:end] = e, k, lppd - e
    return elpd, khat, p
