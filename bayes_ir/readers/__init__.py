"""Readers of per-topic scores, in a registry keyed by format name.

Every reader turns one or more files into a :class:`~bayes_ir.table.ScoreTable`.
:func:`read_scores` detects the format from the file's content unless ``format=``
names it (the CLI's ``--input-format``). Formats:

``tidy``
    long CSV/TSV/Parquet with ``system, topic, score`` (+ ``collection``, ``measure``);
``wide``
    one row per topic, one column per system, with or without a ``topic`` column;
``trec_eval``
    ``trec_eval -q`` output (``measure  topic  value`` lines, ``all`` rows ignored);
``run``
    TREC run files scored against ``qrels=`` with ``ir_measures`` for ``measure=``
    (chosen whenever ``qrels=`` is given);
``lines``
    one score per line, one file per system, paired by line position (Ranger's GLUE files).

Files may be gzipped; they are only ever read, and a path that is not a regular file (a
folder, FIFO, device such as ``/dev/zero``, or socket) is refused before any byte is read.
Detection reads at most the first 64 KiB. Measure names are normalised once
(:func:`~bayes_ir.measures.canonical_measure`: ``P_10`` is ``P@10``). Bad input raises
:class:`~bayes_ir.errors.ScoreTableError` naming the file and line (or
:class:`~bayes_ir.errors.MeasureError` for a measure string ``ir_measures`` cannot parse).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import pandas as pd

from bayes_ir.errors import OptionError, ScoreTableError
from bayes_ir.readers._io import check_input, head_text
from bayes_ir.readers.lines import looks_lines, read_lines
from bayes_ir.readers.runs import looks_qrels, looks_run, read_qrels, read_run, read_runs
from bayes_ir.readers.tidy import looks_tidy, read_tidy
from bayes_ir.readers.trec_eval import looks_trec_eval, read_trec_eval
from bayes_ir.readers.wide import looks_wide, read_wide, wide_to_long
from bayes_ir.table import _ALIASES, ScoreTable, concat

PathArg = str | PathLike[str]


@dataclass(frozen=True)
class Reader:
    """A registered input format: its reader and a content sniffer for auto-detection."""

    name: str
    read: Callable[..., ScoreTable]
    sniff: Callable[[Path], bool]
    description: str


READERS: dict[str, Reader] = {}


def register_reader(reader: Reader) -> None:
    """Add a reader to the registry (later registrations win auto-detection ties)."""
    READERS[reader.name] = reader


register_reader(Reader("tidy", read_tidy, looks_tidy, "long table: system, topic, score"))
register_reader(Reader("wide", read_wide, looks_wide, "topic x system matrix"))
register_reader(
    Reader(
        "trec_eval", read_trec_eval, looks_trec_eval, "trec_eval -q output (measure topic value)"
    )
)
register_reader(Reader("run", read_runs, looks_run, "TREC run files scored against qrels="))
register_reader(Reader("lines", read_lines, looks_lines, "one score per line, one file per system"))


def detect_format(path: PathArg) -> str:
    """Return the name of the format of ``path``, judged from its content.

    Raises
    ------
    ScoreTableError
        If the file is missing, empty, or matches no registered format.
    """
    path = check_input(Path(path))  # before any read: a FIFO or /dev/zero never blocks
    if path.suffix.lower() != ".parquet":
        head_text(path)  # raises the clear error for empty, binary or non-UTF-8 heads
    for name in _DETECTION_ORDER:
        reader = READERS.get(name)
        if reader is not None and reader.sniff(path):
            return name
    if looks_qrels(path):
        raise ScoreTableError(
            "this looks like a qrels file: pass it as qrels= (CLI: --qrels) with the run files",
            source=str(path),
        )
    raise ScoreTableError(
        "cannot tell the format of this file; pass format= (CLI: --input-format) with one of "
        + ", ".join(READERS),
        source=str(path),
    )


_DETECTION_ORDER = ("trec_eval", "run", "tidy", "lines", "wide")


def read_scores(
    paths: PathArg | Sequence[PathArg] | pd.DataFrame,
    *,
    format: str | None = None,
    **options,
) -> ScoreTable:
    """Read per-topic scores from one or more files into one validated table.

    Parameters
    ----------
    paths
        A file or a list of files (files of one call share the format), or an
        in-memory pandas DataFrame: tidy (see :meth:`~bayes_ir.table.ScoreTable.from_frame`)
        or, when it has neither a ``system`` nor a ``score`` column, wide (one column per
        system; topic ids from an id column, a text first column, or the index).
    format
        Name of a registered format (see module docs); detected from content if ``None``.
    **options
        Passed to the reader: ``measure``, ``collection``, ``missing`` (``"error"``,
        ``"intersect"``, ``"keep"``), and format-specific options such as ``qrels``
        for runs or ``systems`` for line files.

    Returns
    -------
    ScoreTable

    Examples
    --------
    >>> table = read_scores("data/example_scores.csv")  # doctest: +SKIP
    >>> table.with_roles(champion="bm25", challengers="chal*").matrix()  # doctest: +SKIP
    """
    if isinstance(paths, pd.DataFrame):
        return _read_frame(paths, **options)
    files = _as_paths(paths)
    if format is None and options.get("qrels") is not None:
        format = "run"
    name = format or detect_format(files[0])
    if name not in READERS:
        raise ScoreTableError(f"unknown input format {name!r}; known: {', '.join(READERS)}")
    reader = READERS[name]
    options = _accepted_options(reader, options)
    if getattr(reader.read, "multi_file", False):
        return reader.read(files, **options)
    return _concat_files((reader.read(f, **options) for f in files), files)


def _read_frame(frame: pd.DataFrame, **options) -> ScoreTable:
    """Read a tidy frame as it is, a wide one (no ``system`` nor ``score`` column) as wide."""
    options = _accepted_options(Reader("DataFrame", ScoreTable.from_frame, bool, ""), options)
    names = {_ALIASES.get(str(c).strip().lower(), str(c).strip().lower()) for c in frame.columns}
    if names & {"system", "score"} or frame.shape[1] == 0:
        return ScoreTable.from_frame(frame, **options)
    source = options.pop("source", "<DataFrame>")
    long, _, notes = wide_to_long(frame, source=source)
    notes = [*notes, *options.pop("notes", ())]
    return ScoreTable.from_frame(long, source=source, notes=notes, **options)


def _accepted_options(reader: Reader, options: dict) -> dict:
    """``options`` the reader takes (``None`` values it does not take are dropped).

    Raises
    ------
    OptionError
        An option the reader of this format does not accept, naming the ones it does.
    """
    parameters = inspect.signature(reader.read).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return options  # a registered reader that takes any option judges them itself
    accepted = [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = [k for k, v in options.items() if k not in accepted and v is not None]
    if unknown:
        raise OptionError(
            f"format {reader.name!r} does not take the option(s) {', '.join(unknown)}; "
            f"it takes {', '.join(accepted)}"
        )
    return {k: v for k, v in options.items() if k in accepted}


def _as_paths(paths: object) -> list[Path]:
    """Return the input files as paths; raise :class:`OptionError` for anything else."""
    if isinstance(paths, str | PathLike):
        items = [paths]
    elif isinstance(paths, Iterable) and not isinstance(paths, bytes | Mapping):
        items = list(paths)
    else:
        raise OptionError(
            f"expected a file, a list of files or a pandas DataFrame, got {type(paths).__name__}"
        )
    if not items:
        raise ScoreTableError("no input files given (an empty list)")
    for i, item in enumerate(items, 1):
        if not isinstance(item, str | PathLike) or not str(item).strip():
            what = repr(item) if isinstance(item, str) else type(item).__name__
            raise OptionError(
                f"input {i} of {len(items)} is {what}, not a file name"
                if len(items) > 1
                else f"expected a file name, got {what}"
            )
    return [Path(p) for p in items]


def _concat_files(tables: Iterable[ScoreTable], files: list[Path]) -> ScoreTable:
    tables = list(tables)
    if len(tables) == 1:
        return tables[0]
    source = ", ".join(str(f) for f in files)
    if len(files) > 2:
        source = f"{files[0]} and {len(files) - 1} more files"
    return concat(tables, source=source)


__all__ = [
    "READERS",
    "Reader",
    "detect_format",
    "read_lines",
    "read_qrels",
    "read_run",
    "read_runs",
    "read_scores",
    "read_tidy",
    "read_trec_eval",
    "read_wide",
    "register_reader",
]
