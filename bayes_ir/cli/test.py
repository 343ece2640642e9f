"""``bayes-ir test``: classical paired significance tests of each challenger vs the champion."""

from __future__ import annotations

from typing import Annotated

import typer

from bayes_ir import validate
from bayes_ir.cli._app import Explain, Output, Seed, app, console, save_output, say_next
from bayes_ir.cli._inputs import Scores, uses_scores

Tests = Annotated[
    str,
    typer.Option(
        "--test", help="Tests, comma-separated: t, randomization, wilcoxon, sign, bootstrap."
    ),
]
Correction = Annotated[
    str, typer.Option("--correction", help="holm, bonferroni, fdr_bh (Benjamini-Hochberg), none.")
]
Alpha = Annotated[float, typer.Option("--alpha", help="Significance level of the marks.")]
Alternative = Annotated[
    str, typer.Option("--alternative", help="two-sided, greater (challenger better) or less.")
]
Resamples = Annotated[
    int,
    typer.Option(
        "--resamples",
        help="Sign flips / bootstrap resamples (exact when 2^T fit; at least 99).",
        callback=lambda value: validate.resamples("--resamples", value, minimum=99),
    ),
]


@app.command(name="test")
@uses_scores(roles=True)
def test_command(
    scores: Scores,
    test: Tests = "t,randomization,wilcoxon,sign,bootstrap",
    correction: Correction = "holm",
    alpha: Alpha = 0.05,
    alternative: Alternative = "two-sided",
    resamples: Resamples = 10_000,
    seed: Seed = None,
    explain: Explain = False,
    output: Output = None,
) -> None:
    """What does the t-test say? Paired tests of each challenger against the champion.

    Paired t, Fisher randomisation (exact for few topics), Wilcoxon signed-rank, sign and
    bootstrap tests, with Holm, Bonferroni or Benjamini-Hochberg correction over the
    challengers; a ranx-style table with significance marks, then what to run next.
    --explain says how each test and the adjustment were computed.
    """
    from bayes_ir.frequentist.paired import paired_tests

    table = scores.load(need_challenger=True)
    result = paired_tests(
        table,
        test=[t for t in test.replace(" ", "").split(",") if t],
        correction=correction,
        alpha=alpha,
        alternative=alternative,
        n_resamples=resamples,
        seed=seed,
    )
    console.print(result.summary(), highlight=False, markup=False, soft_wrap=True)
    if explain:
        from bayes_ir.report.paired import paired_notes

        for line in paired_notes(result):
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    save_output(result.to_frame(), output)
    if scores.last_view:
        say_next((
            "how likely each challenger is better, and by how much (the Bayesian model)",
            scores.command_line("fit", *([] if seed is None else ["--seed", str(seed)])),
        ))  # fmt: skip
