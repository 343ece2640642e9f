r"""Compiled log posterior and gradient of the binomial (and Bernoulli) model, for nutpie.

The model of :func:`~bayes_ir.hierarchical.families.binomial.build_pymc_model` is the
definition; this module is a hand-written numba implementation of *the same* log
density (same priors, same transforms) and its exact gradient, in one loop over the
topic x system matrix, called by nutpie through C callbacks without the GIL, as the
skew-normal kernel (:mod:`bayes_ir.hierarchical.skewnormal_kernel`, whose reasons
apply: compiled once per machine, any data shape, no PyTensor compilation per fit).

Model, with :math:`k_{ts}` successes of :math:`n_{ts}` trials (Bernoulli:
:math:`n_{ts} = 1`) and :math:`\eta_{ts} = b_0 + a_t + c_s`:

.. math::

    \log p = \sum_{ts} \Big[\log\binom{n_{ts}}{k_{ts}} + k_{ts}\eta_{ts}
    - n_{ts}\log(1 + e^{\eta_{ts}})\Big] + \log p(b_0, \tau, \chi, a, c),

the prior part and the unconstrained coordinates being those of
:mod:`bayes_ir.hierarchical.families._kernel`. The gradient of the likelihood with
respect to a cell's predictor is :math:`k_{ts} - n_{ts}\,\mathrm{logit}^{-1}(\eta_{ts})`;
the sum :math:`\sum k_{ts}\eta_{ts}` is linear in the effects and comes from the row and
column sums of :math:`k` (stored in the data block).

When every observed cell has the same number of trials :math:`N` (Bernoulli, P@k), the
cells need no transcendental function: :math:`e^{\eta_{ts}} = e^{b_0 + a_t} e^{c_s}`, one
``exp`` per topic and per system, then per cell a product, a sum and a division
(:math:`\mathrm{logit}^{-1}(\eta) = e/(1 + e)`), and
:math:`\sum_s \log(1 + e^{\eta_{ts}}) = \log \prod_s (1 + e^{\eta_{ts}})`, one ``log``
per :data:`_CHUNK` cells (the product of :data:`_CHUNK` factors stays finite while
:math:`\eta \le` :data:`_ETA_MAX`; a product rounds to within one ulp, so the sum is as
exact as summing the logarithms). About 2.5 ns a cell against 10 ns. A row that may
overflow (an effect beyond :data:`_EXP_MAX`, or :math:`\eta >` :data:`_ETA_MAX`), and every
row of a table with unequal trials, takes one call of
:func:`~bayes_ir.hierarchical.families._kernel.softplus_expit` per cell instead. A missing
cell has :math:`k = n = 0` and adds nothing, without a branch: its factor is
:math:`1 + e \cdot n/N = 1`.

``tests/hierarchical/families/test_binomial_kernel.py`` checks value and gradient against
PyMC's ``compile_logp`` / ``compile_dlogp`` of the PyMC model at random points, on both
paths, and against numpy's closed form with unequal trials.

Data block (:func:`pack`): the crossed header, ``log_binom`` (the sum of the log binomial
coefficients), ``trials`` (the common trials of the observed cells, 0 if they differ), the
row sums (T) and column sums (S) of ``k``, ``k`` and ``n`` (T x S each, row-major), then
the crossed part's topic flags (:func:`~._kernel.assemble`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bayes_ir.hierarchical.families._kernel import (
    EXPAND_SIGNATURE,
    LOGP_SIGNATURE,
    N_CROSSED,
    N_CROSSED_HEADER,
    assemble,
    crossed_effects,
    crossed_prior,
    jit,
    nutpie_status,
    reported_crossed,
    softplus_expit,
    vectors_start,
    with_gradient,
)

__all__ = [
    "DIMS",
    "N_HEADER",
    "expand_cfunc",
    "expanded_layout",
    "logp_and_grad",
    "logp_cfunc",
    "n_coordinates",
    "pack",
]

#: Values of the data block before the sums of ``k`` (the crossed header, log_binom, trials).
N_HEADER = N_CROSSED_HEADER + 2
#: Cells per ``log`` of a product of factors :math:`1 + e^\eta` (a power of 2).
_CHUNK = 16
#: Largest predictor of a row whose factors are multiplied: :math:`(1 + e^{40})^{16}` is
#: below the largest double.
_ETA_MAX = 40.0
#: Largest absolute ``b0 + a_t`` or ``c_s`` whose ``exp`` is taken apart.
_EXP_MAX = 300.0
# The family's own scalars in theta (none), typed int64: a literal 0 would compile the shared
# crossed_effects and crossed_prior once more beside zoib's int64 version.
_NO_SCALARS = np.int64(0)
#: Dims of the vectors :func:`expand_cfunc` writes.
DIMS = {"topic_effect": ("topic",), "system_effect": ("system",)}


@jit
def _block_size(n_t, n_s):
    """Length of the data block of a T x S table."""
    return N_HEADER + n_t + n_s + 2 * n_t * n_s + n_t


@jit
def _row_by_products(k, n, trials, u, v, g_system):
    """One row with common trials: ``sum_s n log(1 + e^eta)`` and the row's gradient.

    Adds the cells' gradients to ``g_system``. ``u`` is :math:`e^{b_0 + a_t}`, ``v`` the
    systems' :math:`e^{c_s}`.
    """
    inv = 1.0 / trials
    row = 0.0
    logsum = 0.0
    prod = 1.0
    for s in range(v.size):
        e = u * v[s] * (n[s] * inv)
        q = 1.0 + e
        g = k[s] - trials * (e / q)
        row += g
        g_system[s] += g
        prod *= q
        if (s & (_CHUNK - 1)) == _CHUNK - 1:
            logsum += math.log(prod)
            prod = 1.0
    return trials * (logsum + math.log(prod)), row


@jit
def _row_by_cells(k, n, base, system, g_system):
    """One row cell by cell: ``sum_s n log(1 + e^eta)`` and the row's gradient (as above)."""
    row = 0.0
    soft_sum = 0.0
    for s in range(system.size):
        soft, p = softplus_expit(base + system[s])
        nn = n[s]
        soft_sum += nn * soft
        g = k[s] - nn * p
        row += g
        g_system[s] += g
    return soft_sum, row


