"""Relevance judgments (qrels) in every form an IR user holds them.

A TREC qrels file (``qid iteration docid grade``), a ranx ``Qrels``, the namedtuples of
``ir_datasets`` (``TrecQrel(query_id, doc_id, relevance, iteration)``, e.g. from
``dataset.qrels_iter()``) or of ``ir_measures`` (``Qrel``), a ``{qid: {docid: grade}}``
dict, or a DataFrame with ``query_id, doc_id, relevance`` (``ir_measures``) or
``qid, docno, label`` (PyTerrier) columns. ranx and ir_datasets are never imported:
their objects are recognised by shape and by ``type(obj).__module__``.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import head_lines, is_int, parse_int, read_text, split_lines

Judgments = dict[str, dict[str, int]]

#: Column names of a qrels DataFrame: ir_measures' and PyTerrier's.
_FRAME_COLUMNS = (("query_id", "doc_id", "relevance"), ("qid", "docno", "label"))


def looks_qrels(path: Path) -> bool:
    """Return True when the first lines look like TREC qrels (``qid iter docid grade``)."""
    lines = head_lines(path, 5)
    return bool(lines) and all(
        len(f) == 4 and is_int(f[3]) for f in (line.split() for line in lines)
    )


def read_qrels(path: Path) -> Judgments:
    """Parse a TREC qrels file (``qid iteration docid grade``; grades must be integers)."""
    path = Path(path)
    source = str(path)
    triples = []
    for number, f in split_lines(read_text(path)):
        if len(f) != 4:
            raise ScoreTableError(
                f"a qrels line has 4 fields 'qid iteration docid grade', found {len(f)}",
                source=source,
                line=number,
            )
        qid, _, docid, grade = f
        g = parse_int(grade, what="relevance grade", source=source, line=number)
        triples.append((qid, docid, g, number))
    return _judgments(triples, source=source)


def is_qrels_object(obj: object) -> bool:
    """Tell whether ``obj`` is in-memory qrels (not a file name nor a list of file names)."""
    if isinstance(obj, str | PathLike):
        return False
    if _module(obj).startswith("ranx") and type(obj).__name__ == "Qrels":
        return True
    if isinstance(obj, pd.DataFrame):  # without the columns: load_qrels names them
        return True
    if isinstance(obj, Mapping):  # {} too: no judgments, refused by load_qrels
        return all(isinstance(v, Mapping) for v in obj.values())
    if isinstance(obj, Iterable):  # a list (not an iterator: peeking would consume it)
        return _is_qrel_tuple(next(iter(obj), None)) if iter(obj) is not obj else True
    return False


def load_qrels(qrels: object) -> tuple[Judgments, str]:
    """Return ``{qid: {docid: grade}}`` and a label naming where the judgments came from.

    Parameters
    ----------
    qrels
        A qrels file, a ranx ``Qrels``, an iterable of ``TrecQrel``/``Qrel``
        namedtuples, a dict of dicts, or a qrels DataFrame (see the module docs).

    Raises
    ------
    ScoreTableError
        A grade that is not an integer, a document judged twice with different grades,
        or an object that is none of the above (naming its type).
    """
    if isinstance(qrels, str | PathLike):
        return read_qrels(Path(qrels)), str(qrels)
    if _module(qrels).startswith("ranx") and type(qrels).__name__ == "Qrels":
        ranx: Any = qrels  # duck-typed: ranx is never imported
        label = f"<ranx Qrels {ranx.name!r}>" if getattr(ranx, "name", None) else "<ranx Qrels>"
        raw = ranx.to_dict()
        return _judgments(_dict_triples(raw), source=label), label
    if isinstance(qrels, pd.DataFrame):
        cols = next((c for c in _FRAME_COLUMNS if set(c) <= set(qrels.columns)), None)
        if cols is None:
            raise ScoreTableError(
                f"a qrels DataFrame needs the columns query_id, doc_id, relevance (or qid, "
                f"docno, label); got {list(qrels.columns)}",
                source="<qrels DataFrame>",
            )
        rows = zip(*(qrels[c] for c in cols), strict=True)
        triples = [(q, d, g, i) for i, (q, d, g) in enumerate(rows, 1)]
        return _judgments(triples, source="<qrels DataFrame>"), "<qrels DataFrame>"
    if isinstance(qrels, Mapping):
        if not all(isinstance(v, Mapping) for v in qrels.values()):
            raise ScoreTableError(
                "qrels given as a dict must map each query id to {doc_id: grade}",
                source="<qrels dict>",
            )
        return _judgments(_dict_triples(qrels), source="<qrels dict>"), "<qrels dict>"
    if isinstance(qrels, Iterable):
        items = list(qrels)
        label = _tuple_label(items[0] if items else None)
        triples = []
        for i, item in enumerate(items, 1):
            if not _is_qrel_tuple(item):
                raise ScoreTableError(
                    f"item {i} is {type(item).__name__}, not a qrel with query_id, doc_id "
                    "and relevance (such as ir_datasets' TrecQrel)",
                    source=label,
                )
            triples.append((item.query_id, item.doc_id, item.relevance, i))
        return _judgments(triples, source=label), label
    raise ScoreTableError(
        f"qrels= got {type(qrels).__name__}: pass a qrels file, a ranx Qrels, ir_datasets "
        "qrels (dataset.qrels_iter()), a {qid: {docid: grade}} dict or a DataFrame"
    )


def _module(obj: object) -> str:
    return type(obj).__module__ or ""


def _is_qrel_tuple(item: object) -> bool:
    return all(hasattr(item, f) for f in ("query_id", "doc_id", "relevance")) and not isinstance(
        item, str
    )


def _grade(grade: object) -> int | None:
    """Return an integer grade from an int, an integral float or a numeric string; else ``None``."""
    if isinstance(grade, bool):
        return None
    if isinstance(grade, numbers.Integral):
        return int(grade)
    if isinstance(grade, numbers.Real) and float(grade).is_integer():
        return int(float(grade))
    if isinstance(grade, str) and is_int(grade.strip()):
        return int(grade)
    return None


def _tuple_label(item: object) -> str:
    module = _module(item).split(".")[0]
    return f"<{module} qrels>" if module in ("ir_datasets", "ir_measures") else "<qrels>"


def _dict_triples(raw: Mapping) -> list[tuple[object, object, object, int]]:
    return [
        (q, d, g, i)
        for i, (q, d, g) in enumerate(
            ((q, d, g) for q, docs in raw.items() for d, g in docs.items()), 1
        )
    ]


def _judgments(triples: Iterable[tuple[object, object, object, int]], *, source: str) -> Judgments:
    """Check the grades and repeated judgments; ``i`` of each triple is its line or item."""
    item = "line" if not source.startswith("<") else "item"
    out: Judgments = {}
    for qid, docid, grade, i in triples:
        g = _grade(grade)
        if g is None:
            raise ScoreTableError(
                f"{item} {i}: relevance grade {grade!r} of query {qid!r}, document {docid!r} "
                "is not an integer",
                source=source,
            )
        q, d = str(qid), str(docid)
        judged = out.setdefault(q, {})
        if d in judged and judged[d] != g:
            raise ScoreTableError(
                f"document {d!r} of query {q!r} is judged twice with different grades "
                f"({judged[d]} and {g})",
                source=source,
                line=i if item == "line" else None,
            )
        judged[d] = g
    if not out:
        raise ScoreTableError("the qrels hold no judgments", source=source)
    return out
