"""The options every command shares, declared once: the score files, the roles, the sampler.

A command asks for them by naming a parameter of type :class:`Scores` (and optionally
:class:`Sampler`) and decorating itself with :func:`uses_scores`; the decorator puts
the shared options in the command's signature (so typer shows them in ``--help``) and
hands the command one object per group::

    @app.command()
    @uses_scores(roles=True)
    def decide(scores: Scores, sampler: Sampler, margin: Margin = None, ...) -> None:
        table = scores.load(need_challenger=True)
        fit = sampler.fit(table, seed=seed)

Options are checked in the order the command asks for them: a command validates its
own options first and reads the files (which may be large) last.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bayes_ir import defaults, progress
from bayes_ir.cli._app import (
    OUTPUT_OPTIONS,
    Artifacts,
    Chains,
    Challengers,
    Champion,
    Collection,
    Draws,
    DropBottom,
    Epochs,
    Exclude,
    ExecutorName,
    Files,
    InputFormat,
    Instances,
    Likelihood,
    Measure,
    Missing,
    PoolingOption,
    Qrels,
    Quiet,
    RangeCheck,
    ReplicatePattern,
    Scheduler,
    SigmaOption,
    Split,
    TargetAccept,
    TopM,
    Tune,
    assign_roles,
    check_file_option,
    console_err,
    load,
    quieted,
    rule,
    show_notes,
    warn,
)
from bayes_ir.cli._progress import reporter_for
from bayes_ir.errors import BayesIRError, BayesIRWarning
from bayes_ir.files import declare_inputs

if TYPE_CHECKING:
    from bayes_ir.table import ScoreTable


def _check_saved(value: Path | None) -> Path | None:
    """Option callback: ``--fit`` names an existing regular file (before any file is read)."""
    if value is not None and not (value.exists() or value.is_symlink()):
        raise BayesIRError(f"--fit {value}: no saved fit there (write one with --save)")
    return check_file_option("--fit", value, what="saved fit")


SavedFit = Annotated[
    Path | None,
    typer.Option(
        "--fit",
        help="Reuse a fit saved by --save (after checking that it is a fit of these scores "
        "and roles) instead of fitting; the sampler options then do not apply to it.",
        callback=_check_saved,
    ),
]


@dataclass(frozen=True)
class Scores:
    """The score files, how to read them and, for role commands, the roles."""

    files: list[Path]
    input_format: str | None = None
    measure: list[str] | None = None
    collection: str | None = None
    qrels: Path | None = None
    missing: str = "error"
    check_range: bool = True
    split: str | None = None
    instances: Path | None = None
    replicate_pattern: str | None = None
    epochs: bool = False
    champion: str | None = None
    challengers: list[str] | None = None
    artifacts: list[str] | None = None
    exclude: list[str] | None = None
    drop_bottom: float = 0.0
    top_m: int | None = None
    #: Every measure asked for, when this is one view of :meth:`each_measure`.
    _all: tuple[str, ...] = ()
    #: The table of :attr:`_all`, read once and shared by the views.
    _read: dict[str, ScoreTable] = field(default_factory=dict, compare=False, repr=False)

    def each_measure(self) -> list[Scores]:
        """Return one :class:`Scores` per measure asked for (``-m AP -m nDCG@10``).

        The files are read once, for every measure, on the first :meth:`load`.
        """
        names = list(dict.fromkeys(self.measure or ()))
        if len(names) < 2:
            return [self]
        return [replace(self, measure=[name], _all=tuple(names), _read=self._read)
                for name in names]  # fmt: skip

    def load(self, *, need_challenger: bool = False) -> ScoreTable:
        """Read the files, select collection and measure, and assign the roles (if any).

        The loader's notes are printed here (:func:`~bayes_ir.cli._app.show_notes`),
        so that every command says them; a warning of the loader that is also a note is
        said once, as the note.
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", BayesIRWarning)
            if self._all:  # one view of :meth:`each_measure`: select from the shared read
                self.read_once()
                table = self._read["all"].select(measure=self.measure)
            else:
                table = self._table(self.measure)
        show_notes(table.notes)
        for w in caught:  # a warning that is also a note was said as the note
            if not issubclass(w.category, BayesIRWarning):
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            elif str(w.message) not in table.notes:
                warn(str(w.message))
        if self.champion is None:
            return table
        return assign_roles(
            table,
            champion=self.champion,
            challengers=self.challengers,
            artifacts=self.artifacts,
            exclude=self.exclude,
            drop_bottom=self.drop_bottom,
            top_m=self.top_m,
            need_challenger=need_challenger,
        )

    @property
    def last_view(self) -> bool:
        """Whether this is the last measure run (or the only one): where next steps are said."""
        return not self._all or list(self.measure or ()) == [self._all[-1]]

    def command_line(self, command: str, *extra: str) -> str:
        """``bayes-ir COMMAND FILES ...`` with these scores' reading options and roles as given.

        ``extra`` are further options of the command (``"-o", "review.html"``); every
        word is quoted for a POSIX shell (``-C 'chal_*'``).
        """
        words: list[str] = ["bayes-ir", command, *map(str, self.files)]
        given = (
            ("-f", self.input_format),
            ("--collection", self.collection),
            ("--qrels", self.qrels),
            ("--split", self.split),
            ("--instances", self.instances),
            ("--replicate-pattern", self.replicate_pattern),
            ("--missing", None if self.missing == "error" else self.missing),
            ("-c", self.champion),
        )
        for option, value in given:
            if value is not None:
                words += [option, str(value)]
        for option, values in (
            ("-m", list(self._all or self.measure or ())),
            ("-C", self.challengers or ()),
            ("-a", self.artifacts or ()),
            ("--exclude", self.exclude or ()),
        ):
            for value in values:
                words += [option, value]
        if not self.check_range:
            words.append("--no-range-check")
        if self.epochs:
            words.append("--epochs-as-runs")
        if self.drop_bottom:
            words += ["--drop-bottom", f"{self.drop_bottom:g}"]
        if self.top_m is not None:
            words += ["--top-m", str(self.top_m)]
        return " ".join(shlex.quote(w) for w in [*words, *extra])

    def read_once(self) -> None:
        """Read the files for every measure of :meth:`each_measure` (once for all views)."""
        if "all" not in self._read:
            self._read["all"] = self._table(list(self._all))

    def _table(self, measures: list[str] | None) -> ScoreTable:
        return load(
            self.files,
            input_format=self.input_format,
            measure=measures,
            collection=self.collection,
            qrels=self.qrels,
            missing=self.missing,
            check_range=self.check_range,
            split=self.split,
            instances=self.instances,
            replicate_pattern=self.replicate_pattern,
            epochs=self.epochs,
        )


