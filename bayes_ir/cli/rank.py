"""``bayes-ir rank``: a leaderboard of every system with honest ranks and anchored tie groups."""

from __future__ import annotations

import shlex
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from bayes_ir import defaults, validate
from bayes_ir.cli._app import (
    EXIT_DIAGNOSTICS_FAILED,
    CiProb,
    Seed,
    Strict,
    app,
    cli_wording,
    console,
    say_wrote,
    status,
    write_figures,
)
from bayes_ir.cli._inputs import Sampler, Scores, uses_scores
from bayes_ir.cli.fit import Figures
from bayes_ir.errors import BayesIRError, ModelCheckWarning
from bayes_ir.files import declared_inputs

#: What ``--output`` writes, by extension.
RANK_OUTPUTS = {".csv": "table", ".json": "table", ".md": "markdown", ".tex": "latex",
                ".html": "html", ".htm": "html"}  # fmt: skip
#: Figure files written by ``--figures``.
RANK_FIGURES = {"rank_intervals": "rank_intervals.png",
                "critical_difference": "critical_difference.png"}  # fmt: skip


def _check_output(value: Path | None) -> Path | None:
    """Option callback: a leaderboard file whose extension says what to write."""
    if value is not None and value.suffix.lower() not in RANK_OUTPUTS:
        raise BayesIRError(
            f"cannot tell what to write from {value.name!r}: use .csv or .json (the table), "
            ".md (Markdown), .tex (LaTeX) or .html (the page)"
        )
    return value


RankOutput = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the leaderboard: .csv or .json (every column), .md (Markdown), .tex "
        "(LaTeX, groups between rules) or .html (a self-contained page with the figures).",
        callback=_check_output,
    ),
]
Rope = Annotated[
    float | None,
    typer.Option(
        "--rope",
        help="Region of practical equivalence of the tie groups, in the measure's units "
        f"(default {defaults.LEADERBOARD_ROPE:g}).",
        callback=lambda v: None if v is None else validate.finite_float("--rope", v, minimum=0),
    ),
]
Top = Annotated[
    int | None,
    typer.Option("--top", min=1, help=f"The k of P(top k) (default {defaults.LEADERBOARD_TOP})."),
]
PMin = Annotated[
    float | None,
    typer.Option(
        "--p-min",
        help="A system leaves its leader's group when it is behind the leader by more than "
        f"the rope with at least this probability (default {defaults.LEADERBOARD_P_MIN:g}).",
        callback=lambda v: None if v is None else validate.probability("--p-min", v),
    ),
]


@app.command()
@uses_scores(roles=False)
def rank(
    scores: Scores,
    sampler: Sampler,
    rope: Rope = None,
    top: Top = None,
    p_min: PMin = None,
    seed: Seed = None,
    ci_prob: CiProb = None,
    figures: Figures = None,
    strict: Strict = False,
    output: RankOutput = None,
) -> None:
    """Rank every system: intervals, rank intervals, P(best), P(top k) and tie groups.

    Fits the Bayesian hierarchical model to all systems alike (no champion), prints the
    board with its tie groups (each anchored on its leader, so groups do not chain), the
    Friedman-Nemenyi companion and how to read it; marks systems the model does not
    describe as misfit. --output writes the table, Markdown, LaTeX or the HTML page.
    """
    from bayes_ir.hierarchical.leaderboard import leaderboard

    table = scores.load()
    if rope is not None and len(table.measures) == 1:  # a rope as wide as the range ties all
        validate.measure_margin("--rope", rope, table.measures[0], what="rope")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelCheckWarning)  # the board marks misfit itself
        result = sampler.fit(table, seed=seed)
    lb = leaderboard(result, rope=rope, top=top, ci_prob=ci_prob, p_min=p_min)
    console.print(cli_wording(lb.summary()), highlight=False, markup=False, soft_wrap=True)
    if figures is not None:
        with status("Drawing figures..."):
            drawn = {RANK_FIGURES["rank_intervals"]: lb.plot,
                     RANK_FIGURES["critical_difference"]: lb.plot_critical_difference}  # fmt: skip
            for path in write_figures(drawn, figures):
                say_wrote(path)
    if output is not None:
        command = "bayes-ir " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        say_wrote(_write(lb, output, inputs=declared_inputs(), command=command))
    console.print(_next_step(output, figures), highlight=False, markup=False, soft_wrap=True)
    if strict and not lb.diagnostics_passed:
        raise typer.Exit(EXIT_DIAGNOSTICS_FAILED)


def _write(lb, path: Path, *, inputs: Sequence[Path], command: str) -> Path:
    """Write the leaderboard to ``path`` in the form its extension names."""
    from bayes_ir.files import write_text
    from bayes_ir.report import write_table

    kind = RANK_OUTPUTS[path.suffix.lower()]
    if kind == "table":
        return write_table(lb.to_frame(), path)
    if kind == "html":
        return Path(lb.to_html(path, inputs=inputs, command=command))
    return write_text(path, lb.to_markdown() if kind == "markdown" else lb.to_latex())


def _next_step(output: Path | None, figures: Path | None) -> str:
    """One line: what to do next with this board."""
    if output is None:
        return (
            "Next: publish it with --output board.html (a page with the figures), .md, .tex, "
            ".csv or .json; a wide rank interval or a large first group means more topics "
            "are needed to separate those systems."
        )
    if figures is None:
        return "Next: --figures DIR writes the rank-interval and critical-difference figures."
    return (
        "Next: a wide rank interval or a large first group means more topics are needed to "
        "separate those systems."
    )
