r"""Compiled log posterior and gradient of the Gaussian model with one residual SD per system.

The model of :func:`~bayes_ir.hierarchical.build_model` with ``sigma="system"`` (and
every system pooled) is the definition; this module is a hand-written numba
implementation of *the same* log density (same priors and transforms) and its exact
gradient, called by nutpie through C callbacks as the families' kernels are
(:mod:`~bayes_ir.hierarchical.families.zoib_kernel`). PyMC's graph of this model costs
about 19 s to compile in every new process and about 19 ns per cell per gradient on
Robust04 AP; the kernel compiles once per machine (cached on disk) and costs about 1 ns
per cell (the cell loop is vectorised: 2.8 s of sampling for 180,000 gradients on two
cores, against 47.5 s).

Model, for the score :math:`y_{ts}` of system :math:`s` on topic :math:`t`:

.. math::

    y_{ts} \sim N(b_0 + a_t + c_s,\ \sigma_s), \qquad
    \log\sigma_s = \log\sigma_{typ} + \lambda\,\tilde z_s,

with the crossed effects and their priors of
:mod:`~bayes_ir.hierarchical.families._kernel` (topic and system effects centred, as the
PyMC model has them), :math:`\sigma_{typ} \sim \mathrm{Exp}(r_\sigma)`,
:math:`\lambda \sim \mathrm{Exp}(r_\lambda)` and :math:`\tilde z` a standard
ZeroSumNormal. With :math:`r_{ts} = y_{ts} - b_0 - a_t - c_s`, :math:`w_s =
\sigma_s^{-2}`, :math:`n_s` the observed scores of system :math:`s` and :math:`q_s =
\sum_t r_{ts}^2 w_s`:

.. math::

    \log p(y) = -\tfrac12 \sum_s q_s - \sum_s n_s \log\sigma_s
    - N \log\sqrt{2\pi}, \qquad
    \frac{\partial}{\partial a_t} = \sum_s r_{ts} w_s, \quad
    \frac{\partial}{\partial c_s} = \sum_t r_{ts} w_s, \quad
    \frac{\partial}{\partial\log\sigma_s} = q_s - n_s.

One pass over the matrix gives all of them; a missing cell has weight 0 in a mask
(no branch in the loop, which the compiler vectorises).

Unconstrained coordinates: ``b0, log sigma_topic, log sigma_system, log sigma_typical,
log sigma_log_sd``, the topic and system coordinates, then the ``S - 1`` standard
coordinates of :math:`\tilde z`.

Data block (:func:`pack`): the crossed header, ``sigma_rate, sigma_log_sd_rate``, the
observed scores per system, then the scores (T x S, row by row, 0 where missing) and
the mask (1 observed, 0 missing), and the crossed part's topic flags
(:func:`~._kernel.assemble`; unused: zero-sum topics).
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
    _extend,
    assemble,
    crossed_effects,
    crossed_prior,
    exponential_log,
    free_vector_prior,
    jit,
    nutpie_status,
    reported_crossed,
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

#: Values of the data block before the arrays.
N_HEADER = N_CROSSED_HEADER + 2
_H = N_CROSSED_HEADER  # start of the model's own header
# Unconstrained scalars after the crossed ones (log sigma_typical, log sigma_log_sd) and the
# position of the first, typed int64: a literal argument is typed ``Literal[int]`` and
# compiles the callee once per value.
_N_SCALARS = np.int64(2)
_C = np.int64(N_CROSSED)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: Dims of the vectors :func:`expand_cfunc` writes.
DIMS: dict[str, tuple[str, ...]] = {
    "sigma": ("system",),
    "topic_effect": ("topic",),
    "system_effect": ("system",),
}
# The cell loop's sums reassociated (SIMD over the systems of a row); IEEE otherwise.
_cells_jit = numba.njit(
    nogil=True, cache=True, fastmath={"contract", "reassoc"}, error_model="numpy"
)


@jit
def _size(data):
    """Length of the data block, from its header."""
    n_t, n_s = int(data[0]), int(data[1])
    return N_HEADER + n_s + 2 * n_t * n_s + n_t


@_cells_jit
def _cells(data, b0, topic, system, w, g_topic, g_system, q):
    """One pass over the cells: fills ``g_topic``, ``g_system`` and ``q`` (module docstring)."""
    n_t, n_s = int(data[0]), int(data[1])
    o = N_HEADER + n_s
    y = data[o : o + n_t * n_s]
    mask = data[o + n_t * n_s : o + 2 * n_t * n_s]
    for s in range(n_s):
        g_system[s] = 0.0
        q[s] = 0.0
    for t in range(n_t):
        base = b0 + topic[t]
        row_g = 0.0
        row = t * n_s
        for s in range(n_s):
            r = (y[row + s] - base - system[s]) * mask[row + s]
            rw = r * w[s]
            row_g += rw
            g_system[s] += rw
            q[s] += r * rw
        g_topic[t] = row_g


@jit
def _log_sigma(theta, data, effect, log_sigma):
    """Fill each system's ``log sigma_s`` and its deviation ``effect``; return ``lambda``."""
    n_s = int(data[1])
    c = _C
    lam = math.exp(theta[c + 1])
    _extend(theta, vectors_start(data, _N_SCALARS), n_s, lam, effect)
    for s in range(n_s):
        log_sigma[s] = theta[c] + effect[s]
    return lam


