"""The typer application object and the options every command shares."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, overload

import typer
from rich import box
from rich.console import Console, ConsoleDimensions, RenderableType
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from typer._click.globals import get_current_context
from typer.core import TyperCommand, TyperGroup

from bayes_ir import defaults, validate
from bayes_ir.errors import BayesIRError
from bayes_ir.files import TABLE_FORMATS, check_output_path, declare_inputs

if TYPE_CHECKING:
    from bayes_ir.table import ScoreTable

#: Width of output that is not a terminal (a file, a pipe, a CI log): wide enough that
#: no table is wrapped or split; each line is as wide as its own content.
UNWRAPPED_WIDTH = 10_000
#: Width of the rule lines between measures (``-m AP -m nDCG@10``) outside a terminal.
RULE_WIDTH = 80


class _Console(Console):
    """A rich console that fits a terminal, and never wraps output that is not one.

    On a terminal the width is the terminal's, as rich finds it. Written to a file, a
    pipe or a CI log, the width is :data:`UNWRAPPED_WIDTH`, whatever ``COLUMNS`` says:
    rich would otherwise take 80 columns (or the width of another stream that is a
    terminal) and wrap table cells ("collect more / data") or split a wide table in two.
    A width given explicitly (``width=``, or set later) is kept.
    """

    def __init__(self, *args: Any, width: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, width=width, **kwargs)
        self._fixed_width = width is not None

    @property
    def size(self) -> ConsoleDimensions:
        """The terminal's size, or :data:`UNWRAPPED_WIDTH` columns off a terminal."""
        size = super().size
        if not self._fixed_width and not self.is_terminal:
            return ConsoleDimensions(UNWRAPPED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._fixed_width = True
        self._width, self._height = new_size

    @property
    def width(self) -> int:
        """The width of :attr:`size`."""
        return self.size.width

    @width.setter
    def width(self, width: int) -> None:
        self._fixed_width = True
        self._width = width


def _flags_untyped(params: list) -> list:
    """Show flags (``--version``, ``--strict``, ``--help``) in ``--help`` without ``<bool>``."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


class _Command(TyperCommand):
    """A command whose ``--help`` lists flags without a value type."""

    def get_params(self, ctx):  # noqa: D102 (typer's)
        return _flags_untyped(super().get_params(ctx))


class _Group(TyperGroup):
    """The ``bayes-ir`` group, whose ``--help`` lists flags without a value type."""

    def get_params(self, ctx):  # noqa: D102 (typer's)
        return _flags_untyped(super().get_params(ctx))


class _Typer(typer.Typer):
    """The application: every command is a :class:`_Command`."""

    def command(self, *args, **kwargs):  # noqa: D102 (typer's)
        kwargs.setdefault("cls", _Command)
        return super().command(*args, **kwargs)


app = _Typer(
    cls=_Group,
    name="bayes-ir",
    help=(
        "Is the new system really better, and how risky is it to deploy? "
        "Bayesian hierarchical models, risk measures, meta-analysis, GLMs and "
        "ranking reliability over per-topic scores."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    add_completion=False,
)
console = _Console()
console_err = _Console(stderr=True)

#: Likelihoods of the hierarchical model, and the spellings the CLI accepts for them.
LIKELIHOODS = {"gaussian": "gaussian", "normal": "gaussian", "skew_normal": "skew_normal",
               "skewnormal": "skew_normal", "sn": "skew_normal", "auto": "auto"}  # fmt: skip


def _check_ci_prob(value: float | None) -> float | None:
    """Option callback: an interval probability strictly between 0 and 1."""
    return None if value is None else validate.probability("--ci-prob", value)


def _check_output(value: Path | None) -> Path | None:
    """Option callback: refuse an unknown table extension before any work is done."""
    if value is not None and value.suffix.lower() not in TABLE_FORMATS:
        raise BayesIRError(
            f"cannot tell the output format from {value.name!r}: use one of "
            + ", ".join(sorted(TABLE_FORMATS))
        )
    return value


def _check_likelihood(value: str) -> str:
    """Option callback: normalise ``--likelihood`` (``skew-normal`` -> ``skew_normal``)."""
    key = value.strip().lower().replace("-", "_")
    if key not in LIKELIHOODS:
        raise BayesIRError(f"unknown likelihood {value!r}: choose gaussian, skew_normal or auto")
    return LIKELIHOODS[key]


def _check_target_accept(value: float | None) -> float | None:
    """Option callback: a NUTS target acceptance rate strictly between 0 and 1."""
    return None if value is None else validate.probability("--target-accept", value)


def _check_chains(value: int) -> int:
    """Option callback: a number of chains up to :data:`bayes_ir.defaults.MAX_CHAINS`."""
    return validate.positive_int("--chains", value, maximum=defaults.MAX_CHAINS)


#: Library wording (keyword arguments) -> the command-line option that does the same.
_CLI_WORDING = (
    (re.compile(r"missing='(\w+)'"), r"--missing \1"),
    (re.compile(r"(--missing \w+) or '(\w+)'"), r"\1 or --missing \2"),
    (re.compile(r"pass check_range=False"), "pass --no-range-check"),
    (re.compile(r"use table\.select\(measure=\.\.\.\) first"), "pick one with --measure"),
    (re.compile(r"use table\.select\(collection=\.\.\.\) first"), "pick one with --collection"),
    (re.compile(r"\(tune=\.\.\., draws=\.\.\.\)"), "(--tune, --draws)"),
    (re.compile(r"\(draws=\.\.\.\)"), "(--draws)"),
    (re.compile(r"raise target_accept"), "raise --target-accept"),
    (
        re.compile(r"\b(tune|target_accept)=(\S+) is ignored"),
        lambda m: f"--{m[1].replace('_', '-')} {m[2]} is ignored",
    ),
    (re.compile(r"likelihood='(\w+)'"), r"--likelihood \1"),
    (re.compile(r"\bscale='(\w+)'"), r"--scale \1"),
    (re.compile(r"pass \w+= \(CLI: (--[\w-]+)\)"), r"pass \1"),
    (
        re.compile(r"^(draws|tune|chains|seed|method|effect|epsilon|min_mean|alpha) must"),
        lambda m: f"--{m.group(1).replace('_', '-')} must",
    ),
    (re.compile(r"^sd must"), "--trisk-sd must"),
    (re.compile(r"lower draws or chains"), "lower --draws or --chains"),
    (
        re.compile(r"^the loss weight r \(= 1 \+ alpha\) must"),
        "--r (the loss weight r = 1 + alpha) must",
    ),
    (
        re.compile(r"raise bayes_ir\.defaults\.MEMORY_LIMIT or BAYES_IR_MEMORY_LIMIT"),
        "set BAYES_IR_MEMORY_LIMIT (bytes)",
    ),
    (
        re.compile(r"per-collection rows: to_frame\(\), leave_one_out\(\)"),
        "per-collection rows below (--output writes them); --leave-one-out",
    ),
)


def cli_wording(message: str) -> str:
    """Say a library message in the CLI's words: ``missing='keep'`` -> ``--missing keep``."""
    for pattern, replacement in _CLI_WORDING:
        message = pattern.sub(replacement, message)
    return message


def check_figure(value: Path | None) -> Path | None:
    """Option callback: a figure file whose extension matplotlib can write."""
    if value is None:
        return value
    from matplotlib.backend_bases import FigureCanvasBase

    known = FigureCanvasBase.get_supported_filetypes()
    if value.suffix.lower().lstrip(".") not in known:
        raise BayesIRError(
            f"cannot tell the figure format from {value.name!r}: use .pdf, .svg or .png "
            f"(or {', '.join('.' + k for k in sorted(known) if k not in ('pdf', 'svg', 'png'))})"
        )
    return value


Files = Annotated[
    list[Path],
    typer.Argument(
        help="Score files: tidy CSV/TSV/Parquet, wide matrix, trec_eval -q, runs, or per-item "
        "LLM evaluation logs (lm-evaluation-harness samples, Inspect, HELM, SWE-bench)."
    ),
]
InputFormat = Annotated[
    str | None,
    typer.Option(
        "--input-format",
        "-f",
        help="Override detection: tidy, wide, trec_eval, run, lines, pyterrier, lm_eval, "
        "inspect, helm or swebench (see docs/inputs.md).",
    ),
]
Measure = Annotated[
    list[str] | None,
    typer.Option(
        "--measure",
        "-m",
        help="Measure (ir_measures string, e.g. nDCG@10); repeat it to analyse several side "
        "by side (-m nDCG@10 -m AP).",
    ),
]
Collection = Annotated[str | None, typer.Option("--collection", help="Collection to analyse.")]
Qrels = Annotated[Path | None, typer.Option("--qrels", help="Qrels file, for TREC run inputs.")]
Missing = Annotated[
    str, typer.Option("--missing", help="Systems lacking topics: error, intersect or keep.")
]
RangeCheck = Annotated[
    bool,
    typer.Option(
        "--range-check/--no-range-check",
        help="Refuse scores outside the measure's range (--no-range-check: rescaled on purpose).",
    ),
]
Champion = Annotated[str, typer.Option("--champion", "-c", help="Exact name of the champion.")]
Challengers = Annotated[
    list[str] | None,
    typer.Option(
        "--challengers",
        "-C",
        help="Challenger names, globs ('chal_*'), re:regex or a file of names (repeatable); "
        "an exact system name always wins over its pattern reading.",
    ),
]
Artifacts = Annotated[
    list[str] | None,
    typer.Option("--artifacts", "-a", help="Artifact runs (default: every other system)."),
]
Exclude = Annotated[
    list[str] | None, typer.Option("--exclude", help="Systems never used as artifacts.")
]
DropBottom = Annotated[
    float, typer.Option("--drop-bottom", help="Fraction of weakest artifacts to drop.")
]
TopM = Annotated[int | None, typer.Option("--top-m", help="Keep only the best M artifacts.")]
Likelihood = Annotated[
    str,
    typer.Option(
        "--likelihood",
        "-l",
        help="Error distribution: gaussian, skew_normal, or auto (choose by PSIS-LOO among "
        "gaussian, skew_normal and gaussian with one residual SD per system).",
        callback=_check_likelihood,
    ),
]
Seed = Annotated[
    int | None,
    typer.Option(
        "--seed", min=0, help="Random seed (same seed, same numbers; default: fixed seed)."
    ),
]
Draws = Annotated[
    int | None,
    typer.Option(
        "--draws",
        min=1,
        help="Posterior draws per chain (default: enough for bulk and tail ESS >= "
        f"{defaults.DRAWS_ESS:,.0f} with a margin for the exact and Gibbs samplers, "
        "10,000 for the skew-normal up to 10,000 cells, fewer above in proportion, at least "
        f"2,000; {defaults.DRAWS:,} for other NUTS fits).",
    ),
]
Tune = Annotated[
    int | None, typer.Option("--tune", min=0, help="Tuning (warm-up) draws per chain.")
]
TargetAccept = Annotated[
    float | None,
    typer.Option(
        "--target-accept",
        help="NUTS target acceptance rate; raise it (0.95, 0.99) after divergences.",
        callback=_check_target_accept,
    ),
]
Chains = Annotated[int, typer.Option("--chains", help="Number of chains.", callback=_check_chains)]
CiProb = Annotated[
    float | None,
    typer.Option(
        "--ci-prob",
        help="Probability of the intervals, in (0, 1) (default 0.95).",
        callback=_check_ci_prob,
    ),
]
Strict = Annotated[
    bool,
    typer.Option(
        "--strict", help="Exit with status 3 when the posterior fails its diagnostics (for CI)."
    ),
]
Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="Show no progress (warnings and errors still show).")
]
Explain = Annotated[
    bool,
    typer.Option(
        "--explain",
        help="Also print how the numbers were reached: the rule and its formulas, the method "
        "notes, the model choice (the default output is the answer and how to read it).",
    ),
]
ExecutorName = Annotated[
    str,
    typer.Option(
        "--executor",
        help="Where sweeps run: local (processes on this machine) or dask (a Dask cluster).",
        callback=lambda value: validate.choice("--executor", value, ("local", "dask")),
    ),
]
Scheduler = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="Dask scheduler address for --executor dask (default: $BAYES_IR_SCHEDULER).",
    ),
]