@jit
def _loglik(data, b0, topic, system, g_topic, g_system):
    """Log-likelihood; fills the gradients with respect to the topic and system effects."""
    n_t, n_s = int(data[0]), int(data[1])
    trials = data[N_CROSSED_HEADER + 1]
    k_rows = data[N_HEADER : N_HEADER + n_t]
    k_cols = data[N_HEADER + n_t : N_HEADER + n_t + n_s]
    start = N_HEADER + n_t + n_s
    cells = n_t * n_s
    k = data[start : start + cells].reshape((n_t, n_s))
    n = data[start + cells : start + 2 * cells].reshape((n_t, n_s))
    v = np.empty(n_s)
    top = -np.inf
    bounded = trials > 0.0
    linear = 0.0
    for s in range(n_s):
        g_system[s] = 0.0
        top = max(top, system[s])
        bounded = bounded and abs(system[s]) <= _EXP_MAX
        v[s] = math.exp(min(system[s], _EXP_MAX))
        linear += k_cols[s] * system[s]
    soft = 0.0
    for t in range(n_t):
        base = b0 + topic[t]
        linear += k_rows[t] * base
        if bounded and abs(base) <= _EXP_MAX and base + top <= _ETA_MAX:
            row_soft, g_topic[t] = _row_by_products(k[t], n[t], trials, math.exp(base), v, g_system)
        else:
            row_soft, g_topic[t] = _row_by_cells(k[t], n[t], base, system, g_system)
        soft += row_soft
    return linear - soft + data[N_CROSSED_HEADER]


