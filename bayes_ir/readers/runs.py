"""TREC run files scored against qrels with ``ir_measures``, for any measure string.

A run line is ``qid Q0 docid rank score tag`` (6 fields, the TREC format); the
``qid docid rank score`` (4 fields, Ranger's files) and ``qid Q0 docid rank score``
(5 fields) variants are accepted too. A qrels line is ``qid iteration docid grade``
with an integer grade.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Literal

import ir_measures
import pandas as pd

from bayes_ir.errors import DataWarning, ScoreTableError
from bayes_ir.measures import canonical_measure, parse_measure
from bayes_ir.readers._io import head_lines, is_int, parse_float, parse_int, read_text, split_lines
from bayes_ir.readers.qrels import Judgments, is_qrels_object, load_qrels
from bayes_ir.table import DEFAULT_COLLECTION, ScoreTable
from bayes_ir.table_checks import Missing, natural_sorted

Unretrieved = Literal["zero", "missing"]
#: A qrels file, several, ``{collection: file}``, or in-memory qrels (see :mod:`.qrels`).
QrelsArg = (
    str | PathLike[str] | Sequence[str | PathLike[str]] | Mapping[str, str | PathLike[str]] | object
)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def looks_run(path: Path) -> bool:
    """Return True when the first lines look like a TREC run (6, 5 or 4 fields) or MS MARCO's."""
    lines = head_lines(path, 5)
    if not lines:
        return False
    for line in lines:
        f = line.split()
        if len(f) in (5, 6):
            ok = is_int(f[3]) and _is_float(f[4])
        elif len(f) == 4:
            ok = is_int(f[2]) and _is_float(f[3]) and not is_int(f[1])
        elif len(f) == 3:  # MS MARCO: qid docid rank
            ok = is_int(f[2]) and int(f[2]) >= 1
        else:
            ok = False
        if not ok:
            return False
    return True


@dataclass(frozen=True)
class Run:
    """A parsed run: ``docs[qid][docid] = score`` and the run tag, if the lines had one."""

    docs: dict[str, dict[str, float]]
    tag: str | None
    #: MS MARCO's ``qid docid rank`` lines: the score is minus the rank.
    from_ranks: bool = False


def read_run(path: Path) -> Run:
    """Parse a TREC run file holding one run, raising :class:`ScoreTableError` naming the file.

    A file whose lines carry several run tags (6th field) is an error here; see
    :func:`read_run_tags`, which splits it, as :func:`read_runs` does.
    """
    parts = read_run_tags(path)
    if len(parts) > 1:
        raise ScoreTableError(
            f"the run file holds {len(parts)} runs (tags {_ids([r.tag or '' for r in parts], 5)}); "
            "read_scores splits them into systems, read_run reads one run",
            source=str(path),
        )
    return parts[0]


