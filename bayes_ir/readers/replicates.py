"""Several runs of one system, one file each: seeds, folds, repeated LLM evaluations.

Each file holds one run of one system (a TREC run, a ``trec_eval -q`` output, an
lm-evaluation-harness sample file, an Inspect log, ...). Which system and which
replicate a file is comes from its name, through ``replicate_pattern`` (a regular
expression with the named groups ``system`` and ``replicate``, searched in the file's
name), or from the layout of a folder of sub-folders, one per system
(``runs/bm25/seed1.run``: system ``bm25``, replicate ``seed1``, the file's name up to
its first dot). :func:`read_replicates` reads each file with the format's reader and
labels its rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from bayes_ir.errors import OptionError, ScoreTableError
from bayes_ir.table import REPLICATE, Missing, ScoreTable

#: A file's system (``None``: the one its reader finds) and replicate label.
Label = tuple[str | None, str]


def compile_replicate_pattern(value: str | re.Pattern[str] | None) -> re.Pattern[str] | None:
    """Compile ``replicate_pattern`` and check its named groups.

    Parameters
    ----------
    value
        A regular expression with the named group ``replicate`` and, unless the files
        are in one sub-folder per system or each names its own system (a run tag, a
        model), ``system``; or ``None``.

    Raises
    ------
    OptionError
        Not a string, not a regular expression, or no ``replicate`` group.
    """
    if value is None:
        return None
    if not isinstance(value, str | re.Pattern):
        raise OptionError(
            f"replicate_pattern must be a regular expression, got {type(value).__name__}"
        )
    try:
        pattern = re.compile(value)
    except re.error as exc:
        raise OptionError(
            f"replicate_pattern {value!r} is not a regular expression: {exc}"
        ) from None
    if "replicate" not in pattern.groupindex:
        raise OptionError(
            f"replicate_pattern {pattern.pattern!r} has no named group (?P<replicate>...) "
            "(and (?P<system>...) for the system), e.g. r'(?P<system>.+)_seed(?P<replicate>\\d+)'"
        )
    return pattern


def replicate_labels(
    files: Sequence[Path], folders: Sequence[str | None], pattern: re.Pattern[str] | None
) -> list[Label] | None:
    """Return the (system, replicate) of each file, or ``None`` when the files are not replicates.

    ``folders[i]`` is the system sub-folder ``files[i]`` came from (``None``: given as a
    file, or from a flat folder). The pattern's groups win over the sub-folder; a file's
    name up to its first dot is its replicate in a sub-folder without a pattern.

    Raises
    ------
    ScoreTableError
        A file whose name the pattern does not match, or matches with an empty group.
    """
    if pattern is None and all(f is None for f in folders):
        return None
    labels: list[Label] = []
    for path, folder in zip(files, folders, strict=True):
        if pattern is None:
            labels.append((folder, path.name.split(".")[0]))
            continue
        match = pattern.search(path.name)
        if match is None:
            raise ScoreTableError(
                f"the file name {path.name!r} does not match replicate_pattern {pattern.pattern!r}",
                source=str(path),
            )
        groups = {k: v for k, v in match.groupdict().items() if k in ("system", "replicate")}
        empty = [k for k, v in groups.items() if not (v or "").strip()]
        if empty:
            raise ScoreTableError(
                f"replicate_pattern {pattern.pattern!r} finds an empty {empty[0]} in the file "
                f"name {path.name!r}",
                source=str(path),
            )
        labels.append((groups.get("system", folder), groups["replicate"]))
    return labels


def read_replicates(
    read: Callable[[Path], ScoreTable],
    files: Sequence[Path],
    labels: Sequence[Label],
    *,
    source: str,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Read each file (one run of one system) with ``read`` and label it with its replicate.

    Parameters
    ----------
    read
        Reads one file into a table of one system.
    files, labels
        The files and their (system, replicate) from :func:`replicate_labels`.
    source
        Names the files in errors.
    missing, check_range
        As in :meth:`~bayes_ir.table.ScoreTable.from_frame`, for the whole table (each
        file is one system: its reader checked it alone).

    Raises
    ------
    ScoreTableError
        A file holding several systems or replicates, two files of one system and
        replicate.
    """
    frames: list[pd.DataFrame] = []
    notes: list[str] = []
    origin: dict[tuple[str, str], Path] = {}
    for path, (named, replicate) in zip(files, labels, strict=True):
        table = read(path)
        systems = list(table.data["system"].unique())
        if len(systems) != 1 or table.has_replicates:
            what = f"{len(systems)} systems" if len(systems) != 1 else "several replicates"
            raise ScoreTableError(
                f"holds {what}; a replicate file holds one run of one system",
                source=str(path),
            )
        system = named or systems[0]
        if (system, replicate) in origin:
            raise ScoreTableError(
                f"system {system!r}, replicate {replicate!r} comes from two files "
                f"({origin[(system, replicate)]} and {path})",
                source=str(path),
            )
        origin[(system, replicate)] = path
        frames.append(table.data.assign(system=system, **{REPLICATE: replicate}))
        notes += table.notes
    notes.append(
        f"{len(files)} files read as replicates, one run of one system each (system and "
        "replicate from each file's name or sub-folder)"
    )
    return ScoreTable.from_frame(
        pd.concat(frames, ignore_index=True),
        missing=missing,
        check_range=check_range,
        source=source,
        notes=notes,
    )
