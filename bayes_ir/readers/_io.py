"""Shared file access for readers: text with clear errors, gzip transparently, line numbers kept."""

from __future__ import annotations

import csv
import difflib
import gzip
import io
import math
import stat
import zlib
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from bayes_ir.errors import ScoreTableError

#: Largest field the csv module accepts (its default, 128 KiB, is too small for wide rows).
csv.field_size_limit(2**24)


#: Bytes read from the start of a file to guess its format (never the whole file).
SNIFF_BYTES = 64 * 1024

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_input(path: Path) -> Path:
    """Return ``path`` if it is a regular file that can be read, else raise a clear error.

    Called before any byte is read, so that a FIFO, a device such as ``/dev/zero`` or a
    socket is refused instead of blocking or filling memory.

    Raises
    ------
    ScoreTableError
        Missing file (with close matches of the names in its folder), a folder, or a
        file that is not regular; the message names the path.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ScoreTableError("file not found" + _close_names(path), source=str(path)) from None
    except OSError as exc:
        raise ScoreTableError(
            f"cannot read the file: {exc.strerror or exc}", source=str(path)
        ) from None
    if stat.S_ISDIR(mode):
        raise ScoreTableError(
            "is a folder, not a file: pass the files in it (e.g. folder/*.csv)", source=str(path)
        )
    for test, kind in _KINDS:
        if test(mode):
            raise ScoreTableError(
                f"is {kind}, not a regular file: score files are read from disk; save the "
                "data to a file first",
                source=str(path),
            )
    return path


def _close_names(path: Path) -> str:
    """``"; close matches: a.csv, b.csv"`` from the missing file's folder, or ``""``."""
    try:
        names = [p.name for _, p in zip(range(10_000), path.parent.iterdir(), strict=False)]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    return f"; close matches in {path.parent}: {', '.join(close)}" if close else ""


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """Return the bytes of a regular file (gunzipped), at most ``limit`` of them if given."""
    path = check_input(path)
    try:
        with path.open("rb") as f:
            raw = f.read() if limit is None else f.read(limit)
    except OSError as exc:
        raise ScoreTableError(
            f"cannot read the file: {exc.strerror or exc}", source=str(path)
        ) from None
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        if limit is None:
            return gzip.decompress(raw)
        # the head of a gzip stream: decompress what it holds, up to the limit
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS).decompress(raw, limit)
    except (OSError, EOFError, zlib.error) as exc:
        raise ScoreTableError(f"corrupt gzip data: {exc}", source=str(path)) from None


