"""Forest plot of contrasts across collections or segments, with the shrinkage shown."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from bayes_ir.plots._common import misfit_note
from bayes_ir.report.marks import marked
from bayes_ir.report.numbers import format_probability

__all__ = ["plot_across", "plot_segment_risk"]

_RAW = "#7f7f7f"
_SHRUNK = "#1f77b4"
_POOLED = "#d62728"


def _quantiles(x: np.ndarray, ci_prob: float) -> tuple[float, float, float]:
    lo, hi = np.quantile(x, [(1 - ci_prob) / 2, (1 + ci_prob) / 2])
    return float(x.mean()), float(lo), float(hi)


def plot_across(result: Any, *, axes: Any = None, meta: Any = None) -> Any:
    r"""Draw each group's raw and shrunken contrast, the overall and the new-group contrast.

    Parameters
    ----------
    result
        An :class:`~bayes_ir.hierarchical.group_effects.AcrossContrasts`.
    axes
        One axis per challenger (``None``: a new figure, one panel per challenger).
    meta
        Optionally, a :class:`~bayes_ir.frequentist.MetaAnalysisResult` of the first
        challenger's per-group effects (same units): its pooled estimate and prediction
        interval are drawn under the Bayesian ones, as the frequentist cross-check.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Each group has two rows: the raw mean difference with its
    :math:`\pm z\,\mathrm{SE}` interval (grey, open) and the posterior contrast with
    its equal-tailed interval (blue), joined by an arrow from raw to shrunken; below
    them the overall contrast (a red diamond) and the contrast on a new group.
    """
    r = result
    n_chal = len(r.challengers)
    n_rows = len(r.groups) + 3 + (2 if meta is not None else 0)
    if axes is None:
        fig, axes = plt.subplots(
            n_chal,
            1,
            figsize=(8.0, 0.42 * n_rows * n_chal + 1.4),
            squeeze=False,
            layout="constrained",
        )
        axes = axes[:, 0]
    axes = np.ravel(axes)
    fig = axes[0].figure
    from scipy import stats

    z = stats.norm.ppf((1 + r.ci_prob) / 2)
    pct = f"{100 * r.ci_prob:g}%"
    for j, ax in enumerate(axes[:n_chal]):
        labels, y = [], 0.0
        ticks = []
        for k, g in enumerate(r.groups):
            x = r.group[:, j, k]
            if np.isnan(x[0]):
                continue
            mean, lo, hi = _quantiles(x, r.ci_prob)
            obs, se = r.observed[j, k], r.observed_se[j, k]
            ax.plot([obs - z * se, obs + z * se], [y + 0.18] * 2, color=_RAW, lw=1.2)
            ax.plot(obs, y + 0.18, "o", mfc="white", mec=_RAW, ms=5)
            ax.plot([lo, hi], [y - 0.18] * 2, color=_SHRUNK, lw=2)
            ax.plot(mean, y - 0.18, "o", color=_SHRUNK, ms=5)
            if abs(mean - obs) > 1e-12:
                arrow = {"arrowstyle": "->", "color": "#999999", "lw": 0.8}
                ax.annotate("", xy=(mean, y - 0.12), xytext=(obs, y + 0.12), arrowprops=arrow)
            labels.append(f"{g} (n={int(r.n_topics[j, k])})")
            ticks.append(y)
            y -= 1.0
        y -= 0.4
        mean, lo, hi = _quantiles(r.overall[:, j], r.ci_prob)
        ax.fill([lo, mean, hi, mean], [y, y + 0.3, y, y - 0.3], color=_POOLED)
        labels.append(
            f"overall: P(win) {format_probability(float((r.overall[:, j] > r.margin).mean()))}"
        )
        ticks.append(y)
        y -= 1.0
        pred = r.predictive_draws()[:, j]
        mean, lo, hi = _quantiles(pred, r.ci_prob)
        ax.plot([lo, hi], [y, y], color=_POOLED, lw=1.5, ls="--")
        ax.plot(mean, y, "D", mfc="white", mec=_POOLED, ms=6)
        labels.append(f"new {r.by}: P(win) {format_probability(float(r.p_new_win()[j]))}")
        ticks.append(y)
        if meta is not None and j == 0:
            ci = meta.conf_int(ci_prob=r.ci_prob)
            pi = meta.prediction_interval(ci_prob=r.ci_prob)
            y -= 1.0
            ax.plot([ci.ci_lower, ci.ci_upper], [y, y], color="black", lw=2)
            ax.plot(ci.estimate, y, "s", color="black", ms=5)
            labels.append(f"{meta.method} meta-analysis")
            ticks.append(y)
            y -= 1.0
            ax.plot([pi.pi_lower, pi.pi_upper], [y, y], color="black", lw=1.2, ls="--")
            labels.append(f"{meta.method} prediction interval")
            ticks.append(y)
        ax.axvline(0.0, color="black", lw=0.8)
        if r.margin:
            ax.axvline(r.margin, color="black", lw=0.8, ls=":")
        ax.set_yticks(ticks, labels)
        ax.set_ylim(y - 0.7, 0.7)
        ax.set_xlabel(f"{r.challengers[j]} - {r.champion} ({r.units})")
        ax.set_title(
            f"{marked(r.challengers[j], r.misfit)} vs {marked(r.champion, r.misfit)} "
            f"across {len(r.groups)} {r.by}s\n"
            f"raw (grey) and shrunken (blue) contrasts, {pct} intervals",
            loc="left",
            fontsize="medium",
        )
        ax.grid(axis="x", alpha=0.3)
    misfit_note(fig, r.misfit, champion=r.champion)
    return fig


def plot_segment_risk(result: Any, *, axes: Any = None) -> Any:
    """Draw each segment's BRisk- (pooled, with its interval) beside its URisk- (raw).

    Parameters
    ----------
    result
        A :class:`~bayes_ir.risk.SegmentRisk`.
    axes
        One axis per challenger (``None``: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
    """
    r = result
    frame = r.to_frame()
    n_chal = len(r.challengers)
    if axes is None:
        height = 0.38 * len(r.segments) * n_chal + 1.6
        fig, axes = plt.subplots(n_chal, 1, figsize=(7.5, height), squeeze=False)
        axes = axes[:, 0]
    axes = np.ravel(axes)
    fig = axes[0].figure
    pct = f"{100 * r.ci_prob:g}%"
    for ax, c in zip(axes, r.challengers, strict=False):
        part = frame[frame["challenger"] == c].reset_index(drop=True)
        y = -np.arange(len(part), dtype=float)
        colour = np.where(part["harmed"], _POOLED, _SHRUNK)
        ax.hlines(y - 0.15, part["brisk_lower"], part["brisk_upper"], color=colour, lw=2)
        ax.scatter(
            part["brisk_minus"], y - 0.15, color=colour, s=22, zorder=3, label="BRisk- (pooled)"
        )
        ax.scatter(part["urisk_minus"], y + 0.15, facecolor="white", edgecolor=_RAW, s=22,
                   zorder=3, label="URisk- (segment alone)")  # fmt: skip
        labels = [
            f"{g} (n={n})" + (" HARMED" if h else "")
            for g, n, h in zip(part["segment"], part["n_topics"], part["harmed"], strict=True)
        ]
        ax.set_yticks(y, labels)
        ax.axvline(0.0, color="black", lw=0.8)
        ax.set_xlabel(f"risk against {r.champion} (r = {r.r:g}; higher = riskier)")
        ax.set_title(
            f"{c}: risk per segment, BRisk- {pct} intervals", loc="left", fontsize="medium"
        )
        ax.legend(loc="best", fontsize="small", frameon=False)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