def read_run_tags(path: Path) -> list[Run]:
    """Parse a TREC run file into one :class:`Run` per run tag (6th field), in file order.

    Notes
    -----
    Ranks are checked (non-negative integers) but, as in ``trec_eval``, documents are
    ordered by score when measures are computed. Lines without a tag (4 or 5 fields)
    belong to the run of tag ``None``; a file may not mix them with tagged lines. MS
    MARCO's run format, ``qid docid rank`` (3 fields, as pyserini's ``--output-format
    msmarco`` writes it), has no score: each document scores minus its rank.
    """
    path = Path(path)
    source = str(path)
    by_tag: dict[str | None, dict[str, dict[str, float]]] = {}
    ranks_only = None
    for number, f in split_lines(read_text(path)):
        tag = None
        if ranks_only is None:
            ranks_only = len(f) == 3
        if (len(f) == 3) != ranks_only:
            raise ScoreTableError(
                f"MS MARCO lines 'qid docid rank' (3 fields) and TREC lines ({len(f)} fields) "
                "are mixed",
                source=source,
                line=number,
            )
        if len(f) == 3:
            qid, docid, rank = f
            score = f"-{rank}"
        elif len(f) == 6:
            qid, _, docid, rank, score, tag = f
        elif len(f) == 5:
            qid, _, docid, rank, score = f
        elif len(f) == 4:
            qid, docid, rank, score = f
        else:
            raise ScoreTableError(
                f"a run line has 6 fields 'qid Q0 docid rank score tag' (or 4: "
                f"'qid docid rank score'; or MS MARCO's 3: 'qid docid rank'), found {len(f)}",
                source=source,
                line=number,
            )
        r = parse_int(rank, what="rank", source=source, line=number)
        if r < 0:
            raise ScoreTableError(f"rank {rank!r} is negative", source=source, line=number)
        value = parse_float(score, what="score", source=source, line=number)
        if tag not in by_tag and (None in by_tag or (by_tag and tag is None)):
            raise ScoreTableError(
                "lines with and without a run tag (6th field) are mixed", source=source, line=number
            )
        ranked = by_tag.setdefault(tag, {}).setdefault(qid, {})
        if docid in ranked:
            raise ScoreTableError(
                f"document {docid!r} is retrieved twice for query {qid!r}"
                + (f" in run {tag!r}" if len(by_tag) > 1 else ""),
                source=source,
                line=number,
            )
        ranked[docid] = value
    if not by_tag:
        raise ScoreTableError("the run is empty", source=source)
    return [Run(docs=docs, tag=tag, from_ranks=bool(ranks_only)) for tag, docs in by_tag.items()]


_QRELS_AFFIX = re.compile(r"(^qrels[_.-]?|[_.-]?qrels$)", re.IGNORECASE)
_RUN_AFFIX = re.compile(r"([_.-]?top\d+$|[_.-]?run$|^run[_.-]?)", re.IGNORECASE)


def _collection_of_qrels(path: Path) -> str:
    stem = path.name.split(".")[0]
    return _QRELS_AFFIX.sub("", stem)


def _qrels_by_collection(qrels: QrelsArg, collection: str | None) -> dict[str, object]:
    """Return ``{collection: qrels}``, each a file or in-memory qrels (:func:`load_qrels`)."""
    if isinstance(qrels, Iterator):
        qrels = list(qrels)  # ir_datasets' qrels_iter(): read once
    if is_qrels_object(qrels):
        return {collection or DEFAULT_COLLECTION: qrels}
    if isinstance(qrels, Mapping):
        return {str(k): v if is_qrels_object(v) else Path(v) for k, v in qrels.items()}
    if isinstance(qrels, str | PathLike):
        path = Path(qrels)
        return {collection or _collection_of_qrels(path) or DEFAULT_COLLECTION: path}
    if not isinstance(qrels, Iterable):
        return {collection or DEFAULT_COLLECTION: qrels}  # load_qrels names the bad type
    paths = [Path(q) for q in qrels]
    if len(paths) == 1:
        return _qrels_by_collection(paths[0], collection)
    out: dict[str, object] = {}
    for path in paths:
        name = _collection_of_qrels(path) or path.stem
        if name in out:
            raise ScoreTableError(
                f"two qrels files name collection {name!r}: {out[name]} and {path}; "
                "pass qrels as a mapping {collection: path}"
            )
        out[name] = path
    return out


def judgments_of(qrels: object, collection: str, notes: list[str]) -> tuple[Judgments, str]:
    """Load one collection's qrels; note the queries without a relevant document.

    Returns the judgments and the label naming where they came from (file or object).
    """
    judged, label = load_qrels(qrels)
    no_rel = [q for q, d in judged.items() if max(d.values()) <= 0]
    if no_rel:
        notes.append(
            f"collection {collection!r}: {_queries(no_rel, 'judged')} no relevant "
            f"document ({_ids(no_rel)}); most measures score them 0"
        )
    return judged, label


def parse_measures(measure: str | Sequence[str] | None, *, what: str) -> list:
    """Parse the ``ir_measures`` measures to compute; ``what`` names the input in the error."""
    if measure is None:
        raise ScoreTableError(
            f"{what} need a measure to compute: pass measure= (CLI: --measure), "
            "e.g. 'nDCG@10', 'AP', 'P@10'"
        )
    names = [measure] if isinstance(measure, str) else list(measure)
    return [parse_measure(canonical_measure(m)) for m in names]