@dataclass(frozen=True)
class Sampler:
    """How to fit the Bayesian hierarchical model: likelihood and sampler settings."""

    likelihood: str = "gaussian"
    pooling: str = "auto"
    sigma: str = "pooled"
    chains: int = defaults.CHAINS
    draws: int | None = None
    tune: int | None = None
    target_accept: float | None = None
    #: ``--fit``: a saved fit to reuse instead of fitting.
    fit_path: Path | None = None

    def options(self) -> dict[str, Any]:
        """Return the settings given, as keyword arguments of :func:`bayes_ir.hierarchical.fit`."""
        given = {"likelihood": self.likelihood, "chains": self.chains}
        if self.pooling != "auto":
            given["pooling"] = self.pooling
        if self.sigma != "pooled":
            given["sigma"] = self.sigma
        for key in ("draws", "tune", "target_accept"):
            if getattr(self, key) is not None:
                given[key] = getattr(self, key)
        return given

    def words(
        self, *, seed: int | None, saved: Path | None = None, reuse: bool = True
    ) -> list[str]:
        """Return the options that reproduce this fit in another command (its next step).

        ``--fit PATH`` when the fit is saved at ``saved`` (or was read from one, unless
        ``reuse`` is false: BRisk's fit is not one the other commands take), otherwise
        the likelihood and sampler settings given and ``--seed``.
        """
        saved = saved or (self.fit_path if reuse else None)
        if saved is not None:
            return ["--fit", str(saved)]
        words = [] if self.likelihood == "gaussian" else ["--likelihood", self.likelihood]
        words += [] if self.pooling == "auto" else ["--pooling", self.pooling]
        words += [] if self.sigma == "pooled" else ["--sigma", self.sigma]
        if self.chains != defaults.CHAINS:
            words += ["--chains", str(self.chains)]
        for key in ("draws", "tune", "target_accept"):
            if getattr(self, key) is not None:
                words += [f"--{key.replace('_', '-')}", f"{getattr(self, key):g}"]
        return words + ([] if seed is None else ["--seed", str(seed)])

    def refit(self, fit: Any) -> tuple[str, Sampler]:
        """Return why and with which settings to refit ``fit``, which failed its diagnostics.

        The remedy of each failed check is
        :func:`~bayes_ir.hierarchical.samplers.retry.refit_settings`'s (smaller steps for
        divergent transitions, a longer warm-up for a low BFMI, more draws for R-hat or
        ESS). A fit read with ``--fit`` is refitted, with its likelihood, not read again.
        """
        from bayes_ir.hierarchical.samplers.retry import refit_settings

        settings, reasons = refit_settings(fit.diagnostics, fit.provenance)
        changes: dict[str, Any] = {"fit_path": None}
        if self.fit_path is not None:  # the saved fit's model (its family's options too)
            prov = fit.provenance
            changes["likelihood"] = str(prov.get("family") or prov.get("likelihood", "gaussian"))
            changes["sigma"] = str(prov.get("sigma", self.sigma))
            changes["chains"] = int(prov.get("chains", self.chains))
        changes.update(settings)
        return (
            f"refit with {' and '.join(reasons)}, the posterior failed its diagnostics",
            replace(self, **changes),
        )

    def fit(self, table: ScoreTable, *, seed: int | None) -> Any:
        """Fit the model (its progress is shown by the reporter of :func:`uses_scores`).

        With ``--fit PATH``, read the saved fit instead
        (:func:`bayes_ir.hierarchical.load_fit`: one error line naming the file and what
        differs when it is not a fit of ``table``), and say in one warning line which
        options given on the command line disagree with it (:meth:`ignored`).
        ``ConvergenceWarning`` is silenced here because every command reports a failed
        posterior itself, loudly (a red panel, an UNRELIABLE decision).
        """
        from bayes_ir.errors import ConvergenceWarning
        from bayes_ir.hierarchical import fit as hierarchical_fit

        if self.fit_path is not None:
            from bayes_ir.hierarchical import load_fit

            saved = load_fit(self.fit_path, table)
            ignored = self.ignored(saved.provenance, seed=seed)
            if ignored:
                warn(f"--fit {self.fit_path}: {'; '.join(ignored)}: the saved fit is used as saved")
            return saved
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return hierarchical_fit(table, seed=seed, **self.options())

    def ignored(self, provenance: dict[str, Any], *, seed: int | None) -> list[str]:
        """Say which options given on the command line disagree with a saved fit.

        Only options the user typed count (not defaults): ``--likelihood``,
        ``--pooling``, ``--sigma``, ``--chains``, ``--draws``, ``--tune``,
        ``--target-accept`` and ``--seed``, each compared with the value in the saved
        fit's provenance.
        """
        from typer._click.globals import get_current_context

        ctx = get_current_context(silent=True)
        given = {"likelihood": self.likelihood, "pooling": self.pooling, "sigma": self.sigma,
                 "chains": self.chains, "draws": self.draws,
                 "tune": self.tune, "target_accept": self.target_accept, "seed": seed}  # fmt: skip
        out = []
        for key, value in given.items():
            source = None if ctx is None else ctx.get_parameter_source(key)
            if source is None or source.name not in ("COMMANDLINE", "ENVIRONMENT"):
                continue
            saved = provenance.get(key)
            if value != saved and not (key == "pooling" and value == "auto"):  # auto: any
                option = "--" + key.replace("_", "-")
                out.append(f"{option} {value} differs from the saved fit's {saved}")
        return out


