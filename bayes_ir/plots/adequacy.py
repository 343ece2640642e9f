"""The model check of a hierarchical fit: coverage of the predictive intervals per system."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from bayes_ir.errors import OptionError
from bayes_ir.plots._common import where

__all__ = ["plot_model_check"]


def plot_model_check(
    check: Any,
    *,
    systems: Iterable[str] | None = None,
    ax: Any = None,
) -> Figure:
    """Share of each system's scores inside its 50% and 95% posterior predictive intervals.

    Parameters
    ----------
    check
        A :class:`~bayes_ir.hierarchical.ModelCheck`.
    systems
        Systems to draw (default: champion, challengers and every flagged system).
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        One row per system: circles at ``coverage_95``, squares at ``coverage_50``,
        dashed lines at the nominal 0.95 and 0.5; flagged systems are red and their
        failed checks are written beside them.
    """
    frame = check.to_frame()
    if systems is None:
        shown = frame[(frame["role"] != "artifact") | frame["flagged"]]
    else:
        chosen = list(systems)
        unknown = [s for s in chosen if s not in set(frame["system"])]
        if unknown:
            raise OptionError(f"no model check for {unknown}")
        shown = frame.set_index("system").loc[chosen].reset_index()
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 0.35 * len(shown) + 1.5), layout="constrained")
    y = list(range(len(shown)))[::-1]
    colours = ["tab:red" if f else "tab:blue" for f in shown["flagged"]]
    ax.scatter(shown["coverage_95"], y, c=colours, marker="o", label="inside 95% interval")
    ax.scatter(shown["coverage_50"], y, c=colours, marker="s", label="inside 50% interval")
    for q in (0.5, 0.95):
        ax.axvline(q, color="0.5", linestyle="--", linewidth=0.8)
    ax.set_yticks(y, list(shown["system"]))
    for tick, flagged in zip(ax.get_yticklabels(), shown["flagged"], strict=True):
        tick.set_color("tab:red" if flagged else "black")
    for yi, row in zip(y, shown.itertuples(index=False), strict=True):
        if row.flagged:
            ax.annotate(
                f" {row.failed_checks}", (1.0, yi), va="center", color="tab:red", fontsize=8
            )
    ax.set_xlim(0.0, 1.6)  # room for the failed checks right of 1
    ax.set_xticks([0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 0.95])
    ax.set_xlabel("share of the system's scores inside its posterior predictive interval")
    on = f", {where(check)}" if where(check) else ""
    ax.set_title(f"Model check ({check.likelihood}{on}): red = flagged")
    ax.legend(loc="lower left", fontsize=8)
    return ax.figure
