r"""Risk-adjusted score differences and risk-adjusted scores against a champion.

Every risk measure of :mod:`bayes_ir.risk` starts from the per-topic difference
between a challenger and the champion, with losses weighted by a loss weight
:math:`r \ge 1`. This module computes those differences (the kernel), and the
risk-adjusted *scores* (champion plus adjusted difference) that the Bayesian
BRisk model is fitted to.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.defaults import RISK_R
from bayes_ir.errors import InsufficientDataError, ScoreTableError
from bayes_ir.roles import check_known
from bayes_ir.table import ScoreTable

__all__ = [
    "risk_adjusted_differences",
    "risk_adjusted_scores",
    "risk_measure_name",
]


def check_r(r: float) -> float:
    """Return the loss weight ``r = 1 + alpha`` as a float, or raise :class:`OptionError`.

    ``r`` must be a finite real number of at least 1 and at most
    :data:`bayes_ir.defaults.MAX_RISK_WEIGHT` (:func:`bayes_ir.validate.finite_float`).
    """
    return validate.finite_float(
        "the loss weight r (= 1 + alpha)", r, minimum=1.0, maximum=defaults.MAX_RISK_WEIGHT
    )


def constant_columns(adjusted: np.ndarray) -> np.ndarray:
    """Flag the columns that hold the same value on every topic, e.g. identical systems.

    Same up to rounding: a spread of at most ``1e-12`` times the column's largest
    absolute value. TRisk and the BCa interval are undefined for such a column.
    """
    adjusted = np.asarray(adjusted, dtype=float)
    return np.ptp(adjusted, axis=0) <= 1e-12 * np.abs(adjusted).max(axis=0)


def _adjust(delta: np.ndarray, r: float) -> np.ndarray:
    """Risk-adjust differences: ``delta`` where ``delta >= 0``, ``r * delta`` otherwise."""
    delta = np.asarray(delta, dtype=float)
    return np.where(delta >= 0.0, delta, r * delta)


class PairLabels(TypedDict):
    """Fields every pairwise risk result carries (see :meth:`_Pair.labels`)."""

    champion: str
    systems: tuple[str, ...]
    n_topics: int
    collection: str
    measure: str


@dataclass(frozen=True)
class _Pair:
    """The topic x system matrix of one block, the champion and the compared systems."""

    matrix: xr.DataArray
    champion: str
    challengers: tuple[str, ...]
    collection: str
    measure: str

    @property
    def champion_scores(self) -> np.ndarray:
        return self.matrix.sel(system=self.champion).to_numpy()

    def scores(self, systems: Iterable[str] | None = None) -> np.ndarray:
        """Topic x system array of the given systems (default: the challengers)."""
        names = list(self.challengers if systems is None else systems)
        return self.matrix.sel(system=names).to_numpy()

    def labels(self) -> PairLabels:
        """Fields every pairwise result carries: champion, systems, size and provenance."""
        return {
            "champion": self.champion,
            "systems": self.challengers,
            "n_topics": int(self.matrix.sizes["topic"]),
            "collection": self.collection,
            "measure": self.measure,
        }

    def adjusted(self, r: float, systems: Iterable[str] | None = None) -> np.ndarray:
        """Topic x system risk-adjusted differences against the champion."""
        return _adjust(self.scores(systems) - self.champion_scores[:, None], r)


def resolve_pair(
    table: ScoreTable,
    *,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    collection: str | None = None,
    measure: str | None = None,
    method: str = "risk",
) -> _Pair:
    """Pick the block, champion and compared systems; check completeness and size.

    ``champion`` defaults to the table's champion; ``challengers`` to the table's
    challengers, or every other system when the table has no roles or no challengers.
    """
    if not isinstance(table, ScoreTable):
        raise TypeError(f"expected a ScoreTable, got {type(table).__name__}")
    mat = table.matrix(collection=collection, measure=measure)
    systems = [str(s) for s in mat["system"].to_numpy()]
    if champion is None:
        if table.roles is None:
            raise ScoreTableError(
                f"{method} needs a champion: pass champion=... or call "
                "table.with_roles(champion=...) first",
                source=table.source,
            )
        champion = table.champion
    check_known([champion], systems)
    if challengers is None:
        chal = list(table.roles.challengers) if table.roles is not None else []
        if champion != (table.roles.champion if table.roles is not None else None):
            chal = []
        if not chal:
            chal = [s for s in systems if s != champion]
    elif isinstance(challengers, str):
        chal = [challengers]
    else:
        chal = list(challengers)
    check_known(chal, systems)
    if champion in chal:
        raise ScoreTableError(
            f"{champion!r} is the champion and cannot also be compared against itself",
            source=table.source,
        )
    if not chal:
        raise InsufficientDataError(f"{method} needs at least one system besides the champion")
    used = mat.sel(system=[champion, *chal])
    if bool(np.isnan(used.to_numpy()).any()):
        bad = [s for s in [champion, *chal] if bool(used.sel(system=s).isnull().any())]
        raise ScoreTableError(
            f"{method} needs complete scores; system(s) {', '.join(map(repr, bad))} lack "
            "some topics (load with missing='intersect')",
            source=table.source,
        )
    validate.require_topics(
        mat.sizes["topic"], defaults.MIN_TOPICS_RISK, method=method, where=table.source
    )
    return _Pair(
        matrix=mat,
        champion=champion,
        challengers=tuple(chal),
        collection=str(mat.attrs["collection"]),
        measure=str(mat.attrs["measure"]),
    )


def risk_measure_name(measure: str, r: float) -> str:
    """Name of a risk-adjusted measure, e.g. ``"AP~risk(r=5)"``."""
    return f"{measure}~risk(r={check_r(r):g})"


def risk_adjusted_differences(
    table: ScoreTable,
    *,
    r: float = RISK_R,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    collection: str | None = None,
    measure: str | None = None,
) -> xr.DataArray:
    r"""Per-topic risk-adjusted differences of each challenger against the champion.

    Parameters
    ----------
    table
        Complete scores of one collection and measure (or pass ``collection`` /
        ``measure`` to choose one block).
    r
        Loss weight :math:`r = 1 + \alpha \ge 1`; ``r = 1`` means no risk adjustment.
    champion
        The baseline system; default: the table's champion.
    challengers
        Systems compared against the champion; default: the table's challengers, or
        every other system when the table has none.
    collection, measure
        The block to use when the table holds several.

    Returns
    -------
    xarray.DataArray
        dims ``("topic", "system")`` (the challengers), attrs ``champion``, ``r``,
        ``collection``, ``measure``.

    Notes
    -----
    With :math:`\delta_t = x_t - b_t` the difference between challenger and champion
    on topic :math:`t`,

    .. math::

        \delta^{(r)}_t = \begin{cases} \delta_t & \delta_t \ge 0 \\
                                      r\,\delta_t & \delta_t < 0 \end{cases}

    (Wang et al. 2012 write the loss weight as :math:`1 + \alpha`; Benham et al.
    2020 fold it into :math:`r \in \{1, 2, 5, 10\}`).

    References
    ----------
    Wang, L., Bennett, P. N., and Collins-Thompson, K. (2012). Robust ranking models
    via risk-sensitive optimization. *Proceedings of SIGIR 2012*, 761-770.
    doi:10.1145/2348283.2348385

    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033

    Examples
    --------
    >>> import numpy as np
    >>> from bayes_ir.table import ScoreTable
    >>> t = ScoreTable.from_matrix(
    ...     np.array([[0.50, 0.45], [0.20, 0.30], [0.40, 0.40]]), systems=["base", "new"]
    ... )
    >>> risk_adjusted_differences(t, r=2, champion="base").values.ravel().round(2).tolist()
    [-0.1, 0.1, 0.0]
    """
    r = check_r(r)
    pair = resolve_pair(
        table,
        champion=champion,
        challengers=challengers,
        collection=collection,
        measure=measure,
        method="risk adjustment",
    )
    out = pair.matrix.sel(system=list(pair.challengers)).copy(data=pair.adjusted(r))
    out.name = "adjusted_difference"
    out.attrs = {
        "champion": pair.champion,
        "r": r,
        "collection": pair.collection,
        "measure": pair.measure,
    }
    return out


def risk_adjusted_scores(
    table: ScoreTable,
    *,
    r: float = RISK_R,
    champion: str | None = None,
    collection: str | None = None,
    measure: str | None = None,
) -> ScoreTable:
    r"""Return the table with every system's scores risk-adjusted against the champion.

    The champion keeps its scores; every other system (challengers and artifacts)
    gets :math:`b_t + \delta^{(r)}_t` on topic :math:`t`. This is the input of the
    BRisk hierarchical model (Benham et al. 2020, Section 4).

    Parameters
    ----------
    table
        Complete scores; roles, when set, are carried over.
    r
        Loss weight :math:`r = 1 + \alpha \ge 1`.
    champion
        The baseline; default: the table's champion.
    collection, measure
        The block to use when the table holds several.

    Returns
    -------
    ScoreTable
        One block, measure renamed to ``"<measure>~risk(r=<r>)"`` (e.g.
        ``"AP~risk(r=5)"``); scores may fall below the measure's range (built with
        ``check_range=False``).

    Notes
    -----
    :math:`\tilde x_t = b_t + \delta^{(r)}_t`, so a challenger scoring 0.45 against a
    champion's 0.50 with :math:`r = 2` gets 0.40.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033
    """
    r = check_r(r)
    if champion is None and table.roles is not None:
        champion = table.champion
    pair = resolve_pair(
        table,
        champion=champion,
        collection=collection,
        measure=measure,
        challengers=[s for s in table.systems if s != champion],
        method="risk adjustment",
    )
    others = list(pair.challengers)
    base = pair.champion_scores
    adjusted = base[:, None] + pair.adjusted(r, others)
    wide = pd.DataFrame(
        np.column_stack([base, adjusted]),
        index=pair.matrix["topic"].to_numpy(),
        columns=[pair.champion, *others],
    )
    long = wide.rename_axis(index="topic", columns="system").stack().rename("score")
    frame = long.reset_index()
    frame["collection"] = pair.collection
    frame["measure"] = risk_measure_name(pair.measure, r)
    out = ScoreTable.from_frame(
        frame,
        source=f"{table.source} (risk-adjusted, r={r:g})",
        check_range=False,
        notes=table.notes,
    )
    if table.roles is not None and table.champion == pair.champion:
        roles = table.roles
        return out.with_roles(
            champion=roles.champion,
            challengers=list(roles.challengers),
            artifacts=list(roles.artifacts) if roles.artifacts else None,
        )
    return out.with_roles(champion=pair.champion, challengers=others)
