"""Simulation-based calibration of the exact sampler (Talts et al. 2018, coverage form).

Datasets are simulated from the model with parameters drawn from fixed priors and
fitted with the same priors; central 90% intervals of the system effects must cover
the true effects about 90% of the time. Trials run through ``bayes_ir.sweep.sweep``.
"""

from __future__ import annotations

from results.hierarchical import SBC_CHI2_MAX, SBC_LEVEL, SBC_N_DATASETS, SBC_RANGE

from bayes_ir.hierarchical import Priors
from bayes_ir.hierarchical.calibration import simulation_based_calibration

PRIORS = Priors(
    b0_mu=0.3,
    b0_sd=0.1,
    sigma_rate=10.0,
    sigma_topic_rate=7.0,
    sigma_system_rate=30.0,
    skewness_max=0.9,
)


def test_central_intervals_cover_the_truth():
    res = simulation_based_calibration(
        PRIORS,
        n_datasets=SBC_N_DATASETS,
        n_topics=20,
        n_systems=8,
        ci_prob=SBC_LEVEL,
        seed=5000,
        max_workers=2,
    )
    assert res.covered.shape == (SBC_N_DATASETS, 8)
    assert SBC_RANGE[0] <= res.coverage <= SBC_RANGE[1], res.summary()
    assert res.uniformity_chi2() < SBC_CHI2_MAX, res.summary()
