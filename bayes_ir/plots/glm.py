"""Figures of the GLM link comparison: fit, Tukey significance matrix, links side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np

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
    ax.set_xlabel("fitted mean")
    ax.set_ylabel(f"observed {fit.measure}")
    ax.set_title(f"{fit.link} link: deviance {fit.deviance:.4g}")
    return ax.figure


def plot_tukey(tukey: TukeyHSDResult, *, ax: Axes | None = None) -> Figure | SubFigure:
    """System x system matrix of the Tukey HSD: +1 row better, -1 row worse, 0 not significant.

    Systems are ordered by their GLM effect (best first).
    """
    k = len(tukey.systems)
    index = {s: i for i, s in enumerate(tukey.systems)}
    sign = np.zeros((k, k))
    effect = np.zeros(k)
    for a, b, d, sig in zip(
        tukey.system_1, tukey.system_2, tukey.diff, tukey.significant, strict=True
    ):
        i, j = index[a], index[b]
        if sig:
            sign[i, j], sign[j, i] = np.sign(d), -np.sign(d)
    # effects relative to the reference system, recovered from the pairs with it
    for a, b, d in zip(tukey.system_1, tukey.system_2, tukey.diff, strict=True):
        if b == tukey.systems[0]:
            effect[index[a]] = d
    order = np.argsort(-effect, kind="stable")
    if ax is None:
        size = min(10.0, 2.0 + 0.08 * k)
        _, ax = plt.subplots(figsize=(size, size))
    ax.imshow(sign[np.ix_(order, order)], cmap="RdBu", vmin=-1.5, vmax=1.5)
    if k <= 40:
        labels = [tukey.systems[i] for i in order]
        ax.set_xticks(range(k), labels, rotation=90, fontsize=7)
        ax.set_yticks(range(k), labels, fontsize=7)
    ax.set_title(
        f"Tukey HSD, {tukey.link} link: {tukey.n_significant} of {tukey.n_pairs} pairs "
        f"significant (alpha {tukey.alpha:g})",
        fontsize=9,
    )
    return ax.figure


def plot_links(comparison: LinkComparison, *, axes: np.ndarray | None = None) -> Figure:
    """Deviance (left) and significant pairs (right) of each link, one group per block."""
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.8))
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
        for i, link in enumerate(wide.index):
            ax.bar(np.arange(n_cols) + i * width, wide.loc[link].to_numpy(float), width, label=link)
        ax.set_xticks(np.arange(n_cols) + 0.4 - width / 2, list(wide.columns))
        ax.set_ylabel(label)
        values = wide.to_numpy()[np.isfinite(wide.to_numpy())]
        if values.size:
            span = values.max() - values.min()
            ax.set_ylim(values.min() - 0.2 * span - 1e-12, values.max() + 0.1 * span + 1e-12)
    axes[0].legend(fontsize=7, ncols=2)
    return axes[0].figure
