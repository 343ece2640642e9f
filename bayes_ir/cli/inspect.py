"""``bayes-ir inspect``: what is in a score file, before any analysis."""

from __future__ import annotations

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
    load,
    save_output,
)


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
    """Show systems, topics, measures, means, missing cells and loader warnings."""
    table = load(
        files,
        input_format=input_format,
        measure=measure,
        collection=collection,
        qrels=qrels,
        missing=missing,
    )
    console.print(table.summary(), highlight=False)
    means = table.system_means().sort_values(["collection", "measure", "mean"], ascending=False)
    view = Table(title="Systems by mean score", show_lines=False)
    for col in ("collection", "measure", "system", "mean", "sd", "n_topics"):
        view.add_column(col, justify="right" if col in ("mean", "sd", "n_topics") else "left")
    for row in means.itertuples(index=False):
        view.add_row(
            row.collection, row.measure, row.system, f"{row.mean:.4f}", f"{row.sd:.4f}",
            str(row.n_topics),
        )  # fmt: skip
    console.print(view)
    save_output(means, output)
