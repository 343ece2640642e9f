"""ZRisk and GeoRisk: risk against the expected score of every system on every topic.

Dincer, Macdonald and Ounis (2016) replace the single baseline of URisk/TRisk by
the *expected* score of system :math:`i` on topic :math:`j` under independence of
rows and columns of the system x topic matrix (as in a chi-square table).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayes_ir import defaults, validate
from bayes_ir.defaults import RISK_R
from bayes_ir.errors import InsufficientDataError, ScoreTableError
from bayes_ir.risk.adjusted import check_r
from bayes_ir.risk.urisk import SIGN_NOTE
from bayes_ir.roles import check_known
from bayes_ir.table import ScoreTable

__all__ = ["ZRiskResult", "zrisk"]


def _z_scores(x: np.ndarray) -> np.ndarray:
    """z_ij of a system x topic matrix (rows i systems, columns j topics).

    Cells whose expected score is 0 (a topic on which every system scores 0) get
    z = 0: they carry no information about any system.
    """
    x = np.asarray(x, dtype=float)
    s = x.sum(axis=1, keepdims=True)  # S_i, system totals
    t = x.sum(axis=0, keepdims=True)  # T_j, topic totals
    n = x.sum()
    e = s * t / n
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(e > 0, (x - e) / np.sqrt(e), 0.0)
    return z


def _zrisk(x: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Z matrix, ZRisk and GeoRisk of each row (system) of a system x topic matrix."""
    z = _z_scores(x)
    c = x.shape[1]
    weighted = np.where(z < 0, r * z, z)
    zr = weighted.sum(axis=1)
    geo = np.sqrt(x.mean(axis=1) * stats.norm.cdf(zr / c))
    return z, zr, geo


@dataclass(frozen=True)
class ZRiskResult:
    r"""ZRisk and GeoRisk of every system of a system x topic matrix.

    Attributes
    ----------
    systems
        Systems scored (rows :math:`i` of the matrix).
    r
        Loss weight :math:`r = 1 + \alpha` on negative z.
    mean
        Mean score of each system.
    zrisk, georisk
        ZRisk and GeoRisk in Dincer et al.'s orientation (higher = better).
    z
        The z-scores, dims ``("system", "topic")``.
    n_topics
        :math:`c`, the number of topics.
    collection, measure
        The block the scores came from.
    """

    systems: tuple[str, ...]
    r: float
    mean: np.ndarray
    zrisk: np.ndarray
    georisk: np.ndarray
    z: xr.DataArray
    n_topics: int
    collection: str
    measure: str

    def to_frame(self) -> pd.DataFrame:
        """Columns ``system, r, mean, zrisk, zrisk_minus, georisk, georisk_minus``."""
        return pd.DataFrame(
            {
                "system": list(self.systems),
                "r": self.r,
                "mean": self.mean,
                "zrisk": self.zrisk,
                "zrisk_minus": -self.zrisk,
                "georisk": self.georisk,
                "georisk_minus": -self.georisk,
            }
        )

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Printable ZRisk- and GeoRisk- per system."""
        lines = [
            f"ZRisk and GeoRisk (r = {self.r:g}) over {len(self.systems)} systems x "
            f"{self.n_topics} topics, collection {self.collection!r}, measure {self.measure!r}",
            SIGN_NOTE,
            f"{'system':<24} {'mean':>8} {'ZRisk-':>10} {'GeoRisk-':>10}",
        ]
        for i, s in enumerate(self.systems):
            lines.append(
                f"{s:<24} {self.mean[i]:>8.4f} {-self.zrisk[i]:>10.3f} {-self.georisk[i]:>10.4f}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def zrisk(
    table: ScoreTable,
    *,
    r: float = RISK_R,
    systems: Iterable[str] | None = None,
    collection: str | None = None,
    measure: str | None = None,
) -> ZRiskResult:
    r"""ZRisk and GeoRisk of every system, over the system x topic matrix.

    Parameters
    ----------
    table
        Complete, non-negative per-topic scores.
    r
        Loss weight on negative z-scores, :math:`r = 1 + \alpha \ge 1` (Dincer et al.
        write :math:`1 + \alpha`); ``r = 1`` makes ZRisk the plain sum of z.
    systems
        Systems forming the matrix; default: every system of the table (champion,
        challengers and artifacts). The expected scores depend on this set.
    collection, measure
        The block to use when the table holds several.

    Returns
    -------
    ZRiskResult

    Notes
    -----
    Index :math:`i` is the **system** (row) and :math:`j` the **topic** (column);
    the literature swaps them, so we state it. With :math:`x_{ij}` the score,
    :math:`S_i = \sum_j x_{ij}` (system totals), :math:`T_j = \sum_i x_{ij}` (topic
    totals), :math:`N = \sum_{ij} x_{ij}` and :math:`c` the number of topics:

    .. math::

        e_{ij} = \frac{S_i T_j}{N}, \qquad z_{ij} = \frac{x_{ij} - e_{ij}}{\sqrt{e_{ij}}},

        \mathrm{ZRisk}_i = \sum_j z_{ij} + \alpha \sum_{j:\,z_{ij} < 0} z_{ij}
                         = \sum_{j:\,z_{ij}\ge 0} z_{ij} + r\sum_{j:\,z_{ij}<0} z_{ij},

        \mathrm{GeoRisk}_i = \sqrt{\frac{S_i}{c}\;\Phi\!\left(\frac{\mathrm{ZRisk}_i}{c}\right)}.

    Cells with :math:`e_{ij} = 0` (all systems score 0 on topic :math:`j`) get
    :math:`z_{ij} = 0`. Reported tables use :math:`\mathrm{ZRisk}^-` and
    :math:`\mathrm{GeoRisk}^-` (times -1, Benham et al. 2020).

    References
    ----------
    Dincer, B. T., Macdonald, C., and Ounis, I. (2016). Risk-sensitive evaluation and
    learning to rank using multiple baselines. *Proceedings of SIGIR 2016*, 483-492.
    doi:10.1145/2911451.2911511

    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033
    """
    r = check_r(r)
    if not isinstance(table, ScoreTable):
        raise TypeError(f"expected a ScoreTable, got {type(table).__name__}")
    mat = table.matrix(collection=collection, measure=measure)
    names = [str(s) for s in mat["system"].to_numpy()]
    if systems is not None:
        chosen = [systems] if isinstance(systems, str) else list(systems)
        check_known(chosen, names)
        mat = mat.sel(system=chosen)
        names = chosen
    if len(names) < 2:
        raise InsufficientDataError("ZRisk needs at least two systems")
    validate.require_topics(
        mat.sizes["topic"], defaults.MIN_TOPICS_RISK, method="ZRisk", where=table.source
    )
    x = mat.to_numpy().T  # rows i = systems, columns j = topics
    if np.isnan(x).any():
        raise ScoreTableError(
            "ZRisk needs complete scores (load with missing='intersect')", source=table.source
        )
    if (x < 0).any():
        raise ScoreTableError("ZRisk needs non-negative scores", source=table.source)
    if x.sum() <= 0:
        raise ScoreTableError("ZRisk needs some positive scores", source=table.source)
    z, zr, geo = _zrisk(x, r)
    return ZRiskResult(
        systems=tuple(names),
        r=r,
        mean=x.mean(axis=1),
        zrisk=zr,
        georisk=geo,
        z=xr.DataArray(
            z,
            dims=("system", "topic"),
            coords={"system": names, "topic": mat["topic"].to_numpy()},
            name="z",
        ),
        n_topics=int(x.shape[1]),
        collection=str(mat.attrs["collection"]),
        measure=str(mat.attrs["measure"]),
    )
