"""Compiled loop of the vectorised diagnostics (:mod:`bayes_ir.hierarchical.diagnostics`).

:func:`diagnose_block` walks the quantities of a block one after the other and, for each,
does what ArviZ (:mod:`arviz_stats.base.diagnostics`) does one function call at a time:
the split of every chain into halves, the rank normalisation with average ranks of ties
(Blom's offset 3/8), the folding about the median, the rank-normalised split R-hat, and
the effective sample size of the bulk (z-scores), of the mean (the draws), of the SD
(squared deviations) and of quantiles (indicators of the draws at or below the
quantile). It is numba code because the steps ArviZ vectorises poorly are loops:

* one sort per quantity: :func:`split_keys` packs each draw's order-preserving bits and
  its position into one integer, which numpy sorts (a SIMD sort, about twice as fast
  as an argsort of the draws); :func:`_sort_order` finishes the order where the dropped
  bits matter. The ranks come from it with ties averaged, the folded draws' order is
  merged from the two sides of the median in one pass, and the quantiles are read off;
* Geyer's initial monotone sequence reads the autocovariances lag by lag and stops at
  the first negative pair, a few lags for well-mixed chains: the lags are computed
  directly, :data:`LAG_BATCH` per pass over the series in doubling batches, as the loop
  asks for them. A series whose sequence will run past :data:`DIRECT_LAGS` lags (a
  chain that mixes slowly) is left to the FFT of
  :func:`bayes_ir.hierarchical.diagnostics._fft_fallback`, which feeds the same
  :func:`geyer_ess`.

The functions are compiled once per machine (cached on disk) and release the GIL, so
blocks of quantities run in parallel threads. The formulas and their references are in
:func:`bayes_ir.hierarchical.diagnostics.draw_diagnostics`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = [
    "DIRECT_LAGS",
    "LAG_BATCH",
    "NEED_FFT",
    "N_OUT",
    "diagnose_block",
    "geyer_ess",
    "split_keys",
]

_jit = numba.njit(cache=True, nogil=True, error_model="numpy")
#: Sums over finite or non-finite values: reassociation only (a NaN stays a NaN).
_reassoc = numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})
#: Reassociated and contracted (fused multiply-adds): the lag sums of finite series.
_fma = numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})

#: Largest lag computed directly; a longer Geyer sequence goes to the FFT.
DIRECT_LAGS: int = 128
#: Lags summed in one pass over a series (the accumulators of :func:`_lag_sums`).
LAG_BATCH: int = 8
#: Autocorrelation below which a geometric decay is taken to have ended Geyer's sequence
#: (only to choose between more direct lags and the FFT).
_FADED: float = 0.01
#: Draws per tile of :func:`split_keys`' transposition.
_TILE: int = 64
#: Marker of an ESS whose sequence needs the FFT autocovariance.
NEED_FFT: float = -2.0
_NEED_MORE = -1.0
#: ``np.finfo(float).resolution``: ArviZ's test of a constant series.
_RESOLUTION = 1e-15
#: Columns of ``out``: mean, sd, rhat, ess_bulk, ess_mean, ess_sd, E[d^2], E[d^4], then the
#: ESS of each quantile indicator.
N_OUT = 8
#: Series kept per quantity: z-scores, draws, squared deviations, then one per quantile.
_BULK, _MEAN, _SD = 0, 1, 2


@_fma
def _lag_sums(d: np.ndarray, n_rows: int, n: int, k0: int, k1: int, acov: np.ndarray) -> None:
    """``acov[k]``: mean over rows of ``sum_t d[r, t] d[r, t + k] / n``, lags ``k0..k1-1``.

    ``k1 - k0`` is a multiple of :data:`LAG_BATCH`: a batch of lags is summed in one pass
    over each row, one accumulator per lag (a lag at or beyond ``n`` gets 0).
    """
    for k in range(k0, k1, LAG_BATCH):
        sums = np.zeros(LAG_BATCH)
        for r in range(n_rows):
            # a row and the row shifted by k, indexed from 0: numba then knows the
            # indices are not negative (no wraparound test), and the loop vectorises
            row = d[r * n : (r + 1) * n]
            ahead = d[r * n + k : (r + 1) * n]
            common = max(n - k - LAG_BATCH + 1, 0)  # where every lag of the batch is in the row
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
            for t in range(common):
                v = row[t]
                a0 += v * ahead[t]
                a1 += v * ahead[t + 1]
                a2 += v * ahead[t + 2]
                a3 += v * ahead[t + 3]
                a4 += v * ahead[t + 4]
                a5 += v * ahead[t + 5]
                a6 += v * ahead[t + 6]
                a7 += v * ahead[t + 7]
            sums[0] += a0
            sums[1] += a1
            sums[2] += a2
            sums[3] += a3
            sums[4] += a4
            sums[5] += a5
            sums[6] += a6
            sums[7] += a7
            for j in range(LAG_BATCH - 1):  # the ends of the rows
                for t in range(common, n - k - j):
                    sums[j] += row[t] * ahead[t + j]
        for j in range(LAG_BATCH):
            acov[k + j] = sums[j] / n / n_rows


@_jit
def _variances(acov0: float, between: float, n_rows: int, n: int) -> tuple[float, float]:
    """ArviZ's ``mean_var`` (within-row variance, ddof 1) and ``var_plus`` of a series."""
    mean_var = acov0 * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if n_rows > 1:
        var_plus += between
    return mean_var, var_plus


