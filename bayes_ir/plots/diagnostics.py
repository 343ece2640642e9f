"""MCMC diagnostic plots of a hierarchical fit: thinned traces beside rank plots.

One row per scalar quantity, at most ``max_rows`` rows per figure (ask for the others
with ``coords``): left the draws against the iteration, thinned, one colour per chain;
right the rank plot (histogram of each chain's ranks among all draws), flat when the
chains explore the same distribution (Vehtari et al. 2021). Each row is labelled with
the quantity, its R-hat and bulk ESS.

References
----------
Vehtari, A., Gelman, A., Simpson, D., Carpenter, B., and Buerkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718. doi:10.1214/20-BA1221
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from scipy.stats import rankdata

from bayes_ir.errors import OptionError
from bayes_ir.plots._common import grid_axes, where

__all__ = ["plot_rank", "plot_trace"]

DEFAULT_VARS = ("b0", "sigma", "sigma_topic", "sigma_system", "alpha")
#: Rows of one figure: more make the panels too thin to read.
MAX_ROWS = 6
#: Points per chain drawn in a trace (the draws are thinned to about this many).
TRACE_POINTS = 300
#: Bins of a rank plot.
RANK_BINS = 20
_CHAIN_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


def _rows(
    fit: Any, var_names: Sequence[str] | None, coords: Mapping[str, Sequence[str]] | None
) -> list[tuple[str, np.ndarray]]:
    """``(label, draws of shape (chain, draw))`` of each scalar quantity asked for."""
    post = fit.posterior["posterior"]
    names = list(var_names) if var_names is not None else list(DEFAULT_VARS)
    unknown = [n for n in names if n not in post.data_vars and n not in DEFAULT_VARS]
    if unknown:
        raise OptionError(f"var_names: {unknown} not in the posterior ({list(post.data_vars)})")
    rows = []
    for name in (n for n in names if n in post.data_vars):
        var = post[name]
        extra = [d for d in var.dims if d not in ("chain", "draw")]
        if not extra:
            rows.append((name, var.transpose("chain", "draw").to_numpy()))
            continue
        dim = extra[0]
        values = [str(v) for v in var[dim].to_numpy()]
        chosen = [str(v) for v in (coords or {}).get(dim, values)]
        missing = [v for v in chosen if v not in values]
        if missing:
            raise OptionError(f"coords: {dim} {missing} not in the posterior")
        var = var.assign_coords({dim: values})
        for value in chosen:
            draws = var.sel({dim: value}).transpose("chain", "draw").to_numpy()
            rows.append((f"{name}[{value}]", draws))
    return rows


def _label(fit: Any, name: str) -> str:
    """Label a quantity with its R-hat and bulk ESS from ``fit.diagnostics``."""
    table = getattr(getattr(fit, "diagnostics", None), "table", None)
    if table is None or name not in set(table["parameter"]):
        return name
    row = table.set_index("parameter").loc[name]
    return f"{name}\nR-hat {row['rhat']:.3f}, ESS {row['ess_bulk']:.0f}"


def _draw_trace(ax: Any, draws: np.ndarray, label: str) -> int:
    """Thinned lines of each chain; returns the thinning step."""
    step = max(1, int(np.ceil(draws.shape[1] / TRACE_POINTS)))
    x = np.arange(draws.shape[1])[::step]
    for c, chain in enumerate(draws):
        color = _CHAIN_COLORS[c % len(_CHAIN_COLORS)]
        ax.plot(x, chain[::step], color=color, lw=0.7, alpha=0.8, label=f"chain {c + 1}")
    ax.set_ylabel(label, fontsize="small")
    ax.tick_params(labelsize="x-small")
    return step


def _draw_ranks(ax: Any, draws: np.ndarray) -> None:
    """Histogram of each chain's ranks among all draws, side by side, with the flat line."""
    n_chain, n_draw = draws.shape
    ranks = rankdata(draws.ravel()).reshape(draws.shape)
    edges = np.linspace(0.5, draws.size + 0.5, RANK_BINS + 1)
    width = (edges[1] - edges[0]) / (n_chain + 1)
    for c in range(n_chain):
        counts, _ = np.histogram(ranks[c], bins=edges)
        ax.bar(edges[:-1] + (c + 0.5) * width, counts, width=width, align="edge",
               color=_CHAIN_COLORS[c % len(_CHAIN_COLORS)], alpha=0.8)  # fmt: skip
    ax.axhline(n_draw / RANK_BINS, color="black", lw=0.8, ls="--")
    ax.set_ylim(bottom=0)
    ax.set_yticks([])
    ax.xaxis.set_major_locator(MaxNLocator(nbins=3))
    ax.tick_params(labelsize="x-small")


