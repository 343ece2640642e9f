r"""A leaderboard with honest ranks: rank intervals, P(best), P(top k) and anchored tie groups.

:func:`leaderboard` reads a fit of every system (a table without roles, or with them:
roles are ignored) through its public answers only: the draws of the system means on
the score scale (``fit.system_mean_draws()``), the diagnostics gate
(``fit.diagnostics``), the model check (``fit.model_check``) and the table
(``fit.table``). So it reads a fit of any likelihood family alike.

For posterior draws :math:`\theta^{(i)}_s` of the system means (:math:`i = 1..n`):

* the board is ordered by the posterior mean :math:`\bar\theta_s` (highest first); each
  system's interval is the equal-tailed ``ci_prob`` interval of its draws;
* :math:`\text{rank}^{(i)}_s` is the system's place in draw :math:`i` (1 = highest);
  the *mean rank* is its average, the *rank interval* is the pair of equal-tailed
  quantiles :math:`[\min\{k: F_s(k) \ge \alpha/2\}, \min\{k: F_s(k) \ge 1 - \alpha/2\}]`
  of its rank distribution :math:`F_s` (:math:`\alpha = 1 -` ``ci_prob``), so it holds
  the rank with posterior probability at least ``ci_prob``;
* :math:`P(\text{best}) = P(\text{rank}_s = 1)` and
  :math:`P(\text{top } k) = P(\text{rank}_s \le k)`;
* ``p_above_next`` is :math:`P(\theta_s > \theta_{s'})` for the next system :math:`s'` on
  the board: whether the two neighbours are separable at all.

Tie groups (anchored, they do not chain). Walk down the board. The first system not in a
group is the *leader* :math:`L` of a new group; each following system :math:`s` joins it
while it is *not shown behind the leader by more than the rope* :math:`\rho`:

.. math::

    P(\theta_L - \theta_s > \rho \mid y) < p_{\min},

and the first system that is (probability at least :math:`p_{\min}`) becomes the leader of
the next group. Each group is a run of consecutive places, every member is compared with
its leader, never with its neighbour: a chain of small steps (each neighbour
inseparable from the next) cannot pull a system far below the leader into the leader's
group, which is what happens to overlap-based classes (ComparIA issue 483: chained
overlaps put nearly every model in one class) and to the overlapping bars of a
critical-difference diagram (:mod:`bayes_ir.frequentist.friedman`). Adding or removing a
system far from a group does not change it (the rule only compares systems with their
leader). ``p_behind_leader`` holds :math:`P(\theta_L - \theta_s > \rho)` of every member
(empty for a leader).

A leaderboard whose posterior failed its diagnostics says so first, in every output; a
system the model check flags (:func:`~bayes_ir.hierarchical.check_model`) is marked
``misfit``: its place rests on a model that does not describe its scores.

References
----------
Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
inferential risk evaluation on multiple IR systems. *SIGIR '20*, 339-348.
doi:10.1145/3397271.3401033

Kruschke, J. K. (2018). Rejecting or accepting parameter values in Bayesian estimation.
*Advances in Methods and Practices in Psychological Science* 1(2), 270-280.
doi:10.1177/2515245918771304

Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets.
*Journal of Machine Learning Research* 7, 1-30.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.errors import BayesIRError, IgnoredOptionWarning, InsufficientDataError
from bayes_ir.hierarchical.diagnostics import GateStatus

if TYPE_CHECKING:
    from bayes_ir.frequentist.friedman import FriedmanNemenyi

__all__ = [
    "BORDERLINE_Z",
    "LEADERBOARD_COLUMNS",
    "Leaderboard",
    "leaderboard",
    "rank_summary",
    "tie_groups",
]

#: Columns of :meth:`Leaderboard.to_frame`.
LEADERBOARD_COLUMNS = (
    "place",
    "system",
    "mean",
    "ci_lower",
    "ci_upper",
    "observed_mean",
    "rank_mean",
    "rank_lower",
    "rank_upper",
    "p_best",
    "p_top",
    "group",
    "leader",
    "p_behind_leader",
    "borderline",
    "p_above_next",
    "misfit",
    "failed_checks",
    "friedman_rank",
    "cd_groups",
)
#: What a leaderboard keeps of its fit's provenance.
_PROVENANCE = ("source", "likelihood", "sigma", "method", "sampler", "seed", "chains", "draws",
               "data_hash", "versions")  # fmt: skip
#: Monte Carlo standard errors within which a probability of the group rule counts as
#: borderline (another seed may decide it the other way: two estimates differ by more
#: than 3 standard errors of each one's error in 0.3% of seeds).
BORDERLINE_Z: float = 3.0
#: Float64 values per block of draws ranked at once (bounds the temporaries).
_BLOCK_VALUES: int = 4_000_000


def rank_summary(draws: np.ndarray, *, ci_prob: float, top: int) -> dict[str, np.ndarray]:
    r"""Rank distribution of each column of ``draws`` (shape ``(n, S)``; rank 1 = highest).

    Parameters
    ----------
    draws
        Posterior draws, one row per draw, one column per system.
    ci_prob
        Probability of the rank intervals.
    top
        The :math:`k` of :math:`P(\text{rank} \le k)` (at most ``S``).

    Returns
    -------
    dict
        ``rank_mean``, ``rank_lower``, ``rank_upper``, ``p_best``, ``p_top``, one value
        per column.

    Notes
    -----
    The counts :math:`c_{sk} = \#\{i: \text{rank}^{(i)}_s = k\}` are gathered block by
    block of draws with one ``argsort`` per block (:math:`O(n S \log S)`), so memory stays
    bounded; the interval limits are the quantiles :math:`\min\{k: \sum_{j \le k} c_{sj}
    \ge q n\}` at :math:`q = (1 \mp p)/2`.
    """
    n, k = draws.shape
    counts = np.zeros(k * k, dtype=np.int64)
    step = max(1, _BLOCK_VALUES // max(k, 1))
    places = np.arange(k)
    for start in range(0, n, step):
        order = np.argsort(-draws[start : start + step], axis=1, kind="stable")
        counts += np.bincount((order * k + places).ravel(), minlength=k * k)
    counts = counts.reshape(k, k)  # [system, place]
    cum = np.cumsum(counts, axis=1)
    lo, hi = (1.0 - ci_prob) / 2.0 * n, (1.0 + ci_prob) / 2.0 * n
    return {
        "rank_mean": counts @ np.arange(1, k + 1) / n,
        "rank_lower": np.argmax(cum >= lo - 1e-9, axis=1) + 1,
        "rank_upper": np.argmax(cum >= hi - 1e-9, axis=1) + 1,
        "p_best": counts[:, 0] / n,
        "p_top": cum[:, top - 1] / n,
    }


def tie_groups(
    draws: np.ndarray,
    *,
    rope: float,
    p_min: float,
    ess: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Anchored tie groups of systems in board order (the columns of ``draws``).

    Parameters
    ----------
    draws
        Posterior draws ``(n, S)``, columns in board order (highest posterior mean first).
    rope
        Region of practical equivalence :math:`\rho \ge 0`, in the scores' units.
    p_min
        Probability at which a system is shown behind its leader.
    ess
        Effective sample size of each column's draws (default: ``n``, independent draws),
        for the Monte Carlo error of the probabilities.

    Returns
    -------
    group : numpy.ndarray
        Group number (1-based) of each column.
    p_rule : numpy.ndarray
        The probability the rule decided each column on: :math:`P(\theta_L - \theta_s >
        \rho)` against the leader :math:`L` it was compared with (its own group's leader
        for a member, the previous group's for the leader of a later group; NaN for the
        first column).
    borderline : numpy.ndarray
        True where ``p_rule`` lies within :data:`BORDERLINE_Z` Monte Carlo standard
        errors of ``p_min``: another set of draws may decide that column the other way.

    Notes
    -----
    The leader of a group is the first column not yet in a group; the following columns
    join it while :math:`P(\theta_L - \theta_s > \rho) < p_{\min}`; the first column at
    or above :math:`p_{\min}` leads the next group (module docstring). The probabilities
    are computed a block of columns at a time and only until the group ends, so the cost
    is :math:`O(n S)` plus one block per group. The Monte Carlo standard error of a
    probability :math:`p` is :math:`\sqrt{p (1 - p) / n_{\text{eff}}}`, with
    :math:`n_{\text{eff}}` the smaller ESS of the two systems compared.
    """
    n, k = draws.shape
    neff = np.full(k, float(n)) if ess is None else np.minimum(np.asarray(ess, float), n)
    group = np.zeros(k, dtype=np.int64)
    p_rule = np.full(k, np.nan)
    against = np.zeros(k, dtype=np.int64)
    width = int(np.clip(_BLOCK_VALUES // max(n, 1), 8, 256))
    leader, number = 0, 1
    while leader < k:
        group[leader] = number
        lead = draws[:, leader : leader + 1]
        j = leader + 1
        nxt = k
        while j < k:
            stop = min(k, j + width)
            p = np.count_nonzero(lead - draws[:, j:stop] > rope, axis=0) / n
            out = np.flatnonzero(p >= p_min)
            end = stop if out.size == 0 else j + int(out[0]) + 1
            p_rule[j:end] = p[: end - j]
            against[j:end] = leader
            group[j : end - (1 if out.size else 0)] = number
            if out.size:
                nxt = end - 1
                break
            j = stop
        leader, number = nxt, number + 1
    mcse = np.sqrt(p_rule * (1.0 - p_rule) / np.minimum(neff, neff[against]))
    borderline = np.abs(p_rule - p_min) <= BORDERLINE_Z * mcse
    return group, p_rule, borderline


@dataclass(frozen=True)
class Leaderboard:
    """Every system's place, interval, rank interval, P(best), P(top k) and tie group.

    Build it with :func:`leaderboard`. Attributes hold raw numbers; the methods format
    (:mod:`bayes_ir.report.leaderboard`, :mod:`bayes_ir.plots.leaderboard`).

    Attributes
    ----------
    frame
        One row per system in board order, :data:`LEADERBOARD_COLUMNS` (see
        :meth:`to_frame`).
    rope
        Region of practical equivalence of the tie groups, in the measure's units.
    p_min
        Probability at which a system is shown behind its group's leader.
    top
        The k of ``p_top``.
    ci_prob
        Probability of the intervals and rank intervals.
    gate
        Diagnostics status of the fit (:class:`~bayes_ir.hierarchical.GateStatus`).
    misfit
        Systems the model check flagged, in board order.
    model_checked
        Whether the fit carries a model check (``False``: misfit cannot be told).
    friedman
        The frequentist companion
        (:class:`~bayes_ir.frequentist.friedman.FriedmanNemenyi`), or ``None`` when the
        table cannot be ranked topic by topic (missing cells, fewer than 3 systems).
    friedman_note
        Why ``friedman`` is ``None`` (``""`` otherwise).
    likelihood
        The fit's likelihood family.
    n_topics, n_draws
        Topics of the table and posterior draws used.
    collection, measure
        The data the fit was made on.
    provenance
        What the fit records of how it was made (source, likelihood, sampler, seed,
        chains, draws, data hash, package versions).
    notes
        What the loader changed or left out in the fitted table (topics scored 0,
        columns left out, run tags split): the table's ``notes``, shown by the HTML page.
    """

    frame: pd.DataFrame
    rope: float
    p_min: float
    top: int
    ci_prob: float
    gate: GateStatus
    misfit: tuple[str, ...]
    model_checked: bool
    friedman: FriedmanNemenyi | None
    friedman_note: str
    likelihood: str
    n_topics: int
    n_draws: int
    collection: str = ""
    measure: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def diagnostics_passed(self) -> bool:
        """True when the posterior behind the board passed its diagnostics gate."""
        return self.gate.passed

    @property
    def systems(self) -> tuple[str, ...]:
        """The systems in board order (highest posterior mean first)."""
        return tuple(self.frame["system"])

    def groups(self) -> list[tuple[str, ...]]:
        """Return the tie groups in board order, each a tuple of systems, its leader first."""
        return [tuple(block["system"]) for _, block in self.frame.groupby("group", sort=True)]

    def to_frame(self) -> pd.DataFrame:
        r"""Return one row per system in board order (a copy).

        Returns
        -------
        pandas.DataFrame
            With these columns:

            place
                1, 2, ...: the order of the posterior means.
            system
                The system.
            mean, ci_lower, ci_upper
                Posterior mean of the system's mean score and its equal-tailed interval.
            observed_mean
                The mean of its observed scores.
            rank_mean, rank_lower, rank_upper
                Posterior mean rank and the equal-tailed rank interval (1 = best).
            p_best, p_top
                :math:`P(\text{rank} = 1)` and :math:`P(\text{rank} \le k)`, ``k = top``.
            group, leader
                The tie group (1, 2, ...) and its leader.
            p_behind_leader
                :math:`P(\theta_L - \theta_s > \rho)` (empty for a leader).
            borderline
                The rule's probability for this system (against its leader, or for a
                leader against the previous one) lies within :data:`BORDERLINE_Z`
                Monte Carlo standard errors of ``p_min``: another seed may move the
                group boundary here (refit with more draws to settle it).
            p_above_next
                :math:`P(\theta_s > \theta_{s'})`, :math:`s'` the next system (empty
                for the last).
            misfit, failed_checks
                Whether the model check flagged the system, and which checks failed.
            friedman_rank, cd_groups
                The frequentist companion: mean rank over the topics and the letters of
                the critical-difference groups (empty without it).
        """
        return self.frame.copy()

    def summary(self, *, rows: int | None = None) -> str:
        """Return the board as text (:func:`bayes_ir.report.leaderboard.leaderboard_text`)."""
        from bayes_ir.report.leaderboard import leaderboard_text

        return leaderboard_text(self, rows=rows)

    def __str__(self) -> str:
        return self.summary()

    def to_markdown(self) -> str:
        """Return the board as a Markdown table.

        See :func:`bayes_ir.report.leaderboard.leaderboard_markdown`.
        """
        from bayes_ir.report.leaderboard import leaderboard_markdown

        return leaderboard_markdown(self)

    def to_latex(self, **options: Any) -> str:
        """Return the board as a LaTeX table, the groups between rules.

        See :func:`bayes_ir.report.leaderboard.leaderboard_latex`.
        """
        from bayes_ir.report.leaderboard import leaderboard_latex

        return leaderboard_latex(self, **options)

    def to_html(
        self,
        path: str | Path | None = None,
        *,
        inputs: Sequence[str | Path] = (),
        command: str = "",
    ) -> str | Path:
        """Return a self-contained HTML page of the board; written to ``path`` when given.

        ``inputs`` (files, listed with their SHA-256) and ``command`` go into the page's
        provenance. See :func:`bayes_ir.report.leaderboard.render_leaderboard`.
        """
        from bayes_ir.report.html import html_output
        from bayes_ir.report.leaderboard import render_leaderboard

        return html_output(render_leaderboard(self, inputs=inputs, command=command), path)

    def _repr_html_(self) -> str:
        return self.frame.to_html(index=False, float_format=lambda x: f"{x:.4f}")

    def plot(self, **kwargs: Any) -> Any:
        """Draw the rank intervals with the tie groups shaded.

        See :func:`bayes_ir.plots.leaderboard.plot_rank_intervals`.
        """
        from bayes_ir.plots.leaderboard import plot_rank_intervals

        return plot_rank_intervals(self, **kwargs)

    def plot_critical_difference(self, **kwargs: Any) -> Any:
        """Draw a critical-difference-style diagram: tie groups and Friedman-Nemenyi groups.

        See :func:`bayes_ir.plots.leaderboard.plot_critical_difference`.
        """
        from bayes_ir.plots.leaderboard import plot_critical_difference

        return plot_critical_difference(self, **kwargs)


def _system_ess(fit: Any, systems: list[str], n: int) -> np.ndarray:
    """Smaller of the bulk and tail ESS of each system's effect (``n`` where not diagnosed)."""
    table = getattr(getattr(fit, "diagnostics", None), "table", None)
    ess = pd.Series(float(n), index=systems)
    if isinstance(table, pd.DataFrame) and {"parameter", "ess_bulk", "ess_tail"} <= set(table):
        rows = table[table["parameter"].astype(str).str.startswith("system_effect[")]
        names = rows["parameter"].astype(str).str.slice(len("system_effect["), -1)
        found = pd.Series(rows[["ess_bulk", "ess_tail"]].min(axis=1).to_numpy(), index=names)
        found = found[~found.index.duplicated()]
        ess.update(found.reindex(systems).dropna())
    return ess.to_numpy(dtype=float)


def _friedman(fit: Any) -> tuple[Any, str]:
    """Return the Friedman-Nemenyi companion of the fit's table, or ``None`` and why not."""
    from bayes_ir.errors import ScoreTableError
    from bayes_ir.frequentist.friedman import friedman_nemenyi

    try:
        return friedman_nemenyi(fit.table), ""
    except (ScoreTableError, InsufficientDataError) as exc:
        return None, f"no Friedman test: {exc}"


def leaderboard(
    fit: Any,
    *,
    rope: float | None = None,
    top: int | None = None,
    ci_prob: float | None = None,
    p_min: float | None = None,
    friedman: bool = True,
) -> Leaderboard:
    r"""Rank every system of a fit, with intervals, rank intervals and anchored tie groups.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` of the systems to rank (fit a
        table without roles: every system alike).
    rope
        Region of practical equivalence :math:`\rho \ge 0` of the tie groups, in the
        measure's units (default :data:`bayes_ir.defaults.LEADERBOARD_ROPE`).
    top
        The k of :math:`P(\text{top } k)` (default
        :data:`bayes_ir.defaults.LEADERBOARD_TOP`; at most the number of systems).
    ci_prob
        Probability of the intervals and rank intervals (default
        :data:`bayes_ir.defaults.CI_PROB`).
    p_min
        A system leaves its leader's group when it is behind the leader by more than
        the rope with at least this probability (default
        :data:`bayes_ir.defaults.LEADERBOARD_P_MIN`).
    friedman
        Add the Friedman test and the Nemenyi critical difference of the fit's table
        (:func:`~bayes_ir.frequentist.friedman.friedman_nemenyi`).

    Returns
    -------
    Leaderboard

    Notes
    -----
    See the module docstring for every quantity and the rule of the tie groups:
    :math:`s` stays in the group of leader :math:`L` while
    :math:`P(\theta_L - \theta_s > \rho \mid y) < p_{\min}`.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *SIGIR '20*, 339-348.
    doi:10.1145/3397271.3401033
    """
    rope_value = validate.finite_float(
        "rope", defaults.LEADERBOARD_ROPE if rope is None else rope, minimum=0.0
    )
    level = validate.ci_prob(ci_prob)
    p = validate.probability("p_min", defaults.LEADERBOARD_P_MIN if p_min is None else p_min)
    k_top = validate.positive_int("top", defaults.LEADERBOARD_TOP if top is None else top)
    validate.flag("friedman", friedman)
    means = fit.system_mean_draws()
    names = [str(s) for s in means["system"].values]
    if len(names) < 2:
        raise InsufficientDataError("a leaderboard needs at least two systems")
    flat = np.asarray(means.transpose("chain", "draw", "system").values, dtype=float)
    flat = flat.reshape(-1, len(names))
    if not np.isfinite(flat).all():
        raise BayesIRError("the posterior draws of the system means are not all finite")
    order = np.argsort(-flat.mean(axis=0), kind="stable")
    x = np.ascontiguousarray(flat[:, order])
    board = [names[i] for i in order]
    if k_top > len(board):
        warnings.warn(
            f"top={k_top} is more than the {len(board)} systems: P(top {k_top}) would be 1 for "
            f"every one, so P(top {len(board)}) is shown",
            IgnoredOptionWarning,
            stacklevel=2,
        )
        k_top = len(board)
    ranks = rank_summary(x, ci_prob=level, top=k_top)
    group, p_rule, borderline = tie_groups(
        x, rope=rope_value, p_min=p, ess=_system_ess(fit, board, x.shape[0])
    )
    leaders = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    p_behind = np.where(np.isin(np.arange(len(board)), leaders), np.nan, p_rule)
    leader_of = np.asarray(board, dtype=object)[leaders[group - 1]]
    lo, hi = np.quantile(x, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0)
    observed = fit.table.matrix().to_pandas().mean(axis=0)
    check = getattr(fit, "model_check", None)
    flagged = set(check.flagged) if check is not None else set()
    companion, note = _friedman(fit) if friedman else (None, "")
    frame = pd.DataFrame(
        {
            "place": np.arange(1, len(board) + 1),
            "system": board,
            "mean": x.mean(axis=0),
            "ci_lower": lo,
            "ci_upper": hi,
            "observed_mean": observed.reindex(board).to_numpy(dtype=float),
            **ranks,
            "group": group,
            "leader": leader_of,
            "p_behind_leader": p_behind,
            "borderline": borderline,
            "p_above_next": np.r_[(x[:, :-1] > x[:, 1:]).mean(axis=0), np.nan],
            "misfit": [s in flagged for s in board],
            "failed_checks": [
                ", ".join(check.failed(s)) if check is not None else "" for s in board
            ],
        }
    )
    if companion is not None:
        frame["friedman_rank"] = companion.mean_ranks.reindex(board).to_numpy()
        frame["cd_groups"] = companion.group_letters().reindex(board).to_numpy()
    else:
        frame["friedman_rank"] = np.nan
        frame["cd_groups"] = ""
    table = fit.table
    return Leaderboard(
        frame=frame[list(LEADERBOARD_COLUMNS)],
        rope=rope_value,
        p_min=p,
        top=k_top,
        ci_prob=level,
        gate=GateStatus.of(fit),
        misfit=tuple(s for s in board if s in flagged),
        model_checked=check is not None,
        friedman=companion,
        friedman_note=note,
        likelihood=str(getattr(fit, "likelihood", "")),
        n_topics=len(table.topics),
        n_draws=int(x.shape[0]),
        collection=str(table.collections[0]) if len(table.collections) == 1 else "",
        measure=str(table.measures[0]) if len(table.measures) == 1 else "",
        provenance={k: v for k, v in getattr(fit, "provenance", {}).items() if k in _PROVENANCE},
        notes=tuple(table.notes),
    )
