"""Figures of a leaderboard: rank intervals with the tie groups, and a CD-style diagram.

:func:`plot_rank_intervals` draws each system's posterior mean rank and rank interval,
one row per place, the tie groups as alternately shaded bands.
:func:`plot_critical_difference` draws the critical-difference-style diagram of Demšar
(2006), as autorank draws it: the systems on the axis of their mean rank, labels to the
left (better half) and right, and bars joining the systems of a group: the anchored tie
groups of a :class:`~bayes_ir.hierarchical.Leaderboard` (thick bars, posterior mean
ranks) and, in a second panel, the Friedman-Nemenyi groups
(:class:`~bayes_ir.frequentist.friedman.FriedmanNemenyi`, thin bars, mean ranks over
topics, with the critical difference drawn at the top).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from bayes_ir.plots._common import where

__all__ = ["plot_critical_difference", "plot_rank_intervals"]

_MISFIT = "#cf222e"
_BANDS = ("#ffffff", "#e8eef6")
#: Height of one label row of the CD diagram, in inches.
_ROW = 0.2


def plot_rank_intervals(
    lb: Any, *, ax: Any = None, figsize: tuple[float, float] | None = None
) -> Any:
    """Draw each system's mean rank and rank interval, the tie groups as shaded bands.

    Parameters
    ----------
    lb
        A :class:`~bayes_ir.hierarchical.Leaderboard`.
    ax
        Axes to draw on (default: a new figure, its height growing with the systems).
    figsize
        Size of a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One row per place (the best at the top); systems the model check flags in red
        with ``(misfit)``; the group number at the right of each band.
    """
    f = lb.frame
    n = len(f)
    if ax is None:
        height = figsize[1] if figsize else max(3.0, 0.9 + 0.19 * n)
        fig, ax = plt.subplots(figsize=(figsize[0] if figsize else 7.5, height))
    else:
        fig = ax.figure
    y = np.arange(n)
    groups = f["group"].to_numpy()
    for g in np.unique(groups):
        rows = y[groups == g]
        ax.axhspan(rows.min() - 0.5, rows.max() + 0.5, color=_BANDS[int(g) % 2], zorder=0, lw=0)
        ax.text(1.01, 1 - (rows.mean() + 0.5) / n, str(g), transform=ax.transAxes,
                va="center", ha="left", fontsize="x-small", color="#57606a")  # fmt: skip
    misfit = f["misfit"].to_numpy(dtype=bool)
    colours = np.where(misfit, _MISFIT, "#1b1f24")
    lower, upper = f["rank_lower"].to_numpy(), f["rank_upper"].to_numpy()
    ax.hlines(y, lower, upper, colors=colours, lw=1.6, zorder=2)
    ax.scatter(f["rank_mean"], y, c=colours, s=14, zorder=3)
    labels = [f"{s} (misfit)" if m else str(s) for s, m in zip(f["system"], misfit, strict=True)]
    ax.set_yticks(y, labels, fontsize="x-small" if n > 40 else "small")
    for tick, m in zip(ax.get_yticklabels(), misfit, strict=True):
        if m:
            tick.set_color(_MISFIT)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0.5, n + 0.5)
    ax.set_xlabel(f"rank (1 = best); dot: posterior mean rank, bar: {lb.ci_prob:g} interval")
    on = f", {where(lb)}" if where(lb) else ""
    ax.set_title(
        f"Rank intervals and tie groups{on}\n(group numbers at the right; rope {lb.rope:g}, "
        f"P >= {lb.p_min:g})",
        loc="left",
        fontsize="medium",
    )
    ax.grid(axis="x", alpha=0.3, zorder=1)
    if not lb.diagnostics_passed:
        ax.text(0.5, 0.5, "DIAGNOSTICS FAILED", transform=ax.transAxes, ha="center",
                va="center", color=_MISFIT, fontsize=20, alpha=0.35, rotation=30)  # fmt: skip
    fig.tight_layout()
    return fig


def _cd_panel(
    ax: Any,
    names: Sequence[str],
    ranks: np.ndarray,
    bars: Sequence[tuple[float, float]],
    *,
    width: float,
    title: str,
    levels: Sequence[int],
    cd: float | None = None,
    misfit: frozenset[str] = frozenset(),
) -> None:
    """Draw one CD diagram on ``ax`` (axis coordinates: x = rank, y = label rows, down).

    ``levels`` puts each bar on its row below the axis (bars that may overlap each get
    their own; disjoint groups alternate between two).
    """
    k = len(names)
    order = np.argsort(ranks, kind="stable")
    names = [names[i] for i in order]
    ranks = np.asarray(ranks, dtype=float)[order]
    low, high = 1.0, float(max(k, math.ceil(ranks.max())))
    half = math.ceil(k / 2)
    top = 0.6 if cd is not None else 0.25
    first = top + 0.35 + 0.12 * (max(levels, default=-1) + 1)
    ax.set_axis_off()
    longest = max(len(n) + (9 if n in misfit else 0) for n in names) + 6
    side = min(0.4, (longest * 0.062 + 0.3) / width)  # the labels' share of each side
    margin = side * (high - low) / (1 - 2 * side)
    ax.set_xlim(low - margin, high + margin)
    ax.set_ylim(first + half * 0.2 + 0.2, -0.05)
    ax.plot([low, high], [top, top], color="k", lw=0.8)
    step = 1 if k <= 20 else 5 if k <= 100 else 10
    for tick in [1, *range(step, int(high) + 1, step)]:
        ax.plot([tick, tick], [top - 0.05, top], color="k", lw=0.8)
        ax.text(tick, top - 0.07, str(tick), ha="center", va="bottom", fontsize="x-small")
    if cd is not None:
        ax.plot([low, low + cd], [0.18, 0.18], color="k", lw=1.2)
        for x in (low, low + cd):
            ax.plot([x, x], [0.14, 0.22], color="k", lw=1.2)
        ax.text(low + cd / 2, 0.13, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize="small")
    for level, (a, b) in zip(levels, bars, strict=True):
        yb = top + 0.2 + 0.12 * level
        ax.plot([a - 0.1, b + 0.1], [yb, yb], color="k", lw=3 if cd is None else 1.5,
                solid_capstyle="round")  # fmt: skip
    for i, (name, r) in enumerate(zip(names, ranks, strict=True)):
        left = i < half
        row = i if left else k - 1 - i
        yl = first + 0.2 * row
        xl = low - 0.05 * (high - low) if left else high + 0.05 * (high - low)
        colour = _MISFIT if name in misfit else "k"
        ax.plot([r, r, xl], [top, yl, yl], color=colour, lw=0.6)
        label = f"{name} (misfit)" if name in misfit else name
        ax.text(xl + (-0.01 if left else 0.01) * (high - low), yl, f"{label}  {r:.1f}"
                if not left else f"{r:.1f}  {label}", ha="right" if left else "left",
                va="center", fontsize="x-small", color=colour)  # fmt: skip
    ax.set_title(title, loc="left", fontsize="small")


def plot_critical_difference(result: Any, *, axes: Any = None, width: float = 9.0) -> Any:
    """Draw a critical-difference-style diagram of a leaderboard or a Friedman-Nemenyi test.

    Parameters
    ----------
    result
        A :class:`~bayes_ir.hierarchical.Leaderboard` (two panels: the anchored tie
        groups on the posterior mean ranks, then its Friedman-Nemenyi companion, when it
        has one) or a :class:`~bayes_ir.frequentist.friedman.FriedmanNemenyi` (one panel).
    axes
        One axes per panel to draw on (default: a new figure).
    width
        Width of a new figure, in inches (its height grows with the systems).

    Returns
    -------
    matplotlib.figure.Figure
    """
    panels = []
    on = f", {where(result)}" if where(result) else ""
    if hasattr(result, "frame"):  # a Leaderboard
        f = result.frame
        misfit = frozenset(result.misfit)
        bars = []
        for _, block in f.groupby("group", sort=True):
            if len(block) > 1:
                bars.append((block["rank_mean"].min(), block["rank_mean"].max()))
        panels.append(
            {
                "names": list(f["system"]),
                "ranks": f["rank_mean"].to_numpy(dtype=float),
                "bars": bars,
                "levels": [i % 2 for i in range(len(bars))],
                "title": f"Tie groups (anchored on each leader; rope {result.rope:g}, "
                f"P >= {result.p_min:g}) on the posterior mean ranks{on}",
                "cd": None,
                "misfit": misfit,
            }
        )
        companion = result.friedman
    else:
        companion, misfit = result, frozenset()
    if companion is not None:
        r = companion.mean_ranks.to_numpy(dtype=float)
        panels.append(
            {
                "names": list(companion.systems),
                "ranks": r,
                "bars": [(r[a], r[b]) for a, b in companion.cliques],
                "levels": list(range(len(companion.cliques))),
                "title": f"Friedman-Nemenyi groups (alpha {companion.alpha:g}) on the mean "
                f"ranks over {companion.n_topics} topics{on}",
                "cd": companion.cd,
                "misfit": misfit,
            }
        )
    heights = [
        0.95
        + 0.12 * (max(p["levels"], default=-1) + 1)
        + math.ceil(len(p["names"]) / 2) * _ROW
        + 0.3
        for p in panels
    ]
    if axes is None:
        fig, grid = plt.subplots(len(panels), 1, figsize=(width, sum(heights)), squeeze=False,
                                 gridspec_kw={"height_ratios": heights})  # fmt: skip
        axes = grid[:, 0]
    axes = np.ravel(axes)
    for ax, panel in zip(axes, panels, strict=False):
        _cd_panel(ax, width=width, **panel)
    fig = axes[0].figure
    total = fig.get_figheight()  # margins in inches, whatever the height of the figure
    fig.subplots_adjust(left=0.01, right=0.99, top=1 - 0.35 / total, bottom=0.1 / total,
                        hspace=0.6 / (total / len(panels)))  # fmt: skip
    return fig
