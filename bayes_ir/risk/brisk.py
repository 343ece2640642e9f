"""BRisk: Bayesian one-vs-many risk from the hierarchical model of risk-adjusted scores.

The champion keeps its scores; every challenger and artifact run is risk-adjusted
against the champion topic by topic (:func:`~bayes_ir.risk.adjusted.risk_adjusted_scores`);
the crossed topic x system model of :func:`bayes_ir.hierarchical.fit` is fitted to
these scores, and the system effects are read as (minus) risk (Benham et al. 2020,
Section 4).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import MeasureError, OptionError, RoleError, UnknownSystemError
from bayes_ir.risk.adjusted import check_r, risk_adjusted_scores
from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

__all__ = ["BRISK_COLUMNS", "BRiskForecast", "BRiskResult", "BRiskSweep", "brisk", "brisk_sweep"]

SAMPLE_DIMS = ("chain", "draw")
#: Columns of :meth:`BRiskResult.to_frame`.
BRISK_COLUMNS = (
    "system",
    "role",
    "r",
    "brisk_minus",
    "ci_lower",
    "ci_upper",
    "contrast",
    "contrast_lower",
    "contrast_upper",
    "p_riskier",
    "diagnostics_passed",
)


def _banner(passed: bool, messages: tuple[str, ...]) -> str:
    """Return the hierarchical diagnostics banner (imported late: no PyMC until a fit)."""
    from bayes_ir.hierarchical.diagnostics import GateStatus

    return GateStatus(passed, messages).banner()


def _quantiles(x: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.quantile(x, [(1 - p) / 2, (1 + p) / 2], axis=0)
    return lo, hi


@dataclass(frozen=True)
class BRiskResult:
    """BRisk- of every system, its credible interval and the contrast with the champion.

    Attributes
    ----------
    r
        Loss weight of the risk-adjusted scores.
    champion
        The baseline (its scores are not adjusted).
    effects
        Posterior draws of the system effects of the fitted model, dims
        ``("chain", "draw", "system")`` with a ``role`` coordinate.
    likelihood
        Likelihood of the hierarchical model.
    ci_prob
        Default interval probability.
    diagnostics_passed, diagnostics_messages
        The fit's diagnostics verdict (a failure is said loudly by :meth:`summary`).
    collection, measure
        The block analysed (``measure`` is the raw measure, e.g. ``"AP"``).
    fit
        The :class:`~bayes_ir.hierarchical.HierarchicalFit` (for forecasts and plots).
    sigma
        Residual-SD structure of that fit: ``"pooled"`` or ``"system"``.
    misfit
        Systems its model check flags (the model does not describe their risk-adjusted
        scores): their BRisk- is not to be acted on, and a flagged champion affects every
        contrast. Kept when the fit is not (:func:`brisk_sweep`).
    """

    r: float
    champion: str
    effects: xr.DataArray
    likelihood: str
    ci_prob: float
    diagnostics_passed: bool
    diagnostics_messages: tuple[str, ...]
    collection: str
    measure: str
    seed: int
    fit: Any = field(default=None, repr=False, compare=False)
    sigma: str = "pooled"
    misfit: tuple[str, ...] = ()

    @property
    def systems(self) -> tuple[str, ...]:
        """Systems of the model, in role order."""
        return tuple(str(s) for s in self.effects["system"].to_numpy())

    @property
    def roles(self) -> tuple[str, ...]:
        """Role of each system."""
        return tuple(str(s) for s in self.effects["role"].to_numpy())

    def _flat(self) -> np.ndarray:
        return self.effects.stack(sample=SAMPLE_DIMS).transpose("sample", "system").to_numpy()

    def conf_int(self, ci_prob: float | None = None) -> pd.DataFrame:
        """BRisk- per system: ``estimate, ci_lower, ci_upper`` (equal-tailed)."""
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        minus = -self._flat()
        lo, hi = _quantiles(minus, p)
        return pd.DataFrame(
            {"estimate": minus.mean(axis=0), "ci_lower": lo, "ci_upper": hi},
            index=pd.Index(self.systems, name="system"),
        )

    def to_frame(self, ci_prob: float | None = None) -> pd.DataFrame:
        """One row per system; columns :data:`BRISK_COLUMNS`.

        ``brisk_minus`` = minus the posterior mean system effect (higher = riskier) with
        its interval; ``contrast`` = system effect minus the champion's (positive = the
        system's risk-adjusted scores beat the champion) with its interval;
        ``p_riskier`` = P(system effect < champion's effect).
        """
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        u = self._flat()
        champ = u[:, self.systems.index(self.champion)]
        contrast = u - champ[:, None]
        c_lo, c_hi = _quantiles(contrast, p)
        ci = self.conf_int(p)
        frame = pd.DataFrame(
            {
                "system": list(self.systems),
                "role": list(self.roles),
                "r": self.r,
                "brisk_minus": ci["estimate"].to_numpy(),
                "ci_lower": ci["ci_lower"].to_numpy(),
                "ci_upper": ci["ci_upper"].to_numpy(),
                "contrast": contrast.mean(axis=0),
                "contrast_lower": c_lo,
                "contrast_upper": c_hi,
                "p_riskier": (contrast < 0).mean(axis=0),
                "diagnostics_passed": self.diagnostics_passed,
            }
        )
        is_champ = frame["system"] == self.champion
        frame.loc[is_champ, ["contrast", "contrast_lower", "contrast_upper", "p_riskier"]] = np.nan
        return frame

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self, *, artifacts: bool = False) -> str:
        """Header, diagnostics verdict and BRisk- of the champion and challengers."""
        frame = self.to_frame()
        if not artifacts:
            frame = frame[frame["role"] != "artifact"]
        n_chain, n_draw = self.effects.sizes["chain"], self.effects.sizes["draw"]
        lines = [
            f"BRisk (r = {self.r:g}): hierarchical {self.likelihood} model of risk-adjusted "
            f"scores against champion {self.champion!r}; {len(self.systems)} systems; "
            f"{n_chain} chains x {n_draw} draws; collection {self.collection!r}, "
            f"measure {self.measure!r}",
            _banner(self.diagnostics_passed, self.diagnostics_messages),
            "BRisk- = minus the system effect (higher = riskier, Benham et al. 2020); "
            f"{self.ci_prob:.0%} credible intervals; P(riskier) = P(effect below the champion's)",
            f"{'system':<24} {'BRisk-':>8} {'lower':>8} {'upper':>8} {'vs champ':>9} "
            f"{'P(riskier)':>10}",
        ]
        for row in frame.itertuples():
            vs = "" if np.isnan(row.contrast) else f"{row.contrast:>9.4f}"
            pr = "" if np.isnan(row.p_riskier) else f"{row.p_riskier:>10.3f}"
            lines.append(
                f"{row.system:<24} {row.brisk_minus:>8.4f} {row.ci_lower:>8.4f} "
                f"{row.ci_upper:>8.4f} {vs:>9} {pr:>10}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def forecast(
        self, challenger: str, *, ci_prob: float | None = None, seed: int | None = None
    ) -> BRiskForecast:
        """Per-topic predictive intervals of a challenger's risk-adjusted scores.

        Uses the fit's observation model (skew-normal when ``likelihood="skew_normal"``)
        through :func:`bayes_ir.hierarchical.posterior_predictive`; the champion's
        scores are shown beside them (the paper's Figure 8).
        """
        from bayes_ir.hierarchical.predictive import posterior_predictive

        if self.fit is None:
            raise MeasureError("this BRisk result keeps no fit; refit to forecast")
        if challenger == self.champion:
            raise RoleError(f"{challenger!r} is the champion: forecast a challenger")
        if challenger not in self.systems:
            others = [s for s in self.systems if s != self.champion]
            raise UnknownSystemError(challenger, others, role="challenger")
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        pred = posterior_predictive(
            self.fit, ci_prob=p, seed=self.seed if seed is None else seed, systems=[challenger]
        )
        frame = pred.to_frame()
        champ = self.fit.table.matrix().sel(system=self.champion).to_pandas()
        frame = frame.rename(columns={"observed": "adjusted_score"})
        frame.insert(2, "champion_score", champ.reindex(frame["topic"]).to_numpy())
        frame = frame.drop(columns=["role"], errors="ignore")
        return BRiskForecast(
            challenger=challenger,
            champion=self.champion,
            r=self.r,
            likelihood=self.likelihood,
            ci_prob=p,
            frame=frame.reset_index(drop=True),
            diagnostics_passed=self.diagnostics_passed,
            collection=self.collection,
            measure=self.measure,
        )

    def plot(self, **kwargs: Any) -> Any:
        """Forest plot of BRisk- with credible intervals."""
        from bayes_ir.plots.risk import plot_brisk

        return plot_brisk(self, **kwargs)


@dataclass(frozen=True)
class BRiskForecast:
    """Per-topic predictive intervals of one challenger's risk-adjusted scores.

    ``frame`` columns: ``topic, system, champion_score, adjusted_score, mean,
    ci_lower, ci_upper, covered`` (``adjusted_score`` is the observed risk-adjusted
    score, ``mean`` the predictive mean); ``collection`` and ``measure`` name the data.
    """

    challenger: str
    champion: str
    r: float
    likelihood: str
    ci_prob: float
    frame: pd.DataFrame
    diagnostics_passed: bool
    collection: str = ""
    measure: str = ""

    def to_frame(self) -> pd.DataFrame:
        """Return the per-topic table (a copy)."""
        return self.frame.copy()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    @property
    def coverage(self) -> float:
        """Fraction of observed risk-adjusted scores inside their intervals."""
        return float(self.frame["covered"].mean())

    def summary(self) -> str:
        """One-paragraph description of the forecast."""
        below = (self.frame["ci_upper"] < self.frame["champion_score"]).sum()
        return "\n".join(
            [
                f"Per-topic forecast of {self.challenger!r} (risk-adjusted, r = {self.r:g}) "
                f"against champion {self.champion!r}; {self.likelihood} observation model",
                _banner(self.diagnostics_passed, ()),
                f"{self.ci_prob:.0%} predictive intervals cover {self.coverage:.1%} of the "
                f"observed risk-adjusted scores; on {below} of {len(self.frame)} topics the "
                "whole interval lies below the champion's score",
            ]
        )

    def __str__(self) -> str:
        return self.summary()

    def plot(self, **kwargs: Any) -> Any:
        """Intervals per topic against the champion's scores (Figure 8)."""
        from bayes_ir.plots.risk import plot_brisk_forecast

        return plot_brisk_forecast(self, **kwargs)


def _check_risk_likelihood(likelihood: str) -> str:
    r"""Return ``likelihood`` when it models risk-adjusted scores, else raise one line.

    Risk-adjusted scores :math:`b_t + \delta^{(r)}_{ts}` are real numbers (below 0 when
    a system loses a topic by more than the champion's score), so only the continuous
    families (gaussian, skew_normal, ``"auto"``'s choice among them) describe them; a
    bounded, 0/1 or k-of-n family is an :class:`~bayes_ir.errors.OptionError`.
    """
    from bayes_ir.hierarchical.families import get_family

    if likelihood != "auto" and get_family(likelihood).outcome_space != "continuous":
        raise OptionError(
            f"BRisk models risk-adjusted scores, which leave [0, 1]: likelihood={likelihood!r} "
            "cannot describe them; use 'gaussian', 'skew_normal' or 'auto'"
        )
    return likelihood


def brisk(
    table: ScoreTable,
    *,
    r: float = defaults.RISK_R,
    likelihood: str = "gaussian",
    ci_prob: float | None = None,
    champion: str | None = None,
    collection: str | None = None,
    measure: str | None = None,
    seed: int | None = None,
    strict: bool = False,
    fit: Any = None,
    **fit_options: Any,
) -> BRiskResult:
    r"""BRisk of every system: the hierarchical model fitted to risk-adjusted scores.

    Parameters
    ----------
    table
        Complete scores with roles (champion, challengers, artifacts).
    r
        Loss weight :math:`r = 1 + \alpha \ge 1`.
    likelihood
        ``"gaussian"`` (the paper's hierarchy), ``"skew_normal"`` (for per-topic
        forecasts, :meth:`BRiskResult.forecast`) or ``"auto"``: a continuous model, as
        the risk-adjusted scores leave [0, 1] (a bounded or discrete family is an
        :class:`~bayes_ir.errors.OptionError`).
    ci_prob
        Interval probability of the summaries.
    champion
        Baseline; default: the table's champion.
    collection, measure
        The block to use when the table holds several.
    seed
        Seed of the sampler.
    strict
        Raise :class:`~bayes_ir.errors.ConvergenceError` when the diagnostics fail
        (otherwise the engine warns with :class:`~bayes_ir.errors.ConvergenceWarning`
        and the result says so loudly).
    fit
        An existing fit of the risk-adjusted scores at this ``r`` (e.g. ``result.fit``
        of an earlier call, or :func:`bayes_ir.hierarchical.load_fit` of a saved one),
        used instead of fitting (its diagnostics and model check warn, or raise with
        ``strict``, as a fresh fit's would); ``likelihood`` and ``fit_options`` are then
        ignored. It is checked with :func:`bayes_ir.hierarchical.check_fit` (one
        :class:`~bayes_ir.errors.BayesIRError` line when it was made on other data,
        another r or other roles).
    **fit_options
        Passed on to :func:`bayes_ir.hierarchical.fit` (``chains``, ``draws``,
        ``tune``, ``method``, ...).

    Returns
    -------
    BRiskResult

    Notes
    -----
    With :math:`b_t` the champion's score and :math:`\delta^{(r)}_t` the risk-adjusted
    difference of system :math:`s`, the model is fitted to
    :math:`y_{ts} = b_t + \delta^{(r)}_{ts}` (and :math:`y_{t,\mathrm{champion}} = b_t`):

    .. math::

        y_{ts} = \beta_0 + a_t + u_s + \varepsilon_{ts},\qquad
        \mathrm{BRisk}^-_s = -u_s,

    reported with its posterior mean and equal-tailed credible interval; the contrast
    :math:`u_s - u_{\mathrm{champion}}` and
    :math:`P(u_s < u_{\mathrm{champion}})` (riskier than the champion) are computed
    draw by draw.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033
    """
    from bayes_ir.hierarchical import check_fit
    from bayes_ir.hierarchical import fit as hierarchical_fit

    r = check_r(r)
    p = defaults.ci_prob(ci_prob)
    seed = validate.seed(seed)
    _check_risk_likelihood(likelihood)
    if table.roles is None and champion is None:
        raise RoleError("BRisk needs roles: call table.with_roles(champion=...) first")
    adjusted = risk_adjusted_scores(
        table, r=r, champion=champion, collection=collection, measure=measure
    )
    base_measure = adjusted.measures[0].rsplit("~risk(", 1)[0]
    if fit is None:
        fitted = hierarchical_fit(
            adjusted, likelihood=likelihood, seed=seed, strict=strict, **fit_options
        )
    else:
        check_fit(fit, adjusted, name=f"the fit given to BRisk (r = {r:g})")
        fitted = fit  # it warns (or raises, strict) as a fresh fit would
        fitted.diagnostics.warn_or_raise(strict=strict, stacklevel=2)
        if fitted.model_check is not None:
            fitted.model_check.warn(stacklevel=2)
    from bayes_ir.hierarchical.diagnostics import GateStatus

    gate = GateStatus.of(fitted)
    effects = fitted.system_effect_draws()
    return BRiskResult(
        r=r,
        champion=adjusted.champion,
        effects=effects,
        likelihood=str(getattr(fitted, "likelihood", likelihood)),
        ci_prob=p,
        diagnostics_passed=gate.passed,
        diagnostics_messages=gate.messages,
        collection=adjusted.collections[0],
        measure=base_measure,
        seed=seed,
        fit=fitted,
        sigma=str(getattr(fitted, "provenance", {}).get("sigma", "pooled")),
        misfit=() if fitted.model_check is None else tuple(fitted.model_check.flagged),
    )


@dataclass(frozen=True)
class BRiskSweep:
    """BRisk over several loss weights (the paper's Figure 7).

    ``results`` holds one :class:`BRiskResult` per r, without their fits.
    """

    results: tuple[BRiskResult, ...]

    @property
    def r_levels(self) -> tuple[float, ...]:
        """The loss weights, in order."""
        return tuple(res.r for res in self.results)

    @property
    def diagnostics_passed(self) -> bool:
        """True when every fit passed its diagnostics."""
        return all(res.diagnostics_passed for res in self.results)

    def to_frame(self, ci_prob: float | None = None) -> pd.DataFrame:
        """Return the :meth:`BRiskResult.to_frame` rows of every r, stacked."""
        return pd.concat([res.to_frame(ci_prob) for res in self.results], ignore_index=True)

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """BRisk- of the champion and challengers per r."""
        frame = self.to_frame()
        frame = frame[frame["role"] != "artifact"]
        wide = frame.pivot(index="system", columns="r", values="brisk_minus")
        wide = wide.reindex([s for s in self.results[0].systems if s in wide.index])
        header = "BRisk- (higher = riskier) by loss weight r; " + (
            "diagnostics PASS for every r"
            if self.diagnostics_passed
            else "!! DIAGNOSTICS FAILED for r = "
            + ", ".join(f"{x.r:g}" for x in self.results if not x.diagnostics_passed)
        )
        return header + "\n" + wide.to_string(float_format=lambda x: f"{x:.4f}")

    def __str__(self) -> str:
        return self.summary()

    def plot(self, **kwargs: Any) -> Any:
        """BRisk- intervals of the champion and challengers per r (Figure 7)."""
        from bayes_ir.plots.risk import plot_brisk_sweep

        return plot_brisk_sweep(self, **kwargs)


def _brisk_r(r: float, *, table: ScoreTable, keep_fit: bool, **options: Any) -> BRiskResult:
    res = brisk(table, r=r, **options)
    if keep_fit:
        return res
    return replace(res, fit=None)


def brisk_sweep(
    table: ScoreTable,
    *,
    r_levels: Sequence[float] = defaults.RISK_LEVELS,
    executor: Any = None,
    fits: Mapping[float, Any] | None = None,
    **options: Any,
) -> BRiskSweep:
    """Fit :func:`brisk` for every loss weight in ``r_levels`` through :func:`bayes_ir.sweep.sweep`.

    Parameters
    ----------
    table
        Complete scores with roles.
    r_levels
        Loss weights (default 1, 2, 5, 10).
    executor
        Any ``concurrent.futures.Executor`` (default: local processes).
    fits
        Existing fits of the risk-adjusted scores by loss weight (e.g. ``{5: result.fit}``
        of an earlier :func:`brisk`, or saved fits read with
        :func:`bayes_ir.hierarchical.load_fit`): those r are not refitted (each fit is
        checked as in :func:`brisk`); the other r are fitted through the sweep.
    **options
        Passed on to :func:`brisk` (``likelihood``, ``seed``, ``draws``, ...).

    Returns
    -------
    BRiskSweep

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033
    """
    levels = tuple(dict.fromkeys(check_r(r) for r in r_levels))
    if not levels:
        raise MeasureError("give at least one loss weight r")
    given = {check_r(r): fit for r, fit in (fits or {}).items()}
    unknown = sorted(set(given) - set(levels))
    if unknown:
        raise MeasureError(f"fits given for r = {unknown[0]:g}, which is not in r_levels")
    func = functools.partial(_brisk_r, table=table, keep_fit=False, **options)
    todo = [r for r in levels if r not in given]
    done = dict(zip(todo, sweep(func, todo, executor=executor,
                                label="BRisk sweep (one fit per r)"), strict=True))  # fmt: skip
    for r, fit in given.items():
        done[r] = _brisk_r(r, table=table, keep_fit=False, fit=fit, **options)
    return BRiskSweep(results=tuple(done[r] for r in levels))
