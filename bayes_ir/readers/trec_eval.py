"""``trec_eval -q`` output: ``measure  topic  value`` lines, one or many runs per file.

``trec_eval -q`` prints, for one run, every per-query line and then the summary lines
whose topic field is ``all`` (among them ``runid  all  NAME``). Files that hold several
runs are concatenations of such blocks: a per-query line that follows an ``all`` line
starts the next run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.measures import (
    COUNT_MEASURES,
    TREC_EVAL_ONLY,
    from_trec_eval_name,
    is_measure_name,
    parse_measure,
)
from bayes_ir.readers._io import head_lines, parse_float, read_text, split_lines
from bayes_ir.table import DEFAULT_COLLECTION, Missing, ScoreTable

#: trec_eval names that appear only in summary rows or are not numbers.
_NON_SCORES = frozenset({"runid", "relstring"})


def looks_trec_eval(path: Path) -> bool:
    """Return True when the first lines have 3 fields ``measure topic value``."""
    lines = head_lines(path, 5)
    if not lines:
        return False
    for line in lines:
        fields = line.split()
        if fields and fields[0] in _NON_SCORES:  # runid, relstring (-m all_trec): text
            continue
        if len(fields) != 3:
            return False
        try:
            float(fields[2])
        except ValueError:
            return False
    return any(line.split()[0] in _NON_SCORES or is_measure_name(line.split()[0]) for line in lines)


def _blocks(rows: list[tuple[int, list[str]]]) -> list[list[tuple[int, list[str]]]]:
    """Split the lines into runs: a per-query line after an ``all`` line starts a new run."""
    blocks: list[list[tuple[int, list[str]]]] = [[]]
    seen_all = False
    for number, fields in rows:
        is_all = len(fields) == 3 and fields[1] == "all"
        if seen_all and not is_all:
            blocks.append([])
            seen_all = False
        blocks[-1].append((number, fields))
        seen_all = seen_all or is_all
    return [b for b in blocks if b]


def read_trec_eval(
    path: Path,
    *,
    measure: str | list[str] | None = None,
    collection: str | None = None,
    missing: Missing = "error",
    check_range: bool = True,
    system: str | None = None,
) -> ScoreTable:
    """Read ``trec_eval -q`` output (one or many runs, any measures).

    Parameters
    ----------
    path
        Output of ``trec_eval -q qrels run`` (optionally gzipped); several runs' outputs
        may be concatenated in one file.
    measure
        Keep only this measure (or these), named the ``trec_eval`` way (``ndcg_cut_10``)
        or the ``ir_measures`` way (``nDCG@10``). ``None`` keeps every per-query score
        except the document counts (``num_ret``, ``num_rel``, ``num_rel_ret``), which are
        kept only when asked for.
    collection
        Collection name (default ``"default"``).
    missing, check_range
        See :meth:`~bayes_ir.table.ScoreTable.from_frame`.
    system
        Name of the run when the file has no ``runid`` line (default: the file name
        without its extension; ``name#2``, ``name#3``, ... for further runs).

    Returns
    -------
    ScoreTable
        Measures are stored under their ``ir_measures`` names where one exists
        (``map`` -> ``AP``, ``P_10`` -> ``P@10``, ``ndcg_cut_10`` -> ``nDCG@10``).

    Notes
    -----
    Rows whose topic is ``all`` are summaries and are ignored. ``trec_eval`` without
    ``-c`` prints no line for a query the run did not retrieve: such cells are missing
    (see ``missing``).
    """
    path = Path(path)
    source = str(path)
    rows = split_lines(read_text(path))
    wanted = _wanted(measure)
    records: list[tuple[str, str, str, str]] = []
    lines: list[int] = []
    stem = system or path.name.split(".")[0]
    blocks = _blocks(rows)
    names_seen: set[str] = set()
    for k, block in enumerate(blocks, 1):
        runid = None
        block_records = []
        for number, fields in block:
            if fields[0] in _NON_SCORES and len(fields) != 3:  # relstring of no document
                continue
            if len(fields) != 3:
                raise ScoreTableError(
                    f"expected 3 fields 'measure topic value', found {len(fields)}",
                    source=source,
                    line=number,
                )
            name, topic, value = fields
            if topic == "all":
                if name == "runid":
                    runid = value
                continue
            if name in _NON_SCORES:
                continue
            meas = from_trec_eval_name(name)
            if wanted is None and meas in COUNT_MEASURES:
                continue
            if wanted is not None and meas not in wanted and name not in wanted:
                continue
            parse_float(value, what=f"{name} value", source=source, line=number)
            block_records.append((number, meas, topic, value))
        run_name = runid or (stem if len(blocks) == 1 else f"{stem}#{k}")
        if run_name in names_seen:
            raise ScoreTableError(
                f"run {run_name!r} appears twice in the file", source=source, line=block[0][0]
            )
        names_seen.add(run_name)
        for number, meas, topic, value in block_records:
            records.append((run_name, meas, topic, value))
            lines.append(number)
    if not records:
        what = f"measure {measure!r}" if measure is not None else "per-query scores"
        have = sorted({from_trec_eval_name(f[0]) for _, f in rows if len(f) == 3})
        raise ScoreTableError(
            f"no {what} found (have: {', '.join(have[:12]) or 'nothing'})", source=source
        )
    frame = pd.DataFrame(records, columns=["system", "measure", "topic", "score"])
    return ScoreTable.from_frame(
        frame,
        collection=collection or DEFAULT_COLLECTION,
        missing=missing,
        source=source,
        check_range=check_range,
        lines=np.asarray(lines),
    )


def _wanted(measure: str | list[str] | None) -> set[str] | None:
    """Names to keep: the given strings and their ir_measures translations."""
    if measure is None:
        return None
    names = [measure] if isinstance(measure, str) else list(measure)
    out: set[str] = set()
    for name in names:
        out.add(name)
        out.add(from_trec_eval_name(name))
        if from_trec_eval_name(name) == name and name not in TREC_EVAL_ONLY:
            out.add(str(parse_measure(name)))  # MeasureError for a string nobody knows
    return out
