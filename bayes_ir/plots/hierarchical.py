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

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from bayes_ir import defaults
from bayes_ir.errors import OptionError
from bayes_ir.hierarchical import interval_stats, system_mean_draws, topic_draws
from bayes_ir.plots._common import (
    MISFIT_COLOR,
    bounded,
    data_names,
    grid_axes,
    mark_tick_labels,
    misfit_note,
    one_axes,
    thinned,
    where,
)
from bayes_ir.report.decision import format_probability
from bayes_ir.report.marks import MISFIT_MARK, marked, misfit_systems, model_description

__all__ = [
    "ROLE_COLORS",
    "plot_artifact_sweep",
    "plot_contrasts",
    "plot_pairwise",
    "plot_predictive",
    "plot_ranks",
    "plot_system_topic_intervals",
    "predictive_systems",
]

#: Colours of individual challengers (no red: red is the champion's).
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
#: Colour of each role in every figure.
ROLE_COLORS = {"champion": "#c0392b", "challenger": "#1f77b4", "artifact": "#9a9a9a", "": "#444444"}
#: At most this many topic names are written under a figure (every k-th one beyond).
MAX_TOPIC_LABELS = 60
#: At most this many system names are written along an axis (champion and challengers
#: always; every k-th artifact run beyond).
MAX_SYSTEM_LABELS = 60
#: Panels of the posterior predictive figure when the systems are not named.
MAX_PREDICTIVE_PANELS = 8
#: Above this many rows a forest plot of differences is compact, largest difference first.
MAX_FOREST_ROWS = 20


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
    axes: Any = None,
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
        Figure size in inches (of a new figure).
    axes
        Two matplotlib axes (system means, topic effects); default a new figure.

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
    sys_stats = interval_stats(means, "system", p)
    sys_stats["role"] = [str(r) for r in means["role"].values]
    sys_stats = sys_stats.sort_values("mean")
    topics = topic_draws(fit)
    top_stats = interval_stats(topics, "topic", p).sort_values("mean")
    measure, _ = data_names(fit)
    on = f", {where(fit)}" if where(fit) else ""

    fig, grid = grid_axes(axes, 2, 1, figsize, layout="constrained")
    ax1, ax2 = grid[:, 0]
    x = np.arange(len(sys_stats))
    colors = [ROLE_COLORS.get(r, ROLE_COLORS[""]) for r in sys_stats["role"]]
    ax1.vlines(x, sys_stats["ci_lower"], sys_stats["ci_upper"], colors=colors, lw=2)
    ax1.scatter(x, sys_stats["mean"], c=colors, s=18, zorder=3)
    ax1.set_xticks(x)
    misfit = misfit_systems(fit, sys_stats.index)
    named = [s for s, r in zip(sys_stats.index, sys_stats["role"], strict=True) if r != "artifact"]
    labels = [
        name if (label_artifacts or role != "artifact") else ""
        for name, role in zip(sys_stats.index, sys_stats["role"], strict=True)
    ]
    champions = [s for s, r in zip(sys_stats.index, sys_stats["role"], strict=True)
                 if r == "champion"]  # fmt: skip
    keep = named if len(named) <= MAX_SYSTEM_LABELS else champions  # too many: every k-th
    labels, step = thinned(labels, MAX_SYSTEM_LABELS, keep=keep)
    if step > 1:
        ax1.set_xlabel(f"system ({len(labels)} systems, every {step}th named)", fontsize="small")
    labels = [marked(name, misfit) if name else "" for name in labels]
    crowded = sum(bool(label) for label in labels) > MAX_SYSTEM_LABELS // 2
    ax1.set_xticklabels(labels, rotation=90 if crowded else 60, ha="center" if crowded else "right",
                        fontsize="x-small" if crowded else "small")  # fmt: skip
    mark_tick_labels(ax1.get_xticklabels(), misfit)
    ax1.set_ylabel(f"system mean {measure}".rstrip())
    ax1.set_title(f"System means with {100 * p:g}% credible intervals{on}")
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
    topic_labels, step = thinned([str(t) for t in top_stats.index], MAX_TOPIC_LABELS)
    ax2.set_xticklabels(topic_labels, rotation=90, fontsize="x-small")
    ax2.tick_params(axis="x", length=2 if step == 1 else 0)
    ax2.set_ylabel(f"topic effect on {measure}" if measure else "topic effect")
    every = "" if step == 1 else f"; {len(top_stats)} topics, every {step}th named"
    ax2.set_xlabel(f"topic (hard ... easy{every})")
    ax2.set_title(f"Topic effects with {100 * p:g}% credible intervals{on}")
    misfit_note(fig, [s for s in misfit if s in set(named)],
                champion=champions[0] if champions else None)  # fmt: skip
    return fig


