"""Systems with several runs each (seeds, folds, samples) on the command line.

``bayes-ir fit``, ``decide`` and ``review`` read a table with a ``replicate`` (``seed``,
``fold``) column, several run files per system (``--replicate-pattern`` or a folder
per system) or an Inspect log with several epochs; the model of runs then replaces the
one-score-per-cell model (:func:`bayes_ir.hierarchical.fit_replicates`). This module
fits it with the command's options and prints the results; no statistics here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bayes_ir.cli._app import console, save_output, say_next, say_wrote, status, write_figures
from bayes_ir.errors import BayesIRError

if TYPE_CHECKING:
    from bayes_ir.cli._inputs import Sampler, Scores
    from bayes_ir.hierarchical import ReplicateFit
    from bayes_ir.table import ScoreTable

SigmaReplicate = Annotated[
    str,
    typer.Option(
        "--sigma-replicate",
        help="With several runs per system: one run-to-run (seed) SD for every system "
        "(pooled) or one per system (system).",
    ),
]

CostTopic = Annotated[
    float,
    typer.Option(
        "--cost-topic",
        help="With several runs per system: the cost of judging one more topic, for the plan "
        "of more topics or more seeds.",
    ),
]
CostRun = Annotated[
    float,
    typer.Option(
        "--cost-run",
        help="With several runs per system: the cost of one more run (seed) of one system, "
        "for the plan of more topics or more seeds.",
    ),
]

#: Figure file of the runs per system.
RUNS_FILE = "runs.png"


def fit_runs(
    table: ScoreTable, sampler: Sampler, *, seed: int | None, sigma_replicate: str
) -> ReplicateFit:
    """Fit the model of runs with the command's sampler options."""
    import warnings

    from bayes_ir.errors import ConvergenceWarning, ModelCheckWarning
    from bayes_ir.hierarchical import fit_replicates

    if sampler.likelihood != "gaussian":
        raise BayesIRError("with several runs per system the model is Gaussian: drop --likelihood")
    if sampler.sigma != "pooled":
        raise BayesIRError(
            "with several runs per system the residual spread is set by --sigma-replicate: "
            "drop --sigma"
        )
    options = {k: v for k, v in sampler.options().items() if k in ("chains", "draws", "tune")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # said loudly by the summary
        warnings.simplefilter("ignore", ModelCheckWarning)  # marked and said by the summary
        with status("Sampling the model of runs..."):
            return fit_replicates(table, sigma_replicate=sigma_replicate, seed=seed, **options)


def report_runs(
    fit: ReplicateFit, *, ci_prob: float | None, figures: Path | None, output: Path | None
) -> None:
    """Print the contrasts of both kinds; write the runs figure and the table on request."""
    result = fit.contrasts(ci_prob=ci_prob)
    console.print(result.summary(), highlight=False, markup=False, soft_wrap=True)
    if figures is not None:
        with status("Drawing the runs..."):
            paths = write_figures({RUNS_FILE: result.plot}, figures)
        for path in paths:
            say_wrote(path)
    save_output(result.to_frame(), output)


def print_runs(
    decision, fit: ReplicateFit, *, explain: bool, cost_topic: float, cost_run: float
) -> None:
    """Print every challenger's runs and P(run beats), and the plan of each undecided one.

    The plan of more topics or more seeds is one line (the grid with ``explain``).
    """
    from bayes_ir.decision import more_runs
    from bayes_ir.report.decision import runs_lines
    from bayes_ir.report.more_runs import more_runs_line

    console.print("\n".join(runs_lines(decision)), highlight=False, markup=False, soft_wrap=True)
    open_ = [r.challenger for r in decision.table.itertuples() if r.action == "collect more data"]
    if not open_:
        return
    console.print("\nMore topics or more seeds? (the cheapest cell of the plan; --explain shows "
                  "the grid)" if not explain else "", highlight=False, markup=False)  # fmt: skip
    for name in open_:
        plan = more_runs(
            fit, name, over=decision.over, margin=decision.margin, mode=decision.mode,
            threshold=decision.threshold, p_min=decision.p_min, cost_topic=cost_topic,
            cost_run=cost_run,
        )  # fmt: skip
        text = plan.summary() if explain else "  " + more_runs_line(plan)
        console.print(text, highlight=False, markup=False, soft_wrap=True)


def review_runs_cli(
    scores: Scores,
    table: ScoreTable,
    sampler: Sampler,
    *,
    output: Path,
    sigma_replicate: str,
    margin: float | None,
    ci_prob: float | None,
    seed: int | None,
    cost_topic: float,
    cost_run: float,
    command: str,
) -> None:
    """Fit the model of runs, write the review of runs and print its two verdicts."""
    from bayes_ir.files import declared_inputs
    from bayes_ir.report.review_runs import review_runs

    if sampler.fit_path is not None:
        raise BayesIRError("--fit reads a fit of one score per cell; with runs the review fits "
                           "the model of runs: drop --fit")  # fmt: skip
    runs = fit_runs(table, sampler, seed=seed, sigma_replicate=sigma_replicate)
    with status("Deciding and planning more topics or seeds..."):
        made = review_runs(table, fit=runs, margin=margin, ci_prob=ci_prob, seed=seed,
                           cost_topic=cost_topic, cost_run=cost_run, inputs=declared_inputs(),
                           command=command)  # fmt: skip
    console.print("\n".join(made.headline_lines()), highlight=False, markup=False,
                  soft_wrap=True)  # fmt: skip
    say_wrote(made.to_html(output))
    common = list(sampler.words(seed=seed))
    if runs.sigma_replicate == "system":
        common += ["--sigma-replicate", "system"]
    say_next(
        (f"read it in a browser (one file, no network): {output}", None),
        *runs_steps(scores, sampler, runs, command="review", seed=seed),
        ("the decision in expectation over seeds as an exit status, for a CI pipeline",
         scores.command_line("decide", *common, "--gate")),
        ("the decision on one run of each as an exit status",
         scores.command_line("decide", *common, "--over", "single_run", "--gate")),
    )  # fmt: skip


def runs_steps(
    scores: Scores,
    sampler: Sampler,
    fit: ReplicateFit,
    *,
    command: str,
    seed: int | None,
    over: str | None = None,
) -> list[tuple[str, str | None]]:
    """Return the next steps after ``command`` on a table of runs."""
    extra = ["--sigma-replicate", "system"] if fit.sigma_replicate == "system" else []
    common = [*sampler.words(seed=seed), *extra]
    steps: list[tuple[str, str | None]] = []
    if not fit.diagnostics.passed:
        why, refit = sampler.refit(fit)
        more = [*refit.words(seed=seed), *common[len(sampler.words(seed=seed)) :]]
        steps.append((why, scores.command_line(command, *more)))
    check = fit.model_check
    if check is not None and check.flagged and fit.sigma_replicate == "pooled":
        again = scores.command_line(command, *common, "--sigma-replicate", "system")
        steps.append((f"{', '.join(check.flagged)}: runs spread unlike the others'; give each "
                      "system its own run-to-run SD", again))  # fmt: skip
    if command == "fit":
        steps.append(("deploy, keep or collect more, in expectation over seeds",
                      scores.command_line("decide", *common)))  # fmt: skip
    if command in ("fit", "decide"):
        other = "single_run" if over in (None, "expectation") else "expectation"
        what = "on one run of each, drawn at random" if other == "single_run" else (
            "in expectation over seeds")  # fmt: skip
        steps.append((f"decide {what} instead",
                      scores.command_line("decide", *common, "--over", other)))  # fmt: skip
    return steps
