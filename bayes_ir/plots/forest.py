"""Forest plot of a meta-analysis across collections (publication-ready, matplotlib)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import blended_transform_factory

from bayes_ir.errors import OptionError
from bayes_ir.files import atomic_path

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from bayes_ir.frequentist.meta_analysis.combine import MetaAnalysisResult

__all__ = ["forest_plot"]

_EFFECT_NAMES = {
    "MD": "Mean difference",
    "SMD": "Standardised mean difference (Hedges' g)",
    "CORR": "Correlation r",
}


#: A text column: header, one cell per collection, alignment ("left", "center", "right").
_Column = tuple[str, list[str], str]


def _fmt(x: float, decimals: int) -> str:
    return "" if not np.isfinite(x) else f"{x:.{decimals}f}".replace("-", "\u2212")


def _interval_text(est: float, lo: float, hi: float, decimals: int) -> str:
    return f"{_fmt(est, decimals)} [{_fmt(lo, decimals)}, {_fmt(hi, decimals)}]"


def _row_labels(names: list[str], labels: Sequence[str] | Mapping[str, str] | None) -> list[str]:
    """Name the rows: the collections, renamed by ``labels`` (a mapping, or one label each)."""
    if labels is None:
        return names
    if isinstance(labels, Mapping):
        return [str(labels.get(n, n)) for n in names]
    if len(labels) != len(names):
        raise OptionError(f"labels has {len(labels)} entries for {len(names)} collections")
    return [str(x) for x in labels]


def _extra_measure(study: Any, extra: str | None, show_extra: bool) -> str | None:
    """Choose the extra measure: the one asked for, else the first the effects carry."""
    if not show_extra:
        return None
    if extra is not None:
        return extra
    found = [c[: -len("_control")] for c in study.columns if c.endswith("_control")]
    found = [c for c in found if c != "mean" and f"{c}_treatment" in study.columns]
    return found[0] if found else None


def _left_columns(
    study: Any,
    names: list[str],
    eff: Any,
    *,
    show_means: bool,
    extra: str | None,
    extra_label: str | None,
    control_label: str | None,
    treatment_label: str | None,
    decimals: int,
) -> list[_Column]:
    """Build the columns left of the panel: collection, the means, the extra measure."""
    cols: list[_Column] = [("Collection", names, "left")]
    if show_means:
        head = eff.score_measure or "Mean"
        if eff.control and eff.treatment:
            head += f"\n{control_label or eff.control} \u2192 {treatment_label or eff.treatment}"
        pairs = zip(study["mean_control"], study["mean_treatment"], strict=True)
        cells = [f"{_fmt(c, decimals)} \u2192 {_fmt(t, decimals)}" for c, t in pairs]
        cols.append((head, cells, "center"))
    if extra is not None and f"{extra}_control" in study.columns:
        pairs = zip(study[f"{extra}_control"], study[f"{extra}_treatment"], strict=True)
        cols.append((extra_label or extra, [f"{_fmt(c, 2)} \u2192 {_fmt(t, 2)}" for c, t in pairs],
                     "center"))  # fmt: skip
    return cols


def _right_columns(study: Any, pct: str, decimals: int) -> list[_Column]:
    """Build the columns right of the panel: weight, effect [interval]."""
    bounds = zip(study["estimate"], study["ci_lower"], study["ci_upper"], strict=True)
    return [
        ("Weight", [f"{100 * w:.1f}%" for w in study["weight"]], "right"),
        (f"Effect [{pct} CI]", [_interval_text(e, lo, hi, decimals) for e, lo, hi in bounds],
         "right"),
    ]  # fmt: skip


def _chars(col: _Column, summary_text: str | None = None) -> int:
    """Width of a column in characters (bold headers and the bold summary are wider)."""
    head = max(len(line) for line in col[0].split("\n")) * 1.12
    if summary_text is not None:  # the bold summary row sits in the effect column
        head = max(head, len(summary_text) * 1.12)
    return int(max(head, *(len(s) for s in col[1]))) + 3


def _widths(
    left_cols: list[_Column], right_cols: list[_Column], summary_text: str
) -> tuple[int, int]:
    """Characters of the left and of the right text columns."""
    left_w = sum(_chars(c) for c in left_cols)
    return left_w, sum(_chars(c) for c in right_cols[:-1]) + _chars(right_cols[-1], summary_text)


@dataclass(frozen=True)
class _Layout:
    """Horizontal layout in figure fractions: left text, plot panel, right text."""

    width: float
    char_in: float
    left_share: float
    plot_fraction: float
    left_w: int
    right_w: int

    @property
    def right_x0(self) -> float:
        return 0.02 + self.left_share + self.plot_fraction + 0.02


def _layout(
    left_cols: list[_Column],
    right_cols: list[_Column],
    summary_text: str,
    *,
    width: float | None,
    plot_width: float,
    fontsize: float,
) -> _Layout:
    """Share the figure's width between the text columns and the plot panel."""
    left_w, right_w = _widths(left_cols, right_cols, summary_text)
    char_in = 0.56 * fontsize / 72  # average width of a character, in inches
    if width is None:
        width = (left_w + right_w) * char_in / 0.95 + plot_width
    text_share = min(0.8, (left_w + right_w) * char_in / width)
    return _Layout(
        width=width,
        char_in=char_in,
        left_share=text_share * left_w / (left_w + right_w),
        plot_fraction=0.95 - text_share,
        left_w=left_w,
        right_w=right_w,
    )


