"""Heat map of a :class:`~bayes_ir.decision.more_runs.MoreRuns`: P(decided) over the grid."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.patches import Rectangle

from bayes_ir.plots._common import one_axes
from bayes_ir.report.numbers import format_probability

__all__ = ["plot_more_runs"]


def plot_more_runs(result: Any, *, ax: Any = None) -> Any:
    """Draw P(decided) for every number of topics and runs added, the cheapest cell boxed.

    Parameters
    ----------
    result
        A :class:`~bayes_ir.decision.more_runs.MoreRuns`.
    ax
        Axis to draw on (``None``: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        Rows: topics added; columns: runs added to the challenger and to the champion
        each; every cell shows P(decided) and its cost; the cheapest cell reaching the
        target has a black frame.
    """
    r = result
    ks, ms = r.topics, r.runs
    grid = r.grid.set_index(["topics_added", "runs_added"])
    p = np.array([[grid.loc[(k, m), "p_decided"] for m in ms] for k in ks], dtype=float)
    cost = np.array([[grid.loc[(k, m), "cost"] for m in ms] for k in ks], dtype=float)
    fig, ax = one_axes(ax, (1.2 * len(ms) + 2.6, 0.7 * len(ks) + 1.8))
    image = ax.imshow(p, vmin=0, vmax=1, cmap="viridis", origin="lower", aspect="auto")
    for i in range(len(ks)):
        for j in range(len(ms)):
            colour = "black" if p[i, j] > 0.6 else "white"
            ax.text(j, i, f"{format_probability(p[i, j])}\ncost {cost[i, j]:g}", ha="center",
                    va="center", fontsize="small", color=colour)  # fmt: skip
    if r.cheapest is not None:
        i, j = ks.index(r.cheapest[0]), ms.index(r.cheapest[1])
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black",
                               linewidth=2.5))  # fmt: skip
    ax.set_xticks(range(len(ms)), [f"+{m}" for m in ms])
    ax.set_yticks(range(len(ks)), [f"+{k}" for k in ks])
    ax.set_xlabel("runs (seeds) added to the challenger and to the champion, each")
    ax.set_ylabel("topics added")
    over = "in expectation" if r.over == "expectation" else "one run of each"
    note = (
        f"frame: the cheapest cell reaching {r.target:g}"
        if r.cheapest is not None
        else f"no cell reaches {r.target:g}"
    )
    ax.set_title(f"{r.challenger} vs {r.champion} ({over}, {r.measure}): P(decided)\n{note}",
                 loc="left", fontsize="medium")  # fmt: skip
    fig.colorbar(image, ax=ax, label="P(deploy or keep champion)")
    return fig
