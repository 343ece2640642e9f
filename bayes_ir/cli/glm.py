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
    Explain,
    Output,
    app,
    console,
    save_output,
    say_next,
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
    explain: Explain = False,
    output: Output = None,
) -> None:
    """Fit Gaussian GLMs score ~ topic + system per link; print deviance and significant pairs.

    The tables follow Faggioli, Ferro and Fuhr (CIKM 2022): one row per link, one column
    per collection and measure, the best link marked ◀; then which system pairs differ
    under the link of lowest deviance (the first systems; --explain lists them all, --pairs
    writes every pair). --output writes the tidy table (deviance, AIC, BIC, logLik,
    iterations, convergence, significant pairs per link).
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
    _print_pairs(result, alpha=alpha, explain=explain)
    save_output(frame, output)
    if pairs is not None:
        save_output(_pairs_frame(result), pairs)
    if not scores.last_view:
        return
    steps: list[tuple[str, str | None]] = []
    if pairs is None:
        steps.append(("every pair with its difference, interval and adjusted p-value",
                      scores.command_line("glm", "--pairs", "pairs.csv")))  # fmt: skip
    if not explain:
        steps.append(("every system that differs, and how the numbers were computed",
                      scores.command_line("glm", "--explain")))  # fmt: skip
    if steps:
        say_next(*steps)


def _print_pairs(result: LinkComparison, *, alpha: float, explain: bool) -> None:
    """Print, per collection and measure, which systems differ under the lowest-deviance link."""
    from bayes_ir.report.glm import pairs_lines

    best = result.best("deviance")
    frame = result.to_frame()
    for column, links in best.items():
        if not links:
            continue
        link = links.split(", ")[0]
        row = frame[(frame["collection"] + " " + frame["measure"] == column)
                    & (frame["link"] == link)].iloc[0]  # fmt: skip
        tukey = result.get_tukey(link, collection=row["collection"], measure=row["measure"])
        n = int(tukey.to_frame()["significant"].sum())
        console.print(
            Text(f"Pairs that differ under the {link} link (lowest deviance), {column}: "
                 f"{n:,} of {len(tukey.to_frame()):,}", style="bold"),
            soft_wrap=True,
        )  # fmt: skip
        limits = {"systems": None, "names": None} if explain else {}
        for line in pairs_lines(tukey, **limits) or ["no pair differs"]:
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    if explain:
        console.print(
            f"  A > n: A's score is significantly higher than each system named (topic-blocked "
            f"Tukey HSD of the GLM score ~ topic + system on the link's scale, family-wise "
            f"alpha {alpha:g}); deviance: residual deviance of that GLM (Faggioli, Ferro and "
            "Fuhr, CIKM 2022)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


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