def _match_collection(run: Path, names: Sequence[str]) -> str:
    if len(names) == 1:
        return names[0]
    text = str(run)
    hits = [n for n in names if n and n in run.name] or [n for n in names if n and n in text]
    if not hits:
        raise ScoreTableError(
            f"cannot tell which qrels belongs to this run: its path names none of the "
            f"collections {', '.join(names)}; pass qrels as a mapping or read one collection "
            "at a time",
            source=text,
        )
    return max(hits, key=len)


def _system_name(run: Path, tag: str | None, collection: str) -> str:
    if tag:
        return tag
    stem = run.name.split(".")[0]
    if collection and collection in stem:
        stem = stem.replace(collection, "")
    stem = _RUN_AFFIX.sub("", stem.strip("_.-")).strip("_.-")
    return stem or run.parent.name or run.name


def read_runs(
    paths: Sequence[Path],
    *,
    qrels: QrelsArg | None = None,
    measure: str | Sequence[str] | None = None,
    collection: str | None = None,
    systems: Sequence[str] | None = None,
    missing: Missing = "error",
    check_range: bool = True,
    unretrieved: Unretrieved = "zero",
) -> ScoreTable:
    """Score TREC runs against qrels with ``ir_measures`` and return per-topic scores.

    Parameters
    ----------
    paths
        Run files (optionally gzipped). A file whose lines carry several run tags (6th
        field, the ``runid``) holds several runs: each tag becomes a system, as
        ``trec_eval`` users expect; ``table.notes`` says so.
    qrels
        A qrels file, several (one per collection: the collection is the file name
        without ``_qrels`` and extensions, and each run goes to the collection its file
        name contains), or a mapping ``{collection: qrels_path}``.
    measure
        One ``ir_measures`` string or several: ``"nDCG@10"``, ``"AP(rel=2)"``,
        ``"P@10"``, ``"R@1000"``, ``"Judged@10"``; ``trec_eval`` names (``P_10``,
        ``ndcg_cut_10``) are translated.
    collection
        Collection name when there is one qrels file (default: from its file name).
    systems
        One name per run file (of one run each); by default the run tag (6th field; a
        note says so when it differs from the file name), else the file name without the
        collection name and ``_top10``-like suffixes, else the folder name. Two runs may
        not end up with the same name in one collection.
    missing, check_range
        See :meth:`~bayes_ir.table.ScoreTable.from_frame`.
    unretrieved
        Judged queries a run did not retrieve: ``"zero"`` (default) scores them 0, the
        ``trec_eval -c`` convention; ``"missing"`` leaves the cells missing. Either
        way ``table.notes`` lists them.

    Returns
    -------
    ScoreTable
        One row per (collection, measure, system, judged query). Queries retrieved but
        absent from the qrels cannot be scored: they are left out, listed in
        ``table.notes`` and reported by a :class:`~bayes_ir.errors.DataWarning`.

    Raises
    ------
    ScoreTableError
        Bad run lines (field count, rank, score), non-integer grades, duplicate
        documents, no qrels, a run with no query in common with its qrels (naming both
        files), two runs with one system name.
    MeasureError
        A measure string that ``ir_measures`` cannot parse.
    """
    if qrels is None:
        raise ScoreTableError("TREC runs need relevance judgments: pass qrels= (CLI: --qrels)")
    parsed = parse_measures(measure, what="TREC runs")
    paths = [Path(p) for p in paths]
    if systems is not None and len(systems) != len(paths):
        raise ScoreTableError(f"systems= has {len(systems)} names for {len(paths)} run files")
    by_coll = _qrels_by_collection(qrels, collection)
    judgments: dict[str, tuple[Judgments, str]] = {}
    rows: list[tuple[str, str, str, str, float]] = []
    notes: list[str] = []
    origin: dict[tuple[str, str], Path] = {}
    read: list[tuple[Path, str, list[Run]]] = []
    for path in paths:
        coll = _match_collection(path, list(by_coll))
        parts = read_run_tags(path)
        if systems is not None and len(parts) > 1:
            raise ScoreTableError(
                f"the file holds {len(parts)} runs (tags "
                f"{_ids([r.tag or '' for r in parts], 5)}) but systems= gives it one name; "
                "leave systems= out to name each run by its tag",
                source=str(path),
            )
        read.append((path, coll, parts))
    names = _run_names(read, systems, notes)
    for (path, coll, parts), run_names in zip(read, names, strict=True):
        if coll not in judgments:
            judgments[coll] = judgments_of(by_coll[coll], coll, notes)
        qrels_c, qrels_label = judgments[coll]
        for run, system in zip(parts, run_names, strict=True):
            key = (coll, system)
            if key in origin:
                raise ScoreTableError(
                    f"system {system!r} of collection {coll!r} comes from two run files "
                    f"({origin[key]} and {path}); pass systems= with one name per file "
                    "(CLI: rename one run's tag, the 6th field)",
                    source=str(path),
                )
            origin[key] = path
            rows.extend(
                score_run(
                    run, system, str(path), coll, qrels_c, qrels_label, parsed, unretrieved, notes
                )
            )
    if not rows:
        raise ScoreTableError(
            "no judged query was retrieved by any run", source=", ".join(map(str, paths))
        )
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    return ScoreTable.from_frame(
        frame,
        missing=missing,
        source=_describe(paths),
        check_range=check_range,
        notes=notes,
    )


