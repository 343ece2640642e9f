r"""Query segments and per-collection folders: inputs of the model across groups.

* :func:`read_segments`: which segment each topic is in (navigational or
  informational, short or long, a conversation, a language), from a two-column file
  ``topic, segment`` (CSV or TSV, with or without a header), from a tidy score file
  with a ``segment`` column, or from a pattern on the topic ids (``re:^(\\d+)_``: the
  first group of the match is the segment, so CAsT's turn ``106_3`` is in
  conversation ``106``).
* :func:`read_collections`: a folder holding one folder per collection, each read with
  :func:`bayes_ir.read_scores` and named after its folder.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from bayes_ir.errors import OptionError, ScoreTableError
from bayes_ir.readers._io import decode, read_bytes
from bayes_ir.table import ScoreTable, concat
from bayes_ir.table_checks import natural_sorted

__all__ = ["read_collections", "read_segments", "segments_from_pattern"]


def segments_from_pattern(topics: Iterable[str], pattern: str) -> dict[str, str]:
    r"""Segment of every topic from a regular expression on its id.

    Parameters
    ----------
    topics
        The topic ids.
    pattern
        A regular expression (a leading ``re:`` is dropped) searched in each id; the
        segment is its first group, or the whole match when it has no group.

    Raises
    ------
    OptionError
        A bad pattern, or a topic it does not match (named).
    """
    text = pattern[3:] if pattern.startswith("re:") else pattern
    try:
        rx = re.compile(text)
    except re.error as exc:
        raise OptionError(f"--segments {pattern!r}: not a regular expression ({exc})") from None
    out = {}
    for t in topics:
        m = rx.search(str(t))
        if m is None:
            raise OptionError(f"--segments {pattern!r} does not match topic {t!r}")
        out[str(t)] = m.group(1) if m.groups() else m.group(0)
    return out


def read_segments(
    source: str | os.PathLike[str], *, topics: Iterable[str] | None = None
) -> dict[str, str]:
    """Read the segment of every topic.

    Parameters
    ----------
    source
        A file of two columns ``topic, segment`` (CSV or TSV; a header naming them is
        optional), a tidy score file with ``topic`` and ``segment`` columns, or
        ``re:PATTERN`` (see :func:`segments_from_pattern`; needs ``topics``).
    topics
        The topic ids, for a pattern.

    Returns
    -------
    dict
        ``{topic: segment}``.

    Raises
    ------
    ScoreTableError
        A file without two columns or a ``segment`` column, an empty label, or a topic
        given two segments (naming the file, the line and the topic).
    """
    text_source = str(source)
    if text_source.startswith("re:"):
        if topics is None:
            raise OptionError("a segment pattern needs the topics to apply it to")
        return segments_from_pattern(topics, text_source)
    path = Path(source)
    text = decode(read_bytes(path), source=str(path))
    first = text.splitlines()[0] if text.strip() else ""
    sep = "\t" if "\t" in first else ","
    names = [c.strip().strip('"').lower() for c in first.split(sep)]
    header = "segment" in names
    frame = pd.read_csv(
        io.StringIO(text), sep=sep, dtype=str, header=0 if header else None, keep_default_na=False
    )
    if header:
        topic_col = next(
            (c for c in frame.columns if c.strip().lower() in ("topic", "query_id", "qid")), None
        )
        seg_col = next(c for c in frame.columns if c.strip().lower() == "segment")
        if topic_col is None:
            raise ScoreTableError(
                "a segment file needs a topic column beside 'segment'", source=str(path)
            )
        pairs = frame[[topic_col, seg_col]]
    elif frame.shape[1] == 2:
        pairs = frame
    else:
        raise ScoreTableError(
            f"a segment file has two columns (topic, segment) or a 'segment' column; this one "
            f"has {frame.shape[1]}",
            source=str(path),
        )
    out: dict[str, str] = {}
    for i, (topic, segment) in enumerate(pairs.itertuples(index=False, name=None)):
        line = i + 1 + int(header)
        t, g = str(topic).strip(), str(segment).strip()
        if not t or not g:
            raise ScoreTableError("empty topic or segment", source=str(path), line=line)
        if out.get(t, g) != g:
            raise ScoreTableError(
                f"topic {t!r} is in two segments ({out[t]!r} and {g!r})",
                source=str(path),
                line=line,
            )
        out[t] = g
    return out


def read_collections(folder: str | os.PathLike[str], **options: Any) -> ScoreTable:
    """Read a folder holding one folder per collection into one table.

    Parameters
    ----------
    folder
        The folder; each of its sub-folders (hidden ones left out) holds the score
        files of one collection, read with :func:`bayes_ir.read_scores` (a ``qrels``
        file in the sub-folder is used for its runs).
    **options
        Passed on to :func:`bayes_ir.read_scores` (``format``, ``measure``,
        ``missing``...).

    Returns
    -------
    ScoreTable
        The ``collection`` column holds each sub-folder's name.
    """
    from bayes_ir.readers import read_scores

    root = Path(folder)
    if not root.is_dir():
        raise ScoreTableError("not a folder", source=str(root))
    subs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if not subs:
        raise ScoreTableError("holds no folder (one folder per collection)", source=str(root))
    tables = []
    for sub in (root / name for name in natural_sorted([p.name for p in subs])):
        qrels = [p for p in sub.iterdir() if p.is_file() and "qrels" in p.name.lower()]
        opts = dict(options)
        if len(qrels) == 1 and "qrels" not in opts:
            opts["qrels"] = qrels[0]
        tables.append(read_scores(sub, collection=sub.name, **opts))
    return concat(tables, source=str(root))
