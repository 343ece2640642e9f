"""``bayes-ir reliability``: how close is the observed ranking of systems to the true one."""

from __future__ import annotations

from typing import Annotated

import typer

from bayes_ir.cli._app import (
    CiProb,
    Output,
    app,
    console,
    save_output,
    say_next,
)
from bayes_ir.cli._inputs import Scores, uses_scores
from bayes_ir.defaults import RELIABILITY_ESTIMATOR


@app.command()
@uses_scores()
def reliability(
    scores: Scores,
    estimator: Annotated[
        str,
        typer.Option(
            "--estimator",
            "-e",
            help="ML, MSQD, RES(T=1000), KD(T=1000), SHw or SHwo (Urbano & Marrero 2016).",
        ),
    ] = RELIABILITY_ESTIMATOR,
    intervals: Annotated[
        bool, typer.Option("--intervals", help="Add a bootstrap-over-topics interval.")
    ] = False,
    bayesian: Annotated[
        bool,
        typer.Option("--bayesian", help="Add a Bayesian interval (fits the hierarchical model)."),
    ] = False,
    ci_prob: CiProb = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of RES, KD, SH, bootstrap.")
    ] = None,
    output: Output = None,
) -> None:
    """Estimate the expected Kendall tau and tau_AP between the observed and the true ranking."""
    import pandas as pd

    from bayes_ir.reliability import (
        bayesian_interval,
        bootstrap_interval,
        expected_correlation,
        parse_reliability,
    )

    spec = parse_reliability(estimator)
    table = scores.load()
    frames = []
    for k, (coll, meas) in enumerate(table.blocks()):
        result = expected_correlation(
            table, estimator=spec, collection=coll, measure=meas, seed=seed
        )
        if k:
            console.print()  # a blank line between collections/measures
        console.print(result.summary(), highlight=False, markup=False, soft_wrap=True)
        frame = result.to_frame()
        extra = []
        if intervals:
            extra.append(
                bootstrap_interval(table, collection=coll, measure=meas, ci_prob=ci_prob, seed=seed)
            )
        if bayesian:
            extra.append(
                bayesian_interval(table, collection=coll, measure=meas, ci_prob=ci_prob, seed=seed)
            )
        for interval in extra:
            console.print(interval.summary(), highlight=False, markup=False, soft_wrap=True)
            ci = interval.conf_int().set_index("coefficient")
            prefix = "boot" if interval.method == "bootstrap" else "bayes"
            for col in ("estimate", "ci_lower", "ci_upper"):
                name = f"{prefix}_{'mean' if col == 'estimate' else col}"
                frame[name] = frame["coefficient"].map(ci[col])
            frame[f"{prefix}_ci_prob"] = interval.ci_prob
        frames.append(frame)
    save_output(pd.concat(frames, ignore_index=True), output)
    if not intervals:
        say_next(("how sure is this estimate (a bootstrap interval over topics)",
                  scores.command_line("reliability", "--intervals")))  # fmt: skip
