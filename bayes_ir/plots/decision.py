"""Figure of a :class:`~bayes_ir.decision.Decision`: three-way probabilities, more topics."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from bayes_ir.plots._common import mark_tick_labels, misfit_note, where
from bayes_ir.report.marks import MISFIT_MARK

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
        A challenger the model does not describe (or every one, when the champion is
        such a system) carries the misfit mark, in red, with its legend under the figure.
    """
    d = decision
    more = d.more_topics
    if axes is None:
        ncols = 2 if len(more) else 1
        fig, axes = plt.subplots(1, ncols, figsize=(5.5 * ncols, 0.6 * len(d.table) + 2.4),
                                 squeeze=False, layout="constrained")  # fmt: skip
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
    misfit = tuple(d.misfit)
    off = [d.champion in misfit or c in misfit for c in frame["challenger"]]
    ax.set_yticks(y, [f"{c}{f' {MISFIT_MARK}' if bad else ''}\n({a})"
                      for c, a, bad in zip(frame["challenger"], frame["action"], off,
                                           strict=True)])  # fmt: skip
    mark_tick_labels(ax.get_yticklabels(), misfit)
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
    misfit_note(fig, misfit, champion=d.champion)
    return fig
