"""Text and LaTeX of :class:`~bayes_ir.frequentist.paired.PairedTests` (ranx-style table).

One row per challenger: mean difference, Cohen's d_z and the adjusted p-value of each
test, marked where it is below alpha.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from bayes_ir import defaults
from bayes_ir.frequentist.paired import CORRECTIONS, TESTS
from bayes_ir.report.latex import latex_table
from bayes_ir.report.numbers import format_probability

__all__ = ["paired_latex", "paired_notes", "paired_summary", "paired_wide"]

#: What a p-value is not, said under every rendering.
_CAVEAT = (
    "A p-value is the probability of a difference at least this large if the systems "
    "were equally good, not the probability that the challenger is better: the "
    "Bayesian P(better) of bayes_ir.compare answers that."
)


def paired_wide(result: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the wide table and its significance mask, one row per challenger.

    Columns ``challenger``, ``mean diff``, ``d_z`` and one adjusted p-value per test
    (in :data:`~bayes_ir.frequentist.paired.TESTS` order); the mask is True where the
    adjusted p-value is below ``alpha``.
    """
    frame = result.frame
    pvalues = frame.pivot(index="challenger", columns="test", values="p_adjusted")
    tests = [t for t in TESTS if t in pvalues.columns]
    order = list(dict.fromkeys(frame["challenger"]))
    first = frame.groupby("challenger", sort=False)[["mean_difference", "effect_size"]].first()
    wide = pd.DataFrame(
        {
            "challenger": order,
            "mean diff": first.loc[order, "mean_difference"].to_numpy(),
            "d_z": first.loc[order, "effect_size"].to_numpy(),
        }
    )
    for test in tests:
        wide[test] = pvalues.loc[order, test].to_numpy()
    significant = pd.DataFrame({t: (wide[t] < result.alpha).to_numpy() for t in tests})
    return wide, significant


def _title(result: Any) -> str:
    return (
        f"Paired tests of each challenger against {result.champion!r} ({result.alternative}; "
        f"p-values adjusted by {CORRECTIONS[result.correction]} within each test"
    )


def paired_summary(result: Any) -> str:
    """Return a ranx-style text table: mean difference and adjusted p-values, ``*`` marks."""
    wide, significant = paired_wide(result)
    head = list(wide.columns)
    rows = []
    for i, row in enumerate(wide.itertuples(index=False, name=None)):
        cells = [str(row[0]), f"{row[1]:+.4f}", f"{row[2]:+.3f}"]
        cells += [format_probability(p) + ("*" if significant.iat[i, j] else " ")
                  for j, p in enumerate(row[3:])]  # fmt: skip
        rows.append(cells)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = [str.ljust] + [str.rjust] * (len(head) - 1)
    lines = [
        f"{_title(result)}; * p < {result.alpha:g})",
        "  ".join(f(h, w) for f, h, w in zip(fmt, head, widths, strict=True)),
    ]
    lines += ["  ".join(f(c, w) for f, c, w in zip(fmt, r, widths, strict=True)) for r in rows]
    lines.append(_CAVEAT)
    return "\n".join(lines)


def paired_notes(result: Any) -> list[str]:
    """Return how each number of :func:`paired_summary` was computed, one line each."""
    frame = result.frame
    methods = []
    for _, group in frame.groupby("test", sort=False)["method"]:
        same = group.nunique() == 1  # else per challenger (sign test: its wins and losses)
        methods.append(group.iloc[0] if same else group.iloc[0].split(" (")[0])
    n = frame["challenger"].nunique()
    lines = [
        "mean diff: mean over topics of challenger minus champion (the observed difference); "
        "d_z: Cohen's effect size, mean diff over the SD of the differences",
        "each test on the per-topic differences: " + "; ".join(methods),
    ]
    if result.correction != "none":
        lines.append(
            f"p-values adjusted by {CORRECTIONS[result.correction]} over the {n} challengers "
            "within each test (statsmodels' multipletests)"
        )
    return lines


def paired_latex(
    result: Any,
    *,
    caption: str | None = None,
    label: str | None = None,
    digits: int = defaults.LATEX_DIGITS,
) -> str:
    """Return :func:`paired_wide` as LaTeX in the package's style (:func:`~.latex.latex_table`).

    Adjusted p-values below alpha carry a dagger; the highest mean difference is bold;
    the caption defaults to the summary's title.
    """
    wide, significant = paired_wide(result)
    return latex_table(
        wide,
        caption=f"{_title(result)})" if caption is None else caption,
        label=label,
        digits={"mean diff": digits, "d_z": min(digits, 3)},
        best={"mean diff": "max"},
        marks={
            f"p < {result.alpha:g}"
            + (
                ""
                if result.correction == "none"
                else f" after {CORRECTIONS[result.correction]}'s adjustment"
            )
            + ".": significant
        },
        probabilities=list(significant.columns),
        notes=[_CAVEAT],
    )