read_runs.multi_file = True  # type: ignore[attr-defined]


def _run_names(
    read: list[tuple[Path, str, list[Run]]], systems: Sequence[str] | None, notes: list[str]
) -> list[list[str]]:
    """Return the system name of each run of each file (see :func:`read_runs`), with notes.

    Files of one run each that would share a name from their run tag (pyserini and
    Anserini tag every run ``Anserini``, PyTerrier ``pyterrier``) are named after their
    files instead, by the part of the path that tells them apart.
    """
    if systems is not None:
        return [[name] for name in systems]
    names = [[_system_name(path, run.tag, coll) for run in parts] for path, coll, parts in read]
    groups: dict[tuple[str, str], list[int]] = {}
    for i, ((_, coll, parts), found) in enumerate(zip(read, names, strict=True)):
        if len(parts) == 1 and parts[0].tag and found[0] == parts[0].tag:
            groups.setdefault((coll, found[0]), []).append(i)
    for (_, tag), members in groups.items():
        if len(members) < 2:
            continue
        paths = [read[i][0] for i in members]
        for i, name in zip(members, _distinct_names(paths), strict=True):
            names[i] = [name]
        shown = ", ".join(f"{names[i][0]!r} ({read[i][0]})" for i in members[:6])
        notes.append(
            f"run tag {tag!r} is on {len(members)} run files (pyserini and Anserini tag every "
            f"run 'Anserini', PyTerrier 'pyterrier'): systems named after their files: {shown}"
            + (", ..." if len(members) > 6 else "")
        )
    for (path, _, parts), found in zip(read, names, strict=True):
        for run, system in zip(parts, found, strict=True):
            _name_note(notes, path, run, system, len(parts))
    return names


def _distinct_names(paths: Sequence[Path]) -> list[str]:
    """Return the part of each path the others do not share (``run.bm25.txt`` -> ``bm25``).

    The longest common prefix and suffix, cut at a separator (``/ . _ -``), are removed;
    when that leaves an empty or a repeated name, the whole paths are the names.
    """
    texts = [str(p) for p in paths]
    seps = "/._- "
    prefix = os.path.commonprefix(texts)
    prefix = prefix[: max(prefix.rfind(c) for c in seps) + 1]
    suffix = os.path.commonprefix([t[::-1] for t in texts])[::-1]
    cut = [suffix.find(c) for c in seps if c in suffix]
    suffix = suffix[min(cut) :] if cut else ""
    names = [t[len(prefix) : len(t) - len(suffix)] for t in texts]
    if any(not n for n in names) or len(set(names)) != len(names):
        return texts
    return names