#: Seconds to wait for the Dask scheduler of ``--executor dask``.
SCHEDULER_TIMEOUT = 15


@dataclass(frozen=True)
class Workers:
    """Where the sweeps run: local processes (default) or a Dask cluster."""

    executor: str = "local"
    scheduler: str | None = None

    @contextmanager
    def open(self) -> Iterator[Any]:
        """Yield the executor for :func:`bayes_ir.sweep` (``None``: local processes).

        ``dask`` connects a ``distributed.Client`` to ``--scheduler`` (or the
        ``BAYES_IR_SCHEDULER`` environment variable) and closes it afterwards.
        """
        if self.executor == "local":
            yield None
            return
        address = self.scheduler or os.environ.get("BAYES_IR_SCHEDULER")
        if not address:
            raise BayesIRError(
                "--executor dask needs the scheduler's address: pass --scheduler "
                "tcp://HOST:8786 or set BAYES_IR_SCHEDULER"
            )
        try:
            from distributed import Client
        except ImportError:
            raise BayesIRError(
                "--executor dask needs Dask's distributed package: pip install 'dask[distributed]'"
            ) from None
        try:
            # not Dask's default scheduler: the sweeps use its executor, and a default left
            # behind would send every later xarray/dask computation of the process to it
            client = Client(address, timeout=SCHEDULER_TIMEOUT, set_as_default=False)
        except (OSError, ValueError, TypeError) as exc:  # refused, timed out, not an address
            raise BayesIRError(
                f"--scheduler {address}: cannot connect ({exc}); give the scheduler's address "
                "as tcp://HOST:PORT"
            ) from None
        try:
            yield client
        finally:
            client.close()


