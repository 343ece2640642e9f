"""Every file the package reads or writes goes through here: checked inputs, atomic writes.

Every path the user names is read through :func:`check_input` first: a folder, a FIFO
(named pipe), a device such as ``/dev/zero`` or a socket is refused before it is opened
(so nothing blocks or fills memory), a missing file names the close matches of its
folder (and a name spelled in the other Unicode normalisation, as macOS writes it, is
found), and a file larger than the memory limit is refused. Small text files the user
names beside the scores (selector lists, configs) are read whole by
:func:`read_input_text`, with a size limit and the same decoding rules as score files
(:func:`decode`: a UTF-8 byte-order mark dropped, UTF-16, NUL bytes and bytes that are
not UTF-8 refused, naming the line).

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
import difflib
import errno
import os
import secrets
import stat
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bayes_ir import defaults
from bayes_ir.errors import OptionError, ScoreTableError

#: File extensions of the result tables the package writes, and the format each selects.
TABLE_FORMATS = {".csv": "csv", ".json": "json", ".md": "markdown", ".tex": "latex"}

__all__ = [
    "atomic_path",
    "check_input",
    "check_output_path",
    "declare_inputs",
    "decode",
    "declared_inputs",
    "read_input_text",
    "reset_inputs",
    "write_bytes",
    "write_text",
]

#: The input files of the current run; every output is checked against them.
_INPUTS: contextvars.ContextVar[tuple[Path, ...]] = contextvars.ContextVar(
    "bayes_ir_inputs", default=()
)
#: The input folders of the current run (a folder of runs): no output is written into one.
_FOLDERS: contextvars.ContextVar[tuple[Path, ...]] = contextvars.ContextVar(
    "bayes_ir_input_folders", default=()
)
_TMP_TAG = ".part-"
#: Longest file name (bytes) of ext4, XFS, btrfs, APFS and NTFS.
_NAME_MAX = 255


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_input(path: str | os.PathLike[str], *, what: str = "file") -> Path:
    """Return ``path`` if it is a regular file that can be read, else raise a clear error.

    Called before any byte is read, so that a FIFO, a device such as ``/dev/zero`` or a
    socket is refused instead of blocking or filling memory.

    Parameters
    ----------
    path
        The file the user named.
    what
        What the file is, for the messages (``"selector file"``, ``"config"``).

    Returns
    -------
    pathlib.Path
        ``path``, or the file whose name differs from it only in its Unicode
        normalisation (``café`` written as ``e`` plus a combining accent by macOS, typed
        with a precomposed ``é``) when ``path`` itself does not exist.

    Raises
    ------
    ScoreTableError
        Missing file (with close matches of the names in its folder), a broken symbolic
        link, a folder, a file that is not regular, or one larger than the memory limit
        (:func:`bayes_ir.defaults.memory_limit`); the message names the path.
    """
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        other = _other_normalisation(path)
        if other is None:
            if path.is_symlink():
                raise ScoreTableError(
                    f"is a broken symbolic link (to {os.readlink(path)}): the {what} it "
                    "points to does not exist",
                    source=str(path),
                ) from None
            raise ScoreTableError(
                f"{what} not found" + _close_names(path), source=str(path)
            ) from None
        path, info = other, other.stat()
    except OSError as exc:
        raise ScoreTableError(
            f"cannot read the {what}: {exc.strerror or exc}", source=str(path)
        ) from None
    if stat.S_ISDIR(info.st_mode):
        hint = "pass the files in it (e.g. folder/*.csv)" if what == "file" else f"name the {what}"
        raise ScoreTableError(f"is a folder, not a {what}: {hint}", source=str(path))
    for test, kind in _KINDS:
        if test(info.st_mode):
            raise ScoreTableError(
                f"is {kind}, not a regular file: a {what} is read from disk; save its "
                "content to a file first",
                source=str(path),
            )
    limit = defaults.memory_limit()
    if info.st_size > limit:
        raise ScoreTableError(
            f"the {what} is {_size(info.st_size)}, more than the memory limit of "
            f"{_size(limit)} (set BAYES_IR_MEMORY_LIMIT, in bytes, to raise it)",
            source=str(path),
        )
    return path


def _size(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def _other_normalisation(path: Path) -> Path | None:
    """Return the existing path equal to ``path`` once both are in Unicode NFC, or ``None``.

    Each missing component is looked up in its folder among the names of the same NFC
    form (macOS writes decomposed NFD names; keyboards type composed NFC ones).
    """
    found = Path(path.anchor) if path.is_absolute() else Path()
    for part in path.parts[1:] if path.is_absolute() else path.parts:
        candidate = found / part
        if not (candidate.exists() or candidate.is_symlink()):
            want = unicodedata.normalize("NFC", part)
            try:
                names = [e.name for _, e in zip(range(10_000), os.scandir(found or "."),
                                                strict=False)]  # fmt: skip
            except OSError:
                return None
            same = [n for n in names if unicodedata.normalize("NFC", n) == want]
            if len(same) != 1:
                return None
            candidate = found / same[0]
        found = candidate
    return found if found.exists() else None


def _close_names(path: Path) -> str:
    """``"; close matches: a.csv, b.csv"`` from the missing file's folder, or ``""``."""
    try:
        names = [p.name for _, p in zip(range(10_000), path.parent.iterdir(), strict=False)]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    return f"; close matches in {path.parent}: {', '.join(close)}" if close else ""


