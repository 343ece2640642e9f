"""Figures of the GLM link comparison: fit, Tukey significance matrix, links side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, cast

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from bayes_ir.errors import OptionError
from bayes_ir.frequentist.letters import compact_letter_display

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

    from bayes_ir.frequentist.glm.comparison import LinkComparison
    from bayes_ir.frequentist.glm.fit import GLMFitResult
    from bayes_ir.frequentist.glm.tukey import TukeyHSDResult

__all__ = ["plot_glm_fit", "plot_links", "plot_tukey"]


def plot_glm_fit(fit: GLMFitResult, *, ax: Axes | None = None) -> Figure | SubFigure:
    """Observed scores against the GLM's fitted means, with the line y = x.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.frequentist.glm.fit.GLMFitResult`.
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        The figure of ``ax`` (a ``SubFigure`` when ``ax`` lies in one).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5))
    x, y = fit.fitted.ravel(), fit.response.ravel()
    ax.scatter(x, y, s=4, alpha=0.3, color="#1f4e79", linewidths=0)
    lo, hi = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
    ax.plot([lo, hi], [lo, hi], color="#b2182b", lw=1)
    ax.set_xlabel(f"fitted mean {fit.measure}")
    ax.set_ylabel(f"observed {fit.measure}")
    ax.set_title(f"{fit.measure} on {fit.collection}, {fit.link} link: deviance {fit.deviance:.4g}")
    return ax.figure


def _tukey_effects(tukey: TukeyHSDResult) -> np.ndarray:
    """Each system's effect minus the reference system's (the first), from its pair."""
    index = {s: i for i, s in enumerate(tukey.systems)}
    effect = np.zeros(len(tukey.systems))
    for a, b, d in zip(tukey.system_1, tukey.system_2, tukey.diff, strict=True):
        if b == tukey.systems[0]:
            effect[index[a]] = d
    return effect


def plot_tukey(
    tukey: TukeyHSDResult,
    *,
    kind: Literal["letters", "matrix"] = "letters",
    ax: Axes | None = None,
) -> Figure:
    r"""Draw the Tukey HSD of every system pair, readable for 45 systems.

    Parameters
    ----------
    tukey
        A :class:`~bayes_ir.frequentist.glm.TukeyHSDResult`.
    kind
        ``"letters"`` (default): one row per system, best first, its effect with a
        Tukey comparison interval and its compact letters (systems sharing a letter do
        not differ significantly; :func:`~bayes_ir.frequentist.letters.compact_letter_display`).
        ``"matrix"``: the system x system matrix, +1 row better, -1 row worse, 0 not
        significant, rows and columns ordered by effect, best first.
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    The comparison interval of system :math:`s` is its effect
    :math:`\pm q_{crit}\,\bar{se}_s / (2\sqrt2)`, :math:`\bar{se}_s` the mean SE of its
    pairs (Hochberg, Weiss and Hart 1982): two intervals miss each other exactly when
    the pair is significant if all pairs have one SE (a complete table, identity link);
    the letters are exact in every case.

    References
    ----------
    Hochberg, Y., Weiss, G., and Hart, S. (1982). On graphical procedures for multiple
    comparisons. *Journal of the American Statistical Association* 77(380), 767-772.
    """
    if kind not in ("letters", "matrix"):
        raise OptionError(f"kind must be 'letters' or 'matrix', got {kind!r}")
    effect = _tukey_effects(tukey)
    order = np.argsort(-effect, kind="stable")
    ranked = [tukey.systems[i] for i in order]
    k = len(ranked)
    where = f"{tukey.measure} on {tukey.collection}"
    what = (
        f"Tukey HSD, {tukey.link} link, {where}: {tukey.n_significant} of {tukey.n_pairs} "
        f"pairs differ (family-wise alpha {tukey.alpha:g})"
    )
    if kind == "matrix":
        return _tukey_matrix(tukey, ranked, what, ax)
    letters = compact_letter_display(ranked, tukey.significant_pairs(), monospaced=True)
    se = pd.concat(
        [
            pd.Series(tukey.se, index=list(tukey.system_1)),
            pd.Series(tukey.se, index=list(tukey.system_2)),
        ]
    )
    half = tukey.q_crit * se.groupby(level=0).mean().reindex(ranked).to_numpy() / (2 * np.sqrt(2))
    est = effect[order]
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 1.6 + 0.24 * k), layout="constrained")
    y = np.arange(k)[::-1]
    ax.hlines(y, est - half, est + half, color="#1f4e79", lw=1.6)
    ax.plot(est, y, "o", color="#1f4e79", ms=4)
    ax.set_yticks(y, ranked, fontsize=7 if k > 20 else 9)
    ax.set_ylim(-0.7, k - 0.3)
    reference = tukey.systems[0]
    scale = "" if tukey.link == "identity" else f", {tukey.link}-link scale"
    ax.set_xlabel(f"{tukey.measure}: effect minus {reference}'s{scale} (comparison intervals)")
    ax.set_title(what + "\nsystems sharing a letter do not differ significantly", fontsize=9)
    for yi, system in zip(y, ranked, strict=True):
        ax.annotate(
            letters[system], xy=(1.0, yi), xycoords=("axes fraction", "data"), xytext=(6, 0),
            textcoords="offset points", va="center", family="monospace",
            fontsize=7 if k > 20 else 9,
        )  # fmt: skip
    ax.annotate("groups", xy=(1.0, 1.0), xycoords="axes fraction", xytext=(6, 2),
                textcoords="offset points", va="bottom", fontsize=7)  # fmt: skip
    ax.grid(axis="x", alpha=0.3)
    return cast("Figure", ax.figure)


