r"""Bernoulli and binomial families: 0/1 per item, and k of n (P@10), with a logit link.

.. math::

    k_{ts} \sim \mathrm{Binomial}\big(n, \mathrm{logit}^{-1}(b_0 + a_t + c_s)\big),
    \qquad y_{ts} = k_{ts} / n,

with zero-sum topic and system effects as in the Gaussian model
(:mod:`bayes_ir.hierarchical.model`) on the logit scale; ``bernoulli`` is the case
:math:`n = 1` (LLM benchmarks, GLUE per-example correctness, SWE-bench "resolved":
one row per item, the item as the topic). The score on the table is the proportion
:math:`k/n` (P@10 = 0.3 is 3 of 10), so predictive draws, checks and system means are
proportions too. The number of trials comes from the option (``"binomial(trials=10)"``)
or from the measure's cutoff (``P@10``: 10).

There is no dispersion parameter: the variance of a cell is fixed by its mean,
:math:`p(1-p)/n`, so ``sigma="system"`` does not apply. Scores more spread out than
that (P@10 on topics where systems disagree beyond their main effects) are what the
model check's ``sd`` test flags.

Priors: those of :mod:`~bayes_ir.hierarchical.families.logit` (logit scale), ``ybar``
the successes per trial. Each effect vector is centred or non-centred by the
information the data hold about it (:func:`centred_effects`).

Sampler: NUTS (nutpie) on the numba kernel of
:mod:`~bayes_ir.hierarchical.families.binomial_kernel`, checked against the PyMC model
:func:`build_pymc_model`. Polya-Gamma data augmentation (Polson, Scott and Windle 2013)
would give a Gibbs sampler; with crossed effects its blocks (topics given systems and
systems given topics) are correlated through every cell's weight, and the
``benchmarks/bench_families.py`` comparison chose NUTS (see that script).

References
----------
Polson, N. G., Scott, J. G., Windle, J. (2013). Bayesian inference for logistic models
using Polya-Gamma latent variables. *JASA* 108(504), 1339-1349.

Gelman, A., Jakulin, A., Pittau, M. G., Su, Y.-S. (2008). A weakly informative default
prior distribution for logistic and other regression models. *Annals of Applied
Statistics* 2(4), 1360-1383.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
import xarray as xr
from scipy import special

from bayes_ir import validate
from bayes_ir.errors import ScoreTableError
from bayes_ir.hierarchical.families.base import Cells, flat_draws
from bayes_ir.hierarchical.families.logit import LogitFamily, pymc_crossed_effects, system_sd
from bayes_ir.hierarchical.families.sampler import (
    centred_by_information,
    centred_topics,
    crossed_start,
    kernel_model,
    sample_kernel,
)

__all__ = [
    "Bernoulli",
    "Binomial",
    "BinomialCells",
    "build_pymc_model",
    "centred_effects",
]

#: Tolerance of "k / n is a whole number of successes".
_WHOLE: float = 1e-6


class BinomialCells(Cells):
    """Cells of the binomial family: ``eta`` (n, B, T) and the number of trials.

    The success probability is computed once per block (:attr:`p`); with one trial
    (Bernoulli cells) the CDF and the replicates take their closed forms.
    """

    def __init__(self, eta: np.ndarray, trials: int) -> None:
        self.eta = eta
        self.trials = int(trials)

    @functools.cached_property
    def p(self) -> np.ndarray:
        r"""The success probability :math:`\mathrm{logit}^{-1}(\eta)` of every cell and draw."""
        return special.expit(self.eta)

    @property
    def mean(self) -> np.ndarray:
        """The success probability (the expected proportion of the cell)."""
        return self.p

    @property
    def variance(self) -> np.ndarray:
        """``p (1 - p) / n``: the variance of a proportion of ``n`` trials."""
        return self.p * (1.0 - self.p) / self.trials

    @property
    def slope(self) -> np.ndarray:
        """``p (1 - p)`` (the logit link)."""
        return self.p * (1.0 - self.p)

    def _k(self, y: np.ndarray) -> np.ndarray:
        return np.rint(np.asarray(y, dtype=float) * self.trials)

    def cdf(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""``P(Y < y)``, ``P(Y <= y)``: the regularised incomplete beta (``bdtr``).

        With one trial, :math:`P(Y \le 0) = 1 - p` and :math:`P(Y \le 1) = 1`.
        """
        k = self._k(y)
        if self.trials == 1:
            failure = 1.0 - self.p
            return np.where(k >= 1, failure, 0.0), np.where(k >= 1, 1.0, failure)
        k = np.broadcast_to(k, self.p.shape)

        at = special.bdtr(k, self.trials, self.p)
        below = np.where(k >= 1, special.bdtr(np.maximum(k - 1, 0), self.trials, self.p), 0.0)
        return below, at

    def rvs(self, rng: np.random.Generator) -> np.ndarray:
        """Proportions ``k / n`` drawn from the binomial (one uniform per cell for one trial)."""
        if self.trials == 1:
            return (rng.random(self.p.shape) < self.p).astype(float)
        return rng.binomial(self.trials, self.p) / self.trials

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        r"""Log mass :math:`\log\binom nk + k\eta - n\log(1 + e^\eta)`."""
        k, n = self._k(y), self.trials
        log_binom = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
        return log_binom + k * self.eta - n * np.logaddexp(0.0, self.eta)


