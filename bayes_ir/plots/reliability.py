"""Figures of ranking reliability: error and bias curves, swap probabilities, intervals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np

from bayes_ir.errors import OptionError

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
        Figure size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        Two rows (error, bias) of panels.
    """
    frame = study.to_frame(pooled=pooled)
    panels = [(c, k) for c in frame["collection"].unique() for k in coefficients]
    ncol = len(panels)
    fig, axes = plt.subplots(
        2, ncol, figsize=figsize or (3.6 * ncol, 5.6), sharex=True, squeeze=False
    )
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
    fig.suptitle(f"Estimators of the correlation with the true ranking ({study.method})")
    fig.tight_layout()
    return fig


def plot_swaps(result: ReliabilityResult, *, ax: Any = None, max_labels: int = 30) -> Figure:
    """Heat map of the swap probabilities p_ij, systems in observed order (best first)."""
    if result.p_swap is None:
        raise OptionError(f"{result.estimator} does not estimate pairwise swap probabilities")
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 5.2))
    else:
        fig = ax.figure
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
    ax.set_title(f"{result.estimator}: E[tau] = {result.tau:.3f}, E[tau_AP] = {result.tau_ap:.3f}")
    return fig


def plot_interval(interval: CorrelationInterval, *, bins: int = 40) -> Figure:
    """Histograms of the draws of tau and tau_AP with their interval."""
    frame = interval.conf_int()
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True)
    for ax, row in zip(axes, frame.itertuples(index=False), strict=True):
        draws = getattr(interval, row.coefficient)
        ax.hist(draws, bins=bins, color="tab:blue", alpha=0.7)
        for v in (row.ci_lower, row.ci_upper):
            ax.axvline(v, color="black", ls="--", lw=1)
        ax.axvline(row.estimate, color="tab:red", lw=1.5)
        ax.set_xlabel(_COEF[row.coefficient] + " (truth vs observed)")
        ax.set_title(f"{100 * row.ci_prob:g}% [{row.ci_lower:.3f}, {row.ci_upper:.3f}]")
    axes[0].set_ylabel(f"{interval.method} draws")
    fig.tight_layout()
    return fig
