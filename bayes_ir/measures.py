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
_PLAIN_UNIT_INTERVAL = frozenset({"accuracy", "acc", "f1", "exact_match", "em", "map", "ndcg"})


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
        return ir_measures.parse_measure(measure)
    except Exception as exc:  # ir_measures raises bare ValueError/NameError/SyntaxError
        raise MeasureError(
            f"{measure!r} is not a measure ir_measures can parse ({exc}). "
            "Examples: 'nDCG@10', 'AP(rel=2)', 'P@10', 'R@1000', 'RR', 'Judged@10'."
        ) from exc


def measure_range(measure: str | None) -> tuple[float, float]:
    """Return the (lower, upper) range of a measure; ``(-inf, inf)`` when it is not known.

    Parameters
    ----------
    measure
        An ``ir_measures`` string, a plain name like ``"accuracy"``, or ``None``.

    Examples
    --------
    >>> measure_range("nDCG@10")
    (0.0, 1.0)
    >>> measure_range("my_custom_score")
    (-inf, inf)
    """
    if measure is None:
        return (-math.inf, math.inf)
    name = str(measure).strip()
    if name.lower() in _PLAIN_UNIT_INTERVAL:
        return (0.0, 1.0)
    try:
        parsed = ir_measures.parse_measure(name)
    except Exception:
        return (-math.inf, math.inf)
    if parsed.NAME in _UNIT_INTERVAL:
        return (0.0, 1.0)
    return (-math.inf, math.inf)