def centred_effects(k: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, bool]:
    r"""Which topics are centred on the intercept, and whether the system effects are centred.

    Empirical logits of the topics' and systems' pooled proportions,
    :math:`\ell = \mathrm{logit}((K + 1/2)/(N + 1))`, have sampling variances
    :math:`1/(K + 1/2) + 1/(N - K + 1/2)`; see
    :func:`~bayes_ir.hierarchical.families.sampler.centred_topics` (per topic; a topic
    with no success or no failure is not centred) and
    :func:`~bayes_ir.hierarchical.families.sampler.centred_by_information` (systems).
    """
    obs = np.isfinite(k)
    k0, n0 = np.where(obs, k, 0.0), np.where(obs, n, 0.0)
    rough = []
    for axis in (1, 0):
        big_k, big_n = k0.sum(axis=axis), n0.sum(axis=axis)
        logit = np.log((big_k + 0.5) / (big_n - big_k + 0.5))
        var = 1.0 / (big_k + 0.5) + 1.0 / (big_n - big_k + 0.5)
        rough.append((logit, var, (big_k > 0) & (big_k < big_n)))
    return centred_topics(*rough[0]), centred_by_information(*rough[1][:2])


class Binomial(LogitFamily):
    """k successes of ``trials`` per cell, logit link (module docstring)."""

    name: ClassVar[str] = "binomial"
    outcome_space: ClassVar[str] = "counts"
    no_dispersion: ClassVar[str] = (
        "a binomial cell's variance is fixed by its mean, p(1 - p)/n (no residual SD)"
    )
    option_defaults: ClassVar[dict[str, Any]] = {"trials": None}
    point_masses: ClassVar[tuple[float, ...]] = (0.0, 1.0)

    def _check_options(self) -> None:
        if self.options.get("trials") is not None:
            self.options["trials"] = validate.positive_int("trials", self.options["trials"])

    # ------------------------------------------------------------------ data
    def trials_for(self, measure: str) -> int:
        """Trials per cell: the option, else the measure's cutoff (``P@10``: 10)."""
        if self.options.get("trials") is not None:
            return int(self.options["trials"])
        from bayes_ir.measures import parse_measure

        try:
            cutoff = parse_measure(measure).params.get("cutoff")
        except Exception:  # a plain name such as "accuracy" has no cutoff
            cutoff = None
        if cutoff is None:
            raise ScoreTableError(
                f"the binomial family needs the number of trials per score: measure "
                f"{measure!r} has no cutoff; give likelihood='binomial(trials=N)'"
            )
        return int(cutoff)

    def resolved(self, design: Any) -> Binomial:
        """Return the family with its number of trials set (from the measure when not given)."""
        return type(self)(
            **({} if self.name == "bernoulli" else {"trials": self.trials_for(design.measure)})
        )

    def counts(self, design: Any) -> tuple[np.ndarray, np.ndarray]:
        """Successes and trials per cell (T x S, NaN for missing cells); checks the scores."""
        self.check_scores(design)
        n = self.trials_for(design.measure)
        k = np.rint(design.matrix * n)
        return k, np.where(np.isfinite(k), float(n), np.nan)

    def check_scores(self, design: Any) -> None:
        """Every score is a whole number of successes out of the trials, ``k / n``."""
        n = self.trials_for(design.measure)
        y = design.matrix
        k = y * n
        bad = np.isfinite(y) & ((y < 0) | (y > 1) | (np.abs(k - np.rint(k)) > _WHOLE))
        if bad.any():
            t, s = np.argwhere(bad)[0]
            needs = (
                "0/1 scores"
                if self.name == "bernoulli"
                else (f"scores k/{n} with k a whole number from 0 to {n}")
            )
            instead = (
                "likelihood='binomial(trials=N)' for k-of-N scores, or another likelihood"
                if self.name == "bernoulli"
                else "the right trials=, or another likelihood"
            )
            raise ScoreTableError(
                f"the {self.name} family needs {needs}; topic {design.topics[t]!r}, system "
                f"{design.systems[s]!r} has {float(y[t, s]):g} ({int(bad.sum())} such "
                f"score{'s' if bad.sum() > 1 else ''}): use {instead}",
                source=design.source,
            )

    def data_block(self, design: Any, priors: Any, pooling: str = "all") -> np.ndarray:
        """Return the kernel's data block (:func:`~binomial_kernel.pack`) for ``design``."""
        from bayes_ir.hierarchical.families import binomial_kernel as kernel
        from bayes_ir.hierarchical.families._kernel import pack_header

        k, n = self.counts(design)
        hyper = priors.values()
        header = pack_header(
            design.shape,
            (hyper.b0_mu, hyper.b0_sd),
            (hyper.sigma_topic_rate, hyper.sigma_system_rate),
            *centred_effects(k, n),
            system_sd(pooling),
        )
        return kernel.pack(k, n, header)

    @property
    def posterior_names(self) -> tuple[str, ...]:
        """Variables of the posterior (before :meth:`finish` adds ``system_mean``)."""
        return ("b0", "sigma_topic", "sigma_system", "topic_effect", "system_effect")

    def mean_score(self, design: Any) -> float:
        """Successes per trial over the table."""
        k, n = self.counts(design)
        return float(np.nansum(k) / np.nansum(n))

    def sample_kernel(
        self, design: Any, priors: Any, *, pooling: str = "all", **options: Any
    ) -> tuple[Any, Any, dict]:
        """Sample :mod:`~.binomial_kernel` with nutpie."""
        from bayes_ir.hierarchical.families import binomial_kernel as kernel

        data = self.data_block(design, priors, pooling)
        names, shapes = kernel.expanded_layout(*design.shape)
        start = crossed_start(data, kernel.n_coordinates(data))
        model = kernel_model(kernel, data, design, names, shapes, n_dim=start.size, start=start)
        return sample_kernel(model, self, design, priors, keep=self.kept(pooling), **options)

    def build_pymc_model(self, design: Any, priors: Any, pooling: str = "all"):
        """Return the PyMC model of this family (:func:`build_pymc_model`)."""
        return build_pymc_model(design, self, priors, pooling)

    def design_likelihood(
        self, eta: Any, design: Any, own_priors: dict[str, float], *, data: bool = False
    ) -> None:
        """``y ~ Binomial(n, logit_p = eta)`` for every cell of a crossed design (n resolved)."""
        import pymc as pm

        k = self.design_data(design)["successes"]
        observed = pm.Data("successes", k) if data else k
        pm.Binomial("y", n=self.trials_for(""), logit_p=eta, observed=observed)

    def design_data(self, design: Any) -> dict[str, np.ndarray]:
        """Return the successes of every cell, ``round(y n)``."""
        return {"successes": np.rint(design.y * self.trials_for(""))}

    def design_cells(self, eta: np.ndarray, own: dict[str, np.ndarray]) -> Cells:
        """Return the binomial cells of the linear predictor ``eta``."""
        return BinomialCells(eta, self.trials_for(""))

    def mean_note(self) -> str:
        """How the system means are computed (one sentence)."""
        return (
            "expected score over the topic population, E[logit^-1(beta + topic + effect)], "
            "topic ~ N(0, sigma_topic^2), beta the population's intercept (b0 less the fitted "
            "topics' mean effect)"
        )

    def parameters(self, post: xr.Dataset, keep: np.ndarray | None = None) -> dict[str, Any]:
        """``b0``, ``topic`` and ``system`` (logit scale)."""
        return {
            "b0": flat_draws(post["b0"], keep),
            "sigma_topic": flat_draws(post["sigma_topic"], keep),
            "topic": flat_draws(post["topic_effect"], keep, "topic"),
            "system": flat_draws(post["system_effect"], keep, "system"),
        }

    def cells(self, params: dict[str, Any], systems: np.ndarray) -> Cells:
        """Binomial cells of ``systems`` for the draws ``params`` (a family with its trials)."""
        eta = (params["b0"][:, None] + params["system"][:, systems])[:, :, None]
        eta = eta + params["topic"][:, None, :]
        return BinomialCells(eta, self.trials_for(""))


