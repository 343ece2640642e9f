r"""Compiled log posterior of the zoib model's per-system inflation, a block of its own.

In the zero-one-inflated beta model (:mod:`~.zoib_kernel`) the probability of an exact 0
or 1, :math:`\pi_s`, and the share of 1s among them, :math:`\kappa_s`, enter the
likelihood only through each system's counts of exact 0s (:math:`n_{0s}`), exact 1s
(:math:`n_{1s}`) and scores inside (0, 1) (:math:`m_s`):

.. math::

    \log p = \sum_s (n_{0s} + n_{1s}) \log\pi_s + m_s \log(1 - \pi_s)
    + n_{1s}\log\kappa_s + n_{0s}\log(1 - \kappa_s),

and their parameters appear in no other term. So the posterior factorises: the
inflation's parameters are independent of the beta part's (intercept, topic and system
effects, precisions) a posteriori, and each block can be sampled on its own (here, with
its own NUTS warm-up) and the draws put side by side. With one inflation per system
(``zoib(inflation=system)``) this block is two hierarchical logistic regressions on
:math:`S` counts:

.. math::

    \mathrm{logit}\,\pi_s = z_0 + \zeta\,\tilde z_s, \quad
    \mathrm{logit}\,\kappa_s = k_0 + \xi\,\tilde k_s, \quad
    z_0, k_0 \sim \mathrm{Logistic}(0, 1), \quad \zeta, \xi \sim \mathrm{Exp}(\lambda),
    \quad \tilde z, \tilde k \sim \mathrm{ZeroSumNormal}(1),

the priors of :func:`~bayes_ir.hierarchical.families.zoib.build_pymc_model`, whose log
density is the sum of this block's and the beta part's (checked in the tests). Sampled
inside one NUTS run with the beta part, the two blocks share one step size and one
trajectory length, and on Robust04 AP (249 topics x 110 systems, most systems with no
exact 0, a few with 5-13%) the warm-up settled on 63 leapfrog steps per draw instead of
about 10 for the beta part alone (300 s instead of 55 s); apart, this block costs
:math:`O(S)` per gradient.

Unconstrained coordinates: ``zoi logit, coi logit, log zoi_sd, log coi_sd``, then the
``S - 1`` free coordinates of :math:`\tilde z` and of :math:`\tilde k` (PyMC's zero-sum
transform). Data block (:func:`pack`): ``S``, the rate :math:`\lambda`, then the counts
:math:`n_0`, :math:`n_1`, :math:`m` per system.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy import special

from bayes_ir.hierarchical.families._kernel import (
    EXPAND_SIGNATURE,
    LOGP_SIGNATURE,
    _extend,
    expit,
    exponential_log,
    free_vector_prior,
    jit,
    logistic_prior,
    nutpie_status,
    softplus_expit,
    with_gradient,
)

__all__ = [
    "DIMS",
    "count_loglik",
    "expand_cfunc",
    "expanded_layout",
    "logp_and_grad",
    "logp_cfunc",
    "n_coordinates",
    "pack",
    "start",
]

#: Dims of the vectors :func:`expand_cfunc` writes.
DIMS: dict[str, tuple[str, ...]] = {"zoi": ("system",), "coi": ("system",)}
_N_SCALARS = np.int64(4)  # typed: a literal int would compile _extend once more


@jit
def count_loglik(n0, n1, m, zoi_x, coi_x):
    r"""Log mass of ``n0`` exact 0s, ``n1`` exact 1s and ``m`` scores inside (0, 1).

    At ``zoi`` and ``coi`` logits ``zoi_x``, ``coi_x``: :math:`(n_0 + n_1)\log\pi +
    m\log(1-\pi) + n_1\log\kappa + n_0\log(1-\kappa)`. Returns it and its derivatives
    with respect to the two logits.
    """
    soft, zoi = softplus_expit(zoi_x)  # log(1 + e^x), expit(x)
    ll = (n0 + n1) * (zoi_x - soft) - m * soft
    g_zoi = (n0 + n1) * (1.0 - zoi) - m * zoi
    soft, coi = softplus_expit(coi_x)
    ll += n1 * (coi_x - soft) - n0 * soft
    g_coi = n1 * (1.0 - coi) - n0 * coi
    return ll, g_zoi, g_coi


@jit
def _size(data):
    """Length of the data block, from its header."""
    return 2 + 3 * int(data[0])


@jit
def _logits(theta, n_s, zoi_x, coi_x, z_eff, k_eff):
    """Fill each system's zoi and coi logits (and their deviations); return the two SDs."""
    zsd, ksd = math.exp(theta[2]), math.exp(theta[3])
    _extend(theta, _N_SCALARS, n_s, zsd, z_eff)
    _extend(theta, _N_SCALARS + n_s - 1, n_s, ksd, k_eff)
    for s in range(n_s):
        zoi_x[s] = theta[0] + z_eff[s]
        coi_x[s] = theta[1] + k_eff[s]
    return zsd, ksd