def predictive_systems(fit: Any, *, limit: int = MAX_PREDICTIVE_PANELS) -> list[str]:
    """Return the systems :func:`~bayes_ir.plots.hierarchical.plot_predictive` draws for ``fit``.

    The champion and the challengers (every system when the fit has no roles); beyond
    ``limit`` of them, the champion, then the systems the model check flags, then those
    with the smallest share of scores inside their 95% predictive interval (the check's
    ``coverage_95``): the ones whose fit is worth a look. Pass them to
    :func:`~bayes_ir.hierarchical.posterior_predictive` (``systems=``) so that only what
    is drawn is simulated.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit`.
    limit
        Largest number of panels.

    Returns
    -------
    list of str
        In the fit's order of roles (champion first).
    """
    table = fit.table
    roles = [table.champion] if table.champion else []
    systems = [*roles, *table.challengers] or [str(s) for s in table.systems]
    if len(systems) <= limit:
        return systems
    check = getattr(fit, "model_check", None)
    if check is None:
        return systems[:limit]
    frame = check.to_frame().set_index("system").loc[systems]
    order = frame.assign(first=[s not in roles for s in systems], fits=~frame["flagged"])
    worst = order.sort_values(["first", "fits", "coverage_95"], kind="stable").index[:limit]
    return [s for s in systems if s in set(worst)]