def decode(raw: bytes, *, source: str, partial: bool = False) -> str:
    """UTF-8 text of ``raw`` (a UTF-8 byte-order mark dropped, line ends kept).

    ``partial`` allows a multi-byte character cut at the end of ``raw`` (a file's head).

    Raises
    ------
    ScoreTableError
        UTF-16 or UTF-32 (byte-order mark, or NUL bytes every other byte), bytes that
        are not UTF-8 (naming the line and byte), a NUL byte, or no text at all.
    """
    if raw[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        raise ScoreTableError(
            "UTF-32 text (byte-order mark); re-encode the file as UTF-8", source=source, line=1
        )
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or _utf16_without_bom(raw):
        raise ScoreTableError(
            "UTF-16 text (as Excel's 'Unicode text' and PowerShell write it); re-encode the "
            "file as UTF-8 (in Excel: Save As 'CSV UTF-8')",
            source=source,
            line=1,
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if partial and exc.start >= len(raw) - 3 and exc.reason == "unexpected end of data":
            text = raw[: exc.start].decode("utf-8-sig")
        else:
            line = raw[: exc.start].count(b"\n") + 1
            raise ScoreTableError(
                f"not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start}); "
                "re-encode the file as UTF-8",
                source=source,
                line=line,
            ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ScoreTableError("binary data (NUL byte) in a text file", source=source, line=line)
    if not text.strip() and not partial:
        raise ScoreTableError("the file is empty", source=source)
    return text


def _utf16_without_bom(raw: bytes) -> bool:
    """Tell UTF-16 text without a byte-order mark: ASCII characters with a NUL beside each."""
    head = raw[:512]
    if len(head) < 8:
        return False
    even, odd = head[0::2], head[1::2]
    return (even.count(0) == 0 and odd.count(0) >= 0.9 * len(odd)) or (
        odd.count(0) == 0 and even.count(0) >= 0.9 * len(even)
    )


def read_input_text(
    path: str | os.PathLike[str], *, what: str, max_bytes: int | None = None
) -> tuple[Path, str]:
    """Read a small text file the user named (a selector list, a config), checked first.

    Parameters
    ----------
    path
        The file.
    what
        What it is, for the messages (``"selector file"``).
    max_bytes
        Largest size read (default :data:`bayes_ir.defaults.MAX_SIDE_FILE_BYTES`).

    Returns
    -------
    path, text
        The file read (see :func:`check_input` for names in another Unicode
        normalisation) and its text, decoded as :func:`decode` does.

    Raises
    ------
    ScoreTableError
        The errors of :func:`check_input` and :func:`decode`, or a file larger than
        ``max_bytes``; every message names the path.
    """
    path = check_input(path, what=what)
    limit = defaults.MAX_SIDE_FILE_BYTES if max_bytes is None else max_bytes
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise ScoreTableError(
            f"cannot read the {what}: {exc.strerror or exc}", source=str(path)
        ) from None
    if len(raw) > limit:
        raise ScoreTableError(
            f"the {what} is larger than {_size(limit)}: is it the right file?", source=str(path)
        )
    return path, decode(raw, source=str(path))


def declare_inputs(paths: Iterable[str | os.PathLike[str] | None]) -> None:
    """Remember the run's input files, so that no output is written over one of them.

    A folder stands for the files in it (a folder of runs). Paths that are not existing
    files or folders (``None``, ``"<DataFrame>"``) are skipped. The declaration holds
    for the current context (thread or task) and adds to earlier ones.
    """
    known = list(_INPUTS.get())
    folders = list(_FOLDERS.get())
    for item in paths:
        if item is None:
            continue
        path = Path(item)
        if path.is_dir():
            folders.append(path)
        inside = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        for file in inside:
            if file.is_file() and not any(_same_file(file, k) for k in known):
                known.append(file)
    _INPUTS.set(tuple(known))
    _FOLDERS.set(tuple(folders))


def declared_inputs() -> tuple[Path, ...]:
    """Return the input files declared so far in this context (for provenance hashes)."""
    return _INPUTS.get()


def reset_inputs() -> None:
    """Forget the declared inputs (a new run in the same process starts afresh)."""
    _INPUTS.set(())
    _FOLDERS.set(())


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
    if path.exists() or path.is_symlink():
        for item in [*_INPUTS.get(), *(Path(i) for i in inputs if i is not None)]:
            if item.is_file() and _same_file(path, item):
                raise OptionError(
                    f"{what} {path} is the input file {item}: refusing to write over an "
                    "input; choose another output name"
                )
    for folder in _FOLDERS.get():
        if folder.is_dir() and _same_file(path.parent if str(path.parent) else Path("."), folder):
            raise OptionError(
                f"{what} {path} is inside the input folder {folder}: the next read of the "
                "folder would take it for an input; write it elsewhere"
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
