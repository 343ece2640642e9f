"""Forest plot of a meta-analysis across collections (publication-ready, matplotlib)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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

_EFFECT_NAMES = {
    "MD": "Mean difference",
    "SMD": "Standardised mean difference (Hedges' g)",
    "CORR": "Correlation r",
}


def _fmt(x: float, decimals: int) -> str:
    return "" if not np.isfinite(x) else f"{x:.{decimals}f}".replace("-", "\u2212")


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
        Axis label (default: the effect measure) and figure title.
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

    Returns
    -------
    matplotlib.figure.Figure
    """
    frame = result.to_frame(ci_prob)
    study = frame[frame["kind"] == "study"].reset_index(drop=True)
    pooled = frame[frame["kind"] == ("fixed" if result.method == "FE" else "random")].iloc[0]
    k = len(study)
    names = list(study["label"])
    if labels is not None:
        if isinstance(labels, Mapping):
            names = [str(labels.get(n, n)) for n in names]
        else:
            if len(labels) != k:
                raise OptionError(f"labels has {len(labels)} entries for {k} collections")
            names = [str(x) for x in labels]
    eff = result.effects
    extra_cols = [c[: -len("_control")] for c in study.columns if c.endswith("_control")]
    extra_cols = [c for c in extra_cols if c != "mean" and f"{c}_treatment" in study.columns]
    if extra is None and extra_cols:
        extra = extra_cols[0]
    if not show_extra:
        extra = None
    show_means = show_means and bool(study["mean_control"].notna().any())
    pct = f"{100 * (ci_prob or result.ci_prob):g}%"

    # ---------------------------------------------------------------- layout
    n_rows = k + 3 + (1 if show_prediction and result.method != "FE" else 0)
    height = row_height * (n_rows + 2.2) + (0.35 if title else 0.0)
    fig = plt.figure(figsize=(width or 10.0, height))
    left_cols: list[tuple[str, list[str], str]] = [("Collection", names, "left")]
    if show_means:
        head = eff.score_measure or "Mean"
        if eff.control and eff.treatment:
            head += f"\n{control_label or eff.control} \u2192 {treatment_label or eff.treatment}"
        left_cols.append(
            (
                head,
                [
                    f"{_fmt(c, decimals)} \u2192 {_fmt(t, decimals)}"
                    for c, t in zip(study["mean_control"], study["mean_treatment"], strict=True)
                ],
                "center",
            )
        )
    if extra is not None and f"{extra}_control" in study.columns:
        left_cols.append(
            (
                extra_label or extra,
                [
                    f"{_fmt(c, 2)} \u2192 {_fmt(t, 2)}"
                    for c, t in zip(
                        study[f"{extra}_control"], study[f"{extra}_treatment"], strict=True
                    )
                ],
                "center",
            )
        )
    right_cols = [
        ("Weight", [f"{100 * w:.1f}%" for w in study["weight"]], "right"),
        (
            f"Effect [{pct} CI]",
            [
                f"{_fmt(e, decimals)} [{_fmt(lo, decimals)}, {_fmt(hi, decimals)}]"
                for e, lo, hi in zip(
                    study["estimate"], study["ci_lower"], study["ci_upper"], strict=True
                )
            ],
            "right",
        ),
    ]
    # column widths in characters decide the horizontal space of each text column
    summary_text = (
        f"{_fmt(pooled['estimate'], decimals)} "
        f"[{_fmt(pooled['ci_lower'], decimals)}, {_fmt(pooled['ci_upper'], decimals)}]"
    )

    def chars(col: tuple[str, list[str], str]) -> int:
        head = max(len(line) for line in col[0].split("\n")) * 1.12  # bold is wider
        if col is right_cols[-1]:  # the bold summary row sits in the effect column
            head = max(head, len(summary_text) * 1.12)
        return int(max(head, *(len(s) for s in col[1]))) + 3

    left_w = sum(chars(c) for c in left_cols)
    right_w = sum(chars(c) for c in right_cols)
    char_in = 0.56 * fontsize / 72  # average width of a character, in inches
    if width is None:
        width = (left_w + right_w) * char_in / 0.95 + plot_width
    fig.set_figwidth(width)
    text_share = min(0.8, (left_w + right_w) * char_in / width)
    plot_fraction = 0.95 - text_share
    left_share = text_share * left_w / (left_w + right_w)
    bottom = 1.3 * row_height / height
    top = 1 - (0.7 * row_height + (0.35 if title else 0.0)) / height
    ax = fig.add_axes((0.02 + left_share, bottom, plot_fraction, top - bottom))

    y_study = np.arange(k, 0, -1, dtype=float) + 1.0  # rows k+1 .. 2
    y_sum = 0.6
    y_pi = -0.35
    y_head = k + 2.2
    ymin = (y_pi if show_prediction and result.method != "FE" else y_sum) - 0.9
    ax.set_ylim(ymin, y_head + 0.9)

    # ---------------------------------------------------------------- the plot panel
    lo_all = np.r_[study["ci_lower"], pooled["ci_lower"]]
    hi_all = np.r_[study["ci_upper"], pooled["ci_upper"]]
    if show_prediction and np.isfinite(pooled["pi_lower"]):
        lo_all = np.r_[lo_all, pooled["pi_lower"]]
        hi_all = np.r_[hi_all, pooled["pi_upper"]]
    if xlim is None:
        lo, hi = float(np.min(np.r_[lo_all, 0.0])), float(np.max(np.r_[hi_all, 0.0]))
        pad = 0.06 * (hi - lo)
        xlim = (lo - pad, hi + pad)
    ax.set_xlim(*xlim)
    zero = 0.0
    y_top = y_head - 0.55
    ax.vlines(zero, ymin, y_top, color="0.35", lw=0.8, ls=(0, (1, 2)), zorder=1)
    ax.vlines(pooled["estimate"], ymin, y_top, color=summary_color, lw=0.6, ls=(0, (4, 3)),
              alpha=0.6, zorder=1)  # fmt: skip
    ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
    w = study["weight"].to_numpy(float)
    sizes = 25 + 175 * np.clip(w, 0, None) / max(np.nanmax(w), 1e-12)
    ax.hlines(y_study, study["ci_lower"], study["ci_upper"], color="0.15", lw=1.0, zorder=2)
    for y, lo_, hi_ in zip(y_study, study["ci_lower"], study["ci_upper"], strict=True):
        # clipped whiskers end in an arrow instead of a tick
        for xv, side in ((lo_, -1), (hi_, 1)):
            if (side < 0 and xv < xlim[0]) or (side > 0 and xv > xlim[1]):
                edge = xlim[0] if side < 0 else xlim[1]
                ax.annotate(
                    "",
                    xy=(edge, y),
                    xytext=(edge - side * 0.03 * (xlim[1] - xlim[0]), y),
                    arrowprops={"arrowstyle": "->", "lw": 1.0, "color": "0.15"},
                )
    ax.scatter(study["estimate"], y_study, s=sizes, marker="s", color=color, zorder=3, lw=0)
    d_h = 0.28
    diamond = Polygon(
        [
            (pooled["ci_lower"], y_sum),
            (pooled["estimate"], y_sum + d_h),
            (pooled["ci_upper"], y_sum),
            (pooled["estimate"], y_sum - d_h),
        ],
        closed=True,
        facecolor=summary_color,
        edgecolor=summary_color,
        zorder=3,
    )
    ax.add_patch(diamond)
    has_pi = show_prediction and result.method != "FE" and np.isfinite(pooled["pi_lower"])
    if has_pi:
        ax.hlines(y_pi, pooled["pi_lower"], pooled["pi_upper"], color=summary_color, lw=1.6)
        ax.vlines(
            [pooled["pi_lower"], pooled["pi_upper"]], y_pi - 0.12, y_pi + 0.12,
            color=summary_color, lw=1.6,
        )  # fmt: skip
    for spine in ("left", "right", "top"):
        ax.spines[spine].set_visible(False)
    ax.set_yticks([])
    ax.tick_params(axis="x", labelsize=fontsize)
    ax.set_xlabel(xlabel or _EFFECT_NAMES.get(result.measure, result.measure), fontsize=fontsize)
    trans = blended_transform_factory(fig.transFigure, ax.transData)  # x figure, y data
    two_line = any("\n" in c[0] for c in left_cols + right_cols)
    for y_line, lw in (
        (y_head - 0.55 - 0.1 * two_line, 0.8),
        (y_head + 0.5 + 0.25 * two_line, 1.2),
    ):
        fig.add_artist(Line2D([0.02, 0.99], [y_line, y_line], transform=trans, color="0.2", lw=lw))
    ctl = control_label or eff.control
    trt = treatment_label or eff.treatment
    if ctl and trt:
        left_s, right_s = f"\u2190 favours {ctl}", f"favours {trt} \u2192"
        stacked = (len(left_s) + len(right_s) + 4) * char_in * 0.85 > plot_fraction * width
        for x, s, ha, dy in ((0.0, left_s, "left", 0.0), (1.0, right_s, "right", 1.2 * stacked)):
            ax.annotate(s, xy=(x, 0), xycoords="axes fraction", xytext=(0, -(3.3 + dy) * fontsize),
                        textcoords="offset points", ha=ha, va="top",
                        fontsize=fontsize * 0.85, color="0.3")  # fmt: skip

    # ---------------------------------------------------------------- text columns
    def put(x_fig: float, y: float, s: str, ha: str, **kw: Any) -> None:
        ax.text(x_fig, y, s, transform=trans, ha=ha, va="center",
                fontsize=kw.pop("size", fontsize), clip_on=False, **kw)  # fmt: skip

    def draw_cols(cols, x0: float, share: float, total: int) -> None:
        x = x0
        for col in cols:
            head, values, ha = col
            cw = share * chars(col) / total
            xa = {"left": x, "center": x + cw / 2, "right": x + cw - 0.005}[ha]
            put(xa, y_head, head, ha, weight="bold")
            for y, s in zip(y_study, values, strict=True):
                put(xa, y, s, ha)
            x += cw

    draw_cols(left_cols, 0.02, left_share, left_w)
    right_x0 = 0.02 + left_share + plot_fraction + 0.02
    draw_cols(right_cols, right_x0, 1 - right_x0 - 0.01, right_w)
    # summary and prediction rows
    model = (
        "Fixed-effect model"
        if result.method == "FE"
        else (f"Random-effects model ({result.method}{', HK' if result.hk else ''})")
    )
    put(0.02, y_sum, model, "left", weight="bold")
    het = result.heterogeneity()
    p_text = "p < 0.001" if het.q_pvalue < 0.001 else f"p = {het.q_pvalue:.3f}"
    het_text = f"Q({het.q_df}) = {het.q:.2f}, {p_text}; I\u00b2 = {het.i2:.0f}%"
    if result.method != "FE" and np.isfinite(het.tau):
        het_text += f", \u03c4\u00b2 = {het.tau2:.2g}"
    put(0.02, ymin + 0.25, "Heterogeneity: " + het_text, "left", size=fontsize * 0.85, color="0.3")
    right_end = 0.985  # right edge of the effect column
    put(right_end, y_sum, "100%", "right", weight="bold")
    put(right_end, y_sum, summary_text, "right", weight="bold")
    # the weight column's x: recompute to right-align "100%" under the weights
    weight_w = (1 - right_x0 - 0.01) * chars(right_cols[0]) / right_w
    ax.texts[-2].set_x(right_x0 + weight_w - 0.005)
    if has_pi:
        put(0.02, y_pi, f"Prediction interval ({pct})", "left", color="0.25")
        put(
            right_end,
            y_pi,
            f"[{_fmt(pooled['pi_lower'], decimals)}, {_fmt(pooled['pi_upper'], decimals)}]",
            "right",
            color="0.25",
        )
    if title:
        fig.suptitle(title, fontsize=fontsize * 1.2, fontweight="bold", y=1 - 0.15 / height)
    if path is not None:
        with atomic_path(path, what="figure") as tmp:
            fig.savefig(tmp, dpi=dpi, bbox_inches="tight")
    return fig
