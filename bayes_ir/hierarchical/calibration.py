"""Simulation-based calibration (coverage form) of the hierarchical model's sampler.

Draw parameters from the priors, simulate a complete matrix from the model, fit it
with the same priors and record whether the central interval of every system effect
covers the true effect, and the posterior quantile of the truth. Over many datasets
the coverage must match the interval probability and the quantiles must be uniform
(Talts et al. 2018); a sampler or a conditional formula that is off shows up here.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from concurrent.futures import Executor
from dataclasses import dataclass
from functools import partial

import numpy as np

from bayes_ir.errors import OptionError
from bayes_ir.hierarchical.priors import Priors
from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

__all__ = ["CalibrationResult", "calibration_trial", "simulation_based_calibration"]


def calibration_trial(
    seed: int,
    *,
    priors: Priors,
    n_topics: int,
    n_systems: int,
    ci_prob: float,
    chains: int = 2,
    draws: int = 500,
    tune: int = 300,
    method: str = "exact",
) -> tuple[np.ndarray, np.ndarray]:
    """One calibration dataset: (covered per system, posterior quantile of the truth)."""
    from bayes_ir.hierarchical.fit import fit

    if not priors.is_resolved:
        raise OptionError("calibration needs fully specified priors (every field set)")
    rng = np.random.default_rng(seed)
    b0 = rng.normal(priors.b0_mu, priors.b0_sd)
    sigma = rng.exponential(1 / priors.sigma_rate)
    tau = rng.exponential(1 / priors.sigma_topic_rate)
    chi = rng.exponential(1 / priors.sigma_system_rate)
    a = rng.standard_normal(n_topics)
    a = (a - a.mean()) * tau
    c = rng.standard_normal(n_systems)
    c = (c - c.mean()) * chi
    y = b0 + a[:, None] + c[None, :] + sigma * rng.standard_normal((n_topics, n_systems))
    systems = ["champion", "challenger", *[f"run{i:03d}" for i in range(n_systems - 2)]]
    table = ScoreTable.from_matrix(y, systems=systems, measure="simulated").with_roles(
        champion="champion", challengers=["challenger"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit(
            table, priors=priors, chains=chains, draws=draws, tune=tune, seed=seed, method=method
        )
    # the table orders artifacts by mean score: select by name to line up with the truth
    eff = res.system_effect_draws().sel(system=systems).transpose("chain", "draw", "system")
    x = eff.values.reshape(-1, n_systems)
    lo, hi = np.quantile(x, [(1 - ci_prob) / 2, (1 + ci_prob) / 2], axis=0)
    return (lo <= c) & (c <= hi), (x < c).mean(axis=0)


@dataclass(frozen=True)
class CalibrationResult:
    """Coverage and truth quantiles over the calibration datasets.

    Attributes
    ----------
    covered
        Boolean array (dataset, system).
    quantiles
        Posterior quantile of the true effect, array (dataset, system); uniform on
        (0, 1) when the sampler is calibrated.
    ci_prob
        Interval probability.
    """

    covered: np.ndarray
    quantiles: np.ndarray
    ci_prob: float

    @property
    def coverage(self) -> float:
        """Share of intervals that cover the truth (should be close to ``ci_prob``)."""
        return float(self.covered.mean())

    def uniformity_chi2(self, bins: int = 5) -> float:
        """Pearson chi-square statistic of the truth quantiles against the uniform."""
        counts = np.histogram(self.quantiles.ravel(), bins=bins, range=(0, 1))[0]
        expected = self.quantiles.size / bins
        return float(((counts - expected) ** 2 / expected).sum())

    def summary(self) -> str:
        """Coverage and the uniformity statistic as text."""
        n, k = self.covered.shape
        return (
            f"Simulation-based calibration: {n} datasets x {k} systems; central "
            f"{self.ci_prob:.0%} intervals cover the truth {self.coverage:.1%} of the time; "
            f"uniformity chi-square (4 df) = {self.uniformity_chi2():.2f}"
        )


def simulation_based_calibration(
    priors: Priors,
    *,
    n_datasets: int = 100,
    n_topics: int = 20,
    n_systems: int = 8,
    ci_prob: float = 0.9,
    seed: int = 0,
    method: str = "exact",
    executor: Executor | None = None,
    max_workers: int | None = None,
) -> CalibrationResult:
    """Check the sampler's calibration on datasets simulated from the priors.

    Parameters
    ----------
    priors
        Fully specified :class:`~bayes_ir.hierarchical.Priors` (no autoscaling: the
        data are generated from them).
    n_datasets, n_topics, n_systems
        Number and size of the simulated datasets.
    ci_prob
        Probability of the central intervals.
    seed
        Dataset ``i`` uses seed ``seed + i``.
    method
        Sampler to check (``"exact"`` or ``"nuts"``).
    executor, max_workers
        Passed to :func:`bayes_ir.sweep.sweep`.

    Returns
    -------
    CalibrationResult

    References
    ----------
    Talts, S., Betancourt, M., Simpson, D., Vehtari, A., Gelman, A. (2018). Validating
    Bayesian inference algorithms with simulation-based calibration. arXiv:1804.06788.
    """
    func = partial(
        calibration_trial,
        priors=priors,
        n_topics=n_topics,
        n_systems=n_systems,
        ci_prob=ci_prob,
        method=method,
    )
    items: Iterable[int] = range(seed, seed + n_datasets)
    results = sweep(func, items, executor=executor, max_workers=max_workers)
    return CalibrationResult(
        covered=np.array([r[0] for r in results]),
        quantiles=np.array([r[1] for r in results]),
        ci_prob=ci_prob,
    )
