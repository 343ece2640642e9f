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
else the mean over the epochs of each sample's value (with a note); with
``replicates=True`` each epoch is kept as the replicate ``epoch<n>``. Values convert as
Inspect's ``value_to_float`` does: ``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0, ``yes``/``true``
1, ``no``/``false`` 0, numbers and numeric strings as they are; anything else (a list,
an unknown word) is refused, not read as 0. A score that is NaN (``Score.unscored``) is
a missing cell. Logs whose ``status`` is not ``success`` (``started``, ``error``,
``cancelled``) are refused: their samples are incomplete; so is a log without a scored
sample, and one whose fields are not of the types Inspect writes (naming the field). A log
that names no model or task is named after its file, with a note. The members of an
``.eval`` archive are decoded as every input is (:func:`bayes_ir.files.decode`) and must
fit, uncompressed, in the memory limit before any is read.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.errors import ScoreTableError
from bayes_ir.files import decode
from bayes_ir.readers._io import check_input, head_text
from bayes_ir.readers._json import (
    as_dict,
    as_list,
    load_json,
    log_table,
    name_field,
    parse_json,
    shown,
    system_names,
)
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
        try:
            return float(value)
        except OverflowError:  # an integer beyond any float: not a score
            pass
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
        f"{where}: score value {shown(value)} is not a number, a grade (C, P, I, N) or yes/no",
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


#: Errors of :mod:`zipfile` on an archive it cannot read (corrupt, encrypted, an unknown
#: compression method, a member cut short).
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
               OSError, EOFError, zlib.error)  # fmt: skip


def _archive(path: Path) -> tuple[Any, Any, Any]:
    """Return the header, the reductions (or ``None``) and the samples of a ``.eval`` archive.

    Each member is checked before it is decompressed: the members read together must fit
    in the memory limit (an archive can claim gigabytes from a few kilobytes).
    """
    source = str(path)
    limit = defaults.memory_limit()
    try:
        with zipfile.ZipFile(check_input(path)) as archive:
            infos = {info.filename: info for info in archive.infolist()}
            if "header.json" not in infos:
                raise ScoreTableError(
                    "an .eval archive without header.json: not a complete Inspect log",
                    source=source,
                )
            wanted = ["header.json"]
            wanted += ["reductions.json"] if "reductions.json" in infos else []
            if "summaries.json" in infos:
                wanted.append("summaries.json")
            else:
                wanted += sorted(n for n in infos if n.startswith("samples/"))
            size = sum(infos[n].file_size for n in wanted)
            if size > limit:
                raise ScoreTableError(
                    f"the archive's logs hold {size / 1e6:,.0f} MB uncompressed, more than "
                    f"the memory limit of {limit / 1e6:,.0f} MB (set BAYES_IR_MEMORY_LIMIT, "
                    "in bytes, to raise it)",
                    source=source,
                )

            def member(name: str) -> Any:
                try:
                    text = decode(archive.read(name), source=name)
                except ScoreTableError as exc:
                    raise ScoreTableError(f"{exc} (in the archive)", source=source) from None
                return parse_json(text, source=source, member=name)

            header = member("header.json")
            reductions = member("reductions.json") if "reductions.json" in infos else None
            if "summaries.json" in infos:
                samples = member("summaries.json")
            else:
                samples = [member(n) for n in wanted if n.startswith("samples/")]
    except _ZIP_ERRORS as exc:
        raise ScoreTableError(f"not a readable .eval archive ({exc})", source=source) from None
    return header, reductions, samples


def _load(path: Path) -> tuple[dict, list | None, list]:
    """Return the log's header, its reductions (or ``None``) and its sample summaries."""
    source = str(path)
    if path.suffix.lower() == ".eval":
        header, reductions, samples = _archive(path)
    else:
        header = load_json(path)
        if not isinstance(header, dict) or "eval" not in header:
            raise ScoreTableError("not an Inspect eval log (no 'eval' field)", source=source)
        reductions = header.get("reductions")
        results = header.get("results")
        if reductions is None and isinstance(results, dict):
            reductions = results.get("sample_reductions")  # logs before 0.3.47
        samples = header.get("samples")
    header = as_dict(header, what="the log's header", source=source)
    if reductions is not None:
        reductions = as_list(reductions, what="the log's reductions", source=source)
    samples = as_list(samples, what="the log's samples", source=source)
    return header, reductions, samples


