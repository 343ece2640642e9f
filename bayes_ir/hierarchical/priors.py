"""Weakly informative priors of the hierarchical model, autoscaled to the data.

The defaults follow the spirit of rstanarm's autoscaled priors (Gabry and Goodrich
2020): every prior is stated in units of the observed scores, so the same model is
equally (weakly) informative for AP in [0, 1] or for a measure on another scale.
With ``ybar`` and ``s_y`` the mean and SD of all observed scores:

=================  ==========================================  =====================
parameter          prior                                       rstanarm counterpart
=================  ==========================================  =====================
``b0``             Normal(ybar, 2.5 s_y)                       ``prior_intercept``
``sigma``          Exponential(rate = 1 / s_y)                 ``prior_aux``
``sigma_topic``    Exponential(rate = 1 / s_y)                 ``decov(1, 1, 1, 1)``
``sigma_system``   Exponential(rate = 1 / s_y)                 ``decov(1, 1, 1, 1)``
``skewness``       Uniform(-0.99 g_max, 0.99 g_max)            (brms: Normal(0, 4)
                   (skew-normal; g_max = 0.9953)               on ``alpha``)
``sigma_log_sd``   Exponential(rate = 1)                       (brms ``sigma ~ system``:
                   (``sigma="system"`` only)                   ``sd`` of ``log sigma``)
=================  ==========================================  =====================

With ``sigma="system"`` the residual SD varies by system, ``log sigma_s =
log sigma_typical + sigma_log_sd * z_s`` with ``z`` a standard ZeroSumNormal, so
``sigma_typical`` (the geometric mean of the systems' residual SDs) takes the prior
of ``sigma`` and ``sigma_log_sd``, the SD of the log residual SDs across systems,
is unitless: its Exponential(1) prior (mean 1, i.e. a factor e) does not depend on
the measure's scale.

The skew-normal's shape has a uniform prior on its skewness (Azzalini's centred
parameterisation) over almost all of its admissible range, and is reported as
``alpha`` too. This differs from brms' default ``alpha ~ Normal(0, 4)``: the uniform
skewness prior is neutral about the direction and size of the skew; it implies a
prior on ``alpha`` that is thin at 0 (density ~ ``alpha^2``) and heavy-tailed. Why:
near ``alpha = 0`` the skewness grows like ``alpha^3`` (singular Fisher information);
on rb04 the likelihood even has a local minimum at ``alpha = 0`` with modes near
``alpha = -1`` and ``+1``, and a probe (issue 8) gave 3x lower ESS for ``alpha``
with brms' prior sampled in ``alpha`` (423 against 1,281 per 12,000 draws) and 2x
lower with a uniform prior on ``delta = alpha / sqrt(1 + alpha^2)``. NUTS samples the
magnitude ``|skewness| ~ Uniform(0, 0.99 g_max)`` with the sign summed out and drawn
afterwards from its exact conditional (see :mod:`bayes_ir.hierarchical.model`): that
is the same Uniform(-0.99 g_max, 0.99 g_max) prior on the skewness, not a new one.
On rb04 the posterior of ``alpha`` moves little between the two priors: mean
-0.78, 95% interval (-1.34, 0.99) here against -0.63, (-1.31, 0.99) with brms'
prior (the latter from only 423 effective draws), as 2,250 cells inform the shape.

For a single varying intercept rstanarm's ``decov`` prior reduces to an Exponential(1)
prior on the ratio of the group SD to the residual SD; here the group SDs get their
own Exponential prior in units of ``s_y`` instead, which keeps the three scales a
priori independent (needed by the exact collapsed sampler and harmless: with 50 or
more topics and dozens of systems the likelihood dominates every scale). The
topic and system effects are ``ZeroSumNormal`` (they sum to zero), see
:mod:`bayes_ir.hierarchical.model`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from bayes_ir import validate
from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.hierarchical.skewnormal import SKEWNESS_MAX

__all__ = ["Hyperparameters", "Priors", "PriorPredictive", "autoscale_priors", "prior_predictive"]

#: Multiplier of the score SD in the intercept prior (rstanarm's 2.5).
INTERCEPT_SCALE: float = 2.5
#: Bound of the uniform prior on the skew-normal's skewness, as a fraction of its maximum.
SKEWNESS_FRACTION: float = 0.99
#: Rate of the Exponential prior on ``sigma_log_sd`` (SD of the log residual SDs).
SIGMA_LOG_SD_RATE: float = 1.0
#: Rate of the Exponential prior on the zoib family's precision ``phi`` (prior mean 10).
PHI_RATE: float = 0.1
#: Rate of the Exponential priors on the SDs of the zoib family's per-system inflation logits.
INFLATION_SD_RATE: float = 1.0


class Hyperparameters(NamedTuple):
    """The fields of resolved :class:`Priors`, every one a number (see :meth:`Priors.values`)."""

    b0_mu: float
    b0_sd: float
    sigma_rate: float
    sigma_topic_rate: float
    sigma_system_rate: float
    skewness_max: float
    sigma_log_sd_rate: float
    phi_rate: float
    inflation_sd_rate: float


#: The fields autoscaling sets from the observed scores (their mean and SD); the other fields
#: have fixed defaults, so scores without variance can be resolved when these are all given.
_SCALED_BY_THE_SCORES = ("b0_mu", "b0_sd", "sigma_rate", "sigma_topic_rate", "sigma_system_rate")


@dataclass(frozen=True)
class Priors:
    """Hyperparameters of the priors; ``None`` fields are filled from the data.

    Attributes
    ----------
    b0_mu, b0_sd
        Mean and SD of the Normal prior on the intercept ``b0``.
    sigma_rate
        Rate of the Exponential prior on the residual SD ``sigma`` (mean ``1/rate``).
    sigma_topic_rate, sigma_system_rate
        Rates of the Exponential priors on the SDs of the topic and system effects.
    skewness_max
        Bound of the Uniform(-skewness_max, skewness_max) prior on the skew-normal's
        skewness (default 0.99 x 0.9953); must stay below 0.9953.
    sigma_log_sd_rate
        Rate of the Exponential prior on ``sigma_log_sd``, the SD across systems of
        the log residual SD (``sigma="system"`` only; default 1); for the zoib family,
        on ``phi_log_sd``, the SD across systems of the log precision.
    phi_rate
        Rate of the Exponential prior on the precision ``phi`` of the zoib family
        (:mod:`bayes_ir.hierarchical.families.zoib`; default 0.1, prior mean 10).
    inflation_sd_rate
        Rate of the Exponential priors on ``zoi_sd`` and ``coi_sd``, the SDs across
        systems of the zoib family's inflation logits (``inflation=system``; default 1).

    Notes
    -----
    ``Priors()`` means "all autoscaled" (see the module docstring); override a field
    to fix it, e.g. ``Priors(sigma_system_rate=100.0)`` puts the prior mean of the
    system SD at 0.01. :meth:`resolve` fills the remaining fields from the data.
    """

    b0_mu: float | None = None
    b0_sd: float | None = None
    sigma_rate: float | None = None
    sigma_topic_rate: float | None = None
    sigma_system_rate: float | None = None
    skewness_max: float | None = None
    sigma_log_sd_rate: float | None = SIGMA_LOG_SD_RATE  # not scaled by the data
    phi_rate: float | None = PHI_RATE  # unitless
    inflation_sd_rate: float | None = INFLATION_SD_RATE  # logit scale

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            positive = f.name != "b0_mu"
            validate.finite_float(
                f"prior {f.name}",
                value,
                minimum=0.0 if positive else None,
                open_minimum=positive,
                # the largest skewness of a skew-normal
                maximum=SKEWNESS_MAX if f.name == "skewness_max" else None,
                open_maximum=True,
            )

    def resolve(self, scores: np.ndarray) -> Priors:
        """Fill the ``None`` fields from the observed scores (rstanarm-like autoscaling).

        Parameters
        ----------
        scores
            The observed scores (NaN cells are ignored).

        Returns
        -------
        Priors
            With every field set.
        """
        auto: dict[str, float] = {}
        if any(getattr(self, f) is None for f in _SCALED_BY_THE_SCORES):
            y = np.asarray(scores, dtype=float)
            y = y[np.isfinite(y)]
            if y.size < 2:
                raise InsufficientDataError(
                    "the priors need at least two observed scores to autoscale"
                )
            s_y = float(np.std(y, ddof=1))
            if not s_y > 1e-12 * float(np.abs(y).max()):
                raise InsufficientDataError(
                    f"every score is {y[0]:g}: with no variance the hierarchical model has "
                    "nothing to explain"
                )
            auto = {"b0_mu": float(np.mean(y)), "b0_sd": INTERCEPT_SCALE * s_y}
            auto |= {f: 1.0 / s_y for f in _SCALED_BY_THE_SCORES if f.endswith("_rate")}
        auto |= {
            "skewness_max": SKEWNESS_FRACTION * SKEWNESS_MAX,
            "sigma_log_sd_rate": SIGMA_LOG_SD_RATE,
            "phi_rate": PHI_RATE,
            "inflation_sd_rate": INFLATION_SD_RATE,
        }
        return replace(self, **{k: v for k, v in auto.items() if getattr(self, k) is None})

    @property
    def is_resolved(self) -> bool:
        """True when every field has a value."""
        return all(v is not None for v in asdict(self).values())

    def values(self) -> Hyperparameters:
        """Return the fields as numbers, once every one is set (see :meth:`resolve`).

        Raises
        ------
        OptionError
            A field is still ``None``.
        """
        numbers = [getattr(self, f.name) for f in fields(self)]
        unset = [f.name for f, v in zip(fields(self), numbers, strict=True) if v is None]
        if unset:
            raise OptionError(f"priors {', '.join(unset)} are not set: resolve them first")
        return Hyperparameters(*numbers)

    def to_dict(self) -> dict[str, float | None]:
        """Return the fields as a plain dict (for provenance and netCDF attributes)."""
        return asdict(self)

    def describe(self) -> str:
        """One line per prior, in the notation of the module docstring."""
        p = self
        return "\n".join(
            [
                f"b0 ~ Normal({p.b0_mu:.4g}, {p.b0_sd:.4g})",
                f"sigma ~ Exponential(rate={p.sigma_rate:.4g})",
                f"sigma_topic ~ Exponential(rate={p.sigma_topic_rate:.4g})",
                f"sigma_system ~ Exponential(rate={p.sigma_system_rate:.4g})",
                f"skewness ~ Uniform(-{p.skewness_max:.4g}, {p.skewness_max:.4g})  "
                "[skew-normal only; alpha derived]",
                f"sigma_log_sd ~ Exponential(rate={p.sigma_log_sd_rate:.4g})  "
                "[sigma='system' only; sigma_typical takes sigma's prior]",
                f"phi ~ Exponential(rate={p.phi_rate:.4g}), zoi_sd and coi_sd ~ "
                f"Exponential(rate={p.inflation_sd_rate:.4g})  [zoib only]",
            ]
        )


def autoscale_priors(scores: np.ndarray, priors: Priors | None = None) -> Priors:
    """Return ``priors`` (default: all autoscaled) with every field resolved from ``scores``.

    See :class:`Priors` and the module docstring for the rules.
    """
    if priors is None:
        priors = Priors()
    validate.instance("priors", priors, Priors)
    return priors.resolve(scores)


@dataclass(frozen=True, eq=False)
class PriorPredictive:
    """Scores simulated from the priors alone, set against the observed scores.

    Attributes
    ----------
    simulated
        Array (draw, topic, system) of prior predictive scores.
    observed
        The observed topic x system matrix (NaN for missing cells).
    priors
        The resolved priors used.
    score_range
        The measure's range, e.g. (0, 1) for AP; (-inf, inf) when unknown.
    """

    simulated: np.ndarray
    observed: np.ndarray
    priors: Priors
    score_range: tuple[float, float]

    def to_frame(self) -> pd.DataFrame:
        """Return one row per statistic (``mean, sd, min, max`` of the scores).

        Columns ``statistic, observed, prior_q05, prior_q50, prior_q95,
        quantile_of_observed``.
        """
        obs = self.observed[np.isfinite(self.observed)]
        sim = self.simulated.reshape(self.simulated.shape[0], -1)
        rows = []
        for name, f in (("mean", np.mean), ("sd", np.std), ("min", np.min), ("max", np.max)):
            s = f(sim, axis=1)
            o = float(f(obs))
            q = np.quantile(s, [0.05, 0.5, 0.95])
            rows.append((name, o, *q, float(np.mean(s <= o))))
        return pd.DataFrame(
            rows,
            columns=[
                "statistic",
                "observed",
                "prior_q05",
                "prior_q50",
                "prior_q95",
                "quantile_of_observed",
            ],
        )

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    @property
    def share_in_range(self) -> float:
        """Share of simulated scores inside the measure's range."""
        lo, hi = self.score_range
        return float(np.mean((self.simulated >= lo) & (self.simulated <= hi)))

    def summary(self) -> str:
        """Return the prior predictive check as text."""
        lines = [
            f"Prior predictive check ({self.simulated.shape[0]} draws)",
            self.priors.describe(),
            f"share of simulated scores inside {self.score_range}: {self.share_in_range:.1%}",
            self.to_frame().to_string(index=False, float_format=lambda v: f"{v:.4f}"),
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def prior_predictive(
    table,
    *,
    likelihood: str = "gaussian",
    priors: Priors | None = None,
    draws: int = 500,
    seed: int | None = None,
) -> PriorPredictive:
    r"""Simulate scores from the priors of the hierarchical model (no data used but scales).

    Parameters
    ----------
    table
        The ScoreTable (with roles, one collection and measure) the model will be fitted to.
    likelihood
        ``"gaussian"`` or ``"skew_normal"``.
    priors
        Priors to check (``None``: the autoscaled defaults).
    draws
        Number of simulated datasets.
    seed
        Random seed (default :data:`bayes_ir.defaults.SEED`).

    Returns
    -------
    PriorPredictive
        ``summary()`` shows where the observed mean, SD, min and max fall among the
        simulated ones; weakly informative priors put them well inside the prior range.

    Notes
    -----
    Draws :math:`b_0, \sigma, \tau, \chi` (and :math:`\alpha`) from the priors, the
    zero-sum effects as projected normals, and
    :math:`y_{ts} = b_0 + a_t + c_s + e_{ts}` (Gabry et al. 2019, section 3).

    References
    ----------
    Gabry, J., Simpson, D., Vehtari, A., Betancourt, M., Gelman, A. (2019).
    Visualization in Bayesian workflow. *JRSS A* 182(2), 389-402.
    """
    from bayes_ir import validate
    from bayes_ir.hierarchical.model import check_likelihood, design_of
    from bayes_ir.hierarchical.skewnormal import skewness_to_alpha, skewnormal_location_scale
    from bayes_ir.measures import measure_range

    draws = validate.positive_int("draws", draws)
    rng = np.random.default_rng(validate.seed(seed))
    design = design_of(table)
    likelihood = check_likelihood(likelihood)
    resolved = autoscale_priors(design.score, priors)
    p = resolved.values()
    n_t, n_s = design.shape
    # mu and y (and the skew-normal's location and scale) are draws x cells each
    validate.memory(
        "the prior predictive draws", {"draws": draws, "cells": n_t * n_s, "arrays at once": 4}
    )
    b0 = rng.normal(p.b0_mu, p.b0_sd, size=draws)
    sig = rng.exponential(1 / p.sigma_rate, size=draws)
    tau = rng.exponential(1 / p.sigma_topic_rate, size=draws)
    chi = rng.exponential(1 / p.sigma_system_rate, size=draws)
    a = rng.standard_normal((draws, n_t))
    a = (a - a.mean(axis=1, keepdims=True)) * tau[:, None]
    c = rng.standard_normal((draws, n_s))
    c = (c - c.mean(axis=1, keepdims=True)) * chi[:, None]
    mu = b0[:, None, None] + a[:, :, None] + c[:, None, :]
    if likelihood == "gaussian":
        y = mu + sig[:, None, None] * rng.standard_normal(mu.shape)
    else:
        from scipy import stats as st

        skew = rng.uniform(-p.skewness_max, p.skewness_max, size=draws)
        alpha = skewness_to_alpha(skew)[:, None, None]
        xi, omega = skewnormal_location_scale(mu, sig[:, None, None], alpha)
        y = st.skewnorm.rvs(alpha, loc=xi, scale=omega, random_state=rng)
    return PriorPredictive(
        simulated=y,
        observed=design.matrix,
        priors=resolved,
        score_range=measure_range(design.measure),
    )
