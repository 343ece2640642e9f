r"""How wrong are the estimators? A simulation study against a known true ranking.

Two ways to get topic sets whose true ranking is known:

- ``method="simulate"``: Urbano's stochastic simulator (:class:`TopicSetSimulator`)
  fitted to an existing collection draws new topic sets from a population whose true
  system means are known (the paper's set-up);
- ``method="subsample"``: topic sets drawn without replacement from a large collection
  (e.g. Robust04, 249 topics), whose full-set means act as the truth.

For every collection, topic set size and trial, :func:`simulation_study` compares the
estimate of each estimator with the actual correlation between the topic set's
ranking and the truth. Trials run through :func:`bayes_ir.sweep.sweep`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from bayes_ir import defaults, validate
from bayes_ir.defaults import ARTIFACT_DROP_BOTTOM
from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.reliability.correlation import _tau_ap_batch, _tau_batch
from bayes_ir.reliability.estimators import _dpi_bandwidth, sort_by_mean
from bayes_ir.reliability.expected import _estimate, table_matrix
from bayes_ir.reliability.spec import ESTIMATORS, ReliabilitySpec, parse_reliability
from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

__all__ = [
    "SimulationStudy",
    "TopicSetSimulator",
    "fit_simulator",
    "simulation_study",
]

#: Topic set sizes of the paper.
PAPER_SIZES: tuple[int, ...] = (10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
#: Columns of :attr:`SimulationStudy.records`.
RECORD_COLUMNS = ("collection", "n_topics", "trial", "estimator", "coefficient", "actual",
                  "estimate")  # fmt: skip
#: Columns of :meth:`SimulationStudy.to_frame`.
FRAME_COLUMNS = ("collection", "coefficient", "estimator", "n_topics", "error", "bias", "rmse",
                 "n_trials")  # fmt: skip

_GRID = 512  # evaluation points of each kernel CDF


def _logit(p: np.ndarray, a: float) -> np.ndarray:
    return np.log((p + a) / (1.0 - p + a))


def _invlogit(x: np.ndarray, a: float) -> np.ndarray:
    e = np.exp(np.clip(x, -700, 700))
    return np.clip((e + a * e - a) / (1.0 + e), 0.0, 1.0)


def _drop_bottom(x: np.ndarray, systems: Sequence[str], bottom: float):
    means = x.mean(axis=0)
    keep = means >= np.quantile(means, bottom) if bottom > 0 else np.ones(len(means), bool)
    return x[:, keep], [s for s, k in zip(systems, keep, strict=True) if k]


@dataclass(frozen=True)
class TopicSetSimulator:
    r"""Stochastic simulator of new topics for the systems of an existing collection.

    Build it with :func:`fit_simulator`; draw topic sets with :meth:`sample`.

    Attributes
    ----------
    systems
        Systems simulated (the collection's, minus the dropped bottom).
    truth
        True system means used by the study: those of the original collection (as in
        the paper) or, with ``simulation_study(truth="population")``,
        :meth:`population_means`.
    grand_mean, system_effects
        :math:`\mu` and :math:`\nu_s` on the logit scale.
    centred
        ``(n, m + 1)`` residuals of every system and the topic effects (last column),
        centred: the data of the Gaussian copula.
    scale
        Their standard deviations.
    grids, cdfs
        ``(m + 1, G)`` evaluation points and kernel CDF values of each margin.
    smooth
        The :math:`a` of the logit transform.
    """

    systems: tuple[str, ...]
    truth: np.ndarray
    grand_mean: float
    system_effects: np.ndarray
    centred: np.ndarray
    scale: np.ndarray
    grids: np.ndarray
    cdfs: np.ndarray
    smooth: float = 0.05

    def sample_matrix(self, n_topics: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n_topics`` new topics: a ``(n_topics, m)`` score matrix in [0, 1]."""
        n = self.centred.shape[0]
        gauss = rng.standard_normal((n_topics, n)) @ self.centred / math.sqrt(n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = special.ndtr(gauss / self.scale)
        z = np.empty_like(u)
        for k in range(u.shape[1]):
            if self.scale[k] > 0:
                z[:, k] = np.interp(u[:, k], self.cdfs[k], self.grids[k])
            else:
                z[:, k] = self.centred[0, k]
        eta = self.grand_mean + self.system_effects[None, :] + z[:, -1:] + z[:, :-1]
        return _invlogit(eta, self.smooth)

    def population_means(self, n_topics: int = 20_000, *, seed: int | None = None) -> np.ndarray:
        """Monte Carlo means of the simulated population: the exact truth of the simulator.

        The back-transform from the logit scale and the kernel-smoothed margins shift
        the population means a little from the original collection's (on TREC-6/7/8 AP,
        Kendall tau of 0.96-0.98 between the two rankings).
        """
        rng = np.random.default_rng(validate.seed(seed))
        total = np.zeros(len(self.systems))
        done = 0
        while done < n_topics:
            k = min(5000, n_topics - done)
            total += self.sample_matrix(k, rng).sum(axis=0)
            done += k
        return total / n_topics

    def sample(self, n_topics: int, *, seed: int | None = None) -> ScoreTable:
        """Draw a new topic set of ``n_topics`` topics as a :class:`ScoreTable`."""
        n_topics = validate.positive_int("n_topics", n_topics)
        y = self.sample_matrix(n_topics, np.random.default_rng(validate.seed(seed)))
        return ScoreTable.from_matrix(
            y,
            systems=self.systems,
            topics=[f"sim{k + 1}" for k in range(n_topics)],
            collection="simulated",
            source="<TopicSetSimulator>",
        )


def _kernel_cdf(values: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    grid = np.linspace(lo, hi, _GRID)
    h = _dpi_bandwidth(values[:, None])[0]
    if not (np.isfinite(h) and h > 0):
        h = 1.06 * values.std(ddof=1) * len(values) ** -0.2 or 1e-6
    cdf = special.ndtr((grid[:, None] - values[None, :]) / h).mean(axis=1)
    cdf[0], cdf[-1] = 0.0, 1.0
    return grid, np.maximum.accumulate(cdf)


def fit_simulator(
    table: ScoreTable,
    *,
    collection: str | None = None,
    measure: str | None = None,
    drop_bottom: float = ARTIFACT_DROP_BOTTOM,
    smooth: float = 0.05,
) -> TopicSetSimulator:
    r"""Fit Urbano's simulator of new topics to a collection's topic x system scores.

    Parameters
    ----------
    table
        Scores in [0, 1] (AP, nDCG, ...), complete.
    collection, measure
        Block of the table, when it holds several.
    drop_bottom
        Fraction of systems with the lowest means to drop first (the paper: 0.25).
    smooth
        :math:`a` of the logit transform.

    Returns
    -------
    TopicSetSimulator

    Notes
    -----
    Scores are mapped to :math:`l = \log((x + a)/(1 - x + a))` and decomposed as
    :math:`l_{ts} = \mu + \nu_s + \nu_t + e_{ts}` (grand mean, system effects, topic
    effects, residuals). The margins of the topic effects and of each system's
    residuals are kernel CDFs (Gaussian kernel, plug-in bandwidth) and their dependence
    is a Gaussian copula with the sample covariance :math:`\Sigma` of the columns
    :math:`(e_{\cdot 1}, \ldots, e_{\cdot m}, \nu_\cdot)`. A new topic is a draw
    :math:`r \sim N(0, \Sigma)`, mapped through :math:`\Phi(r_k/\sigma_k)` and the
    inverse kernel CDFs, assembled with the same :math:`\mu, \nu_s` and transformed
    back. Differences from the original R code: :math:`r` is drawn as
    :math:`G C / \sqrt{n - 1}` (:math:`G` standard normal, :math:`C` the centred
    columns), exact for the rank-deficient :math:`\Sigma` without the nearest-PD step;
    the CDF bandwidth is the density plug-in (``ks::kcde`` uses a CDF-specific one);
    the inverse CDF is interpolated on a 512-point grid.

    References
    ----------
    J. Urbano and M. Marrero, "Toward Estimating the Rank Correlation between the Test
    Collection Results and the True System Performance", SIGIR 2016, 1033-1036.
    J. Urbano, M. Marrero and D. Martín, "On the measurement of test collection
    reliability", SIGIR 2013, 393-402.
    """
    x, systems, _, _ = table_matrix(table, collection=collection, measure=measure)
    x, systems = _drop_bottom(x, systems, drop_bottom)
    validate.require_topics(
        x.shape[0], defaults.MIN_TOPICS_SIMULATOR, method="the simulator", where=table.source
    )
    if x.shape[1] < 2:
        raise InsufficientDataError(
            f"the simulator needs at least 2 systems; {table.source} has {x.shape[1]} "
            "after dropping the bottom artifacts"
        )
    logit = _logit(x, smooth)
    mu = float(logit.mean())
    nu_s = logit.mean(axis=0) - mu
    nu_t = logit.mean(axis=1) - mu
    resid = logit - mu - nu_s[None, :] - nu_t[:, None]
    cols = np.column_stack([resid, nu_t])
    centred = cols - cols.mean(axis=0)
    lo, hi = -2 * float(_logit(np.array(1.0), smooth)), 2 * float(_logit(np.array(1.0), smooth))
    grids, cdfs = [], []
    for k in range(cols.shape[1]):
        v = cols[:, k]
        a, b = (lo, hi) if k == cols.shape[1] - 1 else (min(lo, v.min()), max(hi, v.max()))
        g, c = _kernel_cdf(v, a, b)
        grids.append(g)
        cdfs.append(c)
    return TopicSetSimulator(
        systems=tuple(systems),
        truth=x.mean(axis=0),
        grand_mean=mu,
        system_effects=nu_s,
        centred=centred,
        scale=centred.std(axis=0, ddof=1),
        grids=np.array(grids),
        cdfs=np.array(cdfs),
        smooth=smooth,
    )


@dataclass(frozen=True)
class _Subsampler:
    """Topic sets drawn without replacement from a large collection."""

    systems: tuple[str, ...]
    population: np.ndarray

    @property
    def truth(self) -> np.ndarray:
        return self.population.mean(axis=0)

    def sample_matrix(self, n_topics: int, rng: np.random.Generator) -> np.ndarray:
        idx = rng.choice(self.population.shape[0], size=n_topics, replace=False)
        return self.population[idx]


def _run_trials(
    item: tuple[int, int, int],
    *,
    sources: Sequence[Any],
    names: Sequence[str],
    sizes: Sequence[int],
    specs: Sequence[ReliabilitySpec],
    seed: int,
) -> list[tuple]:
    c, start, stop = item
    source = sources[c]
    truth = source.truth
    rows = []
    for trial in range(start, stop):
        for n_topics in sizes:
            rng = np.random.default_rng([seed, c, trial, n_topics])
            y = source.sample_matrix(n_topics, rng)
            means = y.mean(axis=0)
            actual_tau = float(_tau_batch(truth, means)[0])
            actual_tap = float(_tau_ap_batch(truth, means)[0])
            ys = y[:, sort_by_mean(y)]
            for spec in specs:
                est = _estimate(ys, spec, rng)
                rows.append((names[c], n_topics, trial, spec.label, "tau", actual_tau, est.tau))
                rows.append(
                    (names[c], n_topics, trial, spec.label, "tau_ap", actual_tap, est.tau_ap)
                )
    return rows


@dataclass(frozen=True)
class SimulationStudy:
    """Estimates against actual correlations, for many topic sets of several sizes.

    Attributes
    ----------
    records
        One row per collection, size, trial, estimator and coefficient
        (:data:`RECORD_COLUMNS`).
    method
        ``"simulate"`` or ``"subsample"``.
    truth
        What the true means were: ``"population"``, ``"original"`` or ``"full set"``.
    sizes, trials, estimators, seed
        The design.
    measure
        The measure(s) of the tables, comma-separated.
    """

    records: pd.DataFrame
    method: str
    truth: str
    sizes: tuple[int, ...]
    trials: int
    estimators: tuple[str, ...]
    seed: int
    notes: tuple[str, ...] = field(default=())
    measure: str = ""

    def to_frame(self, *, pooled: bool = False) -> pd.DataFrame:
        """Error (mean absolute), bias (mean signed) and RMSE per cell (:data:`FRAME_COLUMNS`).

        With ``pooled=True`` the collections are pooled (``collection`` is ``"all"``).
        """
        df = self.records.assign(diff=self.records["estimate"] - self.records["actual"])
        if pooled:
            df = df.assign(collection="all")
        g = df.groupby(["collection", "coefficient", "estimator", "n_topics"], sort=False)["diff"]
        out = g.agg(
            error=lambda d: float(np.mean(np.abs(d))),
            bias="mean",
            rmse=lambda d: float(np.sqrt(np.mean(d * d))),
            n_trials="count",
        ).reset_index()
        return out[list(FRAME_COLUMNS)]

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def error_table(self, *, coefficient: str = "tau", value: str = "error") -> pd.DataFrame:
        """Pooled ``value`` (``error``, ``bias`` or ``rmse``): estimators x topic set sizes."""
        frame = self.to_frame(pooled=True)
        frame = frame[frame["coefficient"] == coefficient]
        table = frame.pivot(index="estimator", columns="n_topics", values=value)
        return table.reindex([e for e in self.estimators if e in table.index])

    def summary(self) -> str:
        """Printable error and bias tables, pooled over collections."""
        colls = ", ".join(self.records["collection"].unique())
        lines = [
            f"Simulation study ({self.method}, truth: {self.truth} means): collections {colls}; "
            f"{self.trials} trials per "
            f"collection and topic set size; estimators {', '.join(self.estimators)}",
        ]
        for coef in ("tau", "tau_ap"):
            for value, gloss in (("error", "mean |estimate - actual|"),
                                 ("bias", "mean (estimate - actual)")):  # fmt: skip
                lines.append(f"\n{value} of E[{coef}] ({gloss}), by topic set size:")
                lines.append(self.error_table(coefficient=coef, value=value).to_string(
                    float_format=lambda v: f"{v:.4f}"))  # fmt: skip
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def plot(self, **kwargs: Any) -> Any:
        """Error and bias curves (see :func:`bayes_ir.plots.reliability.plot_study`)."""
        from bayes_ir.plots.reliability import plot_study

        return plot_study(self, **kwargs)


def simulation_study(
    tables: ScoreTable | Mapping[str, ScoreTable],
    *,
    method: str = "simulate",
    sizes: Iterable[int] = PAPER_SIZES,
    trials: int = 100,
    estimators: Iterable[str | ReliabilitySpec] = ESTIMATORS,
    drop_bottom: float = ARTIFACT_DROP_BOTTOM,
    truth: str = "population",
    trials_per_task: int = 5,
    seed: int | None = None,
    executor: Executor | None = None,
) -> SimulationStudy:
    r"""Measure the error and bias of the estimators of E[tau] and E[tau_AP].

    Parameters
    ----------
    tables
        One score table, or several keyed by collection name (e.g. adhoc6/7/8).
    method
        ``"simulate"``: new topic sets from :func:`fit_simulator` (truth: see
        ``truth``); ``"subsample"``: topic sets drawn without replacement from
        the table (truth: the full-set means; every size must be below the table's
        number of topics).
    sizes
        Topic set sizes.
    trials
        Topic sets per collection and size.
    estimators
        Estimator specs (default: all six of the paper).
    drop_bottom
        Fraction of the weakest systems dropped first (the paper: 0.25).
    truth
        With ``method="simulate"``: ``"population"`` (default) takes the true means
        of the simulated population (:meth:`TopicSetSimulator.population_means`, 20,000
        topics); ``"original"`` takes the original collection's means, as the paper's
        code does, although the simulated population ranks the systems slightly
        differently (which caps the actual correlations below 1).
    trials_per_task
        Trials per work item handed to the executor.
    seed
        Base seed: trial ``t`` of collection ``c`` at size ``n`` uses
        ``default_rng([seed, c, t, n])``, whatever the executor.
    executor
        Passed to :func:`bayes_ir.sweep.sweep` (default: local processes).

    Returns
    -------
    SimulationStudy

    Notes
    -----
    For each topic set, *actual* correlations are :math:`\tau(\mu, \hat\mu)` and
    :math:`\tau_{AP}(\mu, \hat\mu)` between the true means :math:`\mu` and the topic
    set's means :math:`\hat\mu` (truth first; ties never discordant), and each estimator
    gives its :math:`\hat E[\tau]`, :math:`\hat E[\tau_{AP}]`. Error is the mean of
    :math:`|\hat E - \text{actual}|` over trials and bias the mean of
    :math:`\hat E - \text{actual}`, as in the paper's figures. With subsampling the
    topic sets overlap the set that defines the truth, so the actual correlations are
    higher than for an infinite population and the estimators look pessimistic.

    References
    ----------
    J. Urbano and M. Marrero, "Toward Estimating the Rank Correlation between the Test
    Collection Results and the True System Performance", SIGIR 2016, 1033-1036.
    """
    if isinstance(tables, ScoreTable):
        tables = {tables.collections[0] if len(tables.collections) == 1 else "table": tables}
    if not tables:
        raise InsufficientDataError("simulation_study needs at least one table")
    validate.choice("method", method, ("simulate", "subsample"))
    validate.choice("truth", truth, ("population", "original"))
    trials = validate.positive_int("trials", trials)
    seed = validate.seed(seed)
    sizes = tuple(validate.integer("sizes", s, minimum=2) for s in sizes)
    specs = tuple(parse_reliability(e) for e in estimators)
    for spec in specs:
        if spec.kind != "estimator":
            raise OptionError(f"{spec!r} is a correlation coefficient, not an estimator")
    if not sizes:
        raise InsufficientDataError("simulation_study needs at least one topic set size")
    for spec in specs:
        if spec.name in ("SHw", "SHwo"):
            validate.require_topics(
                min(sizes),
                defaults.MIN_TOPICS_SPLIT_HALF,
                method=spec.name,
                where="the smallest topic set size",
            )
    names = list(tables)
    sources: list[Any] = []
    for name in names:
        if method == "simulate":
            sim = fit_simulator(tables[name], drop_bottom=drop_bottom)
            if truth == "population":
                sim = replace(sim, truth=sim.population_means(seed=seed))
            sources.append(sim)
        else:
            x, systems, _, _ = table_matrix(tables[name], collection=None, measure=None)
            x, systems = _drop_bottom(x, systems, drop_bottom)
            if max(sizes) >= x.shape[0]:
                raise InsufficientDataError(
                    f"subsampling {max(sizes)} topics needs a larger collection than "
                    f"{name!r} ({x.shape[0]} topics)"
                )
            sources.append(_Subsampler(tuple(systems), x))
    step = max(1, int(trials_per_task))
    items = [
        (c, t, min(t + step, trials)) for c in range(len(names)) for t in range(0, trials, step)
    ]
    func = functools.partial(
        _run_trials, sources=sources, names=names, sizes=sizes, specs=specs, seed=seed
    )
    rows = [
        row
        for chunk in sweep(func, items, executor=executor, label="reliability simulation")
        for row in chunk
    ]
    records = pd.DataFrame(rows, columns=list(RECORD_COLUMNS))
    return SimulationStudy(
        records=records,
        method=method,
        truth=truth if method == "simulate" else "full set",
        sizes=sizes,
        trials=trials,
        estimators=tuple(s.label for s in specs),
        seed=seed,
        measure=", ".join(dict.fromkeys(str(m) for n in names for m in tables[n].measures)),
    )
