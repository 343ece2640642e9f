"""``bayes-ir inspect``: what is in a score file, before any analysis."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rich.table import Table

from bayes_ir.cli._app import (
    EscapedTable,
    Output,
    app,
    console,
    save_output,
    say_next,
)
from bayes_ir.cli._inputs import Scores, uses_scores

if TYPE_CHECKING:
    import pandas as pd

    from bayes_ir.table import ScoreTable

#: Columns of the ``--output`` table of ``inspect``, in this order.
INSPECT_COLUMNS = ("collection", "measure", "system", "mean", "sd", "n_topics", "n_missing")

#: Terminal headers of the columns whose --output names are long.
_HEADERS = {"n_topics": "topics", "n_missing": "missing", "n_replicates": "replicates"}


def inspect_frame(table: ScoreTable) -> pd.DataFrame:
    """Per (collection, measure, system): mean, SD, topics scored and missing cells.

    Columns :data:`INSPECT_COLUMNS`; ``n_missing`` counts the topics of the block
    (collection, measure) that the system has no score for. A table with replicates
    (seeds, folds) adds ``n_replicates``, the system's runs in the block; the means are
    then over the topics' averages across replicates. Rows are sorted by block, then by
    decreasing mean.
    """
    means = table.system_means()
    columns = list(INSPECT_COLUMNS)
    if table.has_replicates:
        keys = ["collection", "measure", "system"]
        runs = table.data.groupby(keys, sort=False)["replicate"].nunique()
        means["n_replicates"] = [runs[k] for k in means[keys].itertuples(index=False, name=None)]
        columns.append("n_replicates")
    blocks = table.data.groupby(["collection", "measure"], sort=False)["topic"].nunique()
    means["n_missing"] = [
        int(blocks[(c, m)] - n)
        for c, m, n in zip(means["collection"], means["measure"], means["n_topics"], strict=True)
    ]
    means = means.sort_values(
        ["collection", "measure", "mean"], ascending=[True, True, False], kind="stable"
    )
    return means[columns].reset_index(drop=True)


@app.command()
@uses_scores(missing="keep")
def inspect(
    scores: Scores,
    output: Output = None,
) -> None:
    """Show systems, topics, measures, means, missing cells and loader warnings.

    Missing cells are kept (--missing keep) so that they can be seen; --output
    writes one row per (collection, measure, system) with the columns
    collection, measure, system, mean, sd, n_topics, n_missing (and n_replicates
    when the scores hold several runs of a system: seeds, folds, epochs).
    """
    table = scores.load()
    console.print(table.summary(notes=False), highlight=False, markup=False, soft_wrap=True)
    frame = inspect_frame(table)
    console.print(systems_table(frame))
    save_output(frame, output)
    from bayes_ir.table_checks import DEFAULT_MEASURE

    pick = []  # fit analyses one collection and one measure
    if len(table.collections) > 1 and scores.collection is None:
        pick += ["--collection", str(table.collections[0])]
    if len(table.measures) > 1 and not scores.measure:
        pick += ["-m", str(table.measures[0])]
    elif list(table.measures) == [DEFAULT_MEASURE] and not scores.measure:
        pick += ["-m", "MEASURE"]  # the file names none: say which it is
    say_next((
        "is a challenger better than the champion? (name yours: an exact name, a glob)",
        replace(scores, missing="error").command_line("fit", *pick)
        + " -c CHAMPION -C 'CHALLENGER*'",
    ))  # fmt: skip


def systems_table(frame: pd.DataFrame) -> Table:
    """Rich table of :func:`inspect_frame`; one block (collection, measure) drops those columns.

    The summary above the table already names a single block, and without the two
    columns the numbers keep 4 decimals at 80 columns even with long system names.
    """
    one_block = frame[["collection", "measure"]].drop_duplicates().shape[0] <= 1
    cols = [c for c in frame.columns if not (one_block and c in ("collection", "measure"))]
    title = "Systems by mean score"
    if one_block and len(frame):
        title += f" ({frame['collection'].iat[0]}, {frame['measure'].iat[0]})"
    view = EscapedTable(title=title, show_lines=False)
    for col in cols:
        numeric = col in ("mean", "sd", "n_topics", "n_missing", "n_replicates")
        view.add_column(_HEADERS.get(col, col), justify="right" if numeric else "left",
                        no_wrap=True)  # fmt: skip
    for row in frame.to_dict("records"):
        cells = {
            "collection": row["collection"],
            "measure": row["measure"],
            "system": row["system"],
            "mean": f"{row['mean']:.4f}",
            "sd": "" if row["sd"] != row["sd"] else f"{row['sd']:.4f}",
            "n_topics": str(row["n_topics"]),
            "n_missing": str(row["n_missing"]) if row["n_missing"] else "",
            "n_replicates": str(row.get("n_replicates", "")),
        }
        view.add_row(*(cells[c] for c in cols))
    return view
