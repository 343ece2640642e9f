"""Measure strings: parsing through ``ir_measures`` and the range of each measure.

A measure is named by an ``ir_measures`` string (``"nDCG@10"``, ``"AP(rel=2)"``,
``"P@10"``) or, for scores that do not come from ranked retrieval, by a plain
name such as ``"accuracy"``. The range is used to reject impossible scores.
"""

from __future__ import annotations

import math
from functools import lru_cache

import ir_measures

from bayes_ir.errors import MeasureError

#: ir_measures measure names whose values lie in [0, 1].
_UNIT_INTERVAL = frozenset(
    {
        "AP", "nDCG", "P", "R", "RR", "Rprec", "Judged", "Bpref", "ERR", "infAP",
        "SetP", "SetR", "SetF", "SetAP", "Success", "iprec_at_recall", "IPrec", "NERR8",
        "NERR9", "NERR10", "NERR11", "alpha_nDCG", "INST", "INSQ", "RBP", "SDCG", "Compat",
        "P_IA", "AP_IA", "nDCG_IA", "ERR_IA", "StRecall", "Accuracy", "AUC",
    }
)  # fmt: skip
#: Plain (non-retrieval) names of measures in [0, 1], compared case-insensitively.
PLAIN_UNIT_INTERVAL = frozenset({"accuracy", "acc", "f1", "exact_match", "em", "map", "ndcg"})


@lru_cache(maxsize=256)
def parse_measure(measure: str) -> ir_measures.Measure:
    """Parse an ``ir_measures`` measure string, raising :class:`MeasureError` if it is invalid.

    Parameters
    ----------
    measure
        For example ``"nDCG@10"``, ``"AP(rel=2)"``, ``"P@10"``, ``"R@1000"``, ``"Judged@10"``.

    Returns
    -------
    ir_measures.Measure
        The parsed measure; ``str()`` of it gives back the canonical string.
    """
    try:
        parsed = ir_measures.parse_measure(measure)
    except Exception as exc:  # ir_measures raises bare ValueError/NameError/SyntaxError
        raise MeasureError(
            f"{measure!r} is not a measure ir_measures can parse ({exc}). "
            "Examples: 'nDCG@10', 'AP(rel=2)', 'P@10', 'R@1000', 'RR', 'Judged@10'."
        ) from exc
    cutoff = parsed.params.get("cutoff")
    if cutoff is not None and (
        isinstance(cutoff, bool) or not float(cutoff).is_integer() or cutoff < 1
    ):  # trec_eval aborts the interpreter on P@0 (an assertion in pytrec_eval)
        raise MeasureError(
            f"measure {measure!r}: the cut-off @{cutoff:g} must be a whole number of "
            "documents, at least 1 (e.g. 'P@10')"
        )
    if isinstance(cutoff, float):  # P@1e3: the cut-off as trec_eval takes it, P@1000
        parsed = ir_measures.parse_measure(str(parsed).replace(f"@{cutoff}", f"@{int(cutoff)}"))
    return parsed


@lru_cache(maxsize=1024)
def measure_range(measure: str | None) -> tuple[float, float]:
    """Return the (lower, upper) range of a measure; ``(-inf, inf)`` when it is not known.

    Parameters
    ----------
    measure
        An ``ir_measures`` string, a ``trec_eval`` name (``P_10``, ``ndcg_cut_10``,
        ``recip_rank``: see :func:`canonical_measure`), a plain name like ``"accuracy"``,
        or ``None``.

    Examples
    --------
    >>> measure_range("nDCG@10")
    (0.0, 1.0)
    >>> measure_range("my_custom_score")
    (-inf, inf)
    """
    if measure is None:
        return (-math.inf, math.inf)
    name = canonical_measure(str(measure))
    if name.lower() in PLAIN_UNIT_INTERVAL:
        return (0.0, 1.0)
    try:
        parsed = ir_measures.parse_measure(name)
    except Exception:
        return (-math.inf, math.inf)
    if parsed.NAME in _UNIT_INTERVAL:
        return (0.0, 1.0)
    return (-math.inf, math.inf)


# ---------------------------------------------------------------------- trec_eval names
#: trec_eval measure names (fixed ones) and their ``ir_measures`` strings.
_TREC_EVAL_FIXED = {
    "map": "AP",
    "ndcg": "nDCG",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "infAP": "infAP",
    "set_P": "SetP",
    "set_recall": "SetR",
    "set_F": "SetF",
    "set_map": "SetAP",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "num_q": "NumQ",
}
#: trec_eval families with a cut-off suffix ``_N`` and the ``ir_measures`` name.
_TREC_EVAL_CUT = {
    "P": "P",
    "recall": "R",
    "ndcg_cut": "nDCG",
    "map_cut": "AP",
    "success": "Success",
    "iprec_at_recall": "IPrec",
}
#: trec_eval names that ir_measures does not know but trec_eval prints.
TREC_EVAL_ONLY = frozenset(
    {"gm_map", "gm_bpref", "utility", "11pt_avg", "binG", "G", "Rndcg", "rel_ret", "P_avgjg"}
)
#: Measures that count documents or queries rather than score a ranking.
COUNT_MEASURES = frozenset({"NumRet", "NumRel", "NumRelRet", "NumQ", "NumRet(rel=1)"})


