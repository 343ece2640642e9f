r"""More topics or more runs (seeds)? A pre-posterior analysis over both.

For a challenger of a :class:`~bayes_ir.hierarchical.ReplicateFit` whose decision is not
settled, simulate adding :math:`k` new topics and :math:`m` new runs of the challenger
and of the champion, and ask, for every cell of a grid of :math:`(k, m)`, how often the
decision of :mod:`bayes_ir.decision.rules` would then be *deploy* or *keep champion*,
and at what cost. It extends :mod:`bayes_ir.decision.more_topics` (topics only) to the
two ways of collecting more data a team with several runs per system has.

The variance of the contrast estimate
-------------------------------------
Under the model of :func:`~bayes_ir.hierarchical.fit_replicates`,
:math:`y_{tsr} = b_0 + a_t + \beta_s + (a\beta)_{ts} + \rho_{sr} + e_{tsr}` with
:math:`(a\beta)_{ts} \sim N(0, \psi^2)`, :math:`\rho_{sr} \sim N(0, \kappa_s^2)`,
:math:`e_{tsr} \sim N(0, \sigma^2)`, all independent. Let challenger :math:`c` and
champion :math:`h` both be scored on :math:`T` topics, with :math:`R_c` and :math:`R_h`
runs, every run on every topic. System :math:`s`'s mean score is

.. math::

    \bar y_s = \frac{1}{T R_s}\sum_{t, r} y_{tsr}
    = b_0 + \bar a + \beta_s + \frac1T \sum_t (a\beta)_{ts}
      + \frac{1}{R_s}\sum_r \rho_{sr} + \frac{1}{T R_s}\sum_{t, r} e_{tsr}.

In :math:`\bar y_c - \bar y_h` the intercept and the topic effects cancel (both systems
see the same topics) and the three remaining parts are independent, so

.. math::

    V(T, R_c, R_h) = \operatorname{Var}(\bar y_c - \bar y_h \mid \beta)
    = \underbrace{\frac{2\psi^2}{T}}_{\text{topic x system}}
      + \underbrace{\frac{\kappa_c^2}{R_c} + \frac{\kappa_h^2}{R_h}}_{\text{runs}}
      + \underbrace{\frac{\sigma^2}{T R_c} + \frac{\sigma^2}{T R_h}}_{\text{residual}}
    = \frac{2\psi^2 + \sigma^2/R_c + \sigma^2/R_h}{T}
      + \frac{\kappa_c^2}{R_c} + \frac{\kappa_h^2}{R_h}

(:func:`mean_difference_variance`; checked against simulated data in the tests). New
topics are judged for every run, old and new, and new runs are scored on every topic,
old and new, so after adding :math:`k` topics and :math:`m` runs of each system the
data are again complete, with :math:`V' = V(T + k, R_c + m, R_h + m)`. More topics
shrink only the first fraction: :math:`V'` never falls below
:math:`\kappa_c^2/(R_c + m) + \kappa_h^2/(R_h + m)`, which only more runs lower.

What the new data add. The old cells are a subset of the new ones, and each part of
the mean difference is an average over a superset, so
:math:`\operatorname{Cov}(\hat\delta, \hat\delta') = \operatorname{Var}(\hat\delta') =
V'` for the old and the new estimates. Hence :math:`x = w(\hat\delta'/V' -
\hat\delta/V)`, with :math:`w^{-1} = 1/V' - 1/V`, is independent of :math:`\hat\delta`,
with :math:`x \sim N(\delta, w)`: the new data carry the information of one independent
observation of the contrast with variance :math:`w`, and the posterior given all data
is the conjugate normal update of the posterior given the old ones by :math:`x`.

Procedure (for each cell :math:`(k, m)`, :math:`n_\text{sim}` simulations, the same
random numbers in every cell):

1. draw a "true" state from the posterior: a draw of the contrast in expectation
   :math:`\delta^*` and of the variance components :math:`(\sigma^*, \psi^*,
   \kappa_c^*, \kappa_h^*)`;
2. draw the new data's observation :math:`x \sim N(\delta^*, w^*)`, :math:`w^*` from the
   drawn components;
3. update the normal approximation :math:`N(\mu, v)` of the current posterior of
   :math:`\delta` (mean and variance of its draws) by :math:`x` with :math:`\hat w` at
   the posterior means of the squared components: :math:`v' = (1/v + 1/\hat w)^{-1}`,
   :math:`\mu' = v'(\mu/v + x/\hat w)`;
4. decide with the rules of :mod:`bayes_ir.decision.rules` from :math:`N(\mu', v')`
   (``over="expectation"``) or from :math:`N(\mu', v' + \hat\kappa_c^2 +
   \hat\kappa_h^2)` (``over="single_run"``: one new run of each, whose run-to-run
   variance no amount of data removes), the expected losses in closed form
   (:func:`~bayes_ir.decision.rules.gaussian_positive_part`).

Reported per cell: P(deploy), P(keep champion), P(still undecided), P(decided), the
expected loss of the best action after collecting, the posterior SD of the contrast
after (:math:`\sqrt{v'}`), and the cost :math:`k\,c_\text{topic} + 2m\,c_\text{run}`
(runs are added to the challenger and to the champion).

References
----------
Raiffa, H., and Schlaifer, R. (1961). *Applied Statistical Decision Theory*. Harvard
University Press (pre-posterior analysis).
Bouthillier, X., Delaunay, P., Bronzi, M., et al. (2021). Accounting for variance in
machine learning benchmarks. *MLSys 2021*.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from bayes_ir import defaults, validate
from bayes_ir.decision.decide import check_options
from bayes_ir.decision.rules import (
    ACTIONS,
    choose,
    expected_losses,
    gaussian_positive_part,
    shift_of,
)
from bayes_ir.errors import OptionError
from bayes_ir.hierarchical.replicates import OVER

__all__ = [
    "MORE_RUNS_ASSUMPTIONS",
    "MORE_RUNS_COLUMNS",
    "MoreRuns",
    "mean_difference_variance",
    "more_runs",
]

#: Columns of :meth:`MoreRuns.to_frame`, one row per cell of the grid.
MORE_RUNS_COLUMNS = (
    "topics_added",
    "runs_added",
    "p_deploy",
    "p_keep",
    "p_undecided",
    "p_decided",
    "expected_loss",
    "sd_after",
    "cost",
    "mc_se",
)
#: What the analysis of more topics and runs assumes, printed with its grid.
MORE_RUNS_ASSUMPTIONS = (
    "new topics exchangeable with the judged ones and judged for every run, old and new; "
    "new runs of the challenger and the champion exchangeable with their old runs and scored "
    "on every topic, old and new; variance components known at their posterior means in the "
    "update; a near-normal posterior of the contrast"
)
#: Systems whose runs are added (the challenger and the champion): the factor of the runs' cost.
SYSTEMS_RUN = 2


def mean_difference_variance(
    topics: Any,
    runs_challenger: Any,
    runs_champion: Any,
    *,
    sigma: Any,
    psi: Any,
    kappa_challenger: Any,
    kappa_champion: Any,
) -> np.ndarray:
    r"""Variance of the difference of two systems' mean scores under the model of runs.

    .. math::

        V = \frac{2\psi^2 + \sigma^2/R_c + \sigma^2/R_h}{T}
            + \frac{\kappa_c^2}{R_c} + \frac{\kappa_h^2}{R_h}

    (derived in :mod:`bayes_ir.decision.more_runs`), for :math:`T` topics scored by
    both systems, every run on every topic. Arguments broadcast (numpy).

    Parameters
    ----------
    topics
        :math:`T`, topics.
    runs_challenger, runs_champion
        :math:`R_c`, :math:`R_h`, runs of each system.
    sigma, psi
        Residual SD :math:`\sigma` and topic x system SD :math:`\psi`.
    kappa_challenger, kappa_champion
        Run-to-run SDs :math:`\kappa_c`, :math:`\kappa_h`.

    Returns
    -------
    numpy.ndarray
        :math:`\operatorname{Var}(\bar y_c - \bar y_h \mid \beta)`.
    """
    t = np.asarray(topics, dtype=float)
    rc = np.asarray(runs_challenger, dtype=float)
    rh = np.asarray(runs_champion, dtype=float)
    s2 = np.asarray(sigma, dtype=float) ** 2
    psi2 = np.asarray(psi, dtype=float) ** 2
    kc2 = np.asarray(kappa_challenger, dtype=float) ** 2
    kh2 = np.asarray(kappa_champion, dtype=float) ** 2
    return (2 * psi2 + s2 / rc + s2 / rh) / t + kc2 / rc + kh2 / rh


@dataclass(frozen=True)
class MoreRuns:
    r"""How likely more topics and more runs are to settle a decision, and at what cost.

    Build it with :func:`more_runs`. Attributes hold raw numbers; the methods format.

    Attributes
    ----------
    champion, challenger
        The systems compared.
    over
        ``"expectation"`` or ``"single_run"``: the contrast decided on.
    mode, margin, threshold, p_min
        The decision rule (:func:`bayes_ir.decide`).
    target
        The P(decided) a cell must reach to be named.
    cost_topic, cost_run
        Cost of one new topic (judged for every run) and of one new run of one system.
    n_sim, seed
        Simulations per cell; random seed.
    grid
        One row per cell, :data:`MORE_RUNS_COLUMNS`, topics added major.
    current
        The data and the posterior now: ``topics``, ``runs_challenger``,
        ``runs_champion``, ``mean`` and ``sd`` of the contrast decided on, ``sigma``,
        ``sigma_topic_system``, ``run_sd_challenger``, ``run_sd_champion`` (root posterior
        means of the squares), ``action`` (the decision from the draws now).
    cheapest
        ``(topics_added, runs_added)`` of the cheapest cell with P(decided) >= ``target``
        (ties: the higher P(decided)); ``None`` when no cell reaches it.
    sooner
        What settles it sooner: ``"settled"`` (it already is), ``"runs"`` (runs alone
        reach the target at a lower cost than topics alone), ``"topics"``, ``"either"``
        (the same cost), ``"both"`` (only cells with topics and runs reach it) or
        ``"neither"`` (no cell of the grid reaches it).
    header
        One line naming the data and the model.
    measure
        The measure the margin is in.
    diagnostics_passed
        Whether the fit passed its diagnostics gate.
    misfit
        The champion or challenger the model check flags.
    """

    champion: str
    challenger: str
    over: str
    mode: str
    margin: float
    threshold: float
    p_min: float
    target: float
    cost_topic: float
    cost_run: float
    n_sim: int
    seed: int
    grid: pd.DataFrame
    current: dict[str, Any]
    cheapest: tuple[int, int] | None
    sooner: str
    header: str
    measure: str
    diagnostics_passed: bool = True
    misfit: tuple[str, ...] = field(default_factory=tuple)

    @property
    def topics(self) -> tuple[int, ...]:
        """The numbers of topics added (rows of the grid)."""
        return tuple(int(k) for k in dict.fromkeys(self.grid["topics_added"]))

    @property
    def runs(self) -> tuple[int, ...]:
        """The numbers of runs added per system (columns of the grid)."""
        return tuple(int(m) for m in dict.fromkeys(self.grid["runs_added"]))

    def cell(self, topics_added: int, runs_added: int) -> pd.Series:
        """Return the row of one cell of the grid."""
        g = self.grid
        row = g[(g["topics_added"] == topics_added) & (g["runs_added"] == runs_added)]
        if row.empty:
            raise OptionError(f"no cell (+{topics_added} topics, +{runs_added} runs) in the grid")
        return row.iloc[0]

    def to_frame(self) -> pd.DataFrame:
        """Return the grid, one row per cell (:data:`MORE_RUNS_COLUMNS`)."""
        return self.grid.copy()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Return the grid of P(decided) and cost, the cheapest cell, what settles it sooner."""
        from bayes_ir.report.more_runs import more_runs_summary

        return more_runs_summary(self)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.grid.to_html(index=False)

    def plot(self, **kwargs: Any) -> Any:
        """Heat map of P(decided) over the grid, the cheapest cell marked.

        See :func:`bayes_ir.plots.more_runs.plot_more_runs`.
        """
        from bayes_ir.plots.more_runs import plot_more_runs

        return plot_more_runs(self, **kwargs)


