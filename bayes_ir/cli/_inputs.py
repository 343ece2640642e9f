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
import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bayes_ir import defaults
from bayes_ir.cli._app import (
    Artifacts,
    Chains,
    Challengers,
    Champion,
    Collection,
    Draws,
    DropBottom,
    Exclude,
    Files,
    InputFormat,
    Likelihood,
    Measure,
    Missing,
    Qrels,
    RangeCheck,
    TargetAccept,
    TopM,
    Tune,
    console_err,
    load,
    load_with_roles,
)

if TYPE_CHECKING:
    from bayes_ir.table import ScoreTable


@dataclass(frozen=True)
class Scores:
    """The score files, how to read them and, for role commands, the roles."""

    files: list[Path]
    input_format: str | None = None
    measure: str | None = None
    collection: str | None = None
    qrels: Path | None = None
    missing: str = "error"
    check_range: bool = True
    champion: str | None = None
    challengers: list[str] | None = None
    artifacts: list[str] | None = None
    exclude: list[str] | None = None
    drop_bottom: float = 0.0
    top_m: int | None = None

    def load(self, *, need_challenger: bool = False) -> ScoreTable:
        """Read the files, select collection and measure, and assign the roles (if any)."""
        reading = {
            "input_format": self.input_format,
            "measure": self.measure,
            "collection": self.collection,
            "qrels": self.qrels,
            "missing": self.missing,
            "check_range": self.check_range,
        }
        if self.champion is None:
            return load(self.files, **reading)
        return load_with_roles(
            self.files,
            **reading,
            champion=self.champion,
            challengers=self.challengers,
            artifacts=self.artifacts,
            exclude=self.exclude,
            drop_bottom=self.drop_bottom,
            top_m=self.top_m,
            need_challenger=need_challenger,
        )


@dataclass(frozen=True)
class Sampler:
    """How to fit the Bayesian hierarchical model: likelihood and sampler settings."""

    likelihood: str = "gaussian"
    chains: int = defaults.CHAINS
    draws: int | None = None
    tune: int | None = None
    target_accept: float | None = None

    def options(self) -> dict[str, Any]:
        """Return the settings given, as keyword arguments of :func:`bayes_ir.hierarchical.fit`."""
        given = {"likelihood": self.likelihood, "chains": self.chains}
        for key in ("draws", "tune", "target_accept"):
            if getattr(self, key) is not None:
                given[key] = getattr(self, key)
        return given

    def fit(self, table: ScoreTable, *, seed: int | None) -> Any:
        """Fit the model with a spinner on stderr; diagnostics warnings are left to the caller.

        ``ConvergenceWarning`` is silenced here because every command reports a failed
        posterior itself, loudly (a red panel, an UNRELIABLE decision).
        """
        from bayes_ir.errors import ConvergenceWarning
        from bayes_ir.hierarchical import fit as hierarchical_fit

        label = self.likelihood.replace("_", "-")
        with (
            console_err.status(
                f"Sampling the {label} hierarchical model "
                f"({len(table.systems)} systems x {len(table.topics)} topics)...",
                spinner="dots",
            ),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore", ConvergenceWarning)
            return hierarchical_fit(table, seed=seed, **self.options())


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
    _option("chains", Chains, defaults.CHAINS),
    _option("draws", Draws, None),
    _option("tune", Tune, None),
    _option("target_accept", TargetAccept, None),
]


def uses_scores(*, roles: bool = False, missing: str = "error") -> Callable:
    """Decorate a command whose ``scores: Scores`` (and ``sampler: Sampler``) are shared options.

    The ``scores`` parameter is replaced by the files argument, the roles (when
    ``roles``; ``--champion`` is then required) and the reading options (``missing``
    is the default of ``--missing``); a ``sampler`` parameter by the likelihood and
    sampler settings. The command receives one :class:`Scores` and one :class:`Sampler`.
    """

    def decorate(command: Callable) -> Callable:
        signature = inspect.signature(command, eval_str=True)
        own = dict(signature.parameters)
        groups: dict[str, tuple[type, list[inspect.Parameter]]] = {}
        shared = [_option("files", Files), *(_ROLES if roles else []), *_reading(missing)]
        groups["scores"] = (Scores, shared)
        if "sampler" in own:
            groups["sampler"] = (Sampler, _SAMPLER)
        parameters: list[inspect.Parameter] = []
        for name, parameter in own.items():
            if name in groups:
                parameters += groups[name][1]
            else:
                parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))

        def run(**given: Any) -> Any:
            for name, (kind, options) in groups.items():
                known = {f.name for f in fields(kind)}
                given[name] = kind(**{o.name: given.pop(o.name) for o in options
                                      if o.name in known})  # fmt: skip
            return command(**given)

        run.__name__ = command.__name__
        run.__qualname__ = command.__qualname__
        run.__doc__ = command.__doc__
        run.__module__ = command.__module__
        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return decorate