@_jit
def geyer_ess(acov: np.ndarray, n_valid: int, between: float, n_rows: int, n: int) -> float:
    """ESS from the mean autocovariances (ArviZ's ``_ess`` after its ``autocov``).

    ``acov[k]`` for ``k < n_valid`` (``n_valid <= n``) is the mean over the ``n_rows``
    rows of the lag-``k`` autocovariance, ``between`` the variance (ddof 1) of the row
    means. Returns ``-1`` when the sequence needs a lag at or beyond ``n_valid``.
    """
    mean_var, var_plus = _variances(acov[0], between, n_rows, n)
    rho = np.zeros(max(n_valid, 2))
    rho_even = 1.0
    rho[0] = rho_even
    rho_odd = 1.0 - (mean_var - acov[1]) / var_plus
    rho[1] = rho_odd
    # Geyer's initial positive sequence
    t = 1
    while t < (n - 3) and (rho_even + rho_odd) > 0.0:
        if t + 2 >= n_valid:
            return _NEED_MORE
        rho_even = 1.0 - (mean_var - acov[t + 1]) / var_plus
        rho_odd = 1.0 - (mean_var - acov[t + 2]) / var_plus
        if (rho_even + rho_odd) >= 0:
            rho[t + 1] = rho_even
            rho[t + 2] = rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0:
        rho[max_t + 1] = rho_even
    # Geyer's initial monotone sequence
    t = 1
    while t <= max_t - 2:
        if (rho[t + 1] + rho[t + 2]) > (rho[t - 1] + rho[t]):
            rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
            rho[t + 2] = rho[t + 1]
        t += 2
    size = n_rows * n
    head = 0.0
    for i in range(max_t + 1):
        head += rho[i]
    tau = -1.0 + 2.0 * head + (rho[max_t + 1] if max_t + 1 < n else 0.0)
    tau = max(tau, 1.0 / math.log10(size))
    for i in range(min(max_t + 3, n)):
        if math.isnan(rho[i]):
            return math.nan
    return size / tau


@_reassoc
def _row_sums(y: np.ndarray, n_rows: int, n: int, out: np.ndarray) -> None:
    """Sum of each row (reassociated: SIMD); non-finite when a value is."""
    for r in range(n_rows):
        total = 0.0
        for t in range(n):
            total += y[r * n + t]
        out[r] = total


