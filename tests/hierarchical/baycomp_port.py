r"""baycomp's hierarchical model (its Stan program) written in PyMC, to take its assumptions apart.

baycomp's ``hierarchical-t-test.stan`` (Corani et al. 2017), for ``q`` datasets of ``n``
paired differences scaled by the mean of the datasets' SDs (baycomp's ``scaled_data``):

.. math::

    x_{i\cdot} \sim N(\delta_i \mathbf{1}, \sigma_i^2 M), \quad
    M = (1 - \rho) I + \rho\,\mathbf{1}\mathbf{1}^\top, \quad
    \delta_i \sim t_\nu(\delta_0, \sigma_0),

with uniform priors on :math:`\delta_0` (within the largest absolute difference),
:math:`\sigma_0` (up to 1,000 times the SD of the datasets' means) and each
:math:`\sigma_i` (up to 1,000 times the mean within SD), :math:`\nu - 1 \sim
\mathrm{Gamma}(\alpha, \beta)` with :math:`\alpha \sim U(1, 2)`, :math:`\beta \sim U(0.01,
0.1)` by default (here the bounds of :data:`NORMAL_NU`, which make the t a normal, as the
stored baycomp run with ``nu="normal"``), and :math:`\rho = 1/n` (``runs=1``: the folds of
one cross-validation are correlated). The likelihood is written with its sufficient
statistics: the mean of dataset :math:`i` is :math:`N(\delta_i, \sigma_i^2 (1 + (n -
1)\rho) / n)` and the sum of squares about it is :math:`\sigma_i^2 (1 -
\rho)\chi^2_{n-1}`, which is the Stan program's multivariate normal density.

Two switches move it to bayes_ir's model across collections with two systems:

* ``rho=0``: the topics are independent (bayes_ir), not folds of one cross-validation;
* ``prior="bayes_ir"``: the contrast and its between-dataset SD get the priors that
  bayes_ir's model puts on them with two pooled systems and the rates ``rates``
  (score units): :math:`\delta_0 \sim N(0, 2\chi^2)`, :math:`\chi \sim \mathrm{Exp}`
  (the system SD; two zero-sum effects differ by :math:`\sqrt2` times it; integrated
  out by :func:`_mixture_logp`), and :math:`\sigma_0 = \sqrt2\,\omega`, :math:`\omega
  \sim \mathrm{Exp}` (the system x collection SD), a normal between datasets. The datasets'
  SDs keep baycomp's uniform priors (50 differences each inform them).

The shares are baycomp's ``probs()``: the share of posterior draws in which each region
(left of ``-rope``, within, right of ``rope``) has the largest predictive probability
for a new dataset.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

#: The Gamma prior of nu - 1 that makes baycomp's Student-t a normal (nu ~ 95,000), as
#: ``tests/results/across/baycomp_run.py`` runs it (``nu="normal"``).
NORMAL_NU = (1000.0, 1001.0, 0.01, 0.011)


def differences(pairs: pd.DataFrame) -> np.ndarray:
    """The (datasets x samples) matrix of ``y - x`` of a case of ``baycomp_reference``."""
    wide = {v: pairs.pivot(index="dataset", columns="sample", values=v).to_numpy() for v in "xy"}
    return wide["y"] - wide["x"]


def _mixture_logp(delta0, rate: float, nodes: int = 400):
    r"""Log prior of a contrast of two zero-sum system effects, their SD integrated out.

    :math:`\log \int_0^\infty N(\delta_0 \mid 0, 2\chi^2)\,\mathrm{Exp}(\chi \mid r)
    \,d\chi` by the trapezoid rule in :math:`\log\chi` on ``nodes`` points from 1e-5 to
    50 prior means (sampling :math:`\chi` itself leaves NUTS a funnel: one contrast
    informs it).
    """
    import pytensor.tensor as pt

    u = np.linspace(np.log(1e-5), np.log(50.0 / rate), nodes)
    chi = np.exp(u)
    log_w = np.log(rate) - rate * chi + u + np.log(u[1] - u[0])
    sd = np.sqrt(2.0) * chi
    terms = log_w - np.log(sd) - 0.5 * np.log(2 * np.pi) - 0.5 * (delta0 / sd) ** 2
    return pt.logsumexp(terms)


def region_shares(left: np.ndarray, right: np.ndarray) -> dict[str, float]:
    """baycomp's ``probs()``: the share of draws in which each region is the most probable.

    ``left`` and ``right`` are each draw's predictive P(below -rope) and P(above rope).
    """
    regions = np.stack([left, 1.0 - left - right, right], axis=1)
    share = np.bincount(regions.argmax(axis=1), minlength=3) / len(left)
    return dict(zip(("p_left", "p_rope", "p_right"), map(float, share), strict=True))


def shares(
    diff: np.ndarray,
    rope: float,
    *,
    rho: float,
    prior: str = "baycomp",
    rates: tuple[float, float] = (0.01, 0.01),
    draws: int = 5_000,
    seed: int = 1,
) -> tuple[dict[str, float], dict[str, float]]:
    """P(left / rope / right) of baycomp's model (module docstring), and its diagnostics.

    Sampled by nutpie (4 chains, target acceptance 0.99); the diagnostics are the largest
    R-hat of the contrast and its between SD, and the number of divergences.

    Parameters
    ----------
    diff
        Paired differences, datasets x samples (score units).
    rope
        Half-width of the region of practical equivalence (score units).
    rho
        Correlation of a dataset's differences (baycomp: ``1 / n``).
    prior
        ``"baycomp"`` (uniform priors on the contrast and its between SD) or
        ``"bayes_ir"`` (those of bayes_ir's model with two pooled systems).
    rates
        Exponential rates (score units) of the system SD and the system x collection SD
        (``prior="bayes_ir"``).
    """
    import arviz_stats as azs
    import nutpie
    import pymc as pm

    scale = float(np.mean(np.std(diff, axis=1)))  # baycomp's scaled_data
    x = diff / scale
    q, n = x.shape
    mean = x.mean(axis=1)
    ss = ((x - mean[:, None]) ** 2).sum(axis=1)
    within, among = float(np.mean(np.std(x, axis=1))), float(np.std(mean))
    lo_a, hi_a, lo_b, hi_b = NORMAL_NU
    with pm.Model() as model:
        if prior == "baycomp":
            limit = float(np.abs(x).max())
            delta0 = pm.Uniform("delta0", -limit, limit)
            std0 = pm.Uniform("std0", 0.0, among * 1000.0)
        else:
            delta0 = pm.Flat("delta0")
            pm.Potential("delta0_prior", _mixture_logp(delta0, rates[0] * scale))
            std0 = pm.Exponential("std0", rates[1] * scale / np.sqrt(2.0))
        sigma = pm.Uniform("sigma", 0.0, within * 1000.0, shape=q)
        alpha = pm.Uniform("alpha", lo_a, hi_a)
        beta = pm.Uniform("beta", lo_b, hi_b)
        df = pm.Deterministic("nu", pm.Gamma("nu_minus_one", alpha, beta) + 1.0)
        delta = delta0 + std0 * pm.StudentT("z", nu=df, mu=0.0, sigma=1.0, shape=q)
        sd_mean = sigma * np.sqrt((1.0 + (n - 1) * rho) / n)
        pm.Normal("mean", delta, sd_mean, observed=mean)
        pm.Potential(
            "spread", (-(n - 1) * pm.math.log(sigma) - ss / (2 * sigma**2 * (1 - rho))).sum()
        )
    trace = nutpie.sample(nutpie.compile_pymc_model(model), draws=draws, tune=1000, chains=4,
                          seed=seed, progress_bar=False, target_accept=0.99)  # fmt: skip
    post = trace["posterior"]
    mu, sd, dof = (post[v].values.ravel() for v in ("delta0", "std0", "nu"))
    r = rope / scale
    right = stats.t.sf(r, dof, mu, sd)
    left = stats.t.cdf(-r, dof, mu, sd)
    rhat = azs.rhat(np.stack([post[v].values for v in ("delta0", "std0")], axis=-1),
                    chain_axis=0, draw_axis=1)  # fmt: skip
    checks = {"rhat": float(np.max(rhat)),
              "divergences": float(trace["sample_stats"]["diverging"].values.sum())}  # fmt: skip
    return region_shares(left, right), checks
