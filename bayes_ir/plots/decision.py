"""Figure of a :class:`~bayes_ir.decision.Decision`: three-way probabilities, more topics."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from bayes_ir.plots._common import where

__all__ = ["plot_decision"]

_PARTS = (
    ("p_worse", "worse by > m", "#c0392b", "//"),
    ("p_equivalent", "within +-m", "#bdc3c7", ""),
    ("p_better", "better by > m", "#27ae60", ".."),
)


def plot_decision(decision: Any, *, axes: Any = None) -> Any:
    """Draw the three-way posterior of each challenger and, if any, the more-topics curves.

    Parameters
    ----------
    decision
        A :class:`~bayes_ir.decision.Decision`.
    axes
        One matplotlib axis, or two (the second for the more-topics curves); ``None``
        creates the figure.

    Returns
    -------
    matplotlib.figure.Figure
    """
    d = decision
    more = d.more_topics
    if axes is None:
        ncols = 2 if len(more) else 1
        fig, axes = plt.subplots(1, ncols, figsize=(5.5 * ncols, 0.6 * len(d.table) + 2.4),
                                 squeeze=False)  # fmt: skip
        axes = axes[0]
    axes = np.ravel(axes)
    ax = axes[0]
    fig = ax.figure
    frame = d.table.iloc[::-1]
    y = np.arange(len(frame))
    left = np.zeros(len(frame))
    for column, label, colour, hatch in _PARTS:
        width = frame[column].to_numpy()
        ax.barh(y, width, left=left, color=colour, hatch=hatch, edgecolor="white", label=label)
        left += width
    ax.set_yticks(y, [f"{c}\n({a})" for c, a in zip(frame["challenger"], frame["action"],
                                                      strict=True)])  # fmt: skip
    ax.set_xlim(0, 1)
    measure = f" {d.measure}" if d.measure else ""
    ax.set_xlabel(f"posterior probability (margin m = {d.margin:g}{measure})")
    on = f", {where(d)}" if where(d) else ""
    ax.set_title(f"Challengers vs {d.champion}{on}", loc="left")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=3, frameon=False,
              fontsize="small")  # fmt: skip
    if len(more) and len(axes) > 1:
        ax2 = axes[1]
        for name, group in more.groupby("challenger", sort=False):
            ax2.plot(group["topics_added"], group["p_decisive"], marker="o", label=str(name))
        ax2.set_ylim(0, 1)
        ax2.set_xlabel("topics added" + (f" ({d.collection})" if d.collection else ""))
        ax2.set_ylabel("P(decision settled)")
        ax2.set_title("How many more topics would settle it", loc="left")
        ax2.grid(alpha=0.3)
        ax2.legend(fontsize="small", frameon=False)
    fig.tight_layout()
    return fig
