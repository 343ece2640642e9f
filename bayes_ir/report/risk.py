"""Text, Markdown and LaTeX of a :class:`~bayes_ir.risk.review.RiskReview`.

The layout of Table 3 of Benham et al. (2020): one row per system, mean score, URisk-,
TRisk- (p), BCa- interval, BRisk- and its credible interval, P(riskier), ZRisk- and
GeoRisk-, with significance marks; the header states the sign convention and settings.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from bayes_ir import defaults
from bayes_ir.report.escape import latex_escape, markdown_escape
from bayes_ir.report.latex import best_cells, latex_number, tabular
from bayes_ir.report.marks import marked, misfit_legend, misfit_systems, model_description
from bayes_ir.report.numbers import format_probability
from bayes_ir.risk.trisk import SD_LABELS
from bayes_ir.risk.urisk import SIGN_NOTE

__all__ = [
    "risk_display_frame",
    "risk_header",
    "risk_legend",
    "risk_misfit",
    "risk_title",
    "risk_latex",
    "risk_markdown",
    "risk_summary",
]


def _header_parts(review: Any) -> tuple[str, str, str, str]:
    """Title, settings, what the marks mean, and the failed-diagnostics warning (or "")."""
    bayes = (
        f"BRisk- {review.ci_prob:.0%} credible interval (hierarchical model: "
        f"{model_description(review.brisk)})"
        if review.brisk is not None
        else "BRisk- not computed"
    )
    title = (
        f"Deployment risk review: collection {review.collection!r}, measure "
        f"{review.measure!r}, champion {review.champion!r}, loss weight r = {review.r:g} "
        f"(= 1 + alpha); {review.trisk.n_topics} topics."
    )
    settings = (
        f"TRisk- uses the {SD_LABELS[review.sd]} and Student t ({review.trisk.df} df); BCa- "
        f"{review.ci_prob:.0%} family-wise (Bonferroni over {len(review.bca.systems)} "
        f"challengers, each at {review.bca.level:.4g}, {review.bca.n_resamples} resamples); "
        f"{bayes}; ZRisk-/GeoRisk- over all {len(review.zrisk.systems)} systems."
    )
    marks = (
        f"* = significant (TRisk p < {1 - review.ci_prob:.2g}; interval excludes 0; on "
        "P(riskier than the champion): the BRisk contrast with the champion excludes 0)."
    )
    failed = (
        "!! BRisk DIAGNOSTICS FAILED: do not act on the BRisk- column."
        if review.brisk is not None and not review.brisk.diagnostics_passed
        else ""
    )
    return title, settings, marks, failed


def risk_header(review: Any, *, legend: bool = True) -> str:
    """Title, the sign convention, the settings and the marks: said in every rendering.

    When BRisk's model does not describe a system, the legend of its mark
    (:func:`risk_legend`) ends the header (``legend=False`` leaves it for below the table).
    """
    title, settings, marks, failed = _header_parts(review)
    lines = [title, SIGN_NOTE, f"{settings} {marks}", failed, risk_legend(review) if legend else ""]
    return "\n".join(line for line in lines if line)


def risk_title(review: Any) -> str:
    """One line: what the table is, on which data, at which r, and how to read its signs.

    The short header of the command line (a second line when BRisk failed its
    diagnostics); :func:`risk_header` says the settings too.
    """
    failed = _header_parts(review)[3]
    return (
        f"Deployment risk vs champion {review.champion!r} ({review.measure} on "
        f"{review.collection}, {review.trisk.n_topics} topics, loss weight r = {review.r:g}): "
        f"risk measures x -1, so higher = riskier; * = significant at {review.ci_prob:.0%}"
    ) + (f"\n{failed}" if failed else "")


def risk_misfit(review: Any) -> tuple[str, ...]:
    """Return the systems of the review that BRisk's model does not describe (none without it)."""
    if review.brisk is None:
        return ()
    return misfit_systems(review.brisk, review.frame["system"])


