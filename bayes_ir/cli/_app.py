"""The typer application object and the options every command shares."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, overload

import typer
from rich import box
from rich.console import (
    Console,
    ConsoleDimensions,
    ConsoleOptions,
    ConsoleRenderable,
    RenderableType,
    RenderHook,
    RenderResult,
)
from rich.markup import escape
from rich.measure import Measurement
from rich.rule import Rule
from rich.segment import Segment
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


#: Characters that would act on the terminal instead of showing: C0 and C1 controls but
#: tab and line feed (``\x1b`` starts ANSI escapes, ``\r`` and ``\b`` overwrite), DEL, and
#: the bidirectional overrides that reorder the text around them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def as_written(text: str) -> str:
    r"""Return ``text`` with each control character shown as its escape (``\x1b``).

    A system, topic or file name holding raw ANSI escapes, a carriage return or a
    bell is printed as written, never acted on by the terminal; on a terminal whose
    encoding is not Unicode, a character it cannot show is an escape too (``\xe8``).
    """
    text = _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    if not encoding.lower().startswith("utf"):  # an ASCII terminal: escapes, measured as such
        try:
            text = text.encode(encoding, "backslashreplace").decode(encoding)
        except LookupError:
            pass
    return text


class _AsWritten:
    """A renderable that shows the control characters of another one as escapes."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            if segment.control is None and _CONTROL.search(segment.text):
                yield Segment(as_written(segment.text), segment.style)
            else:
                yield segment

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)


class _ShowAsWritten(RenderHook):
    """Render hook: whatever is printed shows its control characters as escapes."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_AsWritten(r) for r in renderables]


class _Console(Console):
    """The CLI's console: names shown as written, and output off a terminal never wrapped.

    On a terminal the width is the terminal's, as rich finds it. Written to a file, a
    pipe or a CI log, the width is :data:`UNWRAPPED_WIDTH`, whatever ``COLUMNS`` says:
    rich would otherwise take 80 columns (or the width of another stream that is a
    terminal) and wrap table cells ("collect more / data") or split a wide table in two.
    A width given explicitly (``width=``, or set later) is kept.

    Emoji codes are not replaced (a system ``:rocket:`` is printed so), control
    characters of printed strings are escaped before rich reads them (rich would drop a
    bell or a carriage return) and those of any other renderable by a render hook.
    """

    def __init__(self, *args: Any, width: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, width=width, emoji=False, **kwargs)
        self._fixed_width = width is not None
        self.push_render_hook(_ShowAsWritten())

    def print(self, *objects: Any, **options: Any) -> None:
        """Print as :meth:`rich.console.Console.print`, strings' control characters escaped."""
        super().print(*(as_written(o) if isinstance(o, str) else o for o in objects), **options)

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
    """Option callback: normalise ``--likelihood`` (``skew-normal`` -> ``skew_normal``).

    Families with options keep them (``binomial(trials=10)``, ``zoib(inflation=system)``),
    checked by :func:`bayes_ir.hierarchical.families.get_family`.
    """
    from bayes_ir.hierarchical.families import get_family

    key = value.strip().lower().replace("-", "_")
    if key in LIKELIHOODS:
        return LIKELIHOODS[key]
    try:
        return get_family(value.strip()).spec
    except BayesIRError as exc:  # an unknown name, or a known family's bad option
        named = repr(value.strip()) in str(exc)
        raise BayesIRError(f"--likelihood{'' if named else f' {value!r}'}: {exc}") from None


def _check_pooling(value: str) -> str:
    """Option callback: ``--pooling`` is one of ``auto``, ``all``, ``artifacts``, ``none``."""
    from bayes_ir.hierarchical.model import POOLINGS

    return validate.choice("--pooling", value.strip().lower(), POOLINGS)


def _check_sigma(value: str) -> str:
    """Option callback: ``--sigma`` is ``pooled`` or ``system``."""
    from bayes_ir.hierarchical.model import SIGMAS

    return validate.choice("--sigma", value.strip().lower(), SIGMAS)


def _check_target_accept(value: float | None) -> float | None:
    """Option callback: a NUTS target acceptance rate strictly between 0 and 1."""
    return None if value is None else validate.probability("--target-accept", value)


def _check_chains(value: int) -> int:
    """Option callback: a number of chains up to :data:`bayes_ir.defaults.MAX_CHAINS`."""
    return validate.positive_int("--chains", value, maximum=defaults.MAX_CHAINS)