def _option(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> Any:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=default)  # fmt: skip


def _reading(missing: str) -> list[inspect.Parameter]:
    return [
        _option("input_format", InputFormat, None),
        _option("measure", Measure, None),
        _option("collection", Collection, None),
        _option("qrels", Qrels, None),
        _option("missing", Missing, missing),
        _option("check_range", RangeCheck, True),
        _option("split", Split, None),
        _option("instances", Instances, None),
        _option("replicate_pattern", ReplicatePattern, None),
        _option("epochs", Epochs, False),
    ]


_ROLES = [
    _option("champion", Champion),
    _option("challengers", Challengers, None),
    _option("artifacts", Artifacts, None),
    _option("exclude", Exclude, None),
    _option("drop_bottom", DropBottom, 0.0),
    _option("top_m", TopM, None),
]
_SAMPLER = [
    _option("likelihood", Likelihood, "gaussian"),
    _option("pooling", PoolingOption, "auto"),
    _option("sigma", SigmaOption, "pooled"),
    _option("chains", Chains, defaults.CHAINS),
    _option("draws", Draws, None),
    _option("tune", Tune, None),
    _option("target_accept", TargetAccept, None),
    _option("fit_path", SavedFit, None),
]


_QUIET = [_option("quiet", Quiet, False)]
_WORKERS = [_option("executor", ExecutorName, "local"), _option("scheduler", Scheduler, None)]