def risk_legend(review: Any) -> str:
    """Return the line that explains the misfit mark of the review's table ("" when none)."""
    misfit = risk_misfit(review)
    if not misfit:
        return ""
    whose = "its" if len(misfit) == 1 else "their"
    affected = (
        f"{whose} BRisk- nor on any P(riskier) (each is a contrast with the champion)"
        if review.champion in misfit
        else f"{whose} BRisk- and P(riskier)"
    )
    return misfit_legend(
        review.brisk.fit if review.brisk.fit is not None else review.brisk,
        misfit,
        champion=review.champion,
        consequence=f"do not act on {affected}; URisk-, TRisk-, BCa-, ZRisk- and GeoRisk- do "
        "not use the model",
        scores=" of the risk-adjusted scores",
    )


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and np.isnan(x))


def risk_display_frame(review: Any) -> pd.DataFrame:
    """Return the formatted table (strings, ``*`` significance marks, minus-named headers)."""

    def num(x: float, digits: int = 4, sig: bool = False) -> str:
        return "" if _missing(x) else f"{x:.{digits}f}" + ("*" if sig else "")

    def interval(lo: float, hi: float, sig: bool = False) -> str:
        return "" if np.isnan(lo) else f"[{lo:.4f}, {hi:.4f}]" + ("*" if sig else "")

    misfit = risk_misfit(review)
    rows = []
    for row in review.frame.itertuples():
        out = {
            "System": marked(row.system, misfit),
            "Mean": num(row.mean),
            "URisk-": num(row.urisk_minus),
            "TRisk- (p)": ""
            if np.isnan(row.trisk_minus)
            else f"{row.trisk_minus:.3f} ({format_probability(row.trisk_p)})"
            + ("*" if row.trisk_sig else ""),
            "BCa-": interval(row.bca_lower_minus, row.bca_upper_minus, row.bca_sig),
        }
        if review.brisk is not None:
            out["BRisk-"] = num(row.brisk_minus)
            out["BRisk- CI"] = interval(row.brisk_lower, row.brisk_upper)
            out["P(riskier)"] = (
                ""
                if _missing(row.brisk_p_riskier)
                else format_probability(row.brisk_p_riskier) + ("*" if row.brisk_sig else "")
            )
        out["ZRisk-"] = num(row.zrisk_minus, 2)
        out["GeoRisk-"] = num(row.georisk_minus)
        rows.append(out)
    return pd.DataFrame(rows)


def risk_markdown(review: Any) -> str:
    """Markdown table preceded by the header (sign convention, settings) as a quote.

    Rendered with tabulate's ``pipe`` format rather than
    :func:`~bayes_ir.report.output.render_table`, which would re-parse the formatted
    numbers (``3.00`` becoming ``3``); system names are escaped.
    """
    from tabulate import tabulate

    head = "\n".join(f"> {markdown_escape(line)}" for line in risk_header(review).splitlines())
    disp = risk_display_frame(review)
    disp["System"] = disp["System"].map(markdown_escape)
    cells = [[str(v) for v in row] for row in disp.to_numpy()]
    align = ("left",) + ("right",) * (disp.shape[1] - 1)
    table = tabulate(cells, headers=[str(c) for c in disp.columns], tablefmt="pipe",
                     disable_numparse=True, colalign=align)  # fmt: skip
    return f"{head}\n\n{table}\n"


def risk_summary(review: Any) -> str:
    """Header and the table as plain text."""
    return risk_header(review) + "\n\n" + risk_display_frame(review).to_string(index=False)


