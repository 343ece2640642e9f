r"""The review across collections or segments: decision, forest plot, meta-analysis cross-check.

:func:`review_across` fits the model across groups (:func:`bayes_ir.fit_across`),
decides on both quantities (the average contrast and a new group's,
:func:`bayes_ir.decide` with ``over=``), marks the systems its model check flags, adds
across segments the risk per segment (:func:`bayes_ir.risk.segment_risk`), and sets
beside the per-group forest plot the
frequentist meta-analysis of the per-group effects (:func:`bayes_ir.effect_size` and
:func:`bayes_ir.meta_analysis`, DerSimonian-Laird and REML) as the cross-check: the
overall contrast against the pooled estimate, the between-group SD against
:math:`\hat\tau`, the contrast on a new group against the prediction interval.
:meth:`AcrossReview.to_html` renders one self-contained HTML file (figures inline as
SVG, no script, no network request).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults
from bayes_ir.provenance import package_versions, sha256_file
from bayes_ir.report.numbers import format_probability
from bayes_ir.table import ScoreTable

__all__ = ["AcrossReview", "meta_effects", "review_across"]

_PACKAGES = ("bayes_ir", "numpy", "scipy", "pandas", "xarray", "matplotlib", "numba", "jinja2")
#: The tau^2 estimators of the cross-check.
META_METHODS: tuple[str, ...] = ("DL", "REML")


def meta_effects(contrasts: Any, table: ScoreTable, challenger: str, segments: Mapping | None):
    r"""Per-group effect sizes of ``challenger`` on the contrasts' scale, for the meta-analysis.

    The mean paired difference (``MD``) of every group; on the residual-SD scale each
    is divided by that group's residual SD estimated from the pair, :math:`s_d/\sqrt2`
    (the residual SD of the two-way model of two systems), and its variance by the
    square of it: a frequentist plug-in of the Bayesian model's unit.
    """
    from bayes_ir.frequentist.meta_analysis import EffectSizes, effect_size

    data = table.data
    if segments is not None:
        data = data.assign(collection=data["topic"].map(dict(segments)))
    frame = data[data["system"].isin([contrasts.champion, challenger])]
    pair = ScoreTable.from_frame(frame, missing="intersect", check_range=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unpaired topics: the Bayesian model keeps them
        md = effect_size(pair, measure="MD", control=contrasts.champion, treatment=challenger,
                         collections=list(contrasts.groups))  # fmt: skip
    if contrasts.scale != "sd":
        return md
    f = md.frame.copy()
    unit = np.sqrt(f["vi"] * f["n"] / 2.0)  # vi = s_d^2 / n
    f["yi"] = f["yi"] / unit
    f["vi"] = f["vi"] / unit**2
    return EffectSizes.from_frame(f[["label", "collection", "yi", "vi", "n"]], measure="MD")


@dataclass(frozen=True)
class AcrossReview:
    """A review across collections (or segments).

    Attributes
    ----------
    table
        The scores with roles.
    fit
        The :class:`~bayes_ir.hierarchical.AcrossFit`.
    contrasts
        Its :class:`~bayes_ir.hierarchical.AcrossContrasts`.
    decisions
        ``{"average": Decision, "new": Decision}`` (:func:`bayes_ir.decide`).
    meta
        ``{challenger: {"DL": MetaAnalysisResult, "REML": MetaAnalysisResult}}``.
    provenance
        Inputs and their SHA-256, roles, options, versions, seed, command, date.
    risk
        Across segments, the :class:`~bayes_ir.risk.SegmentRisk` (URisk- and BRisk- per
        segment, the harmed segments); ``None`` across collections.
    """

    table: ScoreTable
    fit: Any
    contrasts: Any
    decisions: dict[str, Any]
    meta: dict[str, dict[str, Any]]
    provenance: dict[str, Any] = field(default_factory=dict)
    risk: Any = None

    def headline(self) -> str:
        """One sentence per rule: the action for each challenger."""
        parts = []
        for over, d in self.decisions.items():
            what = "the average contrast" if over == "average" else f"a new {self.contrasts.by}"
            acts = "; ".join(f"{c}: {a}" for c, a in d.actions.items())
            parts.append(f"On {what}: {acts}.")
        gate = "" if self.fit.diagnostics.passed else "UNRELIABLE (diagnostics failed). "
        return gate + " ".join(parts)

    def cross_check(self) -> pd.DataFrame:
        r"""Return the Bayesian model beside DL and REML, per challenger.

        Columns ``challenger, method, estimate, ci_lower, ci_upper, between_sd,
        new_lower, new_upper`` (the Bayesian row: posterior mean, equal-tailed interval,
        posterior mean of the between-group SD, as text naming its scale when that is
        not the contrasts' (a logit family's), and the new group's interval; the
        frequentist rows: the pooled estimate, its CI, :math:`\hat\tau` and the
        prediction interval).
        """
        c = self.contrasts
        lo, hi = (1 - c.ci_prob) / 2, (1 + c.ci_prob) / 2
        pred = c.predictive_draws()
        rows = []
        for j, chal in enumerate(c.challengers):
            x = c.overall[:, j]
            ci, new = np.quantile(x, [lo, hi]), np.quantile(pred[:, j], [lo, hi])
            between: float | str = float(c.between_sd.mean())
            if c.between_scale:  # not the meta-analysis' scale: say which it is
                between = f"{between:+.4f} ({c.between_scale})"
            rows.append((chal, "Bayesian", float(x.mean()), *ci, between, *new))
            for method, res in self.meta[chal].items():
                ci = res.conf_int(ci_prob=c.ci_prob)
                pi = res.prediction_interval(ci_prob=c.ci_prob)
                rows.append((chal, method, ci.estimate, ci.ci_lower, ci.ci_upper, res.tau,
                             pi.pi_lower, pi.pi_upper))  # fmt: skip
        columns = ["challenger", "method", "estimate", "ci_lower", "ci_upper", "between_sd",
                   "new_lower", "new_upper"]  # fmt: skip
        return pd.DataFrame(rows, columns=columns)

    def summary(self) -> str:
        """Return the headline, the contrasts, the cross-check and the risk per segment."""
        check = self.cross_check().to_string(index=False, float_format=lambda v: f"{v:.4f}")
        risk = [] if self.risk is None else ["", self.risk.summary()]
        return "\n".join([self.headline(), "", self.contrasts.summary(), "", check, *risk])

    def __str__(self) -> str:
        return self.summary()

    def to_html(self, path: str | Path | None = None) -> str | Path:
        """Render the review as one HTML file (returned as text when ``path`` is None)."""
        from bayes_ir.report.html import html_output

        return html_output(render_across(self), path)


def render_across(review: AcrossReview) -> str:
    """Render an :class:`AcrossReview` with ``templates/review_across.html.j2``."""
    from bayes_ir.report.html import environment, figure_svg
    from bayes_ir.report.marks import marked, misfit_legend

    c = review.contrasts
    pct = f"{100 * c.ci_prob:g}%"
    frame = c.to_frame()
    frame["challenger"] = [marked(x, c.misfit) for x in frame["challenger"]]
    figures = []
    for chal in c.challengers:
        single = review.fit.contrasts(challengers=[chal], ci_prob=c.ci_prob)
        fig = single.plot(meta=review.meta[chal]["REML"])
        caption = (
            f"{chal} minus {c.champion} in each {c.by} ({c.units}): the raw mean difference "
            f"(grey, {pct} normal interval), the model's shrunken contrast (blue, {pct} "
            f"credible interval), the overall contrast (red diamond), a new {c.by}'s contrast "
            "(dashed), and the REML meta-analysis of the raw differences with its prediction "
            "interval (black)."
        )
        figures.append({"svg": figure_svg(fig, label=f"forest {chal}"), "caption": caption})
    decisions = []
    for over, d in review.decisions.items():
        decisions.append({"over": over, "rule": d.rule, "rows": [
            {"challenger": marked(r.challenger, c.misfit), "action": r.action,
             "mean": f"{r.mean:+.4f}",
             "interval": f"[{r.ci_lower:+.4f}, {r.ci_upper:+.4f}]",
             "p_better": format_probability(r.p_better), "reason": r.reason}
            for r in d.table.itertuples(index=False)]})  # fmt: skip
    groups = [
        {"challenger": r.challenger, "level": r.level, "n": int(r.n_topics),
         "raw": f"{r.observed:+.4f} ({r.observed_se:.4f})", "mean": f"{r.mean:+.4f}",
         "interval": f"[{r.ci_lower:+.4f}, {r.ci_upper:+.4f}]",
         "p": format_probability(r.p_better)}
        for r in frame[frame["kind"] == c.by].itertuples(index=False)
    ]  # fmt: skip
    summary = [
        {"challenger": r.challenger, "kind": r.level, "mean": f"{r.mean:+.4f}",
         "interval": f"[{r.ci_lower:+.4f}, {r.ci_upper:+.4f}]",
         "p": "" if not np.isfinite(r.p_better) else format_probability(r.p_better)}
        for r in frame[frame["kind"] != c.by].itertuples(index=False)
    ]  # fmt: skip
    wins = c.wins()
    wins_rows = [
        {"challenger": chal, "k": [int(k) for k in part["k"]],
         "p": [format_probability(p) for p in part["probability"]]}
        for chal, part in wins.groupby("challenger", sort=False)
    ]  # fmt: skip
    check = [
        {k: (f"{v:+.4f}" if isinstance(v, float) else v) for k, v in row.items()}
        for row in review.cross_check().to_dict("records")
    ]
    risk = None
    if review.risk is not None:
        rf = review.risk.to_frame()
        risk = {
            "r": f"{review.risk.r:g}",
            "p_harm": f"{review.risk.p_harm_min:g}",
            "harmed": [{"challenger": marked(ch, c.misfit), "segments": ", ".join(g) or "none"}
                       for ch, g in review.risk.harmed.items()],
            "rows": [{"challenger": marked(x.challenger, c.misfit), "segment": x.segment,
                      "n": int(x.n_topics), "urisk": f"{x.urisk_minus:+.4f}",
                      "brisk": f"{x.brisk_minus:+.4f}",
                      "interval": f"[{x.brisk_lower:+.4f}, {x.brisk_upper:+.4f}]",
                      "p": format_probability(x.p_harm), "harmed": "HARMED" if x.harmed else ""}
                     for x in rf.itertuples(index=False)],
            "figure": {"svg": figure_svg(review.risk.plot(), label="risk per segment"),
                       "caption": f"URisk- of each segment's topics alone (open) and BRisk- "
                       f"of the model across segments of the risk-adjusted scores (r = "
                       f"{review.risk.r:g}; {pct} interval; red: harmed)."},
        }  # fmt: skip
    model_check = None if review.fit.model_check is None else review.fit.model_check.summary()
    return (
        environment()
        .get_template("review_across.html.j2")
        .render(
            title=f"Review across {len(c.groups)} {c.by}s: {c.champion} vs "
            f"{', '.join(c.challengers)}",
            c=c,
            pct=pct,
            headline=review.headline(),
            reliable=review.fit.diagnostics.passed,
            banner=c.gate.banner(),
            decisions=decisions,
            figures=figures,
            groups=groups,
            summary=summary,
            wins=wins_rows,
            check=check,
            risk=risk,
            model_check=model_check,
            misfit_legend=misfit_legend(c, c.misfit, champion=c.champion),
            diagnostics=review.fit.diagnostics.checks().to_dict("records"),
            provenance=review.provenance,
        )
    )


def review_across(
    table: ScoreTable,
    *,
    segments: Mapping[str, str] | None = None,
    scale: str = "auto",
    margin: float | None = None,
    ci_prob: float | None = None,
    seed: int | None = None,
    fit: Any = None,
    inputs: Sequence[str | Path] = (),
    command: str = "",
    **fit_options: Any,
) -> AcrossReview:
    """Fit across collections (or segments), decide both ways and cross-check with DL/REML.

    Parameters
    ----------
    table
        Scores with roles and a ``collection`` column (or one collection with
        ``segments``).
    segments
        ``{topic: segment}``: compare the systems across the segments of one collection.
    scale
        The common scale (see :func:`bayes_ir.fit_across`).
    margin
        The decision's margin (in the contrasts' units).
    ci_prob, seed
        Interval probability; seed of the sampler.
    fit
        An :class:`~bayes_ir.hierarchical.AcrossFit` of ``table`` to use instead of fitting.
    inputs, command
        The input files (hashed into the provenance) and the command line.
    **fit_options
        Passed on to :func:`bayes_ir.fit_across` (``draws``, ``chains``...).

    Returns
    -------
    AcrossReview
    """
    from bayes_ir.decision import decide
    from bayes_ir.frequentist.meta_analysis import meta_analysis
    from bayes_ir.hierarchical import fit_across

    p = defaults.ci_prob(ci_prob)
    if fit is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Warning)  # the review says it loudly
            fit = fit_across(table, segments=segments, scale=scale, seed=seed, **fit_options)
    contrasts = fit.contrasts(ci_prob=p)
    # the new group's draws with the default seed, as the contrasts' summary has them
    decisions = {
        over: decide(fit, over=over, margin=margin, ci_prob=p) for over in ("average", "new")
    }
    risk = None
    if segments is not None:
        from bayes_ir.risk import segment_risk

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Warning)  # the review says it loudly
            risk = segment_risk(table, segments, ci_prob=p, seed=seed, **fit_options)
    meta = {
        chal: {
            m: meta_analysis(meta_effects(contrasts, table, chal, segments), method=m, ci_prob=p)
            for m in META_METHODS
        }  # fmt: skip
        for chal in contrasts.challengers
    }
    provenance = {
        "inputs": [{"name": Path(f).name, "sha256": sha256_file(Path(f))} for f in inputs],
        "by": contrasts.by,
        "groups": list(contrasts.groups),
        "scale": contrasts.scale,
        "units": contrasts.units,
        "champion": contrasts.champion,
        "challengers": list(contrasts.challengers),
        "method": fit.method,
        "draws": fit.n_draws,
        "seed": fit.provenance.get("seed"),
        "margin": decisions["average"].margin,
        "ci_prob": p,
        "command": command,
        "versions": package_versions(_PACKAGES),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    return AcrossReview(table=table, fit=fit, contrasts=contrasts, decisions=decisions,
                        meta=meta, provenance=provenance, risk=risk)  # fmt: skip
