"""Risk measures as strings: ``parse_risk("URisk(r=5)")``, and per-topic values.

In the spirit of ir_measures' ``parse_measure``: a spec names the measure and its
parameters, its ``repr`` parses back to an equal spec, and :func:`iter_risk`
yields one :class:`TopicRisk` named tuple per (topic, system).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from bayes_ir.defaults import RISK_R, TRISK_SD
from bayes_ir.errors import MeasureError, OptionError
from bayes_ir.risk.adjusted import check_r, resolve_pair
from bayes_ir.risk.trisk import _trisk, _trisk_topics, check_sd
from bayes_ir.risk.zrisk import zrisk
from bayes_ir.table import ScoreTable

__all__ = ["RISK_MEASURES", "RiskSpec", "TopicRisk", "calc_risk", "iter_risk", "parse_risk"]

#: Measures, their parameters and their references.
RISK_MEASURES: dict[str, dict[str, str]] = {
    "URisk": {
        "description": "mean risk-adjusted difference against the champion",
        "parameters": "r: loss weight >= 1 (r = 1 + alpha); alpha: alternative to r",
        "reference": "Wang, Bennett and Collins-Thompson (2012), SIGIR",
    },
    "TRisk": {
        "description": "URisk over its standard error (Student t, n - 1 df)",
        "parameters": "r (or alpha); sd: population (default) or sample",
        "reference": "Dincer, Macdonald and Ounis (2014), SIGIR",
    },
    "ZRisk": {
        "description": "sum of z-scores against expected scores of a system x topic matrix",
        "parameters": "r (or alpha): weight of negative z",
        "reference": "Dincer, Macdonald and Ounis (2016), SIGIR",
    },
    "GeoRisk": {
        "description": "geometric mean of the mean score and Phi(ZRisk / c)",
        "parameters": "r (or alpha): weight of negative z",
        "reference": "Dincer, Macdonald and Ounis (2016), SIGIR",
    },
}
_NAMES = {name.lower(): name for name in RISK_MEASURES}
_SPEC_RE = re.compile(r"^\s*([A-Za-z_-]+)\s*(?:\((.*)\))?\s*$")


class TopicRisk(NamedTuple):
    """Per-topic value of a risk measure, in the measure's own orientation.

    ``value`` is the risk-adjusted difference (URisk), that difference over its SD
    (TRisk, rmit-ir/trisk's exploratory mode) or the weighted z-score (ZRisk):
    positive = better than the baseline. (Reported tables flip the sign.)
    """

    topic: str
    system: str
    risk: str
    value: float


@dataclass(frozen=True)
class RiskSpec:
    """A parsed risk measure: name, loss weight ``r`` and (TRisk) the SD kind.

    ``repr(spec)`` parses back: ``parse_risk(repr(spec)) == spec``.
    """

    name: str
    r: float = RISK_R
    sd: str | None = None

    def __post_init__(self) -> None:
        if self.name not in RISK_MEASURES:
            raise MeasureError(
                f"unknown risk measure {self.name!r}: choose one of {', '.join(RISK_MEASURES)}"
            )
        object.__setattr__(self, "r", check_r(self.r))
        if self.name == "TRisk":
            object.__setattr__(self, "sd", check_sd(self.sd or TRISK_SD))
        elif self.sd is not None:
            raise MeasureError(f"{self.name} takes no sd parameter")

    def __repr__(self) -> str:
        params = f"r={self.r:g}"
        if self.name == "TRisk":
            params += f",sd={self.sd}"
        return f"{self.name}({params})"

    __str__ = __repr__

    @property
    def per_topic(self) -> bool:
        """Whether :func:`iter_risk` can decompose the measure by topic."""
        return self.name != "GeoRisk"


def parse_risk(spec: str | RiskSpec) -> RiskSpec:
    """Parse a risk measure string such as ``"URisk(r=5)"`` or ``"TRisk(alpha=5,sd=sample)"``.

    Parameters
    ----------
    spec
        ``Name`` or ``Name(key=value,...)``; names are case-insensitive (``URisk``,
        ``TRisk``, ``ZRisk``, ``GeoRisk``). Keys: ``r`` (loss weight >= 1) or
        ``alpha`` (``r = 1 + alpha``), and for TRisk ``sd`` (``population`` or
        ``sample``). A missing ``r`` means :data:`bayes_ir.defaults.RISK_R`.

    Returns
    -------
    RiskSpec

    Raises
    ------
    MeasureError
        For unknown names, keys or values.

    Examples
    --------
    >>> parse_risk("urisk(alpha=4)")
    URisk(r=5)
    >>> parse_risk(repr(parse_risk("TRisk(r=2)")))
    TRisk(r=2,sd=population)
    """
    if isinstance(spec, RiskSpec):
        return spec
    match = _SPEC_RE.match(str(spec))
    if match is None:
        raise MeasureError(f"cannot parse risk measure {spec!r}; expected e.g. 'URisk(r=5)'")
    name = _NAMES.get(match.group(1).lower().replace("-", ""))
    if name is None:
        raise MeasureError(
            f"unknown risk measure {match.group(1)!r}: choose one of {', '.join(RISK_MEASURES)}"
        )
    params: dict[str, str] = {}
    body = (match.group(2) or "").strip()
    for item in filter(None, (p.strip() for p in body.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or key not in ("r", "alpha", "sd"):
            raise MeasureError(f"{spec!r}: unknown parameter {item!r} (use r=, alpha= or sd=)")
        if key in params:
            raise MeasureError(f"{spec!r}: parameter {key!r} given twice")
        params[key] = value.strip().strip("'\"")
    if "r" in params and "alpha" in params:
        raise MeasureError(f"{spec!r}: give r or alpha, not both (r = 1 + alpha)")
    try:
        if "alpha" in params:
            r = 1.0 + float(params["alpha"])
        else:
            r = float(params.get("r", RISK_R))
    except ValueError:
        raise MeasureError(f"{spec!r}: r and alpha must be numbers") from None
    try:
        return RiskSpec(name=name, r=r, sd=params.get("sd"))
    except OptionError as exc:
        raise MeasureError(f"{spec!r}: {exc}") from None


def iter_risk(
    table: ScoreTable,
    spec: str | RiskSpec,
    *,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    collection: str | None = None,
    measure: str | None = None,
) -> Iterator[TopicRisk]:
    r"""Yield per-topic values of a risk measure, one :class:`~bayes_ir.risk.spec.TopicRisk` a cell.

    Parameters
    ----------
    table
        Complete per-topic scores.
    spec
        A :class:`RiskSpec` or a string for :func:`parse_risk`.
    champion, challengers
        Baseline and compared systems (defaults as in
        :func:`~bayes_ir.risk.urisk.urisk`). For ZRisk the z-scores are computed over
        the whole table (all systems) and yielded for the champion and challengers.
    collection, measure
        The block to use when the table holds several.

    Yields
    ------
    TopicRisk
        ``(topic, system, repr(spec), value)``, systems in order, topics within.
        URisk: :math:`\delta^{(r)}_t`; TRisk: :math:`\delta^{(r)}_t / s`; ZRisk:
        :math:`z_{ij}`, times ``r`` when negative. Their sum (URisk, ZRisk) or mean
        times :math:`\sqrt n` (TRisk) is the aggregate measure.

    Raises
    ------
    MeasureError
        For GeoRisk, which has no per-topic decomposition.
    """
    spec = parse_risk(spec)
    if not spec.per_topic:
        raise MeasureError(f"{spec!r} has no per-topic values; use calc_risk for the aggregate")
    pair = resolve_pair(
        table,
        champion=champion,
        challengers=challengers,
        collection=collection,
        measure=measure,
        method=spec.name,
    )
    topics = [str(t) for t in pair.matrix["topic"].to_numpy()]
    label = repr(spec)
    if spec.name == "ZRisk":
        res = zrisk(table, r=spec.r, collection=collection, measure=measure)
        systems = [pair.champion, *pair.challengers]
        z = res.z.sel(system=systems).to_numpy()
        values = np.where(z < 0, spec.r * z, z).T  # topic x system
    else:
        systems = list(pair.challengers)
        values = pair.adjusted(spec.r)
        if spec.name == "TRisk":
            values = _trisk_topics(values, spec.sd or TRISK_SD, systems)
    for j, system in enumerate(systems):
        for i, topic in enumerate(topics):
            yield TopicRisk(topic, system, label, float(values[i, j]))


def calc_risk(
    table: ScoreTable,
    specs: str | RiskSpec | Iterable[str | RiskSpec],
    *,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    collection: str | None = None,
    measure: str | None = None,
) -> pd.DataFrame:
    """Aggregate values of one or more risk measures per system.

    Returns
    -------
    pandas.DataFrame
        Columns ``system, risk, value, value_minus``: ``value`` in the measure's own
        orientation (positive = good), ``value_minus = -value`` (higher = riskier,
        Benham et al. 2020). URisk/TRisk rows for the challengers; ZRisk/GeoRisk rows
        for the champion and the challengers (computed over all systems of the table).
    """
    if isinstance(specs, (str, RiskSpec)):
        specs = [specs]
    rows = []
    for spec in map(parse_risk, specs):
        pair = resolve_pair(
            table,
            champion=champion,
            challengers=challengers,
            collection=collection,
            measure=measure,
            method=spec.name,
        )
        if spec.name in ("ZRisk", "GeoRisk"):
            res = zrisk(table, r=spec.r, collection=collection, measure=measure)
            frame = res.to_frame().set_index("system")
            col = "zrisk" if spec.name == "ZRisk" else "georisk"
            for s in (pair.champion, *pair.challengers):
                rows.append((s, repr(spec), float(frame.loc[s, col])))
        else:
            adjusted = pair.adjusted(spec.r)
            if spec.name == "URisk":
                values = adjusted.mean(axis=0)
            else:
                values = _trisk(adjusted, spec.sd or TRISK_SD, pair.challengers)[2]
            rows += [
                (s, repr(spec), float(v)) for s, v in zip(pair.challengers, values, strict=True)
            ]
    out = pd.DataFrame(rows, columns=["system", "risk", "value"])
    out["value_minus"] = -out["value"]
    return out