@_reassoc
def _row_squares(y: np.ndarray, n_rows: int, n: int, means: np.ndarray, out: np.ndarray) -> None:
    """Sum of squared deviations from ``means`` of each row (reassociated: SIMD)."""
    for r in range(n_rows):
        total = 0.0
        m = means[r]
        for t in range(n):
            d = y[r * n + t] - m
            total += d * d
        out[r] = total


@_reassoc
def _total(x: np.ndarray) -> float:
    """Return the sum of ``x`` (reassociated: SIMD)."""
    total = 0.0
    for v in x:
        total += v
    return total


@_reassoc
def _central_moments(x: np.ndarray, mu: float) -> tuple[float, float]:
    """Return the sums of the squared and fourth-power deviations of ``x`` from ``mu``."""
    m2 = 0.0
    m4 = 0.0
    for v in x:
        d2 = (v - mu) * (v - mu)
        m2 += d2
        m4 += d2 * d2
    return m2, m4


#: Sum of squares of a row below which it may be constant (checked value by value).
_TINY = 1e-30


@_jit
def _row_moments(y: np.ndarray, n_rows: int, n: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Mean and sum of squared deviations of each row of ``y``; whether ``y`` may be constant.

    May be constant: its range may be below ArviZ's resolution (the caller checks). A
    constant row (a stuck chain) gets exactly its value as mean and 0 as sum of squares.
    """
    means = np.empty(n_rows)
    squares = np.empty(n_rows)
    _row_sums(y, n_rows, n, means)
    means /= n
    _row_squares(y, n_rows, n, means, squares)
    for r in range(n_rows):
        if squares[r] <= n * _TINY:  # nearly constant: is it exactly?
            first = y[r * n]
            same = True
            for t in range(n):
                same = same and y[r * n + t] == first
            if same:
                means[r], squares[r] = first, 0.0
    maybe_constant = squares.sum() <= n_rows * n * _TINY and means.max() - means.min() < 1e-15
    return means, squares, bool(maybe_constant)


@_jit
def _var(values: np.ndarray) -> float:
    """``np.var(values, ddof=1)``."""
    m = values.mean()
    s = 0.0
    for v in values:
        s += (v - m) * (v - m)
    return s / (values.size - 1)


@_jit
def _series_ess(y: np.ndarray, n_rows: int, n: int, acov: np.ndarray) -> tuple[float, float]:
    """ESS of the series ``y`` (rows of ``n``), centred in place; and its ``between``.

    The lags are summed in batches (8, 16, 32, ... up to :data:`DIRECT_LAGS`) until
    Geyer's sequence ends; :data:`NEED_FFT` when it runs past :data:`DIRECT_LAGS`, or
    when the autocorrelation at the last lag summed, decaying geometrically from there,
    would still exceed :data:`_FADED` at :data:`DIRECT_LAGS` (a chain that mixes
    slowly: the FFT is cheaper than the lags it would take).
    """
    means, _, maybe_constant = _row_moments(y, n_rows, n)
    if not math.isfinite(means.sum()):  # a non-finite value, or an overflow: NaN, as ArviZ
        return math.nan, 0.0
    if maybe_constant and y.max() - y.min() < _RESOLUTION:
        return float(n_rows * n), 0.0
    between = _var(means)
    for r in range(n_rows):
        for t in range(n):
            y[r * n + t] -= means[r]
    done = n - n  # 0, typed as the lags summed later: a literal 0 compiled _lag_sums twice
    while True:
        want = min(max(2 * done, LAG_BATCH), DIRECT_LAGS)
        _lag_sums(y, n_rows, n, done, want, acov)
        done = want
        ess = geyer_ess(acov, min(done, n), between, n_rows, n)
        if ess != _NEED_MORE:
            return ess, between
        mean_var, var_plus = _variances(acov[0], between, n_rows, n)
        rho = 1.0 - (mean_var - acov[done - 1]) / var_plus
        if done >= DIRECT_LAGS or rho ** (DIRECT_LAGS / (done - 1)) > _FADED:
            return NEED_FFT, between


@_jit
def _rhat(z: np.ndarray, n_rows: int, n: int) -> float:
    """ArviZ's ``_rhat`` of the rows of ``z`` (finite)."""
    means, squares, _ = _row_moments(z, n_rows, n)
    within = (squares / (n - 1)).mean()
    between = n * _var(means)
    return math.sqrt((between / within + n - 1) / n)


@_jit
def _assign_ranks(values: np.ndarray, where: np.ndarray, table: np.ndarray, z: np.ndarray) -> None:
    """``z[where[i]] = table[i + j]`` over each run ``i..j`` of equal sorted ``values``.

    ``table[m]`` is the z-score of the average rank ``m / 2 + 1``.
    """
    size = values.size
    i = 0
    while i < size:
        j = i
        while j + 1 < size and values[j + 1] == values[i]:
            j += 1
        score = table[i + j]
        for g in range(i, j + 1):
            z[where[g]] = score
        i = j + 1


@_jit
def _quantile(x: np.ndarray, order: np.ndarray, prob: float) -> float:
    """``np.quantile(x, prob)`` (method ``linear``) from the sort order of ``x``."""
    n = x.size
    virtual = (n - 1) * prob
    prev = math.floor(virtual)
    if virtual >= n - 1:
        return x[order[n - 1]]
    if virtual < 0:
        return x[order[0]]
    a, b = x[order[int(prev)]], x[order[int(prev) + 1]]
    gamma = virtual - prev
    diff = b - a
    if gamma >= 0.5:
        return b - diff * (1 - gamma)
    return a + diff * gamma


@_jit
def _index_bits(n: int) -> int:
    """Bits that hold a position ``0..n-1`` (at least 1)."""
    bits = 1
    while (1 << bits) < n:
        bits += 1
    return bits


@_jit
def split_keys(x: np.ndarray, y: np.ndarray, keys: np.ndarray) -> None:
    """Lay the draws out as split chains and make the keys that sort them.

    Parameters
    ----------
    x
        Draws, shape ``(chains, draws, K)``, float64, any strides (a slice of the
        caller's array: it is read once, a row of ``K`` values at a time).
    y
        Output, ``(K, chains * draws)``: the split rows of ``n = draws // 2`` draws, one
        after the other (row ``c`` the first half of chain ``c``, row ``chains + c`` its
        last half, ArviZ's order), then the middle draw of each chain when ``draws`` is
        odd.
    keys
        Output, ``(K, chains * draws)`` int64: the bits of each draw of ``y`` made
        monotone (a float's bits as a signed integer, all but the sign flipped when
        negative, order as the floats do), their lowest :func:`_index_bits` bits
        replaced by the draw's position in ``y``. Sorted (``numpy.sort``, whose SIMD
        sort of integers is about twice as fast as an argsort), they order the draws up
        to the dropped bits; :func:`_sort_order` finishes the order.
    """
    n_chain, n_draw, n_k = x.shape
    half = n_draw // 2
    n_split = 2 * n_chain * half
    bits = _index_bits(n_chain * n_draw)
    high = ~((1 << bits) - 1)
    for c in range(n_chain):
        # (first draw, end, position in y of the first) of the halves and the middle draw
        segments = (
            (0, half, c * half),
            (n_draw - half, n_draw, (n_chain + c) * half),
            (half, n_draw - half, n_split + c),
        )
        for start, stop, first in segments:
            for t0 in range(start, stop, _TILE):  # a tile of draws x K stays in cache
                t1 = min(t0 + _TILE, stop)
                at = first + t0 - start
                for k in range(n_k):
                    row = y[k, at : at + t1 - t0]
                    for t in range(t1 - t0):
                        row[t] = x[c, t0 + t, k]
    for k in range(n_k):
        raw = y[k].view(np.int64)
        kk = keys[k]
        for p in range(raw.size):
            i = raw[p]
            kk[p] = ((i ^ ((i >> 63) & 0x7FFFFFFFFFFFFFFF)) & high) | p


@_jit
def _sort_order(keys: np.ndarray, y: np.ndarray) -> None:
    """Turn the sorted keys of ``y`` (:func:`split_keys`) into its sort order, in place.

    Keys equal but for the position bits are ties or draws that differ only in their
    lowest bits (rare); a run of them whose draws are out of order is sorted by its
    draws (:func:`_merge_sort`, stable). Then only the positions are kept.
    """
    size = keys.size
    bits = _index_bits(size)
    low = (1 << bits) - 1
    i = 0
    while i < size:
        j = i
        ordered = True
        while j + 1 < size and (keys[j + 1] ^ keys[i]) >> bits == 0:
            ordered = ordered and y[keys[j] & low] <= y[keys[j + 1] & low]
            j += 1
        for g in range(i, j + 1):
            keys[g] &= low
        if not ordered:
            _merge_sort(keys[i : j + 1], y)
        i = j + 1


#: Positions sorted by insertion before :func:`_merge_sort` merges them.
_INSERTION_RUN = 16


@_jit
def _merge_sort(order: np.ndarray, y: np.ndarray) -> None:
    """Sort the positions ``order`` by ``y[order]``, in place, stably.

    Bottom-up merge sort of runs of :data:`_INSERTION_RUN` sorted by insertion. Written
    out rather than ``np.argsort(kind="mergesort")``: numba took about 10 s to compile
    that generic sort, on every new machine, for runs a few draws long.
    """
    n = order.size
    for start in range(0, n, _INSERTION_RUN):
        for a in range(start + 1, min(start + _INSERTION_RUN, n)):
            p = order[a]
            b = a - 1
            while b >= start and y[order[b]] > y[p]:
                order[b + 1] = order[b]
                b -= 1
            order[b + 1] = p
    src = order
    dst = np.empty_like(order)
    in_order = True  # whether src is order (numba has no identity test of arrays)
    width = _INSERTION_RUN
    while width < n:
        for start in range(0, n, 2 * width):
            mid = min(start + width, n)
            stop = min(start + 2 * width, n)
            a, b = start, mid
            for g in range(start, stop):
                if a < mid and (b >= stop or y[src[a]] <= y[src[b]]):
                    dst[g] = src[a]
                    a += 1
                else:
                    dst[g] = src[b]
                    b += 1
        src, dst = dst, src
        in_order = not in_order
        width *= 2
    if not in_order:
        for g in range(n):
            order[g] = src[g]


@_jit
def diagnose_block(
    y: np.ndarray,
    keys: np.ndarray,
    n_chain: int,
    table: np.ndarray,
    probs: np.ndarray,
    series: np.ndarray,
    between: np.ndarray,
    out: np.ndarray,
) -> None:
    """Diagnose every quantity of a block.

    Parameters
    ----------
    y
        Draws of each quantity laid out by :func:`split_keys`, shape ``(K, N)``,
        ``N = chains * draws``.
    keys
        The keys of :func:`split_keys`, each row sorted; on return the sort order of
        each row of ``y`` (``argsort``).
    n_chain
        Number of chains.
    table
        z-scores of the average ranks: ``table[m] = ndtri((m/2 + 1 - 3/8) / (S + 1/4))``,
        ``S`` the number of split draws.
    probs
        Probabilities of the quantile indicators whose ESS is wanted.
    series
        Output, ``(K, 3 + len(probs), S)``: the ESS series marked :data:`NEED_FFT`,
        centred, as split rows, for the FFT fallback (the others are left unwritten:
        the pages of an ``numpy.empty`` array that are never written cost nothing).
    between
        Output, ``(K, 3 + len(probs))``: variance of the row means of each series.
    out
        Output, ``(K, N_OUT + len(probs))``: mean, sd, rhat, ess_bulk, ess_mean, ess_sd,
        mean squared and fourth-power deviation, then each quantile's ESS (NaN where
        ArviZ gives NaN).
    """
    n_k, n_full = y.shape
    n_draw = n_full // n_chain
    half = n_draw // 2
    n_rows = 2 * n_chain
    n_split = n_rows * half
    n_q = probs.size
    vals = np.empty(n_split)
    where = np.empty(n_split, dtype=np.int32)  # positions among a quantity's draws
    fold_vals = np.empty(n_split)
    fold_where = np.empty(n_split, dtype=np.int32)
    zb = np.empty(n_split)
    other = np.empty(n_split)  # the fold's z-scores, then each other series in turn
    quants = np.empty(n_q)
    acov = np.empty(max(n_draw, 2) + DIRECT_LAGS)
    for k in range(n_k):
        yk = y[k]
        order = keys[k]
        _sort_order(order, yk)
        total = _total(yk)
        mu = total / n_full
        m2, m4 = _central_moments(yk, mu)
        out[k, 0] = mu
        out[k, 1] = math.sqrt(m2 / (n_full - 1)) if n_full > 1 else math.nan
        out[k, 6] = m2 / n_full
        out[k, 7] = m4 / n_full
        has_nan = False
        if math.isnan(total):  # a NaN draw, or +inf and -inf
            for v in yk:
                has_nan = has_nan or math.isnan(v)
        if has_nan or n_draw < 4:
            out[k, 2:6] = math.nan
            out[k, N_OUT:] = math.nan
            continue
        count = 0
        for i in range(n_full):
            p = order[i]
            if p < n_split:  # not a middle draw
                vals[count] = yk[p]
                where[count] = p
                count += 1
        _assign_ranks(vals, where, table, zb)
        rhat_bulk = _rhat(zb, n_rows, half)
        # folding about the median: |v - med| falls then rises along the sorted draws
        med = (vals[n_split // 2 - 1] + vals[n_split // 2]) / 2
        right = n_split // 2
        while right > 0 and vals[right - 1] >= med:
            right -= 1
        while right < n_split and vals[right] < med:
            right += 1
        left = right - 1
        for i in range(n_split):
            take_left = left >= 0 and (
                right >= n_split or abs(vals[left] - med) <= abs(vals[right] - med)
            )
            if take_left:
                fold_vals[i] = abs(vals[left] - med)
                fold_where[i] = where[left]
                left -= 1
            else:
                fold_vals[i] = abs(vals[right] - med)
                fold_where[i] = where[right]
                right += 1
        _assign_ranks(fold_vals, fold_where, table, other)
        rhat_tail = _rhat(other, n_rows, half)
        out[k, 2] = rhat_tail if rhat_tail > rhat_bulk else rhat_bulk
        if n_chain < 2:
            out[k, 2] = math.nan
        # draws, squared deviations and quantile indicators as split rows
        for j in range(n_q):
            quants[j] = _quantile(yk, order, probs[j])
        for s in range(3 + n_q):  # one series at a time: the working set stays small
            work = zb if s == _BULK else other
            if s == _MEAN:
                for p in range(n_split):
                    work[p] = yk[p]
            elif s == _SD:
                for p in range(n_split):
                    work[p] = (yk[p] - mu) ** 2
            elif s > _SD:
                for p in range(n_split):
                    work[p] = 1.0 if yk[p] <= quants[s - 3] else 0.0
            ess, between[k, s] = _series_ess(work, n_rows, half, acov)
            out[k, 3 + s if s < 3 else N_OUT + s - 3] = ess
            if ess == NEED_FFT:
                for p in range(n_split):
                    series[k, s, p] = work[p]