def _log_rows(
    path: Path, system: str | None, collection: str | None, replicates: bool
) -> tuple[list[tuple[str, str, str, str, float, str]], list[str]]:
    """Rows ``(system, task, sample, measure, score, replicate)`` of one log, and notes.

    The replicate is ``""`` unless ``replicates``: then each epoch is a row of replicate
    ``epoch<n>`` and Inspect's reductions are not read.
    """
    header, reductions, samples = _load(path)
    source = str(path)
    status = header.get("status")
    if status != "success":
        raise ScoreTableError(
            f"the eval log has status {status!r}, not 'success': its samples are incomplete "
            "(rerun or retry the eval, e.g. inspect eval-retry)",
            source=source,
        )
    spec = as_dict(header.get("eval"), what="the log's 'eval' field", source=source)
    notes: list[str] = []
    model, task = name_field(spec.get("model")), name_field(spec.get("task"))
    if system is None and model is None:
        notes.append(f"{path.name}: the log names no model (eval.model); named after the file")
    if collection is None and task is None:
        notes.append(f"{path.name}: the log names no task (eval.task); named after the file")
    system = system or model or path.stem
    task = collection or task or path.stem
    rows: list[tuple[str, str, str, str, float, str]] = []
    if reductions and not replicates:
        for block in reductions:
            block = as_dict(block, what="a reduction", source=source)
            scorer = name_field(block.get("scorer"))
            if scorer is None:
                raise ScoreTableError(
                    f"a reduction names no scorer (scorer {shown(block.get('scorer'))})",
                    source=source,
                )
            for item in as_list(block.get("samples"), what=f"the samples of reduction "
                                f"{scorer!r}", source=source):  # fmt: skip
                item = as_dict(item, what=f"a sample of reduction {scorer!r}", source=source)
                sample_id = _sample_id(item.get("sample_id"), scorer, source)
                where = f"sample {shown(item.get('sample_id'))}, scorer {scorer!r}"
                for measure, value in _scalars(scorer, item.get("value"), where=where,
                                               source=source):  # fmt: skip
                    if not math.isnan(value):  # unscored: a missing cell
                        rows.append((system, task, sample_id, measure, value, ""))
        return _scored(rows, source), notes
    epochs: dict[tuple[str, str], list[float]] = {}
    for sample in samples:
        sample = as_dict(sample, what="a sample", source=source)
        sample_id = _sample_id(sample.get("id"), None, source)
        where = f"sample {shown(sample.get('id'))} epoch {shown(sample.get('epoch'))}"
        epoch = name_field(sample.get("epoch")) if replicates else ""
        if epoch is None:
            raise ScoreTableError(f"{where} has no epoch number", source=source)
        scores = as_dict(sample.get("scores"), what=f"the scores of {where}", source=source)
        for scorer, score in scores.items():
            raw = score.get("value") if isinstance(score, dict) else score
            for measure, number in _scalars(str(scorer), raw, where=f"{where}, scorer "
                                            f"{scorer!r}", source=source):  # fmt: skip
                if replicates and not math.isnan(number):
                    rows.append((system, task, sample_id, measure, number, f"epoch{epoch}"))
                epochs.setdefault((sample_id, measure), []).append(number)
    if replicates:
        return _scored(rows, source), notes
    if any(len(v) > 1 for v in epochs.values()):
        notes.append(f"{path.name}: scores averaged over the epochs of each sample")
    for (sample_id, measure), values in epochs.items():
        known = [v for v in values if not math.isnan(v)]
        if known:
            rows.append((system, task, sample_id, measure, sum(known) / len(known), ""))
    return _scored(rows, source), notes


def _sample_id(value: Any, scorer: str | None, source: str) -> str:
    """Return the sample id read from a log (a string or a number); raise when it is neither."""
    sample_id = name_field(value)
    if sample_id is None:
        inside = "" if scorer is None else f" of reduction {scorer!r}"
        raise ScoreTableError(f"a sample{inside} has no id (id {shown(value)})", source=source)
    return sample_id


def _scored(rows: list, source: str) -> list:
    """``rows``, refused when empty: a log without a scored sample is not a model's scores."""
    if not rows:
        raise ScoreTableError(
            "the log holds no scored sample (no reductions, no sample scores)", source=source
        )
    return rows


def read_inspect(
    paths: Sequence[Path],
    *,
    measure: str | Sequence[str] | None = None,
    collection: str | None = None,
    systems: Sequence[str] | None = None,
    missing: Missing = "error",
    check_range: bool = True,
    replicates: bool = False,
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
    replicates
        Keep each epoch of a sample as a replicate ``epoch<n>`` (the table's
        ``replicate`` column) instead of the score reduced over the epochs.

    Raises
    ------
    ScoreTableError
        A log that is not complete (status other than ``success``), not JSON or not a
        zip archive, a score value that is not a number or a grade (naming the sample and
        scorer), a sample scored twice for one model (two logs of one model and task),
        several scorers without ``measure=``.
    """
    replicates = validate.flag("replicates", replicates)
    paths = [Path(p) for p in paths]
    names = system_names(systems, paths)
    rows, files = [], []
    notes = [f"{len(paths)} Inspect eval log(s); topics are sample ids"]
    for i, path in enumerate(paths):
        more, said = _log_rows(path, None if names is None else names[i], collection, replicates)
        rows += more
        files += [str(path)] * len(more)
        notes += said
    frame = pd.DataFrame(
        rows, columns=["system", "collection", "topic", "measure", "score", "replicate"]
    )
    if not replicates:
        frame = frame.drop(columns="replicate")
    return log_table(frame, paths=paths, what="Inspect eval logs", measure=measure,
                     missing=missing, check_range=check_range, notes=notes,
                     sources=np.asarray(files, dtype=object))  # fmt: skip


read_inspect.multi_file = True  # type: ignore[attr-defined]
