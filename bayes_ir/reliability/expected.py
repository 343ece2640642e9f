r"""Expected rank correlation between the observed ranking and the true ranking.

:func:`expected_correlation` is the entry point: a score table in, a
:class:`ReliabilityResult` out, with :math:`E[\tau]`, :math:`E[\tau_{AP}]` and the
matrix of swap probabilities behind them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.defaults import RELIABILITY_ESTIMATOR
from bayes_ir.errors import DataWarning, InsufficientDataError, OptionError
from bayes_ir.reliability.estimators import (
    check_matrix,
    expected_from_p,
    sort_by_mean,
    swap_probabilities,
)
from bayes_ir.reliability.spec import ReliabilitySpec, parse_reliability
from bayes_ir.reliability.split_half import split_half_fit
from bayes_ir.table import ScoreTable

__all__ = ["ReliabilityResult", "expected_correlation"]

#: Columns of :meth:`ReliabilityResult.to_frame`.
FRAME_COLUMNS = ("collection", "measure", "estimator", "coefficient", "estimate", "n_topics",
                 "n_systems")  # fmt: skip
#: Columns of :meth:`ReliabilityResult.pairs_frame`.
PAIR_COLUMNS = ("system_i", "system_j", "rank_i", "rank_j", "mean_diff", "p_swap", "undefined")


@dataclass(frozen=True)
class _Estimate:
    tau: float
    tau_ap: float
    p: np.ndarray | None  # pairs triu_indices(m, 1) of the sorted columns; NaN undefined
    kd_fallback: int = 0


#: Below this many topics, expected_correlation warns (Urbano and Marrero 2016, Fig. 3).
FEW_TOPICS = 10


def _estimate(x_sorted: np.ndarray, spec: ReliabilitySpec, rng: np.random.Generator) -> _Estimate:
    """E[tau], E[tau_AP] of a complete matrix whose columns are sorted by mean, best first."""
    if spec.kind != "estimator":
        raise OptionError(f"{spec!r} is a correlation coefficient, not an estimator of E[tau]")
    if spec.name in ("SHw", "SHwo"):
        fit = split_half_fit(
            x_sorted,
            replacement=spec.name == "SHw",
            points=spec.get("points"),
            trials=spec.get("trials"),
            max_obs=spec.get("max_obs"),
            seed=rng,
        )
        return _Estimate(fit.tau, fit.tau_ap, None)
    samples = spec.get("T") if spec.name in ("RES", "KD") else 0
    p, info = swap_probabilities(x_sorted, estimator=spec.name, samples=samples, seed=rng)
    e_tau, e_tap = expected_from_p(p, x_sorted.shape[1])
    return _Estimate(e_tau, e_tap, p, info["kd_fallback"])


def table_matrix(
    table: ScoreTable, *, collection: str | None, measure: str | None
) -> tuple[np.ndarray, list[str], str, str]:
    """Complete topic x system matrix of one block, its systems, collection and measure."""
    da = table.matrix(collection=collection, measure=measure)
    coll, meas = da.attrs["collection"], da.attrs["measure"]
    where = f"collection {coll!r}, measure {meas!r} in {table.source}"
    x = check_matrix(da.to_numpy(), where=where)
    return x, [str(s) for s in da["system"].to_numpy()], coll, meas


@dataclass(frozen=True)
class ReliabilityResult:
    r"""Expected correlation of an observed ranking with the true ranking of the systems.

    Attributes
    ----------
    estimator
        The estimator spec (``"MSQD"``, ``"KD(T=500)"``, ...).
    tau, tau_ap
        :math:`E[\tau]` and :math:`E[\tau_{AP}]`.
    systems
        Systems sorted by observed mean, best first (the observed ranking).
    means
        Their observed means.
    p_swap
        ``(m, m)`` matrix: :math:`p_{ij}` above the diagonal for the systems in
        :attr:`systems` order (undefined pairs set to 0), NaN elsewhere; ``None`` for
        the split-half estimators, which do not work pair by pair.
    undefined
        Pairs ``(system_i, system_j)`` with identical scores on every topic, whose
        :math:`p_{ij}` is undefined and counted as 0.
    n_topics, collection, measure, seed
        What was estimated from.
    notes
        Messages (undefined pairs, KD fall-backs).
    """

    estimator: str
    tau: float
    tau_ap: float
    systems: tuple[str, ...]
    means: np.ndarray
    p_swap: np.ndarray | None
    undefined: tuple[tuple[str, str], ...]
    n_topics: int
    collection: str
    measure: str
    seed: int | None
    notes: tuple[str, ...] = field(default=())

    @property
    def n_systems(self) -> int:
        """Number of systems ranked."""
        return len(self.systems)

    def to_frame(self) -> pd.DataFrame:
        """One row per coefficient, columns :data:`FRAME_COLUMNS`."""
        rows = [
            (self.collection, self.measure, self.estimator, name, value, self.n_topics,
             self.n_systems)
            for name, value in (("tau", self.tau), ("tau_ap", self.tau_ap))
        ]  # fmt: skip
        return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def pairs_frame(self) -> pd.DataFrame:
        """One row per pair of systems (i above j in the observed ranking), :data:`PAIR_COLUMNS`."""
        if self.p_swap is None:
            raise OptionError(f"{self.estimator} does not estimate pairwise swap probabilities")
        i, j = np.triu_indices(self.n_systems, 1)
        undefined = set(self.undefined)
        names = np.asarray(self.systems, dtype=object)
        return pd.DataFrame(
            {
                "system_i": names[i],
                "system_j": names[j],
                "rank_i": i + 1,
                "rank_j": j + 1,
                "mean_diff": self.means[i] - self.means[j],
                "p_swap": self.p_swap[i, j],
                "undefined": [(a, b) in undefined for a, b in zip(names[i], names[j], strict=True)],
            },
            columns=list(PAIR_COLUMNS),
        )

    def summary(self) -> str:
        """Printable report: header, both expected correlations, notes."""
        lines = [
            f"Expected rank correlation with the true ranking (estimator: {self.estimator})",
            f"collection {self.collection!r}, measure {self.measure!r}: "
            f"{self.n_topics} topics x {self.n_systems} systems",
            f"E[tau]    (expected Kendall tau with the true ranking):  {self.tau:.4f}",
            f"E[tau_AP] (the same, swaps near the top weigh more):    {self.tau_ap:.4f}",
        ]
        if self.p_swap is not None:
            i, j = np.triu_indices(self.n_systems, 1)
            p = self.p_swap[i, j]
            lines.append(
                f"pairs likely swapped (p_ij > 0.25): {int(np.sum(p > 0.25))} of {len(p)}; "
                f"expected number of swapped pairs: {p.sum():.1f}"
            )
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.to_frame().to_html(index=False)

    def plot(self, **kwargs: Any) -> Any:
        """Draw the swap probabilities (:func:`bayes_ir.plots.reliability.plot_swaps`)."""
        from bayes_ir.plots.reliability import plot_swaps

        return plot_swaps(self, **kwargs)


def expected_correlation(
    table: ScoreTable,
    *,
    estimator: str | ReliabilitySpec | None = None,
    collection: str | None = None,
    measure: str | None = None,
    seed: int | None = None,
) -> ReliabilityResult:
    r"""Estimate how close the observed ranking of the systems is to the true ranking.

    Parameters
    ----------
    table
        Scores of the systems (complete: every system has every topic).
    estimator
        Spec string: ``"MSQD"`` (default, the best in the paper), ``"ML"``,
        ``"RES(T=1000)"``, ``"KD(T=1000)"``, ``"SHw"`` or ``"SHwo"`` (also ``"SH(w)"``,
        ``"SH(w/o)"``); see :func:`bayes_ir.reliability.parse_reliability`.
    collection, measure
        Block of the table to use, when it holds several.
    seed
        Seed of the stochastic estimators (RES, KD, SH); default
        :data:`bayes_ir.defaults.SEED`.

    Returns
    -------
    ReliabilityResult

    Raises
    ------
    InsufficientDataError
        Fewer than 2 systems, fewer than 2 topics (4 for split-half), or missing cells.

    Notes
    -----
    Sort the :math:`m` systems by observed mean (ties keep the table's order) and let
    :math:`p_{ij}` be the probability that the true order of the pair :math:`i < j`
    is the reverse of the observed one (see
    :func:`bayes_ir.reliability.estimators.swap_probabilities`). Then

    .. math::

        E[\tau] = 1 - \frac{4}{m(m-1)} \sum_{i<j} p_{ij},\qquad
        E[\tau_{AP}] = 1 - \frac{2}{m-1} \sum_{j=2}^{m} \frac{1}{j-1}\sum_{i<j} p_{ij}.

    A pair of identical columns has an undefined :math:`p_{ij}` (0/0); it counts as 0
    and the result says so. The truth is the ranking by the systems' expected scores
    over the population of topics; ``tau_ap`` takes the true ranking as reference.

    References
    ----------
    J. Urbano and M. Marrero, "Toward Estimating the Rank Correlation between the Test
    Collection Results and the True System Performance", SIGIR 2016, 1033-1036.

    Examples
    --------
    >>> import numpy as np
    >>> from bayes_ir.table import ScoreTable
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(0.3, 0.1, (30, 5)) + np.linspace(0, 0.1, 5)
    >>> res = expected_correlation(ScoreTable.from_matrix(x.clip(0, 1)), estimator="ML")
    >>> 0 < res.tau <= 1
    True
    """
    spec = parse_reliability(estimator or RELIABILITY_ESTIMATOR)
    if spec.kind != "estimator":
        raise OptionError(f"{spec!r} is a correlation coefficient; pick an estimator such as MSQD")
    x, systems, coll, meas = table_matrix(table, collection=collection, measure=measure)
    if spec.name in ("SHw", "SHwo"):
        check_matrix(
            x, min_topics=defaults.MIN_TOPICS_SPLIT_HALF, method=spec.name, where=table.source
        )
    if x.shape[0] < FEW_TOPICS:
        warnings.warn(
            f"only {x.shape[0]} topics: E[tau] estimates are unreliable below {FEW_TOPICS} "
            "(Urbano and Marrero 2016 report a mean absolute error of about 0.065 at 10 topics)",
            DataWarning,
            stacklevel=2,
        )
    order = sort_by_mean(x)
    xs = x[:, order]
    names = tuple(systems[k] for k in order)
    seed = validate.seed(seed)
    est = _estimate(xs, spec, np.random.default_rng(seed))
    m = len(names)
    notes: list[str] = []
    undefined: tuple[tuple[str, str], ...] = ()
    p_matrix = None
    if est.p is not None:
        i, j = np.triu_indices(m, 1)
        bad = np.isnan(est.p)
        undefined = tuple((names[a], names[b]) for a, b in zip(i[bad], j[bad], strict=True))
        if bad.all():
            raise InsufficientDataError(
                f"every pair of the {m} systems has identical scores on every topic: there is "
                "no ranking whose reliability could be estimated"
            )
        if undefined:
            shown = ", ".join(f"{a} = {b}" for a, b in undefined[:5])
            notes.append(
                f"{len(undefined)} pair(s) of systems have identical scores on every topic "
                f"({shown}{', ...' if len(undefined) > 5 else ''}): their swap probability "
                "is undefined and counted as 0"
            )
        p_matrix = np.full((m, m), np.nan)
        p_matrix[i, j] = np.where(bad, 0.0, est.p)
    if est.kd_fallback:
        notes.append(
            f"KD: the kernel density of {est.kd_fallback} pair(s) could not be estimated "
            "(constant differences); used ML for them"
        )
    return ReliabilityResult(
        estimator=repr(spec),
        tau=est.tau,
        tau_ap=est.tau_ap,
        systems=names,
        means=xs.mean(axis=0),
        p_swap=p_matrix,
        undefined=undefined,
        n_topics=x.shape[0],
        collection=coll,
        measure=meas,
        seed=seed if spec.stochastic else None,
        notes=tuple(notes),
    )
