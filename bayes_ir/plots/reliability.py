"""Figures of ranking reliability: error and bias curves, swap probabilities, intervals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayes_ir.errors import OptionError
from bayes_ir.plots._common import grid_axes, one_axes, where

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from bayes_ir.reliability.expected import ReliabilityResult
    from bayes_ir.reliability.intervals import CorrelationInterval
    from bayes_ir.reliability.simulation import SimulationStudy

__all__ = ["plot_interval", "plot_study", "plot_swaps"]

#: Colours and line styles of the paper's figures.
_STYLE = {
    "ML": ("black", "-"),
    "MSQD": ("tab:red", "-"),
    "RES": ("tab:blue", "-"),
    "KD": ("tab:green", "-"),
    "SH(w/o)": ("tab:cyan", "-"),
    "SH(w)": ("tab:cyan", "--"),
}
_COEF = {"tau": r"$\tau$", "tau_ap": r"$\tau_{AP}$"}


def plot_study(
    study: SimulationStudy,
    *,
    pooled: bool = True,
    coefficients: tuple[str, ...] = ("tau", "tau_ap"),
    figsize: tuple[float, float] | None = None,
    axes: Any = None,
) -> Figure:
    """Error and bias of each estimator against the topic set size (the paper's Figs. 1-2).

    Parameters
    ----------
    study
        Result of :func:`bayes_ir.reliability.simulation_study`.
    pooled
        Pool the collections (one column of panels per coefficient) or draw one column
        per collection and coefficient.
    coefficients
        Which coefficients to draw.
    figsize
        Figure size in inches (of a new figure).
    axes
        ``(2, panels)`` matplotlib axes (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        Two rows (error, bias) of panels.
    """
    frame = study.to_frame(pooled=pooled)
    panels = [(c, k) for c in frame["collection"].unique() for k in coefficients]
    ncol = len(panels)
    fig, axes = grid_axes(axes, 2, ncol, figsize or (3.6 * ncol, 5.6), sharex=True)
    for col, (coll, coef) in enumerate(panels):
        block = frame[(frame["collection"] == coll) & (frame["coefficient"] == coef)]
        for row, value in enumerate(("error", "bias")):
            ax = axes[row, col]
            for est in study.estimators:
                line = block[block["estimator"] == est].sort_values("n_topics")
                color, style = _STYLE.get(est, (None, "-"))
                ax.plot(line["n_topics"], line[value], style, color=color, label=est, lw=1.4)
            if value == "bias":
                ax.axhline(0.0, color="grey", lw=0.8)
            ax.set_ylabel("Error (mean |E - actual|)" if value == "error" else "Bias")
            title = _COEF.get(coef, coef) + ("" if coll == "all" else f" - {coll}")
            ax.set_title(title if row == 0 else "")
            ax.grid(alpha=0.3)
        axes[1, col].set_xlabel("topic set size")
        axes[1, col].set_xticks(list(study.sizes))
    axes[0, 0].legend(ncol=2, fontsize="small", frameon=False)
    collections = ", ".join(study.records["collection"].unique())
    measure = getattr(study, "measure", "")
    fig.suptitle(
        f"Estimators of the correlation with the true ranking ({study.method}), "
        f"{measure + ' on ' if measure else ''}{collections}"
    )
    fig.tight_layout()
    return fig


def plot_swaps(result: ReliabilityResult, *, ax: Any = None, max_labels: int = 30) -> Figure:
    """Heat map of the swap probabilities p_ij, systems in observed order (best first).

    ``ax``: axes to draw on (default a new figure); returns the figure. Up to
    ``max_labels`` systems are named on the axes.
    """
    if result.p_swap is None:
        raise OptionError(f"{result.estimator} does not estimate pairwise swap probabilities")
    fig, ax = one_axes(ax, (6, 5.2))
    m = result.n_systems
    shown = np.where(np.isnan(result.p_swap), np.nan, result.p_swap)
    im = ax.imshow(shown, cmap="viridis", vmin=0, vmax=0.5, interpolation="nearest")
    fig.colorbar(im, ax=ax, label="P(true order swapped)")
    if m <= max_labels:
        ax.set_xticks(range(m), result.systems, rotation=90, fontsize="x-small")
        ax.set_yticks(range(m), result.systems, fontsize="x-small")
    else:
        ax.set_xlabel("system j (observed rank)")
        ax.set_ylabel("system i (observed rank)")
    ax.set_title(
        f"{result.estimator}, {where(result)}: E[tau] = {result.tau:.3f}, "
        f"E[tau_AP] = {result.tau_ap:.3f}",
        fontsize="medium",
    )
    return fig


def plot_interval(interval: CorrelationInterval, *, bins: int = 40, axes: Any = None) -> Figure:
    """Histograms of the draws of tau and tau_AP with their interval.

    ``axes``: two matplotlib axes (default a new figure); returns the figure.
    """
    frame = interval.conf_int()
    fig, grid = grid_axes(axes, 1, 2, (8, 3.4), sharey=True)
    for ax, row in zip(grid[0], frame.itertuples(index=False), strict=True):
        draws = getattr(interval, row.coefficient)
        ax.hist(draws, bins=bins, color="tab:blue", alpha=0.7)
        for v in (row.ci_lower, row.ci_upper):
            ax.axvline(v, color="black", ls="--", lw=1)
        ax.axvline(row.estimate, color="tab:red", lw=1.5)
        ax.set_xlabel(_COEF[row.coefficient] + " (truth vs observed)")
        ax.set_title(f"{100 * row.ci_prob:g}% [{row.ci_lower:.3f}, {row.ci_upper:.3f}]")
    grid[0, 0].set_ylabel(f"{interval.method} draws")
    fig.suptitle(f"Correlation with the true ranking, {where(interval)}", fontsize="medium")
    fig.tight_layout()
    return fig
