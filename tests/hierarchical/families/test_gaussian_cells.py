"""The Gaussian cells' log density equals scipy's, with a pooled or a per-system SD."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayes_ir.hierarchical.families.gaussian import GaussianCells


@pytest.mark.parametrize("per_system", [False, True])
def test_normal_log_density_equals_scipy(per_system):
    rng = np.random.default_rng(11)
    n, b, t = 7, 4, 9
    mu = rng.normal(0.3, 0.2, (n, b, t))
    sigma = rng.gamma(2.0, 0.05, (n, b, 1) if per_system else (n, 1, 1))
    y = rng.uniform(-0.2, 1.2, (b, t))
    got = GaussianCells(mu, sigma, None).logpdf(y)
    np.testing.assert_allclose(got, stats.norm.logpdf(y, mu, sigma), rtol=1e-14, atol=1e-14)
