"""One score per line, one file per system, paired by line position (Ranger's GLUE files).

Line *i* of every file of one collection is the same example (topic ``i``, counted
from 1). The system and collection of each file come from ``systems=`` /
``collection=`` or from the folders of the paths: with Ranger's layout
``glue/<model>/<task>/eval_results_<task>_accuracy.txt`` the first folder level that
differs between the files names the system and the next one the collection.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.measures import PLAIN_UNIT_INTERVAL
from bayes_ir.readers._io import head_lines, read_text
from bayes_ir.table import DEFAULT_COLLECTION, DEFAULT_MEASURE, Missing, ScoreTable


def looks_lines(path: Path) -> bool:
    """Return True when every one of the first lines holds a single number."""
    lines = head_lines(path, 5)
    if not lines:
        return False
    for line in lines:
        fields = line.split()
        if len(fields) != 1:
            return False
        try:
            float(fields[0])
        except ValueError:
            return False
    return True


def _varying_parts(paths: Sequence[Path]) -> list[list[str]]:
    """For each path, the folder names (from the common root) that differ between paths."""
    folders = [p.resolve().parent.parts for p in paths]
    depth = min(len(f) for f in folders)
    columns = []
    for k in range(1, depth + 1):  # compare from the file's folder upwards
        values = [f[-k] for f in folders]
        if len(set(values)) > 1:
            columns.append(values)
    columns.reverse()  # outermost varying folder first
    return [[col[i] for col in columns] for i in range(len(paths))]


def _guess_measure(paths: Sequence[Path]) -> str:
    stems = {p.name.split(".")[0].rsplit("_", 1)[-1].lower() for p in paths}
    if len(stems) == 1:
        name = stems.pop()
        if name in PLAIN_UNIT_INTERVAL:
            return name
    return DEFAULT_MEASURE


def read_lines(
    paths: Sequence[Path],
    *,
    systems: Sequence[str] | None = None,
    collections: Sequence[str] | None = None,
    collection: str | None = None,
    measure: str | None = None,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Read one-score-per-line files, pairing lines by position within each collection.

    Parameters
    ----------
    paths
        One file per (system, collection); blank lines are not allowed inside a file
        (they would shift the pairing) except at the end.
    systems
        System name of each file (default: from the folders, else the file name).
    collections
        Collection of each file (default: from the folders, else ``collection``).
    collection
        Name of the single collection of all the files (it wins over the folder names).
    measure
        Measure name (default: the last ``_`` part of the file names when it is a known
        plain measure such as ``accuracy``, else ``"score"``).
    missing, check_range
        See :meth:`~bayes_ir.table.ScoreTable.from_frame`.

    Returns
    -------
    ScoreTable
        Topics are the line numbers ``"1"``, ``"2"``, ... of each collection.

    Raises
    ------
    ScoreTableError
        Non-numeric or non-finite lines (naming file and line), files of one collection
        with different numbers of lines, or two files for the same system and collection.
    """
    paths = [Path(p) for p in paths]
    n = len(paths)
    for name, given in (("systems", systems), ("collections", collections)):
        if given is not None and len(given) != n:
            raise ScoreTableError(f"{name}= has {len(given)} names for {n} files")
    parts = _varying_parts(paths) if n > 1 else [[] for _ in paths]
    if systems is None:
        if all(len(p) >= 1 for p in parts):
            systems = [p[0] for p in parts]
        else:
            systems = [p.name.split(".")[0] for p in paths]
    if collections is None:
        if collection is not None:
            collections = [collection] * n
        elif all(len(p) >= 2 for p in parts):
            collections = [p[1] for p in parts]
        else:
            collections = [collection or DEFAULT_COLLECTION] * n
    meas = measure or _guess_measure(paths)
    seen: dict[tuple[str, str], Path] = {}
    lengths: dict[str, tuple[int, Path]] = {}
    frames = []
    for path, system, coll in zip(paths, systems, collections, strict=True):
        key = (str(coll), str(system))
        if key in seen:
            raise ScoreTableError(
                f"system {system!r}, collection {coll!r} is given twice ({seen[key]} and {path}); "
                "pass systems= and collections="
            )
        seen[key] = path
        values = _read_values(path)
        if coll in lengths and lengths[coll][0] != len(values):
            other_n, other = lengths[coll]
            raise ScoreTableError(
                f"has {len(values)} scores but {other} has {other_n}: files of one collection "
                f"({coll!r}) are paired line by line and must have the same length",
                source=str(path),
            )
        lengths.setdefault(coll, (len(values), path))
        frames.append(
            pd.DataFrame(
                {
                    "collection": str(coll),
                    "measure": meas,
                    "system": str(system),
                    "topic": [str(i) for i in range(1, len(values) + 1)],
                    "score": values,
                }
            )
        )
    source = paths[0].as_posix() if n == 1 else f"{n} line files ({paths[0].parent.parent}/...)"
    return ScoreTable.from_frame(
        pd.concat(frames, ignore_index=True),
        missing=missing,
        source=source,
        check_range=check_range,
        notes=[f"{n} one-score-per-line file(s) paired by line position"],
    )


read_lines.multi_file = True  # type: ignore[attr-defined]


def _read_values(path: Path) -> np.ndarray:
    text = read_text(path)
    raw = text.splitlines()
    while raw and not raw[-1].strip():
        raw.pop()
    try:
        values = np.array(raw, dtype=float)
        if np.isfinite(values).all():
            return values
    except ValueError:
        pass  # find the offending line below
    values = np.empty(len(raw))
    for i, line in enumerate(raw):
        field = line.strip()
        if not field:
            raise ScoreTableError(
                "blank line inside the file (lines are paired by position)",
                source=str(path),
                line=i + 1,
            )
        try:
            v = float(field)
        except ValueError:
            raise ScoreTableError(
                f"score {field!r} is not a number (one score per line expected)",
                source=str(path),
                line=i + 1,
            ) from None
        if not np.isfinite(v):
            raise ScoreTableError(
                f"score {field!r} is NaN or infinite", source=str(path), line=i + 1
            )
        values[i] = v
    return values
