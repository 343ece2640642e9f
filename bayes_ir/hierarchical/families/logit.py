r"""What the families with a logit link share: priors, kernel sampling, score-scale means.

The binomial (:mod:`.binomial`) and zero-one-inflated beta (:mod:`.zoib`) families model
:math:`\mathrm{logit}^{-1}(b_0 + a_t + c_s)` (a success probability, a beta mean), with
the crossed effects' priors stated on the logit scale:

=================  ===========================================  =========================
parameter          prior                                        note
=================  ===========================================  =========================
``b0``             Normal(logit(ybar), :data:`INTERCEPT_SD`)    centred on the data's
                                                                mean score (below)
``sigma_topic``    Exponential(rate = :data:`SCALE_RATE`)       prior mean 1: one SD
``sigma_system``   Exponential(rate = :data:`SCALE_RATE`)       multiplies the odds by e
=================  ===========================================  =========================

Unpooled systems (``fit(pooling="none")``): no ``sigma_system``; the system effects are
``ZeroSumNormal(UNPOOLED_SD)`` with :data:`UNPOOLED_SD` :math:`= \pi/\sqrt 6 \approx 1.28`
on the logit scale, so the difference :math:`\delta = c_2 - c_1` of two systems' effects
has variance :math:`2\,\mathrm{UNPOOLED\_SD}^2 = \pi^2/3`, that of the standard logistic
distribution. Given an item's effect, the probability that an item answered right by
exactly one of the two systems was answered right by the second is
:math:`\mathrm{logit}^{-1}(\delta)` (the conditional likelihood of McNemar's test), and
:math:`\delta \sim \mathrm{Logistic}(0, 1)` is the uniform prior on that probability
(Bayes-Laplace); the normal prior with its variance is close to it (its density on that
probability lies between 0.88 and 1.24 on [0.01, 0.99]). The wider 2.5 (rstanarm's default
for a coefficient, Gelman et al. 2008) put a U-shaped prior on that probability (density
0.45 at 1/2, 4.9 at 0.01 and 0.99), and a table with 3 to 7 discordant items split one way
(two systems near accuracy 1 on 50 items) had a 95% interval of the accuracy difference
that excluded 0 when McNemar's exact test was far from significance (p = 0.25 for 3-0). On
the same 200 tables of 50 items at accuracies 0.95 and 0.95, 89.5% of the intervals covered
the true difference 0 under 2.5 and 95.0% under this prior; over the five accuracy pairs at
50 items, 92.3% and 94.2% (``benchmarks/study_binary_coverage.py``). The price is a pull
towards 0 where a handful of discordant items carry the difference: 0.81 of the observed at
0.90/0.95 on 50 items. It stays proper, so a system right (or wrong) on every item keeps a
proper posterior. With two systems and no other runs, pooling learns ``sigma_system`` from
one degree of freedom and pulls a real difference much further towards 0 (to 0.60-0.70 of
the observed at 50 items).

``ybar`` is the family's mean score (successes per trial; the mean interior score for
zoib). The fields of :class:`~bayes_ir.hierarchical.Priors` set by the user are kept.

The intercept is the logit of a system's score on the average topic, not of its mean over
the topics: with topic SD :math:`\tau` it lies further from 0 than the logit of the mean,
by about the factor :math:`\sqrt{1 + 0.346\,\tau^2}` (3.4 logits at accuracy 0.95 and
:math:`\tau = 1`, 4.5 at :math:`\tau = 2`). Its prior is centred on the logit of the data's
mean, so its SD is a distance from what the data already say, not rstanarm's 2.5 about 0
(Gabry and Goodrich 2020). On 0/1 items where the data pin the accuracies but not the trade
between the intercept and :math:`\tau` (few items, accuracies near 1), an SD of 2.5 let the
posterior drift to large intercepts and topic SDs, where a logit difference means a smaller
accuracy difference: the exact coverage of the 95% interval of the difference at 50 items
and accuracies 0.90/0.95 was 93.6% under 2.5 and is 94.6% under 1.5; with item SDs of 0.5,
1 and 2 every cell of the study covers 94.1% or more (``benchmarks/study_binary_coverage.py
--exact``; the table is in ``docs/methods.md``). Where the cells are many, as in a ranking
collection, the intercept's posterior SD is a tenth of the prior's or less (rb04: 0.16) and
the choice does not show.

A system's score-scale mean is its expected score over the topic population
(:mod:`bayes_ir.hierarchical.families.base`), integrated by
:func:`~bayes_ir.hierarchical.families.base.population_mean`, then passed through the
family's :meth:`LogitFamily.score_mean` (zoib adds its exact 0s and 1s).

References
----------
Gelman, A., Jakulin, A., Pittau, M. G., Su, Y.-S. (2008). A weakly informative default
prior distribution for logistic and other regression models. *Annals of Applied
Statistics* 2(4), 1360-1383.

Gabry, J., Goodrich, B. (2020). Prior distributions for rstanarm models.
https://mc-stan.org/rstanarm/articles/priors.html
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import xarray as xr
from scipy import special

from bayes_ir import validate
from bayes_ir.hierarchical.families.base import Family, population_intercept, population_mean
from bayes_ir.hierarchical.families.sampler import sample_pymc

__all__ = [
    "INTERCEPT_SD",
    "SCALE_RATE",
    "UNPOOLED_PRIOR",
    "UNPOOLED_SD",
    "LogitFamily",
    "pymc_crossed_effects",
    "system_sd",
]

#: Prior SD of ``b0`` on the logit scale.
INTERCEPT_SD: float = 1.5
#: Rate of the Exponential priors of ``sigma_topic`` and ``sigma_system`` (logit scale).
SCALE_RATE: float = 1.0
#: Prior SD of each unpooled system effect (logit scale; ``pooling="none"``): pi / sqrt(6),
#: so a difference of two systems' effects has the standard logistic's variance (docstring).
UNPOOLED_SD: float = float(np.pi / np.sqrt(6.0))
#: Stream of the seed that draws the population intercept (:meth:`LogitFamily.finish`).
_INTERCEPT_STREAM: int = 0x1B0
#: The unpooled prior as the summaries print it.
UNPOOLED_PRIOR: str = f"N(0, {UNPOOLED_SD:.2f}^2)"


def system_sd(pooling: str) -> float:
    """Return the fixed prior SD of the system effects: 0 (pooled: learnt) or UNPOOLED_SD."""
    return 0.0 if pooling == "all" else UNPOOLED_SD


class LogitFamily(Family):
    """A family whose predictor is on the logit scale (module docstring)."""

    link: ClassVar[str] = "logit"
    kernel: ClassVar[bool] = True
    #: Default draws per chain: at most this many cell evaluations per chain, within
    #: MIN_DRAWS and MAX_DRAWS, after TUNE warm-up iterations.
    cell_draws: ClassVar[int] = 50_000_000
    min_draws: ClassVar[int] = 1000
    max_draws: ClassVar[int] = 4000
    tune: ClassVar[int] = 500

    def mean_score(self, design: Any) -> float:
        """Return the mean score the intercept's prior is centred on (at its logit)."""
        raise NotImplementedError

    def intercept_mu(self, design: Any) -> float:
        """Return the prior mean of ``b0``: the logit of :meth:`mean_score`.

        The mean is kept half a score (of the table's cells) away from 0 and 1.
        """
        half = 0.5 / max(int(np.isfinite(design.matrix).sum()), 1)
        return float(special.logit(min(max(self.mean_score(design), half), 1.0 - half)))

    def resolve_priors(self, design: Any, priors: Any) -> Any:
        """Logit-scale priors (module docstring); fields the user set are kept."""
        from bayes_ir.hierarchical.priors import Priors, autoscale_priors

        auto = {
            "b0_mu": self.intercept_mu(design),
            "b0_sd": INTERCEPT_SD,
            "sigma_topic_rate": SCALE_RATE,
            "sigma_system_rate": SCALE_RATE,
            # no residual SD on the logit scale: set so that autoscaling needs no variance
            # of the scores (a table of 0/1 outcomes may be all 1s: every item answered)
            "sigma_rate": SCALE_RATE,
        }
        given = Priors() if priors is None else validate.instance("priors", priors, Priors)
        filled = replace(given, **{f: v for f, v in auto.items() if getattr(given, f) is None})
        return autoscale_priors(design.score, filled)

    def default_draws(self, n_cells: int) -> tuple[int, int]:
        """Draws per chain within ``cell_draws`` cell evaluations, and the warm-up."""
        draws = self.cell_draws // max(int(n_cells), 1)
        return int(min(self.max_draws, max(self.min_draws, draws))), self.tune

    def sample(
        self,
        design: Any,
        priors: Any,
        *,
        sampler: str = "nutpie",
        pooling: str = "all",
        **options: Any,
    ) -> tuple[Any, Any, dict]:
        """NUTS on the kernel (nutpie) or on :meth:`build_pymc_model` (``sampler="pymc"``).

        ``pooling`` is ``"all"`` (system effects share ``sigma_system``) or ``"none"``
        (unpooled: :data:`UNPOOLED_SD`). Returns the posterior, the sample statistics and
        an info dict.
        """
        if sampler == "pymc":
            return sample_pymc(self, design, priors, pooling=pooling, **options)
        return self.sample_kernel(design, priors, pooling=pooling, **options)

    def sample_kernel(
        self, design: Any, priors: Any, *, pooling: str = "all", **options: Any
    ) -> tuple[Any, Any, dict]:
        """Sample the family's numba kernel with nutpie."""
        raise NotImplementedError

    @property
    def posterior_names(self) -> tuple[str, ...]:
        """Variables of the posterior (before :meth:`finish` adds ``system_mean``)."""
        raise NotImplementedError

    def kept(self, pooling: str) -> list[str]:
        """Return the posterior variables a fit keeps.

        :attr:`posterior_names`, less ``sigma_system`` when the systems are unpooled (the
        kernel writes its fixed value).
        """
        names = list(self.posterior_names)
        return names if pooling == "all" else [n for n in names if n != "sigma_system"]

    def finish(self, post: xr.Dataset, design: Any, priors: Any, seed: int) -> xr.Dataset:
        """Add ``system_mean``, the score-scale mean over the topic population."""
        hyper = priors.values()
        rng = np.random.default_rng([int(seed), _INTERCEPT_STREAM])
        return post.assign(
            system_mean=self._population_means(post, (hyper.b0_mu, hyper.b0_sd), rng)
        )

    #: Scalar parameters drawn by :meth:`draw_prior` (checked by calibration).
    prior_scalars: ClassVar[tuple[str, ...]] = ("b0", "sigma_topic", "sigma_system")

    def score_mean(self, own: dict[str, np.ndarray], inverse_link_mean: np.ndarray) -> np.ndarray:
        r"""Return a system's mean score from its mean of :math:`\mathrm{logit}^{-1}(\eta)`.

        ``own`` holds the family's other parameters (:meth:`own_draws`), broadcastable
        against the systems. The default is that mean itself (the binomial family's
        success probability).
        """
        return inverse_link_mean

    def own_draws(self, post: xr.Dataset) -> dict[str, np.ndarray]:
        """Draws of the family's own parameters as (chain, draw, system or 1) (default: none)."""
        return {}

    def system_means(self, post: xr.Dataset) -> xr.DataArray:
        """Return each system's expected score over the topic population (:meth:`finish`)."""
        return post["system_mean"].astype(float)

    def _population_means(
        self, post: xr.Dataset, prior: tuple[float, float], rng: np.random.Generator
    ) -> xr.DataArray:
        r"""Score-scale means :math:`E_{a \sim N(0, \tau^2)}[\mathrm{logit}^{-1}(\beta + a + c_s)]`.

        :math:`\beta` the intercept of the topic population, drawn given each draw's
        ``b0`` (:func:`~bayes_ir.hierarchical.families.base.population_intercept`).
        """
        u = post["system_effect"].transpose("chain", "draw", "system").astype(float)
        tau = np.asarray(post["sigma_topic"].transpose("chain", "draw").values, dtype=float)
        b0 = np.asarray(post["b0"].transpose("chain", "draw").values, dtype=float)
        beta = population_intercept(b0, tau, post.sizes["topic"], prior, rng)
        inverse_link_mean = population_mean(beta[..., None] + u.values, tau[..., None])
        return u.copy(data=self.score_mean(self.own_draws(post), inverse_link_mean)).rename(
            "system_mean"
        )

    # ------------------------------------------------------------------ calibration
    def draw_prior(self, priors: Any, n_topics: int, n_systems: int, rng: np.random.Generator):
        r"""Draw one set of parameters from the priors, as :meth:`parameters` lays them out.

        Topic effects independent :math:`N(0, \tau^2)` added to an intercept, reported as
        the zero-sum effects and ``b0`` plus their mean (the levels form of
        :mod:`~bayes_ir.hierarchical.families._kernel`); system effects as projected
        normals (``ZeroSumNormal(s)`` is the centred vector of independent
        :math:`N(0, s^2)`); the family's own by :meth:`draw_own`.
        """
        hyper = priors.values()
        tau = rng.exponential(1.0 / hyper.sigma_topic_rate)
        chi = rng.exponential(1.0 / hyper.sigma_system_rate)
        a = rng.standard_normal(n_topics)
        c = rng.standard_normal(n_systems)
        beta = rng.normal(hyper.b0_mu, hyper.b0_sd)
        out = {
            "b0": np.array([beta + tau * a.mean()]),
            "intercept": np.array([beta]),
            "sigma_topic": np.array([tau]),
            "sigma_system": np.array([chi]),
            "topic": ((a - a.mean()) * tau)[None],
            "system": ((c - c.mean()) * chi)[None],
        }
        return {**out, **self.draw_own(hyper, rng)}

    def draw_own(self, hyper: Any, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Draw the family's own parameters from their priors (default: none)."""
        return {}

    def truth_means(self, params: dict[str, np.ndarray]) -> np.ndarray:
        r"""Score-scale system means of one parameter set of :meth:`draw_prior`, shape (S,).

        Over the topic population: the intercept ``beta`` (not ``b0``, which holds the
        drawn topics' mean effect) and :math:`a \sim N(0, \tau^2)`.
        """
        inverse_link_mean = population_mean(
            params["intercept"][0] + params["system"][0], params["sigma_topic"][0]
        )
        own = {k: v[0] for k, v in params.items() if k in self.prior_scalars[3:]}
        return self.score_mean(own, inverse_link_mean)


def pymc_crossed_effects(design: Any, hyper: Any, centred: tuple[Any, bool], pooling: str = "all"):
    """Declare the intercept, the scales and the effects of the crossed model in PyMC.

    The levels form of :mod:`~bayes_ir.hierarchical.families._kernel`: a free
    ``intercept``, one ``topic_level`` per topic (``N(intercept, sigma_topic)`` for a topic
    centred on the intercept, ``N(0, 1)`` for one that is not: ``centred[0]``, one bool per
    topic), and the reported zero-sum ``b0`` and ``topic_effect`` as deterministics. The
    system effects are centred (``ZeroSumNormal(scale)``) or non-centred (the deterministic
    ``scale * z`` of a standard ``ZeroSumNormal`` named ``system_z``), as ``centred[1]``
    says. Unpooled systems (``pooling="none"``) have no ``sigma_system``: their effects are
    :data:`UNPOOLED_SD` times a standard ``system_z``. Returns the intercept and the
    topic and system effects that enter the predictor (the topic effects independent,
    not zero-sum).
    """
    import pymc as pm
    import pytensor.tensor as pt

    intercept = pm.Normal("intercept", mu=np.float64(hyper.b0_mu), sigma=np.float64(hyper.b0_sd))
    tau = pm.Exponential("sigma_topic", lam=np.float64(hyper.sigma_topic_rate))
    on = np.asarray(centred[0], dtype=bool)
    level = pm.Normal(
        "topic_level", mu=pt.where(on, intercept, 0.0), sigma=pt.where(on, tau, 1.0), dims="topic"
    )
    topic = pt.where(on, level - intercept, tau * level)
    pm.Deterministic("b0", intercept + topic.mean())
    pm.Deterministic("topic_effect", topic - topic.mean(), dims="topic")
    if pooling == "all":
        chi = pm.Exponential("sigma_system", lam=np.float64(hyper.sigma_system_rate))
        system_centred = bool(centred[1])
    else:
        chi, system_centred = np.float64(UNPOOLED_SD), False
    if system_centred:
        system = pm.ZeroSumNormal("system_effect", sigma=chi, dims="system")
    else:
        z = pm.ZeroSumNormal("system_z", sigma=1.0, dims="system")
        system = pm.Deterministic("system_effect", chi * z, dims="system")
    return intercept, topic, system