def _name_note(notes: list[str], path: Path, run: Run, system: str, n_runs: int) -> None:
    """Say where a system's name came from when it is not plainly the file's name."""
    if run.from_ranks:
        notes.append(
            f"{path}: MS MARCO run format (qid docid rank): documents ordered by their rank"
        )
    tag = run.tag
    stem = path.name.split(".")[0]
    if tag and system != tag:
        return  # named after the file: the note on the shared tag says so
    if n_runs > 1:
        notes.append(f"{path}: run tag {tag!r} read as system {system!r} (one of {n_runs} runs)")
    elif tag and system == tag and tag != stem:
        notes.append(f"{path}: system named {system!r} after the run tag (6th field), not the file")


def score_run(
    run: Run,
    system: str,
    path: str,
    coll: str,
    qrels_c: Judgments,
    qrels_path: str,
    parsed: list,
    unretrieved: Unretrieved,
    notes: list[str],
) -> list[tuple[str, str, str, str, float]]:
    """Rows ``(collection, measure, system, topic, score)`` of one run, with its notes.

    ``path`` and ``qrels_path`` name the run and the qrels in messages (a file, or a
    label such as ``<ranx Run 'bm25'>``); ``unretrieved`` is as in :func:`read_runs`.

    Raises
    ------
    ScoreTableError
        When the run and the qrels have no query in common (naming both): every score
        would be 0 (or missing), a meaningless table; a bad ``unretrieved``.
    """
    if unretrieved not in ("zero", "missing"):
        raise ScoreTableError(f"unretrieved must be 'zero' or 'missing', got {unretrieved!r}")
    common = [q for q in run.docs if q in qrels_c]
    if not common:
        raise ScoreTableError(
            f"run {system!r} and the qrels {qrels_path} have no query in common (run queries "
            f"{_ids(list(run.docs), 3)}; judged queries {_ids(list(qrels_c), 3)}): "
            "is it the right qrels file?",
            source=str(path),
        )
    unjudged = [q for q in run.docs if q not in qrels_c]
    if unjudged:
        msg = (
            f"{path}: {_queries(unjudged, 'retrieved')} no judgments in {qrels_path} "
            f"and cannot be scored ({_ids(unjudged)})"
        )
        notes.append(msg)
        warnings.warn(msg, DataWarning, stacklevel=4)
    lost = [q for q in qrels_c if q not in run.docs]
    if lost:
        how = "scored 0 (trec_eval -c convention)" if unretrieved == "zero" else "left missing"
        notes.append(
            f"{path}: run {system!r} retrieved {len(common)} of {len(qrels_c)} judged queries; "
            f"it did not retrieve {len(lost)} judged "
            f"quer{'y' if len(lost) == 1 else 'ies'} ({_ids(lost)}); {how}"
        )
    run_judged = {q: run.docs[q] for q in common}
    got: dict[tuple[str, str], float] = {}
    try:
        for metric in ir_measures.iter_calc(parsed, qrels_c, run_judged):
            got[(str(metric.measure), str(metric.query_id))] = float(metric.value)
    except Exception as exc:  # providers raise assorted types for odd inputs
        raise ScoreTableError(
            f"ir_measures could not compute {', '.join(map(str, parsed))}: {exc}",
            source=str(path),
        ) from None
    rows = []
    for m in parsed:
        label = str(m)
        for q in qrels_c:
            if q not in run.docs:
                if unretrieved == "zero":
                    rows.append((coll, label, system, q, 0.0))
            elif (label, q) in got:
                rows.append((coll, label, system, q, got[(label, q)]))
    return rows


def _describe(paths: Sequence[Path]) -> str:
    if len(paths) <= 2:
        return ", ".join(str(p) for p in paths)
    return f"{paths[0]} and {len(paths) - 1} more files"


def _queries(ids: Sequence[str], adjective: str) -> str:
    """``"1 judged query has"`` or ``"3 judged queries have"``."""
    n = len(ids)
    return f"{n} {adjective} query has" if n == 1 else f"{n} {adjective} queries have"


def _ids(ids: Sequence[str], n: int = 8) -> str:
    shown = natural_sorted(ids)[:n]
    return ", ".join(shown) + (", ..." if len(ids) > n else "")
