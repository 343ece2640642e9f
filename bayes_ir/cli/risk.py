"""``bayes-ir risk``: the deployment risk review (URisk-, TRisk-, BCa-, BRisk-, ZRisk-...)."""

from __future__ import annotations

import warnings
from typing import Annotated

import typer
from rich.table import Table

from bayes_ir import defaults
from bayes_ir.cli._app import (
    Artifacts,
    Chains,
    Challengers,
    Champion,
    CiProb,
    Collection,
    Draws,
    DropBottom,
    Exclude,
    Files,
    InputFormat,
    Likelihood,
    Measure,
    Missing,
    Output,
    Qrels,
    Seed,
    TopM,
    app,
    console,
    console_err,
    load_with_roles,
    save_output,
)
from bayes_ir.errors import ConvergenceWarning

RiskR = Annotated[
    float, typer.Option("--r", "-r", help="Loss weight r = 1 + alpha (losses count r times).")
]
NoBayes = Annotated[
    bool, typer.Option("--no-bayes", help="Skip the Bayesian BRisk model (frequentist only).")
]
Sd = Annotated[str, typer.Option("--sd", help="TRisk SD: population (rmit-ir/trisk) or sample.")]
Resamples = Annotated[int, typer.Option("--resamples", help="Bootstrap resamples of BCa.")]


@app.command()
def risk(
    files: Files,
    champion: Champion,
    challengers: Challengers = None,
    artifacts: Artifacts = None,
    exclude: Exclude = None,
    drop_bottom: DropBottom = 0.0,
    top_m: TopM = None,
    r: RiskR = defaults.RISK_R,
    no_bayes: NoBayes = False,
    ci_prob: CiProb = None,
    sd: Sd = defaults.TRISK_SD,
    resamples: Resamples = defaults.BCA_RESAMPLES,
    likelihood: Likelihood = "gaussian",
    chains: Chains = defaults.CHAINS,
    draws: Draws = None,
    seed: Seed = None,
    input_format: InputFormat = None,
    measure: Measure = None,
    collection: Collection = None,
    qrels: Qrels = None,
    missing: Missing = "error",
    output: Output = None,
) -> None:
    """Deployment risk review of the challengers against the champion (higher = riskier)."""
    from bayes_ir.risk.review import risk_review

    table = load_with_roles(
        files,
        input_format=input_format,
        measure=measure,
        collection=collection,
        qrels=qrels,
        missing=missing,
        champion=champion,
        challengers=challengers,
        artifacts=artifacts,
        exclude=exclude,
        drop_bottom=drop_bottom,
        top_m=top_m,
    )
    fit_options = {"chains": chains}
    if draws is not None:
        fit_options["draws"] = draws
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        review = risk_review(
            table,
            r=r,
            ci_prob=ci_prob,
            sd=sd,
            bayes=not no_bayes,
            likelihood=likelihood,
            n_resamples=resamples,
            seed=seed,
            **fit_options,
        )
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            console_err.print(f"[bold red]warning:[/] {w.message}", highlight=False)
    console.print(review.header, highlight=False, soft_wrap=True)
    display = review.display_frame()
    view = Table(title="Deployment risk review (higher = riskier)")
    for col in display.columns:
        if col == "System":
            width = max(len(str(s)) for s in display[col])
            view.add_column(col, justify="left", no_wrap=True, min_width=width)
        else:
            view.add_column(col, justify="right")
    for row in display.itertuples(index=False):
        view.add_row(*map(str, row))
    console.print(view)
    if output is not None and output.suffix.lower() in (".md", ".tex"):
        text = review.to_markdown() if output.suffix.lower() == ".md" else review.to_latex()
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        console_err.print(f"wrote {output}")
    else:
        save_output(review.to_frame(), output)
