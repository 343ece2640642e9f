"""Figures of risk-sensitive evaluation (Benham et al. 2020, Figures 6, 7 and 8).

Each function takes a result object of :mod:`bayes_ir.risk` and ``ax=`` (``axes=`` for
several panels), draws one matplotlib figure and returns it; nothing is shown or saved
here (call ``fig.savefig(...)``). Every interval figure draws its reference line at the
champion's level: its own BRisk- for BRisk, 0 for URisk- (the champion's by definition).

- :func:`plot_one_to_one`: posterior of the mean risk-adjusted difference per loss
  weight r, Gaussian and skew-normal side by side (Figure 6);
- :func:`plot_brisk`: BRisk- with credible intervals per system;
- :func:`plot_brisk_sweep`: BRisk- of the champion and challengers as r grows (Figure 7);
- :func:`plot_brisk_forecast`: per-topic predictive intervals of a challenger's
  risk-adjusted scores against the champion's scores (Figure 8);
- :func:`plot_risk_review`: BCa- and BRisk- intervals of the review table.

References
----------
Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
doi:10.1145/3397271.3401033
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from scipy import stats

from bayes_ir.plots._common import grid_axes, mark_tick_labels, misfit_note, one_axes, where
from bayes_ir.plots.hierarchical import ROLE_COLORS
from bayes_ir.report.marks import MISFIT_MARK, marked, misfit_systems

__all__ = [
    "plot_brisk",
    "plot_brisk_forecast",
    "plot_brisk_sweep",
    "plot_one_to_one",
    "plot_risk_review",
]

_LIKELIHOOD_LABELS = {"gaussian": "Gaussian", "skew_normal": "skew-normal"}
_R_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02")


def plot_one_to_one(
    result: Any,
    *,
    parameter: str = "mu",
    ci_prob: float | None = None,
    figsize: tuple[float, float] | None = None,
    axes: Any = None,
) -> Figure:
    """Posterior densities of the mean risk-adjusted difference, one panel per likelihood.

    One curve per loss weight r (Figure 6 of Benham et al. 2020), with its equal-tailed
    credible interval as a bar under the curves; the dashed line marks 0 (no difference
    from the champion after risk adjustment). ``axes``: one matplotlib axes per
    likelihood (default a new figure); returns the figure.
    """
    liks = list(result.likelihoods)
    if parameter == "alpha":
        liks = [lik for lik in liks if lik != "gaussian"]
    fig, axes = grid_axes(axes, 1, len(liks), figsize or (4.6 * len(liks), 3.4), sharex=True)
    ci = result.to_frame(ci_prob)
    ci = ci[ci["parameter"] == parameter]
    all_x = np.concatenate(
        [result.draws(lik, r, parameter) for lik in liks for r in result.r_levels]
    )
    lo_all, hi_all = np.quantile(all_x, [0.001, 0.999])
    grid = np.linspace(lo_all, hi_all, 400)
    for ax, lik in zip(axes[0], liks, strict=True):
        top = 0.0
        curves = []
        for k, r in enumerate(result.r_levels):
            x = result.draws(lik, r, parameter)
            dens = stats.gaussian_kde(x)(grid)
            top = max(top, dens.max())
            curves.append((r, dens, _R_COLORS[k % len(_R_COLORS)]))
        for k, (r, dens, color) in enumerate(curves):
            ax.plot(grid, dens, color=color, lw=1.6, label=f"r = {r:g}")
            ax.fill_between(grid, dens, color=color, alpha=0.12)
            row = ci[(ci["likelihood"] == lik) & (ci["r"] == r)].iloc[0]
            y = -top * (0.06 + 0.06 * k)
            ax.plot([row.ci_lower, row.ci_upper], [y, y], color=color, lw=2.5)
            ax.plot([row["mean"]], [y], "o", color=color, ms=4)
        ax.axvline(0.0, color="black", lw=0.8, ls="--")
        ax.set_title(f"{_LIKELIHOOD_LABELS.get(lik, lik)} likelihood", fontsize="medium")
        ax.set_xlabel(
            f"mean risk-adjusted difference in {result.measure or 'score'} (challenger − champion)"
            if parameter == "mu"
            else parameter
        )
        ax.set_yticks([])
        ax.spines[["top", "right", "left"]].set_visible(False)
    axes[0][0].set_ylabel("posterior density")
    axes[0][0].legend(frameon=False, fontsize="small", loc="upper left")
    p = result.ci_prob if ci_prob is None else ci_prob
    on = f" ({where(result)})" if where(result) else ""
    fig.suptitle(
        f"{result.challenger} vs {result.champion}{on}: posterior of the mean, "
        f"bars = {p:.0%} intervals",
        fontsize="medium",
    )
    fig.tight_layout()
    return fig


def _interval_rows(
    ax: Any,
    frame: Any,
    est: str,
    lo: str,
    hi: str,
    *,
    xlabel: str,
    reference: float,
    reference_label: str,
    misfit: tuple[str, ...] = (),
) -> None:
    """One interval per row of ``frame`` (columns ``system``, ``role``, ``est``, ``lo``, ``hi``).

    ``reference``: the champion's level, drawn as the one dashed line, with its label;
    systems of ``misfit`` are named with the misfit mark, in red.
    """
    labels = [marked(str(name), misfit) for name in frame["system"]]
    colors = [ROLE_COLORS.get(r, "#444444") for r in frame["role"]]
    y = np.arange(len(labels))[::-1]
    for yi, e, a, b, c in zip(y, frame[est], frame[lo], frame[hi], colors, strict=True):
        if not np.isfinite(e):
            continue
        ax.plot([a, b], [yi, yi], color=c, lw=2.2)
        ax.plot([e], [yi], "o", color=c, ms=5, mec="black", mew=0.5)
    ax.set_yticks(y)
    ax.set_yticklabels(labels)
    mark_tick_labels(ax.get_yticklabels(), misfit)
    ax.axvline(reference, color=ROLE_COLORS["champion"], lw=1.0, ls="--", label=reference_label)
    ax.set_xlabel(xlabel)
    ax.spines[["top", "right"]].set_visible(False)


def _brisk_note(fig: Any, misfit: tuple[str, ...], champion: str) -> None:
    """Legend of the misfit mark of a BRisk figure: which BRisk- not to act on."""
    if not misfit:
        return
    names = ", ".join(f"the champion {m}" if m == champion else m for m in misfit)
    whose = "its" if len(misfit) == 1 else "their"
    text = (
        f"{MISFIT_MARK} model misfit: BRisk's model of the risk-adjusted scores does not "
        f"describe {names}: do not act on {whose} BRisk⁻"
        + (" nor on any comparison with the champion" if champion in misfit else "")
    )
    misfit_note(fig, misfit, text=text)


def _reference_legend(ax: Any) -> None:
    """Legend of the reference line, in a free row above the intervals."""
    low, high = ax.get_ylim()
    ax.set_ylim(low, high + 0.8)
    ax.legend(frameon=False, fontsize="small", loc="upper right")


def _champion_level(frame: Any, champion: str, est: str) -> tuple[float, str]:
    """Return the champion's estimate in ``frame`` and the label of its reference line."""
    value = float(frame.loc[frame["system"] == champion, est].iloc[0])
    return value, f"champion {champion} ({value:.4f})"


