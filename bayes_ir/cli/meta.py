"""``bayes-ir meta``: random-effects meta-analysis of treatment vs control across collections."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from bayes_ir.cli._app import (
    InputFormat,
    Measure,
    Missing,
    Output,
    app,
    console,
    console_err,
    load,
    save_output,
)
from bayes_ir.defaults import META_EFFECT
from bayes_ir.errors import BayesIRError
from bayes_ir.frequentist.meta_analysis import effect_size, meta_analysis, read_meta_config


@app.command()
def meta(
    source: Annotated[
        Path,
        typer.Argument(
            help="YAML config (Ranger-like) or a tidy score file with a collection column."
        ),
    ],
    effect: Annotated[
        str | None, typer.Option("--effect", "-e", help="Effect size: MD, SMD or CORR.")
    ] = None,
    method: Annotated[
        str | None, typer.Option("--method", help="tau^2 estimator: REML, DL, PM or FE.")
    ] = None,
    hk: Annotated[
        bool, typer.Option("--hk", help="Hartung-Knapp adjustment (t quantiles).")
    ] = False,
    control: Annotated[
        str | None, typer.Option("--control", help="Control system (default: from config).")
    ] = None,
    treatment: Annotated[
        str | None, typer.Option("--treatment", help="Treatment system (default: from config).")
    ] = None,
    measure: Measure = None,
    extra: Annotated[
        list[str] | None,
        typer.Option("--extra", help="Extra measure shown in the plot, e.g. Judged@10."),
    ] = None,
    ci_prob: Annotated[
        float | None, typer.Option("--ci-prob", help="Interval probability (default 0.95).")
    ] = None,
    ranger_compatible: Annotated[
        bool,
        typer.Option(
            "--ranger-compatible", help="Reproduce Ranger: ddof=0, unclipped DL, normal quantiles."
        ),
    ] = False,
    leave_one_out: Annotated[
        bool, typer.Option("--leave-one-out", help="Also print the leave-one-out table.")
    ] = False,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write the forest plot (.pdf, .svg or .png).")
    ] = None,
    input_format: InputFormat = None,
    missing: Missing = "keep",
    output: Output = None,
) -> None:
    """Pool a treatment-vs-control effect over collections; print metafor-style results."""
    labels: dict[str, str] = {}
    order = None
    extras = list(extra or [])
    if source.suffix.lower() in (".yaml", ".yml"):
        config = read_meta_config(source)
        control = control or config.control
        treatment = treatment or config.treatment
        effect = effect or config.effect
        method = method or config.method
        hk = hk or config.hk
        extras = extras or list(config.extra_measures)
        labels = dict(config.display_names)
        order = config.collection_names
        table = config.load(missing=missing)
        measure = measure or config.measure
    else:
        table = load([source], input_format=input_format, measure=None, missing=missing)
    if control is None or treatment is None:
        systems = list(table.data["system"].unique())
        if len(systems) != 2:
            raise BayesIRError(
                f"the scores hold {len(systems)} systems ({', '.join(systems[:8])}): "
                "pass --control and --treatment"
            )
    if measure is None and len(table.measures) > 1:
        main = [m for m in table.measures if m not in extras]
        if len(main) != 1:
            raise BayesIRError(
                f"the scores hold several measures ({', '.join(table.measures)}): pass --measure"
            )
    effects = effect_size(
        table,
        measure=effect or META_EFFECT,
        control=control,
        treatment=treatment,
        score_measure=measure,
        extra_measures=[e for e in extras if e in table.measures],
        collections=order,
        labels=labels,
        ranger_compatible=ranger_compatible,
    )
    try:
        result = meta_analysis(
            effects, method=method, hk=hk, ci_prob=ci_prob, ranger_compatible=ranger_compatible
        )
    except ValueError as exc:  # option clashes: report them like bad input
        raise BayesIRError(str(exc)) from None
    console.print(result.summary(), highlight=False)
    frame = result.to_frame()
    view = Table(title="Collections", show_lines=False)
    cols = ["label", "n", "mean_control", "mean_treatment", "estimate", "ci_lower", "ci_upper"]
    cols += ["weight"]
    heads = ["collection", "n", "control", "treatment", "effect", "lower", "upper", "weight"]
    for col, head in zip(cols, heads, strict=True):
        view.add_column(head, justify="left" if col == "label" else "right")
    for row in frame.to_dict("records"):
        cells = []
        for col in cols:
            value = row[col]
            if col == "label":
                cells.append(str(value))
            elif col == "n":
                cells.append("" if value != value else str(int(value)))
            elif col == "weight":
                cells.append(f"{100 * value:.1f}%")
            else:
                cells.append("" if value != value else f"{value:.4f}")
        view.add_row(*cells)
    console.print(view)
    if len(effects.unpaired):
        console_err.print(
            f"note: {len(effects.unpaired)} topic(s) scored for only one system were excluded"
        )
    if leave_one_out and result.k >= 3:
        console.print("Leave-one-out:", highlight=False)
        loo = result.leave_one_out().to_string(index=False, float_format=lambda x: f"{x:.4g}")
        console.print(loo, highlight=False, soft_wrap=True)
    if plot is not None:
        result.plot(path=plot)
        console_err.print(f"wrote {plot}")
    save_output(frame, output)
