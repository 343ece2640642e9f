"""Shared file access for readers: text with clear errors, gzip transparently, line numbers kept."""

from __future__ import annotations

import csv
import gzip
import io
import math
import zlib
from pathlib import Path

import pandas as pd

from bayes_ir.errors import ScoreTableError

#: Largest field the csv module accepts (its default, 128 KiB, is too small for wide rows).
csv.field_size_limit(2**24)


def read_text(path: Path) -> str:
    """Return the whole text of ``path`` (gzip-aware), raising a clear error on bad bytes.

    The file is only read, never written. Errors name the file (and the line of an
    undecodable byte).
    """
    path = Path(path)
    if path.is_dir():
        raise ScoreTableError("is a folder, not a file", source=str(path))
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ScoreTableError("file not found", source=str(path)) from None
    except OSError as exc:
        raise ScoreTableError(
            f"cannot read the file: {exc.strerror or exc}", source=str(path)
        ) from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise ScoreTableError(f"corrupt gzip data: {exc}", source=str(path)) from None
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise ScoreTableError(
            "UTF-16 text (byte-order mark); re-encode the file as UTF-8", source=str(path), line=1
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ScoreTableError(
            f"not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start}); "
            "re-encode the file as UTF-8",
            source=str(path),
            line=line,
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ScoreTableError("binary data (NUL byte) in a text file", source=str(path), line=line)
    if not text.strip():
        raise ScoreTableError("the file is empty", source=str(path))
    return text


def head_lines(path: Path, n: int = 5) -> list[str]:
    """First ``n`` non-empty lines of a text file; empty list if unreadable as text."""
    if Path(path).suffix.lower() == ".parquet":
        return []
    try:
        text = read_text(path)
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


def read_delimited(path: Path) -> pd.DataFrame:
    """Read a CSV/TSV/whitespace table with a header, as strings, keeping file line numbers.

    The delimiter is chosen from the header line (tab, comma, else whitespace). Every
    row must have as many fields as the header.

    Returns
    -------
    pandas.DataFrame
        String cells (stripped); the index holds the 1-based line number of each row.

    Raises
    ------
    ScoreTableError
        Empty file, undecodable bytes, malformed quoting, or a row with the wrong
        number of fields (naming the line and both counts).
    """
    path = Path(path)
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


def parse_int(text: str, *, what: str, source: str, line: int) -> int:
    """Parse an integer (``"2"``, ``"-1"``), raising :class:`ScoreTableError` otherwise."""
    try:
        return int(text)
    except ValueError:
        raise ScoreTableError(
            f"{what} {text!r} is not an integer", source=source, line=line
        ) from None
