"""Simulation-based calibration of the exact sampler for every parameter (Talts et al. 2018).

Datasets are simulated from the model with parameters drawn from fixed priors and
fitted with the same priors; the rank of each true parameter (b0, sigma, sigma_topic,
sigma_system, every topic and system effect) among the posterior draws must be uniform,
tested per parameter by a chi-square on the binned ranks, and central 90% intervals
must cover the truth about 90% of the time. Trials run through ``bayes_ir.sweep.sweep``.
"""

from __future__ import annotations

import numpy as np
import pytest
from fixed_priors import SBC_PRIORS as PRIORS
from fixed_priors import assert_calibrated
from results.hierarchical import (
    SBC_BINS,
    SBC_BINS_SLOW,
    SBC_LEVEL,
    SBC_N_DATASETS,
    SBC_N_DATASETS_SLOW,
)
from scipy import stats

from bayes_ir.hierarchical.calibration import CalibrationResult, simulation_based_calibration


@pytest.mark.slow
def test_every_parameter_is_calibrated():
    res = simulation_based_calibration(
        PRIORS,
        n_datasets=SBC_N_DATASETS,
        n_topics=10,
        n_systems=5,
        ci_prob=SBC_LEVEL,
        chains=2,
        draws=200,
        seed=5000,
        max_workers=2,
    )
    assert_calibrated(res, SBC_N_DATASETS, 4 + 10 + 5, SBC_BINS)


@pytest.mark.slow
def test_every_parameter_is_calibrated_many_datasets():
    res = simulation_based_calibration(
        PRIORS,
        n_datasets=SBC_N_DATASETS_SLOW,
        n_topics=20,
        n_systems=8,
        ci_prob=SBC_LEVEL,
        chains=2,
        draws=300,
        seed=9000,
        max_workers=2,
    )
    assert_calibrated(res, SBC_N_DATASETS_SLOW, 4 + 20 + 8, SBC_BINS_SLOW)


def test_rank_test_matches_scipy_and_detects_a_miscalibrated_parameter():
    """The per-parameter chi-square equals scipy's on hand-made bins, and a parameter
    whose truth always sits in the upper tail (an overconfident, biased posterior) is
    the one flagged."""
    rng = np.random.default_rng(0)
    ranks = rng.integers(0, 100, size=(200, 3))
    ranks[:, 2] = rng.integers(60, 100, size=200)
    res = CalibrationResult(
        parameters=("b0", "sigma", "sigma_topic"),
        ranks=ranks,
        covered=np.ones((200, 3), dtype=bool),
        n_ranks=99,
        ci_prob=0.9,
    )
    frame = res.to_frame(bins=10)
    counts = np.histogram(ranks[:, 0], bins=10, range=(0, 100))[0]
    want = stats.chisquare(counts)
    assert frame.loc[0, "chi2"] == pytest.approx(want.statistic)
    assert frame.loc[0, "p_value"] == pytest.approx(want.pvalue)
    assert (frame["df"] == 9).all()
    assert res.failures(alpha=0.01) == ["sigma_topic"]
    assert "non-uniform ranks: sigma_topic" in res.summary()
    with pytest.raises(ValueError, match="divide"):
        res.to_frame(bins=7)
