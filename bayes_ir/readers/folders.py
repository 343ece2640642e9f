"""A folder given as input: the score files in it (the CLI passes a folder as a file).

A folder of TREC run files with ``qrels=`` is the common case (one run per file, the
layout of TREC submissions); a folder of any other format works the same way when
every file in it has that format.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import head_lines
from bayes_ir.table_checks import natural_sorted


def folder_files(
    folder: Path, *, skip: list[Path], looks: Callable[[Path], bool] | None, what: str
) -> tuple[list[Path], list[str]]:
    """Return the regular, non-hidden files of ``folder`` in natural order, and a note.

    Parameters
    ----------
    folder
        The folder (not searched recursively).
    skip
        Files to leave out when they are in the folder (the qrels given with the runs).
    looks
        A sniffer every file must pass (``looks_run`` when ``qrels=`` is given), or
        ``None`` to accept any file.
    what
        What the files must be, for the error (``"TREC run file"``).

    Raises
    ------
    ScoreTableError
        An unreadable or empty folder, or a file that fails ``looks`` (naming it and
        its first line).
    """
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        raise ScoreTableError(
            f"cannot list the folder: {exc.strerror or exc}", source=str(folder)
        ) from None
    by_name = {e.name: Path(e.path) for e in entries}
    files, left = [], []
    for name in natural_sorted(by_name):
        path = by_name[name]
        if name.startswith(".") or not path.is_file():
            left.append(name)
        elif any(_same(path, s) for s in skip):
            left.append(f"{name} (the qrels)")
        else:
            files.append(path)
    if not files:
        raise ScoreTableError(
            "the folder holds no score files" + (f" (only {', '.join(left[:5])})" if left else ""),
            source=str(folder),
        )
    if looks is not None:
        for path in files:
            if not looks(path):
                first = (head_lines(path, 1) or ["(not text)"])[0][:60]
                raise ScoreTableError(
                    f"is not a {what} (first line {first!r}); the folder {folder} must hold "
                    f"only {what}s",
                    source=str(path),
                )
    notes = [f"{folder}: read {len(files)} file{'' if len(files) == 1 else 's'}"]
    if left:
        notes[0] += f"; left out {', '.join(left[:8])}" + (", ..." if len(left) > 8 else "")
    return files, notes


def system_folders(folder: Path, *, skip: list[Path]) -> list[Path] | None:
    """Return the sub-folders of ``folder`` when it holds one per system, else ``None``.

    A folder of system sub-folders (``runs/bm25/seed1.run``, ``runs/bm25/seed2.run``,
    ``runs/dense/...``) holds nothing else but hidden entries and the files of ``skip``
    (the qrels); each sub-folder holds the replicate files of one system.
    """
    try:
        entries = [e for e in os.scandir(folder) if not e.name.startswith(".")]
    except OSError:
        return None  # folder_files names the error
    paths = [Path(e.path) for e in entries if not any(_same(Path(e.path), s) for s in skip)]
    if not paths or not all(p.is_dir() for p in paths):
        return None
    return [folder / name for name in natural_sorted(p.name for p in paths)]


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
