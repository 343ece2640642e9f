"""HTML rendering of the deployment review (Jinja2 template, figures inline as SVG)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import numpy as np

from bayes_ir.report.decision import format_probability
from bayes_ir.report.marks import marked, misfit_legend, model_description

__all__ = ["action_style", "environment", "figure_svg", "html_output", "measure_context",
           "render_review", "render_reviews"]  # fmt: skip

_ACTION_CLASS = {"deploy": "deploy", "keep champion": "keep", "collect more data": "more",
                 "unreliable": "unreliable"}  # fmt: skip
_ACTION_MARK = {"deploy": "\u2714", "keep champion": "\u25cf", "collect more data": "?",
                "unreliable": "\u2716"}  # fmt: skip


def action_style(action: str) -> tuple[str, str]:
    """Return the CSS class and the mark of a decision's action (``"deploy"``: a tick)."""
    return _ACTION_CLASS[action], _ACTION_MARK[action]


def figure_svg(fig: Any, *, label: str) -> str:
    """Return ``fig`` as inline SVG: no date, fixed ids, ``role="img"`` and a label.

    Matplotlib's SVG carries the creation date and random clip-path ids unless
    ``metadata={"Date": None}`` and ``svg.hashsalt`` are set; both are, so the same
    figure gives the same bytes. Its ids (glyphs, clip paths, markers) repeat from one
    figure to the next, so they are prefixed with the label's slug: the ids stay unique
    in a page with several figures.
    """
    import matplotlib
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "bayes_ir", "svg.fonttype": "path"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and doctype: inline in HTML
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)  # RDF only
    svg = _own_ids(svg, re.sub(r"\W+", "-", label).strip("-").lower())
    from markupsafe import escape

    return re.sub(r"<svg ", f'<svg role="img" aria-label="{escape(label)}" ', svg, count=1)


def _own_ids(svg: str, prefix: str) -> str:
    """Prefix every ``id`` of ``svg`` and every reference to it (``#id``) with ``prefix``."""
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    return re.sub(
        r'(\bid="|#)([A-Za-z_][\w.:-]*)',
        lambda m: f"{m[1]}{prefix}-{m[2]}" if m[2] in ids else m[0],
        svg,
    )


def _num(x: float, digits: int = 4, sign: bool = False) -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def _decision_rows(review: Any) -> list[dict[str, Any]]:
    risk = review.risk.to_frame().set_index("system")
    comp = review.comparison.to_frame().set_index("challenger")
    misfit = review.decision.misfit
    rows = []
    for r in review.decision.to_frame().itertuples(index=False):
        rk = risk.loc[r.challenger] if r.challenger in risk.index else None
        # brisk_sig is two-sided: the contrast with the champion excludes 0 either way
        sig = bool(rk is not None and rk["brisk_sig"])
        riskier = "riskier" if rk is not None and rk["brisk_p_riskier"] > 0.5 else "less risky"
        c = comp.loc[r.challenger]
        rows.append(
            {
                "challenger": r.challenger,
                "name": marked(r.challenger, misfit),
                "action": r.action,
                "css": _ACTION_CLASS[r.action],
                "mark": _ACTION_MARK[r.action],
                "observed": _num(c["observed"], sign=True),
                "mean": _num(c["mean"], sign=True),
                "interval": f"[{_num(c['ci_lower'], sign=True)}, {_num(c['ci_upper'], sign=True)}]",
                "p_better": format_probability(c["p_better"]),
                "p_gain": format_probability(c["p_gain"]),
                "p_equivalent": format_probability(r.p_equivalent),
                "p_worse": format_probability(r.p_worse),
                "loss_deploy": _num(r.loss_deploy),
                "loss_keep": _num(r.loss_keep),
                "risk": (
                    "n/a"
                    if rk is None
                    else (riskier if sig else "not shown riskier")
                    + f", P(riskier) {format_probability(rk['brisk_p_riskier'])}"
                ),  # fmt: skip
                "reason": r.reason,
            }
        )
    return rows


