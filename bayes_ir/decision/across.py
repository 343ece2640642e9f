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

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.decision.decide import DECISION_COLUMNS, Decision, _reason, check_options
from bayes_ir.decision.rules import (
    choose,
    expected_losses,
    reliable_action,
    shift_of,
    three_way,
)

__all__ = ["OVER", "decide_across"]

#: What a decision across groups is taken on: the average contrast or a new group's.
OVER: tuple[str, ...] = ("average", "new")


def _fit_status(check: Any, name: str, champion: str) -> str:
    """Return the ``fit`` column: ``ok``, the failed checks (with their groups), or ``n/a``."""
    if check is None:
        return "n/a"
    parts = [", ".join(check.failed(name))] if check.failed(name) else []
    if check.failed(champion):
        parts.append(f"champion {champion}: {', '.join(check.failed(champion))}")
    return "; ".join(parts) or "ok"


def _tables(
    d: np.ndarray,
    theta: np.ndarray,
    *,
    champion: str,
    challengers: Sequence[str],
    observed: np.ndarray,
    check: Any,
    misfit: Sequence[str],
    passed: bool,
    margin: float,
    mode: str,
    threshold: float,
    p_min: float,
    ci_prob: float,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the decision table and the P(best) table from draws (N, J) of one contrast each.

    ``d`` is decided on; ``theta`` (N, J), each challenger minus the champion, gives
    P(best) and the expected loss of picking each system (the champion's is 0 in every
    draw). Shared by the decisions across groups and of runs.
    """
    shift = shift_of(margin, mode)
    p_better, p_equiv, p_worse = three_way(d, margin)
    loss_deploy, loss_keep = expected_losses(d, shift)
    raw = choose((d > shift).mean(axis=0), loss_deploy, loss_keep, threshold=threshold, p_min=p_min)
    theta = np.column_stack([np.zeros(theta.shape[0]), theta])
    best = np.bincount(theta.argmax(axis=1), minlength=theta.shape[1]) / theta.shape[0]
    regret = (theta.max(axis=1, keepdims=True) - theta).mean(axis=0)
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    rows = []
    for j, name in enumerate(challengers):
        bad = [s for s in (champion, name) if s in misfit]
        action = reliable_action(str(raw[j]), diagnostics_passed=passed, model_fits=not bad)
        mean = float(d[:, j].mean())
        rows.append(
            {
                "challenger": name,
                "champion": champion,
                "mode": mode,
                "margin": margin,
                "r": 1.0,
                "observed": float(observed[j]),
                "mean": mean,
                "pooled_share": 1.0 - mean / float(observed[j]) if observed[j] else np.nan,
                "ci_lower": float(np.quantile(d[:, j], lo)),
                "ci_upper": float(np.quantile(d[:, j], hi)),
                "p_better": float(p_better[j]),
                "p_equivalent": float(p_equiv[j]),
                "p_worse": float(p_worse[j]),
                "p_noninferior": float((d[:, j] > -margin).mean()),
                "p_best": float(best[1 + j]),
                "loss_deploy": float(loss_deploy[j]),
                "loss_keep": float(loss_keep[j]),
                "threshold": threshold,
                "fit": _fit_status(check, name, champion),
                "action": action,
                "reason": _reason(action, str(raw[j]), threshold, p_min, passed, bad),
            }
        )
    systems = [champion, *challengers]
    return (
        pd.DataFrame(rows, columns=list(DECISION_COLUMNS)),
        pd.DataFrame({"system": systems, "p_best": best, "expected_loss": regret}),
    )


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
    # the raw counterpart of the overall contrast: the mean of the groups' raw differences
    with np.errstate(invalid="ignore"):
        observed = np.nanmean(np.where(res.n_topics > 0, res.observed, np.nan), axis=1)
    # P(best) on the overall contrasts
    table, best = _tables(
        d, res.overall, champion=res.champion, challengers=res.challengers, observed=observed,
        check=res.model_check, misfit=res.misfit, passed=res.gate.passed, margin=margin,
        mode=mode, threshold=threshold, p_min=p_min, ci_prob=res.ci_prob,
    )  # fmt: skip
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
        table=table,
        best=best,
        more_topics=pd.DataFrame(),
        diagnostics_passed=res.gate.passed,
        misfit=res.misfit,
        header=res.header,
        measure=res.units if res.scale == "sd" else ", ".join(measures),
        collection=f"{len(res.groups)} {res.by}s",
        over=over,
        by=res.by,
    )
