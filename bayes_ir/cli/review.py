"""``bayes-ir review``: the deployment review as one self-contained HTML file."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bayes_ir import defaults, validate
from bayes_ir.cli._app import CiProb, Seed, app, console, number_list, say_next, say_wrote
from bayes_ir.cli._inputs import Sampler, Scores, Workers, uses_scores
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
) -> None:
    """Write the deployment review: decision, risk, model check, diagnostics, provenance.

    One self-contained HTML file (figures inline, no network request) that a reviewer
    reads top to bottom, prints, and attaches to a decision record. With several
    measures (-m AP -m nDCG@10) the one file decides for all of them first (deploy only
    when every measure says deploy), then has one section per measure.
    """
    from bayes_ir.decision import check_options
    from bayes_ir.report.review import review as make_review
    from bayes_ir.report.review_measures import review_measures

    levels = number_list(r, "--r", kind=float, minimum=1, maximum=defaults.MAX_RISK_WEIGHT)
    said = {"margin": "--min-gain", "threshold": None, "p_min": None}
    check_options(margin=min_gain, mode="superiority", r=1.0, threshold=None, p_min=None,
                  names=said)  # fmt: skip
    tables = [view.load(need_challenger=True) for view in scores.each_measure()]
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
            result = make_review(tables[0], executor=executor, fit=saved, **options)
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