def _risk_rows(review: Any) -> list[dict[str, str]]:
    from bayes_ir.report.risk import risk_misfit

    misfit = risk_misfit(review.risk)
    rows = []
    for r in review.risk.to_frame().itertuples(index=False):
        rows.append(
            {
                "system": r.system,
                "name": marked(r.system, misfit),
                "role": r.role,
                "mean": _num(r.mean),
                "urisk": _num(r.urisk_minus),
                "bca": "" if not np.isfinite(r.bca_lower_minus)
                else f"[{_num(r.bca_lower_minus)}, {_num(r.bca_upper_minus)}]"
                + (" *" if r.bca_sig else ""),
                "trisk": _num(r.trisk_minus, 3) + (" *" if r.trisk_sig else ""),
                "trisk_p": "n/a" if not np.isfinite(r.trisk_p) else format_probability(r.trisk_p),
                "brisk": _num(r.brisk_minus),
                "brisk_interval": f"[{_num(r.brisk_lower)}, {_num(r.brisk_upper)}]",
                "p_riskier": "n/a" if not np.isfinite(r.brisk_p_riskier)
                else format_probability(r.brisk_p_riskier) + (" *" if r.brisk_sig else ""),
                "zrisk": _num(r.zrisk_minus, 3),
                "georisk": _num(r.georisk_minus, 4),
            }
        )  # fmt: skip
    return rows


def _model_check(review: Any) -> dict[str, Any]:
    """Rows of the model check for the champion and challengers, and what else it says."""
    check = review.fit.model_check
    choice = review.fit.likelihood_choice
    out: dict[str, Any] = {
        "rows": [],
        "flagged": [],
        "other_flagged": [],
        "likelihood": review.fit.likelihood,
        "description": model_description(review.fit),
        "choice": [x.strip() for x in choice.choice_text().splitlines()] if choice else [],
    }
    if check is None:
        return out
    frame = check.to_frame()
    shown = frame[frame["role"] != "artifact"]
    for r in shown.itertuples(index=False):
        out["rows"].append(
            {
                "system": r.system,
                "name": marked(r.system, [r.system] if r.flagged else []),
                "role": r.role,
                "coverage_50": f"{r.coverage_50:.0%}",
                "coverage_95": f"{r.coverage_95:.0%}",
                "ppp": ", ".join(
                    f"{name} {format_probability(value)}"
                    for name, value in (
                        ("mean", r.ppp_mean),
                        ("sd", r.ppp_sd),
                        ("skewness", r.ppp_skewness),
                        ("lost", r.ppp_lost),
                    )
                    if np.isfinite(value)
                ),  # fmt: skip
                "verdict": f"FLAGGED: {r.failed_checks}" if r.flagged else "ok",
            }
        )
    out["flagged"] = [str(v) for v in shown.loc[shown["flagged"], "system"]]
    artifacts = frame["flagged"] & (frame["role"] == "artifact")
    out["other_flagged"] = [str(v) for v in frame.loc[artifacts, "system"]]
    return out


def _diagnostics(review: Any) -> dict[str, Any]:
    fit = review.fit
    diag = fit.diagnostics
    prov = fit.provenance
    return {
        "passed": bool(review.decision.diagnostics_passed),
        "sampler": prov.get("sampler", fit.method),
        "chains": prov.get("chains"),
        "draws": prov.get("draws"),
        "rhat": _num(diag.max_rhat, 4),
        "ess_bulk": f"{diag.min_ess_bulk:,.0f}",
        "ess_tail": f"{diag.min_ess_tail:,.0f}",
        "text": diag.summary(),
        "messages": list(review.comparison.gate.messages),
    }


