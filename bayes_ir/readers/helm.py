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
(with a note). ``run_spec.json`` is checked as every input is (a FIFO, a device or a
folder of that name is refused, not skipped) and declared an input: no output is
written over it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from bayes_ir.errors import OptionError, ScoreTableError
from bayes_ir.files import declare_inputs
from bayes_ir.readers._io import check_input, head_text
from bayes_ir.readers._json import (
    as_dict,
    as_list,
    finite_number,
    load_json,
    log_table,
    name_field,
    system_names,
)
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
    """Return ``(model, collection)`` of the run whose ``per_instance_stats.json`` is ``path``.

    ``run_spec.json`` beside it is read when it is there (checked as every input is: a
    FIFO, a device or a folder of that name is refused, not skipped) and declared an input
    (:func:`bayes_ir.files.declare_inputs`: no output is written over it).
    """
    folder = path.resolve().parent
    spec_path = folder / "run_spec.json"
    name, model = folder.name, ""
    if spec_path.exists() or spec_path.is_symlink():
        source = str(path.parent / "run_spec.json")
        spec = as_dict(load_json(check_input(spec_path, what="run spec")), what="run_spec.json",
                       source=source)  # fmt: skip
        declare_inputs([spec_path])
        adapter = as_dict(spec.get("adapter_spec"), what="its adapter_spec", source=source)
        name = name_field(spec.get("name")) or name
        model = name_field(adapter.get("model")) or ""
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
    source = str(path)
    data = as_list(load_json(path), what="per_instance_stats.json", source=source)
    rows, splits = [], set()
    for i, entry in enumerate(data):
        instance = name_field(entry.get("instance_id")) if isinstance(entry, dict) else None
        if instance is None:
            raise ScoreTableError(f"entry {i + 1} has no instance_id", source=source)
        if entry.get("perturbation"):
            continue
        trial = entry.get("train_trial_index", 0)
        if isinstance(trial, bool) or not isinstance(trial, int):
            raise ScoreTableError(
                f"entry {i + 1} (instance {instance!r}): train_trial_index {trial!r} is not a "
                "trial number",
                source=source,
            )
        stats = as_list(entry.get("stats"), what=f"the stats of entry {i + 1}",
                        source=source)  # fmt: skip
        for stat in stats:
            name: Any = stat.get("name") if isinstance(stat, dict) else None
            if not isinstance(name, dict) or "name" not in name or name.get("perturbation"):
                continue
            splits.add(str(name.get("split")))
            if name.get("split") != split or name.get("sub_split"):
                continue
            mean = finite_number(stat.get("mean"))
            if mean is None:
                count, total = finite_number(stat.get("count")), finite_number(stat.get("sum"))
                if not count or total is None:
                    continue  # a statistic with no value on this instance
                mean = total / count
            rows.append((instance, str(name["name"]), mean, trial))
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
    if not isinstance(split, str) or not split.strip():
        raise OptionError(f"split must be the name of a split (test, valid), got {split!r}")
    frames, notes = [], [f"{len(paths)} HELM run(s); topics are instance ids"]
    for i, path in enumerate(paths):
        model, coll = run_names(path)
        rows, splits = _stats_rows(path, split)
        if not rows and split in splits:
            raise ScoreTableError(
                f"no statistic of split {split!r} holds a number (a finite mean, or sum and count)",
                source=str(path),
            )
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
        frame["file"] = str(path)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    return log_table(frame.drop(columns="file"), paths=paths, what="HELM runs", measure=measure,
                     missing=missing, check_range=check_range, notes=notes,
                     sources=frame["file"].to_numpy())  # fmt: skip


read_helm.multi_file = True  # type: ignore[attr-defined]