def decode(raw: bytes, *, source: str, partial: bool = False) -> str:
    """UTF-8 text of ``raw`` (a UTF-8 byte-order mark dropped, CRLF kept for splitlines).

    ``partial`` allows a multi-byte character cut at the end of ``raw`` (a file's head).

    Raises
    ------
    ScoreTableError
        UTF-16, bytes that are not UTF-8 (naming the line and byte), a NUL byte, or no
        text at all.
    """
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise ScoreTableError(
            "UTF-16 text (byte-order mark); re-encode the file as UTF-8", source=source, line=1
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


def read_text(path: Path) -> str:
    """Return the whole text of ``path`` (gzip-aware), raising a clear error on bad bytes.

    The file is only read, never written. Errors name the file (and the line of an
    undecodable byte); files that are not regular (FIFO, device) are refused unread.
    """
    return decode(read_bytes(path), source=str(path))


def head_text(path: Path) -> str:
    """Return the first :data:`SNIFF_BYTES` of a file as text, for format detection.

    Raises the errors of :func:`check_input` and :func:`decode` (an empty file, binary
    or non-UTF-8 bytes in the head); a last line cut by the limit is dropped.
    """
    raw = read_bytes(path, SNIFF_BYTES)
    text = decode(raw, source=str(path), partial=True)
    if len(raw) >= SNIFF_BYTES and "\n" in text:
        text = text[: text.rindex("\n") + 1]
    if not text.strip():
        raise ScoreTableError("the file is empty", source=str(path))
    return text


def head_lines(path: Path, n: int = 5) -> list[str]:
    """First ``n`` non-empty lines of a text file; empty list if unreadable as text."""
    if Path(path).suffix.lower() == ".parquet":
        return []
    try:
        text = head_text(path)
    except ScoreTableError:
        return []
    out = []
    for line in text.splitlines():
        if line.strip():
            out.append(line)
            if len(out) == n:
                break
    return out


def split_lines(text: str) -> list[tuple[int, list[str]]]:
    """Whitespace-split every non-blank line, returning ``(line_number, fields)`` pairs."""
    return [(i, line.split()) for i, line in enumerate(text.splitlines(), 1) if line.strip()]


def guess_separator(first_line: str) -> str:
    """Tab if the line has one, else comma if it has one, else whitespace (``" "``)."""
    if "\t" in first_line:
        return "\t"
    if "," in first_line:
        return ","
    return " "


def read_delimited(path: Path, *, numeric: Iterable[str] = ()) -> pd.DataFrame:
    """Read a CSV/TSV/whitespace table with a header, as strings, keeping file line numbers.

    The delimiter is chosen from the header line (tab, comma, else whitespace). Every
    row must have as many fields as the header.

    Parameters
    ----------
    path
        The file (optionally gzipped).
    numeric
        Lower-case names of columns expected to hold numbers (``score``). When given,
        a clean CSV/TSV is parsed by pyarrow: those columns as floats, the others as
        categoricals; any irregularity (a blank or short line, a quoted line break,
        bytes that are not UTF-8, a cell that is not a number) falls back to the exact
        line-by-line reader, whose errors name the line.

    Returns
    -------
    pandas.DataFrame
        String cells (stripped; categorical from the fast path), numbers in ``numeric``
        columns from the fast path; the index holds the 1-based line number of each row.

    Raises
    ------
    ScoreTableError
        Empty file, undecodable bytes, malformed quoting, or a row with the wrong
        number of fields (naming the line and both counts).
    """
    path = check_input(Path(path))
    numeric = {n.lower() for n in numeric}
    if numeric:
        frame = _read_clean_csv(path, numeric)
        if frame is not None:
            return frame
    text = read_text(path)
    lines = text.splitlines()
    first = next(line for line in lines if line.strip())
    sep = guess_separator(first)
    rows: list[list[str]] = []
    numbers: list[int] = []
    if sep == " ":
        for number, fields in split_lines(text):
            rows.append(fields)
            numbers.append(number)
    else:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        try:
            start = 1
            for fields in reader:
                if any(f.strip() for f in fields):
                    rows.append([f.strip() for f in fields])
                    numbers.append(start)
                start = reader.line_num + 1
        except csv.Error as exc:
            raise ScoreTableError(
                f"malformed delimited text: {exc}", source=str(path), line=reader.line_num
            ) from None
    if not rows:
        raise ScoreTableError("the file has no fields (only separators)", source=str(path))
    header, body, body_lines = rows[0], rows[1:], numbers[1:]
    if not body:
        raise ScoreTableError("the file has a header but no data rows", source=str(path))
    width = len(header)
    for fields, number in zip(body, body_lines, strict=True):
        if len(fields) != width:
            raise ScoreTableError(
                f"wrong number of columns: {len(fields)} field(s), the header has {width}",
                source=str(path),
                line=number,
            )
    names = [h if h else f"column{i + 1}" for i, h in enumerate(header)]
    return pd.DataFrame(body, columns=names, index=pd.Index(body_lines, name="line"), dtype=object)


def _read_clean_csv(path: Path, numeric: set[str]) -> pd.DataFrame | None:
    """Parse a regular CSV/TSV with pyarrow, or return ``None`` when the slow path must judge.

    Regular means: the header on line 1, no blank line, no line break inside quotes
    (so row ``i`` is line ``i + 2``), no NUL byte, valid UTF-8, every row as wide as the
    header, numbers in the ``numeric`` columns and no blank name in the others. A plain
    file is streamed (never held whole in memory); a gzipped one is decompressed first.
    """
    with path.open("rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    source: Path | io.BytesIO = path
    if gzipped:
        raw = read_bytes(path)
        stats = _line_stats([raw])
        source = io.BytesIO(raw)
    else:
        with path.open("rb") as f:
            stats = _line_stats(iter(lambda: f.read(1 << 22), b""))
    head, n_lines, has_nul = stats
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    head = head.rstrip(b"\r")
    if not head.strip() or has_nul:
        return None
    try:
        first = head.decode("utf-8")
    except UnicodeDecodeError:
        return None
    sep = guess_separator(first)
    if sep == " ":
        return None
    names = next(csv.reader([first], delimiter=sep))
    names = [h.strip() if h.strip() else f"column{i + 1}" for i, h in enumerate(names)]
    if len(set(names)) != len(names):
        return None
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pyarrow is optional: the line-by-line reader is exact, only slower
        return None

    label = pa.dictionary(pa.int32(), pa.string())
    types = {n: pa.float64() if n.lower() in numeric else label for n in names}
    try:
        table = pacsv.read_csv(
            # a stream, not a file name: pyarrow would guess compression from ".gz"
            source
            if isinstance(source, io.BytesIO)
            else pa.input_stream(str(source), compression=None),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1, use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types=types,
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowException, ValueError, OSError):
        return None
    if table.num_rows == 0 or n_lines != table.num_rows + 1:
        return None  # blank lines, or a quoted line break: line numbers need the slow path
    frame = table.to_pandas()
    del table
    for name in names:
        if name.lower() in numeric:
            continue
        cats = frame[name].cat.categories.astype(object)
        stripped = pd.Index(cats).str.strip()
        if (stripped == "").any():
            return None  # a blank cell: the slow path skips blank rows and names the line
        if not stripped.equals(pd.Index(cats)):
            frame[name] = (
                frame[name].cat.rename_categories(stripped)
                if stripped.is_unique
                else (pd.Categorical(stripped[frame[name].cat.codes.to_numpy()]))
            )
    frame.index = pd.RangeIndex(2, len(frame) + 2, name="line")
    return frame


def _line_stats(chunks: Iterable[bytes]) -> tuple[bytes, int, bool]:
    """Return the first line, the number of lines and whether a NUL byte occurs."""
    head, count, nul, last = b"", 0, False, b"\n"
    for chunk in chunks:
        if not count and b"\n" not in head:
            head += chunk[: chunk.find(b"\n")] if b"\n" in chunk else chunk
        count += chunk.count(b"\n")
        nul = nul or b"\x00" in chunk
        last = chunk[-1:] or last
    return head, count + (0 if last == b"\n" else 1), nul


def parse_float(text: str, *, what: str, source: str, line: int) -> float:
    """Parse a finite float, raising :class:`ScoreTableError` naming the file and line."""
    try:
        value = float(text)
    except ValueError:
        raise ScoreTableError(
            f"{what} {text!r} is not a number", source=source, line=line
        ) from None
    if not math.isfinite(value):
        raise ScoreTableError(
            f"{what} {text!r} is not finite (NaN or infinity)", source=source, line=line
        )
    return value


def is_int(text: str) -> bool:
    """Tell whether ``text`` is an integer (``"2"``, ``"-1"``), as :func:`parse_int` reads it."""
    try:
        int(text)
    except ValueError:
        return False
    return True


def parse_int(text: str, *, what: str, source: str, line: int) -> int:
    """Parse an integer (``"2"``, ``"-1"``), raising :class:`ScoreTableError` otherwise."""
    try:
        return int(text)
    except ValueError:
        raise ScoreTableError(
            f"{what} {text!r} is not an integer", source=source, line=line
        ) from None
