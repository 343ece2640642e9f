"""The deployment review table: every risk measure of every challenger, side by side.

One row per system (the champion, then the challengers) in the layout of Table 3 of
Benham et al. (2020): mean score, URisk-, TRisk- (p), BCa- interval (Bonferroni),
BRisk- credible interval, ZRisk- and GeoRisk-, with significance marks. All risk
measures are multiplied by -1 (higher = riskier).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.errors import OptionError
from bayes_ir.risk.adjusted import check_r, resolve_pair
from bayes_ir.risk.bca import BCaResult, bca_urisk
from bayes_ir.risk.brisk import BRiskResult, brisk
from bayes_ir.risk.trisk import SD, TRiskResult, trisk
from bayes_ir.risk.zrisk import ZRiskResult, zrisk
from bayes_ir.table import ScoreTable

__all__ = ["REVIEW_COLUMNS", "RiskReview", "risk_review"]

#: Columns of :meth:`RiskReview.to_frame` (risk columns already multiplied by -1).
REVIEW_COLUMNS = (
    "system",
    "role",
    "mean",
    "urisk_minus",
    "trisk_minus",
    "trisk_p",
    "trisk_sig",
    "trisk_sd",
    "bca_lower_minus",
    "bca_upper_minus",
    "bca_sig",
    "brisk_minus",
    "brisk_lower",
    "brisk_upper",
    "brisk_p_riskier",
    "brisk_sig",
    "zrisk_minus",
    "georisk_minus",
)


@dataclass(frozen=True)
class RiskReview:
    """The deployment review of a champion and its challengers.

    Attributes
    ----------
    frame
        One row per system, columns :data:`REVIEW_COLUMNS`: ``mean`` the raw mean
        score; ``urisk_minus`` = -URisk; ``trisk_minus`` = -TRisk with its two-sided
        p-value ``trisk_p`` and its SD convention ``trisk_sd`` (``"population"`` or
        ``"sample"``); ``bca_lower_minus``/``bca_upper_minus`` the BCa interval of
        URisk- (Bonferroni over the challengers); ``brisk_minus`` with its credible
        interval ``brisk_lower``/``brisk_upper`` and ``brisk_p_riskier`` = P(effect below
        the champion's); ``zrisk_minus``, ``georisk_minus``. The ``*_sig`` columns mark
        significance: TRisk p < 1 - ci_prob; BCa interval excluding 0; the credible
        interval of the contrast with the champion excluding 0. The champion's
        URisk/TRisk/BCa cells are empty (it is the baseline).
    r, ci_prob, sd, champion, collection, measure
        Settings and provenance.
    urisk_trisk, bca, zrisk, brisk
        The underlying results (``brisk`` is ``None`` without the Bayesian part).
    notes
        What the loader changed or left out in the table (the table's ``notes``).
    """

    frame: pd.DataFrame
    r: float
    ci_prob: float
    sd: str
    champion: str
    collection: str
    measure: str
    trisk: TRiskResult
    bca: BCaResult
    zrisk: ZRiskResult
    brisk: BRiskResult | None
    notes: tuple[str, ...] = ()

    @property
    def header(self) -> str:
        """Title and the sign convention, said in every rendering (:mod:`bayes_ir.report.risk`)."""
        from bayes_ir.report.risk import risk_header

        return risk_header(self)

    def to_frame(self) -> pd.DataFrame:
        """Return the numeric table (a copy), columns :data:`REVIEW_COLUMNS`."""
        return self.frame.copy()

    def display_frame(self) -> pd.DataFrame:
        """Return the formatted table (strings, significance marks, minus-named headers)."""
        from bayes_ir.report.risk import risk_display_frame

        return risk_display_frame(self)

    def to_markdown(self) -> str:
        """Markdown table preceded by the header (sign convention, settings)."""
        from bayes_ir.report.risk import risk_markdown

        return risk_markdown(self)

    def to_latex(self, **options: Any) -> str:
        """LaTeX table in the package's style; ``options``: ``caption``, ``label``, ``digits``.

        See :func:`bayes_ir.report.risk.risk_latex` (marks, bold, notes).
        """
        from bayes_ir.report.risk import risk_latex

        return risk_latex(self, **options)

    def summary(self) -> str:
        """Header and the table as plain text."""
        from bayes_ir.report.risk import risk_summary

        return risk_summary(self)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        from bayes_ir.report.escape import html_escape

        return f"<pre>{html_escape(self.header)}</pre>" + self.display_frame().to_html(index=False)

    def plot(self, **kwargs: Any) -> Any:
        """Intervals of BCa- and BRisk- per challenger, side by side."""
        from bayes_ir.plots.risk import plot_risk_review

        return plot_risk_review(self, **kwargs)


def _checked(result: BRiskResult, base: ScoreTable, *, r: float, block: tuple) -> BRiskResult:
    """Return ``result`` if it is BRisk of ``base`` at ``r``; one line saying what differs."""
    given = {
        "r": f"{result.r:g}",
        "champion": result.champion,
        "collection and measure": (result.collection, result.measure),
        "systems": sorted(result.systems),
    }
    wanted = {
        "r": f"{r:g}",
        "champion": base.champion,
        "collection and measure": block,
        "systems": sorted(base.systems),
    }
    for what, value in given.items():
        if value != wanted[what]:
            raise OptionError(
                f"brisk_result is not BRisk of this table: its {what} {value!r}, the "
                f"review's {wanted[what]!r}"
            )
    return result


def risk_review(
    table: ScoreTable,
    *,
    r: float = defaults.RISK_R,
    ci_prob: float | None = None,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    sd: SD = defaults.TRISK_SD,
    bayes: bool = True,
    likelihood: str = "gaussian",
    n_resamples: int = defaults.BCA_RESAMPLES,
    seed: int | None = None,
    collection: str | None = None,
    measure: str | None = None,
    fit: Any = None,
    brisk_result: BRiskResult | None = None,
    **fit_options: Any,
) -> RiskReview:
    r"""Compute the deployment review table (Benham et al. 2020, Table 3 layout).

    Parameters
    ----------
    table
        Complete scores with roles; artifacts inform ZRisk/GeoRisk and BRisk.
    r
        Loss weight :math:`r = 1 + \alpha` of every measure (default 5).
    ci_prob
        Coverage of the BCa (family-wise) and credible intervals; TRisk is marked
        significant when :math:`p < 1 - \mathrm{ci\_prob}`.
    champion, challengers
        Default: the table's roles.
    sd
        SD of TRisk: ``"population"`` (default, divide by n: Dincer et al. 2014 and
        rmit-ir/trisk) or ``"sample"`` (divide by n - 1: Benham et al. 2020). The
        header of every rendering names it, and ``to_frame()`` has it as ``trisk_sd``.
    bayes
        Fit the hierarchical BRisk model (the slow part); ``False`` leaves it out.
    likelihood
        Likelihood of the BRisk hierarchy.
    n_resamples
        Bootstrap resamples of BCa.
    seed
        Seed of the bootstrap and the sampler.
    collection, measure
        The block to use when the table holds several.
    fit
        An existing fit of the risk-adjusted scores at ``r`` (the ``fit`` of a
        :class:`~bayes_ir.risk.BRiskResult`, or a saved one read with
        :func:`bayes_ir.hierarchical.load_fit`), used for BRisk instead of fitting; it
        is checked against this table, ``r`` and roles (see :func:`brisk`).
    brisk_result
        An existing BRisk result of this table at ``r`` (e.g. the entry of
        :func:`bayes_ir.risk.brisk_sweep` for ``r``), used as is: no fit at all.
        Its r, champion, block and systems must be the review's.
    **fit_options
        Passed to :func:`bayes_ir.hierarchical.fit` (``chains``, ``draws``, ...).

    Returns
    -------
    RiskReview

    Notes
    -----
    URisk (Wang et al. 2012), TRisk (Dincer et al. 2014), BCa (Efron 1987) with
    Bonferroni over the challengers, ZRisk and GeoRisk (Dincer et al. 2016) over the
    system x topic matrix of all systems, and BRisk (Benham et al. 2020); each is
    multiplied by -1.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033

    Wang, L., Bennett, P. N., and Collins-Thompson, K. (2012). Robust ranking models
    via risk-sensitive optimization. *Proceedings of SIGIR 2012*, 761-770.

    Dincer, B. T., Macdonald, C., and Ounis, I. (2014). Hypothesis testing for the
    risk-sensitive evaluation of retrieval systems. *Proceedings of SIGIR 2014*, 23-32.

    Dincer, B. T., Macdonald, C., and Ounis, I. (2016). Risk-sensitive evaluation and
    learning to rank using multiple baselines. *Proceedings of SIGIR 2016*, 483-492.

    Efron, B. (1987). Better bootstrap confidence intervals. *Journal of the American
    Statistical Association* 82(397), 171-185.
    """
    r = check_r(r)
    p = defaults.ci_prob(ci_prob)
    seed = validate.seed(seed)
    pair = resolve_pair(
        table,
        champion=champion,
        challengers=challengers,
        collection=collection,
        measure=measure,
        method="the risk review",
    )
    sel: dict[str, Any] = {"champion": pair.champion, "challengers": list(pair.challengers)}
    block: dict[str, Any] = {"collection": collection, "measure": measure}
    tr = trisk(table, r=r, sd=sd, **sel, **block)
    bc = bca_urisk(table, r=r, ci_prob=p, n_resamples=n_resamples, seed=seed, **sel, **block)
    zr = zrisk(table, r=r, **block)
    systems = [pair.champion, *pair.challengers]
    n = len(systems)
    nan = np.full(n, np.nan)

    def with_champion(values: np.ndarray) -> np.ndarray:
        return np.concatenate([[np.nan], np.asarray(values, dtype=float)])

    zf = zr.to_frame().set_index("system").loc[systems]
    frame = pd.DataFrame(
        {
            "system": systems,
            "role": ["champion"] + ["challenger"] * (n - 1),
            "mean": pair.scores(systems).mean(axis=0),
            "urisk_minus": with_champion(-tr.urisk),
            "trisk_minus": with_champion(tr.trisk_minus),
            "trisk_p": with_champion(tr.p_value),
            "trisk_sig": np.concatenate([[False], tr.p_value < 1 - p]),
            "trisk_sd": tr.sd,
            "bca_lower_minus": with_champion(-bc.ci_upper),
            "bca_upper_minus": with_champion(-bc.ci_lower),
            "bca_sig": np.concatenate([[False], bc.significant]),
            "brisk_minus": nan,
            "brisk_lower": nan,
            "brisk_upper": nan,
            "brisk_p_riskier": nan,
            "brisk_sig": np.zeros(n, dtype=bool),
            "zrisk_minus": zf["zrisk_minus"].to_numpy(),
            "georisk_minus": zf["georisk_minus"].to_numpy(),
        }
    )
    br = None
    if bayes:
        base = table.select(**{k: v for k, v in block.items() if v is not None})
        if base.roles is None or base.champion != pair.champion:
            base = base.with_roles(champion=pair.champion, challengers=list(pair.challengers))
        if brisk_result is None:
            br = brisk(base, r=r, ci_prob=p, seed=seed, likelihood=likelihood, fit=fit,
                       **fit_options)  # fmt: skip
        else:
            br = _checked(brisk_result, base, r=r, block=(pair.collection, pair.measure))
        bf = br.to_frame(p).set_index("system").loc[systems]
        frame["brisk_minus"] = bf["brisk_minus"].to_numpy()
        frame["brisk_lower"] = bf["ci_lower"].to_numpy()
        frame["brisk_upper"] = bf["ci_upper"].to_numpy()
        frame["brisk_p_riskier"] = bf["p_riskier"].to_numpy()
        lo, hi = bf["contrast_lower"].to_numpy(), bf["contrast_upper"].to_numpy()
        frame["brisk_sig"] = (
            np.nan_to_num((lo > 0) | (hi < 0)).astype(bool)
            & (frame["role"] != "champion").to_numpy()
        )
    return RiskReview(
        frame=frame[list(REVIEW_COLUMNS)],
        r=r,
        ci_prob=p,
        sd=tr.sd,
        champion=pair.champion,
        collection=pair.collection,
        measure=pair.measure,
        trisk=tr,
        bca=bc,
        zrisk=zr,
        brisk=br,
        notes=tuple(table.notes),
    )
