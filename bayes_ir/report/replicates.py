"""Text of the contrasts of systems with several runs (:class:`ReplicateContrasts`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayes_ir.report.across import table_lines
from bayes_ir.report.marks import marked, misfit_legend
from bayes_ir.report.numbers import format_probability

__all__ = ["replicates_summary"]


def _interval(x: np.ndarray, ci_prob: float, digits: int = 4) -> str:
    lo, hi = np.quantile(x, [(1 - ci_prob) / 2, (1 + ci_prob) / 2])
    return f"{x.mean():+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def _sd_interval(x: np.ndarray, ci_prob: float) -> str:
    lo, hi = np.quantile(x, [(1 - ci_prob) / 2, (1 + ci_prob) / 2])
    return f"{x.mean():.4f} [{lo:.4f}, {hi:.4f}]"


def replicates_summary(result: Any) -> str:
    """Return the text of a :class:`ReplicateContrasts`.

    The header, the gate, the model check, the variance components, then one row per
    challenger: its runs, the observed difference, the contrast in expectation and
    the contrast of one run of each, with P(better) of both.
    """
    from bayes_ir.hierarchical.replicate_effects import COMPONENTS

    r = result
    pct = f"{100 * r.ci_prob:g}%"
    lines = [r.header, r.gate.banner()]
    if r.model_check is not None:
        lines.append(r.model_check.summary())
    lines += ["", f"Variance components ({r.measure}; posterior mean [{pct}])"]
    rows = []
    for name, label in COMPONENTS:
        x = r.components[name]
        if x.ndim == 2:
            rows += [[f"{label} [{s}]", _sd_interval(x[:, k], r.ci_prob)]
                     for k, s in enumerate(r.systems)]  # fmt: skip
        else:
            rows.append([label, _sd_interval(x, r.ci_prob)])
    lines += table_lines(["component", "SD"], rows)
    m = f" > {r.margin:g}" if r.margin else " > 0"
    lines += [
        "",
        f"Contrasts (challenger - champion), {r.measure}; {pct} intervals; better: {m.strip()}",
        "",
        "In expectation over seeds (expected scores over all runs and topics):",
    ]
    names = [f"{marked(c, r.misfit)} - {marked(r.champion, r.misfit)}" for c in r.challengers]
    rows = [
        [names[j], f"{r.n_runs(c)} vs {r.n_runs(r.champion)}", f"{r.observed[j]:+.4f}",
         _interval(r.expectation[:, j], r.ci_prob),
         format_probability(float((r.expectation[:, j] > r.margin).mean()))]
        for j, c in enumerate(r.challengers)
    ]  # fmt: skip
    lines += table_lines(["contrast", "runs", "observed", "mean [interval]", "P(better)"], rows)
    lines += ["", "One run of each, drawn at random (run-to-run variance included):"]
    rows = [
        [names[j], _interval(r.single_run[:, j], r.ci_prob),
         format_probability(float((r.single_run[:, j] > r.margin).mean()))]
        for j in range(len(r.challengers))
    ]  # fmt: skip
    lines += table_lines(["contrast", "mean [interval]", "P(run beats)"], rows)
    lines += [
        "",
        "P(run beats): P(a random run of the challenger beats one of the champion).",
    ]
    legend = misfit_legend(r, r.misfit, champion=r.champion)
    if legend:
        lines += ["", legend]
    return "\n".join(lines)
