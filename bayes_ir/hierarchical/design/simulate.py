r"""Scores simulated from a design's model: known truth for calibration and pooling checks.

Given the cells of a design (which topics, systems and collections were observed) and
values of the parameters, or priors to draw them from:

.. math::

    y_i = b_{0,c(i)} + \sum_j f_{j,i}\,\theta^{(j)}_{\ell_j(i)} + \sigma_{c(i)}\,\varepsilon_i,
    \qquad \theta^{(j)} = s^{(j)}_h\,(z - \bar z_{\text{set}}),\ z \sim N(0, I),

the zero-sum effects drawn as an i.i.d. normal projected on each set's sum zero
(exactly ``ZeroSumNormal``'s distribution). With a logit family the same sum is the
linear predictor of its cells (:meth:`~bayes_ir.hierarchical.families.Family.design_cells`),
its own parameters drawn per residual group from their priors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from bayes_ir.hierarchical.design.design import CrossedDesign
from bayes_ir.hierarchical.design.priors import DesignPriors
from bayes_ir.hierarchical.design.terms import Term

__all__ = ["draw_parameters", "simulate_scores"]


def _zero_sum(x: np.ndarray, term: Term) -> np.ndarray:
    """``x`` less its mean over each zero-sum set of ``term``."""
    out = x.copy()
    for s in np.unique(term.zero_sum[term.zero_sum >= 0]):
        sel = term.zero_sum == s
        out[sel] -= x[sel].mean()
    return out


def draw_parameters(
    design: CrossedDesign, priors: DesignPriors, rng: np.random.Generator, family: Any = None
) -> dict[str, np.ndarray]:
    """Draw every parameter of ``design``'s model from ``priors``.

    Returns
    -------
    dict
        ``b0``, ``sigma`` (residual SDs; a logit ``family``'s own parameters instead:
        zoib's precision ``phi`` from its Exponential prior, ``zoi`` and ``coi``
        uniform, the inverse logits of standard logistic draws), and for each random
        term its effects (by the term's name) and its scales (``sigma_<term>``).
    """
    truth = {"b0": rng.normal(priors.intercept_mu, priors.intercept_sd)}
    n_res = design.residual.n_levels
    if family is None or family.name == "gaussian":
        truth["sigma"] = rng.exponential(1.0 / np.asarray(priors.residual_rate))
    elif family.design_own:  # zoib
        truth["phi"] = rng.exponential(1.0 / priors.own["phi_rate"], n_res)
        truth["zoi"], truth["coi"] = rng.uniform(size=n_res), rng.uniform(size=n_res)
    for t in design.terms[1:]:
        scale = rng.exponential(1.0 / np.asarray(priors.rates[t.name]))
        truth[t.scale_name] = scale
        truth[t.name] = scale[t.scale_group] * _zero_sum(rng.standard_normal(t.n_levels), t)
    return truth


def simulate_scores(
    design: CrossedDesign,
    truth: Mapping[str, np.ndarray],
    rng: np.random.Generator,
    family: Any = None,
) -> CrossedDesign:
    """Return ``design`` with scores simulated from the model at ``truth``.

    Parameters
    ----------
    design
        The cells (topics, systems, collections observed) and terms.
    truth
        ``b0``, ``sigma`` and every random term's effects (see :func:`draw_parameters`).
    rng
        Random generator of the residuals.
    family
        ``None`` (Gaussian) or a logit family: ``truth`` then holds its own
        parameters per residual group instead of ``sigma``.
    """
    gaussian = family is None or family.name == "gaussian"
    res = design.residual.index
    sigma = np.asarray(truth["sigma"])[res] if gaussian else np.ones(design.n_cells)
    mu = np.asarray(truth["b0"])[design.terms[0].index]
    for t in design.terms[1:]:
        part = np.asarray(truth[t.name])[t.index]
        mu = mu + (sigma * part if t.standardized else part)
    if not gaussian:
        own = {k: np.asarray(truth[k])[res] for k in family.design_own}
        return replace(design, y=family.design_cells(mu, own).rvs(rng))
    return replace(design, y=mu + sigma * rng.standard_normal(design.n_cells))
