"""Reliability specs as strings, as in ir_measures: ``"MSQD"``, ``"KD(T=500)"``, ``"tau_ap"``.

A spec names either a rank-correlation coefficient (``tau``, ``tau_ap``) or an
estimator of the expected correlation with the true ranking (``ML``, ``MSQD``,
``RES``, ``KD``, ``SHw``, ``SHwo``). Its repr parses back to an equal spec::

    >>> spec = parse_reliability("KD(T=500)")
    >>> spec
    KD(T=500)
    >>> parse_reliability(repr(spec)) == spec
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType

from bayes_ir.defaults import RELIABILITY_SAMPLES
from bayes_ir.errors import MeasureError

__all__ = ["CORRELATIONS", "ESTIMATORS", "ReliabilitySpec", "parse_reliability"]

_URBANO = (
    "J. Urbano and M. Marrero, Toward Estimating the Rank Correlation between the Test "
    "Collection Results and the True System Performance, SIGIR 2016"
)


@dataclass(frozen=True)
class _Definition:
    kind: str  # "correlation" or "estimator"
    description: str
    defaults: dict[str, int] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    reference: str = _URBANO


_SH_PARAMS = {
    "points": "number of subset sizes between 1 and n/2",
    "trials": "maximum split-half trials per subset size",
    "max_obs": "maximum number of split-half observations in all",
}
_DEFINITIONS: dict[str, _Definition] = {
    "tau": _Definition(
        "correlation",
        "Kendall tau between two rankings",
        reference="M. G. Kendall, A new measure of rank correlation, Biometrika 30, 1938",
    ),
    "tau_ap": _Definition(
        "correlation",
        "AP rank correlation: swaps near the top cost more (asymmetric: truth first)",
        reference=(
            "E. Yilmaz, J. A. Aslam and S. Robertson, A new rank correlation coefficient "
            "for information retrieval, SIGIR 2008"
        ),
    ),
    "ML": _Definition("estimator", "Student t with the bias-corrected sample SD"),
    "MSQD": _Definition("estimator", "Student t with the minimum squared quantile deviation SD"),
    "RES": _Definition(
        "estimator",
        "fraction of bootstrap means below 0",
        {"T": RELIABILITY_SAMPLES},
        {"T": "bootstrap samples"},
    ),
    "KD": _Definition(
        "estimator",
        "fraction of means of samples from a kernel density estimate below 0",
        {"T": RELIABILITY_SAMPLES},
        {"T": "Monte Carlo samples"},
    ),
    "SHw": _Definition(
        "estimator",
        "split-half with replacement, exponential fit extrapolated to n topics",
        {"points": 20, "trials": 100, "max_obs": 2000},
        _SH_PARAMS,
    ),
    "SHwo": _Definition(
        "estimator",
        "split-half without replacement, exponential fit extrapolated to n topics",
        {"points": 20, "trials": 100, "max_obs": 2000},
        _SH_PARAMS,
    ),
}
_ALIASES = {
    "sh(w)": "SHw",
    "sh(w/o)": "SHwo",
    "tauap": "tau_ap",
    "tau-ap": "tau_ap",
    "kendall": "tau",
}
_CANONICAL = {name.lower(): name for name in _DEFINITIONS}

#: Names of the correlation coefficients.
CORRELATIONS: tuple[str, ...] = tuple(k for k, d in _DEFINITIONS.items() if d.kind == "correlation")
#: Names of the estimators of the expected correlation with the true ranking.
ESTIMATORS: tuple[str, ...] = tuple(k for k, d in _DEFINITIONS.items() if d.kind == "estimator")

_SPEC_RE = re.compile(r"^\s*([A-Za-z_][\w\-]*)\s*(?:\((.*)\))?\s*$")


@dataclass(frozen=True)
class ReliabilitySpec:
    """A parsed reliability spec: a name and its integer parameters (defaults filled in).

    Attributes
    ----------
    name
        Canonical name (``"MSQD"``, ``"KD"``, ``"SHwo"``, ``"tau_ap"``, ...).
    params
        Parameter values, sorted by name, defaults included.
    """

    name: str
    params: tuple[tuple[str, int], ...] = ()

    @property
    def kind(self) -> str:
        """``"correlation"`` or ``"estimator"``."""
        return _DEFINITIONS[self.name].kind

    @property
    def description(self) -> str:
        """One-line description."""
        return _DEFINITIONS[self.name].description

    @property
    def reference(self) -> str:
        """Citation of the method."""
        return _DEFINITIONS[self.name].reference

    @property
    def stochastic(self) -> bool:
        """Whether the estimate depends on a seed."""
        return self.name in ("RES", "KD", "SHw", "SHwo")

    @property
    def label(self) -> str:
        """Name as written in the paper (``SH(w/o)`` for ``SHwo``)."""
        return {"SHw": "SH(w)", "SHwo": "SH(w/o)"}.get(self.name, self.name)

    def get(self, key: str) -> int:
        """Value of parameter ``key``."""
        return dict(self.params)[key]

    def __repr__(self) -> str:
        defaults = _DEFINITIONS[self.name].defaults
        changed = [f"{k}={v}" for k, v in self.params if defaults.get(k) != v]
        return f"{self.name}({', '.join(changed)})" if changed else self.name

    __str__ = __repr__


def parse_reliability(spec: str | ReliabilitySpec) -> ReliabilitySpec:
    """Parse a reliability spec string such as ``"MSQD"``, ``"KD(T=500)"`` or ``"SH(w/o)"``.

    Parameters
    ----------
    spec
        The string (names are case-insensitive; ``SH(w)``/``SH(w/o)`` are accepted
        for ``SHw``/``SHwo``), or an already parsed spec.

    Returns
    -------
    ReliabilitySpec

    Raises
    ------
    MeasureError
        Unknown name, unknown parameter or a value that is not a positive integer.
    """
    if isinstance(spec, ReliabilitySpec):
        return spec
    text = str(spec).strip()
    alias = _ALIASES.get(text.lower().replace(" ", ""))
    if alias is not None:
        text = alias
    match = _SPEC_RE.match(text)
    if match is None:
        raise MeasureError(f"cannot parse reliability spec {spec!r} (e.g. 'MSQD', 'KD(T=1000)')")
    raw_name, raw_params = match.groups()
    name = _CANONICAL.get(raw_name.lower()) or _ALIASES.get(raw_name.lower())
    if name is None:
        known = ", ".join(list(ESTIMATORS) + list(CORRELATIONS))
        raise MeasureError(f"unknown reliability spec {raw_name!r}; known: {known}")
    definition = _DEFINITIONS[name]
    params = dict(definition.defaults)
    for item in filter(None, (p.strip() for p in (raw_params or "").split(","))):
        key, sep, value = (s.strip() for s in item.partition("="))
        if not sep or key not in definition.defaults:
            allowed = ", ".join(definition.defaults) or "none"
            raise MeasureError(f"{name}: unknown parameter {item!r} (parameters: {allowed})")
        try:
            number = int(value)
        except ValueError:
            raise MeasureError(f"{name}: {key} must be an integer, got {value!r}") from None
        if number < 1:
            raise MeasureError(f"{name}: {key} must be positive, got {number}")
        params[key] = number
    return ReliabilitySpec(name, tuple(sorted(params.items())))


#: Read-only view of the definitions: name -> (kind, description, defaults, params, reference).
DEFINITIONS = MappingProxyType(_DEFINITIONS)
