r"""Pooling effect sizes across collections: fixed- and random-effects meta-analysis.

:func:`meta_analysis` fits once and returns a :class:`MetaAnalysisResult`; everything
else (intervals, heterogeneity, prediction interval, leave-one-out, the printout and
the forest plot) is a question to that object, in the manner of statsmodels'
``CombineResults`` and metafor's ``rma()``.

References
----------
Borenstein, M., Hedges, L. V., Higgins, J. P. T., & Rothstein, H. R. (2009).
*Introduction to Meta-Analysis*. Chichester: Wiley.

DerSimonian, R., & Laird, N. (1986). Meta-analysis in clinical trials. *Controlled
Clinical Trials*, 7(3), 177-188.

Hartung, J., & Knapp, G. (2001). A refined method for the meta-analysis of controlled
clinical trials with binary outcome. *Statistics in Medicine*, 20(24), 3875-3889.

Paule, R. C., & Mandel, J. (1982). Consensus values and weighting factors. *Journal of
Research of the National Bureau of Standards*, 87(5), 377-385.

Viechtbauer, W. (2005). Bias and efficiency of meta-analytic variance estimators in the
random-effects model. *Journal of Educational and Behavioral Statistics*, 30(3), 261-293.

Viechtbauer, W. (2010). Conducting meta-analyses in R with the metafor package.
*Journal of Statistical Software*, 36(3), 1-48.

Sertkan, M., Althammer, S., & Hofstaetter, S. (2023). Ranger: A toolkit for effect-size
based multi-task evaluation. ACL 2023 System Demonstrations. arXiv:2305.15048.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from bayes_ir import validate
from bayes_ir.defaults import META_METHOD
from bayes_ir.defaults import ci_prob as _ci_prob
from bayes_ir.errors import DataWarning, InsufficientDataError, OptionError
from bayes_ir.frequentist.meta_analysis.effect_size import EFFECT_COLUMNS, EffectSizes
from bayes_ir.frequentist.meta_analysis.tau2 import TAU2_METHODS, _q_stat, _se_tau2, _tau2

#: Columns of :meth:`MetaAnalysisResult.to_frame`, in order (extra-measure columns follow).
RESULT_COLUMNS: tuple[str, ...] = (
    "label",
    "kind",
    "estimate",
    "se",
    "ci_lower",
    "ci_upper",
    "p_value",
    "weight",
    "pi_lower",
    "pi_upper",
    "n",
    "mean_control",
    "mean_treatment",
)
#: Columns of :meth:`MetaAnalysisResult.leave_one_out`.
LOO_COLUMNS: tuple[str, ...] = (
    "omitted",
    "estimate",
    "se",
    "statistic",
    "p_value",
    "ci_lower",
    "ci_upper",
    "q",
    "q_pvalue",
    "tau2",
    "i2",
    "h2",
)


class ConfInt(NamedTuple):
    """A pooled estimate with its interval."""

    estimate: float
    ci_lower: float
    ci_upper: float
    ci_prob: float


class PredictionInterval(NamedTuple):
    """Interval expected to hold the true effect of a new collection."""

    estimate: float
    pi_lower: float
    pi_upper: float
    ci_prob: float


class Heterogeneity(NamedTuple):
    """Between-collection heterogeneity and Cochran's test of homogeneity."""

    tau2: float
    se_tau2: float
    tau: float
    i2: float
    h2: float
    q: float
    q_df: int
    q_pvalue: float


