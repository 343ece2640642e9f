"""The compiled regularised incomplete beta equals scipy's, inside and at the edges."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from bayes_ir.hierarchical.families._betainc import betainc


@pytest.mark.parametrize("phi", [0.5, 2.0, 11.0, 100.0])
def test_equals_scipy_on_the_beta_shapes_of_a_zoib_check(phi):
    rng = np.random.default_rng(int(phi * 10))
    mu = special.expit(rng.normal(-1.3, 1.5, 50_000))
    a, b = mu * phi, (1 - mu) * phi
    x = np.where(rng.random(mu.size) < 0.5, rng.beta(a, b), rng.random(mu.size))
    x = np.clip(x, 1e-300, 1 - 1e-16)
    np.testing.assert_allclose(betainc(a, b, x), special.betainc(a, b, x), rtol=0, atol=5e-13)


def test_equals_scipy_over_wide_shapes_and_near_both_ends():
    rng = np.random.default_rng(7)
    n = 200_000
    a = np.exp(rng.uniform(np.log(1e-3), np.log(1e4), n))
    b = np.exp(rng.uniform(np.log(1e-3), np.log(1e4), n))
    x = np.concatenate([rng.random(n // 2), 10.0 ** -rng.uniform(1, 12, n // 4),
                        1 - 10.0 ** -rng.uniform(1, 12, n // 4)])  # fmt: skip
    x = np.where(rng.random(n) < 0.3, np.clip(rng.beta(a, b), 1e-300, 1 - 1e-16), x)
    x = np.clip(x, 1e-300, 1 - 1e-16)
    np.testing.assert_allclose(betainc(a, b, x), special.betainc(a, b, x), rtol=0, atol=1e-10)


def test_edges_are_scipys():
    a = np.array([1.0, 1.0, 0.0, 2.0, np.inf, np.nan, 2.0, 2.0, -1.0])
    b = np.array([1.0, 1.0, 2.0, 0.0, 2.0, 2.0, np.nan, 2.0, 2.0])
    x = np.array([0.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, np.nan, 0.5])
    got, ref = betainc(a, b, x), special.betainc(a, b, x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(got[~np.isnan(ref)], ref[~np.isnan(ref)])


def test_takes_any_shape_and_returns_a_flat_array():
    a = np.full((3, 4), 2.0)
    got = betainc(a, a, np.full((3, 4), 0.5))
    assert got.shape == (12,) and np.allclose(got, 0.5)