@jit
def _logp_grad(theta, data, grad):
    """Log posterior density at ``theta``; writes its gradient into ``grad``."""
    n_t, n_s = int(data[0]), int(data[1])
    topic, system = np.empty(n_t), np.empty(n_s)
    tau, chi = crossed_effects(theta, data, _N_SCALARS, topic, system)
    effect, log_sigma = np.empty(n_s), np.empty(n_s)
    lam = _log_sigma(theta, data, effect, log_sigma)
    w = np.exp(-2.0 * log_sigma)
    g_topic, g_system, q = np.empty(n_t), np.empty(n_s), np.empty(n_s)
    _cells(data, theta[0], topic, system, w, g_topic, g_system, q)
    counts = data[N_HEADER : N_HEADER + n_s]
    ll = 0.0
    g_log_sigma = np.empty(n_s)
    for s in range(n_s):
        ll += -0.5 * q[s] - counts[s] * (log_sigma[s] + _LOG_SQRT_2PI)
        g_log_sigma[s] = q[s] - counts[s]
    lp = crossed_prior(theta, data, _N_SCALARS, g_topic, g_system, topic, system, tau, chi, grad)
    c = _C
    lp += exponential_log(theta, c, data[_H], grad, g_log_sigma.sum())
    start = vectors_start(data, _N_SCALARS)
    prior, dot = free_vector_prior(theta, start, n_s, lam, g_log_sigma, effect, grad)
    lp += prior + exponential_log(theta, c + 1, data[_H + 1], grad, dot)
    return ll + lp


def pack(y: np.ndarray, header: np.ndarray, *, rates: tuple[float, float]) -> np.ndarray:
    """Pack the data block read by the kernel (see the module docstring).

    ``y`` is the T x S matrix of scores (NaN for missing cells); ``header`` the crossed
    part (:func:`~._kernel.pack_header`) of pooled systems, both effects centred;
    ``rates`` those of the priors of ``sigma_typical`` and ``sigma_log_sd``. Keep the
    block alive while nutpie samples: its callbacks read it through a pointer.
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 2:
        raise ValueError("expected a matrix of scores")
    obs = np.isfinite(y)
    block = assemble(header, [rates, obs.sum(axis=0), np.where(obs, y, 0.0), obs])
    if block[8] != 0.0 or block[6] == 0.0 or block[7] == 0.0:
        raise ValueError("the kernel has pooled, zero-sum centred topic and system effects")
    return block


def n_coordinates(n_t: int, n_s: int) -> int:
    """Return the number of unconstrained coordinates (``theta``'s length)."""
    return int(_C + _N_SCALARS) + n_t - 1 + 2 * (n_s - 1)


def logp_and_grad(theta: np.ndarray, data: np.ndarray) -> tuple[float, np.ndarray]:
    """Log posterior density (unconstrained coordinates) and its gradient.

    Equal to PyMC's ``compile_logp`` / ``compile_dlogp`` of
    :func:`~bayes_ir.hierarchical.build_model` (``sigma="system"``) at the same point.
    """
    return with_gradient(_logp_grad, theta, data)


@numba.cfunc(LOGP_SIGNATURE, cache=True, error_model="numpy")
def logp_cfunc(dim, x_, grad_, logp_, data_):
    """Nutpie's C callback: log density and gradient (status 3/4: not finite)."""
    data = numba.carray(data_, (_size(numba.carray(data_, (N_HEADER,))),))
    grad = numba.carray(grad_, (dim,))
    value = _logp_grad(numba.carray(x_, (dim,)), data, grad)
    numba.carray(logp_, (1,))[0] = value
    return nutpie_status(value, grad)


@numba.cfunc(EXPAND_SIGNATURE, cache=True, error_model="numpy")
def expand_cfunc(dim, n_out, x_, out_, data_):
    """Write the reported values of one draw (nutpie's C callback), as :func:`expanded_layout`."""
    data = numba.carray(data_, (_size(numba.carray(data_, (N_HEADER,))),))
    theta = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_out,))
    n_t, n_s = int(data[0]), int(data[1])
    topic, system = np.empty(n_t), np.empty(n_s)
    b0, tau, chi = reported_crossed(theta, data, _N_SCALARS, topic, system)
    effect, log_sigma = np.empty(n_s), np.empty(n_s)
    lam = _log_sigma(theta, data, effect, log_sigma)
    out[0], out[1], out[2] = b0, tau, chi
    out[3], out[4] = math.exp(theta[_C]), lam
    i = 5
    for s in range(n_s):
        out[i + s] = math.exp(log_sigma[s])
    i += n_s
    for t in range(n_t):
        out[i + t] = topic[t]
    for s in range(n_s):
        out[i + n_t + s] = system[s]
    return 0


def expanded_layout(n_t: int, n_s: int) -> tuple[list[str], list[tuple[int, ...]]]:
    """Names and shapes of the values :func:`expand_cfunc` writes, in its order."""
    names = ["b0", "sigma_topic", "sigma_system", "sigma_typical", "sigma_log_sd", "sigma",
             "topic_effect", "system_effect"]  # fmt: skip
    return names, [(), (), (), (), (), (n_s,), (n_t,), (n_s,)]
