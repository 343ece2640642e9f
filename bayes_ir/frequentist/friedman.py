r"""Friedman test with the Nemenyi post-hoc test and its critical difference (Demšar 2006).

The frequentist companion of a leaderboard: systems are ranked within each topic (rank 1
= highest score, ties get their average rank), the Friedman test asks whether the mean
ranks differ at all, and the Nemenyi test calls two systems different when their mean
ranks differ by more than the critical difference

.. math::

    CD = q_\alpha \sqrt{\frac{k (k + 1)}{6 N}}, \qquad
    q_\alpha = \frac{Q_{1-\alpha}(k, \infty)}{\sqrt 2},

:math:`k` systems, :math:`N` topics, :math:`Q` the studentized range distribution
(:data:`scipy.stats.studentized_range`; autorank reads it from statsmodels'
``qsturng`` table approximation, which agrees to 4 significant digits for up to 100
systems and to 0.2% at 200). The groups of the critical-difference diagram are
autorank's: in the order of the mean ranks, each system starts the run of the systems
whose mean rank is within :math:`CD` of its own, and a run is kept when it reaches
further than every earlier run. These groups overlap (they chain): a system can share
a group with two systems that differ from each other.

References
----------
Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets.
*Journal of Machine Learning Research* 7, 1-30.

Friedman, M. (1937). The use of ranks to avoid the assumption of normality implicit in
the analysis of variance. *Journal of the American Statistical Association* 32(200),
675-701. doi:10.1080/01621459.1937.10503522

Nemenyi, P. B. (1963). *Distribution-free multiple comparisons*. PhD thesis, Princeton
University.

Herbold, S. (2020). Autorank: a Python package for automated ranking of classifiers.
*Journal of Open Source Software* 5(48), 2173. doi:10.21105/joss.02173
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.errors import InsufficientDataError, ScoreTableError
from bayes_ir.frequentist.letters import _letter_names
from bayes_ir.table import ScoreTable

__all__ = [
    "FRIEDMAN_COLUMNS",
    "FriedmanNemenyi",
    "cd_groups",
    "critical_difference",
    "friedman_nemenyi",
]

#: Columns of :meth:`FriedmanNemenyi.to_frame`.
FRIEDMAN_COLUMNS = ("system", "mean_rank", "mean", "cd_groups")


def critical_difference(k: int, n: int, *, alpha: float | None = None) -> float:
    r"""Nemenyi critical difference of the mean ranks of ``k`` systems over ``n`` topics.

    Parameters
    ----------
    k, n
        Number of systems (at least 2) and of topics (at least 1).
    alpha
        Significance level (default :data:`bayes_ir.defaults.FRIEDMAN_ALPHA`).

    Returns
    -------
    float

    Notes
    -----
    :math:`CD = Q_{1-\alpha}(k, \infty) \sqrt{k (k + 1) / (12 N)}`, with :math:`Q` the
    studentized range distribution (Demšar 2006, eq. 2 and Table 5).
    """
    from scipy.stats import studentized_range

    k = validate.positive_int("k", k, minimum=2)
    n = validate.positive_int("n", n)
    level = validate.probability("alpha", defaults.FRIEDMAN_ALPHA if alpha is None else alpha)
    q = float(studentized_range.ppf(1.0 - level, k, np.inf))
    return q * float(np.sqrt(k * (k + 1) / (12.0 * n)))


def cd_groups(ranks: np.ndarray | Sequence[float], cd: float) -> list[tuple[int, int]]:
    r"""Return the groups of a critical-difference diagram, as autorank draws them.

    Parameters
    ----------
    ranks
        Mean ranks sorted ascending (best first).
    cd
        The critical difference.

    Returns
    -------
    list of (int, int)
        ``(first, last)`` positions in ``ranks`` (inclusive) of each group: for each
        position :math:`i` the last :math:`j > i` with :math:`|r_i - r_j| \le CD`, kept
        when it reaches further than every earlier group (autorank's
        ``get_sorted_rank_groups``). A system within the critical difference of no other
        is in no group.
    """
    ranks = np.asarray(ranks, dtype=float)
    groups = []
    reach = -1
    for i in range(ranks.size):
        inside = np.flatnonzero(np.abs(ranks[i] - ranks[i + 1 :]) <= cd)
        if inside.size:
            last = i + 1 + int(inside[-1])
            if last > reach:
                reach = last
                groups.append((i, last))
    return groups


@dataclass(frozen=True)
class FriedmanNemenyi:
    """Friedman test and Nemenyi post-hoc groups: build with :func:`friedman_nemenyi`.

    Attributes
    ----------
    systems
        The systems in the order of their mean ranks (best first).
    mean_ranks
        Mean rank of each system over the topics (1 = best), indexed like ``systems``.
    means
        Mean score of each system, indexed like ``systems``.
    statistic, df, p_value
        Friedman's chi-squared statistic (corrected for ties), its degrees of freedom
        (:math:`k - 1`) and p-value (:func:`scipy.stats.friedmanchisquare`).
    n_topics
        The topics (blocks) ranked.
    alpha
        Level of the test and of the critical difference.
    cd
        The Nemenyi critical difference of the mean ranks.
    cliques
        Groups of the critical-difference diagram, ``(first, last)`` positions in
        ``systems`` (inclusive), as autorank draws them; they may overlap.
    collection, measure
        The data tested.
    """

    systems: tuple[str, ...]
    mean_ranks: pd.Series
    means: pd.Series
    statistic: float
    df: int
    p_value: float
    n_topics: int
    alpha: float
    cd: float
    cliques: tuple[tuple[int, int], ...]
    collection: str = ""
    measure: str = ""

    @property
    def rejected(self) -> bool:
        """True when the Friedman test rejects equal mean ranks at ``alpha``."""
        return bool(self.p_value < self.alpha)

    def groups(self) -> list[tuple[str, ...]]:
        """Return the systems of each group of the critical-difference diagram."""
        return [self.systems[a : b + 1] for a, b in self.cliques]

    def named_groups(self) -> dict[str, tuple[str, ...]]:
        """Return the groups by their letters (``a``, ``b``, ... as multcomp names them)."""
        return dict(zip(_letter_names(len(self.cliques)), self.groups(), strict=True))

    def group_letters(self) -> pd.Series:
        """Return the letters of the groups each system belongs to (``""``: in none), by system."""
        out = {s: "" for s in self.systems}
        for letter, members in self.named_groups().items():
            for s in members:
                out[s] += letter
        return pd.Series(out, name="cd_groups").rename_axis("system")

    def significant_pairs(self) -> list[tuple[str, str]]:
        """Return the pairs whose mean ranks differ by more than the critical difference."""
        r = self.mean_ranks.to_numpy()
        i, j = np.nonzero(np.triu(np.abs(r[:, None] - r[None, :]) > self.cd, 1))
        return [(self.systems[a], self.systems[b]) for a, b in zip(i, j, strict=True)]

    def to_frame(self) -> pd.DataFrame:
        """Return one row per system, best mean rank first: :data:`FRIEDMAN_COLUMNS`."""
        return pd.DataFrame(
            {
                "system": list(self.systems),
                "mean_rank": self.mean_ranks.to_numpy(),
                "mean": self.means.to_numpy(),
                "cd_groups": self.group_letters().to_numpy(),
            }
        )

    def test_line(self) -> str:
        """Return one line: the Friedman statistic with its df, the p-value and the CD."""
        from bayes_ir.report.numbers import format_probability

        p = format_probability(self.p_value)
        p = p if p.startswith(("<", ">")) else f"= {p}"
        return (
            f"Friedman chi2(df = {self.df}) = {self.statistic:.2f}, p {p} over "
            f"{self.n_topics} topics; Nemenyi critical difference CD = {self.cd:.3f} "
            f"mean ranks (alpha = {self.alpha:g})"
        )

    def summary(self) -> str:
        """Return the test line, then the mean ranks and the groups of the CD diagram."""
        lines = [self.test_line()]
        if not self.rejected:
            lines.append(
                "  the Friedman test does not reject equal mean ranks: the groups below are "
                "not read as differences"
            )
        frame = self.to_frame()
        width = max([len(s) for s in frame["system"]] + [6])
        lines.append(f"  {'system':<{width}}  {'mean rank':>9}  {'mean':>8}  groups")
        for r in frame.itertuples(index=False):
            lines.append(f"  {r.system:<{width}}  {r.mean_rank:9.2f}  {r.mean:8.4f}  {r.cd_groups}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def plot(self, **kwargs: Any) -> Any:
        """Draw the critical-difference diagram.

        See :func:`bayes_ir.plots.leaderboard.plot_critical_difference`.
        """
        from bayes_ir.plots.leaderboard import plot_critical_difference

        return plot_critical_difference(self, **kwargs)


def friedman_nemenyi(
    table: ScoreTable,
    *,
    alpha: float | None = None,
    collection: str | None = None,
    measure: str | None = None,
) -> FriedmanNemenyi:
    r"""Friedman test of equal mean ranks and the Nemenyi critical difference (as autorank).

    Parameters
    ----------
    table
        Scores of one collection and measure (or select them with ``collection`` and
        ``measure``), every system on every topic; roles are not used.
    alpha
        Significance level (default :data:`bayes_ir.defaults.FRIEDMAN_ALPHA`).
    collection, measure
        The block to test, when the table holds several.

    Returns
    -------
    FriedmanNemenyi

    Raises
    ------
    ScoreTableError
        Missing cells (the ranks of a topic need every system).
    InsufficientDataError
        Fewer than 3 systems or 2 topics.

    Notes
    -----
    With :math:`r_{ts}` the rank of system :math:`s` on topic :math:`t` (1 = best,
    ties averaged) and :math:`R_s = \frac1N \sum_t r_{ts}`, Friedman's statistic is
    :math:`\chi^2_F = \frac{12N}{k(k+1)} \left[\sum_s R_s^2 - \frac{k(k+1)^2}{4}\right]`
    divided by the tie correction :math:`1 - \sum (t^3 - t) / (N (k^3 - k))`, on
    :math:`k - 1` df; see the module docstring for the critical difference and groups.

    References
    ----------
    Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets.
    *Journal of Machine Learning Research* 7, 1-30.
    """
    from scipy import stats

    level = validate.probability("alpha", defaults.FRIEDMAN_ALPHA if alpha is None else alpha)
    validate.instance("table", table, ScoreTable)
    da = table.matrix(collection=collection, measure=measure)
    x = np.asarray(da.values, dtype=float)
    systems = [str(s) for s in da["system"].values]
    if not np.isfinite(x).all():
        t, s = (int(v[0]) for v in np.nonzero(~np.isfinite(x)))
        raise ScoreTableError(
            f"the Friedman test ranks every system on every topic, but system {systems[s]!r} "
            f"has no score on topic {str(da['topic'].values[t])!r}",
            source=table.source,
        )
    n, k = x.shape
    if k < 3:
        raise InsufficientDataError(f"the Friedman test needs at least 3 systems; {k} given")
    validate.require_topics(n, 2, method="the Friedman test", where=str(table.source))
    ranks = stats.rankdata(-x, axis=1)  # 1 = highest score, ties averaged
    mean_ranks = ranks.mean(axis=0)
    res = stats.friedmanchisquare(*x.T)
    order = np.argsort(mean_ranks, kind="stable")
    ordered = [systems[i] for i in order]
    cd = critical_difference(k, n, alpha=level)
    return FriedmanNemenyi(
        systems=tuple(ordered),
        mean_ranks=pd.Series(mean_ranks[order], index=ordered, name="mean_rank"),
        means=pd.Series(x.mean(axis=0)[order], index=ordered, name="mean"),
        statistic=float(res.statistic),
        df=k - 1,
        p_value=float(res.pvalue),
        n_topics=n,
        alpha=level,
        cd=cd,
        cliques=tuple(cd_groups(mean_ranks[order], cd)),
        collection=str(da.attrs.get("collection", "")),
        measure=str(da.attrs.get("measure", "")),
    )
