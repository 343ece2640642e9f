r"""The review of systems with several runs each: both decisions, the runs, the t-test cross-check.

:func:`review_runs` fits the model of runs (:func:`bayes_ir.hierarchical.fit_replicates`),
decides on both quantities (:func:`bayes_ir.decide` with ``over="expectation"``: the
contrast in expectation over seeds, and ``over="single_run"``: one run of each, drawn at
random), reports :math:`P(\text{a random run of the challenger beats one of the
champion})`, the spread of every system's runs beside its expected score, the variance
components, the model check of the runs (flagged systems marked), for every undecided
challenger the plan of more topics or more seeds (:func:`bayes_ir.decision.more_runs`),
and beside it the frequentist cross-check: the paired t-test on the per-topic means over
seeds (:func:`bayes_ir.paired_tests` of :meth:`ScoreTable.mean_over_replicates
<bayes_ir.table.ScoreTable.mean_over_replicates>`), which ignores the run-to-run
variance. :meth:`RunsReview.to_html` renders one self-contained HTML file (figures
inline as SVG, no script, no network request).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.errors import OptionError
from bayes_ir.provenance import input_hashes, package_versions
from bayes_ir.report.numbers import format_probability
from bayes_ir.table import ScoreTable

__all__ = ["CROSS_CHECK_COLUMNS", "RunsReview", "review_runs"]

_PACKAGES = ("bayes_ir", "numpy", "scipy", "pandas", "xarray", "statsmodels", "matplotlib",
             "jinja2")  # fmt: skip
#: The two quantities decided on, in the order the review shows them.
_OVERS: tuple[str, ...] = ("expectation", "single_run")
#: How each quantity is named in the headline and the headings.
_OVER_WORDS = {"expectation": "in expectation over seeds", "single_run": "on one run of each"}
#: Columns of :meth:`RunsReview.cross_check`.
CROSS_CHECK_COLUMNS: tuple[str, ...] = (
    "challenger",
    "method",
    "estimate",
    "ci_lower",
    "ci_upper",
    "probability",
    "topics",
)
_T_METHOD = "paired t-test, per-topic means over seeds"


@dataclass(frozen=True)
class RunsReview:
    """A review of systems with several runs each (seeds, folds, samples).

    Build it with :func:`review_runs`. The attributes are the result objects of the
    methods, so every number in the report can be traced to a public call.

    Attributes
    ----------
    table
        The scores with roles and a ``replicate`` column.
    fit
        The :class:`~bayes_ir.hierarchical.ReplicateFit`.
    contrasts
        Its :class:`~bayes_ir.hierarchical.replicate_effects.ReplicateContrasts`.
    decisions
        ``{"expectation": Decision, "single_run": Decision}`` (:func:`bayes_ir.decide`).
    plans
        ``{(over, challenger): MoreRuns}`` for every challenger a decision leaves
        undecided (:func:`bayes_ir.decision.more_runs`).
    paired
        :func:`bayes_ir.paired_tests` (the t-test) of the per-topic means over seeds.
    provenance
        Inputs and their SHA-256, the data hash, the runs per system, roles, options,
        seeds, versions, command, date.
    """

    table: ScoreTable
    fit: Any
    contrasts: Any
    decisions: dict[str, Any]
    plans: dict[tuple[str, str], Any]
    paired: Any
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def reliable(self) -> bool:
        """True when both decisions could be taken (diagnostics passed, no misfit)."""
        return all(d.overall != "unreliable" for d in self.decisions.values())

    def headline(self) -> str:
        """One sentence per quantity decided on, and P(a random run beats the champion's)."""
        return " ".join(self.headline_lines())

    def headline_lines(self) -> list[str]:
        """Return the sentences of :meth:`headline`, one per line of the page."""
        parts = []
        for over, d in self.decisions.items():
            acts = "; ".join(f"{c}: {a}" for c, a in d.actions.items())
            parts.append(f"{_OVER_WORDS[over].capitalize()}: {acts}.")
        runs = self.decisions["expectation"].runs
        beats = ", ".join(
            f"{r.challenger} {format_probability(r.p_run_beats)}"
            for r in runs.itertuples(index=False)
        )
        parts.append(f"P(a random run beats {self.contrasts.champion}'s): {beats}.")
        if not self.fit.diagnostics.passed:
            parts.insert(0, "UNRELIABLE (diagnostics failed).")
        elif self.contrasts.misfit:
            parts.insert(0, f"UNRELIABLE (the model of runs does not describe "
                            f"{', '.join(self.contrasts.misfit)}).")  # fmt: skip
        return parts

    def cross_check(self) -> pd.DataFrame:
        """Return the model's contrast in expectation beside the paired t-test, per challenger.

        Columns :data:`CROSS_CHECK_COLUMNS`. The Bayesian row: posterior mean and
        equal-tailed interval of the contrast in expectation over seeds, ``probability``
        P(contrast > 0); the t-test row: the mean of the per-topic differences of the
        means over seeds, its t interval (:func:`scipy.stats.ttest_rel`) and the
        two-sided p-value (adjusted as :attr:`paired` says). The t-test's interval leaves
        out the run-to-run variance: the runs' deviations are shared by every topic, so
        they shift all the per-topic differences alike and never enter their spread.
        """
        from scipy import stats

        c = self.contrasts
        lo, hi = (1 - c.ci_prob) / 2, (1 + c.ci_prob) / 2
        means: pd.DataFrame = self.table.mean_over_replicates().matrix().to_pandas()
        tests = self.paired.to_frame().set_index("challenger")
        rows = []
        for j, chal in enumerate(c.challengers):
            x = c.expectation[:, j]
            rows.append((chal, "Bayesian, in expectation over seeds", float(x.mean()),
                         *np.quantile(x, [lo, hi]), float((x > 0).mean()),
                         int(tests.at[chal, "topics"])))  # fmt: skip
            pair = means[[c.champion, chal]].dropna()
            res = stats.ttest_rel(pair[chal], pair[c.champion])
            ci = res.confidence_interval(confidence_level=c.ci_prob)
            rows.append((chal, _T_METHOD, float(tests.at[chal, "mean_difference"]),
                         float(ci.low), float(ci.high), float(tests.at[chal, "p_adjusted"]),
                         len(pair)))  # fmt: skip
        return pd.DataFrame(rows, columns=list(CROSS_CHECK_COLUMNS))

    def summary(self) -> str:
        """Return the headline, the contrasts and variance components, and the cross-check."""
        check = self.cross_check().to_string(index=False, float_format=lambda v: f"{v:.4f}")
        return "\n".join([self.headline(), "", self.contrasts.summary(), "", check])

    def __str__(self) -> str:
        return self.summary()

    def to_html(self, path: str | Path | None = None) -> str | Path:
        """Render the review as one HTML file (returned as text when ``path`` is None)."""
        from bayes_ir.report.html import html_output

        return html_output(render_runs(self), path)

    def save(self, path: str | Path) -> Path:
        """Write :meth:`to_html` to ``path`` atomically and return the path."""
        return Path(self.to_html(path))


def _interval(lo: float, hi: float) -> str:
    return f"[{lo:+.4f}, {hi:+.4f}]"


def _probability(value: float, bayes: bool) -> str:
    """``P(better) 0.946`` for the model, ``p = 0.012`` or ``p < 0.001`` for the t-test."""
    text = format_probability(value)
    if bayes:
        return f"P(better) {text}"
    return f"p {text[0]} {text[1:]}" if text[0] in "<>" else f"p = {text}"


def _decision_context(review: RunsReview) -> list[dict[str, Any]]:
    from bayes_ir.report.html import action_style
    from bayes_ir.report.marks import marked

    c = review.contrasts
    out = []
    for over, d in review.decisions.items():
        rows = []
        for r in d.table.itertuples(index=False):
            css, mark = action_style(r.action)
            rows.append({"challenger": r.challenger, "name": marked(r.challenger, c.misfit),
                         "action": r.action, "css": css, "mark": mark,
                         "mean": f"{r.mean:+.4f}", "interval": _interval(r.ci_lower, r.ci_upper),
                         "p_better": format_probability(r.p_better),
                         "p_worse": format_probability(r.p_worse),
                         "loss_deploy": f"{r.loss_deploy:.4f}", "loss_keep": f"{r.loss_keep:.4f}",
                         "reason": r.reason})  # fmt: skip
        out.append({"over": over, "words": _OVER_WORDS[over], "rule": d.rule,
                    "overall": d.overall, "rows": rows})  # fmt: skip
    return out


#: Below this P(decided) in every cell, the plan's heat map is left out (one sentence says so).
_PLAN_FIGURE_MIN = 0.05


def _plan_context(review: RunsReview) -> list[dict[str, Any]]:
    from bayes_ir.report.html import figure_svg
    from bayes_ir.report.more_runs import more_runs_line

    out = []
    for (over, chal), plan in review.plans.items():
        cheapest = None
        if plan.cheapest is not None and plan.sooner != "settled":
            cell = plan.cell(*plan.cheapest)
            cheapest = {"topics": plan.cheapest[0], "runs": plan.cheapest[1],
                        "cost": f"{cell.cost:g}", "p": format_probability(cell.p_decided),
                        "p_deploy": format_probability(cell.p_deploy),
                        "p_keep": format_probability(cell.p_keep)}  # fmt: skip
        line = more_runs_line(plan)
        figure = None
        if float(plan.grid["p_decided"].max()) >= _PLAN_FIGURE_MIN:
            caption = (
                f"{chal} vs {plan.champion}, decided {_OVER_WORDS[over]}: the probability "
                f"that the decision is settled (deploy or keep the champion) after adding "
                f"topics (rows) and runs of the challenger and of the champion each "
                f"(columns); every cell gives its cost (a topic {plan.cost_topic:g}, a run "
                f"{plan.cost_run:g})"
                + (f"; the frame marks the cheapest cell reaching {plan.target:g}."
                   if plan.cheapest is not None else ".")
            )  # fmt: skip
            label = f"more topics or seeds {chal} {over}"
            figure = {"svg": figure_svg(plan.plot(), label=label), "caption": caption}
        else:
            line += f" (Heat map left out: every cell of the grid is below {_PLAN_FIGURE_MIN:g}.)"
        out.append({"over": over, "words": _OVER_WORDS[over], "challenger": chal,
                    "line": line, "cheapest": cheapest, "figure": figure})  # fmt: skip
    return out


def _model_check_context(review: RunsReview) -> dict[str, Any]:
    from bayes_ir.report.marks import marked

    check = review.fit.model_check
    out: dict[str, Any] = {"rows": [], "flagged": [], "text": "", "checks": []}
    if check is None:
        return out
    frame = check.to_frame()
    names = list(dict.fromkeys(frame["check"]))
    out["checks"] = names
    for system, part in frame.groupby("system", sort=False):
        p = part.set_index("check")
        failed = [k for k in names if k in p.index and bool(p.at[k, "failed"])]
        out["rows"].append({
            "system": system, "name": marked(str(system), check.flagged),
            "role": part["role"].iloc[0], "runs": int(part["n_runs"].iloc[0]),
            "p": [format_probability(p.at[k, "p_value"]) if k in p.index
                  and np.isfinite(p.at[k, "p_value"]) else "n/a" for k in names],
            "verdict": f"FLAGGED: {', '.join(failed)}" if failed else "ok",
        })  # fmt: skip
    out["flagged"] = list(check.flagged)
    out["text"] = check.summary()
    return out


def render_runs(review: RunsReview) -> str:
    """Render a :class:`RunsReview` with ``templates/review_runs.html.j2``."""
    from bayes_ir.hierarchical.replicate_effects import COMPONENTS
    from bayes_ir.report.html import environment, figure_svg
    from bayes_ir.report.marks import marked, misfit_legend

    c = review.contrasts
    pct = f"{100 * c.ci_prob:g}%"
    runs_caption = (
        f"Every system's runs: each open grey dot is one run's mean {c.measure} over the "
        f"topics; the bar is the {pct} interval of the system's expected score over the "
        f"population of runs and topics, the filled dot its posterior mean; the champion "
        f"{c.champion} in red. Dots spread wide around the bar: a single run says little "
        "about the system; the decision on one run of each carries that spread."
    )
    runs_figure = {"svg": figure_svg(c.plot(), label="runs per system"), "caption": runs_caption}
    labels = dict(COMPONENTS)
    components = [
        {"name": labels[r.component] + (f", {r.system}" if r.system else ""),
         "mean": f"{r.mean:.4f}",
         "interval": f"[{r.ci_lower:.4f}, {r.ci_upper:.4f}]"}
        for r in c.components_frame().itertuples(index=False)
    ]  # fmt: skip
    runs = [
        {"challenger": marked(r.challenger, c.misfit), "runs": f"{r.runs_challenger} vs "
         f"{r.runs_champion}", "sd": f"{r.run_sd_challenger:.4f} vs {r.run_sd_champion:.4f}",
         "p_expectation": format_probability(r.p_better_expectation),
         "p_run": format_probability(r.p_run_beats)}
        for r in review.decisions["expectation"].runs.itertuples(index=False)
    ]  # fmt: skip
    check = []
    for r in review.cross_check().itertuples(index=False):
        bayes = not r.method.startswith("paired")
        check.append({"challenger": marked(r.challenger, c.misfit), "method": r.method,
                      "estimate": f"{r.estimate:+.4f}",
                      "interval": _interval(r.ci_lower, r.ci_upper),
                      "probability": _probability(r.probability, bayes),
                      "topics": r.topics})  # fmt: skip
    correction = review.paired.correction
    return (
        environment()
        .get_template("review_runs.html.j2")
        .render(
            title=f"Review of runs: {c.champion} vs {', '.join(c.challengers)}",
            c=c,
            pct=pct,
            headline=review.headline_lines(),
            reliable=review.reliable,
            diagnostics_passed=review.fit.diagnostics.passed,
            banner=c.gate.banner(),
            decisions=_decision_context(review),
            runs=runs,
            runs_figure=runs_figure,
            components=components,
            sigma_replicate=review.fit.sigma_replicate,
            model=_model_check_context(review),
            misfit_legend=misfit_legend(
                review.fit,
                c.misfit,
                champion=c.champion,
                consequence="no decision is taken for "
                + ("it" if len(c.misfit) == 1 else "them")
                + " (unreliable)",
            ),  # fmt: skip
            plans=_plan_context(review),
            check=check,
            correction="none" if correction == "none" else f"{correction}-adjusted",
            diagnostics=review.fit.diagnostics.checks().to_dict("records"),
            provenance=review.provenance,
        )
    )


def review_runs(
    table: ScoreTable,
    *,
    sigma_replicate: str = "pooled",
    margin: float | None = None,
    ci_prob: float | None = None,
    seed: int | None = None,
    cost_topic: float = 1.0,
    cost_run: float = 1.0,
    fit: Any = None,
    inputs: Iterable[str | Path] = (),
    command: str = "",
    **fit_options: Any,
) -> RunsReview:
    """Fit the model of runs, decide both ways, plan more data and cross-check with a t-test.

    Parameters
    ----------
    table
        Scores of one collection and one measure with roles and a ``replicate`` column
        (several runs per system: seeds, folds, samples).
    sigma_replicate
        ``"pooled"`` (one run-to-run SD) or ``"system"`` (one per system); see
        :func:`bayes_ir.hierarchical.fit_replicates`.
    margin
        The decisions' margin, in the measure's units (default
        :data:`bayes_ir.defaults.DECISION_MARGIN`).
    ci_prob, seed
        Interval probability; seed of the sampler and of the plans.
    cost_topic, cost_run
        Cost of one more topic and of one more run of one system, for the plan of more
        topics or more seeds of every undecided challenger.
    fit
        A :class:`~bayes_ir.hierarchical.ReplicateFit` of ``table`` to use instead of
        fitting.
    inputs, command
        The input files (hashed into the provenance) and the command line.
    **fit_options
        Passed on to :func:`bayes_ir.hierarchical.fit_replicates` (``draws``,
        ``chains``, ``tune``, ``method``...).

    Returns
    -------
    RunsReview
    """
    from bayes_ir.decision import check_options, decide, more_runs
    from bayes_ir.errors import ConvergenceWarning, ModelCheckWarning
    from bayes_ir.frequentist import paired_tests
    from bayes_ir.hierarchical import ReplicateFit, fit_replicates

    validate.instance("table", table, ScoreTable)
    if not table.has_replicates:
        raise OptionError("review_runs needs several runs per system (a replicate column): "
                          "use bayes_ir.review for one score per cell")  # fmt: skip
    if table.champion is None or not table.challengers:
        raise OptionError("review needs a champion and at least one challenger (with_roles)")
    seed = validate.seed(seed)
    p = defaults.ci_prob(ci_prob)
    measure = table.measures[0] if len(table.measures) == 1 else None
    margin, _, _ = check_options(margin=margin, mode="superiority", r=1.0, threshold=None,
                                 p_min=None, measure=measure)  # fmt: skip
    cost_topic = validate.finite_float("cost_topic", cost_topic, minimum=0.0)
    cost_run = validate.finite_float("cost_run", cost_run, minimum=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the review says UNRELIABLE
        warnings.simplefilter("ignore", ModelCheckWarning)  # marked in the review
        if fit is None:
            fit = fit_replicates(table, sigma_replicate=sigma_replicate, seed=seed,
                                 **fit_options)  # fmt: skip
        else:
            validate.instance("fit", fit, ReplicateFit)
    contrasts = fit.contrasts(ci_prob=p)
    decisions = {over: decide(fit, over=over, margin=margin, ci_prob=p) for over in _OVERS}
    plans = {
        (over, r.challenger): more_runs(fit, r.challenger, over=over, margin=margin,
                                        cost_topic=cost_topic, cost_run=cost_run, seed=seed)
        for over, d in decisions.items()
        for r in d.table.itertuples(index=False)
        if r.action == "collect more data"
    }  # fmt: skip
    means = table.mean_over_replicates()
    paired = paired_tests(means, champion=contrasts.champion,
                          challengers=list(contrasts.challengers), test="t")  # fmt: skip
    per_system = {s: list(table.replicates(s)) for s in contrasts.systems}
    provenance = {
        "inputs": input_hashes(inputs),
        "notes": list(table.notes),
        "data_hash": fit.provenance.get("data_hash"),
        "collection": ", ".join(map(str, table.collections)),
        "measure": contrasts.measure,
        "topics": len(table.topics),
        "runs": per_system,
        "champion": contrasts.champion,
        "challengers": list(contrasts.challengers),
        "sigma_replicate": fit.sigma_replicate,
        "method": fit.method,
        "chains": fit.provenance.get("chains"),
        "draws": fit.n_draws,
        "seed": fit.provenance.get("seed"),
        "plan_seed": seed,
        "margin": margin,
        "ci_prob": p,
        "cost_topic": cost_topic,
        "cost_run": cost_run,
        "command": command or "bayes_ir.review(...)",
        "versions": package_versions(_PACKAGES),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    return RunsReview(table=table, fit=fit, contrasts=contrasts, decisions=decisions,
                      plans=plans, paired=paired, provenance=provenance)  # fmt: skip
