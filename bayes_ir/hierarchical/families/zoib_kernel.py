r"""Compiled log posterior and gradient of the zero-one-inflated beta model, for nutpie.

The model of :func:`~bayes_ir.hierarchical.families.zoib.build_pymc_model` is the
definition; this module is a hand-written numba implementation of *the same* log
density (same priors and transforms) and its exact gradient, called by nutpie through
C callbacks as the binomial kernel (:mod:`~.binomial_kernel`) is.

Model (brms' ``zero_one_inflated_beta``), for the score :math:`y_{ts}` of system
:math:`s` on topic :math:`t`, with :math:`\mu_{ts} = \mathrm{logit}^{-1}(b_0 + a_t +
c_s)`:

.. math::

    p(y) = \begin{cases}
    \pi_s (1 - \kappa_s) & y = 0 \\
    \pi_s \kappa_s & y = 1 \\
    (1 - \pi_s)\,\mathrm{Beta}(y \mid \mu_{ts}\phi_s, (1 - \mu_{ts})\phi_s) & 0 < y < 1
    \end{cases}

with ``zoi`` :math:`\pi_s` (the probability of an exact 0 or 1) and ``coi``
:math:`\kappa_s` (the probability that it is a 1), pooled or one per system
(:math:`\mathrm{logit}\,\pi_s = z_0 + \zeta\,\tilde z_s`), and the precision
:math:`\phi_s`, pooled or one per system (:math:`\log\phi_s = \log\phi + \lambda
\tilde p_s`, as ``sigma="system"`` for the Gaussian).

Cost: the exact 0s and 1s enter through their counts per system (:math:`O(S)`); the
scores inside (0, 1) are stored row by row (compressed sparse rows), so exact 0s, 1s and
missing cells cost nothing, and each topic's scores are processed in passes the compiler
vectorises (:mod:`~bayes_ir.hierarchical.families._vmath`): the means and their logs
(:func:`~._vmath.logistic_into`), then :math:`\log\Gamma` and :math:`\psi` of both
shapes in one call of :func:`~._vmath.lgamma_digamma_into`.

Per interior cell, with :math:`a = \mu\phi`, :math:`b = (1-\mu)\phi`:

.. math::

    \log p = \log\Gamma(\phi) - \log\Gamma(a) - \log\Gamma(b) + (a - 1)\log y
    + (b - 1)\log(1 - y), \\
    \partial/\partial\eta = \phi\,(\log y - \log(1-y) - \psi(a) + \psi(b))\,\mu(1-\mu),
    \\
    \partial/\partial\log\phi = \phi\,(\psi(\phi) - \mu\psi(a) - (1-\mu)\psi(b)
    + \mu\log y + (1-\mu)\log(1-y)).

With one inflation per system (``inflation_by_system``) the kernel is the beta part
alone and the inflation is sampled apart, as a block of its own: the posterior
factorises (:mod:`~.inflation_kernel`, which says why this pays). With pooled inflation
the two logits are two more coordinates here.

Unconstrained coordinates: ``b0, log sigma_topic, log sigma_system, log phi``, then
``zoi logit, coi logit`` (pooled inflation), ``log phi_log_sd`` (per-system precision),
the topic and system coordinates (:mod:`~bayes_ir.hierarchical.families._kernel`), and
the standard coordinates of the per-system precision.

Data block (:func:`pack`): the crossed header, ``phi_rate, phi_log_sd_rate,
inflation_sd_rate, phi_by_system, inflation_by_system, n_interior``, the counts per
system of exact 0s, exact 1s and interior scores, the row pointers (T + 1), then per
interior score its system, :math:`\log y` and :math:`\log(1 - y)`, and the crossed part's
topic flags (:func:`~._kernel.assemble`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bayes_ir.hierarchical.families._kernel import (
    EXPAND_SIGNATURE,
    LOGP_SIGNATURE,
    N_CROSSED_HEADER,
    _extend,
    assemble,
    crossed_effects,
    crossed_prior,
    expit,
    exponential_log,
    free_vector_prior,
    jit,
    logistic_prior,
    n_crossed,
    nutpie_status,
    reported_crossed,
    vectors_start,
    with_gradient,
)
from bayes_ir.hierarchical.families._vmath import lgamma_digamma_into, logistic_into
from bayes_ir.hierarchical.families.inflation_kernel import count_loglik

__all__ = [
    "N_HEADER",
    "dims",
    "expand_cfunc",
    "expanded_layout",
    "logp_and_grad",
    "logp_cfunc",
    "n_coordinates",
    "n_scalars",
    "pack",
]

#: Values of the data block before the arrays.
N_HEADER = N_CROSSED_HEADER + 6
_H = N_CROSSED_HEADER  # start of the family's header


@jit
def _layout(data):
    """``T, S``, per-system precision, per-system inflation, interior scores, scalars."""
    phi_sys = data[_H + 3] != 0.0
    infl_sys = data[_H + 4] != 0.0
    n_scalars = 1 + (0 if infl_sys else 2) + (1 if phi_sys else 0)
    return int(data[0]), int(data[1]), phi_sys, infl_sys, int(data[_H + 5]), n_scalars


@jit
def _size(data):
    """Length of the data block, from its header."""
    n_t, n_s, _, _, nnz, _ = _layout(data)
    return N_HEADER + 3 * n_s + n_t + 1 + 3 * nnz + n_t


@jit
def _system_terms(theta, data, log_phi, p_eff):
    """Fill each system's log precision; return the SD of log precision (0 when pooled).

    ``p_eff`` receives the per-system deviations (zero when pooled).
    """
    n_t, n_s, phi_sys, infl_sys, _, n_scalars = _layout(data)
    c = n_crossed(data)
    lam = 0.0
    for s in range(n_s):
        p_eff[s] = 0.0
    if phi_sys:
        lam = math.exp(theta[c + n_scalars - 1])  # the last scalar
        _extend(theta, vectors_start(data, n_scalars), n_s, lam, p_eff)
    for s in range(n_s):
        log_phi[s] = theta[c] + p_eff[s]
    return lam


@jit
def _interior_loglik(data, b0, topic, system, phi, log_phi, g_topic, g_system, g_phi):
    r"""Beta part of the log-likelihood (scores inside (0, 1)) and its gradients.

    ``log_phi`` is ``log(phi)``. Fills ``g_topic``, ``g_system`` (d / d effect) and
    ``g_phi`` (per system, the sum over its interior scores of :math:`\mu(\log y -
    \psi(a)) + (1-\mu)(\log(1-y) - \psi(b))`, completed by :func:`_system_loglik`).
    One topic at a time, in passes over its scores that the compiler vectorises
    (:mod:`~bayes_ir.hierarchical.families._vmath`): the linear predictors, the means
    and their logs, the two shapes' :math:`\log\Gamma` and :math:`\psi` together, the
    cells' terms; then the sums per topic and per system.
    """
    n_t, n_s, _, _, nnz, _ = _layout(data)
    o = N_HEADER + 3 * n_s
    row = data[o : o + n_t + 1]
    col = data[o + n_t + 1 : o + n_t + 1 + nnz]
    log_y = data[o + n_t + 1 + nnz : o + n_t + 1 + 2 * nnz]
    log_1my = data[o + n_t + 1 + 2 * nnz : o + n_t + 1 + 3 * nnz]
    for s in range(n_s):
        g_system[s] = 0.0
        g_phi[s] = 0.0
    per_cell = np.empty((10, n_s))  # scratch rows, one value per score of a topic
    eta, mu, one_m, log_mu, log_one_m = (
        per_cell[0],
        per_cell[1],
        per_cell[2],
        per_cell[3],
        per_cell[4],
    )
    ph, lp, cell_ll, cell_g, cell_gp = (
        per_cell[5],
        per_cell[6],
        per_cell[7],
        per_cell[8],
        per_cell[9],
    )
    index = np.empty(n_s, dtype=np.int64)  # the systems of a topic's scores
    per_shape = np.empty((7, 2 * n_s))  # scratch rows, one value per shape (two per score)
    shape, log_shape, lg, dg = per_shape[0], per_shape[1], per_shape[2], per_shape[3]
    w1, w2, w3 = per_shape[4], per_shape[5], per_shape[6]
    ll = 0.0
    for t in range(n_t):
        lo = int(row[t])
        n = int(row[t + 1]) - lo
        base = b0 + topic[t]
        for k in range(n):
            s = int(col[lo + k])
            index[k] = s
            eta[k] = base + system[s]
            ph[k] = phi[s]
            lp[k] = log_phi[s]
        logistic_into(eta, mu, one_m, log_mu, log_one_m, n, w1, w2)
        for k in range(n):  # the shapes a = mu phi (first n) and b = (1 - mu) phi
            shape[k] = mu[k] * ph[k]
            shape[n + k] = one_m[k] * ph[k]
            log_shape[k] = log_mu[k] + lp[k]
            log_shape[n + k] = log_one_m[k] + lp[k]
        lgamma_digamma_into(shape, log_shape, lg, dg, 2 * n, w1, w2, w3)
        for k in range(n):
            ly, l1y, p, m, q = log_y[lo + k], log_1my[lo + k], ph[k], mu[k], one_m[k]
            cell_ll[k] = (m * p - 1.0) * ly + (q * p - 1.0) * l1y - lg[k] - lg[n + k]
            cell_g[k] = p * (ly - l1y - dg[k] + dg[n + k]) * m * q
            cell_gp[k] = m * (ly - dg[k]) + q * (l1y - dg[n + k])
        row_g = 0.0
        for k in range(n):
            s = index[k]
            ll += cell_ll[k]
            row_g += cell_g[k]
            g_system[s] += cell_g[k]
            g_phi[s] += cell_gp[k]
        g_topic[t] = row_g
    return ll


@jit
def _system_loglik(data, phi, log_phi, g_phi):
    """Per-system term of the beta part: log Gamma(phi) per interior score."""
    n_s = int(data[1])
    m = data[N_HEADER + 2 * n_s : N_HEADER + 3 * n_s]
    work = np.empty((5, n_s))
    lg_p, dg_p, w1, w2, w3 = work[0], work[1], work[2], work[3], work[4]
    lgamma_digamma_into(phi, log_phi, lg_p, dg_p, n_s, w1, w2, w3)
    ll = 0.0
    for s in range(n_s):
        ll += m[s] * lg_p[s]
        g_phi[s] = phi[s] * (g_phi[s] + m[s] * dg_p[s])
    return ll


@jit
def _pooled_inflation(theta, data, grad):
    """Log mass of every exact 0 and 1 at the pooled ``zoi`` and ``coi``, with their priors."""
    n_s = int(data[1])
    total = [data[N_HEADER + i * n_s : N_HEADER + (i + 1) * n_s].sum() for i in range(3)]
    c = n_crossed(data)
    ll, g_zoi, g_coi = count_loglik(total[0], total[1], total[2], theta[c + 1], theta[c + 2])
    for i, g in ((c + 1, g_zoi), (c + 2, g_coi)):
        prior, d_prior = logistic_prior(theta[i])
        ll += prior
        grad[i] = g + d_prior
    return ll


@jit
def _logp_grad(theta, data, grad):
    """Log posterior density at ``theta``; writes its gradient into ``grad``."""
    n_t, n_s, phi_sys, infl_sys, _, n_scalars = _layout(data)
    topic = np.empty(n_t)
    system = np.empty(n_s)
    tau, chi = crossed_effects(theta, data, n_scalars, topic, system)
    log_phi, p_eff = np.empty(n_s), np.empty(n_s)
    lam = _system_terms(theta, data, log_phi, p_eff)
    phi = np.exp(log_phi)
    g_topic, g_system, g_phi = np.empty(n_t), np.empty(n_s), np.empty(n_s)
    ll = _interior_loglik(data, theta[0], topic, system, phi, log_phi, g_topic, g_system,
                          g_phi)  # fmt: skip
    ll += _system_loglik(data, phi, log_phi, g_phi)
    lp = crossed_prior(theta, data, n_scalars, g_topic, g_system, topic, system, tau, chi, grad)
    c = n_crossed(data)
    lp += exponential_log(theta, c, data[_H], grad, g_phi.sum())
    if not infl_sys:
        lp += _pooled_inflation(theta, data, grad)
    if phi_sys:
        start = vectors_start(data, n_scalars)
        prior, dot = free_vector_prior(theta, start, n_s, lam, g_phi, p_eff, grad)
        lp += prior + exponential_log(theta, c + n_scalars - 1, data[_H + 1], grad, dot)
    return ll + lp


def pack(
    y: np.ndarray,
    header: np.ndarray,
    *,
    rates: tuple[float, float, float],
    phi_by_system: bool,
    inflation_by_system: bool,
) -> np.ndarray:
    """Pack the data block read by the kernel (see the module docstring).

    ``y`` is the T x S matrix of scores in [0, 1] (NaN for missing cells); ``header``
    the crossed part (:func:`~._kernel.pack_header`); ``rates`` those of the priors of
    ``phi``, ``phi_log_sd`` and the SDs of the per-system inflation. Keep the block
    alive while nutpie samples: its callbacks read it through a pointer.
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 2:
        raise ValueError("expected a matrix of scores")
    obs = np.isfinite(y)
    inside = obs & (y > 0) & (y < 1)
    t_idx, s_idx = np.nonzero(inside)  # row-major: topic by topic
    row = np.concatenate([[0], np.cumsum(inside.sum(axis=1))])
    vals = y[t_idx, s_idx]
    head = [*rates, float(phi_by_system), float(inflation_by_system), float(vals.size)]
    counts = [(obs & (y == 0)).sum(axis=0), (obs & (y == 1)).sum(axis=0), inside.sum(axis=0)]
    return assemble(header, [head, *counts, row, s_idx, np.log(vals), np.log1p(-vals)])