def plot_brisk(
    result: Any,
    *,
    artifacts: bool = False,
    ci_prob: float | None = None,
    figsize: tuple[float, float] | None = None,
    ax: Any = None,
) -> Figure:
    """BRisk- of each system with its credible interval (higher = riskier).

    Parameters
    ----------
    result
        A :class:`~bayes_ir.risk.BRiskResult`.
    artifacts
        Draw the artifact runs too.
    ci_prob
        Interval probability (default: the result's).
    figsize
        Size of a new figure.
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        One row per system; the dashed line is the champion's own BRisk- (a system
        right of it is riskier than the champion), not 0.
    """
    frame = result.to_frame(ci_prob)
    if not artifacts:
        frame = frame[frame["role"] != "artifact"]
    fig, ax = one_axes(ax, figsize or (5.5, 0.45 * len(frame) + 1.6), layout="constrained")
    misfit = misfit_systems(result, frame["system"])
    level, label = _champion_level(frame, result.champion, "brisk_minus")
    _interval_rows(
        ax,
        frame,
        "brisk_minus",
        "ci_lower",
        "ci_upper",
        xlabel=f"BRisk⁻ of {result.measure} (minus the system effect; higher = riskier)",
        reference=level,
        reference_label=label,
        misfit=misfit,
    )
    _reference_legend(ax)
    title = f"BRisk⁻, r = {result.r:g}, {where(result)} (dashed: the champion)"
    if not result.diagnostics_passed:
        title += "  [DIAGNOSTICS FAILED]"
    ax.set_title(title, fontsize="medium", color="black" if result.diagnostics_passed else "red")
    _brisk_note(fig, misfit, result.champion)
    return fig


def plot_brisk_sweep(
    sweep: Any,
    *,
    ci_prob: float | None = None,
    figsize: tuple[float, float] | None = None,
    axes: Any = None,
) -> Figure:
    """BRisk- intervals of the champion and challengers, one panel per r (Figure 7).

    ``axes``: one matplotlib axes per r (default a new figure); returns the figure. The
    dashed line of each panel is the champion's BRisk- at that r.
    """
    frame = sweep.to_frame(ci_prob)
    frame = frame[frame["role"] != "artifact"]
    levels = list(sweep.r_levels)
    systems = list(dict.fromkeys(frame["system"]))
    first = sweep.results[0]
    size = figsize or (2.8 * len(levels) + 1.2, 0.45 * len(systems) + 1.6)
    fig, axes = grid_axes(axes, 1, len(levels), size, sharey=True, layout="constrained")
    flagged = {s for res in sweep.results for s in misfit_systems(res, systems)}
    misfit = tuple(s for s in systems if s in flagged)  # at some r
    for ax, r in zip(axes[0], levels, strict=True):
        sub = frame[frame["r"] == r].set_index("system").loc[systems].reset_index()
        level, label = _champion_level(sub, first.champion, "brisk_minus")
        _interval_rows(
            ax,
            sub,
            "brisk_minus",
            "ci_lower",
            "ci_upper",
            xlabel=f"BRisk⁻ of {first.measure}",
            reference=level,
            reference_label=label,
            misfit=misfit,
        )
        ok = bool(sub["diagnostics_passed"].all())
        ax.set_title(f"r = {r:g}" + ("" if ok else " [FAILED]"), color="black" if ok else "red")
    fig.suptitle(
        f"BRisk⁻ of {first.measure} on {first.collection} (higher = riskier) as the loss weight "
        "r grows; dashed: the champion",
        fontsize="medium",
    )
    _brisk_note(fig, misfit, first.champion)
    return fig


