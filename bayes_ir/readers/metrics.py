"""``ir_measures`` results: ``Metric(query_id, measure, value)`` per query and measure.

One system's result is an iterable of ``Metric`` namedtuples (``ir_measures.iter_calc``,
``evaluator.iter_calc``) or a ``CalcResults`` (``ir_measures.calc``: its ``per_query``
list is read); several systems are ``{system: result}``. A ``calc_aggregate`` result
(``{measure: mean}``) holds no per-query scores and is refused with a line saying what
to pass. Items are recognised by their fields, so ``ir_measures`` is not needed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._measures import keep_measures
from bayes_ir.table import DEFAULT_COLLECTION, Missing, ScoreTable

_METRIC_FIELDS = ("query_id", "measure", "value")
_SOURCE = "<ir_measures results>"


def _is_metric(item: object) -> bool:
    return isinstance(item, tuple) and all(hasattr(item, f) for f in _METRIC_FIELDS)


def _is_calc_results(obj: object) -> bool:
    return isinstance(obj, tuple) and getattr(obj, "_fields", None) == ("aggregated", "per_query")


def _is_one_result(obj: object) -> bool:
    if _is_calc_results(obj):
        return True
    return isinstance(obj, list | tuple) and bool(obj) and _is_metric(obj[0])


def _is_aggregate(obj: object) -> bool:
    """``calc_aggregate``'s ``{Measure: value}``: keys from the ``ir_measures`` package."""
    return (
        isinstance(obj, Mapping)
        and bool(obj)
        and all((type(k).__module__ or "").startswith("ir_measures") for k in obj)
    )


def claims_metrics(obj: object) -> bool:
    """Tell a list of ``Metric``, a ``CalcResults``, ``{system: either}``, or an aggregate."""
    if _is_one_result(obj) or _is_aggregate(obj):
        return True
    return (
        isinstance(obj, Mapping)
        and bool(obj)
        and all(_is_one_result(v) or _is_aggregate(v) for v in obj.values())
    )


def read_metrics(
    results: object,
    *,
    measure: str | Sequence[str] | None = None,
    collection: str | None = None,
    systems: Sequence[str] | None = None,
    missing: Missing = "error",
    check_range: bool = True,
) -> ScoreTable:
    """Per-topic scores from ``ir_measures`` results.

    Parameters
    ----------
    results
        One system's ``Metric`` list (``list(ir_measures.iter_calc(...))``; a generator
        is read once) or ``CalcResults``, or ``{system: result}``.
    measure
        The measure(s) to keep, matched as written or canonically (``"map"`` is
        ``AP``); required when the results hold several measures.
    collection
        Collection name (default ``"default"``).
    systems
        The name of one system's result (one name); default ``"system"`` (a note says
        so). Not used with ``{system: result}``.
    missing, check_range
        See :meth:`~bayes_ir.table.ScoreTable.from_frame`.

    Raises
    ------
    ScoreTableError
        Aggregates (``calc_aggregate``), an item that is not a ``Metric``, several
        measures without ``measure=``, a query scored twice for one measure (naming
        the system and topic).
    """
    notes: list[str] = []
    if isinstance(results, Mapping) and not _is_aggregate(results):
        if systems is not None:
            raise ScoreTableError(
                "systems= names one system's result; {system: result} names them already",
                source=_SOURCE,
            )
        by_system = {str(k): v for k, v in results.items()}
    else:
        names = list(systems) if systems is not None else ["system"]
        if len(names) != 1:
            raise ScoreTableError(
                f"systems= has {len(names)} names for one system's result", source=_SOURCE
            )
        if systems is None:
            notes.append("one system's ir_measures results read as system 'system'")
        by_system = {names[0]: results}
    rows = []
    for system, result in by_system.items():
        rows += _rows(system, result)
    frame = pd.DataFrame(rows, columns=["system", "topic", "measure", "score"])
    keep = keep_measures(frame["measure"], measure, source=_SOURCE, require=True)
    if keep is not None:
        frame = frame[keep]
    return ScoreTable.from_frame(
        frame,
        collection=collection or DEFAULT_COLLECTION,
        missing=missing,
        source=_SOURCE,
        check_range=check_range,
        notes=notes,
    )


def _rows(system: str, result: object) -> list[tuple[str, str, str, object]]:
    """``(system, topic, measure, value)`` of one system's result."""
    where = f"{_SOURCE} system {system!r}"
    if _is_aggregate(result):
        raise ScoreTableError(
            "holds mean scores only (ir_measures.calc_aggregate): pass the per-query "
            "results, list(ir_measures.iter_calc(measures, qrels, run))",
            source=where,
        )
    if _is_calc_results(result):
        result = cast(Any, result).per_query
    if not isinstance(result, Iterable) or isinstance(result, str | bytes | Mapping):
        raise ScoreTableError(
            f"expected an iterable of ir_measures Metric, got {type(result).__name__}",
            source=where,
        )
    rows = []
    for i, item in enumerate(result, 1):
        if not _is_metric(item):
            raise ScoreTableError(
                f"item {i} is {type(item).__name__}, not an ir_measures "
                "Metric(query_id, measure, value)",
                source=where,
            )
        rows.append((system, str(item.query_id), str(item.measure), item.value))
    if not rows:
        raise ScoreTableError("no per-query scores (an empty result)", source=where)
    return rows
