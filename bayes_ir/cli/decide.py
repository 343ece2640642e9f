"""``bayes-ir decide``: deploy, keep the champion, or collect more data (and how many topics)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from bayes_ir import defaults
from bayes_ir.cli._app import (
    EXIT_DIAGNOSTICS_FAILED,
    CiProb,
    Output,
    Seed,
    app,
    compact_table,
    console,
    number_list,
    save_output,
)
from bayes_ir.cli._inputs import Sampler, Scores, uses_scores
from bayes_ir.cli.across import By, Over, Scale, SegmentsOption, wants_across
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
    output: Output = None,
    by: By = None,
    segments: SegmentsOption = None,
    scale: Scale = "auto",
    over: Over = "average",
) -> None:
    """Deploy, keep the champion, or collect more data? And how many more topics would settle it.

    Fits the Bayesian hierarchical model, then prints for each challenger P(better by more
    than the margin), P(practically equivalent), P(worse), the expected losses of
    deploying and keeping, the action, and for undecided challengers the probability that
    k more topics settle it. --gate makes the exit status the decision (for CI). With
    --by collection or --segments: one model across the groups, deciding on the average
    contrast or, with --over new, on the contrast on a new collection (segment).
    """
    from bayes_ir.decision import check_options
    from bayes_ir.decision import decide as decide_fn
    from bayes_ir.report.decision import format_probability

    grid = _parse_topics(topics)
    mode = "non_inferiority" if non_inferiority else "superiority"
    check_options(margin=margin, mode=mode, r=r, threshold=threshold, p_min=p_min)
    if wants_across(by, segments):
        from bayes_ir.cli.across import fit_from_cli

        if r != 1 or grid is not None:
            raise BayesIRError("--r and --topics apply to one collection's decision")
        across = fit_from_cli(scores, sampler, segments=segments, scale=scale, seed=seed,
                              strict=False)  # fmt: skip
        decision = decide_fn(across, over=over, margin=margin, mode=mode, threshold=threshold,
                             p_min=p_min, ci_prob=ci_prob, seed=seed)  # fmt: skip
        _print(decision, format_probability)
        save_output(decision.to_frame(), output)
        if gate:
            raise typer.Exit(GATE_EXIT[decision.overall])
        return
    table = scores.load(need_challenger=True)
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
    if result.likelihood_choice is not None:
        console.print(result.likelihood_choice.choice_text(), highlight=False, markup=False,
                      soft_wrap=True)  # fmt: skip
    _print(decision, format_probability)
    save_output(decision.to_frame(), output)
    if output is not None and len(decision.more_topics):
        save_output(decision.more_topics, output.with_stem(f"{output.stem}_more_topics"))
    if gate:
        raise typer.Exit(GATE_EXIT[decision.overall])


def _print(decision, fmt) -> None:
    """Print the decision table, the reasons and the more-topics table."""
    d = decision
    unit = f" {d.measure}" if d.measure else ""
    if not d.diagnostics_passed:
        console.print("DIAGNOSTICS FAILED: do not act on these numbers", style="bold red")
    for name in d.misfit:
        console.print(f"MODEL MISFIT: the model does not describe {name}", style="bold red",
                      markup=False)  # fmt: skip
    kind = "superiority" if d.mode == "superiority" else "non-inferiority"
    view = compact_table(
        f"Decision vs champion {d.champion!r} ({kind}, margin m = {d.margin:g}{unit}"
        + (f", risk weight r = {d.r:g}" if d.r != 1 else "")
        + f"): {d.overall.upper()}",
        caption=f"mean: posterior mean of challenger minus champion; L: expected loss. "
        f"Rule: {d.rule}",
    )
    for col in ("challenger", "mean", "P(>m)", "P(|d|<=m)", "P(<-m)", "L_deploy", "L_keep",
                "action"):  # fmt: skip
        view.add_column(col, justify="left" if col in ("challenger", "action") else "right",
                        no_wrap=col != "action")  # fmt: skip
    for row in d.table.itertuples(index=False):
        view.add_row(
            str(row.challenger),
            f"{row.mean:+.4f}",
            fmt(row.p_better),
            fmt(row.p_equivalent),
            fmt(row.p_worse),
            f"{row.loss_deploy:.4f}",
            f"{row.loss_keep:.4f}",
            Text(str(row.action), style=_style(row.action)),
        )
    console.print(view)
    for row in d.table.itertuples(index=False):
        console.print(f"  {row.challenger}: {row.action}: {row.reason}", markup=False,
                      highlight=False, soft_wrap=True)  # fmt: skip
    if len(d.more_topics):
        from bayes_ir.decision.more_topics import ASSUMPTIONS

        more = compact_table(
            "How many more topics would settle it",
            caption=f"Assumes {ASSUMPTIONS}. Sakai n: total topics a paired t-test (alpha "
            "0.05, power 0.8) needs to detect a difference of the margin.",
        )
        for col in ("challenger", "+topics", "P(deploy)", "P(keep)", "P(undecided)",
                    "E[loss]", "Sakai n"):  # fmt: skip
            more.add_column(col, justify="left" if col == "challenger" else "right")
        for row in d.more_topics.itertuples(index=False):
            more.add_row(
                str(row.challenger),
                str(row.topics_added),
                fmt(row.p_deploy),
                fmt(row.p_keep),
                fmt(row.p_undecided),
                f"{row.expected_loss:.4f}",
                "" if row.sakai_total_topics != row.sakai_total_topics
                else str(int(row.sakai_total_topics)),
            )  # fmt: skip
        console.print(more)