def _tukey_matrix(tukey: TukeyHSDResult, ranked: list[str], title: str, ax: Axes | None) -> Figure:
    """+1 / -1 / 0 matrix of the pairs, rows and columns in ``ranked`` order."""
    k = len(ranked)
    index = {s: i for i, s in enumerate(ranked)}
    sign = np.zeros((k, k))
    for a, b, d, sig in zip(
        tukey.system_1, tukey.system_2, tukey.diff, tukey.significant, strict=True
    ):
        if sig:
            i, j = index[a], index[b]
            sign[i, j], sign[j, i] = np.sign(d), -np.sign(d)
    if ax is None:
        size = min(11.0, 2.5 + 0.18 * k)
        _, ax = plt.subplots(figsize=(size, size), layout="constrained")
    image = ax.imshow(sign, cmap="RdBu", vmin=-1.5, vmax=1.5)
    font = 9 if k <= 15 else max(4.0, 9 - k / 8)
    ax.set_xticks(range(k), ranked, rotation=90, fontsize=font)
    ax.set_yticks(range(k), ranked, fontsize=font)
    ax.set_xlabel("column system (best first)")
    ax.set_ylabel("row system (best first)")
    bar = ax.figure.colorbar(image, ax=ax, shrink=0.6, ticks=[-1, 0, 1])
    bar.ax.set_yticklabels(["row worse", "no difference", "row better"])
    ax.set_title(title, fontsize=9)
    return cast("Figure", ax.figure)


def plot_links(comparison: LinkComparison, *, axes: np.ndarray | None = None) -> Figure:
    """Deviance (left) and significant pairs (right) of each link, one group per block.

    Parameters
    ----------
    comparison
        A :class:`~bayes_ir.frequentist.glm.comparison.LinkComparison`.
    axes
        Two matplotlib axes (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        One group of bars per "collection measure" block; every bar starts at 0 and
        carries its value (the deviance ratios differ in the second decimal).
    """
    own = axes is None
    if own:
        _, axes = plt.subplots(1, 2, figsize=(10, 4.4), layout="constrained")
    axes = np.ravel(cast(np.ndarray, axes))
    for ax, stat, label in zip(
        axes,
        ("deviance", "n_significant"),
        ("residual deviance", "significant pairs"),
        strict=False,
    ):
        wide = comparison.table(stat).astype(float)
        if stat == "deviance" and "identity" in wide.index:
            wide = wide / wide.loc["identity"]
            label = "deviance / identity-link deviance"
        n_links, n_cols = wide.shape
        width = 0.8 / n_links
        fmt = "{:.3f}" if stat == "deviance" else "{:.0f}"
        for i, link in enumerate(wide.index):
            bars = ax.bar(
                np.arange(n_cols) + i * width, wide.loc[link].to_numpy(float), width, label=link
            )
            ax.bar_label(bars, fmt=fmt, fontsize=6, rotation=90, padding=2)
        ax.set_xticks(np.arange(n_cols) + 0.4 - width / 2, list(wide.columns))
        ax.set_ylabel(label)
        top = np.nanmax(wide.to_numpy(float), initial=0.0)
        ax.set_ylim(0, 1.2 * top if top > 0 else 1.0)  # bars start at 0: their heights compare
    fig = axes[0].figure
    if own:  # below the panels, clear of the bar labels
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=8, fontsize=8)
    else:
        axes[0].legend(fontsize=7, ncols=2)
    fig.suptitle("GLM links compared on each collection and measure", fontsize=10)
    return axes[0].figure
