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
both come from one call of
:func:`~bayes_ir.hierarchical.families._kernel.softplus_expit` per cell (about 10 ns).
A missing cell has :math:`k = n = 0` and adds nothing, without a branch.

``tests/hierarchical/families/test_binomial_kernel.py`` checks value and gradient against
PyMC's ``compile_logp`` / ``compile_dlogp`` of the PyMC model at random points.

Data block (:func:`pack`): the crossed header, ``log_binom`` (the sum of the log binomial
coefficients), then ``k`` and ``n`` (T x S each, row-major).
"""

from __future__ import annotations

import numba
import numpy as np

from bayes_ir.hierarchical.families._kernel import (
    EXPAND_SIGNATURE,
    LOGP_SIGNATURE,
    N_CROSSED,
    N_CROSSED_HEADER,
    crossed_effects,
    crossed_prior,
    jit,
    nutpie_status,
    softplus_expit,
    with_gradient,
)

__all__ = [
    "DIMS",
    "N_HEADER",
    "expand_cfunc",
    "expanded_layout",
    "logp_and_grad",
    "logp_cfunc",
    "pack",
]

#: Values of the data block before the matrices.
N_HEADER = N_CROSSED_HEADER + 1
# The family's own scalars in theta (none), typed int64: a literal 0 would compile the shared
# crossed_effects and crossed_prior once more beside zoib's int64 version.
_NO_SCALARS = np.int64(0)
#: Dims of the vectors :func:`expand_cfunc` writes.
DIMS = {"topic_effect": ("topic",), "system_effect": ("system",)}


@jit
def _loglik(data, b0, topic, system, g_topic, g_system):
    """Log-likelihood; fills the gradients with respect to the topic and system effects."""
    n_t, n_s = int(data[0]), int(data[1])
    cells = n_t * n_s
    k = data[N_HEADER : N_HEADER + cells].reshape((n_t, n_s))
    n = data[N_HEADER + cells : N_HEADER + 2 * cells].reshape((n_t, n_s))
    for s in range(n_s):
        g_system[s] = 0.0
    ll = 0.0
    for t in range(n_t):
        base = b0 + topic[t]
        row = 0.0
        for s in range(n_s):
            eta = base + system[s]
            soft, p = softplus_expit(eta)
            kk = k[t, s]
            nn = n[t, s]
            ll += kk * eta - nn * soft
            g = kk - nn * p
            row += g
            g_system[s] += g
        g_topic[t] = row
    return ll + data[N_CROSSED_HEADER]


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
    """Pack the data block: ``header`` (:func:`~._kernel.pack_header`), log coefficients, k, n.

    ``k`` and ``n`` are T x S with NaN for missing cells (stored as 0 successes of 0).
    Keep the block alive while nutpie samples: its callbacks read it through a pointer.
    """
    from scipy.special import gammaln

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if header.size != N_CROSSED_HEADER or k.ndim != 2 or k.shape != n.shape:
        raise ValueError(f"expected two matrices of one shape and {N_CROSSED_HEADER} header values")
    obs = np.isfinite(k)
    k0, n0 = np.where(obs, k, 0.0), np.where(obs, n, 0.0)
    log_binom = float((gammaln(n0 + 1) - gammaln(k0 + 1) - gammaln(n0 - k0 + 1))[obs].sum())
    return np.ascontiguousarray(np.concatenate([header, [log_binom], k0.ravel(), n0.ravel()]))


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
    data = numba.carray(data_, (N_HEADER + 2 * int(header[0]) * int(header[1]),))
    grad = numba.carray(grad_, (dim,))
    value = _logp_grad(numba.carray(x_, (dim,)), data, grad)
    numba.carray(logp_, (1,))[0] = value
    return nutpie_status(value, grad)


@numba.cfunc(EXPAND_SIGNATURE, cache=True, error_model="numpy")
def expand_cfunc(dim, n_out, x_, out_, data_):
    """Write the reported values of one draw (nutpie's C callback), as :func:`expanded_layout`."""
    header = numba.carray(data_, (2,))
    n_t, n_s = int(header[0]), int(header[1])
    data = numba.carray(data_, (N_HEADER + 2 * n_t * n_s,))
    theta = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_out,))
    tau, chi = crossed_effects(theta, data, _NO_SCALARS, out[N_CROSSED : N_CROSSED + n_t],
                               out[N_CROSSED + n_t : N_CROSSED + n_t + n_s])  # fmt: skip
    out[0], out[1], out[2] = theta[0], tau, chi
    return 0


def expanded_layout(n_t: int, n_s: int) -> tuple[list[str], list[tuple[int, ...]]]:
    """Names and shapes of the values :func:`expand_cfunc` writes, in its order."""
    return (
        ["b0", "sigma_topic", "sigma_system", "topic_effect", "system_effect"],
        [(), (), (), (n_t,), (n_s,)],
    )
