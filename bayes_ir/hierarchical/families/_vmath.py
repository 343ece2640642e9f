r"""Elementary and special functions over arrays, in loops the compiler vectorises.

The kernels' costliest cells need :math:`e^x`, :math:`\log x`, :math:`\log\Gamma` and
the digamma function :math:`\psi` once or twice per cell. Calls of the C library's
``exp`` and ``log`` are not vectorised on a CPU without a vector math library (numba
without Intel's SVML); the loops here use only arithmetic, comparisons and integer
operations on the bits of doubles, which LLVM turns into SIMD instructions (4 doubles
per instruction with AVX2). Their error, measured against numpy and scipy in the tests,
is below 5e-16 relative for ``exp``, ``log`` and the logistic function and 3e-14
absolute for :math:`\log\Gamma` and :math:`\psi` (relative from 1).

The polynomials are written out term by term: a loop over an array of coefficients is
not unrolled by numba, and the loop over values around it is then not vectorised (twice
slower).

Every function fills the first ``n`` values of its output arrays from the first ``n``
of its inputs and takes scratch arrays of at least ``n`` values (no allocation inside).

- :func:`exp_into`: Cody and Waite's reduction :math:`x = k\log 2 + r`,
  :math:`|r| \le \log 2 / 2`, a degree-13 Taylor polynomial for :math:`e^r` and
  :math:`2^k` built from its exponent bits (Muller 2016, *Elementary Functions*, ch. 11);
  arguments are clamped to [-700, 700].
- :func:`log_into`: :math:`x = 2^e m` with :math:`m \in [\sqrt{2}/2, \sqrt 2)` read from
  the bits, :math:`\log m = 2\,\mathrm{atanh}\,s`, :math:`s = (m - 1)/(m + 1)`, by its
  series to :math:`s^{19}` (:math:`|s| \le 0.1716`); for positive, finite, normal
  arguments only (the callers' arguments are so by construction).
- :func:`logistic_into`: :math:`\mu = \mathrm{logit}^{-1}(\eta)`, :math:`1 - \mu` and
  their logarithms to full precision, from :math:`e = e^{-|\eta|}`: the smaller of the
  two is :math:`e / (1 + e)`, and :math:`\log(1 + e)` is :math:`\log u - ((u - 1) -
  e)/u` with :math:`u = 1 + e` (Goldberg 1991, theorem 4), so :math:`\log\mu =
  -\log(1 + e^{-\eta})` keeps its digits for every sign of :math:`\eta`.
- :func:`lgamma_digamma_into`: below 8 the recurrences :math:`\log\Gamma(x) =
  \log\Gamma(x + 8) - \log x - \log\prod_{i=1}^{7}(x + i)` and :math:`\psi(x) =
  \psi(x + 8) - \sum_{i=0}^{7} 1/(x + i)` (Abramowitz and Stegun 1964, 6.1.15 and
  6.3.5), then Stirling's series at :math:`z \ge 8` to :math:`z^{-13}` and
  :math:`z^{-14}` (6.1.41 and 6.3.18; the first omitted terms are below 1e-15 there).
  The caller gives :math:`\log x` (for a beta shape :math:`\mu\phi` it is
  :math:`\log\mu + \log\phi`, exact where :math:`\mu\phi` underflows).
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["exp_into", "jit", "lgamma_digamma_into", "log_into", "logistic_into"]

#: The compilation of every kernel function: IEEE division (a zero scale is a non-finite
#: density, reported to nutpie, never an exception, which cannot leave a C callback); FMA
#: contraction; no reassociation, so the results do not depend on the vector width.
jit = numba.njit(nogil=True, cache=True, fastmath={"contract"}, error_model="numpy")

_LN2_HI = 6.93147180369123816490e-01  # log 2 in two parts (fdlibm's split)
_LN2_LO = 1.90821492927058770002e-10
_LOG2E = 1.4426950408889634
_ROUND = 6755399441055744.0  # 1.5 * 2**52: adding it rounds to an integer in the low bits
_ROUND_BITS = 0x4338000000000000  # its bit pattern
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD  # bits of sqrt(2) / 2
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_SHIFT = 8.0  # the recurrence lifts arguments below this to [8, 16)


@jit
def exp_into(x, out, n, work):
    """``out[:n] = exp(x[:n])`` (arguments clamped to [-700, 700]); ``work``: scratch."""
    bits = work.view(np.int64)
    for k in range(n):
        v = min(max(x[k], -700.0), 700.0)
        t = v * _LOG2E + _ROUND
        kf = t - _ROUND
        r = (v - kf * _LN2_HI) - kf * _LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        out[k] = p * r + 1.0
        work[k] = t
    for k in range(n):  # 2**k from k's bits: (k + 1023) << 52
        bits[k] = (bits[k] - _ROUND_BITS + 1023) << 52
    for k in range(n):
        out[k] *= work[k]


@jit
def log_into(x, out, n, work):
    """``out[:n] = log(x[:n])`` for positive, finite, normal ``x``; ``work``: scratch.

    ``out`` may be ``x`` itself.
    """
    xb = x.view(np.int64)
    mb = work.view(np.int64)
    for k in range(n):
        e = (xb[k] - _SQRT_HALF_BITS) >> 52  # exponent with m in [sqrt(2)/2, sqrt(2))
        mb[k] = xb[k] - (e << 52)
        out[k] = e
    for k in range(n):
        m = work[k]
        s = (m - 1.0) / (m + 1.0)
        z = s * s
        p = 2.0 / 19.0
        p = p * z + 2.0 / 17.0
        p = p * z + 2.0 / 15.0
        p = p * z + 2.0 / 13.0
        p = p * z + 2.0 / 11.0
        p = p * z + 2.0 / 9.0
        p = p * z + 2.0 / 7.0
        p = p * z + 2.0 / 5.0
        p = p * z + 2.0 / 3.0
        e = out[k]
        out[k] = e * _LN2_HI + (s * (2.0 + z * p) + e * _LN2_LO)


@jit
def lgamma_digamma_into(x, log_x, lg, dg, n, w1, w2, w3):
    r"""``lg[:n] = log Gamma(x)``, ``dg[:n] = psi(x)`` for ``x > 0`` given ``log_x = log(x)``.

    ``w1``, ``w2``, ``w3``: scratch. A non-finite ``x`` or ``log_x`` gives NaN or an
    infinity, never a finite value.
    """
    for k in range(n):
        v = x[k]
        small = v < _SHIFT
        # Q = (x + 1) ... (x + 7) and Q'/Q + 1/x = sum_{i<8} 1/(x + i), or 1 and 0 from 8
        a = v + 1.0 if small else 1.0
        b = 1.0 if small else 0.0
        f1, f2, f3, f4, f5, f6, f7 = a, a + b, a + 2 * b, a + 3 * b, a + 4 * b, a + 5 * b, a + 6 * b
        q12, q34, q56 = f1 * f2, f3 * f4, f5 * f6
        d12, d34, d56 = f1 + f2, f3 + f4, f5 + f6
        q14 = q12 * q34
        d14 = d12 * q34 + d34 * q12
        q57 = q56 * f7
        d57 = d56 * f7 + q56
        q = q14 * q57
        w1[k] = v + _SHIFT if small else v
        w2[k] = q
        dg[k] = ((d14 * q57 + d57 * q14) / q + 1.0 / v) * b
    log_into(w1, lg, n, w3)  # log z (recomputed also from 8, where log_x replaces it)
    log_into(w2, w2, n, w3)  # log Q (0 from 8)
    for k in range(n):  # every load unconditional, so that the selections vectorise
        small = x[k] < _SHIFT
        z, log_z, log_v, log_q = w1[k], lg[k], log_x[k], w2[k]
        lz = log_z if small else log_v
        r = 1.0 / z
        r2 = r * r
        s_lg = r * (
            1.0 / 12.0
            - r2
            * (
                1.0 / 360.0
                - r2
                * (
                    1.0 / 1260.0
                    - r2
                    * (1.0 / 1680.0 - r2 * (1.0 / 1188.0 - r2 * (691.0 / 360360.0 - r2 / 156.0)))
                )
            )
        )
        s_dg = r2 * (
            1.0 / 12.0
            - r2
            * (
                1.0 / 120.0
                - r2
                * (
                    1.0 / 252.0
                    - r2 * (1.0 / 240.0 - r2 * (1.0 / 132.0 - r2 * (691.0 / 32760.0 - r2 / 12.0)))
                )
            )
        )
        shift = (log_v + log_q) if small else 0.0
        lg[k] = (z - 0.5) * lz - z + _HALF_LOG_2PI + s_lg - shift
        dg[k] = lz - 0.5 * r - s_dg - dg[k]


@jit
def logistic_into(eta, mu, one_m, log_mu, log_one_m, n, w1, w2):
    r"""``mu = expit(eta)``, ``one_m = 1 - mu`` and their logs, each to full precision.

    ``w1``, ``w2``: scratch.
    """
    for k in range(n):
        mu[k] = -abs(eta[k])
    exp_into(mu, w1, n, w2)  # e = exp(-|eta|)
    for k in range(n):
        w2[k] = 1.0 + w1[k]
    log_into(w2, log_mu, n, one_m)  # log u, corrected below
    for k in range(n):
        e, u, lu, v = w1[k], w2[k], log_mu[k], eta[k]
        soft = lu - ((u - 1.0) - e) / u  # log(1 + e)
        small = e / u
        pos = v >= 0.0
        size = abs(v)
        mu[k] = 1.0 - small if pos else small
        one_m[k] = small if pos else 1.0 - small
        log_mu[k] = -soft if pos else -size - soft
        log_one_m[k] = -size - soft if pos else -soft
