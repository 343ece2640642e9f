"""The typer application object and the options every command shares."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from bayes_ir.readers import READERS, read_scores
from bayes_ir.report import write_table
from bayes_ir.table import ScoreTable

app = typer.Typer(
    name="bayes-ir",
    help=(
        "Is the new system really better, and how risky is it to deploy? "
        "Bayesian hierarchical models, risk measures, meta-analysis, GLMs and "
        "ranking reliability over per-topic scores."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    add_completion=False,
)
console = Console()
console_err = Console(stderr=True)

Files = Annotated[
    list[Path],
    typer.Argument(help="Score files: tidy CSV/TSV/Parquet, wide matrix, trec_eval -q, or runs."),
]
InputFormat = Annotated[
    str | None,
    typer.Option("--input-format", "-f", help=f"Override detection: {', '.join(READERS)}."),
]
Measure = Annotated[
    str | None,
    typer.Option("--measure", "-m", help="Measure (ir_measures string, e.g. nDCG@10)."),
]
Collection = Annotated[str | None, typer.Option("--collection", help="Collection to analyse.")]
Qrels = Annotated[Path | None, typer.Option("--qrels", help="Qrels file, for TREC run inputs.")]
Missing = Annotated[
    str, typer.Option("--missing", help="Systems lacking topics: error, intersect or keep.")
]
Champion = Annotated[str, typer.Option("--champion", "-c", help="Exact name of the champion.")]
Challengers = Annotated[
    list[str] | None,
    typer.Option("--challengers", "-C", help="Challenger names, globs or re:regex (repeatable)."),
]
Artifacts = Annotated[
    list[str] | None,
    typer.Option("--artifacts", "-a", help="Artifact runs (default: every other system)."),
]
Exclude = Annotated[
    list[str] | None, typer.Option("--exclude", help="Systems never used as artifacts.")
]
DropBottom = Annotated[
    float, typer.Option("--drop-bottom", help="Fraction of weakest artifacts to drop.")
]
TopM = Annotated[int | None, typer.Option("--top-m", help="Keep only the best M artifacts.")]
Likelihood = Annotated[
    str, typer.Option("--likelihood", "-l", help="Error distribution: gaussian or skew_normal.")
]
Seed = Annotated[int | None, typer.Option("--seed", help="Random seed (same seed, same numbers).")]
Draws = Annotated[int | None, typer.Option("--draws", help="Posterior draws per chain.")]
Tune = Annotated[int | None, typer.Option("--tune", help="Tuning (warm-up) draws per chain.")]
Chains = Annotated[int, typer.Option("--chains", help="Number of chains.")]
CiProb = Annotated[float | None, typer.Option("--ci-prob", help="Interval probability mass.")]
Output = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write the result table: .csv, .json, .md or .tex."),
]


def load(
    files: list[Path],
    *,
    input_format: str | None,
    measure: str | None,
    collection: str | None = None,
    qrels: Path | None = None,
    missing: str = "error",
) -> ScoreTable:
    """Read the files with the shared options, then select the collection and measure."""
    options: dict = {"missing": missing}
    if measure is not None:
        options["measure"] = measure
    if qrels is not None:
        options["qrels"] = qrels
    table = read_scores(files, format=input_format, **options)
    if collection is not None or measure is not None:
        table = table.select(collection=collection, measure=_measure_label(table, measure))
    return table


def load_with_roles(
    files: list[Path],
    *,
    input_format: str | None,
    measure: str | None,
    champion: str,
    challengers: list[str] | None = None,
    artifacts: list[str] | None = None,
    exclude: list[str] | None = None,
    drop_bottom: float = 0.0,
    top_m: int | None = None,
    collection: str | None = None,
    qrels: Path | None = None,
    missing: str = "error",
) -> ScoreTable:
    """Call :func:`load`, then assign roles with :meth:`ScoreTable.with_roles`."""
    table = load(
        files,
        input_format=input_format,
        measure=measure,
        collection=collection,
        qrels=qrels,
        missing=missing,
    )
    return table.with_roles(
        champion=champion,
        challengers=challengers,
        artifacts=artifacts,
        exclude=exclude,
        drop_bottom=drop_bottom,
        top_m=top_m,
    )


def _measure_label(table: ScoreTable, measure: str | None) -> str | None:
    """Return the table's name for ``measure``: as given, or its other spelling."""
    if measure is None or measure in table.measures:
        return measure
    from bayes_ir.measures import canonical_measure

    wanted = canonical_measure(measure)
    hits = [m for m in table.measures if canonical_measure(m) == wanted]
    if hits:
        return hits[0]
    if len(table.measures) == 1:  # readers that take the measure as a label
        return table.measures[0]
    return measure  # select() raises, listing the measures present


def save_output(frame, output: Path | None) -> None:
    """Write ``frame`` to ``output`` (if given) and say where."""
    if output is not None:
        path = write_table(frame, output)
        console_err.print(f"wrote {path}", highlight=False, soft_wrap=True)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        console.print(f"bayes-ir {version('bayes_ir')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Tell whether a new system is really better, and how risky it is to deploy."""