def n_scalars(data: np.ndarray) -> int:
    """Return the number of the family's own scalars in ``theta`` (before the topics)."""
    return int(_layout(data)[5])


def n_coordinates(data: np.ndarray) -> int:
    """Return the number of unconstrained coordinates (``theta``'s length) of a data block."""
    _, n_s, phi_sys, _, _, n_scalars = _layout(data)
    return int(vectors_start(data, n_scalars)) + (n_s - 1) * int(phi_sys)


def logp_and_grad(theta: np.ndarray, data: np.ndarray) -> tuple[float, np.ndarray]:
    """Log posterior density (unconstrained coordinates) and its gradient.

    Equal to PyMC's ``compile_logp`` / ``compile_dlogp`` of
    :func:`~bayes_ir.hierarchical.families.zoib.build_pymc_model` at the same point.
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
    n_t, n_s, phi_sys, infl_sys, _, n_scalars = _layout(data)
    topic, system = np.empty(n_t), np.empty(n_s)
    b0, tau, chi = reported_crossed(theta, data, n_scalars, topic, system)
    log_phi, p_eff = np.empty(n_s), np.empty(n_s)
    lam = _system_terms(theta, data, log_phi, p_eff)
    out[0], out[1], out[2] = b0, tau, chi
    c = n_crossed(data)
    i = 3
    if phi_sys:
        out[i], out[i + 1] = math.exp(theta[c]), lam
        i += 2
        for s in range(n_s):
            out[i + s] = math.exp(log_phi[s])
        i += n_s
    else:
        out[i] = math.exp(log_phi[0])
        i += 1
    if not infl_sys:
        out[i], out[i + 1] = expit(theta[c + 1]), expit(theta[c + 2])
        i += 2
    for t in range(n_t):
        out[i + t] = topic[t]
    for s in range(n_s):
        out[i + n_t + s] = system[s]
    return 0


def expanded_layout(
    n_t: int, n_s: int, phi_by_system: bool, inflation_by_system: bool
) -> tuple[list[str], list[tuple[int, ...]]]:
    """Names and shapes of the values :func:`expand_cfunc` writes, in its order.

    With ``inflation_by_system`` the inflation is not among them: it is sampled apart
    (:mod:`~.inflation_kernel`).
    """
    names: list[str] = ["b0", "sigma_topic", "sigma_system"]
    shapes: list[tuple[int, ...]] = [(), (), ()]
    if phi_by_system:
        names += ["phi_typical", "phi_log_sd", "phi"]
        shapes += [(), (), (n_s,)]
    else:
        names.append("phi")
        shapes.append(())
    if not inflation_by_system:
        names += ["zoi", "coi"]
        shapes += [(), ()]
    return [*names, "topic_effect", "system_effect"], [*shapes, (n_t,), (n_s,)]


def dims(phi_by_system: bool) -> dict[str, tuple[str, ...]]:
    """Dims of the vectors :func:`expand_cfunc` writes."""
    out: dict[str, tuple[str, ...]] = {"topic_effect": ("topic",), "system_effect": ("system",)}
    if phi_by_system:
        out["phi"] = ("system",)
    return out