@jit
def _logp_grad(theta, data, grad):
    """Log posterior density of the block at ``theta``; writes its gradient into ``grad``."""
    n_s = int(data[0])
    n0, n1, m = data[2 : 2 + n_s], data[2 + n_s : 2 + 2 * n_s], data[2 + 2 * n_s :]
    zoi_x, coi_x, z_eff, k_eff = np.empty(n_s), np.empty(n_s), np.empty(n_s), np.empty(n_s)
    zsd, ksd = _logits(theta, n_s, zoi_x, coi_x, z_eff, k_eff)
    g_zoi, g_coi = np.empty(n_s), np.empty(n_s)
    ll = 0.0
    for s in range(n_s):
        value, g_zoi[s], g_coi[s] = count_loglik(n0[s], n1[s], m[s], zoi_x[s], coi_x[s])
        ll += value
    for i, g in ((0, g_zoi), (1, g_coi)):
        prior, d_prior = logistic_prior(theta[i])
        ll += prior
        grad[i] = g.sum() + d_prior
    start = _N_SCALARS
    for slot, scale, g, eff in ((2, zsd, g_zoi, z_eff), (3, ksd, g_coi, k_eff)):
        prior, dot = free_vector_prior(theta, start, n_s, scale, g, eff, grad)
        ll += prior + exponential_log(theta, slot, data[1], grad, dot)
        start += n_s - 1
    return ll


def pack(y: np.ndarray, rate: float) -> np.ndarray:
    """Pack the data block: the counts per system of exact 0s, exact 1s and scores inside.

    ``y`` is the T x S matrix of scores in [0, 1] (NaN for missing cells); ``rate`` that
    of the Exponential prior of the SDs ``zoi_sd`` and ``coi_sd``.
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 2:
        raise ValueError("expected a matrix of scores")
    obs = np.isfinite(y)
    counts = [(obs & (y == 0)).sum(axis=0), (obs & (y == 1)).sum(axis=0)]
    counts.append((obs & (y > 0) & (y < 1)).sum(axis=0))
    head = np.array([y.shape[1], rate], dtype=float)
    return np.ascontiguousarray(np.concatenate([head, *counts]).astype(float))


def n_coordinates(data: np.ndarray) -> int:
    """Return the number of unconstrained coordinates of a data block."""
    return int(_N_SCALARS) + 2 * (int(data[0]) - 1)


def start(data: np.ndarray) -> np.ndarray:
    """Centre of the chains' starting points: the pooled share of exact 0s and 1s.

    ``zoi`` at the observed share (clipped to [0.01, 0.99]), ``coi`` at 1/2, the SDs at
    the prior mean ``1 / rate``, every system at the typical value.
    """
    n_s = int(data[0])
    n0, n1, m = (data[2 + i * n_s : 2 + (i + 1) * n_s].sum() for i in range(3))
    share = (n0 + n1) / max(n0 + n1 + m, 1.0)
    out = np.zeros(n_coordinates(data))
    out[0] = special.logit(min(max(share, 0.01), 0.99))
    out[2] = out[3] = -math.log(data[1])
    return out


def logp_and_grad(theta: np.ndarray, data: np.ndarray) -> tuple[float, np.ndarray]:
    """Log posterior density of the block (unconstrained coordinates) and its gradient."""
    return with_gradient(_logp_grad, theta, data)


@numba.cfunc(LOGP_SIGNATURE, cache=True, error_model="numpy")
def logp_cfunc(dim, x_, grad_, logp_, data_):
    """Nutpie's C callback: log density and gradient (status 3/4: not finite)."""
    data = numba.carray(data_, (_size(numba.carray(data_, (1,))),))
    grad = numba.carray(grad_, (dim,))
    value = _logp_grad(numba.carray(x_, (dim,)), data, grad)
    numba.carray(logp_, (1,))[0] = value
    return nutpie_status(value, grad)


@numba.cfunc(EXPAND_SIGNATURE, cache=True, error_model="numpy")
def expand_cfunc(dim, n_out, x_, out_, data_):
    """Write the reported values of one draw (nutpie's C callback), as :func:`expanded_layout`."""
    n_s = int(numba.carray(data_, (1,))[0])
    theta = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_out,))
    zoi_x, coi_x, z_eff, k_eff = np.empty(n_s), np.empty(n_s), np.empty(n_s), np.empty(n_s)
    zsd, ksd = _logits(theta, n_s, zoi_x, coi_x, z_eff, k_eff)
    out[0], out[1], out[2], out[3] = expit(theta[0]), zsd, expit(theta[1]), ksd
    for s in range(n_s):
        out[4 + s] = expit(zoi_x[s])
        out[4 + n_s + s] = expit(coi_x[s])
    return 0


def expanded_layout(n_s: int) -> tuple[list[str], list[tuple[int, ...]]]:
    """Names and shapes of the values :func:`expand_cfunc` writes, in its order."""
    names = ["zoi_typical", "zoi_sd", "coi_typical", "coi_sd", "zoi", "coi"]
    return names, [(), (), (), (), (n_s,), (n_s,)]
