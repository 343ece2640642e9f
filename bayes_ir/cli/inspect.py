"""``bayes-ir inspect``: what is in a score file, before any analysis."""

from __future__ import annotations

import warnings

import pandas as pd
from rich.table import Table

from bayes_ir.cli._app import (
    Collection,
    Files,
    InputFormat,
    Measure,
    Missing,
    Output,
    Qrels,
    app,
    console,
    console_err,
    load,
    save_output,
)
from bayes_ir.errors import BayesIRWarning
from bayes_ir.table import ScoreTable

#: Columns of the ``--output`` table of ``inspect``, in this order.
INSPECT_COLUMNS = ("collection", "measure", "system", "mean", "sd", "n_topics", "n_missing")


def inspect_frame(table: ScoreTable) -> pd.DataFrame:
    """Per (collection, measure, system): mean, SD, topics scored and missing cells.

    Columns :data:`INSPECT_COLUMNS`; ``n_missing`` counts the topics of the block
    (collection, measure) that the system has no score for. Rows are sorted by block,
    then by decreasing mean.
    """
    means = table.system_means()
    blocks = table.data.groupby(["collection", "measure"], sort=False)["topic"].nunique()
    means["n_missing"] = [
        int(blocks[(c, m)] - n)
        for c, m, n in zip(means["collection"], means["measure"], means["n_topics"], strict=True)
    ]
    means = means.sort_values(
        ["collection", "measure", "mean"], ascending=[True, True, False], kind="stable"
    )
    return means[list(INSPECT_COLUMNS)].reset_index(drop=True)


@app.command()
def inspect(
    files: Files,
    input_format: InputFormat = None,
    measure: Measure = None,
    collection: Collection = None,
    qrels: Qrels = None,
    missing: Missing = "keep",
    output: Output = None,
) -> None:
    """Show systems, topics, measures, means, missing cells and loader warnings.

    Missing cells are kept (``--missing keep``) so that they can be seen; ``--output``
    writes one row per (collection, measure, system) with the columns
    collection, measure, system, mean, sd, n_topics, n_missing.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayesIRWarning)
        table = load(
            files,
            input_format=input_format,
            measure=measure,
            collection=collection,
            qrels=qrels,
            missing=missing,
        )
    console.print(table.summary(), highlight=False, soft_wrap=True)
    frame = inspect_frame(table)
    view = Table(title="Systems by mean score", show_lines=False)
    for col in INSPECT_COLUMNS:
        numeric = col in ("mean", "sd", "n_topics", "n_missing")
        view.add_column(col, justify="right" if numeric else "left")
    for row in frame.itertuples(index=False):
        sd = "" if pd.isna(row.sd) else f"{row.sd:.4f}"
        view.add_row(
            row.collection,
            row.measure,
            row.system,
            f"{row.mean:.4f}",
            sd,
            str(row.n_topics),
            str(row.n_missing) if row.n_missing else "",
        )
    console.print(view)
    shown = set(table.notes)
    for w in caught:
        if issubclass(w.category, BayesIRWarning) and str(w.message) not in shown:
            shown.add(str(w.message))
            console_err.print(f"warning: {w.message}", highlight=False, soft_wrap=True)
    save_output(frame, output)
