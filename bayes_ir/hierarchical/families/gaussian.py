r"""Gaussian and skew-normal families: the continuous models of Benham et al. (2020).

:math:`y_{ts} = b_0 + a_t + c_s + e_{ts}` with Gaussian errors, or skew-normal errors
of mean 0, SD :math:`\sigma` (:math:`\sigma_s` with ``sigma="system"``) and shape
:math:`\alpha` in brms' mean/SD form. The models, their priors and samplers live in
:mod:`bayes_ir.hierarchical.model`, :mod:`~bayes_ir.hierarchical.exact`,
:mod:`~bayes_ir.hierarchical.gibbs` and :mod:`~bayes_ir.hierarchical.skewnormal_kernel`;
this module declares them as families (outcome space, score-scale means, cells), so
what reads a fit reads them like every other family. The link is the identity: a
system's mean :math:`b_0 + c_s` is its expected score at every topic.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import xarray as xr

from bayes_ir.errors import ScoreTableError
from bayes_ir.hierarchical.families.base import Cells, Family, flat_draws

_LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))
#: Largest residual of the additive fit, relative to the largest deviation of a score from
#: their mean, at which the scores count as exactly topic + system (rounding only).
ADDITIVE_TOL = 1e-9
#: Passes of backfitting for a matrix with gaps (a complete one needs one).
_BACKFIT_PASSES = 20


def additive_residuals(y: np.ndarray) -> np.ndarray:
    r"""Residuals of the least-squares fit :math:`y_{ts} \approx a_t + c_s` (0 at missing cells).

    A complete matrix needs one pass (row means, then column means of what is left); with
    gaps, :data:`_BACKFIT_PASSES` passes of backfitting (Gauss-Seidel on the normal
    equations; Hastie and Tibshirani 1990, section 4.4) approach it from above: the
    residual sum of squares falls at every pass to the least-squares one.

    References
    ----------
    Hastie, T. J., Tibshirani, R. J. (1990). *Generalized Additive Models*. Chapman & Hall.
    """
    ok = np.isfinite(y)
    y0 = np.where(ok, y, 0.0)
    n_t = np.maximum(ok.sum(axis=1), 1)
    n_s = np.maximum(ok.sum(axis=0), 1)
    col = np.zeros(y.shape[1])
    for _ in range(1 if ok.all() else _BACKFIT_PASSES):
        row = (y0 - col * ok).sum(axis=1) / n_t
        col = (y0 - row[:, None] * ok).sum(axis=0) / n_s
    return np.where(ok, y0 - row[:, None] - col, 0.0)


def exactly_additive(y: np.ndarray) -> bool:
    """Whether the scores ``y`` (NaN: missing) are topic + system to rounding (not all equal).

    No residual of :func:`additive_residuals` exceeds :data:`ADDITIVE_TOL` times the largest
    deviation of a score from their mean. Equal scores return False: the priors' check
    names them (:mod:`bayes_ir.hierarchical.priors`).
    """
    seen = y[np.isfinite(y)]
    spread = float(np.max(np.abs(seen - seen.mean()))) if seen.size else 0.0
    return spread > 0.0 and bool(np.max(np.abs(additive_residuals(y))) <= ADDITIVE_TOL * spread)


def residual_df(observed: np.ndarray) -> int:
    """Residual degrees of freedom of the fit topic + system to the cells ``observed``.

    The number of cells less the rank of the design, ``T + S - k`` over the topics and
    systems with a cell, ``k`` the connected components of the graph of topics and
    systems joined by their cells (one for a complete matrix: ``(T - 1)(S - 1)``).
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n_t, n_s = observed.shape
    t, s = np.nonzero(observed)
    graph = coo_matrix((np.ones(t.size), (t, n_t + s)), shape=(n_t + n_s, n_t + n_s))
    rows, cols = int(observed.any(axis=1).sum()), int(observed.any(axis=0).sum())
    components = connected_components(graph, directed=False)[0] - (n_t - rows) - (n_s - cols)
    return int(t.size - rows - cols + components)


__all__ = [
    "ADDITIVE_TOL",
    "Gaussian",
    "GaussianCells",
    "SkewNormal",
    "additive_residuals",
    "exactly_additive",
    "residual_df",
]


