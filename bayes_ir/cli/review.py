"""``bayes-ir review``: the deployment review as one self-contained HTML file."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from bayes_ir import defaults, validate
from bayes_ir.cli._app import CiProb, Seed, app, console, number_list, say_next, say_wrote
from bayes_ir.cli._inputs import Sampler, Scores, Workers, uses_scores
from bayes_ir.cli.across import By, Scale, SegmentsOption, wants_across
from bayes_ir.cli.replicates import CostRun, CostTopic, SigmaReplicate
from bayes_ir.errors import BayesIRError
from bayes_ir.files import declared_inputs

if TYPE_CHECKING:
    from bayes_ir.report.review import Review
    from bayes_ir.report.review_measures import MultiReview


def _check_html(value: Path) -> Path:
    """Option callback: the review is HTML, so the name ends in ``.html``."""
    if value.suffix.lower() not in (".html", ".htm"):
        raise BayesIRError(f"--output writes HTML: name the file *.html, not {value.name!r}")
    return value


_DEFAULT_LEVELS = ",".join(f"{v:g}" for v in defaults.RISK_LEVELS)
HtmlOutput = Annotated[
    Path,
    typer.Option("--output", "-o", help="The review, an .html file.", callback=_check_html),
]
RLevels = Annotated[
    str,
    typer.Option(
        "--r",
        help="Loss weights r = 1 + alpha of the BRisk sweep, comma-separated; the risk table "
        f"uses r = {defaults.RISK_R:g} when listed, else the largest.",
    ),
]
MinGain = Annotated[
    float | None,
    typer.Option(
        "--min-gain",
        help=f"Minimal worthwhile gain = the decision's margin, in the measure's units "
        f"(default {defaults.DECISION_MARGIN:g}).",
    ),
]
Resamples = Annotated[
    int,
    typer.Option(
        "--resamples",
        help="Bootstrap resamples of the BCa intervals (at least 100).",
        callback=lambda value: validate.resamples("--resamples", value, minimum=100),
    ),
]


@app.command()
@uses_scores(roles=True, per_measure=False)
def review(
    scores: Scores,
    output: HtmlOutput,
    sampler: Sampler,
    workers: Workers,
    r: RLevels = _DEFAULT_LEVELS,
    min_gain: MinGain = None,
    seed: Seed = None,
    resamples: Resamples = defaults.BCA_RESAMPLES,
    ci_prob: CiProb = None,
    by: By = None,
    segments: SegmentsOption = None,
    scale: Scale = "auto",
    sigma_replicate: SigmaReplicate = "pooled",
    cost_topic: CostTopic = 1.0,
    cost_run: CostRun = 1.0,
) -> None:
    """Write the deployment review: decision, risk, model check, diagnostics, provenance.

    One self-contained HTML file (figures inline, no network request) that a reviewer
    reads top to bottom, prints, and attaches to a decision record. With several
    measures (-m AP -m nDCG@10) the one file decides for all of them first (deploy only
    when every measure says deploy), then has one section per measure. With --by
    collection or --segments: the review across the groups (decisions on the average
    contrast and on a new group, the forest plot with shrinkage, the DL/REML
    meta-analysis as the cross-check). With several runs per system (a seed, fold or
    replicate column): the review of runs (decisions in expectation over seeds and on one
    run of each, P(a random run beats the champion's), the spread of the runs, the
    variance components, the plan of more topics or seeds, the paired t-test on the
    per-topic means over seeds as the cross-check).
    """
    if wants_across(by, segments):
        from bayes_ir.cli.across import across_words, fit_from_cli
        from bayes_ir.report.review_across import review_across

        across = fit_from_cli(scores, sampler, segments=segments, scale=scale, seed=seed,
                              strict=False)  # fmt: skip
        command = "bayes-ir " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        made = review_across(across.table, segments=across.design.cells.drop_duplicates("topic")
                             .set_index("topic")["segment"].to_dict() if segments else None,
                             fit=across, margin=min_gain, ci_prob=ci_prob,
                             inputs=[f for f in scores.files if f.is_file()],
                             command=command)  # fmt: skip
        console.print(made.headline(), highlight=False, markup=False, soft_wrap=True)
        say_wrote(made.to_html(output))
        words = [*sampler.words(seed=seed), *across_words(segments, scale)]
        say_next(
            (f"read it in a browser (one file, no network): {output}", None),
            ("the decision on a new group as an exit status, for a CI pipeline",
             scores.command_line("decide", *words, "--over", "new", "--gate")),
        )  # fmt: skip
        return
    from bayes_ir.decision import check_options
    from bayes_ir.report.review import review as make_review
    from bayes_ir.report.review_measures import review_measures

    levels = number_list(r, "--r", kind=float, minimum=1, maximum=defaults.MAX_RISK_WEIGHT)
    said = {"margin": "--min-gain", "threshold": None, "p_min": None}
    check_options(margin=min_gain, mode="superiority", r=1.0, threshold=None, p_min=None,
                  names=said)  # fmt: skip
    tables = [view.load(need_challenger=True) for view in scores.each_measure()]
    if any(t.has_replicates for t in tables):
        from bayes_ir.cli.replicates import review_runs_cli

        if len(tables) > 1:
            raise BayesIRError("with several runs per system the review reads one measure: "
                               "name one with -m")  # fmt: skip
        if r != _DEFAULT_LEVELS:
            raise BayesIRError("--r applies to one score per cell (the risk review); with runs "
                               "drop it")  # fmt: skip
        command = "bayes-ir " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        review_runs_cli(scores, tables[0], sampler, output=output,
                        sigma_replicate=sigma_replicate, margin=min_gain, ci_prob=ci_prob,
                        seed=seed, cost_topic=cost_topic, cost_run=cost_run,
                        command=command)  # fmt: skip
        return
    if (sigma_replicate, cost_topic, cost_run) != ("pooled", 1.0, 1.0):
        raise BayesIRError("--sigma-replicate, --cost-topic and --cost-run apply to several "
                           "runs per system (a seed, fold or replicate column)")  # fmt: skip
    for table in tables:  # the margin in each measure's units, before any fit
        check_options(margin=min_gain, mode="superiority", r=1.0, threshold=None, p_min=None,
                      measure=table.measures[0], names=said)  # fmt: skip
    one = len(tables) == 1  # several measures: one document deciding for all of them
    saved = sampler.fit(tables[0], seed=seed) if sampler.fit_path is not None else None
    r_table = defaults.RISK_R if defaults.RISK_R in levels else max(levels)
    command = "bayes-ir " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    options = {"margin": min_gain, "r": r_table, "r_levels": levels, "ci_prob": ci_prob,
               "seed": seed, "n_resamples": resamples, "inputs": declared_inputs(),
               "command": command, **sampler.options()}  # fmt: skip
    result: Review | MultiReview
    with workers.open() as executor:
        if one:
            result = cast("Review", make_review(tables[0], executor=executor, fit=saved,
                                                **options))  # fmt: skip
        else:
            result = review_measures({t.measures[0]: t for t in tables}, executor=executor,
                                     **options)  # fmt: skip
    console.print(result.headline(), highlight=False, markup=False, soft_wrap=True)
    say_wrote(result.to_html(output))
    say_next(
        (f"read it in a browser (one file, no network): {output}", None),
        ("the same decision as an exit status, for a CI pipeline",
         scores.command_line("decide", *sampler.words(seed=seed), "--gate")),
    )  # fmt: skip
