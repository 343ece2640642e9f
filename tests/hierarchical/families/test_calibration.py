"""Simulation-based calibration of the kernel families, for every parameter (Talts et al. 2018).

Datasets of 15 topics x 5 systems are drawn from each family's priors
(:meth:`~bayes_ir.hierarchical.families.logit.LogitFamily.draw_prior`) and fitted with the
same priors by NUTS on the family's kernel. The rank of each true parameter (``b0``, the
two SDs, the family's own ``phi``, ``zoi``, ``coi``, every topic and system effect and every
system's score-scale mean) among 99 posterior draws must be uniform (chi-square on 10 bins,
Bonferroni at family-wise 1%), and the central 90% intervals must cover 87-93% of the truths.
"""

from __future__ import annotations

import numpy as np
import pytest
from results.families import SBC_COVERAGE, SBC_N_DATASETS, SBC_PRIORS

from bayes_ir.hierarchical.calibration import (
    calibration_trial,
    parameter_names,
    simulation_based_calibration,
)

FAMILIES = ["bernoulli", "binomial(trials=10)", "zoib"]


@pytest.mark.parametrize("likelihood", FAMILIES)
def test_one_trial_ranks_every_parameter(likelihood):
    ranks, covered = calibration_trial(
        1, priors=SBC_PRIORS, n_topics=6, n_systems=3, ci_prob=0.9, chains=2, draws=100,
        likelihood=likelihood,
    )  # fmt: skip
    names = parameter_names(6, 3, likelihood)
    assert ranks.shape == covered.shape == (len(names),)
    assert ((ranks >= 0) & (ranks <= 99)).all()
    assert names[-1] == "system_mean[run000]" and "topic_effect[t005]" in names
    assert ("phi" in names) == (likelihood == "zoib")


@pytest.mark.slow
@pytest.mark.parametrize("likelihood", FAMILIES)
def test_every_parameter_is_calibrated(likelihood):
    res = simulation_based_calibration(
        SBC_PRIORS, n_datasets=SBC_N_DATASETS, n_topics=15, n_systems=5, ci_prob=0.9,
        chains=2, draws=500, seed=28_000, likelihood=likelihood, max_workers=2,
    )  # fmt: skip
    assert res.failures(alpha=0.01, bins=10) == [], res.summary(bins=10)
    low, high = SBC_COVERAGE
    assert low <= res.coverage <= high, res.summary(bins=10)
    assert np.isfinite(res.to_frame(bins=10)["p_value"]).all()
