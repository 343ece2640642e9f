"""SWE-bench-style results: which instance ids each system resolved, one JSON file per system.

Two layouts are read (SWE-bench/SWE-bench):

* the harness report ``<model>.<run_id>.json`` of ``python -m
  swebench.harness.run_evaluation`` (``swebench/harness/reporting.py``,
  ``make_run_report``, ``schema_version`` 2): ``resolved_ids``, ``unresolved_ids``,
  ``error_ids``, ``empty_patch_ids``, ``incomplete_ids``, ``completed_ids``,
  ``submitted_ids`` and their counts, ``total_instances`` among them; every instance of
  the dataset is in one of the lists;
* the leaderboard's ``results/results.json`` of each submission to SWE-bench/experiments
  (``evaluation/<split>/<date>_<system>/results/results.json``): ``resolved`` and the
  instances that failed on the way (``no_generation``, ``no_logs``; older submissions
  also ``generated``, ``applied``, ``install_fail``, ``test_errored``, ...). Instances
  that were tried and not resolved are not listed.

Read as: topic = instance id, measure ``resolved``, score 1 for an instance the system
resolved and 0 for any other instance of the benchmark (SWE-bench's "% resolved" counts
an unsubmitted or failed instance as unresolved). The instances of the benchmark are
``instances=`` (a file of ids, one per line, or a list), else every id that any of the
files names (said in a note: pass the split's ids when a system may have resolved none
of the instances the others name); the file of ids is read as every file the user names
beside the scores (:func:`bayes_ir.files.read_input_text`), and an id listed twice is
refused. System = ``systems=``, else the submission's folder
(``.../<system>/results/results.json``), else the report's file name; collection = the
split's folder (``lite``, ``verified``) of the experiments layout, else ``swe-bench``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.files import declare_inputs, read_input_text
from bayes_ir.readers._io import head_text
from bayes_ir.readers._json import load_json, log_table, name_field, shown, system_names
from bayes_ir.table import Missing, ScoreTable

#: The measure of a SWE-bench table.
MEASURE = "resolved"
#: Collection name when the layout names no split.
DEFAULT_COLLECTION = "swe-bench"
#: Lists of the harness report holding instance ids.
REPORT_LISTS = ("submitted_ids", "completed_ids", "incomplete_ids", "empty_patch_ids",
                "resolved_ids", "unresolved_ids", "error_ids")  # fmt: skip
_KEY = re.compile(r'"(\w+)"\s*:')
_RESULTS_KEYS = {"no_generation", "no_logs", "generated", "applied", "with_logs", "no_apply",
                 "install_fail", "test_errored", "test_timeout", "reset_failed"}  # fmt: skip


def looks_swebench(path: Path) -> bool:
    """Tell a SWE-bench results file: a JSON object whose keys are SWE-bench's lists."""
    try:
        head = head_text(path)
    except ScoreTableError:
        return False
    if not head.lstrip().startswith("{"):
        return False
    keys = set(_KEY.findall(head))
    return (
        bool({"resolved_ids", "schema_version"} <= keys)
        or ("resolved_ids" in keys and "total_instances" in keys)
        or bool(keys & _RESULTS_KEYS and ("resolved" in keys or path.name == "results.json"))
    )


def _system_of(path: Path) -> str:
    folder = path.resolve().parent
    if folder.name == "results":
        return folder.parent.name
    if path.name == "results.json":
        return folder.name
    return path.name.removesuffix(".gz").removesuffix(".json")


def _collection_of(path: Path) -> str:
    folder = path.resolve().parent
    if folder.name == "results" and len(folder.parents) >= 2:
        return folder.parents[1].name
    return DEFAULT_COLLECTION


def _ids(data: dict, key: str, source: str, *, required: bool = False) -> list[str]:
    value = data.get(key)
    if value is None and required:
        raise ScoreTableError(f"{key!r} is null, not a list of instance ids", source=source)
    value = value or []
    if not isinstance(value, list):
        raise ScoreTableError(f"{key!r} is not a list of instance ids", source=source)
    ids = [name_field(v) for v in value]
    if None in ids:
        odd = value[ids.index(None)]
        raise ScoreTableError(f"{key!r} holds {shown(odd)}, not an instance id", source=source)
    return [i for i in ids if i is not None]


