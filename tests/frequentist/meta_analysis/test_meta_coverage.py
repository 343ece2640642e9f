"""Coverage of the 95% CI of the summary effect under a known random-effects model.

y_i = mu + u_i + e_i, u_i ~ N(0, tau^2), e_i ~ N(0, v_i) with v_i known. The trials of one
scenario are vectorised; the scenarios go through bayes_ir.sweep.sweep (in-process).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from scipy import stats

from bayes_ir.frequentist.meta_analysis.combine import _pool
from bayes_ir.frequentist.meta_analysis.tau2 import _tau2
from bayes_ir.sweep import sweep

MU = 0.05
TRIALS = 4000


def coverage(k: int, *, tau2: float, method: str, seed: int) -> dict[str, float]:
    """Share of trials whose 95% CI (Wald and Hartung-Knapp) holds the true mu."""
    rng = np.random.default_rng(seed)
    v = np.linspace(0.0005, 0.005, k)  # unequal sampling variances, fixed design
    y = MU + rng.normal(0, np.sqrt(tau2), (TRIALS, k)) + rng.normal(0, np.sqrt(v), (TRIALS, k))
    t2 = _tau2(y, np.broadcast_to(v, y.shape), method)
    out = {}
    for hk, crit in ((False, stats.norm.isf(0.025)), (True, stats.t.isf(0.025, k - 1))):
        mu, se, _ = _pool(y, v, t2, hk=hk)
        out["hk" if hk else "wald"] = float(np.mean(np.abs(mu - MU) <= crit * se))
    return out


@pytest.mark.parametrize("method", ["DL", "REML"])
def test_hk_near_nominal_and_wald_too_narrow_for_small_k(method):
    # tau^2 = 0.01 against v_i in [0.0005, 0.005]: I^2 about 80%. Figures (seed 11, 4000
    # trials): Wald 0.857 / 0.910 / 0.937 and HK 0.935 / 0.944 / 0.953 for k = 5 / 10 / 30
    ks = (5, 10, 30)
    res = sweep(partial(coverage, tau2=0.01, method=method, seed=11), ks, max_workers=1)
    mc_se = np.sqrt(0.95 * 0.05 / TRIALS)  # Monte Carlo SE of a coverage near 0.95: 0.0034
    for k, cov in zip(ks, res, strict=True):
        assert abs(cov["hk"] - 0.95) < 0.02, (k, cov)  # Hartung-Knapp: close to nominal
        assert cov["wald"] < cov["hk"], (k, cov)
    assert res[0]["wald"] < 0.90  # the Wald CI undercovers with 5 collections ...
    assert abs(res[-1]["wald"] - 0.95) < 4 * mc_se + 0.005  # ... and nears 95% with 30


def test_fixed_effect_wald_nominal_without_heterogeneity():
    cov = coverage(10, tau2=0.0, method="FE", seed=5)
    assert abs(cov["wald"] - 0.95) < 0.014
