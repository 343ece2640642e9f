"""Shared file access for readers: text with clear errors, gzip transparently."""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import pandas as pd

from bayes_ir.errors import ScoreTableError


def read_text(path: Path) -> str:
    """Return the whole text of ``path`` (gzip-aware), raising a clear error on bad bytes."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ScoreTableError(f"cannot read the file: {exc.strerror or exc}", source=str(path))
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ScoreTableError(f"corrupt gzip data: {exc}", source=str(path))
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
        raise ScoreTableError("binary data (NUL bytes) in a text file", source=str(path))
    return text


def head_lines(path: Path, n: int = 5) -> list[str]:
    """First ``n`` non-empty lines of a text file; empty list if unreadable as text."""
    if path.suffix.lower() == ".parquet":
        return []
    try:
        text = read_text(path)
    except ScoreTableError:
        return []
    return [line for line in text.splitlines() if line.strip()][:n]


def read_delimited(path: Path, *, header: int | None = 0) -> pd.DataFrame:
    """Read a CSV or TSV (delimiter from the first line) as strings, errors naming the line."""
    text = read_text(path)
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        raise ScoreTableError("the file is empty", source=str(path))
    first = next(line for line in lines if line.strip())
    sep = "\t" if "\t" in first else ("," if "," in first else r"\s+")
    try:
        return pd.read_csv(
            io.StringIO(text),
            sep=sep,
            header=header,
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=True,
            engine="python" if sep == r"\s+" else "c",
        )
    except pd.errors.ParserError as exc:
        match = re.search(r"line (\d+)", str(exc))
        line = int(match.group(1)) if match else None
        raise ScoreTableError(f"wrong number of columns: {exc}", source=str(path), line=line)
    except pd.errors.EmptyDataError:
        raise ScoreTableError("the file is empty", source=str(path)) from None
