"""Fixed priors, the calibration check and the agreement of two samplers (sampler tests)."""

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


def mcse(x: np.ndarray) -> np.ndarray:
    """Monte Carlo SE of the mean of draws (chain, draw, ...) from ArviZ's ESS."""
    import xarray as xr
    from arviz_stats import ess

    flat = x.reshape(x.shape[0], x.shape[1], -1)
    da = xr.Dataset({"x": (("chain", "draw", "k"), flat)})
    n_eff = ess(da)["x"].values
    return flat.std(axis=(0, 1)) / np.sqrt(n_eff)


def agree(a: dict, b: dict, names, *, z_max: float = 4.5, sd_tol: float = 0.05) -> None:
    """Posterior means of ``names`` agree within Monte Carlo error, SDs within ``sd_tol``."""
    for name in names:
        x, y = np.asarray(a[name]), np.asarray(b[name])
        mx = x.reshape(x.shape[0], x.shape[1], -1).mean(axis=(0, 1))
        my = y.reshape(y.shape[0], y.shape[1], -1).mean(axis=(0, 1))
        se = np.hypot(mcse(x), mcse(y))
        z = np.abs(mx - my) / se
        assert z.max() < z_max, (name, z.max())
        sx = x.reshape(x.shape[0], x.shape[1], -1).std(axis=(0, 1))
        sy = y.reshape(y.shape[0], y.shape[1], -1).std(axis=(0, 1))
        np.testing.assert_allclose(sx, sy, rtol=sd_tol, err_msg=name)