class GaussianCells(Cells):
    """Cells of the Gaussian (``alpha`` None) or skew-normal family, arrays (n, B, T)."""

    def __init__(self, mu: np.ndarray, sigma: np.ndarray, alpha: np.ndarray | None) -> None:
        self.mu, self.sigma, self.alpha = mu, sigma, alpha

    @property
    def mean(self) -> np.ndarray:
        """``b0 + topic + system``."""
        return self.mu

    @property
    def variance(self) -> np.ndarray:
        """``sigma ** 2`` (the residual variance; brms' mean/SD form for the skew-normal)."""
        return self.sigma**2

    @property
    def slope(self) -> np.ndarray:
        """1 (the identity link)."""
        return np.ones_like(self.mu)

    def cdf(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return the CDF at ``y`` twice (no point masses)."""
        from bayes_ir.hierarchical.adequacy import _cdf

        at = _cdf(y, self.mu, self.sigma, self.alpha)
        return at, at

    def rvs(self, rng: np.random.Generator) -> np.ndarray:
        """``mu`` plus one replicated error (the model check's generator)."""
        from bayes_ir.hierarchical.adequacy import _residuals

        return self.mu + _residuals(self.mu, self.sigma, self.alpha, rng)

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        r"""Return the normal, or skew-normal in brms' mean/SD form, log density.

        Normal: :math:`-z^2/2 - \log\sigma - \log\sqrt{2\pi}`, :math:`z = (y -
        \mu)/\sigma`, in place on one array (the draws x cells of a PSIS-LOO block are
        many: ``scipy.stats.norm.logpdf``'s argument checks cost 6 times the formula).
        """
        if self.alpha is None:
            z = np.subtract(y, self.mu)
            z /= self.sigma
            np.square(z, out=z)
            z *= -0.5
            z -= np.log(self.sigma) + _LOG_SQRT_2PI
            return z
        from bayes_ir.hierarchical.skewnormal import skewnormal_logpdf

        return skewnormal_logpdf(y, self.mu, self.sigma, self.alpha)


class Gaussian(Family):
    """Gaussian errors, identity link (module docstring)."""

    name: ClassVar[str] = "gaussian"
    outcome_space: ClassVar[str] = "continuous"
    link: ClassVar[str] = "identity"
    dispersions: ClassVar[tuple[str, ...]] = ("pooled", "system")

    def check_scores(self, design: Any) -> None:
        """Scores that vary beyond topic + system: otherwise the residual SD has no posterior.

        With every score a topic effect plus a system effect exactly (two runs that are
        copies, or one a copy plus a constant, and nothing else), the likelihood grows
        without bound as the residual SD goes to 0: no posterior exists, and no sampler
        can end well (the exact sampler's rejection step would never accept).
        """
        y = design.matrix
        if not exactly_additive(y) or residual_df(np.isfinite(y)) == 0:
            return  # (no cell left over by construction: the residual SD has its prior)
        pairs = np.isfinite(y).T.astype(float) @ np.isfinite(y).astype(float)
        np.fill_diagonal(pairs, 0.0)
        i, j = sorted(np.unravel_index(int(np.argmax(pairs)), pairs.shape))
        a, b = design.systems[i], design.systems[j]
        both = np.isfinite(y[:, i]) & np.isfinite(y[:, j])
        gap = float(np.mean(y[both, j] - y[both, i]))
        raise ScoreTableError(
            f"every score is exactly a topic effect plus a system effect ({b!r} minus {a!r} "
            f"is {gap:+.4g} on every topic both have), so the {self.name} model's residual SD "
            "has no posterior: such differences are certain, not estimated; check that the "
            "runs are not copies of each other, or add the collection's other runs",
            source=design.source,
        )

    @property
    def hyperparameters(self) -> tuple[str, ...]:
        """``b0``, the scales (and the skew-normal's shape)."""
        return ("b0", "sigma", "sigma_typical", "sigma_log_sd", "sigma_topic", "sigma_system")

    def system_means(self, post: xr.Dataset) -> xr.DataArray:
        """``b0 + system_effect`` (float64)."""
        u = post["system_effect"].astype(float)
        return u + xr.DataArray(np.asarray(post["b0"].values, dtype=float), dims=("chain", "draw"))

    def parameters(self, post: xr.Dataset, keep: np.ndarray | None = None) -> dict[str, Any]:
        """``b0``, ``topic``, ``system``, ``sigma`` ((n,) or (n, S)) and ``alpha`` (or None)."""
        sigma = post["sigma"]
        return {
            "b0": flat_draws(post["b0"], keep),
            "topic": flat_draws(post["topic_effect"], keep, "topic"),
            "system": flat_draws(post["system_effect"], keep, "system"),
            "sigma": flat_draws(sigma, keep, *(("system",) if "system" in sigma.dims else ())),
            "alpha": flat_draws(post["alpha"], keep) if "alpha" in post else None,
        }

    def difference_variance(
        self, params: dict[str, Any], champion: int, challengers: np.ndarray
    ) -> np.ndarray:
        """``sigma_c ** 2 + sigma_h ** 2`` per draw (the topic effect cancels), (n, challengers)."""
        sigma = params["sigma"]
        if sigma.ndim == 1:
            return np.repeat(2.0 * sigma[:, None] ** 2, len(challengers), axis=1)
        return sigma[:, challengers] ** 2 + sigma[:, [champion]] ** 2

    def cells(self, params: dict[str, Any], systems: np.ndarray) -> Cells:
        """Gaussian or skew-normal cells of ``systems`` for the draws ``params``."""
        mu = (params["b0"][:, None] + params["system"][:, systems])[:, :, None]
        mu = mu + params["topic"][:, None, :]
        sigma = params["sigma"]
        sig = sigma[:, None, None] if sigma.ndim == 1 else sigma[:, systems, None]
        alpha = params["alpha"]
        return GaussianCells(mu, sig, None if alpha is None else alpha[:, None, None])


class SkewNormal(Gaussian):
    """Skew-normal errors in brms' mean/SD form, identity link."""

    name: ClassVar[str] = "skew_normal"

    @property
    def hyperparameters(self) -> tuple[str, ...]:
        """``b0``, the scales and the shape."""
        return (*super().hyperparameters, "alpha")
