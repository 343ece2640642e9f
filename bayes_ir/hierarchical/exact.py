r"""Exact collapsed sampler for complete topic x system matrices (Gaussian likelihood).

With zero-sum topic effects :math:`a` (:math:`T` topics) and system effects :math:`c`
(:math:`S` systems), the scores of a complete matrix split into four orthogonal
parts: the grand mean :math:`\bar y`, the topic deviations
:math:`r_t = \bar y_{t\cdot} - \bar y`, the system deviations
:math:`d_s = \bar y_{\cdot s} - \bar y` and the interaction residual with sum of
squares :math:`SSE`. Given :math:`(\sigma, \tau, \chi)` (residual, topic and system SDs):

.. math::

    \bar y \mid b_0 \sim N(b_0, \sigma^2 / TS), \quad
    r \sim N\big(0, (\tau^2 + \sigma^2/S) P_T\big), \quad
    d \sim N\big(0, (\chi^2 + \sigma^2/T) P_S\big), \quad
    SSE \sim \sigma^2 \chi^2_{(T-1)(S-1)},

independently (:math:`P_n = I - 11^\top/n`), i.e. the score covariance has the
eigenvalues :math:`\sigma^2` (multiplicity :math:`(T-1)(S-1)`, plus the grand-mean
direction, which carries :math:`b_0`), :math:`\lambda_r = \sigma^2 + S\tau^2`
(:math:`T-1`) and :math:`\lambda_c = \sigma^2 + T\chi^2` (:math:`S-1`). (With
unconstrained i.i.d. effects the grand-mean direction would have the fourth
eigenvalue :math:`\sigma^2 + S\tau^2 + T\chi^2`; zero-sum effects move that
variance into :math:`b_0`.) Integrating :math:`b_0 \sim N(m_0, s_0^2)` out as well,
the marginal posterior of the three scales is, up to a constant,

.. math::

    \log p(\sigma, \tau, \chi \mid y) = \log p(\sigma, \tau, \chi)
    - \tfrac12\big[(T-1)(S-1)\log\sigma^2 + SSE/\sigma^2\big]
    - \tfrac12\big[(T-1)\log\lambda_r + SS_r/\lambda_r\big]
    - \tfrac12\big[(S-1)\log\lambda_c + SS_c/\lambda_c\big]
    - \tfrac12\big[\log v_0 + (\bar y - m_0)^2 / v_0\big],

with :math:`SS_r = S\sum_t r_t^2`, :math:`SS_c = T\sum_s d_s^2` and
:math:`v_0 = s_0^2 + \sigma^2/TS`. These three parameters (on the log scale) are
drawn independently by rejection sampling (:func:`sample_exact`): the envelope is a
mixture of two multivariate t densities fitted to the importance-weighted moments of
this density, the bound of the density ratio is found by optimisation and checked at
every proposal, and the density is evaluated for all proposals at once with numpy
(nothing is compiled; about half of the proposals are accepted on rb04).
``hyper_sampler="nuts"`` uses nutpie on the same density with the hand-coded gradient
instead. Then, given the scales, :math:`b_0`,
:math:`a` and :math:`c` are conditionally independent Gaussians:

.. math::

    b_0 \sim N\Big(\frac{TS\bar y/\sigma^2 + m_0/s_0^2}{TS/\sigma^2 + 1/s_0^2},
    \frac{1}{TS/\sigma^2 + 1/s_0^2}\Big), \quad
    a \sim N\Big(\frac{\tau^2}{\tau^2 + \sigma^2/S}\, r,
    \Big(\frac{S}{\sigma^2} + \frac{1}{\tau^2}\Big)^{-1} P_T\Big),

and likewise for :math:`c` with :math:`T`, :math:`\chi` and :math:`d`. The Gaussian in the
sum-to-zero subspace is drawn as a projected standard normal
(:math:`z - \bar z` has covariance :math:`P_n`), matching PyMC's ``ZeroSumNormal``, whose
density is :math:`N(0, \sigma^2 I_{n-1})` in an orthonormal basis of that subspace.
Each draw of the effects costs :math:`O(T + S)`; all draws are independent.

With ``pooling="artifacts"`` only the :math:`P` artifact runs share :math:`\chi` (see
:func:`~bayes_ir.hierarchical.build_model`). The system means :math:`\bar y_{\cdot s}`
are still independent of the topic deviations and of :math:`SSE`; a flat prior on an
unpooled mean :math:`\mu_s` and on the artifacts' centre :math:`m` integrates each of
their terms to a constant, and the artifacts' deviations from their own mean,
:math:`d_s = \bar y_{\cdot s} - \bar y_P`, give the system term with
:math:`SS_c = T\sum_{s \in P} d_s^2`, :math:`P - 1` in place of :math:`S - 1`, and no
:math:`b_0` term: the scales' likelihood is then the restricted (REML) likelihood of the
mixed model with the unpooled systems as fixed effects. Given the scales,
:math:`\mu_s \sim N(\bar y_{\cdot s}, \sigma^2/T)` for an unpooled system,
:math:`m \sim N(\bar y_P, \sigma^2/TP)`, the artifacts' effects are drawn as above with
:math:`P` and :math:`d`, and :math:`b_0` and the zero-sum effects are the mean of the
system means and the deviations from it.

References
----------
Searle, S. R., Casella, G., McCulloch, C. E. (1992). *Variance Components*. Wiley,
ch. 4 (balanced crossed classifications, the eigen-decomposition of the covariance).

Benham, R., Carterette, B., Culpepper, J. S., Moffat, A. (2020). Bayesian
inferential risk evaluation on multiple IR systems. *SIGIR 2020*, 339-348.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import numpy as np

from bayes_ir import validate
from bayes_ir.errors import BayesIRError
from bayes_ir.hierarchical.priors import Priors

__all__ = [
    "BalancedStatistics",
    "balanced_statistics",
    "effects_given_scales",
    "log_marginal_posterior",
    "sample_exact",
]

#: Names of the sampled scales, in the order of the unconstrained vector (log scale).
SCALES = ("sigma", "sigma_topic", "sigma_system")


@dataclass(frozen=True)
class BalancedStatistics:
    """Everything the exact sampler needs from a complete matrix.

    ``system_dev`` and ``ss_system`` are those of the pooled systems (``pooled``; all of
    them unless ``pooling="artifacts"``), about their own mean; ``system_mean`` holds
    every system's mean score.
    """

    n_topics: int
    n_systems: int
    ybar: float
    topic_dev: np.ndarray
    system_dev: np.ndarray
    ss_topic: float
    ss_system: float
    sse: float
    system_mean: np.ndarray
    pooled: np.ndarray

    @property
    def n_pooled(self) -> int:
        """Number of systems whose effects share ``sigma_system``."""
        return int(self.pooled.sum())

    @property
    def all_pooled(self) -> bool:
        """True for ``pooling="all"`` (the intercept ``b0`` then has its Normal prior)."""
        return bool(self.pooled.all())


def balanced_statistics(matrix: np.ndarray, pooled: np.ndarray | None = None) -> BalancedStatistics:
    """Grand mean, topic and system deviations and the three sums of squares.

    ``pooled`` is the mask of the systems that share ``sigma_system`` (default: all;
    :meth:`~bayes_ir.hierarchical.model.Design.pooled`).

    Raises
    ------
    BayesIRError
        If the matrix has missing cells (use NUTS then).
    """
    y = np.asarray(matrix, dtype=float)
    if y.ndim != 2 or not np.isfinite(y).all():
        raise BayesIRError(
            "the exact sampler needs a complete topic x system matrix; use method='nuts'"
        )
    n_t, n_s = y.shape
    mask = np.ones(n_s, dtype=bool) if pooled is None else np.asarray(pooled, dtype=bool)
    ybar = float(y.mean())
    r = y.mean(axis=1) - ybar
    d = y.mean(axis=0) - ybar
    resid = y - ybar - r[:, None] - d[None, :]
    d_pooled = d if mask.all() else d[mask] - d[mask].mean()
    return BalancedStatistics(
        n_topics=n_t,
        n_systems=n_s,
        ybar=ybar,
        topic_dev=r,
        system_dev=d_pooled,
        ss_topic=float(n_s * np.sum(r**2)),
        ss_system=float(n_t * np.sum(d_pooled**2)),
        sse=float(np.sum(resid**2)),
        system_mean=ybar + d,
        pooled=mask,
    )


def log_marginal_posterior(
    u: np.ndarray, stats: BalancedStatistics, priors: Priors
) -> tuple[float, np.ndarray]:
    """Log marginal posterior of ``log(sigma, sigma_topic, sigma_system)`` and its gradient.

    The Jacobian of the log transform is included (the density is over ``u``); see the
    module docstring for the formula. Additive constants are dropped. The value and
    gradient of :func:`_log_marginal_grad` at one point.
    """
    value, grad = _log_marginal_grad(u, stats, priors)
    return float(value[0]), grad[0]


def _initial_point(stats: BalancedStatistics) -> np.ndarray:
    """Method-of-moments (ANOVA) estimates of the three scales, on the log scale."""
    n_t, n_s = stats.n_topics, stats.n_systems
    s2 = max(stats.sse / max((n_t - 1) * (n_s - 1), 1), 1e-12)
    t2 = max((stats.ss_topic / (n_t - 1) - s2) / n_s, s2 / n_s / 10)
    c2 = max((stats.ss_system / (stats.n_pooled - 1) - s2) / n_t, s2 / n_t / 10)
    return 0.5 * np.log([s2, t2, c2])


def _hyper_model(stats: BalancedStatistics, priors: Priors):
    """Build a nutpie model of the three log scales from plain Python (no compilation)."""
    from nutpie.compiled_pyfunc import from_pyfunc

    start = _initial_point(stats)

    def make_logp_fn():
        def logp(x, **_shared):
            return log_marginal_posterior(x, stats, priors)

        return logp

    def make_expand_fn(seed1, seed2, chain):
        def expand(x, **_shared):
            e = np.exp(np.asarray(x, dtype=float))
            return {name: np.asarray(e[i]) for i, name in enumerate(SCALES)}

        return expand

    def make_initial_point(seed):
        rng = np.random.default_rng(seed)
        return start + rng.uniform(-0.5, 0.5, size=3)

    return from_pyfunc(
        ndim=3,
        make_logp_fn=make_logp_fn,
        make_expand_fn=make_expand_fn,
        expanded_dtypes=[np.dtype("float64")] * 3,
        expanded_shapes=[()] * 3,
        expanded_names=list(SCALES),
        make_initial_point_fn=make_initial_point,
    )


#: Float64 values drawn per block by :func:`draw_effects` (bounds its temporaries).
EFFECTS_BLOCK: int = 1_000_000


def draw_effects(
    sigma: np.ndarray,
    sigma_topic: np.ndarray,
    sigma_system: np.ndarray,
    stats: BalancedStatistics,
    priors: Priors,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    r"""Draw ``b0``, topic and system effects from their exact conditional posterior.

    Parameters
    ----------
    sigma, sigma_topic, sigma_system
        Draws of the scales, any common shape ``shape``.
    stats, priors
        Data summary and resolved priors.
    rng
        Random generator.

    Returns
    -------
    dict
        ``b0`` (``shape``, float64), ``topic_effect`` (``shape + (T,)``) and
        ``system_effect`` (``shape + (S,)``), float32; the effects sum to zero over
        their last axis.

    Notes
    -----
    The effects are computed in float64, a block of draws at a time (about
    :data:`EFFECTS_BLOCK` values), and stored as float32: a relative rounding of
    :math:`6 \times 10^{-8}`, far below the Monte Carlo error of any summary, which
    halves the largest arrays of a fit (4 x 10,000 draws of 5,000 topic effects take
    0.8 GB instead of 1.6 GB) and bounds the temporaries. The blocks consume the
    random stream in the order of one array of all draws, so the draws do not depend
    on the block size.
    """
    n_t, n_s = stats.n_topics, stats.n_systems
    s2 = np.asarray(sigma, dtype=float) ** 2
    flat_s2 = s2.reshape(-1, 1)

    def effects(scale: np.ndarray, n_other: int, dev: np.ndarray) -> np.ndarray:
        t2 = np.asarray(scale, dtype=float).reshape(-1, 1) ** 2
        out = np.empty((flat_s2.shape[0], dev.size), dtype=np.float32)
        step = max(1, EFFECTS_BLOCK // dev.size)
        for start in range(0, out.shape[0], step):
            rows = slice(start, start + step)
            prec = n_other / flat_s2[rows] + 1.0 / t2[rows]
            z = rng.standard_normal((prec.shape[0], dev.size))
            z -= z.mean(axis=-1, keepdims=True)
            z /= np.sqrt(prec)
            z += (n_other / flat_s2[rows]) / prec * dev
            out[rows] = z
        return out.reshape(s2.shape + dev.shape)

    if not stats.all_pooled:
        return _unpooled_effects(sigma_topic, sigma_system, s2, stats, rng, effects)
    hyper = priors.values()
    prec0 = n_t * n_s / s2 + 1.0 / hyper.b0_sd**2
    mean0 = (n_t * n_s * stats.ybar / s2 + hyper.b0_mu / hyper.b0_sd**2) / prec0
    b0 = mean0 + rng.standard_normal(s2.shape) / np.sqrt(prec0)
    return {
        "b0": b0,
        "topic_effect": effects(sigma_topic, n_s, stats.topic_dev),
        "system_effect": effects(sigma_system, n_t, stats.system_dev),
    }


def _unpooled_effects(sigma_topic, sigma_system, s2, stats: BalancedStatistics, rng, effects):
    r""":func:`draw_effects` for ``pooling="artifacts"`` (module docstring).

    The unpooled means are :math:`N(\bar y_{\cdot s}, \sigma^2/T)`, the artifacts'
    centre :math:`N(\bar y_P, \sigma^2/TP)` plus their effects, drawn by ``effects`` like
    the pooled ones; ``b0`` is the mean of the system means.
    """
    n_t, n_s = stats.n_topics, stats.n_systems
    pooled = stats.pooled
    centre_mean = float(stats.system_mean[pooled].mean())
    centre = centre_mean + rng.standard_normal(s2.shape) * np.sqrt(s2 / (n_t * stats.n_pooled))
    topic = effects(sigma_topic, n_s, stats.topic_dev)
    deviation = effects(sigma_system, n_t, stats.system_dev)
    free_mean = stats.system_mean[~pooled]
    free = (
        free_mean + rng.standard_normal(s2.shape + free_mean.shape) * np.sqrt(s2 / n_t)[..., None]
    )
    b0 = (stats.n_pooled * centre + deviation.sum(axis=-1, dtype=float) + free.sum(axis=-1)) / n_s
    system = np.empty(s2.shape + (n_s,), dtype=np.float32)
    system[..., pooled] = (centre - b0)[..., None] + deviation
    system[..., ~pooled] = free - b0[..., None]
    return {"b0": b0, "topic_effect": topic, "system_effect": system}


class _Variances(NamedTuple):
    r"""The quantities the log marginal posterior and its gradient share (module docstring).

    Points ``u`` (n, 3), their squared scales (n, 3), :math:`\lambda_r`,
    :math:`\lambda_c` and :math:`v_0` (n,), :math:`(\bar y - m_0)^2` and the three
    prior rates.
    """

    u: np.ndarray
    sq: np.ndarray
    lam_r: np.ndarray
    lam_c: np.ndarray
    v0: np.ndarray
    dev0: float
    rates: np.ndarray


def _variances(u: np.ndarray, stats: BalancedStatistics, priors: Priors) -> _Variances:
    """Return the :class:`_Variances` at points ``u``, (n, 3) or (3,)."""
    u = np.atleast_2d(np.asarray(u, dtype=float))
    sq = np.exp(2 * u)
    hyper = priors.values()
    n_t, n_s = stats.n_topics, stats.n_systems
    return _Variances(
        u=u,
        sq=sq,
        lam_r=sq[:, 0] + n_s * sq[:, 1],
        lam_c=sq[:, 0] + n_t * sq[:, 2],
        v0=hyper.b0_sd**2 + sq[:, 0] / (n_t * n_s),
        dev0=(stats.ybar - hyper.b0_mu) ** 2,
        rates=np.array([hyper.sigma_rate, hyper.sigma_topic_rate, hyper.sigma_system_rate]),
    )


def _log_value(v: _Variances, stats: BalancedStatistics) -> np.ndarray:
    """Return the log marginal posterior at the points of ``v``."""
    n_t, n_s = stats.n_topics, stats.n_systems
    # the intercept's Normal prior (pooling="all"); flat means integrate to constants
    b0_term = 1.0 if stats.all_pooled else 0.0
    ll = -0.5 * (
        (n_t - 1) * (n_s - 1) * 2 * v.u[:, 0]
        + stats.sse / v.sq[:, 0]
        + (n_t - 1) * np.log(v.lam_r)
        + stats.ss_topic / v.lam_r
        + (stats.n_pooled - 1) * np.log(v.lam_c)
        + stats.ss_system / v.lam_c
        + b0_term * np.log(v.v0)
        + b0_term * v.dev0 / v.v0
    )
    return ll + np.sum(np.log(v.rates) - v.rates * np.exp(v.u) + v.u, axis=1)


def log_marginal_many(u: np.ndarray, stats: BalancedStatistics, priors: Priors) -> np.ndarray:
    """Log marginal posterior (values only) at points ``u`` of shape (n, 3) or (3,)."""
    return _log_value(_variances(u, stats, priors), stats)


def _log_marginal_grad(
    u: np.ndarray, stats: BalancedStatistics, priors: Priors
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`log_marginal_many` and its gradient at points ``u`` (n, 3): (n,) and (n, 3)."""
    v = _variances(u, stats, priors)
    n_t, n_s = stats.n_topics, stats.n_systems
    s2 = v.sq[:, 0]
    g_r = (n_t - 1) / v.lam_r - stats.ss_topic / v.lam_r**2
    g_c = (stats.n_pooled - 1) / v.lam_c - stats.ss_system / v.lam_c**2
    g_0 = (1.0 / v.v0 - v.dev0 / v.v0**2) / (n_t * n_s) if stats.all_pooled else 0.0
    # d/d(scale^2) of the log likelihood, then the chain rule d(scale^2)/du = 2 scale^2
    d_sq = -0.5 * np.column_stack(
        [(n_t - 1) * (n_s - 1) / s2 - stats.sse / s2**2 + g_r + g_c + g_0, n_s * g_r, n_t * g_c]
    )
    # Exponential prior on each scale plus log-Jacobian u: d/du (-rate * e^u + u).
    grad = d_sq * 2 * v.sq - v.rates * np.exp(v.u) + 1.0
    return _log_value(v, stats), grad


