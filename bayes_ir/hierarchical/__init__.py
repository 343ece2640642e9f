"""Bayesian hierarchical comparison of a champion, challengers and artifact runs.

The crossed topic x system model of Benham et al. (SIGIR 2020), built in PyMC:
``score[t, s] = b0 + topic_effect[t] + system_effect[s] + e`` with zero-sum topic and
system effects, Gaussian or skew-normal errors, autoscaled weakly informative priors,
an exact collapsed sampler for complete Gaussian designs, a blocked Gibbs sampler for
Gaussian designs with missing cells and NUTS (nutpie) otherwise,
and a diagnostics gate.

>>> fit = bayes_ir.hierarchical.fit(table)  # doctest: +SKIP
>>> print(fit.summary())  # doctest: +SKIP

Posterior variable names: ``b0``, ``sigma``, ``sigma_topic``, ``sigma_system``,
``alpha`` (skew-normal), ``topic_effect`` (dim ``topic``) and ``system_effect`` (dim
``system``; the roles are the ``role`` coordinate of ``observed_data``, and
``fit.draws`` puts it on ``system``). A PyMC or xarray variable cannot share the name of
its dimension, hence the ``_effect`` suffix. ``fit.system_effect_draws()``,
``fit.system_mean_draws()`` and ``fit.contrast_draws()`` return labelled draws.
``fit.model_check`` holds the posterior predictive checks of every system
(:func:`check_model`); a system the model does not describe is flagged there, in
``compare()``'s ``fit`` column and verdict, and by a ``ModelCheckWarning``.
With ``fit(..., sigma="system")`` the residual SD ``sigma`` has a ``system`` dim
(read it with ``residual_sd_draws``); ``fit(..., likelihood="auto")`` and
``compare_likelihoods`` choose the likelihood by PSIS-LOO (``loo``), and
``mean_difference_check`` tests the contrasts against the observed mean differences.
``fit.to_arviz()`` adds the log-likelihood and posterior predictive groups ArviZ's
``loo``, ``compare`` and ``plot_ppc_dist`` read. ``fit.save(path)`` writes a compressed
netCDF; ``load_fit(path, table)`` reuses it after checking that it is that table's fit.
"""

from bayes_ir.hierarchical.across import AcrossFit, fit_across
from bayes_ir.hierarchical.across_check import AcrossModelCheck, check_across
from bayes_ir.hierarchical.adequacy import ModelCheck, check_model
from bayes_ir.hierarchical.artifact_sweep import ArtifactSweep, artifact_sweep
from bayes_ir.hierarchical.calibration import CalibrationResult, simulation_based_calibration
from bayes_ir.hierarchical.contrasts import (
    Comparison,
    ManyVsOne,
    PairwiseProbabilities,
    Pooling,
    RankProbabilities,
    compare,
    difference_variance_draws,
    interval_stats,
    many_vs_one,
    pairwise_probabilities,
    pooling_of,
    rank_probabilities,
    residual_sd_draws,
    shrinkage_lines,
    system_mean_draws,
    topic_draws,
)
from bayes_ir.hierarchical.diagnostics import (
    Diagnostics,
    GateStatus,
    Thresholds,
    contrast_draws,
    diagnose,
    draw_diagnostics,
)
from bayes_ir.hierarchical.fit import HierarchicalFit, fit
from bayes_ir.hierarchical.group_effects import AcrossContrasts, contrasts_across
from bayes_ir.hierarchical.io import check_fit, load_fit, save_fit
from bayes_ir.hierarchical.leaderboard import Leaderboard, leaderboard
from bayes_ir.hierarchical.likelihoods import (
    LikelihoodComparison,
    MeanDifferenceCheck,
    compare_likelihoods,
    loo,
    mean_difference_check,
)
from bayes_ir.hierarchical.model import build_model
from bayes_ir.hierarchical.predictive import PredictiveIntervals, posterior_predictive
from bayes_ir.hierarchical.priors import Priors, prior_predictive
from bayes_ir.hierarchical.replicate_check import ReplicateModelCheck, check_replicates
from bayes_ir.hierarchical.replicate_effects import ReplicateContrasts, contrasts_replicates
from bayes_ir.hierarchical.replicates import ReplicateFit, fit_replicates
from bayes_ir.hierarchical.skewnormal import skewnormal_location_scale, skewnormal_moments

__all__ = [
    # systems across collections or segments
    "AcrossContrasts",
    "AcrossFit",
    "AcrossModelCheck",
    "check_across",
    "contrasts_across",
    "fit_across",
    # systems with several runs (seeds, folds, samples)
    "ReplicateContrasts",
    "ReplicateFit",
    "ReplicateModelCheck",
    "check_replicates",
    "contrasts_replicates",
    "fit_replicates",
    "Diagnostics",
    "GateStatus",
    "HierarchicalFit",
    "Priors",
    "Thresholds",
    "build_model",
    "contrast_draws",
    "difference_variance_draws",
    "interval_stats",
    "system_mean_draws",
    "topic_draws",
    "residual_sd_draws",
    "diagnose",
    "draw_diagnostics",
    "fit",
    "check_fit",
    "load_fit",
    "save_fit",
    "prior_predictive",
    "skewnormal_location_scale",
    "skewnormal_moments",
    "CalibrationResult",
    "ModelCheck",
    "check_model",
    "simulation_based_calibration",
    # model choice (PSIS-LOO) and the check of the contrasts
    "LikelihoodComparison",
    "MeanDifferenceCheck",
    "compare_likelihoods",
    "loo",
    "mean_difference_check",
    # decision outputs
    "ArtifactSweep",
    "Comparison",
    "ManyVsOne",
    "PairwiseProbabilities",
    "Leaderboard",
    "Pooling",
    "PredictiveIntervals",
    "RankProbabilities",
    "artifact_sweep",
    "compare",
    "leaderboard",
    "many_vs_one",
    "pairwise_probabilities",
    "pooling_of",
    "posterior_predictive",
    "rank_probabilities",
    "shrinkage_lines",
]
