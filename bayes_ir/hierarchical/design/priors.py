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

With a logit-link family (``fit_across(likelihood="bernoulli" | "binomial" | "zoib")``)
the priors are the two-way family model's (:mod:`bayes_ir.hierarchical.families.logit`),
one per collection: :math:`b_{0c} \sim N(\mathrm{logit}\,\bar y_c, 2.5)` with
:math:`\bar y_c` the family's mean score of collection :math:`c` (kept within half a
score of 0 and 1), every scale Exponential(rate 1) on the logit scale, no residual SD,
and the family's own priors (zoib: the precision's Exponential(0.1), standard logistic
logits of the inflation). The intercept's SD is :data:`LOGIT_INTERCEPT_SD`, not the two-way
model's :data:`~bayes_ir.hierarchical.families.logit.INTERCEPT_SD`: here :math:`b_{0c}` is
the zero-sum intercept (the population's intercept plus the mean effects of the fitted
topics and systems), there the intercept of the topic population itself, whose SD was set
by exact coverage on few 0/1 items.

References
----------
Gabry, J., Goodrich, B. (2020). Prior distributions for rstanarm models.
https://mc-stan.org/rstanarm/articles/priors.html
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayes_ir import validate
from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.hierarchical.design.design import CrossedDesign
from bayes_ir.hierarchical.priors import INTERCEPT_SCALE, Priors

__all__ = ["LOGIT_INTERCEPT_SD", "DesignPriors", "design_priors"]

#: Prior SD of a logit family's intercept per collection, ``b0_c`` (logit scale; module
#: docstring).
LOGIT_INTERCEPT_SD: float = 2.5


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
    own
        Hyperparameters of a likelihood family's own parameters
        (:meth:`~bayes_ir.hierarchical.families.Family.own_priors`; empty for the
        Gaussian model, whose residual SDs have ``residual_rate``).
    """

    intercept_mu: np.ndarray
    intercept_sd: np.ndarray
    residual_rate: np.ndarray
    rates: Mapping[str, np.ndarray]
    own: Mapping[str, float] = field(default_factory=dict)

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
        if self.residual_rate.size:  # no residual SD in a logit family's model
            lines += [
                f"sigma[{lab}] ~ Exponential(rate={r:.4g})"
                for lab, r in zip(res.scale_names, self.residual_rate, strict=True)
            ]
        lines += [f"{name} = {value:.4g}" for name, value in self.own.items()]
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
    design: CrossedDesign, *, rates: Mapping[str, float] | None = None, family: Any = None
) -> DesignPriors:
    """Autoscaled priors of ``design`` (see the module docstring).

    Parameters
    ----------
    design
        The design.
    rates
        Fixed Exponential rates that replace the autoscaled ones, by scale name:
        ``"sigma"`` (every residual SD; not with a logit family) or a term's scale
        (``"sigma_system"``, ``"sigma_system_collection"``, ``"sigma_topic"``: every
        group of that term).
    family
        A logit-link :class:`~bayes_ir.hierarchical.families.Family` (its scores
        checked, its trials resolved), or ``None``/the Gaussian family.

    Returns
    -------
    DesignPriors
    """
    logit = family is not None and family.link == "logit"
    names = {*(() if logit else ("sigma",)), *(t.scale_name for t in design.terms[1:])}
    fixed = dict(rates or {})
    for key, value in fixed.items():
        if key not in names:
            raise OptionError(
                f"unknown prior scale {key!r}: choose among {', '.join(sorted(names))}"
            )
        fixed[key] = validate.finite_float(f"rate of {key}", value, minimum=0.0, open_minimum=True)
    if logit:
        return _logit_priors(design, family, fixed)
    b0 = design.terms[0]
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


def _logit_priors(design: CrossedDesign, family: Any, fixed: dict[str, float]) -> DesignPriors:
    """Return the priors of a logit-link family across collections (module docstring)."""
    from bayes_ir.hierarchical.families.logit import SCALE_RATE

    b0 = design.terms[0]
    mu = np.array([family.intercept_mu(design.block(k)) for k in range(b0.n_levels)])
    term_rates = {
        t.name: np.full(t.n_scales, fixed.get(t.scale_name, SCALE_RATE)) for t in design.terms[1:]
    }
    return DesignPriors(
        intercept_mu=mu,
        intercept_sd=np.full(b0.n_levels, LOGIT_INTERCEPT_SD),
        residual_rate=np.empty(0),
        rates=term_rates,
        own=family.own_priors(),
    )