def _hessians(grad, x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Hessians (n, 3, 3) at points ``x`` (n, 3) by central differences of ``grad``.

    ``grad`` maps points (m, 3) to gradients (m, 3); it is called once, on all 6n
    shifted points. The result is symmetrised.
    """
    shifts = eps * np.concatenate([np.eye(3), -np.eye(3)])
    g = grad((x[:, None, :] + shifts).reshape(-1, 3)).reshape(len(x), 2, 3, 3)
    hess = (g[:, 0] - g[:, 1]) / (2 * eps)
    return 0.5 * (hess + hess.transpose(0, 2, 1))


def _newton_metric(hess: np.ndarray) -> np.ndarray:
    r"""Inverse of :math:`|H|`, the Hessians ``hess`` (n, 3, 3) with absolute eigenvalues.

    At a local maximum this is :math:`(-H)^{-1}`; elsewhere it is still positive
    definite, so :math:`|H|^{-1} g` is an ascent direction (Hessian modification,
    Nocedal and Wright 2006, section 3.4). A non-finite Hessian gives the identity
    (a gradient step).
    """
    hess = np.where(np.isfinite(hess).all(axis=(1, 2))[:, None, None], hess, -np.eye(3))
    w, v = np.linalg.eigh(hess)
    w = np.maximum(np.abs(w), 1e-12 * np.abs(w).max(axis=1, keepdims=True) + 1e-300)
    return np.einsum("nij,nj,nkj->nik", v, 1.0 / w, v)


#: Newton ascent (:func:`_ascend`): longest move per iteration (log units), expected
#: gain (nats) below which a start has converged, and iterations allowed.
ASCENT_STEP: float = 4.0
ASCENT_TOL: float = 1e-10
ASCENT_ITER: int = 100
#: Multiples of the Newton step tried at once along its direction (the line search).
ASCENT_GRID: np.ndarray = 2.0 ** np.arange(3, -31, -1)


def _ascend(fun, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Local maxima of ``fun`` reached by Newton ascent from each row of ``starts``.

    ``fun`` maps points (n, 3) to values (n,) and gradients (n, 3). All starts move
    together, with two vectorised evaluations per iteration for all of them (one scipy
    optimisation per start, a Python call per point, took 90% of a small exact fit).
    The direction is :math:`p = |H|^{-1} g` (:func:`_newton_metric`, the Hessian by
    :func:`_hessians`); the step goes to the highest of the points :math:`x + t p`,
    :math:`t` in :data:`ASCENT_GRID` (8 down to :math:`2^{-30}`, moves limited to
    :data:`ASCENT_STEP`), that raise the value by at least :math:`10^{-4}` of their
    first-order gain :math:`t\, g^\top p` (Armijo). The multiples above 1 cross in a
    few steps the steep wall where a scale goes to zero (a Newton step on
    :math:`-e^{-2u}` moves :math:`u` by 1/2). A start stops when the gain its Newton
    step predicts, :math:`g^\top |H|^{-1} g / 2` (half the squared Newton decrement),
    is below :data:`ASCENT_TOL`, or when no multiple rises (Nocedal and Wright 2006,
    sections 3.1 and 3.4; Boyd and Vandenberghe 2004, section 9.5).

    Returns
    -------
    points, values
        The points reached (n, 3) and ``fun`` there (n,); ``-inf`` for a start where
        ``fun`` is not finite.

    References
    ----------
    Nocedal, J., Wright, S. J. (2006). *Numerical Optimization*, 2nd ed. Springer.

    Boyd, S., Vandenberghe, L. (2004). *Convex Optimization*. Cambridge University Press.
    """

    def evaluate(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(all="ignore"):
            value, grad = fun(x)
        ok = np.isfinite(value) & np.isfinite(grad).all(axis=1)
        return np.where(ok, value, -np.inf), grad

    x = np.array(starts, dtype=float, ndmin=2)
    f, g = evaluate(x)
    live = np.isfinite(f)
    for _ in range(ASCENT_ITER):
        idx = np.flatnonzero(live)
        if idx.size == 0:
            break
        with np.errstate(all="ignore"):
            metric = _newton_metric(_hessians(lambda p: evaluate(p)[1], x[idx]))
        step = np.einsum("nij,nj->ni", metric, g[idx])
        gain = np.einsum("ni,ni->n", g[idx], step)
        longest = np.minimum(ASCENT_GRID[0], ASCENT_STEP / np.linalg.norm(step, axis=1))
        t = longest[:, None] * ASCENT_GRID / ASCENT_GRID[0]  # (n, grid)
        trial = x[idx, None, :] + t[..., None] * step[:, None, :]
        f_new, g_new = evaluate(trial.reshape(-1, 3))
        f_new = np.where(f_new >= (f[idx, None] + 1e-4 * t * gain[:, None]).ravel(), f_new, -np.inf)
        f_new = f_new.reshape(t.shape)
        best = np.argmax(f_new, axis=1)
        up = np.isfinite(f_new[np.arange(idx.size), best]) & (gain / 2 >= ASCENT_TOL)
        live[idx[~up]] = False
        idx, pick = idx[up], np.flatnonzero(up) * t.shape[1] + best[up]
        x[idx], f[idx], g[idx] = trial.reshape(-1, 3)[pick], f_new.ravel()[pick], g_new[pick]
    return x, f


def laplace_proposal(stats: BalancedStatistics, priors: Priors) -> tuple[np.ndarray, np.ndarray]:
    """Mode and inverse negative Hessian of the log marginal posterior of the log scales.

    The mode is reached by :func:`_ascend` from :func:`_initial_point`; the covariance
    is :func:`_newton_metric` of the Hessian there (the inverse negative Hessian at a
    maximum, positive definite anywhere).
    """
    fun = partial(_log_marginal_grad, stats=stats, priors=priors)
    mode, _ = _ascend(fun, _initial_point(stats))
    cov = _newton_metric(_hessians(lambda u: fun(u)[1], mode))[0]
    return mode[0], cov


#: Degrees of freedom of both components of the rejection envelope.
ENVELOPE_DF: float = 4.0
#: Weight and variance factor of the wide component of the envelope (defensive mixture;
#: of the grid df 2 or 4, weight 0.1 or 0.3, factor 9, 36 or 144, this gave the best
#: acceptance on rb04, about 50%; over 43 designs (random sizes 3-80 x 2-40, rb04,
#: trec17, trec18, Robust04) the acceptance had median 43%, range 5.5-60%, and no
#: proposal exceeded the bound).
ENVELOPE_WIDE_WEIGHT: float = 0.1
ENVELOPE_WIDE: float = 36.0
#: Envelope draws searched for the largest log ratio before the local optimisations.
BOUND_SAMPLE: int = 20_000
#: Safety margin added to the largest log ratio found (costs 1 - e^-0.05 = 5% acceptance).
BOUND_MARGIN: float = 0.05
#: Restarts allowed after a proposal exceeded the bound (each raises the bound).
MAX_RESTARTS: int = 10


@dataclass(frozen=True)
class Envelope:
    r"""Mixture of two multivariate t densities with a common centre (the rejection envelope).

    .. math::

        q(u) = (1 - w)\, t_\nu(u; m, \Sigma) + w\, t_\nu(u; m, k \Sigma)

    with :math:`\nu` = :data:`ENVELOPE_DF`, :math:`w` = :data:`ENVELOPE_WIDE_WEIGHT` and
    :math:`k` = :data:`ENVELOPE_WIDE`. The wide component keeps the ratio target/envelope
    small in the exponential tail of a scale near zero.

    Attributes
    ----------
    loc, chol, chol_inv
        Centre :math:`m`, Cholesky factor of :math:`\Sigma` and its inverse.
    log_const
        Log normalising constant of :math:`t_\nu(\cdot; m, \Sigma)`.
    """

    loc: np.ndarray
    chol: np.ndarray
    chol_inv: np.ndarray
    log_const: float

    @classmethod
    def of(cls, loc: np.ndarray, cov: np.ndarray) -> Envelope:
        """Envelope centred at ``loc`` whose body has scale matrix ``cov``.

        Raises ``numpy.linalg.LinAlgError`` if ``cov`` is not positive definite.
        """
        from scipy.special import gammaln

        chol = np.linalg.cholesky(cov)
        nu = ENVELOPE_DF
        log_const = (
            gammaln((nu + 3) / 2)
            - gammaln(nu / 2)
            - 1.5 * np.log(nu * np.pi)
            - np.sum(np.log(np.diag(chol)))
        )
        return cls(np.asarray(loc, dtype=float), chol, np.linalg.inv(chol), float(log_const))

    def _parts(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Log densities of the two weighted components at squared distances ``q``."""
        nu, k = ENVELOPE_DF, ENVELOPE_WIDE
        body = np.log1p(-ENVELOPE_WIDE_WEIGHT) + self.log_const - (nu + 3) / 2 * np.log1p(q / nu)
        wide = (
            np.log(ENVELOPE_WIDE_WEIGHT)
            + self.log_const
            - 1.5 * np.log(k)
            - (nu + 3) / 2 * np.log1p(q / (k * nu))
        )
        return body, wide

    def _standardised(self, u: np.ndarray) -> np.ndarray:
        """:math:`L^{-1}(u - m)` of points ``u`` (n, 3) or (3,), as rows (n, 3)."""
        return np.einsum("nj,ij->ni", np.atleast_2d(u) - self.loc, self.chol_inv)

    def logpdf(self, u: np.ndarray) -> np.ndarray:
        """Log density at points ``u`` of shape (n, 3) or (3,)."""
        return np.logaddexp(*self._parts(np.sum(self._standardised(u) ** 2, axis=1)))

    def logpdf_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Log density (n,) and its gradient (n, 3) at points ``u`` (n, 3)."""
        nu, k = ENVELOPE_DF, ENVELOPE_WIDE
        z = self._standardised(u)
        q = np.sum(z**2, axis=1)
        body, wide = self._parts(q)
        total = np.logaddexp(body, wide)
        w_body = np.exp(body - total)
        prec_dev = z @ self.chol_inv  # rows Sigma^-1 (u - m)
        coef = -(nu + 3) * (w_body / (nu + q) + (1 - w_body) / (k * nu + q))
        return total, coef[:, None] * prec_dev

    def rvs(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws, shape (n, 3)."""
        z = rng.standard_normal((n, 3))
        scale = np.sqrt(ENVELOPE_DF / rng.chisquare(ENVELOPE_DF, size=n))
        scale[rng.uniform(size=n) < ENVELOPE_WIDE_WEIGHT] *= math.sqrt(ENVELOPE_WIDE)
        # einsum, not a BLAS matmul: a (n, 3) x (3, 3) product is 20x slower in BLAS
        return self.loc + np.einsum("nj,ij->ni", z, self.chol) * scale[:, None]


def _fit_envelope(stats: BalancedStatistics, priors: Priors, rng: np.random.Generator):
    """Centre and shape of the envelope: importance-weighted moments of the target.

    Starts from the Laplace approximation (a t_4 with 1.5 times its covariance), whose
    4,000 draws, weighted by target/proposal, give the mean and covariance of the
    target; these follow a skewed marginal (a scale near zero) better than the mode
    and curvature. Falls back to the Laplace approximation if the weighted covariance
    is not positive definite.
    """
    mode, cov = laplace_proposal(stats, priors)
    pilot = Envelope.of(mode, 1.5 * cov)
    x = pilot.rvs(4000, rng)
    log_w = _log_ratio(x, pilot, stats, priors)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    mean = w @ x
    dev = x - mean
    try:
        return Envelope.of(mean, (dev * w[:, None]).T @ dev)
    except np.linalg.LinAlgError:
        return pilot


def _log_ratio(
    x: np.ndarray, env: Envelope, stats: BalancedStatistics, priors: Priors
) -> np.ndarray:
    """``log target - log envelope`` at points ``x`` (n, 3); -inf where the target underflows."""
    with np.errstate(all="ignore"):
        lr = log_marginal_many(x, stats, priors) - env.logpdf(x)
    return np.where(np.isnan(lr), -np.inf, lr)


def _log_ratio_max(
    env: Envelope, stats: BalancedStatistics, priors: Priors, starts: list[np.ndarray]
) -> float:
    """Largest local maximum of ``log target - log envelope`` reached from ``starts``.

    The maxima are found by :func:`_ascend`, all starts at once.
    """

    def log_ratio(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        value, grad = _log_marginal_grad(u, stats, priors)
        lq, gq = env.logpdf_grad(u)
        return value - lq, grad - gq

    return float(_ascend(log_ratio, np.asarray(starts))[1].max())


def _log_bound(
    env: Envelope, stats: BalancedStatistics, priors: Priors, rng: np.random.Generator
) -> tuple[float, float]:
    r"""Upper bound of ``log target - log envelope`` and the expected acceptance rate.

    The bound is the largest of: the log ratio over :data:`BOUND_SAMPLE` envelope
    draws, and the local maxima reached by :func:`_ascend` from the envelope's centre,
    from the five best draws, from points 4 envelope SDs either side along each axis,
    and from points 3.5, 7 and 14 below the centre along each axis (log units: where a
    scale goes to zero the target decays like :math:`e^{u}` and the envelope like
    :math:`|u|^{-(\nu + 3)}`, so their ratio peaks about :math:`\nu + 3 = 7` below
    the centre); plus :data:`BOUND_MARGIN`. The acceptance rate is estimated by
    importance sampling (mean of target/envelope over the draws, divided by the bound).
    """
    x = env.rvs(BOUND_SAMPLE, rng)
    lr = _log_ratio(x, env, stats, priors)
    sd = np.sqrt(np.sum(env.chol**2, axis=1))
    axes = np.eye(3)
    starts = [env.loc, *x[np.argsort(lr)[-5:]]]
    starts += [env.loc + s * sd[i] * axes[i] for i in range(3) for s in (-4, 4)]
    starts += [env.loc - c * axes[i] for i in range(3) for c in (3.5, 7.0, 14.0)]
    log_m = max(float(lr.max()), _log_ratio_max(env, stats, priors, starts)) + BOUND_MARGIN
    top = float(lr.max())
    rate = float(np.mean(np.exp(lr - top)) * math.exp(top - log_m))
    return log_m, rate


def _rejection(
    stats: BalancedStatistics, priors: Priors, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, dict[str, float | int]]:
    """``n`` independent draws of the log scales by rejection sampling.

    Every proposal's log ratio is compared with the bound; if one exceeds it, the
    bound is raised to that proposal's local maximum (plus the margin) and sampling
    starts again, so the draws returned come from a pass in which the bound held at
    every proposal.

    Returns
    -------
    u : array (n, 3)
    info : dict
        ``acceptance_rate`` (draws / proposals up to the last accepted one),
        ``proposals``, ``log_bound`` and ``restarts``.
    """
    env = _fit_envelope(stats, priors, rng)
    log_m, rate = _log_bound(env, stats, priors, rng)
    for restart in range(MAX_RESTARTS + 1):
        kept: list[np.ndarray] = []
        n_kept, proposals, exceeded = 0, 0, None
        while n_kept < n:
            batch = int(min(1.1 * (n - n_kept) / max(rate, 1e-3), 2_000_000)) + 1000
            x = env.rvs(batch, rng)
            lr = _log_ratio(x, env, stats, priors)
            if lr.max() > log_m:
                exceeded = (x[int(np.argmax(lr))], float(lr.max()))
                break
            ok = np.flatnonzero(np.log(rng.uniform(size=batch)) < lr - log_m)
            ok = ok[: n - n_kept]
            if n_kept + ok.size == n:  # count proposals up to the last accepted one
                proposals += int(ok[-1]) + 1
            else:
                proposals += batch
            kept.append(x[ok])
            n_kept += ok.size
        if exceeded is None:
            info = {
                "acceptance_rate": n / proposals,
                "proposals": proposals,
                "log_bound": log_m,
                "restarts": restart,
            }
            return np.concatenate(kept), info
        point, value = exceeded
        log_m = max(value, _log_ratio_max(env, stats, priors, [point])) + BOUND_MARGIN
    raise BayesIRError(  # pragma: no cover - would need a target the optimiser cannot bound
        "the exact sampler could not bound its rejection envelope; use method='nuts'"
    )


def sample_exact(
    matrix: np.ndarray,
    priors: Priors,
    *,
    chains: int,
    draws: int,
    seed: int,
    tune: int = 0,
    target_accept: float = 0.9,
    hyper_sampler: str = "rejection",
    pooled: np.ndarray | None = None,
):
    r"""Sample the posterior of the Gaussian model of a complete matrix exactly.

    Parameters
    ----------
    matrix
        Complete topic x system scores.
    priors
        Resolved priors.
    chains, draws, seed
        ``chains x draws`` draws are returned; with rejection sampling they are
        independent, and the chains are only the shape of the output (consecutive
        blocks of one independent sequence).
    tune, target_accept
        Used by ``hyper_sampler="nuts"`` only (warm-up draws per chain and NUTS's
        target acceptance); rejection sampling has no warm-up and no tuning.
    hyper_sampler
        How the three scales are drawn: ``"rejection"`` (default; independent draws,
        see Notes) or ``"nuts"`` (nutpie on the same three-dimensional density, a
        Python callback per gradient; kept as a cross-check).
    pooled
        Mask of the systems whose effects share ``sigma_system`` (default: all; see
        :meth:`~bayes_ir.hierarchical.model.Design.pooled` and the module docstring).

    Returns
    -------
    posterior : dict of numpy arrays with leading dims (chain, draw)
    sample_stats : xarray.Dataset or None
        nutpie's statistics (``"nuts"``); ``None`` for rejection sampling.
    info : dict
        Rejection sampling: ``acceptance_rate``, ``proposals``, ``log_bound``,
        ``restarts`` (see :func:`_rejection`); empty for ``"nuts"``.

    Notes
    -----
    Rejection sampling (von Neumann 1951; Robert and Casella 2004, section 2.3) from
    the envelope :class:`Envelope` fitted to the log marginal posterior
    :math:`p(u)` of the log scales: a proposal :math:`u \sim q` is kept with
    probability :math:`p(u) / (M q(u))`, where :math:`\log M` bounds
    :math:`\log p - \log q` (:func:`_log_bound`). The kept draws are independent
    draws of :math:`p` whenever the bound holds. It holds everywhere if the
    optimiser found the global maximum: the ratio is bounded, because :math:`q` has
    polynomial tails and :math:`p` decays at least exponentially in every direction
    of the log scales (the exponential prior gives :math:`p \propto e^{u}` as a
    scale goes to zero and :math:`e^{-\lambda e^{u}}` as it grows). The sampler
    checks the bound at every proposal and restarts with a higher bound when one
    exceeds it (``restarts`` in ``info``). No draw is discarded as warm-up, so the
    draws need no convergence diagnostics; their ESS is their number.

    References
    ----------
    von Neumann, J. (1951). Various techniques used in connection with random digits.
    *National Bureau of Standards Applied Mathematics Series* 12, 36-38.

    Robert, C. P., Casella, G. (2004). *Monte Carlo Statistical Methods*, 2nd ed.
    Springer, section 2.3.
    """
    validate.choice("hyper_sampler", hyper_sampler, ("rejection", "nuts"))
    stats = balanced_statistics(matrix, pooled)
    if not priors.is_resolved:
        raise BayesIRError("resolve the priors first (Priors.resolve)")
    info: dict[str, float | int] = {}
    if hyper_sampler == "rejection":
        rng = np.random.default_rng([int(seed), 3])
        u, info = _rejection(stats, priors, chains * draws, rng)
        u = u.reshape(chains, draws, 3)
        scales = {name: np.exp(u[..., i]) for i, name in enumerate(SCALES)}
        sample_stats = None
    else:  # "nuts"
        from bayes_ir.hierarchical.sampling import nutpie_sample

        trace = nutpie_sample(
            _hyper_model(stats, priors),
            label="sampling the scales (NUTS)",
            draws=draws,
            tune=tune,
            chains=chains,
            cores=1,  # the log density is a Python callback: threads only fight for the GIL
            seed=seed,
            target_accept=target_accept,
        )
        post = trace["posterior"]
        scales = {name: np.asarray(post[name].values, dtype=float) for name in SCALES}
        sample_stats = trace["sample_stats"].to_dataset() if "sample_stats" in trace else None
    out = effects_given_scales(scales, matrix, priors, seed=seed, pooled=pooled)
    out.update(scales)
    return out, sample_stats, info


def effects_given_scales(
    scales: dict[str, np.ndarray],
    matrix: np.ndarray,
    priors: Priors,
    *,
    seed: int,
    pooled: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Second stage of :func:`sample_exact`: ``b0`` and the effects given the scale draws.

    The draws come from their own random stream (``seed``), so the same scales, data,
    priors and seed give the same draws: a saved exact fit stores the scales only and
    regenerates the effects with this function (:func:`bayes_ir.hierarchical.io.load_fit`).

    Parameters
    ----------
    scales
        Draws of ``sigma``, ``sigma_topic`` and ``sigma_system`` (shape ``(chains, draws)``).
    matrix
        The complete topic x system scores.
    priors
        Resolved priors.
    seed
        The fit's seed.
    pooled
        Mask of the systems that share ``sigma_system`` (default: all).

    Returns
    -------
    dict
        ``b0``, ``topic_effect`` and ``system_effect``, see :func:`draw_effects`.
    """
    rng = np.random.default_rng([int(seed), 8])
    sigma, tau, chi = (np.asarray(scales[name], dtype=float) for name in SCALES)
    return draw_effects(sigma, tau, chi, balanced_statistics(matrix, pooled), priors, rng)
