r"""The regularised incomplete beta function over arrays, compiled: the zoib model check's CDF.

:math:`I_x(a, b)` by its continued fraction (Abramowitz and Stegun 1964, 26.5.8),
evaluated with the modified Lentz method (Press et al. 2007, *Numerical Recipes*, 3rd
ed., 6.4), after the symmetry :math:`I_x(a, b) = 1 - I_{1-x}(b, a)` when :math:`x >
(a + 1)/(a + b + 2)`, where the fraction converges fast; the prefactor
:math:`x^a (1-x)^b / (a B(a, b))` from ``lgamma``. The posterior predictive check of the
zoib family evaluates it once per interior score and draw (27 million times on Robust04
AP): ``scipy.special.betainc`` spends most of that check there. Its error, measured
against scipy in the tests, is below 5e-13 absolute for beta shapes up to 100 and 1e-10
up to 10,000 (the prefactor's ``lgamma`` differences lose digits there); shapes that are
not positive and finite, and arguments outside (0, 1), are left to scipy.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from bayes_ir.hierarchical.families._vmath import jit

__all__ = ["betainc"]

_EPS = 1e-16  # the fraction stops when a step changes it by less
_FPMIN = 1e-300  # Lentz's guard against a zero denominator
_MAXIT = 10_000


@jit
def _fraction(a, b, x):
    r"""Return the continued fraction of :math:`I_x(a, b)\, a B(a, b) / (x^a (1-x)^b)`."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) >= _FPMIN else _FPMIN)
    h = d
    for m in range(1, _MAXIT + 1):
        m2 = 2.0 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),  # even step
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),  # odd step
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) >= _FPMIN else _FPMIN)
            c = 1.0 + aa / c
            c = c if abs(c) >= _FPMIN else _FPMIN
            step = d * c
            h *= step
        if abs(step - 1.0) < _EPS:
            break
    return h


@jit
def _betainc_into(a, b, x, out, regular):
    """``out[i] = I_x[i](a[i], b[i])`` where ``regular[i]`` (positive shapes, 0 < x < 1)."""
    for i in range(x.size):
        ai, bi, xi = a[i], b[i], x[i]
        regular[i] = 0.0 < ai < np.inf and 0.0 < bi < np.inf and 0.0 < xi < 1.0
        if not regular[i]:
            continue
        log_front = (ai * math.log(xi) + bi * math.log1p(-xi) + math.lgamma(ai + bi)
                     - math.lgamma(ai) - math.lgamma(bi))  # fmt: skip
        if xi * (ai + bi + 2.0) < ai + 1.0:
            out[i] = math.exp(log_front) * _fraction(ai, bi, xi) / ai
        else:
            out[i] = 1.0 - math.exp(log_front) * _fraction(bi, ai, 1.0 - xi) / bi


def betainc(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Regularised incomplete beta :math:`I_x(a, b)` of equal-shaped arrays (module docstring)."""
    a, b, x = (np.ascontiguousarray(v, dtype=float).ravel() for v in (a, b, x))
    out = np.empty(x.size)
    regular = np.empty(x.size, dtype=np.bool_)
    _betainc_into(a, b, x, out, regular)
    if not regular.all():  # scipy's conventions at the edges
        out[~regular] = special.betainc(a[~regular], b[~regular], x[~regular])
    return out
