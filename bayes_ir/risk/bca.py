"""BCa bootstrap confidence intervals of URisk, Bonferroni-corrected over the challengers."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bayes_ir import validate
from bayes_ir.defaults import BCA_RESAMPLES, RISK_R
from bayes_ir.defaults import ci_prob as _ci_prob
from bayes_ir.errors import DataWarning
from bayes_ir.risk.adjusted import check_r, constant_columns, resolve_pair
from bayes_ir.risk.urisk import SIGN_NOTE
from bayes_ir.table import ScoreTable

__all__ = ["BCaResult", "bca_urisk", "bonferroni_level"]


def bonferroni_level(ci_prob: float, k: int) -> float:
    r"""Per-interval confidence level that keeps family-wise coverage ``ci_prob`` over ``k``.

    Notes
    -----
    :math:`1 - (1 - \mathrm{ci\_prob})/k` (Bonferroni; Dunn 1961).

    References
    ----------
    Dunn, O. J. (1961). Multiple comparisons among means. *Journal of the American
    Statistical Association* 56(293), 52-64. doi:10.1080/01621459.1961.10482090
    """
    k = validate.positive_int("the number of comparisons k", k)
    return 1.0 - (1.0 - ci_prob) / k


#: Resamples x topics drawn at once (80 MB): more resamples are drawn in batches.
_BATCH_CELLS = 10_000_000


def _bca_one(adjusted: np.ndarray, level: float, n_resamples: int, rng) -> tuple[float, float]:
    size = adjusted.size
    res = stats.bootstrap(
        (adjusted,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=level,
        method="BCa",
        rng=rng,
        batch=None if n_resamples * size <= _BATCH_CELLS else max(1, _BATCH_CELLS // size),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def system_rng(seed: int, index: int) -> np.random.Generator:
    """Return the generator of the ``index``-th system: ``default_rng([seed, index])``."""
    return np.random.default_rng([int(seed), int(index)])


@dataclass(frozen=True)
class BCaResult:
    """BCa bootstrap intervals of URisk for each challenger.

    Attributes
    ----------
    champion, systems, r, n_topics, collection, measure
        As in :class:`~bayes_ir.risk.urisk.URiskResult`.
    urisk
        URisk of each system (positive = better than the champion).
    ci_lower, ci_upper
        BCa interval of URisk at ``level`` (Wang orientation).
    ci_prob
        Family-wise coverage asked for.
    level
        Per-interval confidence level actually used (Bonferroni-adjusted when
        ``bonferroni``).
    bonferroni
        Whether the intervals are corrected over ``len(systems)`` comparisons.
    n_resamples, seed
        Bootstrap settings.
    """

    champion: str
    systems: tuple[str, ...]
    r: float
    urisk: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    ci_prob: float
    level: float
    bonferroni: bool
    n_resamples: int
    seed: int
    n_topics: int
    collection: str
    measure: str

    @property
    def significant(self) -> np.ndarray:
        """True where the interval excludes 0."""
        return (self.ci_lower > 0) | (self.ci_upper < 0)

    def conf_int(self, *, minus: bool = True) -> pd.DataFrame:
        """Interval per system: ``estimate, ci_lower, ci_upper``; URisk- by default."""
        if minus:
            est, lo, hi = -self.urisk, -self.ci_upper, -self.ci_lower
        else:
            est, lo, hi = self.urisk, self.ci_lower, self.ci_upper
        return pd.DataFrame(
            {"estimate": est, "ci_lower": lo, "ci_upper": hi},
            index=pd.Index(self.systems, name="system"),
        )

    def to_frame(self) -> pd.DataFrame:
        """Return one row per system.

        Columns ``system, r, urisk, ci_lower, ci_upper, urisk_minus, ci_lower_minus,
        ci_upper_minus, level, significant``.
        """
        return pd.DataFrame(
            {
                "system": list(self.systems),
                "r": self.r,
                "urisk": self.urisk,
                "ci_lower": self.ci_lower,
                "ci_upper": self.ci_upper,
                "urisk_minus": -self.urisk,
                "ci_lower_minus": -self.ci_upper,
                "ci_upper_minus": -self.ci_lower,
                "level": self.level,
                "significant": self.significant,
            }
        )

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Printable intervals of URisk- per system."""
        corr = (
            f"Bonferroni over {len(self.systems)} challenger(s): each interval at {self.level:.4g}"
            if self.bonferroni
            else "no multiplicity correction"
        )
        lines = [
            f"BCa bootstrap of URisk (r = {self.r:g}) against {self.champion!r}: "
            f"{self.n_topics} topics, {self.n_resamples} resamples, seed {self.seed}",
            f"family-wise {self.ci_prob:.0%}; {corr}",
            SIGN_NOTE,
            f"{'system':<24} {'URisk-':>9} {'lower':>9} {'upper':>9}",
        ]
        ci = self.conf_int()
        for s, row in ci.iterrows():
            lines.append(f"{s:<24} {row.estimate:>9.4f} {row.ci_lower:>9.4f} {row.ci_upper:>9.4f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def bca_urisk(
    table: ScoreTable,
    *,
    r: float = RISK_R,
    ci_prob: float | None = None,
    bonferroni: bool = True,
    n_resamples: int = BCA_RESAMPLES,
    seed: int | None = None,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    collection: str | None = None,
    measure: str | None = None,
) -> BCaResult:
    r"""BCa bootstrap confidence intervals of URisk, one per challenger.

    Parameters
    ----------
    table
        Complete per-topic scores.
    r
        Loss weight :math:`r = 1 + \alpha \ge 1`.
    ci_prob
        Family-wise coverage (default :data:`bayes_ir.defaults.CI_PROB`).
    bonferroni
        Correct for the :math:`k` challengers: each interval uses confidence level
        :math:`1 - (1 - \mathrm{ci\_prob})/k`.
    n_resamples
        Bootstrap resamples per system.
    seed
        Seed; system :math:`j` (0-based) resamples with
        ``numpy.random.default_rng([seed, j])``.
    champion, challengers, collection, measure
        As in :func:`~bayes_ir.risk.urisk.urisk`.

    Returns
    -------
    BCaResult

    Notes
    -----
    The topics are resampled with replacement and URisk (the mean risk-adjusted
    difference) recomputed; the bias-corrected and accelerated interval (Efron 1987)
    is computed by :func:`scipy.stats.bootstrap` with ``method="BCa"``, the
    acceleration from the jackknife.

    References
    ----------
    Efron, B. (1987). Better bootstrap confidence intervals. *Journal of the American
    Statistical Association* 82(397), 171-185. doi:10.1080/01621459.1987.10478410

    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033
    """
    r = check_r(r)
    p = _ci_prob(ci_prob)
    seed = validate.seed(seed)
    n_resamples = validate.resamples("n_resamples", n_resamples, minimum=100)
    pair = resolve_pair(
        table,
        champion=champion,
        challengers=challengers,
        collection=collection,
        measure=measure,
        method="BCa bootstrap of URisk",
    )
    adjusted = pair.adjusted(r)
    k = adjusted.shape[1]
    level = bonferroni_level(p, k) if bonferroni else p
    constant = constant_columns(adjusted)
    if constant.any():
        names = ", ".join(repr(s) for s, c in zip(pair.challengers, constant, strict=True) if c)
        warnings.warn(
            f"the BCa interval is undefined (NaN) for {names}: the risk-adjusted differences "
            "against the champion are the same on every topic, so every resample has the "
            "same mean",
            DataWarning,
            stacklevel=2,
        )
    bounds = np.array(
        [
            (np.nan, np.nan)
            if constant[j]
            else _bca_one(adjusted[:, j], level, n_resamples, system_rng(seed, j))
            for j in range(k)
        ]
    )
    return BCaResult(
        **pair.labels(),
        r=r,
        urisk=adjusted.mean(axis=0),
        ci_lower=bounds[:, 0],
        ci_upper=bounds[:, 1],
        ci_prob=p,
        level=level,
        bonferroni=bool(bonferroni),
        n_resamples=int(n_resamples),
        seed=seed,
    )
