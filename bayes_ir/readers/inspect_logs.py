"""Inspect AI evaluation logs: ``.json`` logs and ``.eval`` archives, one per model and task.

Inspect (UKGovernmentBEIS/inspect_ai) writes one log per task and model. Its JSON form is
``EvalLog`` (``src/inspect_ai/log/_log.py``, format ``version`` 2)::

    {"version": 2, "status": "success",
     "eval": {"task": "gpqa", "model": "openai/gpt-4o", "dataset": {...}, ...},
     "results": {...}, "stats": {...},
     "samples": [{"id": 1, "epoch": 1, "scores": {"choice": {"value": "C", ...}}, ...}],
     "reductions": [{"scorer": "choice", "reducer": "mean",
                     "samples": [{"sample_id": 1, "value": 1.0}, ...]}]}

and its ``.eval`` form is a zip archive (``src/inspect_ai/log/_recorders/eval.py``) of
``header.json`` (the same fields but the samples), ``reductions.json``,
``summaries.json`` and ``samples/<id>_epoch_<n>.json``. Read as: system =
``eval.model``, collection = ``eval.task``, topic = the sample id, measure = the scorer's
name (``scorer/key`` for a scorer whose value is a dictionary), score = the value
reduced over the epochs by Inspect's own reducer (``reductions``) when the log has it,
else the mean over the epochs of each sample's value (with a note). Values convert as
Inspect's ``value_to_float`` does: ``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0, ``yes``/``true``
1, ``no``/``false`` 0, numbers and numeric strings as they are; anything else (a list,
an unknown word) is refused, not read as 0. A score that is NaN (``Score.unscored``) is
a missing cell. Logs whose ``status`` is not ``success`` (``started``, ``error``,
``cancelled``) are refused: their samples are incomplete.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import check_input, head_text
from bayes_ir.readers._json import load_json, log_table, system_names
from bayes_ir.table import Missing, ScoreTable

#: Inspect's letter grades and their values (``inspect_ai.scorer._metric.value_to_float``).
GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def looks_inspect(path: Path) -> bool:
    """Tell an Inspect log: a ``.eval`` zip archive, or JSON opening with version and status."""
    if path.suffix.lower() == ".eval":
        try:
            with check_input(path).open("rb") as f:
                return f.read(4) == b"PK\x03\x04"
        except (OSError, ScoreTableError):
            return False
    try:
        head = head_text(path)
    except ScoreTableError:
        return False
    compact = "".join(head[:400].split())
    return compact.startswith('{"version":') and '"status":' in compact[:60]


def value_to_float(value: Any, *, where: str, source: str) -> float:
    """Convert an Inspect score value to a number, as Inspect does, refusing what it cannot."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value in GRADES:
            return GRADES[value]
        word = value.strip().lower()
        if word in _WORDS:
            return _WORDS[word]
        try:
            return float(word)
        except ValueError:
            pass
    raise ScoreTableError(
        f"{where}: score value {value!r} is not a number, a grade (C, P, I, N) or yes/no",
        source=source,
    )


def _scalars(name: str, value: Any, *, where: str, source: str) -> list[tuple[str, float]]:
    """``(measure, number)`` of one score: one for a scalar, one per key for a dictionary."""
    if isinstance(value, dict):
        return [
            (f"{name}/{key}", value_to_float(v, where=f"{where}, key {key!r}", source=source))
            for key, v in value.items()
            if v is not None
        ]
    return [(name, value_to_float(value, where=where, source=source))]


def _load(path: Path) -> tuple[dict, list[dict] | None, list[dict]]:
    """Return the log's header, its reductions (or ``None``) and its sample summaries."""
    if path.suffix.lower() != ".eval":
        log = load_json(path)
        if not isinstance(log, dict) or "eval" not in log:
            raise ScoreTableError("not an Inspect eval log (no 'eval' field)", source=str(path))
        reductions = log.get("reductions")
        if reductions is None and isinstance(log.get("results"), dict):
            reductions = log["results"].get("sample_reductions")  # logs before 0.3.47
        return log, reductions, list(log.get("samples") or [])
    try:
        with zipfile.ZipFile(check_input(path)) as archive:
            names = set(archive.namelist())

            def member(name: str) -> Any:
                try:
                    return json.loads(archive.read(name).decode("utf-8"))
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    raise ScoreTableError(
                        f"{name} in the archive is not JSON ({exc})", source=str(path)
                    ) from None

            if "header.json" not in names:
                raise ScoreTableError(
                    "an .eval archive without header.json: not a complete Inspect log",
                    source=str(path),
                )
            header = member("header.json")
            reductions = member("reductions.json") if "reductions.json" in names else None
            if "summaries.json" in names:
                samples = member("summaries.json")
            else:
                samples = [member(n) for n in sorted(names) if n.startswith("samples/")]
    except zipfile.BadZipFile as exc:
        raise ScoreTableError(f"not a readable .eval archive ({exc})", source=str(path)) from None
    return header, reductions, samples