# ---------------------------------------------------------------------- kernels
def _pool(
    y: np.ndarray, v: np.ndarray, tau2: np.ndarray | np.float64, *, hk: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Return the weighted mean, its SE and the relative weights (vectorised, last axis).

    Notes
    -----
    :math:`w_i = 1/(v_i + \hat\tau^2)`, :math:`\hat\mu = \sum w_i y_i / \sum w_i`,
    :math:`\mathrm{SE} = 1/\sqrt{\sum w_i}`; with the Hartung-Knapp (Knapp-Hartung)
    adjustment :math:`\mathrm{SE}_{HK}^2 = \sum w_i (y_i - \hat\mu)^2 / ((k-1)\sum w_i)`.
    """
    w = 1.0 / (v + np.asarray(tau2)[..., None])
    sw = w.sum(-1)
    mu = (w * y).sum(-1) / sw
    if hk:
        se = np.sqrt((w * (y - mu[..., None]) ** 2).sum(-1) / ((y.shape[-1] - 1) * sw))
    else:
        se = np.sqrt(1.0 / sw)
    return mu, se, w / sw[..., None]


def _crit(ci_prob: float, df: float | None) -> float:
    """Two-sided critical value: normal, or Student t with ``df`` degrees of freedom."""
    alpha = 1.0 - ci_prob
    if df is None:
        return float(stats.norm.isf(alpha / 2))
    return float(stats.t.isf(alpha / 2, df))


def _i2_h2(
    v: np.ndarray, tau2: np.ndarray | np.float64, q: np.ndarray | np.float64, method: str
) -> tuple:
    r"""I^2 (in %) and H^2 as metafor defines them.

    Notes
    -----
    Random effects: :math:`I^2 = 100\,\hat\tau^2/(\hat\tau^2 + s^2)`,
    :math:`H^2 = (\hat\tau^2 + s^2)/s^2` with the typical within-collection variance
    :math:`s^2 = (k-1)\sum w_i / ((\sum w_i)^2 - \sum w_i^2)`, :math:`w_i = 1/v_i`
    (Higgins & Thompson 2002); for DerSimonian-Laird this is :math:`(Q-(k-1))/Q`.
    Fixed effect: :math:`I^2 = 100\max(0, (Q-(k-1))/Q)`, :math:`H^2 = Q/(k-1)`.
    """
    k = v.shape[-1]
    if method == "FE":
        i2 = 100.0 * np.maximum(0.0, (q - (k - 1)) / q)
        return i2, q / (k - 1)
    w = 1.0 / v
    s2 = (k - 1) * w.sum(-1) / (w.sum(-1) ** 2 - (w**2).sum(-1))
    return 100.0 * tau2 / (tau2 + s2), (tau2 + s2) / s2


def _fit(y: np.ndarray, v: np.ndarray, method: str, *, hk: bool, clip: bool) -> dict[str, Any]:
    """Fit one meta-analysis (1-D inputs) and return the numbers as a dict."""
    k = len(y)
    tau2 = float(_tau2(y, v, method, clip=clip))
    mu, se, weights = _pool(y, v, np.float64(tau2), hk=hk)
    mu_fe, se_fe, w_fe = _pool(y, v, np.float64(0.0), hk=False)
    q = float(_q_stat(y, v))
    i2, h2 = _i2_h2(v, np.float64(tau2), np.float64(q), method)
    return {
        "estimate": float(mu),
        "se": float(se),
        "df": k - 1 if hk else None,
        "tau2": tau2,
        "se_tau2": float(_se_tau2(y, v, np.float64(tau2), method)),
        "q": q,
        "q_df": k - 1,
        "q_pvalue": float(stats.chi2.sf(q, k - 1)),
        "i2": float(i2),
        "h2": float(h2),
        "weights": weights,
        "weights_fixed": w_fe,
        "estimate_fixed": float(mu_fe),
        "se_fixed": float(se_fe),
    }


# ---------------------------------------------------------------------- result
@dataclass(frozen=True, eq=False)
class MetaAnalysisResult:
    """A fitted fixed- or random-effects meta-analysis.

    Attributes
    ----------
    effects
        The per-collection effect sizes that were pooled.
    method
        tau^2 estimator: ``"FE"``, ``"DL"``, ``"REML"`` or ``"PM"``.
    hk
        Whether the Hartung-Knapp (Knapp-Hartung) adjustment with t quantiles was used.
    ci_prob
        Probability of the intervals of the printout and of :meth:`to_frame`.
    ranger_compatible
        Ranger's choices: unclipped DerSimonian-Laird tau^2 (population SD in the effects).
    estimate, se
        Pooled effect (on the analysis scale: Fisher z for ``CORR``) and its SE.
    df
        Degrees of freedom of the t reference distribution (``k - 1``) under ``hk``,
        ``None`` for the normal.
    tau2, se_tau2
        Between-collection variance and its SE (metafor's formulas; NaN for FE).
    q, q_df, q_pvalue
        Cochran's Q (fixed weights), its df and chi^2 p-value.
    i2, h2
        I^2 (percent) and H^2 as metafor computes them.
    weights, weights_fixed
        Relative weights of the collections (sum 1) in this model and in the FE model.
    estimate_fixed, se_fixed
        The fixed-effect (inverse-variance) estimate and its SE.
    """

    effects: EffectSizes
    method: str
    hk: bool
    ci_prob: float
    ranger_compatible: bool
    estimate: float
    se: float
    df: int | None
    tau2: float
    se_tau2: float
    q: float
    q_df: int
    q_pvalue: float
    i2: float
    h2: float
    weights: np.ndarray
    weights_fixed: np.ndarray
    estimate_fixed: float
    se_fixed: float

    # ------------------------------------------------------------------ basics
    @property
    def k(self) -> int:
        """Number of collections pooled."""
        return len(self.effects)

    @property
    def labels(self) -> tuple[str, ...]:
        """Display labels of the collections."""
        return self.effects.labels

    @property
    def measure(self) -> str:
        """Effect-size code: ``MD``, ``SMD`` or ``CORR``."""
        return self.effects.measure

    @property
    def tau(self) -> float:
        """Square root of tau^2 (NaN when an unclipped tau^2 is negative)."""
        return float(np.sqrt(self.tau2)) if self.tau2 >= 0 else float("nan")

    @property
    def statistic(self) -> float:
        """Z (or t under ``hk``) statistic of the pooled effect against 0."""
        return self.estimate / self.se

    @property
    def p_value(self) -> float:
        """Two-sided p-value of :attr:`statistic` (normal or t with :attr:`df`)."""
        if self.df is None:
            return float(2 * stats.norm.sf(abs(self.statistic)))
        return float(2 * stats.t.sf(abs(self.statistic), self.df))

    # ------------------------------------------------------------------ questions
    def conf_int(self, ci_prob: float | None = None) -> ConfInt:
        r"""Confidence interval of the pooled effect.

        :math:`\hat\mu \pm c\,\mathrm{SE}` with :math:`c` the normal quantile, or the
        :math:`t_{k-1}` quantile under Hartung-Knapp. For ``CORR`` the interval is on
        Fisher's z scale (``np.tanh`` gives r).
        """
        p = _ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        h = _crit(p, self.df) * self.se
        return ConfInt(self.estimate, self.estimate - h, self.estimate + h, p)

    def prediction_interval(self, ci_prob: float | None = None) -> PredictionInterval:
        r"""Prediction interval of the true effect in a new collection.

        Notes
        -----
        :math:`\hat\mu \pm c\sqrt{\mathrm{SE}^2 + \hat\tau^2}` with :math:`c` the normal
        quantile, or :math:`t_{k-1}` under Hartung-Knapp, as metafor's ``predict.rma``
        computes it (Borenstein et al. 2009, sec. 17.5, use :math:`t_{k-2}` instead).
        """
        p = _ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        h = _crit(p, self.df) * np.sqrt(self.se**2 + self.tau2)
        return PredictionInterval(self.estimate, self.estimate - h, self.estimate + h, p)

    def heterogeneity(self) -> Heterogeneity:
        """Return tau^2 (and SE), tau, I^2 (%), H^2 and Cochran's Q test as a named tuple."""
        return Heterogeneity(
            self.tau2, self.se_tau2, self.tau, self.i2, self.h2, self.q, self.q_df, self.q_pvalue
        )

    def leave_one_out(self) -> pd.DataFrame:
        """Refit without each collection in turn (same estimator and options).

        Returns
        -------
        pandas.DataFrame
            One row per omitted collection, columns :data:`LOO_COLUMNS` (analysis scale).

        Raises
        ------
        InsufficientDataError
            With fewer than 3 collections (a refit needs 2).
        """
        if self.k < 3:
            raise InsufficientDataError(
                f"leave-one-out needs at least 3 collections; have {self.k}"
            )
        y, v = self.effects.yi, self.effects.vi
        rows = []
        for i, label in enumerate(self.labels):
            keep = np.arange(self.k) != i
            fit = _fit(y[keep], v[keep], self.method, hk=self.hk, clip=not self.ranger_compatible)
            h = _crit(self.ci_prob, fit["df"]) * fit["se"]
            stat = fit["estimate"] / fit["se"]
            dist = stats.norm if fit["df"] is None else stats.t(fit["df"])
            rows.append(
                {
                    "omitted": label,
                    "estimate": fit["estimate"],
                    "se": fit["se"],
                    "statistic": stat,
                    "p_value": float(2 * dist.sf(abs(stat))),
                    "ci_lower": fit["estimate"] - h,
                    "ci_upper": fit["estimate"] + h,
                    "q": fit["q"],
                    "q_pvalue": fit["q_pvalue"],
                    "tau2": fit["tau2"],
                    "i2": fit["i2"],
                    "h2": fit["h2"],
                }
            )
        return pd.DataFrame(rows, columns=list(LOO_COLUMNS))

    def to_frame(self, ci_prob: float | None = None) -> pd.DataFrame:
        """Per-collection rows, then the pooled rows, in fixed columns.

        Returns
        -------
        pandas.DataFrame
            Columns :data:`RESULT_COLUMNS` then the extra-measure means. ``kind`` is
            ``"study"``, ``"fixed"`` (inverse-variance) or ``"random"`` (this model,
            with the prediction interval in ``pi_lower, pi_upper``). ``weight`` is the
            relative weight in the model fitted. ``p_value`` is two-sided. For ``CORR``,
            ``estimate`` and the interval limits are back-transformed to r while ``se``
            stays on Fisher's z scale.
        """
        p = _ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        eff = self.effects.frame
        y, v = self.effects.yi, self.effects.vi
        z = _crit(p, None)
        se = np.sqrt(v)
        study = pd.DataFrame(
            {
                "label": eff["label"].to_numpy(),
                "kind": "study",
                "estimate": y,
                "se": se,
                "ci_lower": y - z * se,
                "ci_upper": y + z * se,
                "p_value": 2 * stats.norm.sf(np.abs(y / se)),
                "weight": self.weights,
                "pi_lower": np.nan,
                "pi_upper": np.nan,
                "n": eff["n"].to_numpy(),
                "mean_control": eff["mean_control"].to_numpy(),
                "mean_treatment": eff["mean_treatment"].to_numpy(),
            }
        )
        extra = [c for c in eff.columns if c not in EFFECT_COLUMNS]
        for col in extra:
            study[col] = eff[col].to_numpy()
        h_fe = z * self.se_fixed
        pooled = [
            {
                "label": "FE Model",
                "kind": "fixed",
                "estimate": self.estimate_fixed,
                "se": self.se_fixed,
                "ci_lower": self.estimate_fixed - h_fe,
                "ci_upper": self.estimate_fixed + h_fe,
                "p_value": float(2 * stats.norm.sf(abs(self.estimate_fixed / self.se_fixed))),
                "weight": 1.0,
            }
        ]
        if self.method != "FE":
            ci, pi = self.conf_int(p), self.prediction_interval(p)
            pooled.append(
                {
                    "label": f"RE Model ({self.method}{', HK' if self.hk else ''})",
                    "kind": "random",
                    "estimate": self.estimate,
                    "se": self.se,
                    "ci_lower": ci.ci_lower,
                    "ci_upper": ci.ci_upper,
                    "p_value": self.p_value,
                    "weight": 1.0,
                    "pi_lower": pi.pi_lower,
                    "pi_upper": pi.pi_upper,
                }
            )
        out = pd.concat([study, pd.DataFrame(pooled)], ignore_index=True)
        out = out[list(RESULT_COLUMNS) + extra]
        if self.measure == "CORR":
            for col in ("estimate", "ci_lower", "ci_upper", "pi_lower", "pi_upper"):
                out[col] = np.tanh(out[col])
        return out

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    # ------------------------------------------------------------------ printing
    def summary(self, digits: int = 4) -> str:
        """metafor-style printout: header, heterogeneity, test for heterogeneity, model results.

        Parameters
        ----------
        digits
            Decimals of the printed numbers (small values keep ``digits`` significant digits).
        """

        def f(x: float) -> str:
            if x != 0 and np.isfinite(x) and abs(x) < 10 ** (-digits + 1):
                return f"{x:.{digits}g}"
            return f"{x:.{digits}f}"

        def pval(p: float) -> str:
            return f"<.{'0' * (digits - 1)}1" if p < 10**-digits else f"{p:.{digits}f}"

        k, eff = self.k, self.effects
        if self.method == "FE":
            head = f"Fixed-Effects Model (k = {k} collections)"
        else:
            head = (
                f"Random-Effects Model (k = {k} collections; "
                f"tau^2 estimator: {self.method}{', unclipped' if self.ranger_compatible else ''})"
            )
        lines = [head]
        what = f"Effect size: {eff.measure}"
        if eff.treatment is not None:
            what += f", {eff.treatment} (treatment) vs {eff.control} (control)"
        if eff.score_measure:
            what += f" on {eff.score_measure}"
        lines += [what, ""]
        if self.ranger_compatible:
            lines[1:1] = [
                "Ranger-compatible: population SD (ddof = 0), DerSimonian-Laird tau^2 not "
                "truncated at 0, normal quantiles"
            ]
        if self.method != "FE":
            se_t = f" (SE = {f(self.se_tau2)})" if np.isfinite(self.se_tau2) else ""
            lines += [
                f"tau^2 (estimated amount of total heterogeneity): {f(self.tau2)}{se_t}",
                f"tau (square root of estimated tau^2 value):      {f(self.tau)}",
            ]
        lines += [
            f"I^2 (total heterogeneity / total variability):   {self.i2:.2f}%",
            f"H^2 (total variability / sampling variability):  {self.h2:.2f}",
            "",
            "Test for Heterogeneity:",
            f"Q(df = {self.q_df}) = {self.q:.{digits}f}, p-val "
            + (
                f"< .{'0' * (digits - 1)}1"
                if self.q_pvalue < 10**-digits
                else f"= {pval(self.q_pvalue)}"
            ),
            "",
            "Model Results:",
            "",
        ]
        ci = self.conf_int()
        stat = "zval" if self.df is None else "tval"
        names = ["estimate", "se", stat] + ([] if self.df is None else ["df"])
        names += ["pval", "ci.lb", "ci.ub"]
        values = [f(self.estimate), f(self.se), f"{self.statistic:.{digits}f}"]
        values += [] if self.df is None else [str(self.df)]
        values += [pval(self.p_value), f(ci.ci_lower), f(ci.ci_upper)]
        widths = [max(len(a), len(b)) for a, b in zip(names, values, strict=True)]
        lines.append("  ".join(n.rjust(w) for n, w in zip(names, widths, strict=True)))
        lines.append("  ".join(x.rjust(w) for x, w in zip(values, widths, strict=True)))
        lines.append("")
        pct = f"{100 * self.ci_prob:g}%"
        if self.method != "FE":
            pi = self.prediction_interval()
            lines.append(f"Prediction interval ({pct}): [{f(pi.pi_lower)}, {f(pi.pi_upper)}]")
        if self.measure == "CORR":
            lo, hi = np.tanh([ci.ci_lower, ci.ci_upper])
            lines.append(
                f"Back-transformed to r: {np.tanh(self.estimate):.{digits}f} "
                f"[{lo:.{digits}f}, {hi:.{digits}f}]"
            )
        lines.append(f"Intervals: {pct}; per-collection rows: to_frame(), leave_one_out().")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (
            f"MetaAnalysisResult(measure={self.measure!r}, method={self.method!r}, k={self.k}, "
            f"estimate={self.estimate:.6g}, se={self.se:.6g}, tau2={self.tau2:.6g})"
        )

    def _repr_html_(self) -> str:
        from bayes_ir.report.escape import html_escape

        return f"<pre>{html_escape(self.summary())}</pre>" + self.to_frame().to_html(index=False)

    def plot(self, **kwargs: Any) -> Any:
        """Draw the forest plot; see :func:`bayes_ir.plots.forest.forest_plot` for options."""
        from bayes_ir.plots.forest import forest_plot

        return forest_plot(self, **kwargs)


# ---------------------------------------------------------------------- public
def meta_analysis(
    effects: EffectSizes | pd.DataFrame,
    *,
    method: str | None = None,
    hk: bool = False,
    ci_prob: float | None = None,
    ranger_compatible: bool = False,
) -> MetaAnalysisResult:
    r"""Pool per-collection effect sizes with a fixed- or random-effects model.

    Parameters
    ----------
    effects
        The output of :func:`effect_size`, or a DataFrame of precomputed effects with
        columns ``yi``, ``vi`` (and optionally ``label``).
    method
        Estimator of the between-collection variance :math:`\tau^2`: ``"REML"``
        (default), ``"DL"`` (DerSimonian-Laird, truncated at 0), ``"PM"`` (Paule-Mandel)
        or ``"FE"`` (fixed effect, :math:`\tau^2 = 0`).
    hk
        Hartung-Knapp (Knapp-Hartung) adjustment: the SE rescaled by the weighted
        residual variance, and t quantiles with :math:`k-1` df.
    ci_prob
        Interval probability (default 0.95).
    ranger_compatible
        Reproduce Ranger (Sertkan et al. 2023): DerSimonian-Laird without truncating a
        negative :math:`\tau^2` at 0 and normal quantiles (pair it with
        ``effect_size(..., ranger_compatible=True)`` for the population SD).

    Returns
    -------
    MetaAnalysisResult

    Raises
    ------
    InsufficientDataError
        With fewer than 2 collections.
    ValueError
        For an unknown ``method``, or ``ranger_compatible`` with another method than DL
        or with ``hk``.

    Notes
    -----
    With :math:`w_i = 1/(v_i + \hat\tau^2)`:

    .. math::

        \hat\mu = \frac{\sum w_i y_i}{\sum w_i},\quad
        \mathrm{SE}(\hat\mu) = \Big(\sum w_i\Big)^{-1/2},\quad
        Q = \sum \frac{(y_i - \hat\mu_{FE})^2}{v_i} \sim \chi^2_{k-1},

    the CI is :math:`\hat\mu \pm z_{1-\alpha/2}\mathrm{SE}`; under Hartung-Knapp
    :math:`\mathrm{SE}^2_{HK} = \sum w_i(y_i-\hat\mu)^2/((k-1)\sum w_i)` and
    :math:`t_{k-1}` quantiles. DL: :math:`\hat\tau^2 = \max(0, (Q-(k-1))/(\sum w_i -
    \sum w_i^2/\sum w_i))` with :math:`w_i = 1/v_i`; PM solves :math:`Q(\hat\tau^2) = k-1`;
    REML maximises the restricted likelihood by Fisher scoring (hand-written, since
    statsmodels' ``combine_effects`` offers only DL and PM). I^2, H^2, the SE of
    :math:`\hat\tau^2` and the prediction interval follow metafor.

    References
    ----------
    Borenstein, M., Hedges, L. V., Higgins, J. P. T., & Rothstein, H. R. (2009).
    *Introduction to Meta-Analysis*. Wiley.

    DerSimonian, R., & Laird, N. (1986). Meta-analysis in clinical trials. *Controlled
    Clinical Trials*, 7(3), 177-188.

    Viechtbauer, W. (2005). Bias and efficiency of meta-analytic variance estimators in
    the random-effects model. *J. Educational and Behavioral Statistics*, 30(3), 261-293.

    Paule, R. C., & Mandel, J. (1982). Consensus values and weighting factors. *J. Res.
    National Bureau of Standards*, 87(5), 377-385.

    Hartung, J., & Knapp, G. (2001). A refined method for the meta-analysis of controlled
    clinical trials with binary outcome. *Statistics in Medicine*, 20(24), 3875-3889.

    Sertkan, M., Althammer, S., & Hofstaetter, S. (2023). Ranger: A toolkit for
    effect-size based multi-task evaluation. ACL 2023 System Demonstrations.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayes_ir.frequentist import meta_analysis
    >>> effects = pd.DataFrame({"yi": [0.021, 0.035, -0.004, 0.050, 0.012],
    ...                         "vi": [1e-4, 2.5e-4, 1.6e-4, 4e-4, 9e-5]})
    >>> res = meta_analysis(effects, method="DL")
    >>> round(res.estimate, 6), round(res.heterogeneity().i2, 2)
    (0.018856, 44.53)
    """
    hk = validate.flag("hk", hk)
    ranger_compatible = validate.flag("ranger_compatible", ranger_compatible)
    p = _ci_prob(ci_prob)
    if isinstance(effects, pd.DataFrame):
        effects = EffectSizes.from_frame(effects)
    if not isinstance(effects, EffectSizes):
        raise OptionError(
            f"effects must be EffectSizes or a DataFrame, got {type(effects).__name__}"
        )
    if method is None:
        method = "DL" if ranger_compatible else META_METHOD
    method = validate.choice(
        "method", method.upper() if isinstance(method, str) else method, TAU2_METHODS
    )
    if ranger_compatible and (method != "DL" or hk):
        raise OptionError("ranger_compatible=True means DerSimonian-Laird without hk")
    if ranger_compatible and not effects.ranger_compatible and effects.control is not None:
        warnings.warn(
            "the effects were computed with ddof=1; pass ranger_compatible=True to "
            "effect_size as well to reproduce Ranger exactly",
            DataWarning,
            stacklevel=2,
        )
    if len(effects) < 2:
        raise InsufficientDataError(
            f"a meta-analysis needs at least 2 collections; got {len(effects)}"
        )
    fit = _fit(effects.yi, effects.vi, method, hk=hk, clip=not ranger_compatible)
    return MetaAnalysisResult(
        effects=effects,
        method=method,
        hk=hk,
        ci_prob=p,
        ranger_compatible=ranger_compatible,
        **fit,
    )
