"""Shared file access for readers: text with clear errors, gzip transparently, line numbers kept."""

from __future__ import annotations

import csv
import io
import math
import re
import zlib
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from bayes_ir import defaults
from bayes_ir.errors import ScoreTableError
from bayes_ir.files import check_input, decode

#: Largest field the csv module accepts (its default, 128 KiB, is too small for wide rows).
csv.field_size_limit(2**24)


#: Bytes read from the start of a file to guess its format (never the whole file).
SNIFF_BYTES = 64 * 1024


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
    return _gunzip(raw, limit, source=str(path))


def _gunzip(raw: bytes, limit: int | None, *, source: str) -> bytes:
    """Decompress gzip data (members one after another), at most ``limit`` bytes of it.

    Without ``limit``, data that would grow beyond the memory limit (a "gzip bomb") is
    refused before it is held in memory; with it (the head of a file, for detection), the
    first ``limit`` bytes are returned even when the stream goes on.
    """
    cap = int(defaults.memory_limit()) if limit is None else limit
    out: list[bytes] = []
    size = 0
    try:
        while raw and size <= cap:
            stream = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            data = raw
            while size <= cap:
                piece = stream.decompress(data, 1 << 24)
                out.append(piece)
                size += len(piece)
                data = stream.unconsumed_tail
                if not data and not piece:
                    break
            if size <= cap and not stream.eof:
                if limit is not None:
                    break  # the head of a file: its stream goes on past what was read
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            raw = stream.unused_data
    except (OSError, EOFError, zlib.error) as exc:
        raise ScoreTableError(f"corrupt gzip data: {exc}", source=source) from None
    if size > cap and limit is None:
        raise ScoreTableError(
            f"the gzip data holds more than the memory limit of {cap / 1e9:.1f} GB "
            "uncompressed (set BAYES_IR_MEMORY_LIMIT, in bytes, to raise it)",
            source=source,
        )
    return b"".join(out)[:cap]


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
    """Return the delimiter of a header line: tab, else the commoner of comma and semicolon.

    A tab wins when the line has one; a semicolon when it is more frequent than the comma
    (Excel's CSV in locales whose decimal mark is a comma); else a comma if there is one;
    else whitespace (``" "``).
    """
    if "\t" in first_line:
        return "\t"
    commas, semicolons = first_line.count(","), first_line.count(";")
    if semicolons > commas:
        return ";"
    if commas:
        return ","
    return " "


#: Excel's first line naming the delimiter of a CSV file (``sep=;``).
_SEP_LINE = re.compile(r"^\s*sep=(.)\s*$")
#: A number written with a decimal comma (``0,25``, ``-1,5e-3``): read in ``;`` files only.
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+([eE][+-]?\d+)?$")
#: pandas' name for a column whose header cell was empty (``Unnamed: 0``).
_PANDAS_UNNAMED = re.compile(r"^Unnamed: \d+$")


def is_unnamed(name: str) -> bool:
    """Tell a header cell that names nothing: empty, or pandas' ``Unnamed: 0`` for one."""
    return not name.strip() or bool(_PANDAS_UNNAMED.match(name.strip()))


def split_header(lines: list[str]) -> tuple[str, list[list[str]]]:
    """Split the first lines of a delimited file into stripped fields; return the delimiter too.

    An Excel ``sep=;`` first line names the delimiter and is dropped; otherwise the
    delimiter is guessed from the header (:func:`guess_separator`).
    """
    sep = None
    if lines and (match := _SEP_LINE.match(lines[0])):
        sep, lines = match[1], lines[1:]
    if not lines:
        return sep or ",", []
    sep = sep or guess_separator(lines[0])
    if sep == " ":
        return sep, [line.split() for line in lines]
    try:
        rows = list(csv.reader(lines, delimiter=sep))
    except csv.Error:
        rows = [line.split(sep) for line in lines]
    return sep, [[c.strip() for c in row] for row in rows]


def delimited_head(path: Path, n: int = 2) -> tuple[str, list[list[str]]]:
    """Return the delimiter and the first ``n`` non-empty rows of a file, split into fields."""
    sep, rows = split_header(head_lines(path, n + 1))
    return sep, rows[:n]


def number_text(text: str, sep: str) -> str:
    """``text`` with a decimal comma read as a point when the delimiter is ``;`` (Excel)."""
    return text.replace(",", ".", 1) if sep == ";" and _DECIMAL_COMMA.match(text) else text


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
    skip = 0
    if match := _SEP_LINE.match(first):  # Excel's "sep=;" line names the delimiter
        sep, skip = match[1], lines.index(first) + 1
        first = next((line for line in lines[skip:] if line.strip()), "")
    else:
        sep = guess_separator(first)
    rows: list[list[str]] = []
    numbers: list[int] = []
    if sep == " ":
        for number, fields in split_lines(text):
            if number > skip:
                rows.append(fields)
                numbers.append(number)
    else:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        try:
            start = 1
            for fields in reader:
                if start > skip and any(f.strip() for f in fields):
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
    notes = []
    if sep == ";":
        converted = 0
        for fields in body:
            for i, cell in enumerate(fields):
                if _DECIMAL_COMMA.match(cell):
                    fields[i] = cell.replace(",", ".", 1)
                    converted += 1
        if converted:
            notes.append(
                f"{path}: read as Excel writes CSV with a decimal comma (';' between fields, "
                f"',' before the decimals: {converted} number(s))"
            )
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
    frame = pd.DataFrame(body, columns=names, index=pd.Index(body_lines, name="line"), dtype=object)
    frame.attrs["unnamed"] = [n for n, h in zip(names, header, strict=True) if is_unnamed(h)]
    frame.attrs["notes"] = notes
    return frame


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
    if not head.strip() or has_nul or b"\r" in head or head.startswith(b"sep="):
        return None  # the slow path reads CR-only line ends and Excel's "sep=;" line
    try:
        first = head.decode("utf-8")
    except UnicodeDecodeError:
        return None
    sep = guess_separator(first)
    if sep == " ":
        return None
    header = next(csv.reader([first], delimiter=sep))
    names = [h.strip() if h.strip() else f"column{i + 1}" for i, h in enumerate(header)]
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
    frame.attrs["unnamed"] = [n for n, h in zip(names, header, strict=True) if is_unnamed(h)]
    frame.attrs["notes"] = []
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
