"""Compare draws of Chal. 4 minus Champion on rb04 with rstanarm's (results/hierarchical.py)."""

from __future__ import annotations

import numpy as np
import xarray as xr
from arviz_stats import mcse
from results.hierarchical import RSTANARM_N_MCSE, RSTANARM_PRIOR_ALLOWANCE, RSTANARM_RB04


def assert_matches_rstanarm(draws: xr.DataArray) -> None:
    """Mean and 2.5% / 97.5% quantiles within the Monte Carlo error of both sides plus the
    prior allowance (the reasoning is next to the reference numbers).

    ``draws``: dims (chain, draw).
    """
    draws = draws.transpose("chain", "draw")
    ours = {
        "mean": (float(draws.mean()), float(mcse(draws, method="mean"))),
        "lower": (float(draws.quantile(0.025)), float(mcse(draws, method="quantile", prob=0.025))),
        "upper": (float(draws.quantile(0.975)), float(mcse(draws, method="quantile", prob=0.975))),
    }
    for key, (value, se) in ours.items():
        want, want_se = RSTANARM_RB04[key], RSTANARM_RB04[f"mcse_{key}"]
        tol = RSTANARM_N_MCSE * np.hypot(se, want_se) + RSTANARM_PRIOR_ALLOWANCE
        assert abs(value - want) < tol, (key, value, want, tol)