def _layout_around(
    ax: Any,
    left_cols: list[_Column],
    right_cols: list[_Column],
    summary_text: str,
    *,
    fontsize: float,
) -> _Layout:
    """Lay the text columns out beside a given plot panel."""
    pos = ax.get_position()
    left_w, right_w = _widths(left_cols, right_cols, summary_text)
    return _Layout(
        width=ax.figure.get_figwidth(),
        char_in=0.56 * fontsize / 72,
        left_share=pos.x0 - 0.02,
        plot_fraction=pos.width,
        left_w=left_w,
        right_w=right_w,
    )


def _effect_label(result: Any) -> str:
    """Name the effect measure and the score measure: "Mean difference in nDCG@10"."""
    name = _EFFECT_NAMES.get(result.measure, result.measure)
    score = getattr(result.effects, "score_measure", None)
    return f"{name} in {score}" if score else name


@dataclass(frozen=True)
class _Rows:
    """Vertical positions in data units: collections, summary, prediction, header."""

    study: np.ndarray
    summary: float
    prediction: float
    header: float
    bottom: float


def _rows(k: int, show_pi_row: bool) -> _Rows:
    return _Rows(
        study=np.arange(k, 0, -1, dtype=float) + 1.0,  # rows k+1 .. 2
        summary=0.6,
        prediction=-0.35,
        header=k + 2.2,
        bottom=(-0.35 if show_pi_row else 0.6) - 0.9,
    )


def _x_limits(study: Any, pooled: Any, show_prediction: bool) -> tuple[float, float]:
    """Limits that hold every interval, the prediction interval and 0."""
    lo_all = np.r_[study["ci_lower"], pooled["ci_lower"]]
    hi_all = np.r_[study["ci_upper"], pooled["ci_upper"]]
    if show_prediction and np.isfinite(pooled["pi_lower"]):
        lo_all = np.r_[lo_all, pooled["pi_lower"]]
        hi_all = np.r_[hi_all, pooled["pi_upper"]]
    lo, hi = float(np.min(np.r_[lo_all, 0.0])), float(np.max(np.r_[hi_all, 0.0]))
    pad = 0.06 * (hi - lo)
    return (lo - pad, hi + pad)


def _draw_studies(ax: Any, study: Any, rows: _Rows, xlim: tuple[float, float], color: str) -> None:
    """Whiskers (arrows where cut by the limits) and weight-sized squares."""
    w = study["weight"].to_numpy(float)
    sizes = 25 + 175 * np.clip(w, 0, None) / max(np.nanmax(w), 1e-12)
    ax.hlines(rows.study, study["ci_lower"], study["ci_upper"], color="0.15", lw=1.0, zorder=2)
    for y, lo_, hi_ in zip(rows.study, study["ci_lower"], study["ci_upper"], strict=True):
        for xv, side in ((lo_, -1), (hi_, 1)):
            if (side < 0 and xv < xlim[0]) or (side > 0 and xv > xlim[1]):
                edge = xlim[0] if side < 0 else xlim[1]
                ax.annotate(
                    "",
                    xy=(edge, y),
                    xytext=(edge - side * 0.03 * (xlim[1] - xlim[0]), y),
                    arrowprops={"arrowstyle": "->", "lw": 1.0, "color": "0.15"},
                )
    ax.scatter(study["estimate"], rows.study, s=sizes, marker="s", color=color, zorder=3, lw=0)