def _grid(name: str, values: Sequence[int]) -> tuple[int, ...]:
    """Check a grid of non-negative counts; return it sorted, without repeats."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not len(values):
        raise OptionError(f"{name} must be a non-empty sequence of counts >= 0, got {values!r}")
    return tuple(sorted({validate.integer(name, v, minimum=0) for v in values}))


def _choose_cell(grid: pd.DataFrame, target: float) -> tuple[tuple[int, int] | None, str]:
    """Return the cheapest cell reaching ``target`` and what settles it sooner."""
    ok = grid[grid["p_decided"] >= target]
    if ok.empty:
        return None, "neither"
    if ((ok["topics_added"] == 0) & (ok["runs_added"] == 0)).any():
        return (0, 0), "settled"
    best = ok.sort_values(["cost", "p_decided"], ascending=[True, False], kind="stable").iloc[0]
    cheapest = (int(best["topics_added"]), int(best["runs_added"]))
    by_topics = ok[ok["runs_added"] == 0]["cost"].min()
    by_runs = ok[ok["topics_added"] == 0]["cost"].min()
    if np.isnan(by_topics) and np.isnan(by_runs):
        return cheapest, "both"
    if np.isnan(by_topics) or by_runs < by_topics:
        return cheapest, "runs"
    if np.isnan(by_runs) or by_topics < by_runs:
        return cheapest, "topics"
    return cheapest, "either"


def more_runs(
    fit: Any,
    challenger: str | None = None,
    *,
    champion: str | None = None,
    topics: Sequence[int] = defaults.MORE_RUNS_TOPICS,
    runs: Sequence[int] = defaults.MORE_RUNS_RUNS,
    cost_topic: float = 1.0,
    cost_run: float = 1.0,
    over: str = "expectation",
    margin: float | None = None,
    mode: str = "superiority",
    threshold: float | None = None,
    p_min: float | None = None,
    target: float = defaults.MORE_RUNS_TARGET,
    n_sim: int = defaults.MORE_TOPICS_SIMULATIONS,
    seed: int | None = None,
) -> MoreRuns:
    r"""Probability that :math:`k` more topics and :math:`m` more runs settle the decision.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.ReplicateFit`.
    challenger
        The challenger (default: the fit's first challenger).
    champion
        Override the fit's champion.
    topics
        Numbers of new topics :math:`k` (rows of the grid; default
        :data:`bayes_ir.defaults.MORE_RUNS_TOPICS`).
    runs
        Numbers of new runs :math:`m` of the challenger and of the champion each
        (columns; default :data:`bayes_ir.defaults.MORE_RUNS_RUNS`).
    cost_topic, cost_run
        Cost of one new topic and of one new run of one system: a cell costs
        :math:`k\,c_\text{topic} + 2m\,c_\text{run}`.
    over
        ``"expectation"`` (default) or ``"single_run"``: the contrast decided on, as in
        :func:`~bayes_ir.decision.replicates.decide_replicates`.
    margin, mode, threshold, p_min
        The decision rule, as in :func:`bayes_ir.decide`.
    target
        The P(decided) for which the cheapest cell is named (default
        :data:`bayes_ir.defaults.MORE_RUNS_TARGET`).
    n_sim
        Simulations per cell (default :data:`bayes_ir.defaults.MORE_TOPICS_SIMULATIONS`).
    seed
        Random seed (default :data:`bayes_ir.defaults.SEED`).

    Returns
    -------
    MoreRuns

    Notes
    -----
    The derivation of the variance of the contrast estimate and the procedure are in
    :mod:`bayes_ir.decision.more_runs`. The current topics :math:`T` are those both
    systems scored; :math:`R_c`, :math:`R_h` their runs (an incomplete table is treated
    as complete: a small approximation).

    P(decided) rises with more data when the decision is open now. When it is settled
    now, but by a narrow margin, a little more data can unsettle it (the rule is applied
    afresh to the updated posterior, whose mean may move back across the break-even
    point), so the grid can dip before it climbs again.
    """
    validate.choice("over", over, OVER)
    measures = sorted(set(fit.design.measures.values()))
    margin, threshold, p_min = check_options(
        margin=margin, mode=mode, r=1.0, threshold=threshold, p_min=p_min,
        measure=measures[0] if len(measures) == 1 else None,
    )  # fmt: skip
    ks = _grid("topics", topics)
    ms = _grid("runs", runs)
    cost_topic = validate.finite_float("cost_topic", cost_topic, minimum=0.0)
    cost_run = validate.finite_float("cost_run", cost_run, minimum=0.0)
    target = validate.probability("target", target)
    n_sim = validate.positive_int("n_sim", n_sim)
    seed = validate.seed(seed)
    res = fit.contrasts(champion=champion, challengers=None if challenger is None else [challenger])
    name, champ = res.challengers[0], res.champion
    systems = list(res.systems)
    d = res.expectation[:, 0]
    sigma = fit.term_draws("sigma")[:, 0]
    psi = fit.term_draws("sigma_topic_system")[:, 0]
    kappa = fit.replicate_sd_draws()
    kc, kh = kappa[:, systems.index(name)], kappa[:, systems.index(champ)]
    cells = fit.design.cells
    per_system = cells[cells["system"].isin([name, champ])]
    n_t = int(per_system.groupby("topic")["system"].nunique().eq(2).sum())
    rc, rh = res.n_runs(name), res.n_runs(champ)

    def plug(x: np.ndarray) -> float:
        return float(np.sqrt(np.mean(x**2)))

    hat = {"sigma": plug(sigma), "psi": plug(psi), "kappa_challenger": plug(kc),
           "kappa_champion": plug(kh)}  # fmt: skip
    mu, v = float(d.mean()), float(d.var(ddof=1))
    extra = hat["kappa_challenger"] ** 2 + hat["kappa_champion"] ** 2 if over == "single_run" else 0
    shift = shift_of(margin, mode)
    now = res.draws(over)[:, 0]
    l_dep, l_keep = expected_losses(now, shift)
    action_now = str(choose((now > shift).mean(), l_dep, l_keep, threshold=threshold, p_min=p_min))

    rng = np.random.default_rng(seed)
    pick = rng.integers(0, d.size, size=n_sim)
    z = rng.standard_normal(n_sim)
    truth = {"sigma": sigma[pick], "psi": psi[pick], "kappa_challenger": kc[pick],
             "kappa_champion": kh[pick]}  # fmt: skip
    v_now_true = mean_difference_variance(n_t, rc, rh, **truth)
    v_now_hat = mean_difference_variance(n_t, rc, rh, **hat)
    rows = []
    for k in ks:
        for m in ms:
            if k == 0 and m == 0:
                info_hat, noise = 0.0, np.zeros(n_sim)
                x_term = np.zeros(n_sim)
            else:
                info_true = 1 / mean_difference_variance(n_t + k, rc + m, rh + m, **truth)
                info_true = info_true - 1 / v_now_true
                info_hat = float(
                    1 / mean_difference_variance(n_t + k, rc + m, rh + m, **hat) - 1 / v_now_hat
                )
                noise = z / np.sqrt(info_true)
                x_term = info_hat * (d[pick] + noise)
            v_new = 1.0 / (1.0 / v + info_hat)
            mu_new = v_new * (mu / v + x_term)
            sd = float(np.sqrt(v_new + extra))
            loss_deploy = gaussian_positive_part(shift - mu_new, sd)
            loss_keep = gaussian_positive_part(mu_new - shift, sd)
            p_above = special.ndtr((mu_new - shift) / sd)
            action = choose(p_above, loss_deploy, loss_keep, threshold=threshold, p_min=p_min)
            p = {a: float(np.mean(action == a)) for a in ACTIONS}
            decided = p[ACTIONS[0]] + p[ACTIONS[1]]
            rows.append(
                {
                    "topics_added": k,
                    "runs_added": m,
                    "p_deploy": p[ACTIONS[0]],
                    "p_keep": p[ACTIONS[1]],
                    "p_undecided": p[ACTIONS[2]],
                    "p_decided": decided,
                    "expected_loss": float(np.minimum(loss_deploy, loss_keep).mean()),
                    "sd_after": sd,
                    "cost": k * cost_topic + SYSTEMS_RUN * m * cost_run,
                    "mc_se": float(np.sqrt(decided * (1 - decided) / n_sim)),
                }
            )
    grid = pd.DataFrame(rows, columns=list(MORE_RUNS_COLUMNS))
    cheapest, sooner = _choose_cell(grid, target)
    current = {
        "topics": n_t,
        "runs_challenger": rc,
        "runs_champion": rh,
        "mean": float(now.mean()),
        "sd": float(now.std(ddof=1)),
        "sigma": hat["sigma"],
        "sigma_topic_system": hat["psi"],
        "run_sd_challenger": hat["kappa_challenger"],
        "run_sd_champion": hat["kappa_champion"],
        "action": action_now,
    }
    return MoreRuns(
        champion=champ,
        challenger=name,
        over=over,
        mode=mode,
        margin=margin,
        threshold=threshold,
        p_min=p_min,
        target=target,
        cost_topic=cost_topic,
        cost_run=cost_run,
        n_sim=n_sim,
        seed=seed,
        grid=grid,
        current=current,
        cheapest=cheapest,
        sooner=sooner,
        header=res.header,
        measure=res.measure,
        diagnostics_passed=res.gate.passed,
        misfit=tuple(s for s in res.misfit if s in (name, champ)),
    )
