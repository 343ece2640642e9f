"""Figures of the Bayesian hierarchical comparison (Benham et al. 2020, Figures 3, 4, 5).

Each function takes a fit or a result object, draws one matplotlib figure and
returns it; nothing is shown or saved here (call ``fig.savefig(...)``).

- :func:`plot_system_topic_intervals`: system means on top, topic effects below (Figure 4);
- :func:`plot_predictive`: posterior predictive intervals and observed scores (Figure 3);
- :func:`plot_artifact_sweep`: intervals as the number of artifact runs grows (Figure 5);
- :func:`plot_contrasts`: forest plot of challenger-minus-champion differences;
- :func:`plot_pairwise`, :func:`plot_ranks`: heat maps of P(row > column) and P(rank = k).

References
----------
Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
doi:10.1145/3397271.3401033
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from bayes_ir import defaults
from bayes_ir.errors import OptionError
from bayes_ir.hierarchical.contrasts import (
    _interval_stats,
    system_mean_draws,
    topic_draws,
)

__all__ = [
    "ROLE_COLORS",
    "plot_artifact_sweep",
    "plot_contrasts",
    "plot_pairwise",
    "plot_predictive",
    "plot_ranks",
    "plot_system_topic_intervals",
]

#: Colours of individual challengers (no red: red is the champion's).
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
#: Colour of each role in every figure.
ROLE_COLORS = {"champion": "#c0392b", "challenger": "#1f77b4", "artifact": "#9a9a9a", "": "#444444"}


def _legend_roles(ax: Any, roles: Iterable[str]) -> None:
    """Legend of the roles, in the upper left corner.

    Systems are sorted by increasing mean, so the upper left is the one corner that no
    interval reaches; ``loc="best"`` could cover the best system's interval.
    """
    present = [r for r in ("champion", "challenger", "artifact") if r in set(roles)]
    handles = [Line2D([], [], color=ROLE_COLORS[r], marker="o", lw=2, label=r) for r in present]
    if handles:
        ax.legend(handles=handles, loc="upper left", fontsize="small", frameon=False)


def plot_system_topic_intervals(
    fit: Any,
    *,
    ci_prob: float | None = None,
    label_artifacts: bool = False,
    figsize: tuple[float, float] = (10.0, 7.5),
) -> Figure:
    r"""System means (top) and topic effects (bottom) with credible intervals (Figure 4).

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` (or its posterior DataTree).
    ci_prob
        Interval probability (default :data:`bayes_ir.defaults.CI_PROB`).
    label_artifacts
        Write the names of artifact runs on the axis (default: only champion and
        challengers are named).
    figsize
        Figure size in inches.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Systems are sorted by the posterior mean of :math:`\beta_0 + c_s`, topics by the
    posterior mean of :math:`a_t` (hard topics on the left); points are posterior
    means, bars equal-tailed intervals.
    """
    p = defaults.ci_prob(ci_prob)
    means = system_mean_draws(fit)
    sys_stats = _interval_stats(means, "system", p, False)
    sys_stats["role"] = [str(r) for r in means["role"].values]
    sys_stats = sys_stats.sort_values("mean")
    topics = topic_draws(fit)
    top_stats = _interval_stats(topics, "topic", p, False).sort_values("mean")

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=figsize, layout="constrained")
    x = np.arange(len(sys_stats))
    colors = [ROLE_COLORS.get(r, ROLE_COLORS[""]) for r in sys_stats["role"]]
    ax1.vlines(x, sys_stats["ci_lower"], sys_stats["ci_upper"], colors=colors, lw=2)
    ax1.scatter(x, sys_stats["mean"], c=colors, s=18, zorder=3)
    ax1.set_xticks(x)
    labels = [
        name if (label_artifacts or role != "artifact") else ""
        for name, role in zip(sys_stats.index, sys_stats["role"], strict=True)
    ]
    ax1.set_xticklabels(labels, rotation=60, ha="right", fontsize="small")
    ax1.set_ylabel("system mean")
    ax1.set_title(f"System means with {100 * p:g}% credible intervals")
    _legend_roles(ax1, sys_stats["role"])
    low, high = ax1.get_ylim()  # headroom so that the legend clears the intervals
    ax1.set_ylim(low, high + 0.25 * (high - low))
    champ = sys_stats.index[sys_stats["role"] == "champion"]
    if len(champ):
        ax1.axhline(sys_stats.loc[champ[0], "mean"], color=ROLE_COLORS["champion"], lw=0.8, ls=":")

    xt = np.arange(len(top_stats))
    ax2.vlines(xt, top_stats["ci_lower"], top_stats["ci_upper"], color="#555555", lw=1.5)
    ax2.scatter(xt, top_stats["mean"], color="black", s=10, zorder=3)
    ax2.axhline(0, color="black", lw=0.6)
    ax2.set_xticks(xt)
    ax2.set_xticklabels(top_stats.index, rotation=90, fontsize="x-small")
    ax2.set_ylabel("topic effect")
    ax2.set_xlabel("topic (hard ... easy)")
    ax2.set_title(f"Topic effects with {100 * p:g}% credible intervals")
    return fig


def plot_predictive(
    result: Any,
    *,
    systems: Iterable[str] | None = None,
    ncols: int = 2,
    figsize: tuple[float, float] | None = None,
) -> Figure:
    """Posterior predictive intervals per topic with the observed scores (Figure 3).

    Parameters
    ----------
    result
        A :class:`~bayes_ir.hierarchical.predictive.PredictiveIntervals`.
    systems
        Systems to draw, one panel each (default: champion and challengers).
    ncols
        Panels per row.
    figsize
        Figure size (default grows with the number of panels).

    Returns
    -------
    matplotlib.figure.Figure
        Topics are sorted by predictive mean; observed scores outside their interval
        are drawn as red crosses. For a bounded measure (e.g. AP in [0, 1]) the dashed
        lines mark its range and the intervals are drawn cut at it (a score cannot leave
        it); the title says so when the model puts predictive mass outside.
    """
    from bayes_ir.measures import measure_range

    frame = result.frame
    table: Any = getattr(getattr(result, "fit", None), "table", None)
    measure = table.measures[0] if table is not None and len(table.measures) == 1 else None
    where = (
        f"{measure} on {table.collections[0]}"
        if measure is not None and len(table.collections) == 1
        else measure
    )
    low, high = measure_range(measure)
    if systems is None:
        keep = frame.loc[frame["role"] != "artifact", "system"]
        chosen = list(dict.fromkeys(keep if len(keep) else frame["system"]))
    else:
        chosen = list(systems)
        unknown = [s for s in chosen if s not in set(frame["system"])]
        if unknown:
            raise OptionError(f"no predictive intervals for {unknown}")
    n = len(chosen)
    ncols = max(1, min(ncols, n))
    nrows = int(np.ceil(n / ncols))
    figsize = figsize or (5.0 * ncols, 3.0 * nrows + 0.5)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=figsize, squeeze=False, sharey=True, layout="constrained"
    )
    for ax, system in zip(axes.flat, chosen, strict=False):
        sub = frame[frame["system"] == system].sort_values("mean")
        x = np.arange(len(sub))
        lower = np.clip(sub["ci_lower"].to_numpy(), low, high)
        upper = np.clip(sub["ci_upper"].to_numpy(), low, high)
        ax.vlines(x, lower, upper, color="#9ecae1", lw=2.5)
        ax.scatter(x, sub["mean"], color="#1f77b4", s=8, marker="_", zorder=3)
        inside = sub["covered"].to_numpy()
        ax.scatter(x[inside], sub["observed"][inside], color="black", s=10, zorder=4)
        ax.scatter(
            x[~inside], sub["observed"][~inside], color="#c0392b", marker="x", s=18, zorder=4
        )
        for bound in (low, high):
            if np.isfinite(bound):
                ax.axhline(bound, color="grey", lw=0.6, ls="--")
        ax.set_title(f"{system} ({inside.mean():.0%} inside)", fontsize="medium")
        ax.set_xticks([])
        ax.set_xlabel("topic (by predicted score)")
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(measure or "score")
    outside = bool(((frame["ci_lower"] < low) | (frame["ci_upper"] > high)).any())
    fig.suptitle(
        f"{100 * result.ci_prob:g}% posterior predictive intervals ({result.likelihood}) and "
        f"observed scores" + (f", {where}" if where else "")
        + (f"\nintervals cut at the range [{low:g}, {high:g}]: the model puts some mass "
           "outside it" if outside else ""),
        fontsize="medium",
    )  # fmt: skip
    return fig


#: Left-panel label and title of :func:`plot_artifact_sweep` for each ``effects``.
_SWEEP_LEFT = {
    "mean": ("system mean", "System means"),
    "zero_sum": ("system effect (zero-sum)", "System effects, zero-sum"),
    "intercept_deviation": (
        "system effect (deviation from the intercept)",
        "System effects as in rstanarm",
    ),
}


def plot_artifact_sweep(
    sweep: Any, *, effects: str = "mean", figsize: tuple[float, float] = (11.0, 4.5)
) -> Figure:
    """System and difference intervals against the number of artifact runs (Figure 5).

    Parameters
    ----------
    sweep
        An :class:`~bayes_ir.hierarchical.artifact_sweep.ArtifactSweep`.
    effects
        What the left panel shows (see
        :meth:`~bayes_ir.hierarchical.artifact_sweep.ArtifactSweep.system_frame`):
        ``"mean"`` (default) the system means, ``"zero_sum"`` the zero-sum effects,
        ``"intercept_deviation"`` rstanarm's deviations from the intercept, as the
        paper's Figure 5 does.
    figsize
        Figure size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        Left: intervals of the champion's and challengers' means (or effects) for each
        ``m``; right: intervals of each challenger minus the champion, with the zero line.
    """
    systems = sweep.system_frame(effects=effects)
    diffs = sweep.to_frame()
    ms = list(sweep.m_values)
    pos = {m: i for i, m in enumerate(ms)}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=figsize, layout="constrained")
    names = [sweep.champion, *sweep.challengers]
    colors = {sweep.champion: ROLE_COLORS["champion"]}
    colors.update({c: _PALETTE[k % len(_PALETTE)] for k, c in enumerate(sweep.challengers)})
    width = 0.7

    def offsets(n: int) -> np.ndarray:
        return np.linspace(-width / 2, width / 2, n) if n > 1 else np.zeros(1)

    for k, name in enumerate(names):
        sub = systems[systems["system"] == name]
        x = np.array([pos[m] for m in sub["m"]]) + offsets(len(names))[k]
        ax1.vlines(x, sub["ci_lower"], sub["ci_upper"], color=colors[name], lw=2, label=name)
        ax1.scatter(x, sub["mean"], color=colors[name], s=14, zorder=3)
    ylabel, title = _SWEEP_LEFT[effects]
    ax1.set_ylabel(ylabel)
    if effects != "mean":
        ax1.axhline(0, color="0.6", lw=0.8, ls=":")
    ax1.set_title(f"{title}, {100 * sweep.ci_prob:g}% intervals")
    for k, name in enumerate(sweep.challengers):
        sub = diffs[diffs["challenger"] == name]
        x = np.array([pos[m] for m in sub["m"]]) + offsets(len(sweep.challengers))[k]
        ax2.vlines(x, sub["ci_lower"], sub["ci_upper"], color=colors[name], lw=2)
        ax2.scatter(x, sub["mean"], color=colors[name], s=14, zorder=3)
    ax2.axhline(0, color=ROLE_COLORS["champion"], lw=0.8, ls=":")
    ax2.set_ylabel(f"challenger - {sweep.champion}")
    ax2.set_title("Differences from the champion")
    for ax in (ax1, ax2):
        ax.set_xticks(range(len(ms)), [str(m) for m in ms])
        ax.set_xlabel("artifact runs in the model (m)")
    fig.legend(loc="outside lower center", ncol=len(names), fontsize="small", frameon=False)
    if not sweep.diagnostics_passed:
        failed = [str(pt.m) for pt in sweep.points if not pt.gate.passed]
        fig.suptitle(
            f"WARNING: the refits with m = {', '.join(failed)} FAILED their diagnostics",
            color="#c0392b",
        )
    else:
        fig.suptitle("Artifact sweep: the model refitted with the m best artifact runs")
    return fig


def plot_contrasts(result: Any, *, figsize: tuple[float, float] | None = None) -> Figure:
    """Forest plot of the differences of a :func:`compare` or :func:`many_vs_one` result.

    Parameters
    ----------
    result
        A :class:`~bayes_ir.hierarchical.contrasts.Comparison` or
        :class:`~bayes_ir.hierarchical.contrasts.ManyVsOne`.
    figsize
        Figure size (default grows with the number of rows).

    Returns
    -------
    matplotlib.figure.Figure
        One row per difference: posterior mean, equal-tailed interval, zero line, the
        minimal worthwhile gain (dashed) and P(better) on the right.
    """
    frame = result.to_frame()
    if "challenger" in frame and hasattr(result, "challengers"):
        labels = [f"{c} - {result.champion}" for c in frame["challenger"]]
    else:
        labels = [f"{result.challenger} - {c}" for c in frame["champion"]]
    n = len(frame)
    fig, ax = plt.subplots(figsize=figsize or (8.0, 1.0 + 0.5 * n), layout="constrained")
    y = np.arange(n)[::-1]
    ax.hlines(y, frame["ci_lower"], frame["ci_upper"], color="#1f77b4", lw=2.5)
    ax.scatter(frame["mean"], y, color="black", zorder=3, s=20)
    ax.axvline(0, color="black", lw=0.8)
    gain = getattr(result, "min_gain", 0.0)
    if gain:
        ax.axvline(gain, color="#2ca02c", lw=0.8, ls="--", label=f"min gain {gain:g}")
        ax.legend(fontsize="small", frameon=False, loc="lower right")
    ax.set_yticks(y, labels)
    ax.set_xlabel(f"difference of system means ({100 * result.ci_prob:g}% interval)")
    for yy, pb in zip(y, frame["p_better"], strict=True):
        ax.annotate(
            f"P(>0) = {pb:.2f}", xy=(1.0, yy), xycoords=("axes fraction", "data"),
            xytext=(4, 0), textcoords="offset points", va="center", fontsize="small",
        )  # fmt: skip
    title = "Difference of system means, challenger - champion"
    if not result.diagnostics_passed:
        title += "  [DIAGNOSTICS FAILED: unreliable]"
    ax.set_title(title, color="black" if result.diagnostics_passed else "#c0392b")
    ax.set_ylim(-0.7, n - 0.3)
    return fig


def _heatmap(
    matrix: Any, *, title: str, xlabel: str, figsize: tuple[float, float] | None, cmap: str
) -> Figure:
    values = matrix.to_numpy(dtype=float)
    k_rows, k_cols = values.shape
    fig, ax = plt.subplots(
        figsize=figsize or (1.2 + 0.7 * k_cols, 1.0 + 0.55 * k_rows), layout="constrained"
    )
    im = ax.imshow(np.ma.masked_invalid(values), vmin=0, vmax=1, cmap=cmap, aspect="auto")
    col_labels = [str(c) for c in matrix.columns]
    if max((len(c) for c in col_labels), default=0) > 3:  # names: slanted; ranks: upright
        ax.set_xticks(range(k_cols), col_labels, rotation=45, ha="right")
    else:
        ax.set_xticks(range(k_cols), col_labels)
    ax.set_yticks(range(k_rows), [str(i) for i in matrix.index])
    for i in range(k_rows):
        for j in range(k_cols):
            if np.isfinite(values[i, j]):
                dark = abs(values[i, j] - 0.5) > 0.3 if cmap == "RdBu_r" else values[i, j] > 0.6
                color = "white" if dark else "black"
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", color=color,
                        fontsize="small")  # fmt: skip
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, shrink=0.8)
    return fig


def plot_pairwise(result: Any, *, figsize: tuple[float, float] | None = None) -> Figure:
    """Heat map of P(row system > column system) from :func:`pairwise_probabilities`."""
    return _heatmap(
        result.matrix,
        title="P(row system > column system)",
        xlabel="",
        figsize=figsize,
        cmap="RdBu_r",
    )


def plot_ranks(result: Any, *, figsize: tuple[float, float] | None = None) -> Figure:
    """Heat map of P(rank = k) from :func:`rank_probabilities` (rank 1 = best)."""
    return _heatmap(
        result.matrix,
        title="Posterior probability of each rank, P(rank = k)",
        xlabel="rank k among these systems (1 = best)",
        figsize=figsize,
        cmap="Blues",
    )
