"""``bayes-ir meta``: random-effects meta-analysis of treatment vs control across collections."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.table import Table

from bayes_ir.cli._app import (
    CiProb,
    Explain,
    InputFormat,
    Measure,
    Missing,
    Output,
    RangeCheck,
    app,
    check_figure,
    cli_wording,
    compact_table,
    console,
    console_err,
    guard_outputs,
    load,
    save_output,
    say_next,
    say_wrote,
    show_notes,
    typed_command,
)
from bayes_ir.defaults import META_EFFECT, META_METHOD
from bayes_ir.errors import BayesIRError

if TYPE_CHECKING:
    from bayes_ir import table as score_table


@app.command()
def meta(
    source: Annotated[
        Path,
        typer.Argument(
            help="YAML config (Ranger-like) or a tidy score file with a collection column."
        ),
    ],
    effect: Annotated[
        str | None,
        typer.Option(
            "--effect",
            "-e",
            help=f"Effect size: MD, SMD or CORR (default: the config's, else {META_EFFECT}).",
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(
            "--method",
            help=f"tau^2 estimator: REML, DL, PM or FE (default: config's, else {META_METHOD}).",
        ),
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
    ci_prob: CiProb = None,
    ranger_compatible: Annotated[
        bool,
        typer.Option(
            "--ranger-compatible", help="Reproduce Ranger: ddof=0, unclipped DL, normal quantiles."
        ),
    ] = False,
    leave_one_out: Annotated[
        bool, typer.Option("--leave-one-out", help="Also print the leave-one-out table.")
    ] = False,
    explain: Explain = False,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help="Write the forest plot (.pdf, .svg or .png).", callback=check_figure
        ),
    ] = None,
    input_format: InputFormat = None,
    missing: Missing = "keep",
    check_range: RangeCheck = True,
    output: Output = None,
) -> None:
    """Pool a treatment-vs-control effect over collections; say what it means in plain words.

    Prints the effect per collection with the pooled rows, a plain-language conclusion
    (the pooled effect, how sure, whether the collections agree) and what to run next;
    --explain adds metafor's printout (tau^2, I^2, H^2, the test for heterogeneity).
    """
    from bayes_ir.frequentist.meta_analysis import effect_size, meta_analysis, read_meta_config
    from bayes_ir.report.meta import meta_conclusion

    labels: dict[str, str] = {}
    order = None
    extras = list(extra or [])
    if measure is not None and len(measure) > 1:
        raise BayesIRError(
            f"meta pools one measure, got --measure {' --measure '.join(measure)}: "
            "run it once per measure (--extra adds a measure to the plot)"
        )
    score_measure = measure[0] if measure else None
    if source.suffix.lower() in (".yaml", ".yml"):
        config = read_meta_config(source)
        specs = config.collections
        guard_outputs([source, config.scores, *(p for c in specs for p in c.files.values()),
                       *(c.qrels for c in specs)])  # fmt: skip
        control = control or config.control
        treatment = treatment or config.treatment
        effect = effect or config.effect
        method = method or config.method
        hk = hk or config.hk
        extras = extras or list(config.extra_measures)
        labels = dict(config.display_names)
        order = config.collection_names
        table = config.load(missing=cast("score_table.Missing", missing))  # checked by the reader
        score_measure = score_measure or config.measure
    else:
        table = load(
            [source],
            input_format=input_format,
            measure=None,
            missing=missing,
            check_range=check_range,
        )
    show_notes(table.notes)
    if control is None or treatment is None:
        systems = list(table.data["system"].unique())
        if len(systems) != 2:
            raise BayesIRError(
                f"the scores hold {len(systems)} systems ({', '.join(systems[:8])}): "
                "pass --control and --treatment"
            )
    unknown = [e for e in (extra or []) if e not in table.measures]
    if unknown:
        raise BayesIRError(
            f"--extra {', '.join(unknown)}: not a measure of the scores "
            f"({', '.join(table.measures)})"
        )
    if score_measure is None and len(table.measures) > 1:
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
        score_measure=score_measure,
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
    if explain:
        console.print(cli_wording(result.summary()), highlight=False, markup=False, soft_wrap=True)
    frame = result.to_frame()
    console.print(collections_table(result, frame))
    console.print(meta_conclusion(result), highlight=False, markup=False)  # words wrap
    if len(effects.unpaired):
        console_err.print(
            f"note: {len(effects.unpaired)} topic(s) scored for only one system were excluded"
        )
    if leave_one_out:
        if result.k >= 3:
            console.print(leave_one_out_table(result.leave_one_out()))
        else:
            console_err.print(f"note: leave-one-out needs 3 or more collections, not {result.k}")
    if plot is not None:
        result.plot(path=plot)
        say_wrote(plot)
    save_output(frame, output)
    command = typed_command("meta", exclude=("plot", "output", "leave_one_out", "explain"))
    steps: list[tuple[str, str | None]] = []
    if not leave_one_out and result.k >= 3:
        steps.append(("does one collection drive it?", f"{command} --leave-one-out"))
    if plot is None:
        steps.append(("the forest plot", f"{command} --plot forest.pdf"))
    if not explain:
        steps.append(("tau^2, I^2, the test for heterogeneity (metafor's printout)",
                      f"{command} --explain"))  # fmt: skip
    if steps:
        say_next(*steps)


def collections_table(result, frame) -> Table:
    """Rich table of the per-collection rows and the pooled rows of a meta-analysis.

    The title says the effect, its direction (treatment - control) and the interval
    probability; the mean columns are headed by the system names.
    """
    eff = result.effects
    control, treatment = eff.control or "control", eff.treatment or "treatment"
    on = f"{eff.score_measure}; " if eff.score_measure else ""
    if eff.measure == "CORR":
        title = f"Per collection: correlation r of {treatment} with {control}"
        caption = f"{on}pooled as Fisher z; {100 * result.ci_prob:g}% CI"
    else:
        title = f"Per collection: {eff.measure} of {treatment} - {control}"
        caption = f"{on}> 0 favours {treatment}; {100 * result.ci_prob:g}% CI"
    view = compact_table(title, caption=caption)
    cols = ["label", "n", "mean_control", "mean_treatment", "estimate", "ci_lower", "ci_upper"]
    cols += ["weight"]
    short = max(len(control), len(treatment)) <= 9  # else the names would be cut
    heads = ["collection", "n", *((control, treatment) if short else ("control", "treatment"))]
    heads += [eff.measure]
    if not short:
        view.caption = f"control = {control}, treatment = {treatment}; {view.caption}"
    heads += ["lower", "upper", "weight"]
    for col, head in zip(cols, heads, strict=True):
        left = col == "label"
        view.add_column(head, justify="left" if left else "right", no_wrap=left)
    for row in frame.to_dict("records"):
        cells = [_cell(col, row[col]) for col in cols]
        view.add_row(*cells, end_section=row.get("kind") == "study" and _last_study(frame, row))
    return view


def _cell(col: str, value) -> str:
    """Format one cell of the collections or leave-one-out table (empty for NaN)."""
    if col in ("label", "omitted"):
        return str(value)
    if value != value:
        return ""
    if col == "n":
        return str(int(value))
    if col == "weight":
        return f"{100 * value:.1f}%"
    if col == "p_value":
        return "<0.0001" if value < 1e-4 else f"{value:.4f}"
    if col == "i2":
        return f"{value:.1f}"
    return f"{value:.4f}"


def _last_study(frame, row) -> bool:
    studies = frame.loc[frame["kind"] == "study", "label"]
    return len(studies) > 0 and row["label"] == studies.iloc[-1]


#: Leave-one-out columns shown in the terminal (``leave_one_out()`` has more).
LOO_COLUMNS = {
    "omitted": "omitted",
    "estimate": "estimate",
    "ci_lower": "lower",
    "ci_upper": "upper",
    "p_value": "p",
    "tau2": "tau^2",
    "i2": "I^2 (%)",
}


def leave_one_out_table(loo) -> Table:
    """Rich table of :meth:`MetaAnalysisResult.leave_one_out` (pooled result without each)."""
    view = compact_table("Leave-one-out: the pooled effect without each collection")
    cols = [c for c in LOO_COLUMNS if c in loo.columns]
    for col in cols:
        view.add_column(LOO_COLUMNS[col], justify="left" if col == "omitted" else "right")
    for row in loo.to_dict("records"):
        view.add_row(*(_cell(col, row[col]) for col in cols))
    return view
