r"""Compiled part of the model check: tails of a count of cells (Poisson-binomial).

:func:`~bayes_ir.hierarchical.adequacy.check_model` compares the observed number of
exact 0s (or 1s) of a system with its posterior predictive distribution. Given a draw
the count is a sum of independent Bernoulli variables, one per cell, with the cells'
probabilities :math:`q_1, \dots, q_T` (a Poisson-binomial variable); its mass function
up to :math:`j` follows from the recursion over the cells

.. math::

    f_c(k) = f_{c-1}(k)\,(1 - q_c) + f_{c-1}(k - 1)\,q_c, \qquad f_0 = \delta_0,

truncated at :math:`k \le j` (the masses above :math:`j` do not enter those below).
Cost :math:`O(T j)` per draw and system, in place, without the temporaries of the
array version (Chen and Liu 1997, the direct convolution).

References
----------
Chen, S. X., Liu, J. S. (1997). Statistical applications of the Poisson-binomial and
conditional Bernoulli distributions. *Statistica Sinica* 7(4), 875-892.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["poisson_binomial_tails"]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def poisson_binomial_tails(q: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean over draws of :math:`P(X \le j_b)` and :math:`P(X \le j_b - 1)` per system.

    ``q`` (n draws, B systems, T cells): the probability of each cell's event (0 for a
    missing cell); ``j`` (B,): the counts, non-negative integers. :math:`P(X \le -1) = 0`.
    """
    n, b, t = q.shape
    le = np.zeros(b)
    lt = np.zeros(b)
    pmf = np.empty(int(j.max()) + 1 if b else 1)
    for s in range(b):
        top = int(j[s])
        for i in range(n):
            pmf[0] = 1.0
            for k in range(1, top + 1):
                pmf[k] = 0.0
            for c in range(t):
                qc = q[i, s, c]
                for k in range(min(c + 1, top), 0, -1):
                    pmf[k] = pmf[k] * (1.0 - qc) + pmf[k - 1] * qc
                pmf[0] *= 1.0 - qc
            below = 0.0
            for k in range(top):
                below += pmf[k]
            le[s] += below + pmf[top]
            lt[s] += below
    return le / n, lt / n
