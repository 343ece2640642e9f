"""``bayes-ir decide``: deploy, keep the champion, or collect more data (and how many topics)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from bayes_ir import defaults
from bayes_ir.cli._app import (
    EXIT_DIAGNOSTICS_FAILED,
    CiProb,
    Explain,
    Output,
    Seed,
    app,
    compact_table,
    console,
    number_list,
    save_output,
    say_next,
)
from bayes_ir.cli._inputs import Sampler, Scores, uses_scores
from bayes_ir.cli.across import By, Over, Scale, SegmentsOption, wants_across
from bayes_ir.cli.fit import print_legend, print_pooling
from bayes_ir.cli.replicates import CostRun, CostTopic, SigmaReplicate
from bayes_ir.errors import BayesIRError

#: Exit status of ``bayes-ir decide --gate`` for each overall decision (0: deploy; 2 is
#: bad input and 3 a posterior that failed its diagnostics or a misfitting model).
GATE_EXIT = {"deploy": 0, "unreliable": EXIT_DIAGNOSTICS_FAILED, "keep champion": 4,
             "collect more data": 5}  # fmt: skip

Margin = Annotated[
    float | None,
    typer.Option(
        "--margin",
        help=f"Margin in the measure's units (default {defaults.DECISION_MARGIN:g}): the "
        "smallest gain worth deploying, or with --non-inferiority the largest loss allowed.",
    ),
]
NonInferiority = Annotated[
    bool,
    typer.Option(
        "--non-inferiority",
        help="Deploy a challenger that is not worse than the champion by more than the margin.",
    ),
]
RiskWeight = Annotated[
    float,
    typer.Option(
        "--r", help="Loss weight r >= 1 (1 + alpha of URisk): decide on risk-adjusted differences."
    ),  # fmt: skip
]
Threshold = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        help="Threshold of caring on the expected loss (default: a tenth of the margin).",
    ),
]
PMin = Annotated[
    float | None,
    typer.Option(
        "--p-min",
        help=f"Decision probability (default {defaults.DECISION_PROBABILITY:g}).",
    ),
]
Topics = Annotated[
    str | None,
    typer.Option(
        "--topics",
        help="Numbers of new topics for the more-topics table, comma-separated "
        f"(default {','.join(map(str, defaults.MORE_TOPICS))}; 0 skips it).",
    ),
]
Gate = Annotated[
    bool,
    typer.Option(
        "--gate",
        help="Exit status is the decision: 0 deploy, 4 keep champion, 5 collect more data, "
        "3 unreliable (failed diagnostics or model misfit); 2 is bad input.",
    ),
]


def _parse_topics(text: str | None) -> tuple[int, ...] | None:
    """``--topics``: positive numbers of topics, or 0 alone to skip the analysis."""
    if text is None or text.strip() == "0":
        return None if text is None else ()
    return number_list(text, "--topics", minimum=1)


def _style(action: str) -> str:
    return {"deploy": "bold green", "keep champion": "yellow", "collect more data": "cyan",
            "unreliable": "bold white on red"}.get(action, "")  # fmt: skip


@app.command()
@uses_scores(roles=True)
def decide(
    scores: Scores,
    sampler: Sampler,
    margin: Margin = None,
    non_inferiority: NonInferiority = False,
    r: RiskWeight = 1.0,
    threshold: Threshold = None,
    p_min: PMin = None,
    topics: Topics = None,
    seed: Seed = None,
    ci_prob: CiProb = None,
    gate: Gate = False,
    explain: Explain = False,
    output: Output = None,
    by: By = None,
    segments: SegmentsOption = None,
    scale: Scale = "auto",
    over: Over = None,
    sigma_replicate: SigmaReplicate = "pooled",
    cost_topic: CostTopic = 1.0,
    cost_run: CostRun = 1.0,
) -> None:
    """Deploy, keep the champion, or collect more data? And how many more topics would settle it.

    Fits the Bayesian hierarchical model, then prints for each challenger P(better by more
    than the margin), P(practically equivalent), P(worse), the expected losses of
    deploying and keeping, the action, and for undecided challengers the probability that
    k more topics settle it, and what to do next. --explain adds the rule with its
    formulas and the reason for each action. --gate makes the exit status the decision
    (for CI). With --by collection or --segments: one model across the groups, deciding
    on the average contrast or, with --over new, on the contrast on a new collection
    (segment). With several runs per system: the model of runs, deciding in expectation
    over seeds or, with --over single_run, on one run of each drawn at random.
    """
    from bayes_ir.decision import check_options
    from bayes_ir.decision import decide as decide_fn
    from bayes_ir.report.marks import choice_line
    from bayes_ir.report.numbers import format_probability

    grid = _parse_topics(topics)
    mode = "non_inferiority" if non_inferiority else "superiority"
    said = {"margin": "--margin", "r": "--r", "threshold": "--threshold", "p_min": "--p-min"}
    check_options(margin=margin, mode=mode, r=r, threshold=threshold, p_min=p_min, names=said)
    if wants_across(by, segments):
        from bayes_ir.cli.across import across_steps, fit_from_cli

        if r != 1 or grid is not None:
            raise BayesIRError("--r and --topics apply to one collection's decision")
        across = fit_from_cli(scores, sampler, segments=segments, scale=scale, seed=seed,
                              strict=False)  # fmt: skip
        over = over or "average"
        decision = decide_fn(across, over=over, margin=margin, mode=mode, threshold=threshold,
                             p_min=p_min, ci_prob=ci_prob, seed=seed)  # fmt: skip
        _print(decision, format_probability, across, explain=explain)
        save_output(decision.to_frame(), output)
        say_next(*across_steps(scores, sampler, across, command="decide", seed=seed,
                               segments=segments, scale=scale, over=over))  # fmt: skip
        if gate:
            raise typer.Exit(GATE_EXIT[decision.overall])
        return
    table = scores.load(need_challenger=True)
    check_options(margin=margin, mode=mode, r=r, threshold=threshold, p_min=p_min,
                  measure=table.measures[0], names=said)  # fmt: skip
    if table.has_replicates:
        from bayes_ir.cli.replicates import fit_runs, print_runs, runs_steps

        if r != 1 or grid is not None:
            raise BayesIRError("--r and --topics apply to one score per cell; with runs the "
                               "plan of more topics and seeds is printed for undecided "
                               "challengers")  # fmt: skip
        runs = fit_runs(table, sampler, seed=seed, sigma_replicate=sigma_replicate)
        over = over or "expectation"
        decision = decide_fn(runs, over=over, margin=margin, mode=mode, threshold=threshold,
                             p_min=p_min, ci_prob=ci_prob)  # fmt: skip
        _print(decision, format_probability, runs, explain=explain)
        print_runs(decision, runs, explain=explain, cost_topic=cost_topic, cost_run=cost_run)
        save_output(decision.to_frame(), output)
        say_next(*runs_steps(scores, sampler, runs, command="decide", seed=seed, over=over))
        if gate:
            raise typer.Exit(GATE_EXIT[decision.overall])
        return
    if over is not None:
        raise BayesIRError("--over applies with --by/--segments or several runs per system")
    result = sampler.fit(table, seed=seed)
    decision = decide_fn(
        result,
        margin=margin,
        mode=mode,
        r=r,
        threshold=threshold,
        p_min=p_min,
        ci_prob=ci_prob,
        topics=grid,
        seed=seed,
    )
    if result.likelihood_choice is not None:  # --likelihood auto: which model
        text = (
            result.likelihood_choice.summary() if explain else choice_line(result.likelihood_choice)
        )
        console.print(text, highlight=False, markup=False, soft_wrap=explain)
    _print(decision, format_probability, result, explain=explain)
    save_output(decision.to_frame(), output)
    if output is not None and len(decision.more_topics):
        save_output(decision.more_topics, output.with_stem(f"{output.stem}_more_topics"))
    if scores.last_view:
        say_next(*decide_steps(decision, result, scores, sampler, seed=seed))
    if gate:
        raise typer.Exit(GATE_EXIT[decision.overall])


#: Probability that more topics settle an undecided challenger, above which the next
#: step names that many topics.
SETTLED = 0.8


def _more_topics_advice(decision) -> list[tuple[str, str | None]]:
    """Advice for each undecided challenger: how many more topics would likely settle it."""
    from bayes_ir.report.numbers import format_probability

    steps: list[tuple[str, str | None]] = []
    for name, group in decision.more_topics.groupby("challenger", sort=False):
        enough = group[group["p_decisive"] >= SETTLED]
        row = enough.iloc[0] if len(enough) else group.iloc[-1]
        k, p = int(row["topics_added"]), format_probability(row["p_decisive"])
        if len(enough):
            steps.append((f"judge about {k} more topics: {name} would then be settled with "
                          f"probability {p}; then decide again", None))  # fmt: skip
        else:
            steps.append((f"{k} more topics would settle {name} with probability {p} only "
                          "(--topics with larger numbers looks further)", None))  # fmt: skip
    return steps


def decide_steps(decision, fit, scores, sampler, *, seed) -> list[tuple[str, str | None]]:
    """Return the next steps after a decision on ``fit``: a better model, more topics, review."""
    d = decision
    steps: list[tuple[str, str | None]] = []
    if not d.diagnostics_passed:
        why, again = sampler.refit(fit)
        steps.append((why, scores.command_line("decide", *again.words(seed=seed))))
    elif d.misfit and sampler.likelihood != "auto":
        seeded = [] if seed is None else ["--seed", str(seed)]
        steps.append((f"a model that describes {', '.join(d.misfit)}",
                      scores.command_line("decide", "--likelihood", "auto", *seeded)))  # fmt: skip
    if len(d.more_topics):
        steps += _more_topics_advice(d)
    margin = [] if d.margin == defaults.DECISION_MARGIN else ["--min-gain", f"{d.margin:g}"]
    steps.append(("the whole review (risk, model check, provenance) in one page",
                  scores.command_line("review", *sampler.words(seed=seed), *margin, "-o",
                                      "review.html")))  # fmt: skip
    return steps


def _over_words(d) -> str:
    """Say what ``--over`` decided on: a new group, the average, or runs (expectation, one)."""
    if d.over == "expectation":
        return ", in expectation over runs"
    if d.over == "single_run":
        return ", on one run of each"
    return f", on a new {d.by}" if d.over == "new" else f", on the average over the {d.by}s"


def _print(decision, fmt, fit, *, explain: bool) -> None:
    """Print the decision table, its legend and, for undecided challengers, the more-topics table.

    ``explain`` adds the rule with its formulas, the reason for each action and the
    assumptions of the more-topics analysis.
    """
    from bayes_ir.report.marks import marked

    d = decision
    unit = f" {d.measure}" if d.measure else ""
    if not d.diagnostics_passed:
        console.print("DIAGNOSTICS FAILED: do not act on these numbers", style="bold red")
    misfit = d.misfit
    kind = "superiority" if d.mode == "superiority" else "non-inferiority"
    observed = (
        "raw difference of the systems' mean scores over all their runs"
        if d.by == "run"
        else f"the mean over the {d.by}s of each one's raw mean difference of challenger minus "
        "champion"
        if d.over
        else "raw mean difference of challenger minus champion over the topics both have (as "
        "the paired tests)"
    )
    caption = (
        f"observed: {observed}; mean: the model's posterior mean; P(>m), P(|d|<=m), P(<-m): "
        "probability that it is better by more than the margin, within it, worse by more; "
        "L: expected loss of deploying or keeping"
    )
    caption += (
        f". Rule: {d.rule}"
        if explain
        else f" (deploy when P(>m) >= {d.p_min:g} and L_deploy <= {d.threshold:g}; "
        "--explain gives the rule)"
    )
    view = compact_table(
        f"Decision vs champion {marked(d.champion, misfit, text=repr(d.champion))} ({kind}, "
        f"margin m = {d.margin:g}{unit}"
        + (f", risk weight r = {d.r:g}" if d.r != 1 else "")
        + (_over_words(d) if d.over else "")
        + f"): {d.overall.upper()}",
        caption=caption,
    )
    for col in ("challenger", "observed", "mean", "P(>m)", "P(|d|<=m)", "P(<-m)", "L_deploy",
                "L_keep", "action"):  # fmt: skip
        view.add_column(col, justify="left" if col in ("challenger", "action") else "right",
                        no_wrap=True)  # fmt: skip
    for row in d.table.itertuples(index=False):
        view.add_row(
            marked(str(row.challenger), misfit),
            f"{row.observed:+.4f}",
            f"{row.mean:+.4f}",
            fmt(row.p_better),
            fmt(row.p_equivalent),
            fmt(row.p_worse),
            f"{row.loss_deploy:.4f}",
            f"{row.loss_keep:.4f}",
            Text(str(row.action), style=_style(row.action)),
        )
    console.print(view)
    print_legend(fit, misfit, champion=d.champion,
                 consequence="no decision is taken (unreliable)")  # fmt: skip
    print_pooling(d.pooling, explain=explain)
    if explain:
        for row in d.table.itertuples(index=False):
            console.print(f"  {row.challenger}: {row.action}: {row.reason}", markup=False,
                          highlight=False, soft_wrap=True)  # fmt: skip
    if len(d.more_topics):
        from bayes_ir.decision.more_topics import ASSUMPTIONS

        caption = (
            "P(deploy), P(keep), P(undecided): probability that judging that many more "
            "topics (+topics) makes the decision deploy, keep the champion, or leaves it "
            "open; E[loss]: expected loss after them"
        )
        if explain:
            caption += (
                f". Assumes {ASSUMPTIONS}. Sakai n: total topics a paired t-test (alpha 0.05, "
                "power 0.8) needs to detect a difference of the margin."
            )
        more = compact_table("How many more topics would settle it", caption=caption)
        columns = ["challenger", "+topics", "P(deploy)", "P(keep)", "P(undecided)", "E[loss]"]
        for col in [*columns, *(["Sakai n"] if explain else [])]:
            more.add_column(col, justify="left" if col == "challenger" else "right",
                            no_wrap=True)  # fmt: skip
        for row in d.more_topics.itertuples(index=False):
            sakai = row.sakai_total_topics
            more.add_row(
                str(row.challenger),
                str(row.topics_added),
                fmt(row.p_deploy),
                fmt(row.p_keep),
                fmt(row.p_undecided),
                f"{row.expected_loss:.4f}",
                *([("" if sakai != sakai else str(int(sakai)))] if explain else []),
            )
        console.print(more)
