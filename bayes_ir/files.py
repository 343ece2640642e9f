"""Every file the package writes goes through here: atomic writes, checked output paths.

A file is written to a temporary file in the target folder, flushed to disk and then
renamed over the target with :func:`os.replace`, which POSIX and Windows perform
atomically within one file system. A crash, Ctrl-C or a concurrent writer therefore never
leaves a partial or mixed file: readers see the old file or a complete new one (with two
concurrent writers, the last rename wins). The temporary file is removed on any exception,
``KeyboardInterrupt`` included.

Output paths are checked before any work is done: a path that is a folder, whose parent is
a file, whose name is too long for the file system, or that resolves to one of the run's
input files (through a symbolic or hard link as well) is refused with an
:class:`~bayes_ir.errors.OptionError` naming it.
"""

from __future__ import annotations

import contextvars
import errno
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bayes_ir.errors import OptionError

#: File extensions of the result tables the package writes, and the format each selects.
TABLE_FORMATS = {".csv": "csv", ".json": "json", ".md": "markdown", ".tex": "latex"}

__all__ = ["atomic_path", "check_output_path", "declare_inputs", "write_bytes", "write_text"]

#: The input files of the current run; every output is checked against them.
_INPUTS: contextvars.ContextVar[tuple[Path, ...]] = contextvars.ContextVar(
    "bayes_ir_inputs", default=()
)
_TMP_TAG = ".part-"
#: Longest file name (bytes) of ext4, XFS, btrfs, APFS and NTFS.
_NAME_MAX = 255


def declare_inputs(paths: Iterable[str | os.PathLike[str] | None]) -> None:
    """Remember the run's input files, so that no output is written over one of them.

    A folder stands for the files in it (a folder of runs). Paths that are not existing
    files or folders (``None``, ``"<DataFrame>"``) are skipped. The declaration holds
    for the current context (thread or task) and adds to earlier ones.
    """
    known = list(_INPUTS.get())
    for item in paths:
        if item is None:
            continue
        path = Path(item)
        inside = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        for file in inside:
            if file.is_file() and not any(_same_file(file, k) for k in known):
                known.append(file)
    _INPUTS.set(tuple(known))


def _same_file(a: Path, b: Path) -> bool:
    """Tell whether ``a`` and ``b`` are one file (same inode, or the same resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output_path(
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    what: str = "output",
) -> Path:
    """Return ``path`` as a :class:`~pathlib.Path` if a file can be written there.

    Parameters
    ----------
    path
        The file to write (it may exist; missing parent folders are created on writing).
    inputs
        Input files of the run, in addition to those given to :func:`declare_inputs`.
    what
        How to name the path in messages (``"--output"``, ``"--save"``, ...).

    Raises
    ------
    OptionError
        ``path`` is a folder, a parent of it is a file, its name is longer than the file
        system allows, or it is one of the input files (the message names both).
    """
    path = Path(path)
    for part in (path, *path.parents):  # before any stat(), which fails on such names
        size = len(os.fsencode(part.name))
        if size > _NAME_MAX:
            raise OptionError(
                f"{what} {path}: the name {part.name[:40]!r}... is too long ({size} bytes; "
                f"file systems allow {_NAME_MAX})"
            )
    if path.is_dir():
        raise OptionError(f"{what} {path}: this is a folder; give a file name")
    for parent in path.parents:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise OptionError(f"{what} {path}: {parent} is a file, not a folder")
            break
    if path.exists():
        for item in [*_INPUTS.get(), *(Path(i) for i in inputs if i is not None)]:
            if item.is_file() and _same_file(path, item):
                raise OptionError(
                    f"{what} {path} is the input file {item}: refusing to write over an "
                    "input; choose another output name"
                )
    return path


@contextmanager
def atomic_path(
    target: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    what: str = "output",
) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; on success, rename it to ``target``.

    For writers that need a path (netCDF through h5netcdf, matplotlib's ``savefig``,
    parquet). The temporary file keeps ``target``'s extension, so writers that choose
    the format by extension behave the same. Missing parent folders are created.

    Parameters
    ----------
    target
        The file to write; checked with :func:`check_output_path` first.
    inputs, what
        As in :func:`check_output_path`.

    Yields
    ------
    pathlib.Path
        The temporary file (it exists, empty) to write to.

    Raises
    ------
    OptionError
        The target is not writable (see :func:`check_output_path`), or the folder cannot
        be created, written or renamed into (no permission, disk full); the message names
        the path. Exceptions raised by the writer itself propagate unchanged.

    Notes
    -----
    The temporary file is created with ``O_CREAT | O_EXCL`` and mode ``0o666`` (less the
    umask, as a plain ``open(target, "w")`` would give); the data is flushed with
    ``os.fsync`` before ``os.replace(tmp, target)``. On any exception,
    ``KeyboardInterrupt`` included, the temporary file is deleted and ``target`` is left as it was.
    """
    target = check_output_path(target, inputs=inputs, what=what)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.stem[:40]}{_TMP_TAG}{secrets.token_hex(6)}{target.suffix}"
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    except OSError as exc:
        raise _os_error(exc, target, what) from None
    try:
        yield tmp
        try:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except OSError as exc:
            raise _os_error(exc, target, what) from None
    finally:
        tmp.unlink(missing_ok=True)


def _os_error(exc: OSError, target: Path, what: str) -> OptionError:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENAMETOOLONG:
        reason = "the file name is too long"
    return OptionError(f"{what} {target}: cannot write ({reason})")


def write_text(
    target: str | os.PathLike[str],
    text: str,
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    what: str = "output",
) -> Path:
    """Write ``text`` (UTF-8) to ``target`` atomically (see :func:`atomic_path`); return it."""
    return write_bytes(target, text.encode("utf-8"), inputs=inputs, what=what)


def write_bytes(
    target: str | os.PathLike[str],
    data: bytes,
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    what: str = "output",
) -> Path:
    """Write ``data`` to ``target`` atomically (see :func:`atomic_path`); return it."""
    with atomic_path(target, inputs=inputs, what=what) as tmp:
        try:
            tmp.write_bytes(data)
        except OSError as exc:
            raise _os_error(exc, Path(target), what) from None
    return Path(target)
