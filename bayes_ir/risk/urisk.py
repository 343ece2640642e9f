"""URisk: the mean risk-adjusted difference against the champion (Wang et al. 2012)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir.defaults import RISK_R
from bayes_ir.risk.adjusted import check_r, resolve_pair
from bayes_ir.table import ScoreTable

__all__ = ["URiskResult", "urisk"]

#: One line said under every risk table: the sign convention.
SIGN_NOTE = (
    "Sign convention (Benham et al. 2020): risk measures are multiplied by -1 and "
    "written with a minus (URisk-, TRisk-, ...), so higher = riskier."
)


@dataclass(frozen=True)
class URiskResult:
    r"""URisk of each challenger against the champion.

    Attributes
    ----------
    champion
        The baseline system.
    systems
        The challengers, in order.
    r
        Loss weight (:math:`r = 1 + \alpha`).
    urisk
        URisk of each system, in Wang et al.'s orientation (positive = better than
        the champion after penalising losses).
    n_topics
        Number of topics.
    collection, measure
        The block the scores came from.
    """

    champion: str
    systems: tuple[str, ...]
    r: float
    urisk: np.ndarray
    n_topics: int
    collection: str
    measure: str

    @property
    def urisk_minus(self) -> np.ndarray:
        """URisk- = -URisk: higher = riskier (the paper's convention)."""
        return -self.urisk

    def to_frame(self) -> pd.DataFrame:
        """Columns ``system, r, n_topics, urisk, urisk_minus`` (``urisk_minus = -urisk``)."""
        return pd.DataFrame(
            {
                "system": list(self.systems),
                "r": self.r,
                "n_topics": self.n_topics,
                "urisk": self.urisk,
                "urisk_minus": self.urisk_minus,
            }
        )

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Printable table of URisk- per system, with the sign convention stated."""
        lines = [
            f"URisk (r = {self.r:g}) against champion {self.champion!r}: "
            f"{self.n_topics} topics, collection {self.collection!r}, measure {self.measure!r}",
            SIGN_NOTE,
            f"{'system':<24} {'URisk-':>10}",
        ]
        lines += [
            f"{s:<24} {v:>10.4f}" for s, v in zip(self.systems, self.urisk_minus, strict=True)
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def urisk(
    table: ScoreTable,
    *,
    r: float = RISK_R,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    collection: str | None = None,
    measure: str | None = None,
) -> URiskResult:
    r"""URisk of each challenger against the champion.

    Parameters
    ----------
    table
        Complete per-topic scores.
    r
        Loss weight :math:`r = 1 + \alpha \ge 1` (``r = 1``: plain mean difference).
    champion
        Baseline; default: the table's champion.
    challengers
        Compared systems; default: the table's challengers (or all other systems).
    collection, measure
        The block to use when the table holds several.

    Returns
    -------
    URiskResult

    Notes
    -----
    .. math::

        \mathrm{URisk}_r = \frac{1}{n}\sum_{t=1}^n \delta^{(r)}_t, \qquad
        \delta^{(r)}_t = \begin{cases} \delta_t & \delta_t \ge 0 \\ r\,\delta_t &
        \delta_t < 0\end{cases},\quad \delta_t = x_t - b_t,

    which is Wang et al.'s :math:`U_{RISK} = (\mathrm{Reward} - (1+\alpha)\,
    \mathrm{Loss})/n` with :math:`r = 1 + \alpha`. Reported tables use
    :math:`\mathrm{URisk}^- = -\mathrm{URisk}` (Benham et al. 2020).

    References
    ----------
    Wang, L., Bennett, P. N., and Collins-Thompson, K. (2012). Robust ranking models
    via risk-sensitive optimization. *Proceedings of SIGIR 2012*, 761-770.
    doi:10.1145/2348283.2348385

    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033
    """
    r = check_r(r)
    pair = resolve_pair(
        table,
        champion=champion,
        challengers=challengers,
        collection=collection,
        measure=measure,
        method="URisk",
    )
    adjusted = pair.adjusted(r)
    return URiskResult(
        **pair.labels(),
        r=r,
        urisk=adjusted.mean(axis=0),
    )
