r"""Risk per query segment: URisk of each segment and a pooled BRisk, with the harmed segments.

For each segment :math:`g` of the topics (navigational or informational, short or
long, a conversation):

* **URisk** (Wang et al. 2012) of the segment's topics alone,
  :math:`\frac1{n_g}\sum_{t \in g} \delta^{(r)}_t`, reported as URisk-;
* **BRisk per segment** (Benham et al. 2020, pooled): the model across segments
  (:func:`~bayes_ir.hierarchical.fit_across`) fitted to the risk-adjusted scores
  :math:`b_t + \delta^{(r)}_t` (:func:`~bayes_ir.risk.risk_adjusted_scores`); the
  segment's contrast with the champion :math:`\delta^{(r)}_g` is shrunken towards the
  overall one as much as the segments agree, so a segment of 14 topics is not judged
  on its 14 topics alone. BRisk-:math:`_g = -\delta^{(r)}_g` (higher = riskier);
* a segment is **harmed** when :math:`P(\delta^{(r)}_g < 0) \ge p_\text{harm}`: the
  challenger loses there after counting each unit lost :math:`r` times.

References
----------
Wang, L., Bennett, P. N., Collins-Thompson, K. (2012). Robust ranking models via
risk-sensitive optimization. *SIGIR 2012*, 761-770.

Benham, R., Carterette, B., Culpepper, J. S., Moffat, A. (2020). Bayesian inferential
risk evaluation on multiple IR systems. *SIGIR 2020*, 339-348.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.risk.adjusted import check_r, risk_adjusted_scores
from bayes_ir.risk.urisk import SIGN_NOTE, urisk
from bayes_ir.table import ScoreTable

__all__ = ["SEGMENT_RISK_COLUMNS", "SegmentRisk", "segment_risk"]

#: Columns of :meth:`SegmentRisk.to_frame`.
SEGMENT_RISK_COLUMNS: tuple[str, ...] = (
    "challenger",
    "segment",
    "n_topics",
    "urisk_minus",
    "brisk_minus",
    "brisk_lower",
    "brisk_upper",
    "p_harm",
    "harmed",
)


@dataclass(frozen=True, eq=False)
class SegmentRisk:
    r"""URisk and pooled BRisk of each challenger in each segment.

    Attributes
    ----------
    champion, challengers
        The systems compared.
    r
        Loss weight :math:`r = 1 + \alpha`.
    segments
        The segments, in order; ``n_topics`` their sizes.
    urisk_minus
        URisk- of each challenger (rows) in each segment (columns).
    brisk
        Draws (N, J, G) of the pooled risk-adjusted contrast :math:`\delta^{(r)}_g`.
    p_harm_min, ci_prob
        Probability that names a segment harmed; interval probability.
    fit
        The :class:`~bayes_ir.hierarchical.AcrossFit` of the risk-adjusted scores.
    misfit
        The champion and challengers its model check flags (marked in the summary).
    """

    champion: str
    challengers: tuple[str, ...]
    r: float
    segments: tuple[str, ...]
    n_topics: np.ndarray
    urisk_minus: np.ndarray
    brisk: np.ndarray
    p_harm_min: float
    ci_prob: float
    fit: Any
    misfit: tuple[str, ...] = ()

    @property
    def p_harm(self) -> np.ndarray:
        r""":math:`P(\delta^{(r)}_g < 0)` per challenger and segment."""
        return (self.brisk < 0).mean(axis=0)

    @property
    def harmed(self) -> dict[str, tuple[str, ...]]:
        """The harmed segments of each challenger."""
        p = self.p_harm
        return {
            c: tuple(g for k, g in enumerate(self.segments) if p[j, k] >= self.p_harm_min)
            for j, c in enumerate(self.challengers)
        }

    def to_frame(self) -> pd.DataFrame:
        r"""One row per challenger and segment, columns :data:`SEGMENT_RISK_COLUMNS`.

        ``brisk_minus`` is the posterior mean of :math:`-\delta^{(r)}_g` with its
        equal-tailed interval (``brisk_lower``, ``brisk_upper``); ``p_harm`` is
        :math:`P(\delta^{(r)}_g < 0)`.
        """
        lo, hi = (1 - self.ci_prob) / 2, (1 + self.ci_prob) / 2
        minus = -self.brisk
        q_lo, q_hi = np.quantile(minus, [lo, hi], axis=0)
        p = self.p_harm
        rows = [
            (
                c,
                g,
                int(self.n_topics[k]),
                float(self.urisk_minus[j, k]),
                float(minus[:, j, k].mean()),
                float(q_lo[j, k]),
                float(q_hi[j, k]),
                float(p[j, k]),
                bool(p[j, k] >= self.p_harm_min),
            )  # fmt: skip
            for j, c in enumerate(self.challengers)
            for k, g in enumerate(self.segments)
        ]
        return pd.DataFrame(rows, columns=list(SEGMENT_RISK_COLUMNS))

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Per challenger: URisk- and BRisk- of every segment, and the harmed segments."""
        from bayes_ir.report.across import table_lines
        from bayes_ir.report.marks import marked, misfit_legend
        from bayes_ir.report.numbers import format_probability

        pct = f"{100 * self.ci_prob:g}%"
        lines = [
            f"Risk per segment (r = {self.r:g}) against champion {self.champion!r}: "
            f"{len(self.segments)} segments, {int(self.n_topics.sum())} topics",
            SIGN_NOTE,
            "BRisk- per segment: the model across segments fitted to the risk-adjusted "
            "scores (pooled); a segment is harmed when P(risk-adjusted contrast < 0) >= "
            f"{self.p_harm_min:g}.",
        ]
        if not self.fit.diagnostics.passed:
            lines.insert(0, "DIAGNOSTICS FAILED: the BRisk posterior is not reliable")
        misfit = self.misfit
        frame = self.to_frame()
        for c in self.challengers:
            part = frame[frame["challenger"] == c]
            rows = [
                [
                    str(x.segment),
                    str(x.n_topics),
                    f"{x.urisk_minus:+.4f}",
                    f"{x.brisk_minus:+.4f} [{x.brisk_lower:+.4f}, {x.brisk_upper:+.4f}]",
                    format_probability(x.p_harm),
                    "HARMED" if x.harmed else "",
                ]  # fmt: skip
                for x in part.itertuples(index=False)
            ]
            header = ["segment", "topics", "URisk-", f"BRisk- [{pct}]", "P(harm)", ""]
            harmed = self.harmed[c]
            shown = ", ".join(harmed) if harmed else "none"
            lines += ["", f"{marked(c, misfit)}: harmed segments: {shown}"]
            lines += table_lines(header, rows)
        legend = misfit_legend(self.fit, misfit, champion=self.champion,
                               scores=" of the risk-adjusted scores")  # fmt: skip
        return "\n".join([*lines, *(["", legend] if legend else [])])

    def __str__(self) -> str:
        return self.summary()

    def plot(self, **kwargs: Any) -> Any:
        """URisk- and BRisk- per segment (see :func:`bayes_ir.plots.across.plot_segment_risk`)."""
        from bayes_ir.plots.across import plot_segment_risk

        return plot_segment_risk(self, **kwargs)