#: ``--quiet`` in force: spinners are not shown either.
_QUIET: list[bool] = [False]


@contextmanager
def quieted(quiet: bool) -> Iterator[None]:
    """Silence :func:`status` spinners inside the block when ``quiet``."""
    _QUIET.append(quiet)
    try:
        yield
    finally:
        _QUIET.pop()


def status(text: str):
    """Show a spinner with ``text`` on stderr while a step runs (nothing with ``--quiet``)."""
    return nullcontext() if _QUIET[-1] else console_err.status(text, spinner="dots")


#: Exit status of ``--strict`` commands whose posterior failed its diagnostics.
EXIT_DIAGNOSTICS_FAILED = 3
Output = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the result table: .csv, .json, .md or .tex.",
        callback=_check_output,
    ),
]


#: Options naming a file the command writes: checked against the inputs before any work.
OUTPUT_OPTIONS = ("output", "save", "plot", "pairs")


def guard_outputs(inputs: list[Path | None]) -> None:
    """Refuse, before any work, an output option that names one of the ``inputs``.

    The inputs are also declared (:func:`bayes_ir.files.declare_inputs`), so every file
    the command writes later (figures, the sweep's table) is checked against them too.
    """
    declare_inputs(inputs)
    context = get_current_context(silent=True)
    seen: dict[Path, str] = {}
    for name in OUTPUT_OPTIONS:
        value = context.params.get(name) if context is not None else None
        if value is not None:
            check_output_path(value, what=f"--{name}")
            key = Path(value).expanduser().resolve()
            if key in seen:
                raise BayesIRError(
                    f"--{seen[key]} and --{name} both name {value}: give each its own file"
                )
            seen[key] = name


