"""``bayes-ir risk``: the deployment risk review (URisk-, TRisk-, BCa-, BRisk-, ZRisk-...)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.console import Console
from rich.table import Table

from bayes_ir import defaults, validate
from bayes_ir.cli._app import (
    EXIT_DIAGNOSTICS_FAILED,
    CiProb,
    Explain,
    Output,
    Seed,
    Strict,
    app,
    check_figure,
    compact_table,
    console,
    save_fit,
    save_output,
    say_next,
    say_wrote,
    warn,
    warn_failed_checks,
)
from bayes_ir.cli._inputs import Sampler, Scores, uses_scores
from bayes_ir.cli.across import SegmentsOption
from bayes_ir.cli.fit import SavePath
from bayes_ir.errors import BayesIRError, BayesIRWarning, ConvergenceWarning
from bayes_ir.files import atomic_path, write_text

if TYPE_CHECKING:
    import pandas as pd

    from bayes_ir.risk.trisk import SD


def _check_r(value: float) -> float:
    """Option callback: a loss weight from 1 to :data:`bayes_ir.defaults.MAX_RISK_WEIGHT`."""
    return validate.finite_float("--r", value, minimum=1.0, maximum=defaults.MAX_RISK_WEIGHT)


RiskR = Annotated[
    float,
    typer.Option(
        "--r", "-r", help="Loss weight r = 1 + alpha (losses count r times).", callback=_check_r
    ),
]
NoBayes = Annotated[
    bool, typer.Option("--no-bayes", help="Skip the Bayesian BRisk model (frequentist only).")
]
Sd = Annotated[
    str,
    typer.Option(
        "--trisk-sd",
        "--sd",
        help="TRisk SD: population (divide by n; rmit-ir/trisk) or sample (n - 1; Benham et al.).",
    ),
]
Plot = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        help="Write the BCa- and BRisk- intervals as a figure (.pdf, .svg or .png).",
        callback=check_figure,
    ),
]
Resamples = Annotated[
    int,
    typer.Option(
        "--resamples",
        help="Bootstrap resamples of BCa (at least 100).",
        callback=lambda value: validate.resamples("--resamples", value, minimum=100),
    ),
]


@app.command()
@uses_scores(roles=True)
def risk(
    scores: Scores,
    sampler: Sampler,
    r: RiskR = defaults.RISK_R,
    no_bayes: NoBayes = False,
    ci_prob: CiProb = None,
    sd: Sd = defaults.TRISK_SD,
    resamples: Resamples = defaults.BCA_RESAMPLES,
    seed: Seed = None,
    plot: Plot = None,
    strict: Strict = False,
    save: SavePath = None,
    explain: Explain = False,
    output: Output = None,
    segments: SegmentsOption = None,
) -> None:
    """Deployment risk review of the challengers against the champion (higher = riskier).

    Prints one line saying what the table holds, the table (URisk-, TRisk-, BCa-, BRisk-,
    ZRisk-, GeoRisk-) and what to run next; --explain says how each measure was computed.
    BRisk is a fit of the risk-adjusted scores at --r: ``--save`` writes it and
    ``--fit`` reuses one so written (a fit saved by ``bayes-ir fit`` is of the raw scores).
    With --segments: the risk in each query segment instead (URisk- of its topics and
    BRisk- from the model across segments of the risk-adjusted scores), naming the
    segments the challenger harms.
    """
    from bayes_ir.risk.review import risk_review

    if segments is not None:
        _segment_risk(scores, sampler, segments, r=r, ci_prob=ci_prob, seed=seed, plot=plot,
                      output=output, strict=strict,
                      refused={"--no-bayes": no_bayes, "--save": save is not None,
                               "--fit": sampler.fit_path is not None})  # fmt: skip
        return

    if no_bayes and (sampler.fit_path is not None or save is not None):
        option = "--fit" if sampler.fit_path is not None else "--save"
        raise BayesIRError(f"{option} is about BRisk's fit, which --no-bayes leaves out")
    table = scores.load()
    saved = None
    if sampler.fit_path is not None:
        from bayes_ir.risk.adjusted import check_r, risk_adjusted_scores

        try:
            saved = sampler.fit(risk_adjusted_scores(table, r=check_r(r)), seed=seed)
        except BayesIRError as exc:
            raise BayesIRError(
                f"{exc} (risk --fit takes BRisk's fit at this --r, saved by risk --save)"
            ) from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        review = risk_review(
            table,
            r=r,
            ci_prob=ci_prob,
            sd=cast("SD", sd),  # checked by risk_review
            bayes=not no_bayes,
            n_resamples=resamples,
            seed=seed,
            fit=saved,
            **sampler.options(),
        )
    for w in caught:  # every package warning; failed diagnostics one line per check
        if issubclass(w.category, BayesIRWarning) and w.category is not ConvergenceWarning:
            warn(str(w.message))
    if review.brisk is not None and not review.brisk.diagnostics_passed:
        warn_failed_checks(review.brisk.diagnostics_messages)
    from bayes_ir.report.marks import choice_line
    from bayes_ir.report.risk import risk_header, risk_legend, risk_title

    head = risk_header(review, legend=False) if explain else risk_title(review)
    console.print(head, highlight=False, markup=False, soft_wrap=True)
    choice = getattr(getattr(review.brisk, "fit", None), "likelihood_choice", None)
    if choice is not None:  # --likelihood auto: how BRisk's model was chosen
        text = choice.summary() if explain else choice_line(choice)
        console.print(text, highlight=False, markup=False, soft_wrap=explain)
    for view in risk_tables(review.display_frame(), width=console.width):
        console.print(view)
    legend = risk_legend(review)
    if legend:
        console.print(legend, style="bold red", highlight=False, markup=False)
    if save is not None and review.brisk is not None:
        save_fit(review.brisk.fit, save)
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        write_figure(review.plot(), plot)
    if output is not None and output.suffix.lower() in (".md", ".tex"):
        text = review.to_markdown() if output.suffix.lower() == ".md" else review.to_latex()
        write_text(output, text, what="--output")
        say_wrote(output)
    else:
        save_output(review.to_frame(), output)
    if scores.last_view:
        say_next(*_risk_steps(review, scores, sampler, seed=seed, explain=explain))
    if strict and review.brisk is not None and not review.brisk.diagnostics_passed:
        raise typer.Exit(EXIT_DIAGNOSTICS_FAILED)


def _risk_steps(review, scores, sampler, *, seed, explain) -> list[tuple[str, str | None]]:
    """Return the next steps after the risk review: a model that fits, the settings, the review."""
    from bayes_ir.report.risk import risk_misfit

    steps: list[tuple[str, str | None]] = []
    misfit = risk_misfit(review)
    if misfit and sampler.likelihood != "auto":
        seeded = [] if seed is None else ["--seed", str(seed)]
        steps.append((f"a BRisk model that describes {', '.join(misfit)}",
                      scores.command_line("risk", "--likelihood", "auto", *seeded)))  # fmt: skip
    if not explain:
        steps.append(("how each measure was computed (TRisk's SD, BCa's Bonferroni, BRisk's "
                      "model)", scores.command_line("risk", "--explain")))  # fmt: skip
    steps.append(("the decision with the risk, in one page",
                  scores.command_line("review", *sampler.words(seed=seed, reuse=False), "-o",
                                      "review.html")))  # fmt: skip
    return steps


def _segment_risk(scores: Scores, sampler: Sampler, segments: str, *, r: float,
                  ci_prob: float | None, seed: int | None, plot: Path | None,
                  output: Path | None, strict: bool, refused: dict[str, bool]) -> None:  # fmt: skip
    """``risk --segments``: URisk- and pooled BRisk- per segment, the harmed segments named."""
    from bayes_ir.cli.across import across_words
    from bayes_ir.readers import read_segments
    from bayes_ir.risk import segment_risk

    for option, given in refused.items():
        if given:
            raise BayesIRError(f"{option} does not apply to the risk per segment (--segments)")
    if sampler.likelihood != "gaussian":
        raise BayesIRError("the model across segments is Gaussian: drop --likelihood")
    if sampler.sigma != "pooled":
        raise BayesIRError(
            "the model across segments has one residual SD per segment: drop --sigma"
        )
    table = scores.load(need_challenger=True)
    seg = read_segments(segments, topics=table.topics)
    options = {k: v for k, v in sampler.options().items() if k in ("chains", "draws", "tune")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # said by the summary
        warnings.simplefilter("ignore", BayesIRWarning)
        result = segment_risk(table, seg, r=r, ci_prob=ci_prob, seed=seed, **options)
    console.print(result.summary(), highlight=False, markup=False, soft_wrap=True)
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        write_figure(result.plot(), plot)
    save_output(result.to_frame(), output)
    words = [*sampler.words(seed=seed), *across_words(segments, "auto")]
    harmed = [c for c, g in result.harmed.items() if g]
    why, again = sampler.refit(result.fit)
    say_next(
        *([(why, scores.command_line("risk", *again.words(seed=seed),
                                     *across_words(segments, "auto")))]
          if not result.fit.diagnostics.passed else []),
        *([(f"{', '.join(harmed)} {'harms' if len(harmed) == 1 else 'harm'} some segments: "
            "the decision across segments weighs them", scores.command_line("decide", *words))]
          if harmed else []),
        ("the contrasts in every segment, shrunken beside raw",
         scores.command_line("fit", *words)),
    )  # fmt: skip
    if strict and not result.fit.diagnostics.passed:
        raise typer.Exit(EXIT_DIAGNOSTICS_FAILED)


def _risk_table(display: pd.DataFrame, title: str) -> Table:
    view = compact_table(title)
    for col in display.columns:
        if col == "System":
            view.add_column(col, justify="left", no_wrap=True)
        else:  # an interval or "TRisk (p)" is never broken over two lines
            view.add_column(col, justify="right", no_wrap=True)
    for row in display.itertuples(index=False):
        view.add_row(*(str(cell) for cell in row))
    return view


def risk_tables(display: pd.DataFrame, *, width: int) -> list[Table]:
    """Rich table(s) of :meth:`RiskReview.display_frame`, fitted to a terminal ``width``.

    One table when it fits; otherwise two, each with the System column: the measures
    paired with the champion (Mean, URisk-, TRisk-, BCa-), then the others (BRisk-,
    ZRisk-, GeoRisk-), so that no interval is broken over two lines at 80 columns.
    """
    title = "Deployment risk review (higher = riskier)"
    whole = _risk_table(display, title)
    if Console(width=10_000).measure(whole).maximum <= width:
        return [whole]
    cols = [str(c) for c in display.columns]
    paired = [c for c in cols if c.startswith(("System", "Mean", "URisk", "TRisk", "BCa"))]
    rest = ["System", *(c for c in cols if c not in paired)]
    return [
        _risk_table(display[paired], f"{title}, 1 of 2"),
        _risk_table(display[rest], f"{title}, 2 of 2"),
    ]


def write_figure(fig, path: Path) -> None:
    """Save a matplotlib figure (the folder is created) and say where."""
    import matplotlib.pyplot as plt

    with atomic_path(path, what="--plot") as tmp:
        fig.savefig(tmp, dpi=150, bbox_inches="tight")
    plt.close(fig)
    say_wrote(path)