@jit
def _logp_grad(theta, data, grad):
    """Log posterior density at ``theta``; writes its gradient into ``grad``."""
    n_t, n_s = int(data[0]), int(data[1])
    topic = np.empty(n_t)
    system = np.empty(n_s)
    tau, chi = crossed_effects(theta, data, _NO_SCALARS, topic, system)
    g_topic = np.empty(n_t)
    g_system = np.empty(n_s)
    ll = _loglik(data, theta[0], topic, system, g_topic, g_system)
    return ll + crossed_prior(
        theta, data, _NO_SCALARS, g_topic, g_system, topic, system, tau, chi, grad
    )


def pack(k: np.ndarray, n: np.ndarray, header: np.ndarray) -> np.ndarray:
    """Pack the data block: header, log coefficients, common trials, sums of k, k, n.

    ``header`` is the crossed part (:func:`~._kernel.pack_header`).
    ``k`` and ``n`` are T x S with NaN for missing cells (stored as 0 successes of 0).
    Keep the block alive while nutpie samples: its callbacks read it through a pointer.
    """
    from scipy.special import gammaln

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if k.ndim != 2 or k.shape != n.shape:
        raise ValueError("expected two matrices of one shape")
    obs = np.isfinite(k)
    k0, n0 = np.where(obs, k, 0.0), np.where(obs, n, 0.0)
    log_binom = float((gammaln(n0 + 1) - gammaln(k0 + 1) - gammaln(n0 - k0 + 1))[obs].sum())
    common = np.unique(n0[obs])
    trials = float(common[0]) if common.size == 1 and common[0] > 0 else 0.0
    parts = [[log_binom, trials], k0.sum(axis=1), k0.sum(axis=0), k0, n0]
    return assemble(header, parts)


def n_coordinates(data: np.ndarray) -> int:
    """Return the number of unconstrained coordinates (``theta``'s length) of a data block."""
    return int(vectors_start(data, _NO_SCALARS))  # no vectors of its own


def logp_and_grad(theta: np.ndarray, data: np.ndarray) -> tuple[float, np.ndarray]:
    """Log posterior density (unconstrained coordinates) and its gradient.

    Equal to PyMC's ``compile_logp`` / ``compile_dlogp`` of
    :func:`~bayes_ir.hierarchical.families.binomial.build_pymc_model` at the same point.
    """
    return with_gradient(_logp_grad, theta, data)


@numba.cfunc(LOGP_SIGNATURE, cache=True, error_model="numpy")
def logp_cfunc(dim, x_, grad_, logp_, data_):
    """Nutpie's C callback: log density and gradient (status 3/4: not finite)."""
    header = numba.carray(data_, (2,))
    data = numba.carray(data_, (_block_size(int(header[0]), int(header[1])),))
    grad = numba.carray(grad_, (dim,))
    value = _logp_grad(numba.carray(x_, (dim,)), data, grad)
    numba.carray(logp_, (1,))[0] = value
    return nutpie_status(value, grad)


@numba.cfunc(EXPAND_SIGNATURE, cache=True, error_model="numpy")
def expand_cfunc(dim, n_out, x_, out_, data_):
    """Write the reported values of one draw (nutpie's C callback), as :func:`expanded_layout`."""
    header = numba.carray(data_, (2,))
    n_t, n_s = int(header[0]), int(header[1])
    data = numba.carray(data_, (_block_size(n_t, n_s),))
    theta = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_out,))
    b0, tau, chi = reported_crossed(theta, data, _NO_SCALARS, out[N_CROSSED : N_CROSSED + n_t],
                                    out[N_CROSSED + n_t : N_CROSSED + n_t + n_s])  # fmt: skip
    out[0], out[1], out[2] = b0, tau, chi
    return 0


def expanded_layout(n_t: int, n_s: int) -> tuple[list[str], list[tuple[int, ...]]]:
    """Names and shapes of the values :func:`expand_cfunc` writes, in its order."""
    return (
        ["b0", "sigma_topic", "sigma_system", "topic_effect", "system_effect"],
        [(), (), (), (n_t,), (n_s,)],
    )