def _draw_summary(ax: Any, pooled: Any, rows: _Rows, has_pi: bool, color: str) -> None:
    """Draw the pooled diamond and, under it, the prediction interval."""
    d_h = 0.28
    y = rows.summary
    diamond = Polygon(
        [
            (pooled["ci_lower"], y),
            (pooled["estimate"], y + d_h),
            (pooled["ci_upper"], y),
            (pooled["estimate"], y - d_h),
        ],
        closed=True,
        facecolor=color,
        edgecolor=color,
        zorder=3,
    )
    ax.add_patch(diamond)
    if has_pi:
        y_pi = rows.prediction
        ax.hlines(y_pi, pooled["pi_lower"], pooled["pi_upper"], color=color, lw=1.6)
        ax.vlines(
            [pooled["pi_lower"], pooled["pi_upper"]], y_pi - 0.12, y_pi + 0.12,
            color=color, lw=1.6,
        )  # fmt: skip


def _draw_panel(
    ax: Any,
    study: Any,
    pooled: Any,
    rows: _Rows,
    *,
    xlim: tuple[float, float],
    has_pi: bool,
    color: str,
    summary_color: str,
) -> None:
    """Draw the plot panel: the 0 and pooled lines, the collections and the summary."""
    ax.set_ylim(rows.bottom, rows.header + 0.9)
    ax.set_xlim(*xlim)
    y_top = rows.header - 0.55
    ax.vlines(0.0, rows.bottom, y_top, color="0.35", lw=0.8, ls=(0, (1, 2)), zorder=1)
    ax.vlines(pooled["estimate"], rows.bottom, y_top, color=summary_color, lw=0.6,
              ls=(0, (4, 3)), alpha=0.6, zorder=1)  # fmt: skip
    ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
    _draw_studies(ax, study, rows, xlim, color)
    _draw_summary(ax, pooled, rows, has_pi, summary_color)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_yticks([])


def _draw_rules(fig: Any, trans: Any, rows: _Rows, two_line: bool) -> None:
    """Draw the rules under and over the column headers, across the figure."""
    for y_line, lw in (
        (rows.header - 0.55 - 0.1 * two_line, 0.8),
        (rows.header + 0.5 + 0.25 * two_line, 1.2),
    ):
        fig.add_artist(Line2D([0.02, 0.99], [y_line, y_line], transform=trans, color="0.2", lw=lw))


def _draw_favours(
    ax: Any, control: str | None, treatment: str | None, layout: _Layout, fontsize: float
) -> None:
    """Write "favours control" and "favours treatment" under the axis (stacked if tight)."""
    if not (control and treatment):
        return
    left_s, right_s = f"\u2190 favours {control}", f"favours {treatment} \u2192"
    need = (len(left_s) + len(right_s) + 4) * layout.char_in * 0.85
    stacked = need > layout.plot_fraction * layout.width
    for x, s, ha, dy in ((0.0, left_s, "left", 0.0), (1.0, right_s, "right", 1.2 * stacked)):
        ax.annotate(s, xy=(x, 0), xycoords="axes fraction", xytext=(0, -(3.3 + dy) * fontsize),
                    textcoords="offset points", ha=ha, va="top",
                    fontsize=fontsize * 0.85, color="0.3")  # fmt: skip


def _put(ax: Any, trans: Any, x_fig: float, y: float, s: str, ha: str, **kw: Any) -> None:
    """Text at figure fraction ``x_fig`` and data ``y``, never clipped."""
    size = kw.pop("size")
    ax.text(x_fig, y, s, transform=trans, ha=ha, va="center", fontsize=size, clip_on=False, **kw)


def _draw_columns(
    ax: Any,
    trans: Any,
    cols: list[_Column],
    rows: _Rows,
    *,
    x0: float,
    share: float,
    total: int,
    summary_text: str | None,
    fontsize: float,
) -> None:
    """Headers (bold) and cells of text columns, side by side from ``x0``."""
    x = x0
    for n, col in enumerate(cols):
        head, values, ha = col
        last = summary_text is not None and n == len(cols) - 1
        cw = share * _chars(col, summary_text if last else None) / total
        xa = {"left": x, "center": x + cw / 2, "right": x + cw - 0.005}[ha]
        _put(ax, trans, xa, rows.header, head, ha, weight="bold", size=fontsize)
        for y, s in zip(rows.study, values, strict=True):
            _put(ax, trans, xa, y, s, ha, size=fontsize)
        x += cw