def _results(path: Path) -> tuple[set[str], set[str], int | None]:
    """Return the resolved ids, every id the file names, and its ``total_instances``."""
    data = load_json(path)
    source = str(path)
    if not isinstance(data, dict):
        raise ScoreTableError("not a SWE-bench results object", source=source)
    if "resolved_ids" in data:
        named = {i for key in REPORT_LISTS for i in _ids(data, key, source)}
        total = data.get("total_instances")
        return (
            set(_ids(data, "resolved_ids", source, required=True)),
            named,
            total if isinstance(total, int) and not isinstance(total, bool) else None,
        )
    if "resolved" not in data:
        raise ScoreTableError(
            "no 'resolved' or 'resolved_ids' list: not a SWE-bench results file", source=source
        )
    named = {i for key, v in data.items() if isinstance(v, list) for i in _ids(data, key, source)}
    return set(_ids(data, "resolved", source, required=True)), named, None


def _instances(instances: str | Path | Sequence[str]) -> list[str]:
    """Return the benchmark's instance ids, from a file of ids (one per line) or a list."""
    if isinstance(instances, str | Path):
        path, text = read_input_text(instances, what="list of instances")
        declare_inputs([path])
        ids = [line.strip() for line in text.splitlines() if line.strip()]
        if not ids:
            raise ScoreTableError("no instance ids in the file", source=str(path))
        source = str(path)
    else:
        ids = [str(i) for i in instances]
        source = "instances="
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise ScoreTableError(f"instance id {i!r} is listed twice", source=source)
        seen.add(i)
    return ids


def read_swebench(
    paths: Sequence[Path],
    *,
    instances: str | Path | Sequence[str] | None = None,
    measure: str | None = None,
    collection: str | None = None,
    systems: Sequence[str] | None = None,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Read whether each system resolved each instance (1) or not (0) from SWE-bench results.

    Parameters
    ----------
    paths
        One results file per system: a harness report or a submission's
        ``results/results.json``.
    instances
        The benchmark's instance ids (a file, one per line, or a list); default: every
        id any of the files names.
    measure
        ``"resolved"`` (the only measure; any other name is refused).
    collection
        Collection name (default: the split's folder, else ``swe-bench``).
    systems
        System name of each file (default: the submission's folder or the file name).
    missing, check_range
        See :meth:`~bayes_ir.table.ScoreTable.from_frame`.

    Raises
    ------
    ScoreTableError
        Not JSON or no ``resolved``/``resolved_ids`` list, a resolved id that is not
        one of ``instances``, two files for one system.
    """
    paths = [Path(p) for p in paths]
    if measure is not None and measure != MEASURE:
        raise ScoreTableError(f"SWE-bench results hold one measure, {MEASURE!r}, not {measure!r}")
    names = system_names(systems, paths) or [_system_of(p) for p in paths]
    keys = [(name, collection or _collection_of(p)) for name, p in zip(names, paths, strict=True)]
    for i, key in enumerate(keys):
        if key in keys[:i]:
            first = paths[keys.index(key)]
            if first.resolve() == paths[i].resolve():
                raise ScoreTableError(f"the file is given twice ({first} and {paths[i]})")
            raise ScoreTableError(
                f"system {key[0]!r} of collection {key[1]!r} is named by two files ({first} "
                f"and {paths[i]}); pass systems= with one name per file (CLI: rename one "
                "report, or one submission's folder)",
            )
    read = [_results(p) for p in paths]
    notes = [f"{len(paths)} SWE-bench results file(s); score 1 = resolved"]
    if instances is None:
        universe = sorted(set().union(*(named for _, named, _ in read)))
        totals = {t for _, _, t in read if t is not None}
        notes.append(
            f"the {len(universe)} instances are those the files name; pass instances= (the "
            "split's ids) to count the ones no file names"
        )
        if totals and max(totals) > len(universe):
            notes.append(f"a report counts {max(totals)} instances but names {len(universe)}")
    else:
        universe = _instances(instances)
        known = set(universe)
        for path, (resolved, _, _) in zip(paths, read, strict=True):
            extra = sorted(resolved - known)
            if extra:
                raise ScoreTableError(
                    f"resolves {len(extra)} instance(s) not among instances= (first "
                    f"{extra[0]!r}): is it the same split?",
                    source=str(path),
                )
    frames = [
        pd.DataFrame(
            {
                "system": name,
                "collection": coll,
                "topic": universe,
                "measure": MEASURE,
                "score": [1.0 if i in resolved else 0.0 for i in universe],
            }
        )
        for (name, coll), (resolved, _, _) in zip(keys, read, strict=True)
    ]
    files = np.repeat(np.asarray([str(p) for p in paths], dtype=object), len(universe))
    return log_table(pd.concat(frames, ignore_index=True), paths=paths,
                     what="SWE-bench results files", measure=None, missing=missing,
                     check_range=check_range, notes=notes, sources=files)  # fmt: skip


read_swebench.multi_file = True  # type: ignore[attr-defined]
