"""``bayes-ir glm``: compare GLM link functions and their topic-blocked Tukey HSD."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Group
from rich.markup import escape
from rich.text import Text

from bayes_ir import defaults, validate
from bayes_ir.cli._app import (
    EscapedTable,
    Output,
    app,
    console,
    save_output,
)
from bayes_ir.cli._inputs import Scores, Workers, uses_scores

if TYPE_CHECKING:
    import pandas as pd

    from bayes_ir.frequentist.glm.comparison import LinkComparison


@app.command()
@uses_scores()
def glm(
    scores: Scores,
    workers: Workers,
    links: Annotated[
        list[str] | None,
        typer.Option(
            "--links",
            help="Links to compare, repeatable or comma-separated: identity, log, exp, tanh, "
            "logit, probit, cauchit, cloglog (default: these, the paper's), or atanh (the "
            "inverse of the paper's tanh).",
        ),
    ] = None,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Family-wise error rate of the Tukey HSD.")
    ] = defaults.GLM_ALPHA,
    boundary: Annotated[
        str,
        typer.Option("--boundary", help="Scores on a link's boundary: clip, drop_systems or none."),
    ] = "clip",
    epsilon: Annotated[
        float, typer.Option("--epsilon", help="Clipping distance from the link's bounds.")
    ] = defaults.GLM_EPSILON,
    min_mean: Annotated[
        float,
        typer.Option("--min-mean", help="drop_systems: drop systems with a lower mean score."),
    ] = defaults.GLM_MIN_MEAN,
    pairs: Annotated[
        Path | None,
        typer.Option("--pairs", help="Write every Tukey pair (.csv, .json, .md or .tex)."),
    ] = None,
    output: Output = None,
) -> None:
    """Fit Gaussian GLMs score ~ topic + system per link; print deviance and significant pairs.

    The tables follow Faggioli, Ferro and Fuhr (CIKM 2022): one row per link, one column
    per collection and measure, the best link marked ◀. --output writes the tidy table
    (deviance, AIC, BIC, logLik, iterations, convergence, significant pairs per link).
    """
    names = [name.strip() for item in (links or []) for name in item.split(",") if name.strip()]
    validate.choice("--boundary", boundary, ("clip", "drop_systems", "none"))
    validate.probability("--alpha", alpha)
    table = scores.load()
    from bayes_ir.frequentist.glm import compare_links

    with workers.open() as executor:
        result = compare_links(
            table,
            links=names or None,
            alpha=alpha,
            boundary=boundary,
            epsilon=epsilon,
            min_mean=min_mean,
            executor=executor,
        )
    console.print(
        f"Gaussian GLMs score ~ topic + system, boundary={boundary!r} "
        f"(epsilon {epsilon:g}); topic-blocked Tukey HSD at alpha = {alpha:g}",
        highlight=False,
    )
    console.print(_rich_table(result, "deviance", "Residual deviance (lower is better)"))
    frame = result.to_frame()
    n_pairs = frame["n_pairs"].dropna().unique() if "n_pairs" in frame else []
    of = f" of {int(n_pairs[0]):,}" if len(n_pairs) == 1 else ""  # same systems everywhere
    console.print(
        _rich_table(
            result,
            "n_significant",
            f"Significantly different pairs{of} (Tukey HSD; more is better)",
        )
    )
    for row in frame[~frame["converged"].astype(bool)].itertuples(index=False):
        console.print(
            f"[bold red]{escape(row.link)}[/] on "
            + escape(f"{row.collection} {row.measure} did not converge: {row.message}"),
            highlight=False,
        )
    save_output(frame, output)
    if pairs is not None:
        save_output(_pairs_frame(result), pairs)


def _rich_table(result: LinkComparison, stat: str, title: str) -> Group:
    wide = result.table(stat)
    best = result.best(stat)
    ok = result.table_converged()
    caption = "◀ best link per column"
    if not ok.to_numpy().all():
        caption += "; * did not converge"
    view = EscapedTable(caption=caption, caption_justify="left")
    view.add_column("link")
    for col in wide.columns:
        view.add_column(str(col), justify="right")
    for link in wide.index:
        cells = []
        for col in wide.columns:
            value = wide.at[link, col]
            if value != value:  # NaN
                text: str | Text = "failed"
            else:
                text = str(int(value)) if stat == "n_significant" else f"{value:.4f}"
                if not ok.at[link, col]:
                    text += "*"
            tie = wide[col].nunique(dropna=True) <= 1  # nothing to choose between
            if not tie and link in best[col].split(", "):
                text = Text(f"{text} ◀", style="bold")
            cells.append(text)
        view.add_row(link, *cells)
    return Group(Text(title, style="bold"), view)


def _pairs_frame(result: LinkComparison) -> pd.DataFrame:
    frames = []
    for tukey in result.tukeys:
        if tukey is None:
            continue
        frame = tukey.to_frame()
        frame.insert(0, "link", tukey.link)
        frame.insert(0, "measure", tukey.measure)
        frame.insert(0, "collection", tukey.collection)
        frames.append(frame)
    import pandas as pd

    return pd.concat(frames, ignore_index=True)