def environment() -> Any:
    """Return the Jinja2 environment of the review templates (autoescaped, strict)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("bayes_ir.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def measure_context(review: Any) -> dict[str, Any]:
    """Return what the template's sections show of one measure's review, figures rendered."""
    prov = review.provenance
    where = f"{prov['measure']} on {prov['collection']}"
    d = review.decision
    figures = [
        {
            "svg": figure_svg(_decision_figure(d), label=f"Decision probabilities, {where}"),
            "narrow": True,  # panels stacked: it fits a phone's width
            "caption": f"Decision, {where}: posterior probability that each challenger is "
            f"better than {d.champion} by more than the margin {d.margin:g} (green, dotted), "
            f"within it (grey, plain) or worse by more than it (red, hatched); look for bars "
            f"that are almost all one pattern."
            + (
                " Below: the probability that more topics settle an undecided challenger."
                if len(d.more_topics)
                else ""
            ),
        },  # fmt: skip
        {
            "svg": figure_svg(review.brisk.plot(), label=f"BRisk over r, {where}"),
            "caption": f"BRisk- of the champion (dashed line) and challengers for each loss "
            f"weight r, {where} (higher = riskier); look for a challenger whose interval lies "
            f"right of the champion's dashed line, the more so as r grows.",
        },
        {
            "svg": figure_svg(review.predictive.plot(), label=f"Predictive intervals, {where}"),
            "caption": f"Posterior predictive intervals per topic ({where}) with the observed "
            f"scores (dots inside their interval, crosses outside); look for many crosses "
            f"(a model that does not describe that system).",
        },
    ]
    from bayes_ir.report.risk import risk_header, risk_legend

    return {
        "measure": prov["measure"],
        "where": where,
        "champion": marked(d.champion, d.misfit),
        "misfit_legend": misfit_legend(
            review.fit,
            d.misfit,
            champion=d.champion,
            consequence="no decision is taken (unreliable)",
        ),
        "risk_legend": risk_legend(review.risk),
        "headline": review.headline(),
        "reliable": review.reliable,
        "decision": d,
        "rule": d.rule,
        "decision_rows": _decision_rows(review),
        "pooling": None if d.pooling is None else d.pooling.summary(),
        "more_topics": [
            {k: (format_probability(v) if k.startswith("p_") else v) for k, v in row.items()}
            | {"expected_loss": _num(row["expected_loss"])}
            for row in d.more_topics.to_dict("records")
        ],
        "risk_header": risk_header(review.risk, legend=False),  # the legend: under the table
        "risk_r": review.risk.r,
        "risk_rows": _risk_rows(review),
        "worst": review.worst_topics.assign(
            champion=lambda f: f["champion"].map(_num),
            score=lambda f: f["score"].map(_num),
            difference=lambda f: f["difference"].map(lambda x: _num(x, sign=True)),
        ).to_dict("records"),
        "diagnostics": _diagnostics(review),
        "model": _model_check(review),
        "figures": figures,
    }


def _decision_figure(decision: Any) -> Any:
    """Draw the decision figure with its panels stacked (narrow enough for a phone)."""
    import matplotlib.pyplot as plt

    from bayes_ir.plots.decision import plot_decision

    rows = 2 if len(decision.more_topics) else 1
    height = 0.6 * len(decision.table) + 2.6 + (2.8 if rows == 2 else 0)
    _, axes = plt.subplots(rows, 1, figsize=(5.6, height), squeeze=False, layout="constrained")
    return plot_decision(decision, axes=axes[:, 0])


def render_review(review: Any) -> str:
    """Render a :class:`~bayes_ir.report.review.Review` with ``templates/review.html.j2``."""
    d = review.decision
    return (
        environment()
        .get_template("review.html.j2")
        .render(
            title=f"Deployment review: {d.champion} vs {', '.join(d.challengers)}",
            c=measure_context(review),
            provenance=review.provenance,
        )
    )


def render_reviews(multi: Any) -> str:
    """Render a :class:`~bayes_ir.report.review_measures.MultiReview` as one page.

    The summary (one row per challenger x measure, the combined action per challenger)
    comes first, then each measure's sections with ids prefixed ``m1-``, ``m2-``, ...,
    figures numbered across the page, and the provenance once.
    """
    from bayes_ir.report.review_measures import RULE

    sections = []
    rows = []
    for i, (measure, review) in enumerate(multi.reviews.items()):
        context = measure_context(review)
        sections.append({"c": context, "prefix": f"m{i + 1}-", "first_figure": 1 + 3 * i})
        rows += [r | {"measure": measure} for r in context["decision_rows"]]
    order = {name: i for i, name in enumerate(dict.fromkeys(r["challenger"] for r in rows))}
    rows.sort(key=lambda r: order[r["challenger"]])  # stable: measures stay in order
    combined = [
        {"challenger": r.challenger, "action": r.action, "reason": r.reason,
         "css": _ACTION_CLASS[r.action], "mark": _ACTION_MARK[r.action]}
        for r in multi.combined().itertuples(index=False)
    ]  # fmt: skip
    return (
        environment()
        .get_template("review_measures.html.j2")
        .render(
            title=f"Deployment review: {multi.champion} vs "
            f"{', '.join(r['challenger'] for r in combined)}",
            measures=multi.measures,
            overall=multi.overall,
            headline=multi.headline(),
            rule=RULE,
            unreliable=multi.unreliable_measures,
            summary_rows=rows,
            combined=combined,
            sections=sections,
            provenance=multi.provenance,
        )
    )


def html_output(html: str, path: str | Path | None) -> str | Path:
    """Write ``html`` to ``path`` atomically and return the path; ``None``: return the text."""
    if path is None:
        return html
    from bayes_ir.files import write_text

    return write_text(Path(path), html)
