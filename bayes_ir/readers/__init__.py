"""Readers of per-topic scores, in one registry keyed by format name.

Every reader turns one or more files, or an object in memory, into a
:class:`~bayes_ir.table.ScoreTable`. :func:`read_scores` detects the format from a
file's content, or an object's type or shape, unless ``format=`` names it (the CLI's
``--input-format``). ``docs/inputs.md`` is the table of every accepted input. Formats:

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
    one score per line, one file per system, paired by line position (Ranger's GLUE files);
``pyterrier``
    a per-query ``pt.Experiment`` frame (``name, qid, measure, value``), or its CSV;
``ranx``
    ranx ``Run`` objects scored against ``qrels=`` (or their stored ``run.scores``);
``ir_measures``
    ``ir_measures`` per-query results: ``Metric`` lists, one system or ``{system: ...}``;
``lm_eval``
    lm-evaluation-harness ``--log_samples`` files (``samples_<task>_<date>.jsonl``);
``inspect``
    Inspect AI eval logs (``.json`` or ``.eval``), one per model and task;
``helm``
    HELM ``per_instance_stats.json`` of each run (the model from ``run_spec.json``);
``swebench``
    SWE-bench results (harness report or ``results/results.json``): resolved ids.

A folder stands for the files in it (TREC runs with ``qrels=``). Qrels may be a file, a
ranx ``Qrels``, ir_datasets qrels (``dataset.qrels_iter()``) or a dict of dicts; ranx,
ir_datasets and PyTerrier are never imported (objects are recognised by shape).

Files may be gzipped; they are only ever read, and a path that is not a regular file (a
folder, FIFO, device such as ``/dev/zero``, or socket) is refused before any byte is read.
Detection reads at most the first 64 KiB. Measure names are normalised once
(:func:`~bayes_ir.measures.canonical_measure`: ``P_10`` is ``P@10``). Bad input raises
:class:`~bayes_ir.errors.ScoreTableError` naming the file and line (or
:class:`~bayes_ir.errors.MeasureError` for a measure string ``ir_measures`` cannot parse).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import pandas as pd

from bayes_ir.errors import OptionError, ScoreTableError
from bayes_ir.readers._io import check_input, head_text
from bayes_ir.readers.folders import folder_files, system_folders
from bayes_ir.readers.helm import looks_helm, read_helm
from bayes_ir.readers.inspect_logs import looks_inspect, read_inspect
from bayes_ir.readers.lines import looks_lines, read_lines
from bayes_ir.readers.lm_eval import looks_lm_eval, read_lm_eval
from bayes_ir.readers.metrics import claims_metrics, read_metrics
from bayes_ir.readers.pyterrier import claims_pyterrier, looks_pyterrier, read_pyterrier
from bayes_ir.readers.qrels import load_qrels, looks_qrels, read_qrels
from bayes_ir.readers.ranx_runs import claims_ranx, read_ranx
from bayes_ir.readers.replicates import compile_replicate_pattern, read_replicates, replicate_labels
from bayes_ir.readers.runs import looks_run, read_run, read_runs
from bayes_ir.readers.swebench import looks_swebench, read_swebench
from bayes_ir.readers.tidy import claims_tidy_frame, looks_tidy, read_tidy, read_tidy_frame
from bayes_ir.readers.trec_eval import looks_trec_eval, read_trec_eval
from bayes_ir.readers.wide import looks_wide, read_wide, read_wide_frame
from bayes_ir.table import ScoreTable, concat

PathArg = str | PathLike[str]


@dataclass(frozen=True)
class Reader:
    """A registered input: how to read it from files and/or from an object in memory.

    Attributes
    ----------
    name
        The format's name (``format=``, the CLI's ``--input-format``).
    read
        Reads files (``read(path, **options)``, or the list of files when the function
        has ``multi_file = True``); ``None`` for inputs that exist only in memory.
    sniff
        Tells from a file's first bytes whether it has this format (auto-detection).
    description
        One line for listings.
    claims
        Tells whether an object in memory (a DataFrame, a ranx Run, ...) is this input,
        by its type or shape; ``None`` for file-only formats.
    read_object
        Reads such an object (``read_object(obj, **options)``).
    picks_measures
        The input holds several measures and ``measure=`` (one name or a list) keeps
        those named: the CLI passes every ``-m`` to it.
    """

    name: str
    read: Callable[..., ScoreTable] | None
    sniff: Callable[[Path], bool] | None
    description: str
    claims: Callable[[object], bool] | None = None
    read_object: Callable[..., ScoreTable] | None = None
    picks_measures: bool = False


#: The registered readers by format name; :func:`register_reader` adds one.
READERS: dict[str, Reader] = {}


def register_reader(reader: Reader) -> None:
    """Add a reader to the registry (same name: replaced).

    Readers registered beyond the built-in ones are asked after them, the latest first,
    when a file's format or an object's kind is detected.
    """
    READERS[reader.name] = reader


register_reader(
    Reader(
        "tidy",
        read_tidy,
        looks_tidy,
        "long table: system, topic, score",
        claims_tidy_frame,
        read_tidy_frame,
    )
)
register_reader(
    Reader(
        "wide",
        read_wide,
        looks_wide,
        "topic x system matrix",
        lambda obj: isinstance(obj, pd.DataFrame),
        read_wide_frame,
    )
)
register_reader(
    Reader(
        "trec_eval",
        read_trec_eval,
        looks_trec_eval,
        "trec_eval -q output (measure topic value)",
        picks_measures=True,
    )
)
register_reader(
    Reader("run", read_runs, looks_run, "TREC run files scored against qrels=", picks_measures=True)
)
register_reader(Reader("lines", read_lines, looks_lines, "one score per line, one file per system"))
register_reader(
    Reader(
        "pyterrier",
        read_pyterrier,
        looks_pyterrier,
        "pt.Experiment(..., perquery=True): name, qid, measure, value",
        claims_pyterrier,
        read_pyterrier,
        picks_measures=True,
    )
)
register_reader(
    Reader(
        "ranx",
        None,
        None,
        "ranx Run(s) with qrels=, or their stored run.scores",
        claims_ranx,
        read_ranx,
    )
)
register_reader(
    Reader(
        "ir_measures",
        None,
        None,
        "ir_measures Metric(query_id, measure, value) results, one system or {system: ...}",
        claims_metrics,
        read_metrics,
    )
)

register_reader(
    Reader(
        "lm_eval",
        read_lm_eval,
        looks_lm_eval,
        "lm-evaluation-harness samples_*.jsonl",
        picks_measures=True,
    )
)
register_reader(
    Reader("inspect", read_inspect, looks_inspect, "Inspect AI eval logs", picks_measures=True)
)
register_reader(
    Reader("helm", read_helm, looks_helm, "HELM per_instance_stats.json", picks_measures=True)
)
register_reader(
    Reader("swebench", read_swebench, looks_swebench, "SWE-bench results: resolved ids")
)

#: Order in which file sniffers are asked (the first that recognises a file wins); the
#: LLM evaluation logs first: their sniffers only accept their own JSON.
_DETECTION_ORDER = ("lm_eval", "inspect", "helm", "swebench", "trec_eval", "run", "pyterrier",
                    "tidy", "lines", "wide")  # fmt: skip
#: Binary inputs: detection does not read their head as text.
_BINARY_SUFFIXES = (".parquet", ".eval")
#: Order in which object readers are asked (``wide`` takes any other DataFrame).
_OBJECT_ORDER = ("ranx", "ir_measures", "pyterrier", "tidy", "wide")


def detect_format(path: PathArg) -> str:
    """Return the name of the format of ``path``, judged from its content.

    Raises
    ------
    ScoreTableError
        If the file is missing, empty, or matches no registered format.
    """
    path = check_input(Path(path))  # before any read: a FIFO or /dev/zero never blocks
    if path.suffix.lower() not in _BINARY_SUFFIXES:
        head_text(path)  # raises the clear error for empty, binary or non-UTF-8 heads
    for name in _ordered(_DETECTION_ORDER):
        reader = READERS[name]
        if reader.sniff is not None and reader.sniff(path):
            return name
    if looks_qrels(path):
        raise ScoreTableError(
            "this looks like a qrels file: pass it as qrels= (CLI: --qrels) with the run files",
            source=str(path),
        )
    raise ScoreTableError(
        "cannot tell the format of this file; pass format= (CLI: --input-format) with one of "
        + ", ".join(n for n, r in READERS.items() if r.read is not None),
        source=str(path),
    )


def _ordered(first: Sequence[str]) -> list[str]:
    """Return the registered names: ``first`` (those registered), then the others, latest first."""
    return [n for n in first if n in READERS] + [n for n in reversed(READERS) if n not in first]


def read_scores(
    paths: PathArg | Sequence[PathArg] | object,
    *,
    format: str | None = None,
    replicate_pattern: str | re.Pattern[str] | None = None,
    **options,
) -> ScoreTable:
    r"""Read per-topic scores from files, a folder, or an object in memory into one table.

    Every accepted input, how it is recognised, the options it needs and an example
    are listed in ``docs/inputs.md``.

    Parameters
    ----------
    paths
        A file or a list of files (files of one call share the format); a folder (its
        files, e.g. TREC runs with ``qrels=``); or an object in memory, recognised by
        type or shape: a pandas DataFrame (tidy, wide, or a per-query PyTerrier
        ``pt.Experiment`` frame), ranx ``Run`` objects, or ``ir_measures`` per-query
        results (``Metric`` lists, or ``{system: metrics}``).
    format
        Name of a registered format (see module docs); detected if ``None``.
    replicate_pattern
        The files are replicates (seeds, folds, repeated runs), one run of one system
        each: a regular expression searched in each file's name, whose named group
        ``replicate`` labels the run and ``system`` names the system (without it, the
        system is the file's sub-folder, else the one its reader finds: a run tag, a
        model). A folder of sub-folders, one per system, is read as replicates without
        it: ``runs/bm25/seed1.run`` is system ``bm25``, replicate ``seed1``.
    **options
        Passed to the reader: ``measure``, ``collection``, ``missing`` (``"error"``,
        ``"intersect"``, ``"keep"``), ``check_range``, and input-specific options such
        as ``qrels`` (a file, a ranx ``Qrels``, ir_datasets qrels, a dict) for runs or
        ``systems`` for line files.

    Returns
    -------
    ScoreTable

    Raises
    ------
    ScoreTableError
        Bad input, in one line naming the file, line, system, topic or object.
    OptionError
        An option the input's reader does not take, or an input of no known kind.

    Examples
    --------
    >>> table = read_scores("data/example_scores.csv")  # doctest: +SKIP
    >>> table = read_scores("data/example_runs", qrels="data/example_runs/qrels.txt",
    ...                     measure="AP")  # doctest: +SKIP
    >>> table = read_scores({"bm25": bm25_metrics, "dense": dense_metrics})  # doctest: +SKIP
    >>> seeds = r"(?P<system>.+)_seed(?P<replicate>\d+)\.run"  # bm25_seed1.run, ...
    >>> table = read_scores("runs", qrels="qrels.txt", measure="AP",
    ...                     replicate_pattern=seeds)  # doctest: +SKIP
    """
    pattern = compile_replicate_pattern(replicate_pattern)
    paths = _read_once(paths)
    reader = _object_reader(paths, format)
    if reader is not None and reader.read_object is not None:
        if pattern is not None:
            raise OptionError(
                "replicate_pattern names files; an object in memory has none (give it a "
                "replicate column instead)"
            )
        return reader.read_object(
            paths, **_accepted_options(reader.name, reader.read_object, options)
        )
    files = _as_paths(paths)
    if format is None and options.get("qrels") is not None:
        format = "run"
    files, folders, notes = _expand_folders(files, format=format, qrels=options.get("qrels"))
    labels = replicate_labels(files, folders, pattern)
    name = format or detect_format(files[0])
    if name not in READERS:
        raise ScoreTableError(f"unknown input format {name!r}; known: {', '.join(READERS)}")
    reader = READERS[name]
    if reader.read is None:
        raise ScoreTableError(
            f"format {name!r} reads objects in memory ({reader.description}), not files"
        )
    options = _accepted_options(name, reader.read, options)
    multi_file = getattr(reader.read, "multi_file", False)
    if labels is not None:
        if options.get("systems") is not None:
            raise OptionError(
                "systems= does not go with replicate files: their names or sub-folders "
                "name the systems"
            )
        read = reader.read
        table = read_replicates(
            (lambda f: read([f], **options)) if multi_file else (lambda f: read(f, **options)),
            files,
            labels,
            source=_describe(files),
            missing=options.get("missing", "error"),
            check_range=options.get("check_range", True),
        )
    elif multi_file:
        table = reader.read(files, **options)
    else:
        table = _concat_files((reader.read(f, **options) for f in files), files)
    return dataclasses.replace(table, notes=(*notes, *table.notes)) if notes else table


def _read_once(obj: object) -> object:
    """Materialise one-shot iterators (``iter_calc`` generators), also as mapping values."""
    if isinstance(obj, Iterator):
        return list(obj)
    if isinstance(obj, Mapping) and any(isinstance(v, Iterator) for v in obj.values()):
        return {k: list(v) if isinstance(v, Iterator) else v for k, v in obj.items()}
    return obj


def _object_reader(obj: object, format: str | None) -> Reader | None:
    """Return the reader of an object in memory (``None``: file names, unknown objects)."""
    if isinstance(obj, str | PathLike) or (
        isinstance(obj, list | tuple) and all(isinstance(p, str | PathLike) for p in obj)
    ):
        return None
    if format is not None:
        reader = READERS.get(format)
        if reader is None:
            raise ScoreTableError(f"unknown input format {format!r}; known: {', '.join(READERS)}")
        if reader.read_object is None:
            raise ScoreTableError(
                f"format {format!r} reads files, not a {type(obj).__name__} in memory"
            )
        return reader
    for name in _ordered(_OBJECT_ORDER):
        reader = READERS[name]
        if reader.claims is not None and reader.read_object is not None and reader.claims(obj):
            return reader
    return None


def _expand_folders(
    files: list[Path], *, format: str | None, qrels: object
) -> tuple[list[Path], list[str | None], list[str]]:
    """Replace each folder by its files; with runs (``qrels=``), every file must be a run.

    Returns the files, the system sub-folder each came from (``None``: not from a folder
    of one sub-folder per system, see :func:`~bayes_ir.readers.folders.system_folders`)
    and notes.
    """
    if not any(f.is_dir() for f in files):
        return files, [None] * len(files), []
    skip = [Path(qrels)] if isinstance(qrels, str | PathLike) else []
    looks = READERS["run"].sniff if format == "run" else None  # a forced format: not sniffed
    out: list[Path] = []
    folders: list[str | None] = []
    notes: list[str] = []
    for f in files:
        if not f.is_dir():
            out.append(f)
            folders.append(None)
            continue
        systems = system_folders(f, skip=skip)
        for folder in systems or [f]:
            found, note = folder_files(folder, skip=skip, looks=looks, what="TREC run file")
            if format is None:
                _same_format(found, folder)
            out += found
            folders += [None if systems is None else folder.name] * len(found)
            notes += note
    return out, folders, notes


def _same_format(files: list[Path], folder: Path) -> None:
    """Refuse a folder whose files are not all of one detected format, naming the odd one."""
    first = detect_format(files[0])
    for path in files[1:]:
        fmt = detect_format(path)
        if fmt != first:
            raise ScoreTableError(
                f"is {fmt} but {files[0].name} in the same folder {folder} is {first}: a folder "
                "must hold files of one format",
                source=str(path),
            )


def _accepted_options(name: str, read: Callable[..., ScoreTable], options: dict) -> dict:
    """``options`` the reader takes (``None`` values it does not take are dropped).

    Raises
    ------
    OptionError
        An option the reader of this format does not accept, naming the ones it does.
    """
    parameters = inspect.signature(read).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return options  # a registered reader that takes any option judges them itself
    accepted = [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = [k for k, v in options.items() if k not in accepted and v is not None]
    if unknown:
        raise OptionError(
            f"format {name!r} does not take the option(s) {', '.join(unknown)}; "
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
            "expected a file, a folder, a list of files, a DataFrame or an evaluation result "
            f"(see docs/inputs.md), got {type(paths).__name__}"
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
    return concat(tables, source=_describe(files))


def _describe(files: list[Path]) -> str:
    """Name the input files in errors and notes: two by name, more by the first and a count."""
    if len(files) > 2:
        return f"{files[0]} and {len(files) - 1} more files"
    return ", ".join(str(f) for f in files)


from bayes_ir.readers.segments import read_collections, read_segments, segments_from_pattern  # noqa: E402

__all__ = [
    "READERS",
    "Reader",
    "detect_format",
    "load_qrels",
    "read_helm",
    "read_inspect",
    "read_lines",
    "read_lm_eval",
    "read_metrics",
    "read_pyterrier",
    "read_qrels",
    "read_ranx",
    "read_run",
    "read_runs",
    "read_collections",
    "read_scores",
    "read_segments",
    "segments_from_pattern",
    "read_swebench",
    "read_tidy",
    "read_trec_eval",
    "read_wide",
    "register_reader",
]