def from_trec_eval_name(name: str) -> str:
    """Translate a ``trec_eval`` measure name into an ``ir_measures`` string when known.

    ``map`` -> ``AP``, ``P_10`` -> ``P@10``, ``ndcg_cut_10`` -> ``nDCG@10``,
    ``recip_rank`` -> ``RR``, ``recall_1000`` -> ``R@1000``,
    ``iprec_at_recall_0.10`` -> ``IPrec@0.1``; unknown names are returned unchanged.

    Examples
    --------
    >>> from_trec_eval_name("ndcg_cut_10")
    'nDCG@10'
    >>> from_trec_eval_name("my_measure")
    'my_measure'
    """
    if name in _TREC_EVAL_FIXED:
        return _TREC_EVAL_FIXED[name]
    family, _, cut = name.rpartition("_")
    if family not in _TREC_EVAL_CUT:  # a family spelled in another case: Recall_100, p_10
        family = {k.lower(): k for k in _TREC_EVAL_CUT}.get(family.lower(), family)
    if family in _TREC_EVAL_CUT and cut:
        try:
            value = float(cut)
        except ValueError:
            return name
        text = f"{value:g}" if family == "iprec_at_recall" else cut
        if family != "iprec_at_recall" and not cut.isdigit():
            return name
        return f"{_TREC_EVAL_CUT[family]}@{text}"
    return name


def is_measure_name(name: str) -> bool:
    """Tell whether ``name`` names a retrieval measure: ``trec_eval``'s or ``ir_measures``'.

    ``map``, ``P_10``, ``ndcg_cut_10``, ``gm_map``, ``nDCG@10`` and ``AP`` do; ``bm25``,
    ``score`` and a ``trec_eval``-like name that means nothing (``my_run``) do not.

    Examples
    --------
    >>> is_measure_name("ndcg_cut_10"), is_measure_name("bm25")
    (True, False)
    """
    if name in TREC_EVAL_ONLY:
        return True
    translated = from_trec_eval_name(name)
    if translated == name and "_" in name:
        return False
    try:
        parse_measure(translated)
    except MeasureError:
        return False
    return True


def to_trec_eval_name(measure: str) -> str:
    """Translate an ``ir_measures`` string into the ``trec_eval`` name.

    The inverse of :func:`from_trec_eval_name`; strings without a ``trec_eval`` name
    are returned unchanged.

    Examples
    --------
    >>> to_trec_eval_name("nDCG@10")
    'ndcg_cut_10'
    """
    for trec, ours in _TREC_EVAL_FIXED.items():
        if measure == ours:
            return trec
    name, sep, cut = measure.partition("@")
    if sep:
        for family, ours in _TREC_EVAL_CUT.items():
            if name == ours:
                if family == "iprec_at_recall":
                    return f"{family}_{float(cut):.2f}"
                return f"{family}_{cut}"
    return measure


@lru_cache(maxsize=1024)
def canonical_measure(name: str) -> str:
    """Return the canonical spelling of a measure name: the one label every check sees.

    ``trec_eval`` names are translated (``ndcg_cut_10`` -> ``nDCG@10``, ``P_10`` ->
    ``P@10``, ``recip_rank`` -> ``RR``), ``ir_measures`` strings and their aliases are
    normalised through its parser (``"P(rel=1)@10"`` -> ``"P@10"``, ``"MAP"`` -> ``"AP"``),
    and a measure name spelled in another case is matched when it carries a cut-off or
    parameters (``"ndcg@10"`` -> ``"nDCG@10"``) or is a ``trec_eval`` name (``"MAP"``).
    Other names (``"accuracy"``, ``"score"``) are returned stripped.

    Examples
    --------
    >>> canonical_measure("map")
    'AP'
    >>> canonical_measure("P_10")
    'P@10'
    """
    text = str(name).strip()
    dotted = (  # P.10, recall.100: trec_eval names with a dot for the underscore
        from_trec_eval_name(text.replace(".", "_"))
        if "." in text and not any(c in text for c in "@(")
        else None
    )
    for candidate in (from_trec_eval_name(text), _case_folded(text), dotted):
        if candidate is None:
            continue
        try:
            return str(ir_measures.parse_measure(candidate))
        except Exception:  # not an ir_measures string: a plain name such as "accuracy"
            continue
    return text


def _case_folded(text: str) -> str | None:
    """``text`` with its measure name in ``ir_measures``' case, or ``None`` if none fits.

    Only names with a cut-off or parameters (``ndcg@10``, ``p(rel=2)@5``) and the fixed
    ``trec_eval`` names (``MAP``, ``NDCG``) are folded: a bare plain name such as ``r``
    may be anything.
    """
    head, sep, rest = text.partition("@")
    if not sep:
        head, sep, rest = text.partition("(")
    if not sep:
        fixed = {k.lower(): v for k, v in _TREC_EVAL_FIXED.items()}
        return fixed.get(text.lower())
    known = _registry_by_lower_name().get(head.strip().lower())
    return None if known is None else known + sep + rest


@lru_cache(maxsize=1)
def _registry_by_lower_name() -> dict[str, str]:
    names: dict[str, set[str]] = {}
    for key, measure in ir_measures.measures.registry.items():
        names.setdefault(key.lower(), set()).add(measure.NAME)  # aliases: NDCG -> nDCG
    # a lower-case spelling shared by two different measures stays ambiguous
    return {low: next(iter(found)) for low, found in names.items() if len(found) == 1}
