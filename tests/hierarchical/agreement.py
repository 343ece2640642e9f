"""Do two samplers' draws follow the same posterior? Means within Monte Carlo error, SDs close.

And the simulated tables the sampler tests share.
"""

from __future__ import annotations

import numpy as np

from bayes_ir.table import ScoreTable

SCALARS = ("b0", "sigma", "sigma_topic", "sigma_system")


def mcse(x: np.ndarray) -> np.ndarray:
    """Monte Carlo SE of the mean of draws (chain, draw, ...) from ArviZ's ESS."""
    import xarray as xr
    from arviz_stats import ess

    flat = x.reshape(x.shape[0], x.shape[1], -1)
    da = xr.Dataset({"x": (("chain", "draw", "k"), flat)})
    n_eff = ess(da)["x"].values
    return flat.std(axis=(0, 1)) / np.sqrt(n_eff)


def agree(a: dict, b: dict, *, z_max=4.5, sd_tol=0.05, names=None) -> None:
    """Posterior means agree within Monte Carlo error, SDs within ``sd_tol``."""
    for name in names or (*SCALARS, "topic_effect", "system_effect"):
        x, y = np.asarray(a[name]), np.asarray(b[name])
        mx = x.reshape(x.shape[0], x.shape[1], -1).mean(axis=(0, 1))
        my = y.reshape(y.shape[0], y.shape[1], -1).mean(axis=(0, 1))
        se = np.hypot(mcse(x), mcse(y))
        z = np.abs(mx - my) / se
        assert z.max() < z_max, (name, z.max())
        sx = x.reshape(x.shape[0], x.shape[1], -1).std(axis=(0, 1))
        sy = y.reshape(y.shape[0], y.shape[1], -1).std(axis=(0, 1))
        np.testing.assert_allclose(sx, sy, rtol=sd_tol, err_msg=name)


def simulated_matrix(n_t, n_s, seed, *, tau=0.15, chi=0.03, sigma=0.1, missing=0.0):
    """Scores of the crossed model (topic SD ``tau``, system SD ``chi``), NaN where missing."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0, tau, n_t)
    c = rng.normal(0, chi, n_s)
    y = 0.3 + a[:, None] + c[None, :] + rng.normal(0, sigma, (n_t, n_s))
    if missing:
        drop = rng.uniform(size=y.shape) < missing
        drop[np.arange(n_t), np.arange(n_t) % n_s] = False
        drop[np.arange(n_s) % n_t, np.arange(n_s)] = False
        y[drop] = np.nan
    return y


def cells(y: np.ndarray):
    """Topic index, system index and score of the observed cells, and the shape."""
    t, s = np.nonzero(np.isfinite(y))
    return t, s, y[t, s], y.shape


def simulated_table(y: np.ndarray) -> ScoreTable:
    """``y`` as a table: champion ``champ``, challenger ``chal_a``, artifacts ``run000``, ...."""
    n_t, n_s = y.shape
    systems = ["champ", "chal_a", *[f"run{i:03d}" for i in range(n_s - 2)]]
    table = ScoreTable.from_matrix(
        y, systems=systems[:n_s], topics=[f"t{i:03d}" for i in range(n_t)], missing="keep"
    )
    return table.with_roles(champion="champ", challengers=["chal_a"])
