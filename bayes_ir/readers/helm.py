"""HELM per-instance statistics: ``per_instance_stats.json`` of each run.

``helm-run`` writes one folder per run, ``benchmark_output/runs/<suite>/<run name>/``
(stanford-crfm/helm, ``src/helm/benchmark/runner.py``), holding ``run_spec.json`` and
``per_instance_stats.json``: a list of ``PerInstanceStats``
(``src/helm/benchmark/metrics/metric.py``) written with ``asdict_without_nones``::

    [{"instance_id": "id4563", "train_trial_index": 0,
      "stats": [{"name": {"name": "exact_match", "split": "test"},
                 "count": 1, "sum": 1.0, "sum_squared": 1.0, "min": 1.0, "max": 1.0,
                 "mean": 1.0, "variance": 0.0, "stddev": 0.0}, ...]},
     {"instance_id": "id4563", "train_trial_index": 0,
      "perturbation": {"name": "robustness", ...}, "stats": [...]}, ...]

The run name is ``<scenario>:<arg>=<value>,...,model=<model>``. Read as: system = the
model (``adapter_spec.model`` of ``run_spec.json`` beside the file, else the run name's
``model=`` argument), collection = the run name without its ``model=`` argument (so the
runs of every model on one scenario share a collection), topic = ``instance_id``,
measure = the statistic's name, score = its ``mean`` on the instance. Only the
unperturbed instances of one split (``split=``, default ``test``) are read; the
statistics of several train trials (``train_trial_index``) of one instance are averaged
(with a note).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._io import head_text
from bayes_ir.readers._json import as_list, finite_number, load_json, log_table, system_names
from bayes_ir.table import Missing, ScoreTable

#: The file HELM writes in every run folder.
FILE_NAME = "per_instance_stats.json"
_HEAD = re.compile(r'^\s*\[\s*\{\s*"instance_id"\s*:')


def looks_helm(path: Path) -> bool:
    """Tell a HELM ``per_instance_stats.json``: a JSON list of objects opening with instance_id."""
    try:
        return bool(_HEAD.match(head_text(path)))
    except ScoreTableError:
        return False


def run_names(path: Path) -> tuple[str, str]:
    """Return ``(model, collection)`` of the run whose ``per_instance_stats.json`` is ``path``."""
    folder = path.resolve().parent
    spec_path = folder / "run_spec.json"
    name, model = folder.name, ""
    if spec_path.is_file():
        spec = load_json(spec_path)
        if isinstance(spec, dict):
            name = str(spec.get("name") or name)
            model = str((spec.get("adapter_spec") or {}).get("model") or "")
    scenario, _, args = name.partition(":")
    kept = []
    for arg in [a for a in args.split(",") if a]:
        key, _, value = arg.partition("=")
        if key == "model":
            model = model or value
        else:
            kept.append(arg)
    collection = scenario + (":" + ",".join(kept) if kept else "")
    return model or folder.name, collection


def _stats_rows(path: Path, split: str) -> tuple[list[tuple[str, str, float, int]], set[str]]:
    """``(instance, measure, mean, trial)`` of the unperturbed instances of ``split``."""
    data = as_list(load_json(path), what="per_instance_stats.json", source=str(path))
    rows, splits = [], set()
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or "instance_id" not in entry:
            raise ScoreTableError(f"entry {i + 1} has no instance_id", source=str(path))
        if entry.get("perturbation"):
            continue
        for stat in entry.get("stats") or []:
            name: Any = stat.get("name") if isinstance(stat, dict) else None
            if not isinstance(name, dict) or "name" not in name or name.get("perturbation"):
                continue
            splits.add(str(name.get("split")))
            if name.get("split") != split or name.get("sub_split"):
                continue
            mean = finite_number(stat.get("mean"))
            if mean is None:
                count, total = stat.get("count"), finite_number(stat.get("sum"))
                if not count or total is None:
                    continue  # a statistic with no value on this instance
                mean = total / count
            rows.append((str(entry["instance_id"]), str(name["name"]), mean,
                         int(entry.get("train_trial_index", 0))))  # fmt: skip
    return rows, splits


def read_helm(
    paths: Sequence[Path],
    *,
    measure: str | Sequence[str] | None = None,
    split: str = "test",
    collection: str | None = None,
    systems: Sequence[str] | None = None,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Per-instance scores from HELM ``per_instance_stats.json`` files, one per run.

    Parameters
    ----------
    paths
        ``benchmark_output/runs/<suite>/<run>/per_instance_stats.json`` of each run
        (with ``run_spec.json`` beside it, which names the model).
    measure
        The statistic to keep (``exact_match``, ``quasi_exact_match``, ``f1_score``,
        ...); required when the runs hold several.
    split
        The split whose statistics are read (``test``, ``valid``).
    collection
        Collection name (default: each run's name without ``model=``).
    systems
        System name of each file (default: the run's model).
    missing, check_range
        See :meth:`~bayes_ir.table.ScoreTable.from_frame`.

    Raises
    ------
    ScoreTableError
        Not JSON, an entry without ``instance_id``, no statistic of ``split`` (naming
        the splits there are), an instance scored twice for one model, several
        statistics without ``measure=``.
    """
    paths = [Path(p) for p in paths]
    names = system_names(systems, paths)
    frames, notes = [], [f"{len(paths)} HELM run(s); topics are instance ids"]
    for i, path in enumerate(paths):
        model, coll = run_names(path)
        rows, splits = _stats_rows(path, split)
        if not rows:
            raise ScoreTableError(
                f"no statistic of split {split!r} on an unperturbed instance (splits there: "
                f"{', '.join(sorted(splits)) or 'none'}); pass split=",
                source=str(path),
            )
        frame = pd.DataFrame(rows, columns=["topic", "measure", "score", "trial"])
        if frame["trial"].nunique() > 1:
            notes.append(f"{path.parent.name}: {frame['trial'].nunique()} train trials averaged")
        frame = frame.groupby(["topic", "measure"], sort=False)["score"].mean().reset_index()
        frame["system"] = names[i] if names is not None else model
        frame["collection"] = collection or coll
        frames.append(frame)
    return log_table(pd.concat(frames, ignore_index=True), paths=paths, what="HELM runs",
                     measure=measure, missing=missing, check_range=check_range,
                     notes=notes)  # fmt: skip


read_helm.multi_file = True  # type: ignore[attr-defined]
