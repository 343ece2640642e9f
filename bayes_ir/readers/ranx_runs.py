"""ranx ``Run`` objects (one, a list, or ``{name: Run}``), scored against ``qrels=``.

ranx is never imported: its objects are recognised by ``type(obj).__module__``
(``ranx.…``) and class name. A ``Run`` is scored with ``ir_measures``, the scorer of
the TREC run files (:func:`~bayes_ir.readers.runs.read_runs`), so a ranx run and the
same run saved as a TREC file give the same table, with ``trec_eval``'s definitions
(ranx's ``ndcg@10``, ``map@100``, ``mrr`` are the ``ir_measures`` measures ``nDCG@10``,
``AP@100``, ``RR``). Without ``qrels=``, the per-query scores ranx stored in
``run.scores`` by ``ranx.evaluate``/``ranx.compare`` are read as they are. A ranx
``Report`` holds only mean scores and is refused with a line saying what to pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import pandas as pd

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers._measures import keep_measures
from bayes_ir.readers.runs import (
    QrelsArg,
    Run,
    Unretrieved,
    judgments_of,
    parse_measures,
    score_run,
)
from bayes_ir.table import DEFAULT_COLLECTION, Missing, ScoreTable


def _is_ranx(obj: object, name: str) -> bool:
    return (type(obj).__module__ or "").startswith("ranx") and type(obj).__name__ == name


def claims_ranx(obj: object) -> bool:
    """Tell a ranx ``Run`` or ``Report``, a non-empty list of Runs, or ``{name: Run}``."""
    if _is_ranx(obj, "Run") or _is_ranx(obj, "Report"):
        return True
    if isinstance(obj, Mapping):
        return bool(obj) and all(_is_ranx(v, "Run") for v in obj.values())
    if isinstance(obj, list | tuple):
        return bool(obj) and all(_is_ranx(v, "Run") for v in obj)
    return False


def read_ranx(
    runs: object,
    *,
    qrels: QrelsArg | None = None,
    measure: str | Sequence[str] | None = None,
    collection: str | None = None,
    missing: Missing = "error",
    check_range: bool = True,
    unretrieved: Unretrieved = "zero",
) -> ScoreTable:
    """Per-topic scores of ranx runs.

    Parameters
    ----------
    runs
        A ranx ``Run``, a list of them, or ``{system: Run}``. Systems are named by the
        mapping's keys, else by ``run.name``, else ``run_1, run_2, ...`` (as
        ``ranx.compare`` names them; a note says so).
    qrels
        Anything :func:`~bayes_ir.readers.qrels.load_qrels` takes: a ranx ``Qrels``,
        ir_datasets qrels, a qrels file, a dict of dicts. Without it, the per-query
        scores ranx stored in each ``run.scores`` (after ``ranx.evaluate`` or
        ``ranx.compare``) are read.
    measure
        With ``qrels``: the ``ir_measures`` measure(s) to compute (required). Without:
        the ranx metric(s) to read from ``run.scores`` (required when several are
        stored), e.g. ``"ndcg@10"``.
    collection
        Collection name (default ``"default"``).
    missing, check_range, unretrieved
        See :func:`~bayes_ir.readers.runs.read_runs`.

    Raises
    ------
    ScoreTableError
        A ``Report`` (means only), a run without qrels nor stored scores, an empty run,
        two runs with one name, runs and qrels with no query in common.
    """
    if _is_ranx(runs, "Report"):
        raise ScoreTableError(
            "a ranx Report holds mean scores only, not per-query scores: pass the runs "
            "themselves (after ranx.compare they keep their per-query scores in run.scores), "
            "or the runs with qrels="
        )
    named, notes = _named_runs(runs)
    coll = collection or DEFAULT_COLLECTION
    source = f"<ranx Run {next(iter(named))!r}>" if len(named) == 1 else f"<{len(named)} ranx Runs>"
    if qrels is None:
        return _stored_scores(named, measure, coll, source, notes, missing, check_range)
    parsed = parse_measures(measure, what="ranx runs scored against qrels")
    judged, label = judgments_of(qrels, coll, notes)
    rows = []
    for name, run in named.items():
        docs = {
            str(q): {str(d): float(s) for d, s in ds.items()} for q, ds in run.to_dict().items()
        }
        docs = {q: ds for q, ds in docs.items() if ds}  # make_comparable adds empty queries
        if not docs:
            raise ScoreTableError(f"the ranx Run {name!r} retrieved no document", source=source)
        rows += score_run(
            Run(docs=docs, tag=None),
            name,
            f"<ranx Run {name!r}>",
            coll,
            judged,
            label,
            parsed,
            unretrieved,
            notes,
        )
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    return ScoreTable.from_frame(
        frame, missing=missing, source=source, check_range=check_range, notes=notes
    )


def _named_runs(runs: object) -> tuple[dict, list[str]]:
    """``{system: Run}`` and a note on unnamed runs; two runs with one name are refused."""
    if _is_ranx(runs, "Run"):
        runs = [runs]
    if isinstance(runs, Mapping):
        return {str(k): v for k, v in runs.items()}, []
    out: dict = {}
    unnamed = []
    for i, run in enumerate(cast(Iterable[Any], runs), 1):
        name = run.name if run.name else f"run_{i}"
        if not run.name:
            unnamed.append(name)
        if name in out:
            raise ScoreTableError(
                f"two ranx Runs are named {name!r}: give each run its own name "
                "(Run(..., name=...)) or pass {name: run}"
            )
        out[name] = run
    notes = [
        f"ranx Run(s) without a name read as {', '.join(unnamed)} (as ranx.compare names them)"
    ]
    return out, notes if unnamed else []


def _stored_scores(
    named: dict,
    measure: str | Sequence[str] | None,
    coll: str,
    source: str,
    notes: list[str],
    missing: Missing,
    check_range: bool,
) -> ScoreTable:
    """Read the per-query scores ranx stored in ``run.scores`` (``{metric: {qid: score}}``)."""
    rows = [
        (coll, str(metric), name, str(q), float(v))
        for name, run in named.items()
        for metric, per_query in dict(getattr(run, "scores", {}) or {}).items()
        for q, v in dict(per_query).items()
    ]
    bare = [name for name, run in named.items() if not getattr(run, "scores", None)]
    if bare:
        raise ScoreTableError(
            f"the ranx Run {bare[0]!r} has no qrels and no stored scores: pass qrels= (a ranx "
            "Qrels, ir_datasets qrels or a qrels file) and measure=, or run ranx.evaluate first",
            source=source,
        )
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    keep = keep_measures(frame["measure"], measure, source=source, require=True)
    if keep is not None:
        frame = frame[keep]
    notes.append("scores computed by ranx (run.scores), read as they are")
    return ScoreTable.from_frame(
        frame, missing=missing, source=source, check_range=check_range, notes=notes
    )