def uses_scores(
    *, roles: bool = False, missing: str = "error", per_measure: bool = True
) -> Callable:
    """Decorate a command whose ``scores: Scores`` (and ``sampler: Sampler``) are shared options.

    The ``scores`` parameter is replaced by the files argument, the roles (when
    ``roles``; ``--champion`` is then required) and the reading options (``missing``
    is the default of ``--missing``); a ``sampler`` parameter by the likelihood and
    sampler settings; a ``workers`` parameter by ``--executor`` and ``--scheduler``.
    The command receives one :class:`Scores`, :class:`Sampler` and :class:`Workers`.
    Every command also gets ``--quiet``; without it, long steps show their progress
    on stderr (:mod:`bayes_ir.cli._progress`). A role command given several measures
    runs once per measure (:func:`_each_measure`) unless ``per_measure`` is false: it
    then receives them all and calls :meth:`Scores.each_measure` itself.
    """

    def decorate(command: Callable) -> Callable:
        signature = inspect.signature(command, eval_str=True)
        own = dict(signature.parameters)
        groups: dict[str, tuple[type, list[inspect.Parameter]]] = {}
        shared = [_option("files", Files), *(_ROLES if roles else []), *_reading(missing)]
        groups["scores"] = (Scores, shared)
        if "sampler" in own:
            groups["sampler"] = (Sampler, _SAMPLER)
        if "workers" in own:
            groups["workers"] = (Workers, _WORKERS)
        parameters: list[inspect.Parameter] = []
        for name, parameter in own.items():
            if name in groups:
                parameters += groups[name][1]
            else:
                parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
        parameters += _QUIET

        def run(*, quiet: bool = False, **given: Any) -> Any:
            with progress.reporting(reporter_for(console_err, quiet=quiet)), quieted(quiet):
                return _call(**given)

        def _call(**given: Any) -> Any:
            for name, (kind, options) in groups.items():
                known = {f.name for f in fields(kind)}
                given[name] = kind(**{o.name: given.pop(o.name) for o in options
                                      if o.name in known})  # fmt: skip
            declare_inputs(_side_inputs(given))  # checked against every output by load()
            views = given["scores"].each_measure() if roles else [given["scores"]]
            saved = getattr(given.get("sampler"), "fit_path", None)
            if saved is not None and len(views) > 1:
                raise BayesIRError(
                    f"--fit {saved} is a fit of one measure: give one -m with --fit, not "
                    f"{len(views)} ({', '.join(v.measure[0] for v in views if v.measure)})"
                )
            if len(views) == 1 or not per_measure:
                return command(**given)
            return _each_measure(command, given, views)

        run.__name__ = command.__name__
        run.__qualname__ = command.__qualname__
        run.__doc__ = command.__doc__
        run.__module__ = command.__module__
        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return decorate


def _side_inputs(given: dict[str, Any]) -> list[Path]:
    """Return the files the command reads besides the scores: selectors, a fit, instance ids."""
    from bayes_ir.roles import selector_files  # roles imports pandas: not at CLI start-up

    scores = given["scores"]
    out = [p for sel in (scores.challengers, scores.artifacts, scores.exclude)
           for p in selector_files(sel)]  # fmt: skip
    saved = getattr(given.get("sampler"), "fit_path", None)
    return [*out, *(p for p in (saved, scores.instances) if p is not None)]


#: Exit statuses of a command run once per measure, most serious first (3: a posterior
#: that failed its diagnostics; 4: keep the champion; 5: collect more data).
_EXIT_PRIORITY = (3, 4, 5)


def _each_measure(command: Callable, given: dict[str, Any], views: list[Scores]) -> None:
    """Run ``command`` once per measure, a rule line before each, outputs named per measure.

    ``--output out.csv`` becomes ``out_AP.csv``, ``out_nDCG@10.csv``, ...; a
    ``--figures`` folder gets one sub-folder per measure. The exit status is the most
    serious of the runs' (:data:`_EXIT_PRIORITY`), so ``--gate`` deploys only when every
    measure says deploy.
    """
    views[0].read_once()  # a measure missing from the files: one error before any output
    codes = []
    for view in views:
        measure = view.measure[0] if view.measure else ""
        rule(f"measure {measure}")
        call = dict(given, scores=view)
        for key in (*OUTPUT_OPTIONS, "figures"):
            if call.get(key) is not None:
                call[key] = _per_measure(call[key], measure, folder=key == "figures")
        try:
            command(**call)
        except typer.Exit as stop:
            codes.append(stop.exit_code)
    failed = [code for code in codes if code]
    if failed:
        raise typer.Exit(min(failed, key=lambda c: (_EXIT_PRIORITY + (c,)).index(c)))


def _per_measure(path: Path, measure: str, *, folder: bool) -> Path:
    """Name ``path`` for one measure: ``out.csv`` -> ``out_AP.csv``; a folder ``out/AP``."""
    slug = re.sub(r"[^\w@.+-]+", "_", measure).strip("_") or "measure"
    return path / slug if folder else path.with_stem(f"{path.stem}_{slug}")
