"""Plain-language conclusion of a :class:`~bayes_ir.frequentist.meta_analysis.MetaAnalysisResult`.

What the pooled effect says about the treatment against the control, how sure that is,
and whether the collections agree (I² read with the bands of Higgins et al. 2003) and
what a new collection may show (the prediction interval).

References
----------
Higgins, J. P. T., Thompson, S. G., Deeks, J. J., and Altman, D. G. (2003). Measuring
inconsistency in meta-analyses. *BMJ* 327(7414), 557-560.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayes_ir.report.numbers import format_probability

__all__ = ["I2_BANDS", "meta_conclusion"]

#: I² (%) from which the collections are said to disagree moderately and strongly
#: (Higgins et al. 2003: 25, 50 and 75 are low, moderate and high).
I2_BANDS = (50.0, 75.0)

#: How each effect size is named in the conclusion.
_EFFECT_NAMES = {"MD": "mean difference", "SMD": "standardised mean difference (Hedges' g)",
                 "CORR": "correlation"}  # fmt: skip


def meta_conclusion(result: Any) -> str:
    """Return two or three sentences: the pooled effect, its certainty, the agreement.

    ``"Conclusion: dense is not shown to differ from bm25 on nDCG@10 over 6
    collections: pooled mean difference +0.0363 (95% CI [-0.0226, +0.0953], p =
    0.227). The collections disagree strongly (I^2 = 97%): in a new collection the
    true difference is expected within [-0.1157, +0.1883] (95% prediction
    interval)."``
    """
    eff = result.effects
    treatment, control = eff.treatment or "the treatment", eff.control or "the control"
    on = f" on {eff.score_measure}" if eff.score_measure else ""
    ci = result.conf_int()
    lo, hi, est = float(ci.ci_lower), float(ci.ci_upper), float(result.estimate)
    pct = f"{100 * result.ci_prob:g}%"
    name = _EFFECT_NAMES.get(result.measure, result.measure)
    if result.measure == "CORR":  # pooled as Fisher z: said as r
        est, lo, hi = (float(np.tanh(x)) for x in (est, lo, hi))
        verdict = (
            f"{treatment} and {control} are correlated{on}"
            if lo > 0 or hi < 0
            else f"{treatment} and {control} are not shown to be correlated{on}"
        )
    elif lo > 0:
        verdict = f"{treatment} beats {control}{on}"
    elif hi < 0:
        verdict = f"{treatment} does worse than {control}{on}"
    else:
        verdict = f"{treatment} is not shown to differ from {control}{on}"
    p = format_probability(result.p_value)
    p = f"p {p[0]} {p[1:]}" if p[0] in "<>" else f"p = {p}"
    sentences = [
        f"Conclusion: {verdict} over {result.k} collections: pooled {name} {est:+.4f} "
        f"({pct} CI [{lo:+.4f}, {hi:+.4f}], {p})."
    ]
    if result.method == "FE":
        sentences.append("A fixed-effect model assumes one true effect in every collection.")
        return " ".join(sentences)
    i2 = float(result.i2)
    if i2 >= I2_BANDS[1]:
        agree = "disagree strongly"
    elif i2 >= I2_BANDS[0]:
        agree = "disagree moderately"
    else:
        agree = "mostly agree"
    pi = result.prediction_interval()
    p_lo, p_hi = float(pi.pi_lower), float(pi.pi_upper)
    if result.measure == "CORR":
        p_lo, p_hi = float(np.tanh(p_lo)), float(np.tanh(p_hi))
    either = ", so it may go either way" if p_lo < 0 < p_hi and (lo > 0 or hi < 0) else ""
    sentences.append(
        f"The collections {agree} (I^2 = {i2:.0f}%): in a new collection the true "
        f"{'correlation' if result.measure == 'CORR' else 'difference'} is expected within "
        f"[{p_lo:+.4f}, {p_hi:+.4f}] ({pct} prediction interval){either}."
    )
    return " ".join(sentences)