def load(
    files: list[Path],
    *,
    input_format: str | None,
    measure: str | Sequence[str] | None,
    collection: str | None = None,
    qrels: Path | None = None,
    missing: str = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Read the files with the shared options, then select the collection and measures.

    ``measure`` is one measure or several (``-m nDCG@10 -m AP``); runs scored against
    ``qrels`` compute each of them.
    """
    from bayes_ir.readers import read_scores
    from bayes_ir.table_checks import DEFAULT_MEASURE

    guard_outputs([*files, qrels])
    measures = [measure] if isinstance(measure, str) else list(measure or ())
    options: dict = {"missing": missing}
    if not check_range:
        options["check_range"] = False
    if len(measures) == 1:
        options["measure"] = measures[0]
    elif measures and qrels is not None:  # runs: ir_measures computes every measure
        options["measure"] = measures
    if qrels is not None:
        options["qrels"] = qrels
    table = read_scores(files, format=input_format, **options)
    if not measures and list(table.measures) == [DEFAULT_MEASURE]:
        say_note(
            f"{', '.join(str(f) for f in files)} names no measure, so tables and figures say "
            f"{DEFAULT_MEASURE!r}: pass -m with its name (-m AP, -m nDCG@10)"
        )
    if len(measures) == 1:
        table = table.select(collection=collection, measure=_measure_label(table, measures[0]))
    elif collection is not None or measures:  # several: each must be in the scores
        table = table.select(collection=collection, measure=measures or None)
    return table


def assign_roles(
    table: ScoreTable,
    *,
    champion: str,
    challengers: list[str] | None = None,
    artifacts: list[str] | None = None,
    exclude: list[str] | None = None,
    drop_bottom: float = 0.0,
    top_m: int | None = None,
    need_challenger: bool = False,
) -> ScoreTable:
    """Assign roles with :meth:`ScoreTable.with_roles` to a table of one collection and measure.

    ``need_challenger`` refuses, in one line, roles that select no challenger.
    """
    require_one_block(table)
    table = table.with_roles(
        champion=champion,
        challengers=challengers,
        artifacts=artifacts,
        exclude=exclude,
        drop_bottom=drop_bottom,
        top_m=top_m,
    )
    if need_challenger and not table.challengers:
        raise BayesIRError("no challenger selected: pass --challengers NAME (or a glob)")
    return table


def number_list(text: str, option: str, *, kind: type = int, minimum: float = 0) -> tuple:
    """Parse ``option``'s comma-separated numbers, each finite and at least ``minimum``.

    Raises :class:`~bayes_ir.errors.BayesIRError` (one ``error:`` line) naming the option.
    """
    what = "integers" if kind is int else "numbers"
    wrong = f"{option} takes comma-separated {what} >= {minimum:g}, got {text!r}"
    try:
        values = tuple(kind(v) for v in text.replace(" ", "").split(",") if v)
    except ValueError:
        raise BayesIRError(wrong) from None
    if not values or not all(math.isfinite(v) and v >= minimum for v in values):
        raise BayesIRError(wrong)
    return values


def require_one_block(table: ScoreTable) -> None:
    """Refuse a table of several collections or measures, naming the option that selects one."""
    for kind, values, option in (
        ("collections", table.collections, "--collection"),
        ("measures", table.measures, "--measure"),
    ):
        if len(values) > 1:
            raise BayesIRError(
                f"{table.source}: the scores hold several {kind} ({', '.join(map(str, values))}); "
                f"pick one with {option}"
            )


def _measure_label(table: ScoreTable, measure: str | None) -> str | None:
    """Return the table's name for ``measure``: as given, or its other spelling."""
    if measure is None or measure in table.measures:
        return measure
    from bayes_ir.measures import canonical_measure

    wanted = canonical_measure(measure)
    hits = [m for m in table.measures if canonical_measure(m) == wanted]
    if hits:
        return hits[0]
    if len(table.measures) == 1:  # readers that take the measure as a label
        return table.measures[0]
    return measure  # select() raises, listing the measures present


@overload
def _escaped(value: RenderableType) -> RenderableType: ...
@overload
def _escaped(value: None) -> None: ...
def _escaped(value: RenderableType | None) -> RenderableType | None:
    return escape(value) if isinstance(value, str) else value


def _escaped_attribute(name: str) -> property:
    """Return a property that escapes the strings assigned to it (title, caption)."""
    key = f"_escaped_{name}"
    return property(
        lambda self: getattr(self, key), lambda self, value: setattr(self, key, _escaped(value))
    )


class EscapedTable(Table):
    """A rich table that shows its text as written: ``[bold]x[/bold]`` is not markup here.

    System, topic and collection names may hold square brackets (``new[/x]`` even makes
    rich raise ``MarkupError``), so every string given as title, caption, column header or
    cell is escaped with :func:`rich.markup.escape`. A styled cell is passed as
    :class:`rich.text.Text`, which is never parsed.
    """

    title = _escaped_attribute("title")
    caption = _escaped_attribute("caption")

    def add_column(self, header: RenderableType = "", *args, **options) -> None:
        """Add a column; a string ``header`` is shown as written (see the class)."""
        super().add_column(_escaped(header), *args, **options)

    def add_row(self, *cells: RenderableType | None, **options) -> None:
        """Add a row; string cells are shown as written (see the class)."""
        super().add_row(*(_escaped(cell) for cell in cells), **options)


def compact_table(title: str, **options) -> Table:
    """Return a rich table without side borders or edge padding, its title on the left.

    Wide result tables (risk review, meta-analysis) fit an 80-column terminal this way;
    the table is at least as wide as its title (which a narrower terminal still wraps);
    ``options`` go to :class:`rich.table.Table` (``caption``, ``min_width``, ...). Text is
    shown as written (:class:`EscapedTable`).
    """
    options.setdefault("min_width", len(title))  # the title on one line, never wrapped
    return EscapedTable(
        title=title,
        title_justify="left",
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
        **options,
    )


def save_output(frame, output: Path | None) -> None:
    """Write ``frame`` to ``output`` (if given) and say where."""
    if output is not None:
        from bayes_ir.report import write_table

        say_wrote(write_table(frame, output))


def write_figures(figures: Mapping[str, Callable[[], Any]], folder: Path) -> list[Path]:
    """Draw each figure and write it as ``folder / name`` (PNG, atomically); return the paths.

    ``figures`` maps a file name to a function that returns a matplotlib Figure; each
    figure is closed once written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayes_ir.files import atomic_path

    paths = []
    for name, draw in figures.items():
        fig = draw()
        path = folder / name
        with atomic_path(path, what="--figures") as tmp:
            fig.savefig(tmp, dpi=120)
        plt.close(fig)
        paths.append(path)
    return paths


def warn(message: str, *, style: str = "yellow") -> None:
    """Print ``warning: message`` on stderr as one line, in the CLI's words, shown as written."""
    text = " ".join(cli_wording(message).split())
    console_err.print(f"[{style}]warning:[/] {escape(text)}", highlight=False, soft_wrap=True)


def warn_failed_checks(messages: Iterable[str]) -> None:
    """Print one ``warning: diagnostics failed: ...`` line per failed diagnostics check."""
    for message in messages:
        warn(f"diagnostics failed: {message}", style="bold red")


def say_next(*steps: tuple[str, str | None]) -> None:
    """Print what to do next: ``next:``, then ``  COMMAND  # WHY`` per step (shown as written).

    A step without a command is advice, printed as ``  WHY``. Each command is whole on
    its line, so that it can be copied into a shell with its comment.
    """
    console.print("[bold]next:[/]", highlight=False)
    for why, command in steps:
        line = f"  {command}  # {why}" if command else f"  {why}"
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def typed_command(command: str, *, exclude: Iterable[str] = ()) -> str:
    """``bayes-ir COMMAND ...`` with the arguments and options typed for this run.

    Only what the user gave (not defaults), minus the options named in ``exclude``
    (parameter names: ``"plot"``, ``"output"``), each word quoted for a POSIX shell: the
    start of a next step that adds an option.
    """
    import shlex

    context = get_current_context(silent=True)
    words = ["bayes-ir", command]
    if context is None:  # not run from the command line
        return " ".join(words)
    for param in context.command.params:
        name = param.name
        source = context.get_parameter_source(name) if name else None
        if name in set(exclude) or source is None or source.name != "COMMANDLINE":
            continue
        value = context.params.get(name)
        values = list(value) if isinstance(value, list | tuple) else [value]
        if param.param_type_name == "argument":
            words += [str(v) for v in values]
        elif getattr(param, "is_flag", False):
            words.append(param.opts[0] if value else param.secondary_opts[0])
        else:
            for v in values:
                words += [param.opts[0], str(v)]
    return " ".join(shlex.quote(w) for w in words)


def say_note(message: str) -> None:
    """Print ``note: message`` on stderr as one line, in the CLI's words, shown as written."""
    text = " ".join(cli_wording(message).split())
    console_err.print(f"note: {text}", highlight=False, markup=False, soft_wrap=True)


def rule(title: str) -> None:
    """Print a rule line with ``title`` (between measures): the terminal's width, else 80."""
    width = console.width if console.is_terminal else RULE_WIDTH
    console.print(Rule(escape(title), characters="=", style="bold"), width=width)


def say_wrote(path: str | Path) -> None:
    """Tell on stderr that ``path`` was written (the name shown as it is)."""
    console_err.print(f"wrote {path}", highlight=False, markup=False, soft_wrap=True)


def _version(value: bool) -> None:
    if value:
        from bayes_ir import __version__

        console.print(f"bayes-ir {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Tell whether a new system is really better, and how risky it is to deploy."""
