"""Simulation-based calibration of the hierarchical model's sampler, for every parameter.

Draw the parameters from the priors, simulate a complete matrix from the model, fit it
with the same priors, and record for every parameter (``b0``, ``sigma``,
``sigma_topic``, ``sigma_system``, each topic effect and each system effect) the rank
of the true value among ``n_ranks`` posterior draws, and whether the central interval
covers it. If the sampler draws the posterior, each rank is uniform on
``0, ..., n_ranks`` (Talts et al. 2018); a sampler, a conditional formula or a scale
that is off shows up as a non-uniform rank histogram of that parameter.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from concurrent.futures import Executor
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np
import pandas as pd

from bayes_ir import validate
from bayes_ir.errors import OptionError
from bayes_ir.hierarchical.priors import Priors
from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

__all__ = ["CalibrationResult", "calibration_trial", "simulation_based_calibration"]

#: Scalar parameters checked, before the topic and system effects.
SCALARS = ("b0", "sigma", "sigma_topic", "sigma_system")


def parameter_names(n_topics: int, n_systems: int, likelihood: str = "gaussian") -> list[str]:
    """Names of the checked parameters, in the order of a trial's output.

    The scalars are :data:`SCALARS` for the Gaussian model, ``b0``, ``sigma_topic``,
    ``sigma_system`` and the family's own (``phi``, ``zoi``, ``coi``) for a family of
    :mod:`bayes_ir.hierarchical.families` sampled by a kernel; then every topic and
    system effect, and for those families every system's score-scale mean.
    """
    from bayes_ir.hierarchical.families import get_family

    family = get_family(likelihood)
    scalars = family.prior_scalars if family.kernel else SCALARS
    means = [f"system_mean[{s}]" for s in _systems(n_systems)] if family.kernel else []
    return [
        *scalars,
        *(f"topic_effect[{t}]" for t in _topics(n_topics)),
        *(f"system_effect[{s}]" for s in _systems(n_systems)),
        *means,
    ]


def _topics(n: int) -> list[str]:
    return [f"t{i:03d}" for i in range(n)]


def _systems(n: int) -> list[str]:
    return ["champion", "challenger", *[f"run{i:03d}" for i in range(n - 2)]]


def calibration_trial(
    seed: int,
    *,
    priors: Priors,
    n_topics: int,
    n_systems: int,
    ci_prob: float,
    n_ranks: int = 99,
    chains: int = 2,
    draws: int = 500,
    method: Literal["auto", "exact", "gibbs", "nuts"] = "exact",
    missing: float = 0.0,
    likelihood: str = "gaussian",
) -> tuple[np.ndarray, np.ndarray]:
    """One calibration dataset: rank of the truth and interval coverage per parameter.

    Parameters
    ----------
    seed
        Seed of the simulated truth, data and fit.
    priors
        Fully specified priors (the truth is drawn from them).
    n_topics, n_systems
        Size of the simulated matrix (``n_systems >= 2``).
    ci_prob
        Probability of the central intervals.
    n_ranks
        Number ``L`` of posterior draws the truth is ranked among (evenly spaced over
        the ``chains x draws`` draws, which thins an MCMC sample).
    chains, draws, method
        Passed to :func:`bayes_ir.hierarchical.fit` (NUTS also gets ``tune=draws``).
    missing
        Share of the cells removed at random before fitting (every topic and system
        keeps at least one score), to check the samplers of tables with gaps.
    likelihood
        ``"gaussian"`` (default), or a family of :mod:`bayes_ir.hierarchical.families`
        sampled by a kernel (``"bernoulli"``, ``"binomial(trials=10)"``, ``"zoib"``):
        its parameters are drawn by :meth:`~bayes_ir.hierarchical.families.Family.draw_prior`
        and its scores by its cells' :meth:`~bayes_ir.hierarchical.families.Cells.rvs`
        (NUTS, ``tune=draws``).

    Returns
    -------
    ranks : int array (P,)
        Number of the ``L`` draws below the truth, in ``0..L``, for the parameters of
        :func:`parameter_names`.
    covered : bool array (P,)
        Whether the central ``ci_prob`` interval of all draws covers the truth.
    """
    from bayes_ir.hierarchical.families import get_family
    from bayes_ir.hierarchical.fit import fit

    if not priors.is_resolved:
        raise OptionError("calibration needs fully specified priors (every field set)")
    if chains * draws < n_ranks:
        raise OptionError(f"n_ranks={n_ranks} needs at least as many draws, got {chains * draws}")
    family = get_family(likelihood)
    if family.kernel:
        shape = {"n_topics": n_topics, "n_systems": n_systems, "chains": chains, "draws": draws}
        return _family_trial(family, seed, priors=priors, ci_prob=ci_prob, n_ranks=n_ranks,
                             **shape)  # fmt: skip
    rng = np.random.default_rng(seed)
    hyper = priors.values()
    b0 = rng.normal(hyper.b0_mu, hyper.b0_sd)
    sigma = rng.exponential(1 / hyper.sigma_rate)
    tau = rng.exponential(1 / hyper.sigma_topic_rate)
    chi = rng.exponential(1 / hyper.sigma_system_rate)
    a = rng.standard_normal(n_topics)
    a = (a - a.mean()) * tau  # ZeroSumNormal(tau): N(0, tau^2) projected on sum zero
    c = rng.standard_normal(n_systems)
    c = (c - c.mean()) * chi
    y = b0 + a[:, None] + c[None, :] + sigma * rng.standard_normal((n_topics, n_systems))
    if missing > 0:
        drop = rng.uniform(size=y.shape) < missing
        drop[np.arange(n_topics), np.arange(n_topics) % n_systems] = False
        drop[np.arange(n_systems) % n_topics, np.arange(n_systems)] = False
        y[drop] = np.nan
    topics, systems = _topics(n_topics), _systems(n_systems)
    table = ScoreTable.from_matrix(
        y, systems=systems, topics=topics, measure="simulated", missing="keep"
    )
    table = table.with_roles(champion="champion", challengers=["challenger"])
    options: dict[str, Any] = {"tune": draws} if method == "nuts" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit(  # calibration reads the draws only: no model check per dataset
            table, priors=priors, chains=chains, draws=draws, seed=seed, method=method,
            model_check=False, **options,
        )  # fmt: skip
    post = res.draws
    # the table orders systems by mean score: select by name to line up with the truth
    columns = [post[name].transpose("chain", "draw").values[..., None] for name in SCALARS]
    columns.append(post["topic_effect"].sel(topic=topics).transpose("chain", "draw", ...).values)
    columns.append(post["system_effect"].sel(system=systems).transpose("chain", "draw", ...).values)
    x = np.concatenate(columns, axis=-1).reshape(-1, len(SCALARS) + n_topics + n_systems)
    truth = np.concatenate([[b0, sigma, tau, chi], a, c])
    return _ranks(x, truth, n_ranks, ci_prob)


def _ranks(
    x: np.ndarray, truth: np.ndarray, n_ranks: int, ci_prob: float
) -> tuple[np.ndarray, np.ndarray]:
    """Rank of each truth among ``n_ranks`` evenly spaced draws of ``x`` (draws, P); coverage."""
    keep = np.linspace(0, x.shape[0] - 1, n_ranks).round().astype(int)
    ranks = (x[keep] < truth).sum(axis=0)
    lo, hi = np.quantile(x, [(1 - ci_prob) / 2, (1 + ci_prob) / 2], axis=0)
    return ranks, (lo <= truth) & (truth <= hi)


def _family_trial(
    family: Any,
    seed: int,
    *,
    priors: Priors,
    n_topics: int,
    n_systems: int,
    ci_prob: float,
    n_ranks: int,
    chains: int,
    draws: int,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`calibration_trial` of a kernel family: its own prior draws and simulated scores."""
    from bayes_ir.hierarchical.fit import fit

    rng = np.random.default_rng(seed)
    truth = family.draw_prior(priors, n_topics, n_systems, rng)
    y = family.cells(truth, np.arange(n_systems)).rvs(rng)[0].T  # (topics, systems)
    topics, systems = _topics(n_topics), _systems(n_systems)
    table = ScoreTable.from_matrix(y, systems=systems, topics=topics, measure="simulated")
    table = table.with_roles(champion="champion", challengers=["challenger"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit(table, likelihood=family.spec, priors=priors, chains=chains, draws=draws,
                  tune=draws, seed=seed, model_check=False, pooling="all")  # fmt: skip
    post = res.draws
    scalars = family.prior_scalars
    columns = [post[name].transpose("chain", "draw").values[..., None] for name in scalars]
    columns.append(post["topic_effect"].sel(topic=topics).transpose("chain", "draw", ...).values)
    for name in ("system_effect", "system_mean"):
        columns.append(post[name].sel(system=systems).transpose("chain", "draw", ...).values)
    x = np.concatenate(columns, axis=-1).reshape(chains * draws, -1)
    means = family.truth_means(truth)
    want = np.concatenate(
        [[float(np.ravel(truth[name])[0]) for name in scalars], truth["topic"][0],
         truth["system"][0], means]
    )  # fmt: skip
    return _ranks(x, want, n_ranks, ci_prob)


@dataclass(frozen=True)
class CalibrationResult:
    """Ranks of the truth and interval coverage over the calibration datasets.

    Attributes
    ----------
    parameters
        Names of the checked parameters (``b0``, the three scales, every topic and
        system effect).
    ranks
        Integer array (dataset, parameter): number of the ``n_ranks`` posterior draws
        below the truth; uniform on ``0..n_ranks`` when the sampler is calibrated.
    covered
        Boolean array (dataset, parameter): the central interval covers the truth.
    n_ranks
        Number of posterior draws each truth is ranked among.
    ci_prob
        Interval probability.
    """

    parameters: tuple[str, ...]
    ranks: np.ndarray
    covered: np.ndarray
    n_ranks: int
    ci_prob: float

    @property
    def coverage(self) -> float:
        """Share of all intervals that cover the truth (should be close to ``ci_prob``)."""
        return float(self.covered.mean())

    def to_frame(self, *, bins: int = 10) -> pd.DataFrame:
        r"""One row per parameter: the rank histogram's uniformity test and the coverage.

        Parameters
        ----------
        bins
            Number of equal-width bins of the ranks ``0..n_ranks``; should divide
            ``n_ranks + 1`` so that every bin holds as many rank values.

        Returns
        -------
        pandas.DataFrame
            Columns ``parameter, n_datasets, chi2, df, p_value, coverage``.

        Notes
        -----
        Pearson's chi-square of the bin counts :math:`n_b` against the uniform
        expectation :math:`N/B`, :math:`X^2 = \sum_b (n_b - N/B)^2 / (N/B)` on
        :math:`B - 1` degrees of freedom (``scipy.stats.chisquare``).
        """
        from scipy import stats

        if (self.n_ranks + 1) % bins:
            raise OptionError(f"bins={bins} must divide n_ranks + 1 = {self.n_ranks + 1}")
        width = (self.n_ranks + 1) // bins
        counts = np.stack([np.bincount(r // width, minlength=bins) for r in self.ranks.T])
        test = stats.chisquare(counts, axis=1)
        return pd.DataFrame(
            {
                "parameter": list(self.parameters),
                "n_datasets": self.ranks.shape[0],
                "chi2": test.statistic,
                "df": bins - 1,
                "p_value": test.pvalue,
                "coverage": self.covered.mean(axis=0),
            }
        )

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def failures(self, *, alpha: float = 0.01, bins: int = 10) -> list[str]:
        """Parameters whose rank histogram rejects uniformity at family-wise level ``alpha``.

        Bonferroni: each of the P parameters is tested at ``alpha / P``.
        """
        frame = self.to_frame(bins=bins)
        level = alpha / len(frame)
        return frame.loc[frame["p_value"] < level, "parameter"].tolist()

    def summary(self, *, alpha: float = 0.01, bins: int = 10) -> str:
        """Coverage, the smallest p-values and the verdict as text."""
        frame = self.to_frame(bins=bins).sort_values("p_value")
        n, k = self.ranks.shape
        bad = self.failures(alpha=alpha, bins=bins)
        worst = ", ".join(f"{r.parameter} p={r.p_value:.3g}" for r in frame.head(3).itertuples())
        verdict = (
            f"non-uniform ranks: {', '.join(bad)}"
            if bad
            else f"ranks uniform for all {k} parameters (family-wise alpha {alpha:g})"
        )
        return (
            f"Simulation-based calibration: {n} datasets x {k} parameters, truth ranked "
            f"among {self.n_ranks} draws; central {self.ci_prob:.0%} intervals cover "
            f"{self.coverage:.1%}; smallest p-values: {worst}; {verdict}"
        )

    def __str__(self) -> str:
        return self.summary()


def simulation_based_calibration(
    priors: Priors,
    *,
    n_datasets: int = 100,
    n_topics: int = 20,
    n_systems: int = 8,
    ci_prob: float = 0.9,
    n_ranks: int = 99,
    chains: int = 2,
    draws: int = 500,
    seed: int = 0,
    method: Literal["auto", "exact", "gibbs", "nuts"] = "exact",
    missing: float = 0.0,
    likelihood: str = "gaussian",
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
    n_ranks
        Posterior draws each truth is ranked among (``n_ranks + 1`` rank values).
    chains, draws
        Posterior draws per fit.
    seed
        Dataset ``i`` uses seed ``seed + i``.
    method
        Sampler to check (``"exact"``, ``"gibbs"`` or ``"nuts"``).
    missing
        Share of each dataset's cells removed at random (see :func:`calibration_trial`).
    likelihood
        The model to check: ``"gaussian"`` or a kernel family (see
        :func:`calibration_trial`), whose score-scale system means are checked too.
    executor, max_workers
        Passed to :func:`bayes_ir.sweep.sweep`.

    Returns
    -------
    CalibrationResult
        :meth:`CalibrationResult.to_frame` tests each parameter's ranks for uniformity.

    References
    ----------
    Talts, S., Betancourt, M., Simpson, D., Vehtari, A., Gelman, A. (2018). Validating
    Bayesian inference algorithms with simulation-based calibration. arXiv:1804.06788.
    """
    if n_systems < 2:
        raise OptionError(f"n_systems must be at least 2 (champion, challenger), got {n_systems}")
    func = partial(
        calibration_trial,
        priors=priors,
        n_topics=n_topics,
        n_systems=n_systems,
        ci_prob=ci_prob,
        n_ranks=n_ranks,
        chains=chains,
        draws=draws,
        method=method,
        missing=validate.probability("missing", missing, open=False),
        likelihood=likelihood,
    )
    items: Iterable[int] = range(seed, seed + n_datasets)
    results = sweep(func, items, executor=executor, max_workers=max_workers,
                    label="simulation-based calibration")  # fmt: skip
    return CalibrationResult(
        parameters=tuple(parameter_names(n_topics, n_systems, likelihood)),
        ranks=np.array([r[0] for r in results]),
        covered=np.array([r[1] for r in results]),
        n_ranks=n_ranks,
        ci_prob=ci_prob,
    )
