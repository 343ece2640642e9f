r"""Priors of a crossed design, autoscaled to the data as the one-collection model's are.

With :math:`\bar y_c` and :math:`s_c` the mean and SD of collection :math:`c`'s scores:

=======================================  ==========================================
parameter                                prior
=======================================  ==========================================
intercept :math:`b_{0c}`                 Normal(:math:`\bar y_c`, :math:`2.5 s_c`)
residual SD :math:`\sigma_c`             Exponential(rate :math:`1/s_c`)
scale of a term, measure units           Exponential(rate :math:`1/s`), :math:`s` the
                                         pooled within-collection SD of the scores
                                         of the cells the scale governs
scale of a term in residual-SD units     Exponential(rate 1)
=======================================  ==========================================

With one collection this is exactly :mod:`bayes_ir.hierarchical.priors` (rstanarm-like
autoscaling, Gabry and Goodrich 2020). A term's scales are a priori independent,
which the blocked Gibbs sampler needs (each scale's conditional is one-dimensional).

References
----------
Gabry, J., Goodrich, B. (2020). Prior distributions for rstanarm models.
https://mc-stan.org/rstanarm/articles/priors.html
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from bayes_ir import validate
from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.hierarchical.design.design import CrossedDesign
from bayes_ir.hierarchical.priors import INTERCEPT_SCALE, Priors

__all__ = ["DesignPriors", "design_priors"]


@dataclass(frozen=True, eq=False)
class DesignPriors:
    """Resolved hyperparameters of a design's priors.

    Attributes
    ----------
    intercept_mu, intercept_sd
        Normal prior of every level of ``b0``.
    residual_rate
        Exponential rate of every residual SD.
    rates
        ``{term name: Exponential rate of every scale group}`` of the random terms.
    """

    intercept_mu: np.ndarray
    intercept_sd: np.ndarray
    residual_rate: np.ndarray
    rates: Mapping[str, np.ndarray]

    @classmethod
    def from_priors(cls, design: CrossedDesign, priors: Priors) -> DesignPriors:
        """Return the priors of :func:`bayes_ir.hierarchical.fit` on a two-way design."""
        p = priors.resolve(design.y).values()
        return cls(
            intercept_mu=np.array([p.b0_mu]),
            intercept_sd=np.array([p.b0_sd]),
            residual_rate=np.array([p.sigma_rate]),
            rates={
                "topic": np.array([p.sigma_topic_rate]),
                "system": np.array([p.sigma_system_rate]),
            },
        )

    def describe(self, design: CrossedDesign) -> str:
        """One line per prior."""
        b0 = design.terms[0]
        lines = [
            f"b0[{lab}] ~ Normal({m:.4g}, {s:.4g})"
            for lab, m, s in zip(b0.levels, self.intercept_mu, self.intercept_sd, strict=True)
        ]
        res = design.residual
        lines += [
            f"sigma[{lab}] ~ Exponential(rate={r:.4g})"
            for lab, r in zip(res.scale_names, self.residual_rate, strict=True)
        ]
        for t in design.terms[1:]:
            for lab, r in zip(t.scale_names, self.rates[t.name], strict=True):
                where = f"[{lab}]" if t.n_scales > 1 else ""
                unit = "  [residual-SD units]" if t.standardized else ""
                lines.append(f"{t.scale_name}{where} ~ Exponential(rate={r:.4g}){unit}")
        return "\n".join(lines)


def _within_sd(design: CrossedDesign, mask: np.ndarray) -> float:
    """Pooled within-collection SD of the scores of the cells in ``mask``."""
    group = design.terms[0].index[mask]
    y = design.y[mask]
    means = np.bincount(group, y) / np.maximum(np.bincount(group), 1)
    dev = y - means[group]
    df = y.size - np.unique(group).size
    if df < 1:
        raise InsufficientDataError("the priors need at least two scores per collection")
    return float(np.sqrt(np.sum(dev**2) / df))


def design_priors(
    design: CrossedDesign, *, rates: Mapping[str, float] | None = None
) -> DesignPriors:
    """Autoscaled priors of ``design`` (see the module docstring).

    Parameters
    ----------
    design
        The design.
    rates
        Fixed Exponential rates that replace the autoscaled ones, by scale name:
        ``"sigma"`` (every residual SD) or a term's scale (``"sigma_system"``,
        ``"sigma_system_collection"``, ``"sigma_topic"``: every group of that term).

    Returns
    -------
    DesignPriors
    """
    b0 = design.terms[0]
    names = {"sigma", *(t.scale_name for t in design.terms[1:])}
    fixed = dict(rates or {})
    for key, value in fixed.items():
        if key not in names:
            raise OptionError(
                f"unknown prior scale {key!r}: choose among {', '.join(sorted(names))}"
            )
        fixed[key] = validate.finite_float(f"rate of {key}", value, minimum=0.0, open_minimum=True)
    mu = np.empty(b0.n_levels)
    sd = np.empty(b0.n_levels)
    for k in range(b0.n_levels):
        y = design.y[b0.index == k]
        s = float(np.std(y, ddof=1)) if y.size > 1 else 0.0
        if not s > 1e-12 * max(float(np.abs(y).max()), 1e-300):
            raise InsufficientDataError(
                f"every score of {b0.levels[k]!r} is {y[0]:g}: with no variance the model "
                "has nothing to explain"
            )
        mu[k], sd[k] = float(np.mean(y)), INTERCEPT_SCALE * s
    res = design.residual
    residual = np.array(
        [1.0 / float(np.std(design.y[res.index == g], ddof=1)) for g in range(res.n_levels)]
    )
    if "sigma" in fixed:
        residual[:] = fixed["sigma"]
    term_rates: dict[str, np.ndarray] = {}
    for t in design.terms[1:]:
        r = np.empty(t.n_scales)
        for g in range(t.n_scales):
            if t.scale_name in fixed:
                r[g] = fixed[t.scale_name]
            elif t.standardized:
                r[g] = 1.0
            else:
                r[g] = 1.0 / _within_sd(design, t.scale_group[t.index] == g)
        term_rates[t.name] = r
    return DesignPriors(intercept_mu=mu, intercept_sd=sd, residual_rate=residual, rates=term_rates)