def risk_latex(
    review: Any,
    *,
    caption: str | None = None,
    label: str | None = None,
    digits: int = defaults.LATEX_DIGITS,
) -> str:
    r"""Return the review as a LaTeX table in the package's style (:func:`~.latex.tabular`).

    Marks: a dagger on TRisk- when its p-value is below 1 - ci_prob, a double dagger on
    a BCa- interval that excludes 0, a section sign on P(riskier) when the BRisk contrast
    with the champion excludes 0. Bold: the highest mean and the lowest URisk-, BRisk-,
    ZRisk- and GeoRisk- (least risky). The caption defaults to the header's title; the
    sign convention and settings are lines under the table.
    """
    title, settings, _, failed = _header_parts(review)
    frame = review.frame
    challenger = (frame["role"] != "champion").to_numpy()
    bayes = review.brisk is not None
    minus = "$^-$"

    def bold_of(col: str, how: Literal["max", "min"], rows: Any = None) -> np.ndarray:
        return best_cells(frame[col] if rows is None else frame[col].where(rows), how)

    def cell(value: float, strong: bool = False, places: int = digits) -> str:
        text = latex_number(value, places)
        return rf"\textbf{{{text}}}" if strong and text else text

    def interval(lo: float, hi: float) -> str:
        return "" if np.isnan(lo) else f"[{latex_number(lo, digits)}, {latex_number(hi, digits)}]"

    sym = {"trisk": r"$^{\dagger}$", "bca": r"$^{\ddagger}$", "brisk": r"$^{\S}$"}
    best = {
        "mean": bold_of("mean", "max"),
        "urisk_minus": bold_of("urisk_minus", "min", challenger),
        "brisk_minus": bold_of("brisk_minus", "min"),
        "zrisk_minus": bold_of("zrisk_minus", "min"),
        "georisk_minus": bold_of("georisk_minus", "min"),
    }
    header = ["System", "Mean", f"URisk{minus}", f"TRisk{minus} ($p$)", f"BCa{minus}"]
    if bayes:
        header += [f"BRisk{minus}", f"BRisk{minus} CI", "P(riskier)"]
    header += [f"ZRisk{minus}", f"GeoRisk{minus}"]
    rows = []
    for i, row in enumerate(frame.itertuples(index=False)):
        trisk = (
            ""
            if np.isnan(row.trisk_minus)
            else f"{latex_number(row.trisk_minus, 3)} "
            f"({latex_escape(format_probability(row.trisk_p))})"
            + (sym["trisk"] if row.trisk_sig else "")
        )
        bca = interval(row.bca_lower_minus, row.bca_upper_minus)
        cells = [
            latex_escape(row.system),
            cell(row.mean, best["mean"][i]),
            cell(row.urisk_minus, best["urisk_minus"][i]),
            trisk,
            bca + (sym["bca"] if bca and row.bca_sig else ""),
        ]
        if bayes:
            p = "" if _missing(row.brisk_p_riskier) else format_probability(row.brisk_p_riskier)
            cells += [
                cell(row.brisk_minus, best["brisk_minus"][i]),
                interval(row.brisk_lower, row.brisk_upper),
                latex_escape(p) + (sym["brisk"] if p and row.brisk_sig else ""),
            ]
        cells += [
            cell(row.zrisk_minus, best["zrisk_minus"][i], 2),
            cell(row.georisk_minus, best["georisk_minus"][i]),
        ]
        rows.append(cells)
    notes = [latex_escape(SIGN_NOTE), latex_escape(settings)]
    if frame["trisk_sig"].any():
        notes.append(sym["trisk"] + latex_escape(f" TRisk- p < {1 - review.ci_prob:.2g}."))
    if frame["bca_sig"].any():
        notes.append(sym["bca"] + " " + latex_escape("BCa- interval excludes 0."))
    if bayes and frame["brisk_sig"].any():
        notes.append(sym["brisk"] + " " + latex_escape(
            "the BRisk contrast with the champion excludes 0 (on P(riskier than the champion))."
        ))  # fmt: skip
    notes.append(latex_escape("Bold: highest mean; lowest (least risky) URisk-, BRisk-, "
                              "ZRisk- and GeoRisk-."))  # fmt: skip
    if failed:
        notes.insert(0, r"\textbf{" + latex_escape(failed) + "}")
    return tabular(
        header,
        rows,
        align="l" + "r" * (len(header) - 1),
        caption=title if caption is None else caption,
        label=label,
        notes=notes,
    )
