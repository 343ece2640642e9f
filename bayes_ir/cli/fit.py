"""``bayes-ir fit``: the champion-vs-challengers decision from the Bayesian hierarchical model."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bayes_ir import defaults, validate
from bayes_ir.cli._app import (
    EXIT_DIAGNOSTICS_FAILED,
    CiProb,
    Explain,
    Output,
    Seed,
    Strict,
    app,
    cli_wording,
    compact_table,
    console,
    number_list,
    save_fit,
    save_output,
    say_next,
    say_wrote,
    status,
    warn_failed_checks,
)
from bayes_ir.cli._app import write_figures as write_figure_files
from bayes_ir.cli._inputs import Sampler, Scores, Workers, uses_scores
from bayes_ir.cli.across import By, Scale, SegmentsOption, wants_across
from bayes_ir.cli.replicates import SigmaReplicate
from bayes_ir.errors import BayesIRError, ConvergenceWarning, ModelCheckWarning
from bayes_ir.files import atomic_path

if TYPE_CHECKING:
    import pandas as pd

    from bayes_ir.hierarchical.artifact_sweep import Effects

MinGain = Annotated[
    float,
    typer.Option(
        "--min-gain",
        help="Minimal worthwhile gain, in score units.",
        callback=lambda value: validate.finite_float("--min-gain", value),
    ),
]


def _check_folder(value: Path | None) -> Path | None:
    """Option callback: ``--figures`` names a folder (created if needed), not a file."""
    if value is not None and value.exists() and not value.is_dir():
        raise BayesIRError(f"--figures {value}: this is a file; give a folder for the PNG files")
    return value


def _check_netcdf(value: Path | None) -> Path | None:
    """Option callback: ``--save`` writes netCDF, so the name ends in ``.nc``."""
    if value is not None and value.suffix.lower() != ".nc":
        raise BayesIRError(f"--save writes netCDF: name the file *.nc, not {value.name!r}")
    return value


Figures = Annotated[
    Path | None,
    typer.Option(
        "--figures", help="Write the figures (PNG) into this folder.", callback=_check_folder
    ),
]
Sweep = Annotated[
    str | None,
    typer.Option(
        "--sweep",
        help="Refit with the top m artifact runs for each m (e.g. 1,5,10,20,40): Figure 5. "
        "With --output OUT.csv the sweep's table goes to OUT_artifact_sweep.csv.",
    ),
]
SweepEffects = Annotated[
    str,
    typer.Option(
        "--sweep-effects",
        help="Left panel and gap of --sweep: mean (b0 + c_s), zero_sum (c_s) or "
        "intercept_deviation (rstanarm's effects, the paper's Figure 5).",
    ),
]
SavePath = Annotated[
    Path | None,
    typer.Option(
        "--save", help="Save the fit as netCDF (e.g. models/fit.nc).", callback=_check_netcdf
    ),
]

#: Figure files written by ``--figures``.
FIGURE_FILES = {
    "system_topic_intervals": "system_topic_intervals.png",
    "contrasts": "contrasts.png",
    "predictive": "predictive.png",
    "rank_probabilities": "rank_probabilities.png",
    "artifact_sweep": "artifact_sweep.png",
}

_VERDICT_STYLE = {
    "worthwhile": "bold green",
    "better;": "green",
    "better, but": "yellow",
    "better": "bold green",
    "worse, but": "yellow",
    "worse": "bold red",
    "no worthwhile": "yellow",
    "practically": "yellow",
}


def _style(verdict: str) -> str:
    from bayes_ir.decision.rules import MISFIT_VERDICT

    if verdict.startswith(("UNRELIABLE", MISFIT_VERDICT)):
        return "bold white on red"
    for key, style in _VERDICT_STYLE.items():
        if verdict.startswith(key):
            return style
    return "dim"


def write_figures(fit, comparison, folder: Path, *, ci_prob: float, seed: int | None) -> list[Path]:
    """Write the decision figures of a fit into ``folder`` and return their paths."""
    from bayes_ir.hierarchical.contrasts import rank_probabilities
    from bayes_ir.hierarchical.predictive import posterior_predictive
    from bayes_ir.plots.hierarchical import plot_system_topic_intervals, predictive_systems
    from bayes_ir.report.marks import misfit_systems

    drawn = predictive_systems(fit)  # simulated for these systems only
    figures = {
        "system_topic_intervals": lambda: plot_system_topic_intervals(fit, ci_prob=ci_prob),
        "contrasts": comparison.plot,
        "predictive": lambda: posterior_predictive(
            fit, ci_prob=ci_prob, seed=seed, systems=drawn
        ).plot(),
        "rank_probabilities": lambda: rank_probabilities(fit).plot(misfit=misfit_systems(fit)),
    }
    return write_figure_files({FIGURE_FILES[k]: draw for k, draw in figures.items()}, folder)


def decision_table(comparison, *, misfit: tuple[str, ...] = (), explain: bool = False) -> Table:
    """Build the rich table of a :class:`~bayes_ir.hierarchical.contrasts.Comparison`.

    Systems in ``misfit`` carry the misfit mark (the champion's is in the title);
    ``explain`` adds to the caption how the verdict is read from the interval.
    """
    from bayes_ir.report.marks import marked
    from bayes_ir.report.numbers import format_probability

    frame = comparison.to_frame()
    pct = f"{100 * comparison.ci_prob:g}%"
    gain = comparison.min_gain != 0
    caption = (
        "observed: raw mean difference over the topics both systems have (as the paired "
        f"tests); mean, interval: challenger minus champion, posterior mean and {pct} equal-tailed "
        "credible interval; P(>x): posterior probability that the difference exceeds x"
    )
    if explain:
        caption += (
            "; verdict: read from the interval, better (worse) when it lies above (below) 0"
            + (f", worthwhile gain when above --min-gain {comparison.min_gain:g}" if gain else "")
            + ", uncertain when it holds 0"
        )
    measure = f", {comparison.measure}" if comparison.measure else ""
    champion = comparison.champion
    view = compact_table(
        f"Challengers vs champion {marked(champion, misfit, text=repr(champion))} "
        f"(difference of system means{measure})",
        caption=caption,
    )
    columns = ["challenger", "observed", "mean", f"{pct} interval", "P(>0)"]
    columns += [f"P(>{comparison.min_gain:g})"] if gain else []
    for col in columns:  # a narrow terminal wraps the interval at its comma, then the verdict
        wraps = col.endswith("interval")
        view.add_column(col, justify="left" if col == "challenger" else "right",
                        no_wrap=not wraps, min_width=9 if wraps else None)  # fmt: skip
    view.add_column("verdict", justify="left", min_width=10, overflow="fold")
    for row in frame.itertuples(index=False):
        cells = [
            marked(row.challenger, misfit),
            f"{row.observed:+.4f}",
            f"{row.mean:+.4f}",
            f"[{row.ci_lower:+.4f}, {row.ci_upper:+.4f}]",
            format_probability(row.p_better),
        ]
        cells += [format_probability(row.p_gain)] if gain else []
        view.add_row(*cells, Text(row.verdict, style=_style(row.verdict)))
    return view


def model_line(fit) -> str:
    """One line: the model fitted, the sampler, and the diagnostics that passed."""
    from bayes_ir.report.marks import model_description, sampler_description

    diag = fit.diagnostics
    ess = min(diag.min_ess_bulk, diag.min_ess_tail)
    return (
        f"Model: {model_description(fit)} ({sampler_description(fit)}); diagnostics PASS "
        f"(max R-hat {diag.max_rhat:.4f}, min ESS {ess:,.0f}; --explain shows each check)"
    )


def diagnostics_panel(fit, comparison) -> Panel:
    """Box the diagnostics of ``fit``: each check, and what to do when one failed."""
    from bayes_ir.report.marks import model_description, sampler_description

    passed = comparison.diagnostics_passed
    diag_text = escape(fit.diagnostics.summary()) if hasattr(fit.diagnostics, "summary") else ""
    if hasattr(fit, "describe_draws"):  # chains x draws, and the ESS they were chosen for
        diag_text += "\n  " + escape(fit.describe_draws())
    if not passed:
        gate = comparison.gate
        problems = "\n".join(f"- {escape(cli_wording(m))}" for m in gate.messages)
        refit = (
            f"Refit with {escape(cli_wording(gate.refit))}."
            if gate.refit
            else "Refit with more draws (--draws, --tune), more chains (--chains) "
            "or, after divergences, a higher --target-accept."
        )
        diag_text = (
            "[bold red]The posterior is not reliable: do not act on these numbers.[/]\n"
            f"{problems}\n{refit}\n" + diag_text
        )
    return Panel(
        diag_text or escape(comparison.gate.banner()),
        title="Diagnostics: PASS" if passed else "Diagnostics: FAILED (do not act on this)",
        subtitle=escape(f"{model_description(fit)}, {sampler_description(fit)}"),
        border_style="green" if passed else "bold red",
        expand=False,
    )


def print_model(fit, comparison, *, explain: bool) -> None:
    """Print the model and its diagnostics: one line when they passed, the box otherwise.

    With ``--likelihood auto`` one more line says which model was chosen; ``explain``
    prints the box and the PSIS-LOO comparison of every candidate.
    """
    from bayes_ir.report.marks import choice_line

    if explain or not comparison.diagnostics_passed:
        console.print(diagnostics_panel(fit, comparison), highlight=False)
    else:
        console.print(model_line(fit), highlight=False, markup=False)  # a terminal: words wrap
    choice = fit.likelihood_choice
    if choice is not None:  # --likelihood auto: how the model was chosen
        text = choice.summary() if explain else choice_line(choice)
        console.print(text, highlight=False, markup=False, soft_wrap=explain)  # a table: whole


def print_legend(fit, misfit: tuple[str, ...], *, champion: str, consequence: str = "") -> None:
    """Print the line that says what the misfit mark means (nothing when nothing is marked)."""
    from bayes_ir.report.marks import misfit_legend

    legend = misfit_legend(fit, misfit, champion=champion, consequence=consequence)
    if legend:
        console.print(legend, style="bold red", highlight=False, markup=False)


#: Pulls below this share of the observed difference get no line of their own (the
#: ``observed`` column still shows them); ``--explain`` always prints the pooling.
POOLING_NOTE_SHARE = 0.05


def print_pooling(pooling, *, explain: bool) -> None:
    """Say why the model's differences differ from the observed ones (partial pooling).

    One line when pooling pulls the differences by :data:`POOLING_NOTE_SHARE` or more
    (:class:`~bayes_ir.hierarchical.contrasts.Pooling`), its full summary with ``explain``.
    """
    if pooling is None:
        return
    if explain:
        console.print(pooling.summary(), highlight=False, markup=False)
    elif pooling.pooling == "all" and pooling.share >= POOLING_NOTE_SHARE:
        console.print(
            f"mean is pulled about {pooling.share:.0%} of the way from observed to 0: the model "
            f"pools the {pooling.n_pooled} system effects ({pooling.artifacts_among}) towards "
            f"their mean (--explain says why; "
            f"{pooling.way_out(cli=True)})",
            highlight=False,
            markup=False,
        )


def fit_steps(scores, sampler, fit, *, seed, misfit, saved=None, extra=()) -> list:
    """Return the next steps after a fit: a better model when needed, then decide, review.

    ``extra`` are options the next commands share (``--margin``); a fit saved with
    ``--save`` is reused by them (``--fit``).
    """
    steps = []
    if not fit.diagnostics.passed:
        why, again = sampler.refit(fit)
        steps.append((why, scores.command_line("fit", *again.words(seed=seed))))
    elif misfit and sampler.likelihood != "auto":
        seeded = [] if seed is None else ["--seed", str(seed)]
        steps.append((
            f"a model that describes {', '.join(misfit)}",
            scores.command_line("fit", "--likelihood", "auto", *seeded),
        ))  # fmt: skip
    common = [*sampler.words(seed=seed, saved=saved), *extra]
    steps.append((
        "deploy, keep the champion or collect more data",
        scores.command_line("decide", *common),
    ))  # fmt: skip
    steps.append((
        "the whole review (risk, model check, provenance) in one page",
        scores.command_line("review", *common, "-o", "review.html"),
    ))  # fmt: skip
    return steps


@app.command()
@uses_scores(roles=True)
def fit(
    scores: Scores,
    sampler: Sampler,
    workers: Workers,
    seed: Seed = None,
    min_gain: MinGain = 0.0,
    ci_prob: CiProb = None,
    figures: Figures = None,
    sweep: Sweep = None,
    sweep_effects: SweepEffects = "mean",
    save: SavePath = None,
    strict: Strict = False,
    explain: Explain = False,
    output: Output = None,
    by: By = None,
    segments: SegmentsOption = None,
    scale: Scale = "auto",
    sigma_replicate: SigmaReplicate = "pooled",
) -> None:
    """Is each challenger better than the champion? Fit the Bayesian hierarchical model.

    Prints the model and its diagnostics, the decision table (difference from the
    champion, credible interval, P(better), P(gain > --min-gain), verdict) and what to
    run next; writes the figures, the saved fit and the table on request. --explain adds
    each diagnostics check and, with --likelihood auto, the comparison of the models.
    With --by collection or --segments: one model across the collections (or segments),
    printing the overall contrast, each group's shrunken contrast beside its raw one, the
    contrast on a new group and the number of groups won. With several runs per system (a
    seed, fold or replicate column, --replicate-pattern, a folder per system): the model of
    runs, printing the variance components and each contrast in expectation over seeds
    and for one run of each.
    """
    if wants_across(by, segments):
        from bayes_ir.cli.across import across_steps, fit_from_cli, report_fit

        if sweep is not None or save is not None:
            raise BayesIRError(
                "--sweep and --save apply to one collection's fit, not --by/--segments"
            )
        across = fit_from_cli(scores, sampler, segments=segments, scale=scale, seed=seed,
                              strict=False)  # fmt: skip
        report_fit(across, ci_prob=ci_prob, figures=figures, output=output)
        say_next(*across_steps(scores, sampler, across, command="fit", seed=seed,
                               segments=segments, scale=scale))  # fmt: skip
        if strict and not across.diagnostics.passed:
            raise typer.Exit(EXIT_DIAGNOSTICS_FAILED)
        return
    from bayes_ir.hierarchical.artifact_sweep import EFFECTS
    from bayes_ir.hierarchical.contrasts import compare
    from bayes_ir.report.marks import misfit_systems

    p = defaults.ci_prob(ci_prob)
    m_values = list(number_list(sweep, "--sweep")) if sweep is not None else None
    if m_values is not None:
        from bayes_ir.hierarchical.artifact_sweep import check_sweep_pooling

        check_sweep_pooling(m_values, sampler.pooling)
    if sweep_effects not in EFFECTS:
        raise typer.BadParameter(
            f"{sweep_effects!r}: choose {', '.join(EFFECTS)}", param_hint="--sweep-effects"
        )
    table = scores.load(need_challenger=True)
    if table.has_replicates:
        from bayes_ir.cli.replicates import fit_runs, report_runs, runs_steps

        if sweep is not None or save is not None:
            raise BayesIRError("--sweep and --save apply to one score per cell, not to runs")
        console.print(table.summary(notes=False), highlight=False, markup=False, soft_wrap=True)
        runs = fit_runs(table, sampler, seed=seed, sigma_replicate=sigma_replicate)
        report_runs(runs, ci_prob=ci_prob, figures=figures, output=output)
        say_next(*runs_steps(scores, sampler, runs, command="fit", seed=seed))
        if strict and not runs.diagnostics.passed:
            raise typer.Exit(EXIT_DIAGNOSTICS_FAILED)
        return
    validate.measure_margin("--min-gain", min_gain, table.measures[0], what="minimal gain")
    console.print(table.summary(notes=False), highlight=False, markup=False, soft_wrap=True)
    result = sampler.fit(table, seed=seed)
    comparison = compare(result, ci_prob=p, min_gain=min_gain)
    passed = comparison.diagnostics_passed
    if not passed:
        warn_failed_checks(comparison.gate.messages)
    print_model(result, comparison, explain=explain)
    misfit = misfit_systems(result, [comparison.champion, *comparison.challengers])
    console.print(decision_table(comparison, misfit=misfit, explain=explain))
    print_legend(result, misfit, champion=comparison.champion)
    print_pooling(comparison.pooling, explain=explain)
    if figures is not None:
        with status("Drawing figures..."):
            paths = write_figures(result, comparison, figures, ci_prob=p, seed=seed)
        for path in paths:
            say_wrote(path)
    if m_values is not None:
        options = {**sampler.options(), "likelihood": result.likelihood}
        with workers.open() as executor:
            sweep_frame = _run_sweep(table, m_values, figures, ci_prob=p, effects=sweep_effects,
                                     seed=seed, executor=executor, **options)  # fmt: skip
        if output is not None:
            save_output(sweep_frame, output.with_stem(f"{output.stem}_artifact_sweep"))
    if save is not None:
        save_fit(result, save)
    save_output(comparison.to_frame(), output)
    if scores.last_view:
        margin = ["--margin", f"{min_gain:g}"] if min_gain > 0 else []
        say_next(*fit_steps(scores, sampler, result, seed=seed, misfit=misfit, saved=save,
                            extra=margin))  # fmt: skip
    if strict and not passed:
        raise typer.Exit(EXIT_DIAGNOSTICS_FAILED)


def _run_sweep(
    table,
    m_values: list[int],
    figures: Path | None,
    *,
    ci_prob: float,
    effects: str = "mean",
    **fit_options,
) -> pd.DataFrame:
    """Refit with the top m artifacts for each m, print the table, draw Figure 5.

    Returns the sweep's table (``ArtifactSweep.to_frame()``).
    """
    from bayes_ir.hierarchical.artifact_sweep import artifact_sweep

    seed = fit_options.pop("seed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", ModelCheckWarning)  # said once, by the main fit
        result = artifact_sweep(table, m_values=m_values, ci_prob=ci_prob, seed=seed, **fit_options)
    frame = result.to_frame(effects=cast("Effects", effects))  # checked by the command
    view = compact_table(
        f"Artifact sweep: challengers minus {result.champion!r} with the top m artifacts",
        caption="width: of the interval; gap > 0: the challenger's interval lies above the "
        "champion's",
    )
    for col in ("m", "challenger", "mean", f"{100 * ci_prob:g}% interval", "width", "gap", "diag."):
        view.add_column(col, justify="left" if col == "challenger" else "right", no_wrap=True)
    for row in frame.itertuples(index=False):
        view.add_row(
            str(row.m),
            row.challenger,
            f"{row.mean:+.4f}",
            f"[{row.ci_lower:+.4f}, {row.ci_upper:+.4f}]",
            f"{row.width:.4f}",
            f"{row.gap:+.4f}",
            "PASS" if row.diagnostics_passed else Text("FAIL", style="bold red"),
        )
    console.print(view)
    if not result.diagnostics_passed:
        console.print(result.gate.banner(), style="bold red", highlight=False, markup=False)
        warn_failed_checks(result.gate.messages)
    if figures is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig = result.plot(effects=effects)
        path = figures / FIGURE_FILES["artifact_sweep"]
        with atomic_path(path, what="--figures") as tmp:
            fig.savefig(tmp, dpi=120)
        plt.close(fig)
        say_wrote(path)
    return frame