#: Reader options whose command-line flag is not ``--`` + the name with ``-`` for ``_``.
_READER_FLAGS = {"replicates": "--epochs-as-runs"}


def _flag(option: str) -> str:
    """Return the command-line flag of a reader option (``replicates``: ``--epochs-as-runs``)."""
    name = option.strip()
    return _READER_FLAGS.get(name, "--" + name.replace("_", "-"))


#: Library wording (keyword arguments) -> the command-line option that does the same.
_CLI_WORDING = (
    (re.compile(r"missing='(\w+)'"), r"--missing \1"),
    (re.compile(r"(--missing \w+) or '(\w+)'"), r"\1 or --missing \2"),
    (re.compile(r"pass check_range=False"), "pass --no-range-check"),
    (re.compile(r"use table\.select\(measure=\.\.\.\) first"), "pick one with --measure"),
    (re.compile(r"use table\.select\(collection=\.\.\.\) first"), "pick one with --collection"),
    (re.compile(r"\(tune=\.\.\., draws=\.\.\.\)"), "(--tune, --draws)"),
    (re.compile(r"\(draws=\.\.\., tune=\.\.\.\)"), "(--draws, --tune)"),
    (re.compile(r"\(draws=\.\.\.\)"), "(--draws)"),
    (re.compile(r"a higher target_accept\b"), "a higher --target-accept"),
    (re.compile(r"raise target_accept"), "raise --target-accept"),
    (
        re.compile(r"\b(tune|target_accept)=(\S+) is ignored"),
        lambda m: f"--{m[1].replace('_', '-')} {m[2]} is ignored",
    ),
    (  # the options of a refit (GateStatus.banner: "Refit with ...: draws=4000, tune=1000.")
        re.compile(r"\b(draws|tune|chains|target_accept)=(\d+(?:\.\d+)?)"),
        lambda m: f"--{m[1].replace('_', '-')} {m[2]}",
    ),
    (re.compile(r"likelihood='(\w+)'"), r"--likelihood \1"),
    (re.compile(r"pooling='(\w+)'"), r"--pooling \1"),
    (re.compile(r"\bm_values\b"), "--sweep"),
    (re.compile(r"^top=(\d+) is more than"), r"--top \1 is more than"),
    (re.compile(r"\bscale='(\w+)'"), r"--scale \1"),
    (re.compile(r"pass \w+= \(CLI: (--[\w-]+)\)"), r"pass \1"),
    (
        re.compile(
            r"^(draws|tune|chains|seed|method|effect|epsilon|min_mean|alpha|ci_prob|min_gain"
            r"|top_m|drop_bottom|p_min|threshold|margin) must"
        ),
        lambda m: f"--{m.group(1).replace('_', '-')} must",
    ),
    (re.compile(r"\bn_resamples\b"), "--resamples"),
    (re.compile(r"pass systems= with one name per file \(CLI: ([^)]*)\)"), r"\1"),
    (
        re.compile(r"pass systems= and collections="),
        "put each system's files in a folder named after it (system/collection/file)",
    ),
    (re.compile(r"pass score_measure=\.\.\. to choose one"), "pick one with --measure"),
    (
        re.compile(r"pass measure= to choose one \(or a list of several\)"),
        "pick one with --measure (repeat it for several)",
    ),
    (re.compile(r"pass instances= \(the split's ids\)"), "pass --instances FILE (the split's ids)"),
    (re.compile(r"not among instances="), "not among --instances"),
    (re.compile(r"^instances=: "), "--instances: "),
    (re.compile(r"pass split="), "pass --split"),
    (re.compile(r"\breplicate_pattern\b"), "--replicate-pattern"),
    (re.compile(r"\bsigma_replicate='(\w+)'"), r"--sigma-replicate \1"),
    (
        re.compile(r"format '(\w+)' does not take the option\(s\) ([\w, ]+); it takes [\w, ]+"),
        lambda m: f"{', '.join(_flag(o) for o in m[2].split(','))} does not apply to {m[1]} input",
    ),
    (re.compile(r"pass control=\.\.\. and treatment=\.\.\."), "pass --control and --treatment"),
    (re.compile(r"ranger_compatible=True"), "--ranger-compatible"),
    (re.compile(r"without hk\b"), "without --hk"),
    (re.compile(r"use boundary='clip' or 'drop_systems'"), "use --boundary clip or drop_systems"),
    (
        re.compile(r"pass collection= and measure= to pick one block"),
        "pick one with --collection and --measure",
    ),  # fmt: skip
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


def _check_split(value: str | None) -> str | None:
    """Option callback: ``--split`` names a split (``test``, ``valid``)."""
    if value is not None and not value.strip():
        raise BayesIRError("--split must name a split (test, valid), got an empty name")
    return value


def check_file_option(option: str, value: Path | None, *, what: str) -> Path | None:
    """Return ``value`` once it is a readable regular file (``None`` stays), before any work.

    The errors of :func:`bayes_ir.files.check_input` (a FIFO, a device, a folder, a
    missing file), each naming ``option`` as typed (``--instances ids.txt: is a FIFO``).
    """
    if value is not None:
        from bayes_ir.files import check_input

        try:
            check_input(value, what=what)
        except BayesIRError as exc:
            raise BayesIRError(f"{option} {exc}") from None
    return value


def _check_instances(value: Path | None) -> Path | None:
    """Option callback: ``--instances`` is a readable regular file (before any file is read)."""
    return check_file_option("--instances", value, what="list of instances")


Split = Annotated[
    str | None,
    typer.Option(
        "--split",
        help="HELM runs: the split whose statistics are read (default test).",
        callback=_check_split,
    ),
]
Instances = Annotated[
    Path | None,
    typer.Option(
        "--instances",
        help="SWE-bench results: the benchmark's instance ids, one per line (default: every "
        "id the files name).",
        callback=_check_instances,
    ),
]
Epochs = Annotated[
    bool,
    typer.Option(
        "--epochs-as-runs",
        help="Inspect logs with several epochs: keep each epoch as one run of the system "
        "(replicate 'epoch<n>') instead of reducing them, for the model of runs.",
    ),
]
ReplicatePattern = Annotated[
    str | None,
    typer.Option(
        "--replicate-pattern",
        help="The files are replicates (seeds, folds, repeated runs), one run of one system "
        "each: a regular expression searched in each file's name, with the named groups "
        "system and replicate, e.g. '(?P<system>.+)_seed(?P<replicate>\\d+)'. A folder of "
        "one sub-folder per system is read as replicates without it.",
    ),
]
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
        help="Likelihood family: gaussian, skew_normal, bernoulli (0/1 per item), binomial "
        "(k of n: P@10; binomial(trials=N)), zoib (scores in [0, 1] with exact 0s and 1s; "
        "zoib(inflation=system)), or auto (by PSIS-LOO within an outcome space and the "
        "posterior predictive checks across spaces). Contrasts are on the measure's scale.",
        callback=_check_likelihood,
    ),
]
SigmaOption = Annotated[
    str,
    typer.Option(
        "--sigma",
        help="Residual spread: pooled (default: one residual SD for every system) or system "
        "(one per system, with a hierarchical prior: brms' sigma ~ system; zoib: one "
        "precision per system).",
        callback=_check_sigma,
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
        f"{defaults.SKEW_NORMAL_DRAWS:,} for the skew-normal up to "
        f"{defaults.SKEW_NORMAL_CELL_DRAWS // defaults.SKEW_NORMAL_DRAWS:,} cells, fewer above "
        f"in proportion, at least {defaults.SKEW_NORMAL_MIN_DRAWS:,}; {defaults.DRAWS:,} for "
        "other NUTS fits).",
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
PoolingOption = Annotated[
    str,
    typer.Option(
        "--pooling",
        help="Which system effects share one spread and are pulled towards their mean: all "
        "(the seed's model, artifact runs included), artifacts (the champion and "
        "challengers are left unpooled; the artifact runs still inform the topic effects; "
        "gaussian, skew_normal), none (every system unpooled; bernoulli, binomial, zoib) "
        "or auto (default: all, or none for bernoulli, binomial and zoib with fewer than 2 "
        "artifact runs).",
        callback=_check_pooling,
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
    params = context.params if context is not None else {}
    seen: dict[Path, str] = {}
    for name in OUTPUT_OPTIONS:
        value = params.get(name)
        if value is not None:
            check_output_path(value, what=f"--{name}")
            key = Path(value).expanduser().resolve()
            if key in seen:
                raise BayesIRError(
                    f"--{seen[key]} and --{name} both name {value}: give each its own file"
                )
            seen[key] = name
    if params.get("figures") is not None:  # a folder of figures: not an input folder
        check_output_path(Path(params["figures"]) / "figure.png", what="--figures")


def load(
    files: list[Path],
    *,
    input_format: str | None,
    measure: str | Sequence[str] | None,
    collection: str | None = None,
    qrels: Path | None = None,
    missing: str = "error",
    check_range: bool = True,
    split: str | None = None,
    instances: Path | None = None,
    replicate_pattern: str | None = None,
    epochs: bool = False,
) -> ScoreTable:
    """Read the files with the shared options, then select the collection and measures.

    ``measure`` is one measure or several (``-m nDCG@10 -m AP``); runs scored against
    ``qrels`` compute each of them, and the readers that pick measures among several
    (trec_eval, PyTerrier, LLM logs) keep each of them. ``split`` (HELM) and
    ``instances`` (SWE-bench) are passed to the reader when given, and
    ``replicate_pattern`` to :func:`~bayes_ir.readers.read_scores`; ``epochs`` keeps each
    epoch of an Inspect log as a run (``replicates=True``).
    """
    from bayes_ir.readers import read_scores
    from bayes_ir.table_checks import DEFAULT_MEASURE

    guard_outputs([*files, qrels, instances])
    measures = [measure] if isinstance(measure, str) else list(measure or ())
    options: dict = {"missing": missing}
    if not check_range:
        options["check_range"] = False
    if len(measures) == 1:
        options["measure"] = measures[0]
    elif measures and (qrels is not None or _picks_measures(files, input_format)):
        options["measure"] = measures  # runs: ir_measures computes every measure
    for key, value in (("qrels", qrels), ("split", split), ("instances", instances),
                       ("replicate_pattern", replicate_pattern)):  # fmt: skip
        if value is not None:
            options[key] = value
    if epochs:
        options["replicates"] = True
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


def _picks_measures(files: list[Path], input_format: str | None) -> bool:
    """Tell whether the reader of ``files`` keeps the measures named among several it reads."""
    from bayes_ir.readers import READERS, detect_format

    try:
        name = input_format or detect_format(files[0])
    except BayesIRError:  # a folder, or a file the reader will name in its own error
        return False
    reader = READERS.get(name)
    return reader is not None and reader.picks_measures


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


def number_list(
    text: str, option: str, *, kind: type = int, minimum: float = 0, maximum: float = math.inf
) -> tuple:
    """Parse ``option``'s comma-separated numbers, each finite, from ``minimum`` to ``maximum``.

    Raises :class:`~bayes_ir.errors.BayesIRError` (one ``error:`` line) naming the option.
    """
    what = "integers" if kind is int else "numbers"
    bounds = f">= {minimum:g}" if math.isinf(maximum) else f"from {minimum:g} to {maximum:g}"
    wrong = f"{option} takes comma-separated {what} {bounds}, got {text!r}"
    try:
        values = tuple(kind(v) for v in text.replace(" ", "").split(",") if v)
    except ValueError:
        raise BayesIRError(wrong) from None
    if not values or not all(math.isfinite(v) and minimum <= v <= maximum for v in values):
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
    return escape(as_written(value)) if isinstance(value, str) else value


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


def save_fit(fit: Any, path: Path) -> None:
    """Save ``fit`` (``--save``) with the SHA-256 of every input file in its provenance."""
    from dataclasses import replace

    from bayes_ir.files import declared_inputs
    from bayes_ir.provenance import input_hashes

    hashed = replace(fit, provenance={**fit.provenance, "inputs": input_hashes(declared_inputs())})
    say_wrote(hashed.save(path))


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
    _SHOWN.add(str(message))
    text = " ".join(cli_wording(message).split())
    console_err.print(f"[{style}]warning:[/] {escape(text)}", highlight=False, soft_wrap=True)


#: Notes and warnings shown in this run: each is said once, however often it comes back.
_SHOWN: set[str] = set()


def forget_shown() -> None:
    """Start a run afresh: no note or warning has been shown yet."""
    _SHOWN.clear()


def show_notes(notes: Iterable[str]) -> None:
    """Print what the loader changed or left out, ``note: ...`` on stdout, once each.

    Every command calls this with its table's notes (topics scored 0 because a run did
    not retrieve them, columns left out, run tags split into systems, queries without
    judgments): the one place these lines are printed. A note already said as a
    warning is not repeated; names are shown as written.
    """
    for note in notes:
        if note in _SHOWN:
            continue
        _SHOWN.add(note)
        text = " ".join(cli_wording(note).split())
        console.print(f"note: {text}", highlight=False, markup=False, soft_wrap=True)


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