def plot_brisk_forecast(
    forecast: Any, *, figsize: tuple[float, float] | None = None, ax: Any = None
) -> Figure:
    """Per-topic predictive intervals of the challenger's risk-adjusted scores (Figure 8).

    Topics are ordered by the champion's score (black dots); bars are the predictive
    intervals of the challenger's risk-adjusted score, the crosses the observed ones.
    Red bars lie wholly below the champion's score. A risk-adjusted score is not bound
    to the measure's range (a loss counts 1 + r times), so the intervals are not cut.
    ``ax``: axes to draw on (default a new figure); returns the figure.
    """
    frame = forecast.to_frame().sort_values("champion_score").reset_index(drop=True)
    x = np.arange(len(frame))
    fig, ax = one_axes(ax, figsize or (max(6.0, 0.16 * len(frame) + 2), 3.8))
    below = frame["ci_upper"] < frame["champion_score"]
    colors = np.where(below, "#c0392b", "#1f77b4").tolist()
    ax.vlines(x, frame["ci_lower"], frame["ci_upper"], colors=colors, lw=2.0, alpha=0.7)
    ax.plot(x, frame["mean"], "_", color="#1f77b4", ms=6, label="predictive mean")
    ax.plot(
        x, frame["adjusted_score"], "x", color="#555555", ms=4, label="observed (risk-adjusted)"
    )
    ax.plot(x, frame["champion_score"], "o", color="black", ms=3.5, label=f"{forecast.champion}")
    ax.set_xticks(x)
    ax.set_xticklabels(frame["topic"], rotation=90, fontsize=6)
    ax.set_xlabel("topic (ordered by the champion's score)")
    measure = getattr(forecast, "measure", "") or "score"
    ax.set_ylabel(f"{measure} (risk-adjusted: may leave the measure's range)", fontsize="small")
    ax.legend(frameon=False, fontsize="small", loc="upper left")
    on = f", {where(forecast)}" if where(forecast) else ""
    title = (
        f"{forecast.challenger}, risk-adjusted (r = {forecast.r:g}{on}): "
        f"{forecast.ci_prob:.0%} predictive intervals, "
        f"{_LIKELIHOOD_LABELS.get(forecast.likelihood, forecast.likelihood)} model"
    )
    if not forecast.diagnostics_passed:
        title += " [DIAGNOSTICS FAILED]"
    ax.set_title(title, fontsize="medium")
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def plot_risk_review(
    review: Any, *, figsize: tuple[float, float] | None = None, axes: Any = None
) -> Figure:
    """BCa- interval of URisk- and BRisk- credible interval per system, side by side.

    ``axes``: one matplotlib axes per panel (two with the Bayesian part, else one;
    default a new figure); returns the figure. The dashed line of each panel is the
    champion's level: 0 for URisk- (a system against itself), its BRisk- for BRisk-.
    """
    frame = review.to_frame()
    if review.brisk is None:
        frame = frame[frame["role"] != "champion"]
    panels = [("BCa⁻ (URisk⁻, Bonferroni)", "urisk_minus", "bca_lower_minus", "bca_upper_minus")]
    if review.brisk is not None:
        panels.append(("BRisk⁻ (credible interval)", "brisk_minus", "brisk_lower", "brisk_upper"))
    size = figsize or (4.6 * len(panels), 0.45 * len(frame) + 1.8)
    fig, axes = grid_axes(axes, 1, len(panels), size, sharey=True, layout="constrained")
    misfit = () if review.brisk is None else misfit_systems(review.brisk, frame["system"])
    for ax, (title, est, lo, hi) in zip(axes[0], panels, strict=True):
        if est == "brisk_minus":
            level, label = _champion_level(frame, review.champion, est)
        else:
            level, label = 0.0, f"champion {review.champion} (0)"
        _interval_rows(
            ax,
            frame,
            est,
            lo,
            hi,
            xlabel=f"{title.split(' ')[0]} of {review.measure} (higher = riskier)",
            reference=level,
            reference_label=label,
            misfit=misfit,
        )
        ax.set_title(title, fontsize="medium")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))  # no crowded tick labels
        _reference_legend(ax)
    fig.suptitle(
        f"Deployment risk vs champion {review.champion!r}, r = {review.r:g}, {where(review)}\n"
        f"{100 * review.ci_prob:g}% intervals; higher = riskier; dashed: the champion's level",
        fontsize="medium",
    )
    _brisk_note(fig, misfit, review.champion)
    return fig