def _checked(rows: list[tuple[str, np.ndarray]], max_rows: int) -> list[tuple[str, np.ndarray]]:
    if not rows:
        raise OptionError("var_names: none of the requested quantities is in the posterior")
    return rows[:max_rows]


def _title(fit: Any, shown: int, total: int) -> str:
    on = f", {where(fit)}" if where(fit) else ""
    more = f"; {shown} of {total} quantities (choose others with coords=)" if total > shown else ""
    return f"MCMC diagnostics{on}{more}"


def plot_trace(
    fit: Any,
    *,
    var_names: Sequence[str] | None = None,
    coords: Mapping[str, Sequence[str]] | None = None,
    max_rows: int = MAX_ROWS,
    axes: Any = None,
) -> Figure:
    """Thinned trace and rank plot of each quantity of a hierarchical fit.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit`.
    var_names
        Posterior variables; default the hyperparameters (``b0``, the three scales
        and ``alpha`` when present). A vector variable (``system_effect``,
        ``topic_effect``) gives one row per element.
    coords
        Elements of the vector variables to draw, e.g. ``{"system": ["bm25", "dense"]}``.
    max_rows
        Rows of the figure; further quantities are left out (the title says so).
    axes
        ``(rows, 2)`` matplotlib axes (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        Left column the draws against the iteration (thinned to about 300 per chain);
        right column the rank plots with the dashed line of a uniform rank histogram.
    """
    rows = _rows(fit, var_names, coords)
    shown = _checked(rows, max_rows)
    fig, grid = grid_axes(axes, len(shown), 2, (10.0, 1.7 * len(shown) + 1.2),
                          layout="constrained", width_ratios=(2.2, 1))  # fmt: skip
    step = 1
    for (name, draws), (left, right) in zip(shown, grid, strict=True):
        step = _draw_trace(left, draws, _label(fit, name))
        _draw_ranks(right, draws)
    thinned = "every draw" if step == 1 else f"one draw in {step}"
    grid[0, 0].set_title(f"draws by iteration ({thinned}; one colour per chain)",
                         fontsize="small")  # fmt: skip
    grid[0, 1].set_title("rank plot: flat bars = the chains agree", fontsize="small")
    grid[-1, 0].set_xlabel("iteration", fontsize="small")
    grid[-1, 1].set_xlabel("rank among all draws", fontsize="small")
    grid[0, 0].legend(fontsize="x-small", ncols=4, frameon=False, loc="upper right")
    fig.suptitle(_title(fit, len(shown), len(rows)), fontsize="medium")
    return fig


def plot_rank(
    fit: Any,
    *,
    var_names: Sequence[str] | None = None,
    coords: Mapping[str, Sequence[str]] | None = None,
    max_rows: int = MAX_ROWS,
    axes: Any = None,
) -> Figure:
    """Rank plots alone (fractional ranks per chain, Vehtari et al. 2021).

    Uniform ranks in every chain mean the chains explore the same distribution.
    Arguments as :func:`plot_trace`; ``axes``: one matplotlib axes per row.
    """
    rows = _rows(fit, var_names, coords)
    shown = _checked(rows, max_rows)
    fig, grid = grid_axes(axes, len(shown), 1, (5.0, 1.5 * len(shown) + 1.0),
                          layout="constrained")  # fmt: skip
    for (name, draws), ax in zip(shown, grid[:, 0], strict=True):
        _draw_ranks(ax, draws)
        ax.set_ylabel(_label(fit, name), fontsize="small")
    grid[-1, 0].set_xlabel("rank among all draws (dashed: uniform)", fontsize="small")
    fig.suptitle(_title(fit, len(shown), len(rows)), fontsize="medium")
    return fig
