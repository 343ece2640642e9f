r"""Zero-one-inflated beta family: scores in [0, 1] with exact 0s and 1s (AP, nDCG, RR).

As brms' ``zero_one_inflated_beta`` (Buerkner 2017; Ospina and Ferrari 2012): a score
is an exact 0 or 1 with probability ``zoi`` (:math:`\pi_s`), a 1 among those with
probability ``coi`` (:math:`\kappa_s`), and otherwise Beta with mean
:math:`\mu_{ts} = \mathrm{logit}^{-1}(b_0 + a_t + c_s)` and precision :math:`\phi_s`
(variance :math:`\mu(1-\mu)/(1+\phi)`); the kernel's module
(:mod:`~bayes_ir.hierarchical.families.zoib_kernel`) writes the density out. Options:

* ``sigma="system"`` (``fit`` option, as for the Gaussian's residual SD): one
  precision per system, :math:`\log\phi_s = \log\phi_{typ} + \lambda z_s`;
* ``"zoib(inflation=system)"``: one ``zoi`` and one ``coi`` per system,
  :math:`\mathrm{logit}\,\pi_s = z_0 + \zeta \tilde z_s` (and the same for
  :math:`\kappa_s`), so systems differ in how often they score exactly 0 or 1;
  the default ``inflation=pooled`` shares them.

A system's score-scale mean over the topic population is

.. math::

    m_s = \pi_s\kappa_s + (1 - \pi_s)\,E_a[\mathrm{logit}^{-1}(\beta + a + c_s)],
    \quad a \sim N(0, \tau^2),

:math:`\beta` the intercept of the topic population

(:mod:`bayes_ir.hierarchical.families.base`), so a contrast counts both what the
inflation and what the Beta part say, in the measure's units.

Priors: those of :mod:`~bayes_ir.hierarchical.families.logit` on ``b0`` (centred at
the logit of the mean interior score), ``sigma_topic`` and ``sigma_system``;
``phi ~ Exponential(0.1)`` (``Priors.phi_rate``; prior mean 10, weak against the
hundreds of scores that inform it); ``logit(zoi)`` and ``logit(coi)`` standard
logistic, i.e. uniform on the probability (brms' default ``beta(1, 1)``); the SDs of
the per-system log precision and inflation logits ``Exponential(1)``
(``Priors.sigma_log_sd_rate``, ``Priors.inflation_sd_rate``).

References
----------
Ospina, R., Ferrari, S. L. P. (2012). A general class of zero-or-one inflated beta
regression models. *Computational Statistics and Data Analysis* 56(6), 1609-1623.

Buerkner, P.-C. (2017). brms: An R package for Bayesian multilevel models using Stan.
*Journal of Statistical Software* 80(1), 1-28. doi:10.18637/jss.v080.i01
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
import xarray as xr
from scipy import special

from bayes_ir import validate
from bayes_ir.errors import DataWarning, OptionError, ScoreTableError
from bayes_ir.hierarchical.families.base import Cells, flat_draws
from bayes_ir.hierarchical.families.logit import LogitFamily, pymc_crossed_effects, system_sd
from bayes_ir.hierarchical.families.sampler import (
    centred_topics,
    crossed_start,
    kernel_model,
    sample_kernel,
)

__all__ = ["PHI_RATE", "ZOIB", "ZOIBCells", "build_pymc_model", "centred_effects"]

#: Rate of the Exponential prior of the precision ``phi`` (prior mean 10).
PHI_RATE: float = 0.1
#: Clip of the scores whose logits give the effects' rough estimates (centring rule).
_CLIP: float = 0.01


class ZOIBCells(Cells):
    """Cells of the zoib family: ``mu`` (n, B, T), ``phi``, ``zoi``, ``coi`` (n, B, 1)."""

    def __init__(self, mu, phi, zoi, coi) -> None:
        self.mu, self.phi, self.zoi, self.coi = mu, phi, zoi, coi

    @property
    def mean(self) -> np.ndarray:
        """``zoi coi + (1 - zoi) mu``."""
        return self.zoi * self.coi + (1.0 - self.zoi) * self.mu

    @property
    def variance(self) -> np.ndarray:
        """``E[Y^2] - E[Y]^2``, ``E[Y^2] = zoi coi + (1 - zoi)(mu (1 - mu)/(1 + phi) + mu^2)``."""
        mu = self.mu
        second = self.zoi * self.coi + (1.0 - self.zoi) * (
            mu * (1.0 - mu) / (1.0 + self.phi) + mu**2
        )
        return second - self.mean**2

    @property
    def slope(self) -> np.ndarray:
        """``(1 - zoi) mu (1 - mu)`` (the logit link of the beta part's mean)."""
        return (1.0 - self.zoi) * self.mu * (1.0 - self.mu)

    def cdf(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``P(Y < y)``, ``P(Y <= y)``: masses at 0 and 1, the beta CDF between."""
        y = np.asarray(y, dtype=float)
        zero = self.zoi * (1.0 - self.coi)
        shape = np.broadcast_shapes(self.mu.shape, self.zoi.shape, y.shape)
        inside = np.broadcast_to((y > 0.0) & (y < 1.0), shape)
        beta = np.zeros(shape)
        if inside.any():  # the beta CDF only where it is needed (it is the costly part)
            from bayes_ir.hierarchical.families._betainc import betainc  # loads numba

            a = np.broadcast_to(self.mu * self.phi, shape)[inside]
            b = np.broadcast_to((1.0 - self.mu) * self.phi, shape)[inside]
            beta[inside] = betainc(a, b, np.broadcast_to(y, shape)[inside])
        at = np.where(y >= 1.0, 1.0, zero + (1.0 - self.zoi) * beta)
        below = np.where(y <= 0.0, 0.0, np.where(y >= 1.0, 1.0 - self.zoi * self.coi, at))
        return below, at

    def rvs(self, rng: np.random.Generator) -> np.ndarray:
        """Draw an exact 0 or 1 with probability ``zoi`` (a 1 with ``coi``), else Beta."""
        shape = np.broadcast_shapes(self.mu.shape, self.zoi.shape)
        inflated = rng.random(shape) < self.zoi
        one = rng.random(shape) < self.coi
        a = np.broadcast_to(self.mu * self.phi, shape)
        b = np.broadcast_to((1.0 - self.mu) * self.phi, shape)
        beta = rng.beta(a, b)
        return np.where(inflated, one.astype(float), beta)

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """Log mass at 0 and 1, log(1 - zoi) + Beta log density inside."""
        y = np.asarray(y, dtype=float)
        inside = np.clip(y, 1e-300, 1.0 - 1e-16)
        a, b = self.mu * self.phi, (1.0 - self.mu) * self.phi
        # log B(a, b) = lgamma(a) + lgamma(b) - lgamma(phi): lgamma(phi) on phi's own shape
        # (one per draw and system), and two lgamma per cell cost half of one betaln
        dens = (
            (np.log1p(-self.zoi) + special.gammaln(self.phi))
            + (a - 1.0) * np.log(inside)
            + (b - 1.0) * np.log1p(-inside)
            - special.gammaln(a)
            - special.gammaln(b)
        )
        zero = np.log(self.zoi) + np.log1p(-self.coi)
        one = np.log(self.zoi) + np.log(self.coi)
        return np.where(y <= 0.0, zero, np.where(y >= 1.0, one, dens))


def centred_effects(matrix: np.ndarray) -> tuple[np.ndarray, bool]:
    r"""Which topics are centred on the intercept, and whether the system effects are centred.

    On :math:`\ell = \mathrm{logit}(\mathrm{clip}(y, 0.01, 0.99))`: per topic, its mean
    with sampling variance :math:`s_t^2/n_t` (the topic's variance over its :math:`n_t`
    scores; :func:`~bayes_ir.hierarchical.families.sampler.centred_topics`), a topic with
    no score inside (0, 1) not centred (its effect moves the beta mean of no score); the
    systems by :func:`~bayes_ir.hierarchical.model.centred_systems`.
    """
    from bayes_ir.hierarchical.model import centred_systems

    y = np.asarray(matrix, dtype=float)
    logits = special.logit(np.clip(y, _CLIP, 1.0 - _CLIP))
    obs = np.isfinite(y)
    n = np.maximum(obs.sum(axis=1), 1)
    centre = np.nanmean(logits, axis=1)  # missing cells are NaN logits
    spread = np.nansum((logits - centre[:, None]) ** 2, axis=1)
    variances = spread / np.maximum(n - 1, 1) / n
    informed = (obs & (y > 0) & (y < 1)).any(axis=1)
    return centred_topics(centre, variances, informed), centred_systems(logits)


class ZOIB(LogitFamily):
    """Zero-one-inflated beta, logit link for the mean (module docstring)."""

    name: ClassVar[str] = "zoib"
    outcome_space: ClassVar[str] = "unit_inflated"
    #: Default draws: at most 60 million interior-score evaluations per chain (Robust04 AP,
    #: 27,000 scores: 2,200 draws), 1,000 to 4,000 draws.
    cell_draws: ClassVar[int] = 60_000_000
    dispersions: ClassVar[tuple[str, ...]] = ("pooled", "system")
    point_masses: ClassVar[tuple[float, ...]] = (0.0, 1.0)
    option_defaults: ClassVar[dict[str, Any]] = {"inflation": None, "phi": None}
    glosses: ClassVar[dict[str, str]] = {
        "phi": "precision of the beta part",
        "phi_typical": "geometric mean of the precisions",
        "phi_log_sd": "SD of log precision across systems",
        "zoi": "P(exact 0 or 1)",
        "coi": "P(1 | exact 0 or 1)",
        "zoi_typical": "P(exact 0 or 1) of a typical system",
        "zoi_sd": "SD of logit zoi across systems",
        "coi_typical": "P(1 | exact 0 or 1) of a typical system",
        "coi_sd": "SD of logit coi across systems",
    }

    def _check_options(self) -> None:
        for name in ("inflation", "phi"):
            value = self.options.get(name)
            if value is not None and value not in ("pooled", "system"):
                raise OptionError(f"zoib {name} must be 'pooled' or 'system', got {value!r}")
            if value == "pooled":
                self.options[name] = None  # the default spells "zoib"

    @property
    def inflation_by_system(self) -> bool:
        """One ``zoi`` and ``coi`` per system (option ``inflation=system``)."""
        return "inflation" in self.per_system

    @property
    def phi_by_system(self) -> bool:
        """One precision per system (option ``phi=system``, or ``fit(sigma="system")``)."""
        return "phi" in self.per_system

    @property
    def per_system(self) -> frozenset[str]:
        """``"inflation"`` and ``"phi"``, as the options say (see :class:`Family`)."""
        return frozenset(k for k in ("inflation", "phi") if self.options.get(k) == "system")

    def with_dispersion(self, sigma: str) -> ZOIB:
        """Return the family with one precision per system when ``sigma="system"``."""
        if self.check_dispersion(sigma) == "system":
            return ZOIB(**{**self.options, "phi": "system"})
        return self

    @property
    def hyperparameters(self) -> tuple[str, ...]:
        """``b0``, the scales, the precision and the inflation."""
        return ("b0", "sigma_topic", "sigma_system", *self.glosses)

    # ------------------------------------------------------------------ data
    def check_scores(self, design: Any) -> None:
        """Every score in [0, 1] (a warning when none lies strictly inside)."""
        y = design.matrix
        bad = np.isfinite(y) & ((y < 0) | (y > 1))
        if bad.any():
            t, s = np.argwhere(bad)[0]
            raise ScoreTableError(
                f"the zoib family needs scores in [0, 1]; topic {design.topics[t]!r}, system "
                f"{design.systems[s]!r} has {float(y[t, s]):g} ({int(bad.sum())} such "
                f"score{'s' if bad.sum() > 1 else ''}): use another likelihood",
                source=design.source,
            )
        inside = np.isfinite(y) & (y > 0) & (y < 1)
        if not inside.any():
            warnings.warn(
                f"{design.source}: no score lies strictly between 0 and 1, so the zoib model's "
                "beta part is its prior alone: for 0/1 scores use likelihood='bernoulli'",
                DataWarning,
                stacklevel=4,
            )

    def mean_score(self, design: Any) -> float:
        """Return the mean of the scores strictly between 0 and 1 (the beta part's)."""
        y = design.matrix[np.isfinite(design.matrix)]
        inside = y[(y > 0) & (y < 1)]
        return float(np.mean(inside if inside.size else y))

    def resolve_priors(self, design: Any, priors: Any) -> Any:
        """Logit-scale priors (module docstring); fields the user set are kept."""
        from bayes_ir.hierarchical.priors import Priors

        given = Priors() if priors is None else validate.instance("priors", priors, Priors)
        return super().resolve_priors(design, given)

    @property
    def posterior_names(self) -> tuple[str, ...]:
        """Variables of the posterior (before :meth:`finish` adds ``system_mean``)."""
        from bayes_ir.hierarchical.families import inflation_kernel
        from bayes_ir.hierarchical.families import zoib_kernel as kernel

        names = kernel.expanded_layout(2, 2, self.phi_by_system, self.inflation_by_system)[0]
        if self.inflation_by_system:  # sampled apart, reported before the effects
            names[-2:-2] = inflation_kernel.expanded_layout(2)[0]
        return tuple(names)

    def data_block(self, design: Any, priors: Any, pooling: str = "all") -> np.ndarray:
        """Return the kernel's data block (:func:`~zoib_kernel.pack`) for ``design``."""
        from bayes_ir.hierarchical.families import zoib_kernel as kernel
        from bayes_ir.hierarchical.families._kernel import pack_header

        hyper = priors.values()
        header = pack_header(
            design.shape,
            (hyper.b0_mu, hyper.b0_sd),
            (hyper.sigma_topic_rate, hyper.sigma_system_rate),
            *centred_effects(design.matrix),
            system_sd(pooling),
        )
        return kernel.pack(
            design.matrix,
            header,
            rates=(hyper.phi_rate, hyper.sigma_log_sd_rate, hyper.inflation_sd_rate),
            phi_by_system=self.phi_by_system,
            inflation_by_system=self.inflation_by_system,
        )

    def sample_kernel(
        self, design: Any, priors: Any, *, pooling: str = "all", **options: Any
    ) -> tuple[Any, Any, dict]:
        """Sample :mod:`~.zoib_kernel` with nutpie (starting near the observed inflation).

        With one inflation per system, the inflation is a block sampled apart
        (:mod:`~.inflation_kernel`: the posterior factorises).
        """
        from bayes_ir.hierarchical.families import inflation_kernel
        from bayes_ir.hierarchical.families import zoib_kernel as kernel
        from bayes_ir.hierarchical.families._kernel import n_crossed

        n_t, n_s = design.shape
        names, shapes = kernel.expanded_layout(n_t, n_s, self.phi_by_system,
                                               self.inflation_by_system)  # fmt: skip
        data = self.data_block(design, priors, pooling)
        c = n_crossed(data)  # b0, log sigma_topic (, log sigma_system)
        start = crossed_start(data, kernel.n_coordinates(data), kernel.n_scalars(data))
        start[c] = -np.log(priors.values().phi_rate)  # log of the prior mean of phi
        block = inflation_kernel.pack(design.matrix, priors.values().inflation_sd_rate)
        apart = []
        if self.inflation_by_system:
            apart.append(kernel_model(inflation_kernel, block, design,
                                      *inflation_kernel.expanded_layout(n_s),
                                      n_dim=inflation_kernel.n_coordinates(block),
                                      start=inflation_kernel.start(block)))  # fmt: skip
        else:
            start[c + 1] = inflation_kernel.start(block)[0]  # the pooled zoi logit
        model = kernel_model(kernel, data, design, names, shapes, n_dim=start.size, start=start,
                             dims=kernel.dims(self.phi_by_system))  # fmt: skip
        return sample_kernel(model, self, design, priors, keep=self.kept(pooling),
                             apart=tuple(apart), **options)  # fmt: skip

    def build_pymc_model(self, design: Any, priors: Any, pooling: str = "all"):
        """Return the PyMC model of this family (:func:`build_pymc_model`)."""
        return build_pymc_model(design, self, priors, pooling)

    design_own: ClassVar[tuple[str, ...]] = ("phi", "zoi", "coi")

    def own_priors(self, priors: Any = None) -> dict[str, float]:
        """Return the rate of the precision's Exponential prior (``Priors.phi_rate``)."""
        rate = None if priors is None else priors.phi_rate
        return {"phi_rate": PHI_RATE if rate is None else float(rate)}

    def design_cells(self, eta: np.ndarray, own: dict[str, np.ndarray]) -> Cells:
        """Return the zoib cells of ``eta`` and ``own`` ``phi``, ``zoi``, ``coi``."""
        return ZOIBCells(special.expit(eta), own["phi"], own["zoi"], own["coi"])

    def design_likelihood(
        self, eta: Any, design: Any, own_priors: dict[str, float], *, data: bool = False
    ) -> None:
        r"""Declare the zoib likelihood of a crossed design's scores, its parameters per group.

        ``phi``, ``zoi_logit`` and ``coi_logit`` (dim ``sigma_group``: one per collection,
        or one) with the priors of the two-way model (:func:`build_pymc_model`), and a
        potential ``y``: the beta log density of every score inside (0, 1) and the log
        masses of the exact 0s and 1s of each group.
        """
        import pymc as pm
        import pytensor.tensor as pt

        if self.phi_by_system or self.inflation_by_system:
            raise OptionError(
                "across collections or segments the zoib model has one precision and one "
                "inflation per collection: leave out phi= and inflation="
            )
        if data:  # which scores are 0, 1 or inside shapes the graph
            self.design_data(design)
        y, group = design.y, design.residual.index
        n_groups = design.residual.n_levels
        inside = (y > 0) & (y < 1)
        n0 = np.bincount(group[y == 0], minlength=n_groups)
        n1 = np.bincount(group[y == 1], minlength=n_groups)
        m = np.bincount(group[inside], minlength=n_groups)
        phi = pm.Exponential("phi", lam=np.float64(own_priors["phi_rate"]), dims="sigma_group")
        zoi_x = pm.Logistic("zoi_logit", mu=0.0, s=1.0, dims="sigma_group")
        coi_x = pm.Logistic("coi_logit", mu=0.0, s=1.0, dims="sigma_group")
        pm.Deterministic("zoi", pm.math.invlogit(zoi_x), dims="sigma_group")
        pm.Deterministic("coi", pm.math.invlogit(coi_x), dims="sigma_group")
        mu = pm.math.invlogit(eta[np.flatnonzero(inside)])
        ph = phi[group[inside]]
        beta = pm.logp(pm.Beta.dist(alpha=mu * ph, beta=(1.0 - mu) * ph), y[inside]).sum()
        counts = (
            (n0 + n1) * -pt.softplus(-zoi_x)
            + m * -pt.softplus(zoi_x)
            + n1 * -pt.softplus(-coi_x)
            + n0 * -pt.softplus(coi_x)
        )
        pm.Potential("y", beta + pt.sum(counts))

    prior_scalars: ClassVar[tuple[str, ...]] = (
        "b0", "sigma_topic", "sigma_system", "phi", "zoi", "coi"
    )  # fmt: skip

    def own_draws(self, post: xr.Dataset) -> dict[str, np.ndarray]:
        """Draws of ``zoi`` and ``coi`` as (chain, draw, system or 1)."""
        out = {}
        for name in ("zoi", "coi"):
            var = post[name]
            x = np.asarray(var.transpose("chain", "draw", ...).values, dtype=float)
            out[name] = x if "system" in var.dims else x[..., None]
        return out

    def score_mean(self, own: dict[str, np.ndarray], inverse_link_mean: np.ndarray) -> np.ndarray:
        """``zoi coi + (1 - zoi)`` times the beta part's mean over the topic population."""
        zoi, coi = own["zoi"], own["coi"]
        return zoi * coi + (1.0 - zoi) * inverse_link_mean

    def draw_own(self, hyper: Any, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Draw ``phi`` and (pooled) ``zoi`` and ``coi``: uniform, as their logistic logits."""
        if self.phi_by_system or self.inflation_by_system:
            raise OptionError("calibration draws the pooled zoib model only")
        return {
            "phi": np.array([rng.exponential(1.0 / hyper.phi_rate)]),
            "zoi": np.array([rng.uniform()]),
            "coi": np.array([rng.uniform()]),
        }

    def mean_note(self) -> str:
        """How the system means are computed (a phrase)."""
        return (
            "expected score over the topic population, zoi coi + (1 - zoi) "
            "E[logit^-1(beta + topic + effect)], topic ~ N(0, sigma_topic^2), beta the "
            "population's intercept (b0 less the fitted topics' mean effect)"
        )

    def parameters(self, post: xr.Dataset, keep: np.ndarray | None = None) -> dict[str, Any]:
        """``b0``, ``topic``, ``system`` (logit scale), ``phi``, ``zoi``, ``coi``."""
        out = {
            "b0": flat_draws(post["b0"], keep),
            "sigma_topic": flat_draws(post["sigma_topic"], keep),
            "topic": flat_draws(post["topic_effect"], keep, "topic"),
            "system": flat_draws(post["system_effect"], keep, "system"),
        }
        for name in ("phi", "zoi", "coi"):
            var = post[name]
            out[name] = flat_draws(var, keep, *(("system",) if "system" in var.dims else ()))
        return out

    def cells(self, params: dict[str, Any], systems: np.ndarray) -> Cells:
        """Return the zoib cells of ``systems`` for the draws ``params``."""
        eta = (params["b0"][:, None] + params["system"][:, systems])[:, :, None]
        mu = special.expit(eta + params["topic"][:, None, :])

        def per(name: str) -> np.ndarray:
            x = params[name]
            return x[:, None, None] if x.ndim == 1 else x[:, systems, None]

        return ZOIBCells(mu, per("phi"), per("zoi"), per("coi"))


def build_pymc_model(design: Any, family: ZOIB, priors: Any, pooling: str = "all"):
    """Build the zoib model in PyMC: the definition the kernel is tested against.

    Parameters
    ----------
    design
        A :class:`~bayes_ir.hierarchical.model.Design` (scores in [0, 1]).
    family
        The :class:`ZOIB` family (its precision and inflation structures).
    priors
        Resolved priors (:meth:`ZOIB.resolve_priors`).

    Returns
    -------
    pymc.Model
        The crossed effects as the binomial model's
        (:func:`~bayes_ir.hierarchical.families.binomial.build_pymc_model`), ``phi``
        (or ``phi_typical``, ``phi_log_sd`` and ``phi_z``), ``zoi_logit`` and
        ``coi_logit`` (standard logistic; with ``inflation=system`` plus ``zoi_sd``,
        ``coi_sd``, ``zoi_z``, ``coi_z``), deterministics ``zoi`` and ``coi``, and the
        likelihood as a potential ``y``: the beta log density of every score inside
        (0, 1) and the log masses of the exact 0s and 1s.
    """
    import pymc as pm
    import pytensor.tensor as pt

    y = design.matrix
    obs = np.isfinite(y)
    inside = obs & (y > 0) & (y < 1)
    n0, n1 = (obs & (y == 0)).sum(axis=0), (obs & (y == 1)).sum(axis=0)
    m = inside.sum(axis=0)
    t_idx, s_idx = np.nonzero(inside)
    centred = centred_effects(y)
    hyper = type(priors.values())(*(np.float64(v) for v in priors.values()))  # float64 consts
    coords = {"topic": list(design.topics), "system": list(design.systems)}
    with pm.Model(coords=coords) as model:
        b0, topic, system = pymc_crossed_effects(design, hyper, centred, pooling)
        if family.phi_by_system:
            typical = pm.Exponential("phi_typical", lam=hyper.phi_rate)
            log_sd = pm.Exponential("phi_log_sd", lam=hyper.sigma_log_sd_rate)
        else:
            phi = pm.Exponential("phi", lam=hyper.phi_rate)
        zoi_logit = pm.Logistic("zoi_logit", mu=0.0, s=1.0)
        coi_logit = pm.Logistic("coi_logit", mu=0.0, s=1.0)
        if family.inflation_by_system:
            zoi_sd = pm.Exponential("zoi_sd", lam=hyper.inflation_sd_rate)
            coi_sd = pm.Exponential("coi_sd", lam=hyper.inflation_sd_rate)
        if family.phi_by_system:
            phi_z = pm.ZeroSumNormal("phi_z", sigma=1.0, dims="system")
            phi = pm.Deterministic("phi", typical * pt.exp(log_sd * phi_z), dims="system")
        if family.inflation_by_system:
            zoi_z = pm.ZeroSumNormal("zoi_z", sigma=1.0, dims="system")
            coi_z = pm.ZeroSumNormal("coi_z", sigma=1.0, dims="system")
            zoi_x, coi_x = zoi_logit + zoi_sd * zoi_z, coi_logit + coi_sd * coi_z
            pm.Deterministic("zoi_typical", pm.math.invlogit(zoi_logit))
            pm.Deterministic("coi_typical", pm.math.invlogit(coi_logit))
            dims: Any = "system"
        else:
            zoi_x, coi_x, dims = zoi_logit, coi_logit, None
        pm.Deterministic("zoi", pm.math.invlogit(zoi_x), dims=dims)
        pm.Deterministic("coi", pm.math.invlogit(coi_x), dims=dims)
        mu = pm.math.invlogit(b0 + topic[t_idx] + system[s_idx])
        ph = phi[s_idx] if family.phi_by_system else phi
        beta = pm.logp(pm.Beta.dist(alpha=mu * ph, beta=(1.0 - mu) * ph), y[inside]).sum()
        log_zoi, log_1mzoi = -pt.softplus(-zoi_x), -pt.softplus(zoi_x)
        log_coi, log_1mcoi = -pt.softplus(-coi_x), -pt.softplus(coi_x)
        counts = (
            (n0 + n1) * log_zoi + m * log_1mzoi + n1 * log_coi + n0 * log_1mcoi
            if family.inflation_by_system
            else (n0 + n1).sum() * log_zoi
            + m.sum() * log_1mzoi
            + n1.sum() * log_coi
            + n0.sum() * log_1mcoi
        )
        pm.Potential("y", beta + pt.sum(counts))
    return model
