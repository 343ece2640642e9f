"""Known truth for decisions over runs: systems equal in expectation, seeds that differ.

One trial: 50 topics x 5 systems x 5 seeds simulated from the model of runs
(:mod:`replicate_tables`: topic SD 0.15, topic x system SD 0.04, residual SD 0.05) with
every system's true effect 0 and a run-to-run (seed) SD ``run_sd`` (0.02 to 0.05); the
champion is sys0, the 4 others are challengers. It records, per challenger, whether
``decide`` says deploy

* on the model of runs (:func:`bayes_ir.hierarchical.fit_replicates`, decided in
  expectation over seeds),
* on the mean of each system's 5 seeds per topic (the usual practice, one score per
  cell, :func:`bayes_ir.hierarchical.fit`),
* on one seed per system (the first: a "lucky seed" report),

and whether the 90% interval of the model's run-to-run SD covers ``run_sd``. Any deploy
is a false deploy (the truth is no difference). ``benchmarks/study_replicates.py`` runs
1,000 trials; the slow test checks 120 on the model of runs.
"""

from __future__ import annotations

import warnings

import numpy as np
from replicate_tables import simulate_runs

#: The seed SDs of the study, cycled over the trials.
RUN_SDS: tuple[float, ...] = (0.02, 0.03, 0.04, 0.05)
#: Draws per chain of each fit (4 chains): bulk ESS of a contrast about 5,000.
DRAWS = 1500


def trial(seed: int, *, comparators: bool = True) -> dict[str, object]:
    """One simulated table; see the module docstring. ``comparators=False``: the model only."""
    import bayes_ir
    from bayes_ir.hierarchical import fit_replicates

    run_sd = RUN_SDS[seed % len(RUN_SDS)]
    table = simulate_runs(50, [0.0] * 5, 5, seed=seed, run_sd=run_sd, interaction_sd=0.04,
                          residual_sd=0.05)  # fmt: skip
    out: dict[str, object] = {"seed": seed, "run_sd": run_sd}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_replicates(table, seed=seed, draws=DRAWS)
        decision = bayes_ir.decide(fit)
        out["model"] = _deploys(decision)
        out["model_single_run"] = _deploys(bayes_ir.decide(fit, over="single_run"))
        k = fit.term_draws("sigma_replicate")[:, 0]
        lo, hi = np.quantile(k, [0.05, 0.95])
        out["kappa_covered"] = bool(lo <= run_sd <= hi)
        out["passed"] = bool(fit.diagnostics.passed)
        if comparators:
            for name, flat in (("mean_of_seeds", table.mean_over_replicates()),
                               ("one_seed", table.one_replicate(0))):  # fmt: skip
                f = bayes_ir.fit(flat, seed=seed, pooling="all")
                out[name] = _deploys(bayes_ir.decide(f, topics=()))
    return out


def _deploys(decision) -> list[bool]:
    """Whether each challenger's decision is deploy."""
    frame = decision.to_frame()
    return [str(a) == "deploy" for a in frame["action"]]