def _draw_summary_text(
    ax: Any,
    trans: Any,
    result: Any,
    pooled: Any,
    rows: _Rows,
    *,
    weight_x: float,
    summary_text: str,
    has_pi: bool,
    pct: str,
    decimals: int,
    fontsize: float,
) -> None:
    """Write the model, its heterogeneity, 100% and the pooled and prediction intervals."""
    model = (
        "Fixed-effect model"
        if result.method == "FE"
        else (f"Random-effects model ({result.method}{', HK' if result.hk else ''})")
    )
    _put(ax, trans, 0.02, rows.summary, model, "left", weight="bold", size=fontsize)
    het = result.heterogeneity()
    p_text = "p < 0.001" if het.q_pvalue < 0.001 else f"p = {het.q_pvalue:.3f}"
    het_text = f"Q({het.q_df}) = {het.q:.2f}, {p_text}; I\u00b2 = {het.i2:.0f}%"
    if result.method != "FE" and np.isfinite(het.tau):
        het_text += f", \u03c4\u00b2 = {het.tau2:.2g}"
    _put(ax, trans, 0.02, rows.bottom + 0.25, "Heterogeneity: " + het_text, "left",
         size=fontsize * 0.85, color="0.3")  # fmt: skip
    right_end = 0.985  # right edge of the effect column
    _put(ax, trans, weight_x, rows.summary, "100%", "right", weight="bold", size=fontsize)
    _put(ax, trans, right_end, rows.summary, summary_text, "right", weight="bold", size=fontsize)
    if has_pi:
        _put(ax, trans, 0.02, rows.prediction, f"Prediction interval ({pct})", "left",
             color="0.25", size=fontsize)  # fmt: skip
        bounds = f"[{_fmt(pooled['pi_lower'], decimals)}, {_fmt(pooled['pi_upper'], decimals)}]"
        _put(ax, trans, right_end, rows.prediction, bounds, "right", color="0.25", size=fontsize)


