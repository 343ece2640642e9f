"""Vectorised PSIS-LOO equals ArviZ's, observation by observation."""

from __future__ import annotations

import numpy as np
import pytest
from arviz_stats.base.array import array_stats

from bayes_ir.hierarchical.psis import psis_loo, tail_draws


def _arviz(ll: np.ndarray, r_eff: float) -> np.ndarray:
    return np.array([array_stats.loo(row[None, :], r_eff=r_eff) for row in ll])


def _log_likelihood(n_obs: int, n_draws: int, seed: int) -> np.ndarray:
    """Light to very heavy tails of the importance ratios (Pareto k from about 0 to 4)."""
    rng = np.random.default_rng(seed)
    heavy = rng.uniform(0, 3, (n_obs, 1)) * rng.gamma(0.5, 2, (n_obs, n_draws))
    return rng.normal(-1, 0.5, (n_obs, n_draws)) - heavy


@pytest.mark.parametrize(("n_draws", "r_eff"), [(4000, 0.8), (1000, 1.0), (200, 0.5), (60, 1.3)])
def test_equals_arviz_on_every_observation(n_draws, r_eff):
    ll = _log_likelihood(700, n_draws, seed=n_draws)
    ll[3, 7] = -np.inf  # a draw that gives the observation no density
    ll[4, ::2] = -1.0  # half the draws tied
    ll[5] = np.round(ll[5])  # ties everywhere, in the tail too
    ll[6, 11] = np.nan
    # the lower part of the tail tied with the cutoff: no Pareto fit (ArviZ's NaN k)
    order = np.argsort(ll[8])
    ll[8, order[n_draws // 100 : n_draws // 10]] = ll[8, order[n_draws // 10]]
    ours = np.column_stack(psis_loo(ll, r_eff))
    ref = _arviz(ll, r_eff)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_allclose(ours[ok], ref[ok], rtol=1e-12, atol=1e-13)
    # across the range of k, not only light tails
    assert np.nanmin(ref[:, 1]) < 0.3 and np.nanmax(ref[:, 1]) > 1.0


def test_tail_sizes_are_arviz_rule():
    assert tail_draws(4000, 1.0) == int(np.floor(3 * np.sqrt(4000)))
    assert tail_draws(4000, 0.5) == int(np.floor(3 * np.sqrt(8000)))
    assert tail_draws(200, 1.0) == 40 and tail_draws(20, 1.0) == 5


def test_a_constant_tail_fails_as_in_arviz():
    ll = _log_likelihood(3, 400, seed=1)
    ll[1] = -2.0
    with pytest.raises(ValueError, match="tail values are the same"):
        array_stats.loo(ll[1][None, :], r_eff=1.0)
    with pytest.raises(ValueError, match="tail values are the same"):
        psis_loo(ll, 1.0)


def test_log_sum_exp_of_rows_equals_numpy_with_nan_and_infinities():
    from bayes_ir.hierarchical.psis import _logsumexp

    rng = np.random.default_rng(3)
    x = rng.normal(0, 30, (8, 500))
    x[1, 5] = np.nan
    x[2] = -np.inf
    x[3, 9] = np.inf
    x[4, ::3] = -np.inf  # some draws without density
    x[5] -= 2_000.0  # far below 0: the shift keeps it
    x[6, 0] = 1e-320  # a subnormal among them
    m = np.max(x, axis=1, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        ref = np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]
    got = _logsumexp(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got[~np.isnan(ref)], ref[~np.isnan(ref)], rtol=1e-14, atol=0)
