"""Text of the contrasts across collections or segments (:class:`AcrossContrasts`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayes_ir.report.marks import marked, misfit_legend
from bayes_ir.report.numbers import format_probability

__all__ = ["across_summary", "table_lines"]


def table_lines(header: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    """Rows of text columns: the first left-aligned, the others right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return (indent + "  ".join([first, *rest])).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _interval(x: np.ndarray, ci_prob: float) -> str:
    lo, hi = np.quantile(x, [(1 - ci_prob) / 2, (1 + ci_prob) / 2])
    return f"{x.mean():+.4f} [{lo:+.4f}, {hi:+.4f}]"


def wins_line(probabilities: np.ndarray, n: int, by: str) -> str:
    """``wins on k of n``: the most likely k, P(all n), P(at least half) and E[k]."""
    k = np.arange(probabilities.size)
    half = int(np.ceil(n / 2))
    mode = int(probabilities.argmax())
    every = "" if mode == n else f"; P(k = {n}) = {format_probability(float(probabilities[-1]))}"
    most = (  # with one group, at least half is all of them
        ""
        if half == n
        else f"; P(k >= {half}) = {format_probability(float(probabilities[half:].sum()))}"
    )
    return (
        f"wins on k of {n} {by}{'' if n == 1 else 's'}: most likely k = {mode} "
        f"(P = {format_probability(float(probabilities.max()))}){every}{most}; "
        f"E[k] = {float((k * probabilities).sum()):.2f}"
    )


def across_summary(result: Any) -> str:
    """Return the text of an :class:`AcrossContrasts`.

    The header, the gate, then per challenger: overall, between-group SD, new group,
    wins on k of n and the per-group table (raw beside shrunken).
    """
    r = result
    pct = f"{100 * r.ci_prob:g}%"
    m = f" > {r.margin:g}" if r.margin else " > 0"
    lines = [
        r.header,
        r.gate.banner(),
        f"Contrasts (challenger - champion) in {r.units}; {pct} equal-tailed intervals; "
        f"a win is a contrast{m}",
    ]
    wins = r.wins()
    p_new = r.p_new_win()
    pred = r.predictive_draws()
    if r.model_check is not None:
        lines.insert(2, r.model_check.summary())
    for j, chal in enumerate(r.challengers):
        x = r.overall[:, j]
        between = f"between-{r.by} SD" + (f" ({r.between_scale})" if r.between_scale else "")
        labels = [f"overall (mean over {r.by}s)", between, f"on a new {r.by}"]
        w = max(map(len, labels))
        lines += [
            "",
            f"{marked(chal, r.misfit)} - {marked(r.champion, r.misfit)}",
            f"  {labels[0]:<{w}}  {_interval(x, r.ci_prob)}   "
            f"P(win) = {format_probability(float((x > r.margin).mean()))}",
            f"  {labels[1]:<{w}}  {_interval(r.between_sd, r.ci_prob)}",
            f"  {labels[2]:<{w}}  {_interval(pred[:, j], r.ci_prob)}   "
            f"P(win) = {format_probability(float(p_new[j]))}",
        ]
        mine = wins[wins["challenger"] == chal]
        lines.append(
            "  " + wins_line(mine["probability"].to_numpy(), int(mine["n_groups"].iat[0]), r.by)
        )
        rows = []
        for k, g in enumerate(r.groups):
            x = r.group[:, j, k]
            if np.isnan(x[0]):
                continue
            obs, se = r.observed[j, k], r.observed_se[j, k]
            rows.append(
                [
                    str(g),
                    str(int(r.n_topics[j, k])),
                    f"{obs:+.4f} ({se:.4f})",
                    _interval(x, r.ci_prob),
                    format_probability(float((x > r.margin).mean())),
                ]
            )
        header = [r.by, "topics", "raw (SE)", f"shrunken [{pct}]", "P(win)"]
        lines += ["", *table_lines(header, rows)]
        absent = [str(g) for k, g in enumerate(r.groups) if np.isnan(r.group[0, j, k])]
        if absent:
            lines.append(
                f"  not compared in {', '.join(absent)}: no topic has scores of both "
                f"{chal} and {r.champion} there (left out of the {r.by}s counted)"
            )
    legend = misfit_legend(r, r.misfit, champion=r.champion)
    if legend:
        lines += ["", legend]
    if r.likelihood != "gaussian":
        lines += [
            "",
            f"Scale: {r.likelihood} model; a contrast is the difference of the two systems' "
            f"expected scores over a {r.by}'s topic population; overall, their mean over the "
            f"{r.by}s at a typical system x {r.by} effect; on a new {r.by}, at the baseline "
            f"of one of these; the between-{r.by} SD is on the {r.between_scale} scale.",
        ]
    if r.scale == "sd":
        lines += [
            "",
            "Scale: each collection's contrasts are in units of its own residual SD "
            "(the raw difference divided by the posterior mean residual SD).",
        ]
    return "\n".join(lines)
