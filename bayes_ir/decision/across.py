r"""Decide across collections (or segments): on the average contrast, or on a new collection.

The rules of :mod:`bayes_ir.decision.rules` applied to draws of one of two quantities
of an :class:`~bayes_ir.hierarchical.across.AcrossFit`, as the user chooses
(``over=``):

* ``"average"``: the overall contrast :math:`\delta = \beta_s - \beta_h`, the mean over
  the population of collections (what a random-effects meta-analysis estimates);
* ``"new"``: the contrast on a new collection, :math:`\delta_{new} = \delta +
  \sqrt2\,\omega\,z`, :math:`z \sim N(0, 1)`: deploy when the challenger is likely to
  win on the *next* collection, which also counts how much the contrast varies
  between collections (Corani et al. 2017 decide on this quantity).

Deploy when :math:`P(d > s) \ge p_\min` and :math:`E[(s - d)^+] \le \varepsilon`, keep
the champion in the mirror case, otherwise collect more data (more collections or
topics); a posterior that failed its diagnostics is *unreliable*.

References
----------
Corani, G., Benavoli, A., Demsar, J., Mangili, F., Zaffalon, M. (2017). Statistical
comparison of classifiers through Bayesian hierarchical modelling. *Machine Learning*
106(11), 1817-1837.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.decision.decide import DECISION_COLUMNS, Decision, check_options
from bayes_ir.decision.rules import (
    ACTIONS,
    choose,
    expected_losses,
    reliable_action,
    shift_of,
    three_way,
)

__all__ = ["OVER", "decide_across"]

#: What a decision across groups is taken on: the average contrast or a new group's.
OVER: tuple[str, ...] = ("average", "new")


def decide_across(
    fit: Any,
    *,
    over: str = "average",
    margin: float | None = None,
    mode: str = "superiority",
    threshold: float | None = None,
    p_min: float | None = None,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    ci_prob: float | None = None,
    seed: int | None = None,
) -> Decision:
    r"""Deploy, keep the champion or collect more data, from a fit across groups.

    Parameters
    ----------
    fit
        An :class:`~bayes_ir.hierarchical.across.AcrossFit`.
    over
        ``"average"`` (default): decide on the overall contrast; ``"new"``: on the
        contrast on a new collection (or segment). Printed with the rule.
    margin, mode, threshold, p_min
        As in :func:`bayes_ir.decision.decide`, in the contrasts' units (the measure,
        or residual SDs with ``scale="sd"``; default margin there
        :data:`bayes_ir.defaults.DECISION_MARGIN_SD`).
    champion, challengers, ci_prob
        Override the roles; interval probability.
    seed
        Seed of the normal draws of the new-group contrast.

    Returns
    -------
    Decision
        With ``over`` set; its ``rule`` states the quantity decided on.
    """
    validate.choice("over", over, OVER)
    if margin is None and fit.design.scale == "sd":
        margin = defaults.DECISION_MARGIN_SD
    margin, threshold, p_min = check_options(
        margin=margin, mode=mode, r=1.0, threshold=threshold, p_min=p_min
    )
    res = fit.contrasts(champion=champion, challengers=challengers, ci_prob=ci_prob)
    d = res.overall if over == "average" else res.predictive_draws(seed=seed)
    shift = shift_of(margin, mode)
    p_better, p_equiv, p_worse = three_way(d, margin)
    loss_deploy, loss_keep = expected_losses(d, shift)
    raw = choose((d > shift).mean(axis=0), loss_deploy, loss_keep, threshold=threshold, p_min=p_min)
    passed = res.gate.passed
    # P(best) on the overall contrasts: the champion's is 0 in every draw
    theta = np.column_stack([np.zeros(d.shape[0]), res.overall])
    best = np.bincount(theta.argmax(axis=1), minlength=theta.shape[1]) / theta.shape[0]
    regret = (theta.max(axis=1, keepdims=True) - theta).mean(axis=0)
    lo, hi = (1 - res.ci_prob) / 2, (1 + res.ci_prob) / 2
    rows = []
    for j, name in enumerate(res.challengers):
        action = reliable_action(str(raw[j]), diagnostics_passed=passed, model_fits=True)
        if action != str(raw[j]):
            reason = "the posterior failed its diagnostics: refit with more draws before deciding"
        elif action == ACTIONS[0]:
            reason = f"P(d > s) >= {p_min:g} and L_deploy <= {threshold:g}"
        elif action == ACTIONS[1]:
            reason = f"P(d < s) >= {p_min:g} and L_keep <= {threshold:g}"
        else:
            reason = (
                f"neither P(d > s) nor P(d < s) reaches {p_min:g} with its loss <= {threshold:g}"
            )
        rows.append(
            (
                name,
                res.champion,
                mode,
                margin,
                1.0,
                float(d[:, j].mean()),
                float(np.quantile(d[:, j], lo)),
                float(np.quantile(d[:, j], hi)),
                float(p_better[j]),
                float(p_equiv[j]),
                float(p_worse[j]),
                float((d[:, j] > -margin).mean()),
                float(best[1 + j]),
                float(loss_deploy[j]),
                float(loss_keep[j]),
                threshold,
                action,
                reason,
            )  # fmt: skip
        )
    measures = sorted(set(res.measures.values()))
    return Decision(
        champion=res.champion,
        challengers=res.challengers,
        mode=mode,
        margin=margin,
        r=1.0,
        threshold=threshold,
        p_min=p_min,
        ci_prob=res.ci_prob,
        table=pd.DataFrame(rows, columns=list(DECISION_COLUMNS)),
        best=pd.DataFrame(
            {"system": [res.champion, *res.challengers], "p_best": best, "expected_loss": regret}
        ),
        more_topics=pd.DataFrame(),
        diagnostics_passed=passed,
        misfit=(),
        header=res.header,
        measure=res.units if res.scale == "sd" else ", ".join(measures),
        collection=f"{len(res.groups)} {res.by}s",
        over=over,
        by=res.by,
    )
