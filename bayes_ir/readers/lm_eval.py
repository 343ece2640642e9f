"""lm-evaluation-harness per-sample logs: ``samples_<task>_<date>.jsonl`` from ``--log_samples``.

``lm_eval --output_path OUT --log_samples`` writes, for each model, a folder
``OUT/<model_name_sanitized>/`` holding ``results_<date>.json`` and one
``samples_<task>_<date>.jsonl`` per task (EleutherAI/lm-evaluation-harness,
``lm_eval/loggers/evaluation_tracker.py``, ``save_results_samples``; read here as the 0.4
releases write it, each sample with its ``metrics`` list). Each line is one document of
the task::

    {"doc_id": 0, "doc": {...}, "target": "...", "arguments": {...}, "resps": [...],
     "filtered_resps": [...], "filter": "none", "metrics": ["acc", "acc_norm"],
     "doc_hash": "...", "prompt_hash": "...", "target_hash": "...",
     "acc": 1.0, "acc_norm": 0.0}

(``lm_eval/evaluator.py``: the keys named in ``metrics`` hold the per-document values).
A task with several filters (``strict-match``, ``flexible-extract``) has one line per
document and filter. Read as: system = the model's folder name, collection = the task,
topic = ``doc_id``, measure = the metric (``metric,filter`` for a filter other than
``none``, as the harness names its results), score = its value. Metrics whose
per-document value is not a number (corpus-level ``bleu``, ``ter``: the pair of
reference and prediction) are left out, with a note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import head_text
from bayes_ir.readers._json import (
    finite_number,
    json_lines,
    log_table,
    name_field,
    shown,
    system_names,
)
from bayes_ir.table import Missing, ScoreTable

#: ``samples_<task>_<date>.jsonl``: the date is ``datetime.now().isoformat()`` with ``-`` for ``:``.
_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl(\.gz)?$")


def looks_lm_eval(path: Path) -> bool:
    """Tell a ``--log_samples`` file: its first line is a JSON object starting ``{"doc_id":``."""
    try:
        head = head_text(path).lstrip()
    except ScoreTableError:
        return False
    return head.startswith('{"doc_id":')


def task_of(path: Path) -> str:
    """Return the task of ``samples_<task>_<date>.jsonl`` (else the file name's stem)."""
    match = _NAME.match(path.name)
    return match["task"] if match else path.name.split(".")[0]


def _rows(path: Path, system: str, collection: str, skipped: set[str]) -> list[tuple]:
    rows = []
    source = str(path)
    for line, obj in json_lines(path):
        if not isinstance(obj, dict) or "doc_id" not in obj:
            raise ScoreTableError(
                "not an lm-evaluation-harness sample (no doc_id)", source=source, line=line
            )
        doc, said = name_field(obj["doc_id"]), shown(obj["doc_id"])
        if doc is None:
            raise ScoreTableError(
                f"doc_id {shown(obj['doc_id'])} is not a document id (a number or a string)",
                source=source,
                line=line,
            )
        names = obj.get("metrics")
        if not isinstance(names, list):
            raise ScoreTableError(
                "the sample has no 'metrics' list naming its per-document values (written "
                "by the lm-evaluation-harness 0.4 releases with --log_samples)",
                source=source,
                line=line,
            )
        flt = obj.get("filter", "none")
        if not isinstance(flt, str):
            raise ScoreTableError(
                f"filter {shown(flt)} of doc_id {said} is not a filter name",
                source=source,
                line=line,
            )
        for name in names:
            if not isinstance(name, str):
                raise ScoreTableError(
                    f"the 'metrics' list of doc_id {said} holds {shown(name)}, not a metric name",
                    source=source,
                    line=line,
                )
            value = finite_number(obj.get(name))
            if value is None:
                if name not in obj or isinstance(obj[name], list | dict | tuple):
                    skipped.add(name)
                    continue
                raise ScoreTableError(
                    f"metric {name!r} of doc_id {said} is {shown(obj[name])}, not a finite number",
                    source=source,
                    line=line,
                )
            measure = name if flt == "none" else f"{name},{flt}"
            rows.append((system, collection, doc, measure, value, line, source))
    return rows


def read_lm_eval(
    paths: Sequence[Path],
    *,
    measure: str | Sequence[str] | None = None,
    collection: str | None = None,
    systems: Sequence[str] | None = None,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Per-document scores from lm-evaluation-harness ``samples_*.jsonl`` files.

    Parameters
    ----------
    paths
        One ``samples_<task>_<date>.jsonl`` file (or ``.jsonl.gz``) per model and task,
        each in its model's output folder (``OUT/<model>/samples_...``).
    measure
        The metric to keep (``acc``, ``exact_match,strict-match``, ...); required when
        the files hold several.
    collection
        Collection name (default: the task of each file name).
    systems
        System name of each file (default: its folder's name, the model).
    missing, check_range
        See :meth:`~bayes_ir.table.ScoreTable.from_frame`.

    Raises
    ------
    ScoreTableError
        A line that is not JSON or not a sample (naming file and line), a metric value
        that is not a number, a document scored twice for one model (two files of one
        model and task), several metrics without ``measure=``.
    """
    paths = [Path(p) for p in paths]
    names = system_names(systems, paths) or [p.resolve().parent.name for p in paths]
    skipped: set[str] = set()
    rows = []
    for path, system in zip(paths, names, strict=True):
        rows += _rows(path, system, collection or task_of(path), skipped)
    frame = pd.DataFrame(
        rows, columns=["system", "collection", "topic", "measure", "score", "line", "file"]
    )
    notes = [f"{len(paths)} lm-evaluation-harness sample file(s); topics are doc_id"]
    if skipped:
        notes.append(f"left out metrics without per-document numbers: {', '.join(sorted(skipped))}")
    return log_table(
        frame.drop(columns=["line", "file"]),
        paths=paths,
        what="lm-evaluation-harness sample files",
        measure=measure,
        missing=missing,
        check_range=check_range,
        notes=notes,
        lines=frame["line"].to_numpy(),
        sources=frame["file"].to_numpy(),
    )


read_lm_eval.multi_file = True  # type: ignore[attr-defined]
