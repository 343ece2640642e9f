"""Systems across collections or query segments on the command line (``--by``, ``--segments``).

``bayes-ir fit``, ``decide`` and ``review`` take ``--by collection`` (a tidy file with a
``collection`` column, a folder holding one folder per collection, or a Ranger YAML
config) or ``--segments FILE`` / ``--segments 're:PATTERN'`` (one collection whose
topics fall in segments); the model across groups then replaces the one-collection
model (:func:`bayes_ir.hierarchical.fit_across`). This module reads those inputs and
prints the results; no statistics here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bayes_ir.cli._app import (
    console,
    guard_outputs,
    save_output,
    say_wrote,
    status,
    write_figures,
)
from bayes_ir.errors import BayesIRError

if TYPE_CHECKING:
    from bayes_ir.cli._inputs import Sampler, Scores
    from bayes_ir.hierarchical import AcrossFit
    from bayes_ir.table import ScoreTable

By = Annotated[
    str | None,
    typer.Option(
        "--by",
        help="Compare the systems across groups: 'collection' (the collection column, a "
        "folder per collection or a Ranger YAML config) or 'segment' (with --segments).",
    ),
]
SegmentsOption = Annotated[
    str | None,
    typer.Option(
        "--segments",
        help="Query segments of one collection: a file 'topic,segment' (or a tidy file with a "
        "segment column), or 're:PATTERN' whose first group in a topic id is its segment.",
    ),
]
Scale = Annotated[
    str,
    typer.Option(
        "--scale",
        help="Common scale across collections: auto (the measure when all share one, else "
        "sd), measure, or sd (each collection in units of its residual SD).",
    ),
]

Over = Annotated[
    str | None,
    typer.Option(
        "--over",
        help="With --by/--segments: decide on the average contrast over the collections "
        "(average, the default) or on the contrast on a new collection or segment (new). "
        "With several runs per system: in expectation over seeds (expectation, the "
        "default) or on one run of each, drawn at random (single_run).",
    ),
]

#: Figure file of the forest plot across groups.
FOREST_FILE = "forest_across.png"


def wants_across(by: str | None, segments: str | None) -> bool:
    """Whether the command compares systems across groups (and its options make sense)."""
    if by is None and segments is None:
        return False
    if by not in (None, "collection", "segment"):
        raise BayesIRError(f"--by {by!r}: choose 'collection' or 'segment'")
    if by == "segment" and segments is None:
        raise BayesIRError("--by segment needs --segments FILE or --segments 're:PATTERN'")
    if by == "collection" and segments is not None:
        raise BayesIRError("--segments compares segments of one collection: drop --by collection")
    return True


def load_across(scores: Scores, segments: str | None) -> tuple[ScoreTable, dict | None]:
    """Read the table (tidy file, folder per collection, YAML config) and the segments."""
    from bayes_ir.readers import read_collections, read_segments

    files = scores.files
    measures = list(scores.measure or ())
    if len(files) == 1 and files[0].suffix.lower() in (".yaml", ".yml"):
        from bayes_ir.frequentist.meta_analysis import read_meta_config

        config = read_meta_config(files[0])
        guard_outputs(
            [files[0], config.scores, *(p for c in config.collections for p in c.files.values())]
        )
        table = config.load(missing="intersect")
        measures = measures or ([config.measure] if config.measure else [])
    elif len(files) == 1 and files[0].is_dir() and any(p.is_dir() for p in files[0].iterdir()):
        guard_outputs([files[0]])
        options: dict[str, Any] = {"missing": scores.missing, "format": scores.input_format}
        table = read_collections(files[0], **{k: v for k, v in options.items() if v is not None})
    else:
        table = scores._table(None)  # every measure; one is chosen below
    if len(measures) == 1:
        table = table.select(measure=measures[0])
    elif measures:
        raise BayesIRError(
            "across collections, give one --measure (or none: each collection's own)"
        )
    table = table.with_roles(
        champion=str(scores.champion),
        challengers=scores.challengers,
        artifacts=scores.artifacts,
        exclude=scores.exclude,
    )
    if not table.challengers:
        raise BayesIRError("no challenger selected: pass --challengers NAME (or a glob)")
    seg = None if segments is None else read_segments(segments, topics=table.topics)
    return table, seg


def fit_from_cli(
    scores: Scores, sampler: Sampler, *, segments: str | None, scale: str, seed: int | None,
    strict: bool,
) -> AcrossFit:  # fmt: skip
    """Fit the model across groups with the command's options."""
    import warnings

    from bayes_ir.errors import ConvergenceWarning, ModelCheckWarning
    from bayes_ir.hierarchical import fit_across
    from bayes_ir.hierarchical.across import LIKELIHOODS

    if sampler.likelihood.split("(")[0] not in LIKELIHOODS:
        raise BayesIRError(
            f"--likelihood {sampler.likelihood} is not available across collections or "
            f"segments: choose {', '.join(LIKELIHOODS)}"
        )
    if sampler.sigma != "pooled":
        raise BayesIRError(
            "--sigma system is not available across collections or segments: the model has "
            "one residual SD per collection (or segment) already"
        )
    table, seg = load_across(scores, segments)
    console.print(table.summary(), highlight=False, markup=False, soft_wrap=True)
    options = {
        k: v
        for k, v in sampler.options().items()
        if k in ("chains", "draws", "tune", "target_accept")
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # said loudly by the summary
        warnings.simplefilter("ignore", ModelCheckWarning)  # marked and said by the summary
        return fit_across(table, segments=seg, scale=scale if seg is None else "auto",
                          seed=seed, strict=strict, likelihood=sampler.likelihood,
                          **options)  # fmt: skip


def report_fit(
    fit: AcrossFit, *, ci_prob: float | None, figures: Path | None, output: Path | None
) -> None:
    """Print the contrasts across groups; write the forest plot and the table on request."""
    result = fit.contrasts(ci_prob=ci_prob)
    console.print(result.summary(), highlight=False, markup=False, soft_wrap=True)
    if figures is not None:
        with status("Drawing the forest plot..."):
            paths = write_figures({FOREST_FILE: result.plot}, figures)
        for path in paths:
            say_wrote(path)
    save_output(result.to_frame(), output)


def across_words(segments: str | None, scale: str) -> list[str]:
    """Return the options that fit the same model across groups again (a next step)."""
    words = ["--segments", segments] if segments is not None else ["--by", "collection"]
    return words + (["--scale", scale] if scale != "auto" else [])


def across_steps(
    scores: Scores,
    sampler: Sampler,
    fit: AcrossFit,
    *,
    command: str,
    seed: int | None,
    segments: str | None,
    scale: str,
    over: str | None = None,
) -> list[tuple[str, str | None]]:
    """Return the next steps after ``command`` across groups (draws, misfit, decide, review)."""
    common = [*sampler.words(seed=seed), *across_words(segments, scale)]
    by = fit.by
    steps: list[tuple[str, str | None]] = []
    if not fit.diagnostics.passed:
        why, again = sampler.refit(fit)
        more = [*again.words(seed=seed), *across_words(segments, scale)]
        steps.append((why, scores.command_line(command, *more)))
    check = fit.model_check
    roles = dict(zip(fit.design.systems, fit.design.roles, strict=True))
    for name in () if check is None else check.flagged:
        if roles.get(name) != "artifact":
            steps.append((f"the {check.likelihood} model does not describe {name} "
                          f"({', '.join(check.failed(name))}): look at that {by} alone "
                          "(bayes-ir fit with --likelihood auto) before acting on it",
                          None))  # fmt: skip
    if command == "fit":
        steps.append((f"deploy, keep or collect more, on the average over the {by}s",
                      scores.command_line("decide", *common)))  # fmt: skip
    if command in ("fit", "decide"):
        other = "new" if over in (None, "average") else "average"
        what = f"on a new {by}" if other == "new" else f"on the average over the {by}s"
        steps.append((f"decide {what} instead",
                      scores.command_line("decide", *common, "--over", other)))  # fmt: skip
        steps.append((f"the review across {by}s (forest plot, meta-analysis cross-check)",
                      scores.command_line("review", *common, "-o", "review.html")))  # fmt: skip
    return steps