def _log_rows(
    path: Path, system: str | None, collection: str | None
) -> tuple[list[tuple[str, str, str, str, float]], list[str]]:
    header, reductions, samples = _load(path)
    source = str(path)
    status = header.get("status")
    if status != "success":
        raise ScoreTableError(
            f"the eval log has status {status!r}, not 'success': its samples are incomplete "
            "(rerun or retry the eval, e.g. inspect eval-retry)",
            source=source,
        )
    spec = header.get("eval") or {}
    system = system or str(spec.get("model", "")) or path.stem
    task = collection or str(spec.get("task", "")) or path.stem
    rows: list[tuple[str, str, str, str, float]] = []
    notes: list[str] = []
    if reductions:
        for block in reductions:
            scorer = str(block.get("scorer"))
            for item in block.get("samples") or []:
                where = f"sample {item.get('sample_id')!r}, scorer {scorer!r}"
                for measure, value in _scalars(scorer, item.get("value"), where=where,
                                               source=source):  # fmt: skip
                    if not math.isnan(value):  # unscored: a missing cell
                        rows.append((system, task, str(item.get("sample_id")), measure, value))
        return rows, notes
    epochs: dict[tuple[str, str], list[float]] = {}
    for sample in samples:
        for scorer, score in (sample.get("scores") or {}).items():
            where = f"sample {sample.get('id')!r} epoch {sample.get('epoch')}, scorer {scorer!r}"
            raw = score.get("value") if isinstance(score, dict) else score
            for measure, number in _scalars(str(scorer), raw, where=where, source=source):
                epochs.setdefault((str(sample.get("id")), measure), []).append(number)
    if any(len(v) > 1 for v in epochs.values()):
        notes.append(f"{path.name}: scores averaged over the epochs of each sample")
    for (sample_id, measure), values in epochs.items():
        known = [v for v in values if not math.isnan(v)]
        if known:
            rows.append((system, task, sample_id, measure, sum(known) / len(known)))
    return rows, notes


def read_inspect(
    paths: Sequence[Path],
    *,
    measure: str | Sequence[str] | None = None,
    collection: str | None = None,
    systems: Sequence[str] | None = None,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Per-sample scores from Inspect AI eval logs (``.json`` or ``.eval``).

    Parameters
    ----------
    paths
        One log per model and task.
    measure
        The scorer to keep (``choice``, ``match``, ``model_graded_qa``, or
        ``scorer/key`` for a dictionary-valued scorer); required when the logs hold
        several.
    collection
        Collection name (default: each log's task).
    systems
        System name of each log (default: its ``eval.model``).
    missing, check_range
        See :meth:`~bayes_ir.table.ScoreTable.from_frame`.

    Raises
    ------
    ScoreTableError
        A log that is not complete (status other than ``success``), not JSON or not a
        zip archive, a score value that is not a number or a grade (naming the sample and
        scorer), a sample scored twice for one model (two logs of one model and task),
        several scorers without ``measure=``.
    """
    paths = [Path(p) for p in paths]
    names = system_names(systems, paths)
    rows, notes = [], [f"{len(paths)} Inspect eval log(s); topics are sample ids"]
    for i, path in enumerate(paths):
        more, said = _log_rows(path, None if names is None else names[i], collection)
        rows += more
        notes += said
    frame = pd.DataFrame(rows, columns=["system", "collection", "topic", "measure", "score"])
    return log_table(frame, paths=paths, what="Inspect eval logs", measure=measure,
                     missing=missing, check_range=check_range, notes=notes)  # fmt: skip


read_inspect.multi_file = True  # type: ignore[attr-defined]
