r"""Decide between systems with several runs each: in expectation over seeds, or for one run.

The rules of :mod:`bayes_ir.decision.rules` applied to draws of one of two contrasts of a
:class:`~bayes_ir.hierarchical.ReplicateFit` (:func:`~bayes_ir.hierarchical.fit_replicates`),
as the user chooses (``over=``):

* ``"expectation"``: :math:`\delta = \beta_s - \beta_h`, the difference of the systems'
  expected scores over the population of runs (seeds, folds, samples) and topics: deploy
  when the challenger is better *on average over its seeds*;
* ``"single_run"``: :math:`\delta_1 = \delta + \rho_{s,new} - \rho_{h,new}`,
  :math:`\rho_{\cdot,new} \sim N(0, \kappa_\cdot^2)`: one run of each, drawn at random,
  the run-to-run variance included: deploy when the *one run you will ship* is likely to
  beat the champion's (the question when a single training run goes to production).

Deploy when :math:`P(d > s) \ge p_\min` and :math:`E[(s - d)^+] \le \varepsilon`, keep
the champion in the mirror case, otherwise collect more data (more topics or more runs:
:func:`bayes_ir.decision.more_runs.more_runs` says which settles it sooner); a posterior
that failed its diagnostics, or a model check that flags the champion or the challenger,
is *unreliable*. Whichever quantity is decided on, ``Decision.runs`` reports
:math:`P(\delta_1 > 0)`, the probability that a random run of the challenger beats a
random run of the champion.

References
----------
Bouthillier, X., Delaunay, P., Bronzi, M., et al. (2021). Accounting for variance in
machine learning benchmarks. *MLSys 2021*.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from bayes_ir import validate
from bayes_ir.decision.across import _tables
from bayes_ir.decision.decide import RUN_COLUMNS, Decision, check_options
from bayes_ir.hierarchical.replicates import OVER

__all__ = ["OVER", "decide_replicates"]


def decide_replicates(
    fit: Any,
    *,
    over: str = "expectation",
    margin: float | None = None,
    mode: str = "superiority",
    threshold: float | None = None,
    p_min: float | None = None,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    ci_prob: float | None = None,
) -> Decision:
    r"""Deploy, keep the champion or collect more data, from a fit of several runs per system.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.ReplicateFit`.
    over
        ``"expectation"`` (default): decide on the contrast in expectation over seeds;
        ``"single_run"``: on the contrast of one run of each, drawn at random (the
        run-to-run variance included). Printed with the rule.
    margin, mode, threshold, p_min
        As in :func:`bayes_ir.decision.decide`, in the measure's units.
    champion, challengers, ci_prob
        Override the roles; interval probability.

    Returns
    -------
    Decision
        With ``over`` set (its ``rule`` states the quantity decided on) and ``runs``:
        every challenger's runs, run-to-run SDs and :math:`P(\delta_1 > 0)`.

    Notes
    -----
    The draws are those of :meth:`ReplicateFit.contrast_draws
    <bayes_ir.hierarchical.ReplicateFit.contrast_draws>` (the single-run draws are
    seeded by the fit's seed, so a decision is reproducible from the fit alone).
    :math:`P(\text{best})` and the expected loss of picking a system are read from the
    same quantity: with ``over="single_run"``, the best of one run of each system.
    """
    validate.choice("over", over, OVER)
    measures = sorted(set(fit.design.measures.values()))
    margin, threshold, p_min = check_options(
        margin=margin, mode=mode, r=1.0, threshold=threshold, p_min=p_min,
        measure=measures[0] if len(measures) == 1 else None,
    )  # fmt: skip
    res = fit.contrasts(champion=champion, challengers=challengers, ci_prob=ci_prob)
    d = res.draws(over)
    table, best = _tables(
        d, d, champion=res.champion, challengers=res.challengers, observed=res.observed,
        check=res.model_check, misfit=res.misfit, passed=res.gate.passed, margin=margin,
        mode=mode, threshold=threshold, p_min=p_min, ci_prob=res.ci_prob,
    )  # fmt: skip
    systems = list(res.systems)
    kappa = fit.replicate_sd_draws().mean(axis=0)
    runs = [
        {
            "challenger": name,
            "runs_challenger": res.n_runs(name),
            "runs_champion": res.n_runs(res.champion),
            "run_sd_challenger": float(kappa[systems.index(name)]),
            "run_sd_champion": float(kappa[systems.index(res.champion)]),
            "p_better_expectation": float((res.expectation[:, j] > 0).mean()),
            "p_run_beats": float((res.single_run[:, j] > 0).mean()),
        }
        for j, name in enumerate(res.challengers)
    ]
    collections = fit.design.cells["collection"].unique()
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
        measure=res.measure,
        collection=", ".join(map(str, collections)) or None,
        over=over,
        by="run",
        notes=tuple(getattr(fit.table, "notes", ())),
        runs=pd.DataFrame(runs, columns=list(RUN_COLUMNS)),
    )