class Bernoulli(Binomial):
    """One 0/1 outcome per cell (an item answered right or wrong), logit link."""

    name: ClassVar[str] = "bernoulli"
    outcome_space: ClassVar[str] = "binary"
    no_dispersion: ClassVar[str] = (
        "a 0/1 outcome's variance is fixed by its mean, p(1 - p) (no residual SD)"
    )
    option_defaults: ClassVar[dict[str, Any]] = {}
    #: No separate check of exact 0s and 1s: their shares are the mean (checked) and 1 - mean.
    point_masses: ClassVar[tuple[float, ...]] = ()

    def trials_for(self, measure: str) -> int:
        """One trial per cell."""
        return 1


def build_pymc_model(design: Any, family: Binomial, priors: Any, pooling: str = "all"):
    """Build the binomial model in PyMC: the definition the kernel is tested against.

    Parameters
    ----------
    design
        A :class:`~bayes_ir.hierarchical.model.Design`.
    family
        The :class:`Binomial` or :class:`Bernoulli` family (its trials).
    priors
        Resolved priors (:meth:`Binomial.resolve_priors`).
    pooling
        ``"all"`` or ``"none"`` (unpooled systems: no ``sigma_system``;
        :func:`~.logit.pymc_crossed_effects`).

    Returns
    -------
    pymc.Model
        Free ``b0``, ``sigma_topic``, ``sigma_system`` (pooled) and ``topic_effect`` /
        ``system_effect`` (ZeroSumNormal; non-centred ones as the deterministic of a
        standard ``topic_z`` / ``system_z``, as :func:`centred_effects` decides), and
        the observed ``y ~ Binomial(n, logit_p = b0 + topic + system)`` of every
        observed cell.
    """
    import pymc as pm

    k, n = family.counts(design)
    centred = centred_effects(k, n)
    obs = np.isfinite(k)
    t_idx, s_idx = np.nonzero(obs)
    with pm.Model(coords={"topic": list(design.topics), "system": list(design.systems)}) as model:
        b0, topic, system = pymc_crossed_effects(design, priors.values(), centred, pooling)
        eta = b0 + topic[t_idx] + system[s_idx]
        pm.Binomial("y", n=n[obs], logit_p=eta, observed=k[obs])
    return model
