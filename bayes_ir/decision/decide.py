r"""Deploy, keep the champion, or collect more data: :func:`decide` and :class:`Decision`."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.decision.more_topics import more_topics as _more_topics
from bayes_ir.decision.more_topics import sakai_topics
from bayes_ir.decision.rules import (
    ACTIONS,
    MODES,
    UNRELIABLE,
    choose,
    expected_losses,
    reliable_action,
    risk_adjusted_difference,
    shift_of,
    three_way,
)
from bayes_ir.errors import OptionError

__all__ = ["DECISION_COLUMNS", "RUN_COLUMNS", "Decision", "check_options", "decide"]

#: Columns of :meth:`Decision.to_frame`.
DECISION_COLUMNS = (
    "challenger",
    "champion",
    "mode",
    "margin",
    "r",
    "observed",
    "mean",
    "pooled_share",
    "ci_lower",
    "ci_upper",
    "p_better",
    "p_equivalent",
    "p_worse",
    "p_noninferior",
    "p_best",
    "loss_deploy",
    "loss_keep",
    "threshold",
    "fit",
    "action",
    "reason",
)
#: Columns of :attr:`Decision.runs` (a fit of several runs per system): the runs and
#: run-to-run SDs (posterior means) of each challenger and the champion,
#: P(expectation contrast > 0) and P(a random run of the challenger beats a random run of
#: the champion).
RUN_COLUMNS = (
    "challenger",
    "runs_challenger",
    "runs_champion",
    "run_sd_challenger",
    "run_sd_champion",
    "p_better_expectation",
    "p_run_beats",
)
#: What a decision of a fit of runs is taken on, as the rule states it.
_RUN_QUANTITY = {
    "expectation": " in expectation over seeds (the systems' expected scores over the "
    "population of runs)",
    "single_run": " of one run of each, drawn at random: the run-to-run variance included",
}


@dataclass(frozen=True)
class Decision:
    r"""The decision for each challenger against the champion, and what would settle it.

    Build it with :func:`decide`. Attributes hold raw numbers; the methods format.

    Attributes
    ----------
    champion, challengers
        The systems compared.
    mode
        ``"superiority"`` or ``"non_inferiority"``.
    margin
        The margin :math:`m`, in the measure's units.
    r
        Loss weight of the risk-adjusted difference (1: plain difference).
    threshold
        Threshold of caring :math:`\varepsilon` on the expected loss.
    p_min
        Decision probability.
    ci_prob
        Probability of the reported intervals.
    table
        One row per challenger, :data:`DECISION_COLUMNS`.
    best
        One row per system (champion first): ``system, p_best, expected_loss`` (the
        expected loss of picking that system: :math:`E[\max_j \theta_j - \theta_i]`).
    more_topics
        For each undecided challenger, the pre-posterior table of
        :func:`bayes_ir.decision.more_topics.more_topics` with a ``challenger`` column
        and Sakai's t-test topic-set size beside it; empty when nothing is undecided.
    diagnostics_passed
        Whether the posterior passed its diagnostics gate.
    misfit
        Systems (champion or challengers) the model check flagged.
    borderline
        Systems (champion or challengers) whose model check is borderline (a p-value
        within its Monte Carlo band of the cut-off; see
        :mod:`bayes_ir.hierarchical.adequacy`): not flagged, so their decision stands,
        and the ``reason`` says so.
    header
        One line naming the data and the model.
    measure
        The measure the margin is in.
    collection
        The collection of the fit's table.
    notes
        What the loader changed or left out in the fit's table (topics scored 0, columns
        left out, run tags split): the table's :attr:`~bayes_ir.table.ScoreTable.notes`.
    over
        For a fit across collections or segments
        (:func:`~bayes_ir.decision.across.decide_across`): ``"average"`` (decided on
        the overall contrast) or ``"new"`` (on the contrast on a new group); for a fit
        of several runs per system (:func:`~bayes_ir.decision.replicates.decide_replicates`):
        ``"expectation"`` (in expectation over seeds) or ``"single_run"`` (one run of
        each); ``None`` otherwise.
    by
        ``"collection"`` or ``"segment"`` with ``over`` across groups; ``"run"`` for a
        fit of runs.
    runs
        For a fit of runs: one row per challenger, :data:`RUN_COLUMNS` (its
        ``p_run_beats`` is P(a random run of the challenger beats a random run of the
        champion), whichever quantity was decided on); ``None`` otherwise.
    comparison
        The :class:`~bayes_ir.hierarchical.Comparison` the decision was read from (its
        ``pooling`` says why ``mean`` differs from ``observed``).

    Notes
    -----
    Columns of :meth:`to_frame` beside the decision's: ``fit`` is the model check of the
    challenger and the champion, as in :meth:`bayes_ir.hierarchical.Comparison.to_frame`
    (``ok``, the failed checks, ``borderline: checks`` or ``n/a``); ``observed`` is the raw mean
    difference over the topics both systems have (the paired tests' mean difference),
    ``pooled_share`` is ``1 - d / observed`` for the posterior mean ``d`` of the plain
    difference of system means (as in :meth:`bayes_ir.hierarchical.Comparison.to_frame`;
    with ``r > 1``, ``mean`` is the risk-adjusted difference instead).
    """

    champion: str
    challengers: tuple[str, ...]
    mode: str
    margin: float
    r: float
    threshold: float
    p_min: float
    ci_prob: float
    table: pd.DataFrame
    best: pd.DataFrame
    more_topics: pd.DataFrame
    diagnostics_passed: bool
    misfit: tuple[str, ...]
    header: str
    measure: str | None = None
    collection: str | None = None
    over: str | None = None
    by: str | None = None
    comparison: Any = None
    borderline: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    runs: pd.DataFrame | None = None

    @property
    def pooling(self) -> Any:
        """How the fit pooled the system effects (:class:`~bayes_ir.hierarchical.Pooling`)."""
        return None if self.comparison is None else self.comparison.pooling

    @property
    def actions(self) -> dict[str, str]:
        """Map each challenger to its action.

        The actions are ``deploy``, ``keep champion``, ``collect more data`` or ``unreliable``.
        """
        return dict(zip(self.table["challenger"], self.table["action"], strict=True))

    @property
    def overall(self) -> str:
        """Return one action for the release.

        ``deploy`` if some challenger is deployable (its own posterior and model check
        passed); else ``unreliable`` if some challenger's posterior or model cannot be
        trusted; else ``collect more data`` if some challenger is undecided; else ``keep
        champion``.
        """
        acts = set(self.table["action"])
        for action in (ACTIONS[0], UNRELIABLE, ACTIONS[2]):
            if action in acts:
                return action
        return ACTIONS[1]

    @property
    def rule(self) -> str:
        """The rule that turns the numbers into the word, in one sentence."""
        s = "+" if self.mode == "superiority" else "-"
        weighted = "" if self.r == 1 else f" (risk-adjusted with r = {self.r:g})"
        if self.over in _RUN_QUANTITY:
            weighted += _RUN_QUANTITY[self.over]
        elif self.over is not None:
            weighted += (
                f" averaged over the population of {self.by}s (the overall contrast)"
                if self.over == "average"
                else f" on a new {self.by} (overall contrast + between-{self.by} variation)"
            )
        return (
            f"Utility of deploying: difference{weighted} {'-' if s == '+' else '+'} margin "
            f"{self.margin:g}; expected losses L_deploy = E[(s - d)+], L_keep = E[(d - s)+] "
            f"with s = {s}{self.margin:g}; deploy when P(d > s) >= {self.p_min:g} and L_deploy "
            f"<= {self.threshold:g} (threshold of caring); keep the champion when P(d < s) >= "
            f"{self.p_min:g} and L_keep <= {self.threshold:g}; otherwise collect more data. A "
            "failed diagnostics gate or a misfitting model is 'unreliable', never 'deploy'."
        )

    def to_frame(self) -> pd.DataFrame:
        """Return the decision table, one row per challenger (:data:`DECISION_COLUMNS`)."""
        return self.table.copy()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Header, rule, the decision table, the more-topics table, and what the model did.

        Text; never prints. The last lines give each challenger's observed difference
        beside the model's and why they differ
        (:func:`bayes_ir.hierarchical.shrinkage_lines`).
        """
        from bayes_ir.hierarchical import shrinkage_lines
        from bayes_ir.report.decision import decision_summary

        text = decision_summary(self)
        if self.comparison is None:
            return text
        lines = shrinkage_lines(self.comparison.to_frame(), self.pooling)
        return "\n".join([text, "", *lines])

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.table.to_html(index=False)

    def plot(self, **kwargs: Any) -> Any:
        """Three-way probabilities per challenger and the more-topics curves.

        See :func:`bayes_ir.plots.decision.plot_decision`.
        """
        from bayes_ir.plots.decision import plot_decision

        return plot_decision(self, **kwargs)


#: The option names of :func:`check_options`' messages: the keyword arguments.
API_NAMES = {"margin": "margin", "r": "r", "threshold": "threshold", "p_min": "p_min",
             "mode": "mode"}  # fmt: skip


def check_options(
    *,
    margin: float | None,
    mode: str,
    r: float,
    threshold: float | None,
    p_min: float | None,
    measure: str | None = None,
    names: Mapping[str, str | None] | None = None,
) -> tuple[float, float, float]:
    """Check the decision options and fill their defaults: ``(margin, threshold, p_min)``.

    Raises :class:`~bayes_ir.errors.OptionError` naming the first bad option; called by
    :func:`decide` and, before any fitting, by ``bayes-ir decide`` and ``bayes-ir review``.

    Parameters
    ----------
    margin, mode, r, threshold, p_min
        As in :func:`decide`.
    measure
        The measure the margin and threshold are in: each must be narrower than its
        range (below 1 for a measure in [0, 1]; :func:`bayes_ir.validate.measure_margin`).
    names
        How the messages name each option (default :data:`API_NAMES`): the CLI passes
        ``{"margin": "--margin", ...}``; an option set to ``None`` has no spelling there
        (``review`` has no ``--threshold``: the message says how to change it instead).
    """
    said = {**API_NAMES, **(names or {})}
    margin = defaults.DECISION_MARGIN if margin is None else margin
    for key, value in (("margin", margin), ("r", r)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise OptionError(f"{said[key]} must be a number, got {value!r}")
    margin, r = float(margin), float(r)
    if not np.isfinite(margin) or margin < 0:
        raise OptionError(
            f"{said['margin']} must be a finite number >= 0 (in the measure's units), got {margin}"
        )
    validate.measure_margin(said["margin"] or "margin", margin, measure)
    if mode not in MODES:
        raise OptionError(f"{said['mode']} must be one of {', '.join(MODES)}, got {mode!r}")
    if not np.isfinite(r) or not 1 <= r <= defaults.MAX_RISK_WEIGHT:
        raise OptionError(
            f"{said['r']} (loss weight, 1 + alpha) must be a finite number from 1 to "
            f"{defaults.MAX_RISK_WEIGHT:g}, got {r:g}"
        )
    if threshold is None:
        if margin == 0:
            if said["threshold"] is None:
                raise OptionError(
                    f"{said['margin']} must be greater than 0: the threshold of caring is "
                    f"{defaults.DECISION_THRESHOLD_FRACTION:g} of it"
                )
            cli = str(said["margin"]).startswith("--")
            raise OptionError(
                f"with {said['margin']}{' ' if cli else '='}0 the threshold of caring cannot "
                f"be derived from it: pass {said['threshold']}{'' if cli else '='}"
            )
        threshold = margin * defaults.DECISION_THRESHOLD_FRACTION
    threshold = float(threshold)
    if not np.isfinite(threshold) or threshold <= 0:
        raise OptionError(f"{said['threshold']} must be a finite number > 0, got {threshold}")
    validate.measure_margin(said["threshold"] or "threshold", threshold, measure,
                            what="threshold of caring")  # fmt: skip
    p_min = defaults.DECISION_PROBABILITY if p_min is None else float(p_min)
    if not 0.5 < p_min < 1:
        raise OptionError(f"{said['p_min']} must lie strictly between 0.5 and 1, got {p_min}")
    return margin, threshold, p_min


def _topic_variance(fit: Any, champion: str, challengers: Sequence[str]) -> np.ndarray:
    """Draws of the per-topic difference variance (sigma_c^2 + sigma_h^2), (n, challengers).

    On the measure's scale for every likelihood family
    (:func:`bayes_ir.hierarchical.difference_variance_draws`).
    """
    from bayes_ir.hierarchical import difference_variance_draws

    return difference_variance_draws(fit, champion, list(challengers))


def _flagged(fit: Any) -> tuple[str, ...]:
    """Systems the fit's model check flagged (none when the fit was made without one)."""
    return tuple(fit.model_check.flagged) if fit.model_check is not None else ()


def _borderline_note(check: Any, systems: Sequence[str]) -> str:
    """Clause of a reason: the borderline checks of ``systems`` and why they do not count."""
    parts = [
        f"{name} {c} {check.p_value(name, c)}"
        for name in systems
        for c in check.borderline_of(name)
    ]
    return (
        f"; model check borderline ({'; '.join(parts)}): not flagged, so the decision "
        "stands; look at the residuals before acting"
    )


def decide(
    fit: Any,
    *,
    margin: float | None = None,
    mode: str = "superiority",
    r: float = 1.0,
    threshold: float | None = None,
    p_min: float | None = None,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    ci_prob: float | None = None,
    topics: Sequence[int] | None = None,
    n_sim: int | None = None,
    seed: int | None = None,
    over: str | None = None,
) -> Decision:
    r"""Decide between deploying each challenger, keeping the champion, or collecting more data.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit`, an
        :class:`~bayes_ir.hierarchical.AcrossFit` (then
        :func:`~bayes_ir.decision.across.decide_across` decides, ``over=`` says on
        what; ``r``, ``topics`` and ``n_sim`` do not apply), or a
        :class:`~bayes_ir.hierarchical.ReplicateFit` (then
        :func:`~bayes_ir.decision.replicates.decide_replicates` decides; ``r``,
        ``topics``, ``n_sim`` and ``seed`` do not apply: the single-run draws are seeded
        by the fit's seed, and :func:`~bayes_ir.decision.more_runs.more_runs` plans more
        topics and runs).
    margin
        The margin :math:`m \ge 0` in the measure's units (default
        :data:`bayes_ir.defaults.DECISION_MARGIN`): the smallest gain worth deploying
        (superiority) or the largest loss a cheaper challenger may have
        (non-inferiority). Printed with every decision.
    mode
        ``"superiority"`` (deploy when better by more than the margin) or
        ``"non_inferiority"`` (deploy when not worse by more than the margin).
    r
        Loss weight :math:`r \ge 1` (URisk's :math:`1 + \alpha`): decide on the
        risk-adjusted difference of a new topic, which counts each unit lost on a topic
        :math:`r` times (Gaussian likelihood only).
    threshold
        Threshold of caring :math:`\varepsilon`: an action is taken when its expected loss
        is at most this (default: :data:`bayes_ir.defaults.DECISION_THRESHOLD_FRACTION`
        times the margin).
    p_min
        Decision probability: an action needs a posterior probability of at least this
        of being the right one (default :data:`bayes_ir.defaults.DECISION_PROBABILITY`).
    champion, challengers
        Override the roles stored with the fit.
    ci_prob
        Probability of the reported intervals of the difference.
    topics
        Grid of numbers of new topics for the more-topics analysis of undecided
        challengers (default :data:`bayes_ir.defaults.MORE_TOPICS`); ``()`` skips it.
    n_sim
        Simulations per number of topics (default
        :data:`bayes_ir.defaults.MORE_TOPICS_SIMULATIONS`).
    seed
        Random seed of the more-topics analysis.
    over
        Fits across collections or segments: ``"average"`` (default) or ``"new"``; fits
        of several runs per system: ``"expectation"`` (default) or ``"single_run"``.

    Returns
    -------
    Decision

    Notes
    -----
    With draws :math:`d^{(i)}` of the challenger minus the champion (difference of
    system means), :math:`P(d > m)`, :math:`P(|d| \le m)`, :math:`P(d < -m)` and
    :math:`P(d > -m)` are shares of draws; the expected losses and the rule are those of
    :mod:`bayes_ir.decision.rules`; the more-topics analysis is that of
    :mod:`bayes_ir.decision.more_topics`. Several challengers: :math:`P(\text{best})`
    is the share of draws in which a system has the highest mean, and the expected
    loss of picking system :math:`i` is :math:`E[\max_j \theta_j - \theta_i]` over the
    champion and the challengers.

    References
    ----------
    Benavoli, A., Corani, G., Demsar, J., and Zaffalon, M. (2017). Time for a change: a
    tutorial for comparing multiple classifiers through Bayesian analysis. *JMLR*
    18(77). Sakai, T. (2016). Topic set size design. *Information Retrieval Journal*
    19(3), 256-283.
    """
    from bayes_ir.hierarchical import AcrossFit, ReplicateFit, compare

    if isinstance(fit, AcrossFit):
        from bayes_ir.decision.across import decide_across

        if r != 1 or topics is not None or n_sim is not None:
            raise OptionError("r, topics and n_sim do not apply to a fit across groups")
        return decide_across(
            fit, over=over or "average", margin=margin, mode=mode, threshold=threshold,
            p_min=p_min, champion=champion, challengers=challengers, ci_prob=ci_prob, seed=seed,
        )  # fmt: skip
    if isinstance(fit, ReplicateFit):
        from bayes_ir.decision.replicates import decide_replicates

        if r != 1 or topics is not None or n_sim is not None or seed is not None:
            raise OptionError(
                "r, topics, n_sim and seed do not apply to a fit of runs (fit_replicates): "
                "plan more topics and runs with bayes_ir.decision.more_runs"
            )
        return decide_replicates(
            fit, over=over or "expectation", margin=margin, mode=mode, threshold=threshold,
            p_min=p_min, champion=champion, challengers=challengers, ci_prob=ci_prob,
        )  # fmt: skip
    if over is not None:
        raise OptionError(
            "over= applies to a fit across collections or segments (fit_across) or of "
            "several runs per system (fit_replicates)"
        )
    table = getattr(fit, "table", None)
    margin, threshold, p_min = check_options(
        margin=margin, mode=mode, r=r, threshold=threshold, p_min=p_min,
        measure=table.measures[0] if table is not None and len(table.measures) == 1 else None,
    )  # fmt: skip
    r = float(r)
    if r != 1 and getattr(fit, "likelihood", "gaussian") != "gaussian":
        raise OptionError(
            "risk-weighted decisions (r > 1) need the Gaussian likelihood (the risk-adjusted "
            "difference uses its per-topic error); for the skew-normal use bayes_ir.brisk"
        )
    topics = defaults.MORE_TOPICS if topics is None else tuple(int(k) for k in topics)
    if any(k < 1 for k in topics):
        raise OptionError(f"topics must be positive numbers of topics, got {list(topics)}")
    seed = defaults.SEED if seed is None else int(seed)
    n_sim = defaults.MORE_TOPICS_SIMULATIONS if n_sim is None else int(n_sim)
    if n_sim < 1:
        raise OptionError(f"n_sim must be a positive number of simulations, got {n_sim}")
    comparison = compare(fit, champion=champion, challengers=challengers, ci_prob=ci_prob)
    contrasts = comparison.to_frame().set_index("challenger")
    names = list(comparison.challengers)
    champ = comparison.champion
    d = comparison.differences.stack(sample=("chain", "draw")).transpose("sample", ...).values
    var_topic = _topic_variance(fit, champ, names)
    dr = risk_adjusted_difference(d, np.sqrt(var_topic), r)
    shift = shift_of(margin, mode)
    p_better, p_equiv, p_worse = three_way(dr, margin)
    loss_deploy, loss_keep = expected_losses(dr, shift)
    p_above = (dr > shift).mean(axis=0)
    raw = choose(p_above, loss_deploy, loss_keep, threshold=threshold, p_min=p_min)
    misfit = tuple(s for s in _flagged(fit) if s in (champ, *names))
    check = getattr(fit, "model_check", None)
    near = () if check is None else tuple(s for s in check.borderline if s in (champ, *names))
    fit_status = comparison.fit_status()
    passed = comparison.gate.passed

    means = fit.system_mean_draws().sel(system=[champ, *names])
    theta = means.stack(sample=("chain", "draw")).transpose("sample", "system").values
    best_idx = theta.argmax(axis=1)
    p_best = np.bincount(best_idx, minlength=theta.shape[1]) / theta.shape[0]
    regret = (theta.max(axis=1, keepdims=True) - theta).mean(axis=0)
    best = pd.DataFrame({"system": [champ, *names], "p_best": p_best, "expected_loss": regret})

    lo, hi = (1 - comparison.ci_prob) / 2, (1 + comparison.ci_prob) / 2
    rows, more = [], []
    for j, name in enumerate(names):
        action = reliable_action(
            str(raw[j]),
            diagnostics_passed=passed,
            model_fits=not ({name, champ} & set(misfit)),
        )
        reason = _reason(action, str(raw[j]), threshold, p_min, passed,
                         [s for s in (champ, name) if s in misfit])  # fmt: skip
        if action != UNRELIABLE and {name, champ} & set(near):
            reason += _borderline_note(check, [s for s in (champ, name) if s in near])
        rows.append(
            {
                "challenger": name,
                "champion": champ,
                "mode": mode,
                "margin": margin,
                "r": r,
                "observed": float(contrasts.loc[name, "observed"]),
                "mean": float(dr[:, j].mean()),
                "pooled_share": float(contrasts.loc[name, "pooled_share"]),
                "ci_lower": float(np.quantile(dr[:, j], lo)),
                "ci_upper": float(np.quantile(dr[:, j], hi)),
                "p_better": float(p_better[j]),
                "p_equivalent": float(p_equiv[j]),
                "p_worse": float(p_worse[j]),
                "p_noninferior": float((dr[:, j] > -margin).mean()),
                "p_best": float(p_best[1 + j]),
                "loss_deploy": float(loss_deploy[j]),
                "loss_keep": float(loss_keep[j]),
                "threshold": threshold,
                "fit": fit_status[j],
                "action": action,
                "reason": reason,
            }
        )
        if action == ACTIONS[2] and topics:
            frame = _more_topics(
                d[:, j], var_topic[:, j], margin=margin, mode=mode, threshold=threshold,
                p_min=p_min, r=r, topics=topics, n_sim=n_sim, seed=seed + j,
            )  # fmt: skip
            frame.insert(0, "challenger", name)
            sd_diff = float(np.sqrt(var_topic[:, j].mean()))
            min_d = margin if margin > 0 else abs(float(d[:, j].mean()))
            frame["sakai_total_topics"] = sakai_topics(sd_diff, min_d) if min_d > 0 else np.nan
            more.append(frame)
    measure = table.measures[0] if table is not None and len(table.measures) else None
    return Decision(
        champion=champ,
        challengers=tuple(names),
        mode=mode,
        margin=margin,
        r=r,
        threshold=threshold,
        p_min=p_min,
        ci_prob=comparison.ci_prob,
        table=pd.DataFrame(rows, columns=list(DECISION_COLUMNS)),
        best=best,
        more_topics=pd.concat(more, ignore_index=True) if more else pd.DataFrame(),
        diagnostics_passed=passed,
        misfit=misfit,
        header=comparison.header,
        measure=measure,
        collection=comparison.collection or None,
        notes=tuple(getattr(table, "notes", ())),
        comparison=comparison,
        borderline=near,
    )


def _reason(
    action: str,
    raw: str,
    threshold: float,
    p_min: float,
    passed: bool,
    misfit: list[str],
) -> str:
    """One clause saying why the action was taken (the numbers are in the other columns)."""
    if action == UNRELIABLE:
        if not passed:
            return "the posterior failed its diagnostics: refit as they say before deciding"
        return f"the model does not describe {' and '.join(misfit)}: see the model check"
    if raw == ACTIONS[0]:
        return f"P(d > s) >= {p_min:g} and L_deploy <= {threshold:g}"
    if raw == ACTIONS[1]:
        return f"P(d < s) >= {p_min:g} and L_keep <= {threshold:g}"
    return f"neither P(d > s) nor P(d < s) reaches {p_min:g} with its loss <= {threshold:g}"
