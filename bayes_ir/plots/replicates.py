"""Every system's runs (seeds) beside the posterior of its expected score."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from bayes_ir.plots._common import misfit_note
from bayes_ir.report.marks import marked

__all__ = ["plot_replicates"]

_RUN = "#7f7f7f"
_EXPECTED = "#1f77b4"
_CHAMPION = "#d62728"


def plot_replicates(result: Any, *, ax: Any = None) -> Any:
    r"""Draw each run's mean score (dots) and each system's expected score (interval).

    Parameters
    ----------
    result
        A :class:`~bayes_ir.hierarchical.replicate_effects.ReplicateContrasts`.
    ax
        Axis to draw on (``None``: a new figure).

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    One row per system: grey dots are its runs' mean scores over the topics, the blue
    bar the equal-tailed interval of its expected score :math:`b_0 + \beta_s` (the
    mean over the population of runs and topics) with its posterior mean; the
    champion's row is red. The spread of the dots is the run-to-run variance the
    single-run contrasts include.
    """
    r = result
    systems = list(r.systems)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(systems) + 1.4), layout="constrained")
    else:
        fig = ax.figure
    lo, hi = (1 - r.ci_prob) / 2, (1 + r.ci_prob) / 2
    for i, s in enumerate(systems):
        y = len(systems) - 1 - i
        color = _CHAMPION if s == r.champion else _EXPECTED
        x = r.expected[:, i]
        q = np.quantile(x, [lo, hi])
        ax.plot(q, [y, y], color=color, lw=3, solid_capstyle="butt", zorder=2)
        ax.plot([x.mean()], [y], "o", color=color, ms=6, zorder=3)
        runs = r.runs[r.runs["system"] == s]["mean"].to_numpy()
        ax.plot(runs, np.full(runs.size, y + 0.22), "o", color=_RUN, ms=5, alpha=0.9,
                mfc="none", zorder=1)  # fmt: skip
    ax.set_ylim(-0.6, len(systems) - 0.4)  # the top row's runs inside the frame
    ax.set_yticks(range(len(systems)))
    ax.set_yticklabels([marked(s, r.misfit) for s in reversed(systems)])
    ax.set_xlabel(
        f"mean {r.measure} (runs: open dots; expected score: {100 * r.ci_prob:g}% interval)"
    )
    ax.set_title("Runs per system and expected score over runs")
    ax.grid(axis="x", alpha=0.3)
    misfit_note(fig, r.misfit, champion=r.champion)
    return fig
