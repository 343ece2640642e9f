"""TRisk: URisk standardised by its standard error, with a Student t test (Dincer et al. 2014)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
import pandas as pd
from scipy import stats

from bayes_ir import validate
from bayes_ir.defaults import RISK_R, TRISK_SD
from bayes_ir.errors import DataWarning
from bayes_ir.risk.adjusted import check_r, constant_columns, resolve_pair
from bayes_ir.risk.urisk import SIGN_NOTE
from bayes_ir.table import ScoreTable

__all__ = ["SD_LABELS", "TRiskResult", "trisk"]

SD = Literal["population", "sample"]
_DDOF = {"population": 0, "sample": 1}
#: How every table that prints TRisk names its SD convention.
SD_LABELS = {
    "population": "population SD (divide by n, as Dincer et al. 2014 and rmit-ir/trisk)",
    "sample": "sample SD (divide by n - 1, as Benham et al. 2020 and the one-sample t test)",
}


def check_sd(sd: str) -> SD:
    """Validate the ``sd`` option of TRisk."""
    return cast(SD, validate.choice("sd", sd, _DDOF))


def _sd(adjusted: np.ndarray, sd: str, systems: Sequence[str]) -> np.ndarray:
    """SD of each column; NaN, with a :class:`DataWarning`, where the column is constant.

    A constant column (:func:`~bayes_ir.risk.adjusted.constant_columns`) leaves TRisk
    undefined; dividing by the rounding residue of its SD would give absurd values such
    as -7e15.
    """
    s = adjusted.std(axis=0, ddof=_DDOF[sd])
    constant = constant_columns(adjusted)
    if constant.any():
        names = ", ".join(repr(n) for n, c in zip(systems, constant, strict=True) if c)
        warnings.warn(
            f"TRisk is undefined (NaN) for {names}: the risk-adjusted differences against "
            "the champion are the same on every topic (SD 0); URisk is still reported",
            DataWarning,
            stacklevel=4,
        )
    return np.where(constant, np.nan, s)


def _trisk(
    adjusted: np.ndarray, sd: str, systems: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """URisk, standard error, TRisk and two-sided p of each column of adjusted differences.

    TRisk and p are NaN for a column whose differences are constant (see :func:`_sd`).
    """
    n = adjusted.shape[0]
    u = adjusted.mean(axis=0)
    s = _sd(adjusted, sd, systems)
    se = np.where(np.isnan(s), 0.0, s) / np.sqrt(n)
    t = u / (s / np.sqrt(n))
    p = 2.0 * stats.t.sf(np.abs(t), df=n - 1)
    return u, se, t, p


def _trisk_topics(adjusted: np.ndarray, sd: str, systems: Sequence[str]) -> np.ndarray:
    """Per-topic TRisk (rmit-ir/trisk's exploratory mode): adjusted difference / SD."""
    return adjusted / _sd(adjusted, sd, systems)


@dataclass(frozen=True)
class TRiskResult:
    """TRisk of each challenger against the champion.

    Attributes
    ----------
    champion, systems, r, n_topics, collection, measure
        As in :class:`~bayes_ir.risk.urisk.URiskResult`.
    sd
        ``"population"`` (divide by n) or ``"sample"`` (divide by n - 1).
    urisk, se, trisk, p_value
        URisk, its standard error, TRisk = URisk / se and the two-sided p-value from
        Student's t with ``n_topics - 1`` df, all in Wang/Dincer orientation
        (positive = better than the champion).
    """

    champion: str
    systems: tuple[str, ...]
    r: float
    sd: str
    urisk: np.ndarray
    se: np.ndarray
    trisk: np.ndarray
    p_value: np.ndarray
    n_topics: int
    collection: str
    measure: str

    @property
    def df(self) -> int:
        """Degrees of freedom of the t test: number of topics minus one."""
        return self.n_topics - 1

    @property
    def trisk_minus(self) -> np.ndarray:
        """TRisk- = -TRisk: higher = riskier."""
        return -self.trisk

    def to_frame(self) -> pd.DataFrame:
        """Return one row per system.

        Columns ``system, r, sd, n_topics, urisk, urisk_minus, se, trisk, trisk_minus,
        df, p_value``.
        """
        return pd.DataFrame(
            {
                "system": list(self.systems),
                "r": self.r,
                "sd": self.sd,
                "n_topics": self.n_topics,
                "urisk": self.urisk,
                "urisk_minus": -self.urisk,
                "se": self.se,
                "trisk": self.trisk,
                "trisk_minus": self.trisk_minus,
                "df": self.df,
                "p_value": self.p_value,
            }
        )

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Printable table of URisk-, TRisk- and p per system."""
        lines = [
            f"TRisk (r = {self.r:g}, {SD_LABELS[self.sd]}) against champion {self.champion!r}: "
            f"{self.n_topics} topics, collection {self.collection!r}, measure {self.measure!r}",
            SIGN_NOTE,
            f"{'system':<24} {'URisk-':>9} {'se':>8} {f't(df = {self.df})':>12} {'p':>8}",
        ]
        for i, s in enumerate(self.systems):
            lines.append(
                f"{s:<24} {-self.urisk[i]:>9.4f} {self.se[i]:>8.4f} "
                f"{self.trisk_minus[i]:>12.3f} {self.p_value[i]:>8.4f}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def trisk(
    table: ScoreTable,
    *,
    r: float = RISK_R,
    sd: SD = TRISK_SD,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    collection: str | None = None,
    measure: str | None = None,
) -> TRiskResult:
    r"""TRisk of each challenger against the champion, with a Student t p-value.

    Parameters
    ----------
    table
        Complete per-topic scores.
    r
        Loss weight :math:`r = 1 + \alpha \ge 1`.
    sd
        ``"population"`` (default, :data:`bayes_ir.defaults.TRISK_SD`): divide by
        :math:`n`, as Dincer et al. (2014) and their reference implementation
        rmit-ir/trisk do; ``"sample"``: divide by :math:`n - 1`, as Benham et al.
        (2020) do (the textbook one-sample t statistic, ``scipy.stats.ttest_1samp``).
        The p-value uses :math:`n - 1` df either way; the convention is printed by
        :meth:`TRiskResult.summary` and kept in the ``sd`` column of ``to_frame()``.
    champion, challengers, collection, measure
        As in :func:`~bayes_ir.risk.urisk.urisk`.

    Returns
    -------
    TRiskResult

    Notes
    -----
    .. math::

        T_{\mathrm{Risk}} = \frac{\mathrm{URisk}_r}{s_{\delta^{(r)}}/\sqrt{n}},\qquad
        s^2_{\delta^{(r)}} = \frac{1}{n - d}\sum_t\big(\delta^{(r)}_t -
        \mathrm{URisk}_r\big)^2,

        p = 2\,P(T_{n-1} > |T_{\mathrm{Risk}}|),

    with :math:`d = 0` (population) or :math:`d = 1` (sample). rmit-ir/trisk's
    ``alpha`` is the loss weight minus one: its ``alpha = 5`` is ``r = 6`` here
    (checked on rb04 and TREC 2018, see ``tests/results/risk.py``). The reported
    :math:`T_{\mathrm{Risk}}^- = -T_{\mathrm{Risk}}` (Benham et al. 2020). When the
    differences are the same on every topic (:math:`s = 0`, e.g. identical systems)
    TRisk and p are undefined: NaN, with a :class:`~bayes_ir.errors.DataWarning`.

    References
    ----------
    Dincer, B. T., Macdonald, C., and Ounis, I. (2014). Hypothesis testing for the
    risk-sensitive evaluation of retrieval systems. *Proceedings of SIGIR 2014*,
    23-32. doi:10.1145/2600428.2609625

    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033

    Wang, L., Bennett, P. N., and Collins-Thompson, K. (2012). Robust ranking models
    via risk-sensitive optimization. *Proceedings of SIGIR 2012*, 761-770.
    doi:10.1145/2348283.2348385
    """
    r = check_r(r)
    sd = check_sd(sd)
    pair = resolve_pair(
        table,
        champion=champion,
        challengers=challengers,
        collection=collection,
        measure=measure,
        method="TRisk",
    )
    adjusted = pair.adjusted(r)
    u, se, t, p = _trisk(adjusted, sd, pair.challengers)
    return TRiskResult(
        **pair.labels(),
        r=r,
        sd=sd,
        urisk=u,
        se=se,
        trisk=t,
        p_value=p,
    )