def segment_risk(
    table: ScoreTable,
    segments: Mapping[str, str],
    *,
    r: float = defaults.RISK_R,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    p_harm: float = defaults.SEGMENT_HARM_PROBABILITY,
    ci_prob: float | None = None,
    seed: int | None = None,
    **fit_options: Any,
) -> SegmentRisk:
    r"""URisk and pooled BRisk of each challenger in each segment of the topics.

    Parameters
    ----------
    table
        Complete scores of one collection and measure, with roles.
    segments
        ``{topic: segment}`` for every topic.
    r
        Loss weight :math:`r = 1 + \alpha \ge 1`.
    champion, challengers
        Override the table's roles.
    p_harm
        A segment is harmed when P(its risk-adjusted contrast < 0) is at least this.
    ci_prob
        Interval probability.
    seed
        Seed of the sampler.
    **fit_options
        Passed on to :func:`bayes_ir.hierarchical.fit_across` (``draws``, ``chains``...).

    Returns
    -------
    SegmentRisk
    """
    from bayes_ir.hierarchical import fit_across

    r = check_r(r)
    p_harm = validate.probability("p_harm", p_harm)
    p = defaults.ci_prob(ci_prob)
    champ = table.champion if champion is None else champion
    chals = (
        list(table.challengers)
        if challengers is None
        else [challengers] if isinstance(challengers, str) else list(challengers)
    )  # fmt: skip
    subset = table.select(systems=[champ, *chals]).with_roles(champion=champ, challengers=chals)
    adjusted = risk_adjusted_scores(subset, r=r, champion=champ)
    fit = fit_across(adjusted, segments=segments, seed=seed, **fit_options)
    res = fit.contrasts(ci_prob=p)
    labels = res.groups
    seg = {str(k): str(v) for k, v in segments.items()}
    n_topics = np.array([sum(1 for t in subset.topics if seg.get(t) == g) for g in labels])
    urisk_minus = np.empty((len(chals), len(labels)))
    for k, g in enumerate(labels):
        topics = [t for t in subset.topics if seg.get(t) == g]
        u = urisk(subset.select(topics=topics), r=r, champion=champ, challengers=chals)
        urisk_minus[:, k] = u.urisk_minus
    return SegmentRisk(
        champion=champ,
        challengers=tuple(chals),
        r=r,
        segments=labels,
        n_topics=n_topics,
        urisk_minus=urisk_minus,
        brisk=res.group,
        p_harm_min=p_harm,
        ci_prob=p,
        fit=fit,
        misfit=res.misfit,
    )
