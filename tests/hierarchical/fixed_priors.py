"""Fixed priors and the calibration check shared by the sampler tests (exact, Gibbs, SBC)."""

from __future__ import annotations

import numpy as np
from results.hierarchical import SBC_ALPHA, SBC_COVERAGE_SD, SBC_LEVEL

from bayes_ir.hierarchical import Priors
from bayes_ir.hierarchical.calibration import CalibrationResult

#: Fully specified priors of the sampler comparisons (no autoscaling).
PRIORS = Priors(
    b0_mu=0.3,
    b0_sd=0.5,
    sigma_rate=5.0,
    sigma_topic_rate=4.0,
    sigma_system_rate=6.0,
    skewness_max=0.9,
)

#: Priors the calibration datasets are drawn from (and fitted with).
SBC_PRIORS = Priors(
    b0_mu=0.3,
    b0_sd=0.1,
    sigma_rate=10.0,
    sigma_topic_rate=7.0,
    sigma_system_rate=30.0,
    skewness_max=0.9,
)


def assert_calibrated(res: CalibrationResult, n: int, n_params: int, bins: int) -> None:
    """Every parameter's ranks uniform and the intervals' coverage within 4.5 SDs of nominal."""
    assert res.ranks.shape == (n, n_params) and res.covered.shape == (n, n_params)
    names = res.parameters
    assert names[:4] == ("b0", "sigma", "sigma_topic", "sigma_system")
    assert any(p.startswith("topic_effect[") for p in names)
    assert any(p.startswith("system_effect[") for p in names)
    assert res.failures(alpha=SBC_ALPHA, bins=bins) == [], res.summary(bins=bins)
    half = 4.5 * SBC_COVERAGE_SD / np.sqrt(n)
    assert abs(res.coverage - SBC_LEVEL) < half, res.summary(bins=bins)
