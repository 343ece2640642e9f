"""Tables of a :class:`~bayes_ir.frequentist.glm.LinkComparison`: Markdown, LaTeX, text.

The layout of Faggioli, Ferro and Fuhr (2022), Tables 1 and 2: one row per link, one
column per collection and measure, the best converged link of each column in bold and a
fit that did not converge marked.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from bayes_ir import defaults
from bayes_ir.report.escape import markdown_escape
from bayes_ir.report.latex import latex_table
from bayes_ir.report.output import render_table

__all__ = ["link_latex", "link_markdown", "link_summary", "pairs_lines"]

#: Each statistic's caption and what its best value is (the line under the table).
_TITLES = {
    "deviance": ("Residual deviance", "lowest residual deviance"),
    "aic": ("AIC", "lowest AIC"),
    "bic": ("BIC", "lowest BIC"),
    "llf": ("Log-likelihood", "highest log-likelihood"),
    "n_significant": ("Significantly different system pairs", "most significant pairs"),
}
_NOT_CONVERGED = "did not converge"


def _winners(comparison: Any, stat: str) -> pd.DataFrame:
    """Boolean frame (links x columns): the best converged link(s) of each column."""
    wide = comparison.table(stat)
    best = comparison.best(stat)
    return pd.DataFrame(
        {col: wide.index.isin(best[col].split(", ") if best[col] else []) for col in wide.columns},
        index=wide.index,
    )


def link_markdown(comparison: Any, stat: str = "deviance", *, float_format: str = "%.4f") -> str:
    """Markdown table of ``stat``: best link of each column in bold, ``*`` not converged."""
    wide = comparison.table(stat)
    ok = comparison.table_converged()
    winners = _winners(comparison, stat)
    out = pd.DataFrame(index=wide.index, columns=wide.columns, dtype=object)
    for col in wide.columns:
        for link in wide.index:
            value = wide.at[link, col]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                text = "failed"
            elif stat == "n_significant":
                text = str(int(value))
            else:
                text = float_format % value
            if not ok.at[link, col] and text != "failed":
                text += "*"
            text = markdown_escape(text)
            out.at[link, col] = f"**{text}**" if winners.at[link, col] else text
    out = out.reset_index()
    out.columns = [markdown_escape(str(c)) for c in out.columns]
    out["link"] = out["link"].map(markdown_escape)
    return render_table(out, "markdown", escape=False)


def link_latex(
    comparison: Any,
    stat: str = "deviance",
    *,
    caption: str | None = None,
    label: str | None = None,
    digits: int = defaults.LATEX_DIGITS,
) -> str:
    """LaTeX table of ``stat`` in the package's style (:func:`~.latex.latex_table`).

    The best converged link of each column is bold; a fit that did not converge is
    marked with a dagger and a failed one reads ``failed``.
    """
    wide = comparison.table(stat)
    ok = comparison.table_converged()
    title, best = _TITLES[stat]
    if caption is None:
        caption = f"{title} by link (Gaussian GLM score ~ topic + system)"
        if stat == "n_significant":
            caption += f"; topic-blocked Tukey HSD at alpha = {comparison.alpha:g}"
    failed = wide.isna().to_numpy()
    return latex_table(
        wide.rename_axis(index="link"),
        caption=caption,
        label=label,
        digits=digits,
        bold=_winners(comparison, stat).reset_index(drop=True),
        bold_note=f"Bold: the best converged link of each column ({best}).",
        marks={_NOT_CONVERGED: (~ok.astype(bool) & ~failed).reset_index(drop=True)},
        missing="failed",
    )


def link_summary(comparison: Any) -> str:
    """Both tables (deviance; significant pairs) as Markdown, plus failures."""
    frame = comparison.frame
    n_pairs = frame.groupby(["collection", "measure"], sort=False)["n_pairs"].max()
    pairs = ", ".join(f"{c} {m}: {int(v)}" for (c, m), v in n_pairs.items() if v == v)
    lines = [
        f"GLM link comparison: Gaussian GLMs score ~ topic + system, {len(comparison.links)} "
        f"links, boundary={comparison.boundary!r}",
        "",
        "Residual deviance (lower is better; best in bold):",
        link_markdown(comparison, "deviance"),
        f"Significantly different pairs, topic-blocked Tukey HSD at alpha = "
        f"{comparison.alpha:g} (more is better; pairs: {pairs}):",
        link_markdown(comparison, "n_significant"),
    ]
    failed = frame[~frame["converged"].astype(bool)]
    for row in failed.itertuples(index=False):
        lines.append(
            f"* {row.link} on {row.collection} {row.measure} did not converge: {row.message}"
        )
    return "\n".join(lines)


def pairs_lines(tukey: Any, *, systems: int | None = 10, names: int | None = 6) -> list[str]:
    """Return which systems differ, one line per system that beats others significantly.

    ``"chal_fusion > 38, closest first: bm25, chal_dense, ... (+32 more)"``: the
    systems it is significantly better than under the Tukey HSD of one link
    (``system_1 - system_2`` on the link's scale, positive when ``system_1`` is better),
    the closest to it first (where the significance begins); the systems that beat the
    most come first. ``systems`` and ``names`` limit the lines and the names per line
    (``None``: all), with a last line saying how many are left out.
    """
    frame = tukey.to_frame()
    frame = frame[frame["significant"].astype(bool)]
    better = frame["diff"] > 0
    winner = frame["system_1"].where(better, frame["system_2"])
    loser = frame["system_2"].where(better, frame["system_1"])
    beaten: dict[str, list[str]] = {}
    gaps = frame["diff"].abs()
    for w, l_, _ in sorted(zip(winner, loser, gaps, strict=True), key=lambda x: x[2]):
        beaten.setdefault(str(w), []).append(str(l_))
    order = sorted(beaten, key=lambda w: (-len(beaten[w]), w))
    lines = []
    for w in order[:systems]:
        shown = beaten[w][:names]
        rest = len(beaten[w]) - len(shown)
        lines.append(f"{w} > {len(beaten[w])}, closest first: {', '.join(shown)}"
                     + (f" (+{rest} more)" if rest else ""))  # fmt: skip
    if systems is not None and len(order) > systems:
        lines.append(f"(+{len(order) - systems} more systems that beat another)")
    return lines