def forest_plot(
    result: MetaAnalysisResult,
    *,
    labels: Sequence[str] | Mapping[str, str] | None = None,
    ci_prob: float | None = None,
    width: float | None = None,
    plot_width: float = 3.2,
    row_height: float = 0.3,
    decimals: int = 3,
    show_means: bool = True,
    extra: str | None = None,
    show_extra: bool = True,
    extra_label: str | None = None,
    show_prediction: bool = True,
    xlabel: str | None = None,
    title: str | None = None,
    control_label: str | None = None,
    treatment_label: str | None = None,
    xlim: tuple[float, float] | None = None,
    color: str = "#1f4e79",
    summary_color: str = "#b2182b",
    fontsize: float = 9.0,
    path: str | PathLike[str] | None = None,
    dpi: int = 200,
    ax: Any = None,
) -> Figure:
    """Draw a forest plot: one row per collection, the summary diamond and the prediction interval.

    Parameters
    ----------
    result
        A fitted :class:`~bayes_ir.frequentist.MetaAnalysisResult`.
    labels
        Row labels: a sequence (one per collection) or a mapping from the current labels.
    ci_prob
        Interval probability (default: the result's).
    width
        Figure width in inches (default: the text columns plus ``plot_width``); the
        height follows from the number of rows.
    plot_width
        Width of the plot panel in inches when ``width`` is not given.
    row_height
        Height of one row in inches.
    decimals
        Decimals of effects, intervals and means.
    show_means
        Show the column "control -> treatment" of the raw per-collection means.
    extra
        Name of an extra measure carried by the effects (e.g. ``"Judged@10"``) to show
        as "control -> treatment"; by default the first one present, if any.
    show_extra
        Show the extra-measure column at all.
    extra_label
        Header of that column (default: the measure name).
    show_prediction
        Draw the prediction interval as a bar under the summary diamond.
    xlabel, title
        Axis label (default: the effect measure and the score measure, e.g. "Mean
        difference in nDCG@10") and figure title.
    control_label, treatment_label
        Names for the "favours" captions under the axis (default: the system names).
    xlim
        Limits of the effect axis (default: fitted to the intervals).
    color, summary_color
        Colours of the collection markers and of the summary diamond.
    fontsize
        Base font size in points.
    path
        If given, save the figure there; the extension selects PDF, SVG or PNG.
    dpi
        Resolution of raster output.
    ax
        Axes of an existing figure to use as the plot panel: the text columns go into
        the figure's space left and right of it (default: a new figure sized to fit).

    Returns
    -------
    matplotlib.figure.Figure
    """
    frame = result.to_frame(ci_prob)
    study = frame[frame["kind"] == "study"].reset_index(drop=True)
    pooled = frame[frame["kind"] == ("fixed" if result.method == "FE" else "random")].iloc[0]
    k = len(study)
    names = _row_labels(list(study["label"]), labels)
    eff = result.effects
    extra = _extra_measure(study, extra, show_extra)
    show_means = show_means and bool(study["mean_control"].notna().any())
    pct = f"{100 * (ci_prob or result.ci_prob):g}%"
    pi_row = show_prediction and result.method != "FE"
    has_pi = pi_row and bool(np.isfinite(pooled["pi_lower"]))

    left_cols = _left_columns(
        study, names, eff, show_means=show_means, extra=extra, extra_label=extra_label,
        control_label=control_label, treatment_label=treatment_label, decimals=decimals,
    )  # fmt: skip
    right_cols = _right_columns(study, pct, decimals)
    summary_text = _interval_text(
        pooled["estimate"], pooled["ci_lower"], pooled["ci_upper"], decimals
    )
    n_rows = k + 3 + (1 if pi_row else 0)
    height = row_height * (n_rows + 2.2) + (0.35 if title else 0.0)
    if ax is None:
        fig = plt.figure(figsize=(width or 10.0, height))
        layout = _layout(left_cols, right_cols, summary_text, width=width,
                         plot_width=plot_width, fontsize=fontsize)  # fmt: skip
        fig.set_figwidth(layout.width)
        bottom = 1.3 * row_height / height
        top = 1 - (0.7 * row_height + (0.35 if title else 0.0)) / height
        ax = fig.add_axes((0.02 + layout.left_share, bottom, layout.plot_fraction, top - bottom))
    else:
        fig = ax.figure
        layout = _layout_around(ax, left_cols, right_cols, summary_text, fontsize=fontsize)

    rows = _rows(k, pi_row)
    xlim = xlim if xlim is not None else _x_limits(study, pooled, show_prediction)
    _draw_panel(ax, study, pooled, rows, xlim=xlim, has_pi=has_pi, color=color,
                summary_color=summary_color)  # fmt: skip
    ax.tick_params(axis="x", labelsize=fontsize)
    ax.set_xlabel(xlabel or _effect_label(result), fontsize=fontsize)
    trans = blended_transform_factory(fig.transFigure, ax.transData)  # x figure, y data
    _draw_rules(fig, trans, rows, any("\n" in c[0] for c in left_cols + right_cols))
    _draw_favours(ax, control_label or eff.control, treatment_label or eff.treatment, layout,
                  fontsize)  # fmt: skip
    _draw_columns(ax, trans, left_cols, rows, x0=0.02, share=layout.left_share,
                  total=layout.left_w, summary_text=None, fontsize=fontsize)  # fmt: skip
    right_share = 1 - layout.right_x0 - 0.01
    _draw_columns(ax, trans, right_cols, rows, x0=layout.right_x0, share=right_share,
                  total=layout.right_w, summary_text=summary_text, fontsize=fontsize)  # fmt: skip
    weight_x = layout.right_x0 + right_share * _chars(right_cols[0]) / layout.right_w - 0.005
    _draw_summary_text(ax, trans, result, pooled, rows, weight_x=weight_x,
                       summary_text=summary_text, has_pi=has_pi, pct=pct, decimals=decimals,
                       fontsize=fontsize)  # fmt: skip
    if title and ax is fig.axes[0] and len(fig.axes) == 1:
        fig.suptitle(title, fontsize=fontsize * 1.2, fontweight="bold", y=1 - 0.15 / height)
    elif title:
        ax.set_title(title, fontsize=fontsize * 1.2, fontweight="bold")
    if path is not None:
        with atomic_path(path, what="figure") as tmp:
            fig.savefig(tmp, dpi=dpi, bbox_inches="tight")
    return fig