def plot_predictive(
    result: Any,
    *,
    systems: Iterable[str] | None = None,
    ncols: int = 2,
    figsize: tuple[float, float] | None = None,
    axes: Any = None,
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
    axes
        At least as many matplotlib axes as panels (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        Topics are sorted by predictive mean; observed scores outside their interval
        are drawn as red crosses. For a bounded measure (e.g. AP in [0, 1]) the dashed
        lines mark its range, the intervals are drawn cut at it and the axis never
        leaves it (a score cannot); the title says so when the model puts predictive
        mass outside.
    """
    frame = result.frame
    measure, _ = data_names(result)
    low, high = bounded(measure) or (-np.inf, np.inf)
    if systems is None:
        keep = frame.loc[frame["role"] != "artifact", "system"]
        chosen = list(dict.fromkeys(keep if len(keep) else frame["system"]))
    else:
        chosen = list(systems)
        unknown = [s for s in chosen if s not in set(frame["system"])]
        if unknown:
            raise OptionError(f"no predictive intervals for {unknown}")
    misfit = misfit_systems(getattr(result, "fit", None), chosen)
    n = len(chosen)
    ncols = max(1, min(ncols, n))
    nrows = int(np.ceil(n / ncols))
    figsize = figsize or (5.0 * ncols, 3.0 * nrows + 0.5)
    fig, axes = grid_axes(axes, nrows, ncols, figsize, sharey=True, layout="constrained")
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
        ax.set_title(f"{marked(system, misfit)} ({inside.mean():.0%} inside)", fontsize="medium",
                     color=MISFIT_COLOR if system in misfit else "black")  # fmt: skip
        ax.set_xticks([])
        ax.set_xlabel("topic (by predicted score)")
        if np.isfinite(low):
            ax.set_ylim(low, high)  # the measure's range, never beyond
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(measure or "score")
    outside = bool(((frame["ci_lower"] < low) | (frame["ci_upper"] > high)).any())
    on = where(result)
    fitted = getattr(result, "fit", None)
    model = model_description(fitted) if fitted is not None else f"{result.likelihood} likelihood"
    table = getattr(fitted, "table", None)
    roles_all = [] if table is None else [*([table.champion] if table.champion else []),
                                          *table.challengers]  # fmt: skip
    some = f"\n{n} of the {len(roles_all)} champion and challengers" if len(roles_all) > n else ""
    fig.suptitle(
        f"{100 * result.ci_prob:g}% posterior predictive intervals ({model}) and "
        f"observed scores" + (f", {on}" if on else "") + some
        + (f"\nintervals cut at the range [{low:g}, {high:g}]: the model puts some mass "
           "outside it" if outside else ""),
        fontsize="medium",
    )  # fmt: skip
    roles = dict(zip(frame["system"], frame["role"], strict=False))
    champion = next((s for s in chosen if roles.get(s) == "champion"), None)
    misfit_note(fig, misfit, champion=champion)
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
    sweep: Any,
    *,
    effects: str = "mean",
    figsize: tuple[float, float] = (11.0, 4.5),
    axes: Any = None,
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
        Figure size in inches (of a new figure).
    axes
        Two matplotlib axes (systems, differences); default a new figure.

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
    fig, grid = grid_axes(axes, 1, 2, figsize, layout="constrained")
    ax1, ax2 = grid[0]
    measure, _ = data_names(sweep)
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
    ax1.set_ylabel(f"{ylabel}, {measure}" if measure else ylabel)
    if effects != "mean":
        ax1.axhline(0, color="0.6", lw=0.8, ls=":")
    ax1.set_title(f"{title}, {100 * sweep.ci_prob:g}% intervals")
    for k, name in enumerate(sweep.challengers):
        sub = diffs[diffs["challenger"] == name]
        x = np.array([pos[m] for m in sub["m"]]) + offsets(len(sweep.challengers))[k]
        ax2.vlines(x, sub["ci_lower"], sub["ci_upper"], color=colors[name], lw=2)
        ax2.scatter(x, sub["mean"], color=colors[name], s=14, zorder=3)
    ax2.axhline(0, color=ROLE_COLORS["champion"], lw=0.8, ls=":")
    ax2.set_ylabel(f"challenger - {sweep.champion}" + (f", {measure}" if measure else ""))
    ax2.set_title("Differences from the champion")
    for ax in (ax1, ax2):
        ax.set_xticks(range(len(ms)), [str(m) for m in ms])
        ax.set_xlabel("artifact runs in the model (m)")
    fig.legend(loc="outside lower center", ncol=len(names), fontsize="small", frameon=False)
    on = f" ({where(sweep)})" if where(sweep) else ""
    if not sweep.diagnostics_passed:
        failed = [str(pt.m) for pt in sweep.points if not pt.gate.passed]
        fig.suptitle(
            f"WARNING: the refits with m = {', '.join(failed)} FAILED their diagnostics{on}",
            color="#c0392b",
        )
    else:
        fig.suptitle(f"Artifact sweep: the model refitted with the m best artifact runs{on}")
    return fig


def _probability_text(event: str, p: float) -> str:
    """``"P(>0) = 0.353"``, ``"P(>0) >0.999"``: three decimals, never 1.000 or 0.000."""
    text = format_probability(p)
    return f"{event} {text}" if text[0] in "<>" else f"{event} = {text}"


def plot_contrasts(
    result: Any, *, figsize: tuple[float, float] | None = None, ax: Any = None
) -> Figure:
    """Forest plot of the differences of a :func:`compare` or :func:`many_vs_one` result.

    Parameters
    ----------
    result
        A :class:`~bayes_ir.hierarchical.contrasts.Comparison` or
        :class:`~bayes_ir.hierarchical.contrasts.ManyVsOne`.
    figsize
        Figure size (default grows with the number of rows).
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        One row per difference: posterior mean, equal-tailed interval, zero line, the
        minimal worthwhile gain (dashed) and P(better) on the right, written as
        ``>0.999`` / ``<0.001`` beyond three decimals (a share of draws is never 1).
        A row whose challenger (or champion) the model does not describe is dashed and
        red, with the misfit mark and its legend. Beyond 20 rows the rows are compact,
        the largest difference first.
    """
    frame = result.to_frame()
    misfit: tuple[str, ...] = ()
    if "challenger" in frame and hasattr(result, "challengers"):
        check = getattr(result, "model_check", None)
        systems = [result.champion, *frame["challenger"]]
        misfit = () if check is None else tuple(s for s in systems if s in set(check.flagged))
        labels = [f"{c} - {result.champion}" for c in frame["challenger"]]
        # a row is marked when the model does not describe its challenger or the champion
        off = [result.champion in misfit or c in misfit for c in frame["challenger"]]
    else:
        labels = [f"{result.challenger} - {c}" for c in frame["champion"]]
        off = [False] * len(frame)
    labels = [
        f"{label} {MISFIT_MARK}" if bad else label for label, bad in zip(labels, off, strict=True)
    ]
    n = len(frame)
    many = n > MAX_FOREST_ROWS  # compact rows, best difference on top
    if many:
        order = np.argsort(-frame["mean"].to_numpy(), kind="stable")
        frame = frame.iloc[order].reset_index(drop=True)
        labels, off = [labels[i] for i in order], [off[i] for i in order]
    height = 1.6 + (max(0.16, 8.0 / n) if many else 0.5) * n
    fig, ax = one_axes(ax, figsize or (8.0, height), layout="constrained")
    font = "x-small" if many else "small"
    measure, _ = data_names(result)
    y = np.arange(n)[::-1]
    colors = [MISFIT_COLOR if bad else "#1f77b4" for bad in off]
    styles = ["--" if bad else "-" for bad in off]
    ax.hlines(y, frame["ci_lower"], frame["ci_upper"], color=colors, lw=2.5, linestyles=styles)
    ax.scatter(frame["mean"], y, color="black", zorder=3, s=20)
    ax.axvline(0, color="black", lw=0.8)
    gain = getattr(result, "min_gain", 0.0)
    if gain:
        ax.axvline(gain, color="#2ca02c", lw=0.8, ls="--", label=f"min gain {gain:g}")
        ax.legend(fontsize="small", frameon=False, loc="lower right")
    ax.set_yticks(y, labels, fontsize=font if many else None)
    mark_tick_labels(ax.get_yticklabels(), misfit)
    ax.set_xlabel(
        f"difference of system means{' in ' + measure if measure else ''} "
        f"({100 * result.ci_prob:g}% interval)"
    )
    for yy, pb in zip(y, frame["p_better"], strict=True):
        ax.annotate(
            _probability_text("P(>0)", pb), xy=(1.0, yy),
            xycoords=("axes fraction", "data"), xytext=(4, 0), textcoords="offset points",
            va="center", fontsize=font,
        )  # fmt: skip
    title = "Difference of system means, challenger - champion" + (
        f" ({n} rows, largest first)" if many else ""
    )
    if where(result):
        title += f"\n{where(result)}"
    if not result.diagnostics_passed:
        title += "  [DIAGNOSTICS FAILED: unreliable]"
    ax.set_title(title, color="black" if result.diagnostics_passed else "#c0392b")
    ax.set_ylim(-0.7, n - 0.3)
    misfit_note(fig, misfit, champion=getattr(result, "champion", None))
    return fig


#: Above this many rows the cells carry no numbers (they would not be legible).
_MAX_ANNOTATED = 12


def _heatmap(
    matrix: Any,
    *,
    title: str,
    xlabel: str,
    figsize: tuple[float, float] | None,
    cmap: str,
    ax: Any,
    colorbar: str,
    misfit: Iterable[str] = (),
) -> Figure:
    """Draw a probability matrix in [0, 1]; small ones carry each cell's probability.

    Rows and columns naming a system of ``misfit`` carry the misfit mark, in red, and the
    figure its legend.
    """
    values = matrix.to_numpy(dtype=float)
    k_rows, k_cols = values.shape
    big = k_rows > _MAX_ANNOTATED
    size = (1.2 + 0.7 * k_cols, 1.0 + 0.55 * k_rows) if not big else (11.0, 10.0)
    fig, ax = one_axes(ax, figsize or size, layout="constrained")
    im = ax.imshow(np.ma.masked_invalid(values), vmin=0, vmax=1, cmap=cmap, aspect="auto")
    misfit = tuple(misfit)
    col_labels = [marked(str(c), misfit) for c in matrix.columns]
    if big:  # every column has its tick; every k-th its name, so that names never overlap
        col_labels, _ = thinned(col_labels, MAX_SYSTEM_LABELS // 2)
    font = "xx-small" if big else None
    if max((len(c) for c in col_labels), default=0) > 3:  # names: slanted; ranks: upright
        ax.set_xticks(range(k_cols), col_labels, rotation=45, ha="right", fontsize=font)
    else:
        ax.set_xticks(range(k_cols), col_labels, fontsize=font)
    ax.set_yticks(range(k_rows), [marked(str(i), misfit) for i in matrix.index], fontsize=font)
    mark_tick_labels([*ax.get_xticklabels(), *ax.get_yticklabels()], misfit)
    for i in range(k_rows if not big else 0):
        for j in range(k_cols):
            if np.isfinite(values[i, j]):
                dark = abs(values[i, j] - 0.5) > 0.3 if cmap == "RdBu_r" else values[i, j] > 0.6
                color = "white" if dark else "black"
                ax.text(j, i, format_probability(values[i, j]), ha="center", va="center",
                        color=color, fontsize="x-small")  # fmt: skip
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, shrink=0.8, label=colorbar)
    misfit_note(fig, [s for s in misfit if s in set(map(str, matrix.index))])
    return fig


def plot_pairwise(
    result: Any,
    *,
    misfit: Iterable[str] = (),
    figsize: tuple[float, float] | None = None,
    ax: Any = None,
) -> Figure:
    """Heat map of P(row system > column system) from :func:`pairwise_probabilities`.

    Parameters
    ----------
    result
        A :class:`~bayes_ir.hierarchical.PairwiseProbabilities`.
    misfit
        Systems the model does not describe (``fit.model_check.flagged``): marked, in
        red, with the mark's legend under the figure.
    figsize
        Figure size (of a new figure).
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        Rows and columns ordered by the systems' posterior mean effect, best first (top
        left), so that a well-separated ranking shows as a red upper-right triangle; up
        to 12 systems each cell carries its probability (``>0.999`` beyond three
        decimals).
    """
    matrix = result.matrix
    means = getattr(result, "means", None)
    if means is not None:
        order = means.reindex(matrix.index).to_numpy()
        ranked = [matrix.index[i] for i in np.argsort(-order, kind="stable")]
        matrix = matrix.loc[ranked, ranked]
    on = f"\n{where(result)}" if where(result) else ""
    return _heatmap(
        matrix,
        title="P(row system > column system), best first" + on,
        xlabel="",
        figsize=figsize,
        cmap="RdBu_r",
        ax=ax,
        colorbar="P(row > column)",
        misfit=misfit,
    )


def plot_ranks(
    result: Any,
    *,
    misfit: Iterable[str] = (),
    figsize: tuple[float, float] | None = None,
    ax: Any = None,
) -> Figure:
    """Heat map of P(rank = k) from :func:`rank_probabilities` (rank 1 = best).

    Parameters
    ----------
    result
        A :class:`~bayes_ir.hierarchical.RankProbabilities`.
    misfit
        Systems the model does not describe (``fit.model_check.flagged``): marked, in
        red, with the mark's legend under the figure (their ranks are not to be acted on).
    figsize
        Figure size (of a new figure).
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        Rows ordered by expected rank, best first.
    """
    on = f"\n{where(result)}" if where(result) else ""
    order = result.expected_rank.sort_values(kind="stable").index
    return _heatmap(
        result.matrix.loc[order],
        title="Posterior probability of each rank, P(rank = k)" + on,
        xlabel="rank k among these systems (1 = best)",
        figsize=figsize,
        cmap="Blues",
        ax=ax,
        colorbar="P(rank = k)",
        misfit=misfit,
    )
