"""The kernels' vectorised functions equal numpy's and scipy's, and keep NaN and infinities.

References: ``np.exp``, ``np.log``, ``scipy.special.expit`` / ``log_expit``, ``gammaln``
and ``digamma`` on grids over each function's whole range, with the edges (1, the
recurrence's threshold 8, subnormal products) and non-finite arguments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from bayes_ir.hierarchical.families import _vmath


def _run(func, *arrays, n_out: int, n_work: int) -> list[np.ndarray]:
    n = arrays[0].size
    outs = [np.full(n, -123.0) for _ in range(n_out)]
    works = [np.empty(n) for _ in range(n_work)]
    with np.errstate(all="ignore"):
        func(*[np.ascontiguousarray(a, dtype=float) for a in arrays], *outs, n, *works)
    return outs


def test_exp_equals_numpy_to_half_an_ulp_and_clamps_at_700():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-700, 700, 50_000), np.linspace(-1, 1, 20_001),
                        [0.0, -0.0, 709.0 - 9.0, -700.0]])  # fmt: skip
    (got,) = _run(_vmath.exp_into, x, n_out=1, n_work=1)
    np.testing.assert_allclose(got, np.exp(x), rtol=5e-16, atol=0)
    clamped = _run(_vmath.exp_into, np.array([-800.0, 800.0, np.nan]), n_out=1, n_work=1)[0]
    assert clamped[0] == np.exp(-700.0) and clamped[1] == np.exp(700.0)
    assert np.isnan(clamped[2])


def test_log_equals_numpy_over_the_normal_range_and_near_one():
    rng = np.random.default_rng(2)
    x = np.concatenate([
        np.exp(rng.uniform(-708, 709, 50_000)),
        1.0 + np.linspace(-1e-6, 1e-6, 2_001),  # log near 0: relative accuracy kept
        [np.finfo(float).tiny, np.finfo(float).max, 1.0, 2.0, 0.5, math.sqrt(2), math.sqrt(0.5)],
    ])  # fmt: skip
    x = x[x != 1.0]
    (got,) = _run(_vmath.log_into, x, n_out=1, n_work=1)
    np.testing.assert_allclose(got, np.log(x), rtol=5e-16, atol=0)
    (one,) = _run(_vmath.log_into, np.array([1.0]), n_out=1, n_work=1)
    assert one[0] == 0.0


def test_log_may_write_over_its_argument():
    x = np.geomspace(1e-3, 1e3, 101)
    ref = np.log(x)
    _vmath.log_into(x, x, x.size, np.empty(x.size))
    np.testing.assert_allclose(x, ref, rtol=5e-16)


def test_logistic_gives_both_means_and_their_logs_to_full_precision():
    eta = np.concatenate([np.linspace(-700, 700, 40_001), np.linspace(-1e-3, 1e-3, 2_001),
                          [0.0, -0.0, 36.7, -36.7]])  # fmt: skip
    mu, one_m, log_mu, log_one_m = _run(_vmath.logistic_into, eta, n_out=4, n_work=2)
    for got, ref in (
        (mu, special.expit(eta)),
        (one_m, special.expit(-eta)),
        (log_mu, special.log_expit(eta)),
        (log_one_m, special.log_expit(-eta)),
    ):
        np.testing.assert_allclose(got, ref, rtol=1e-15, atol=0)  # fmt: skip
    nan = _run(_vmath.logistic_into, np.array([np.nan]), n_out=4, n_work=2)
    assert all(np.isnan(v[0]) for v in nan)


@pytest.mark.parametrize(
    "x",
    [
        np.geomspace(1e-300, 1e300, 100_001),
        np.linspace(0.5, 70, 100_001),
        np.linspace(7.99, 8.01, 2_001),  # both sides of the recurrence's threshold
        np.array([1.0, 2.0, 1.4616321449683623, 8.0, 16.0]),  # zeros of lgamma and psi
    ],
    ids=["1e-300..1e300", "0.5..70", "around 8", "special points"],
)
def test_log_gamma_and_digamma_equal_scipy(x):
    lg, dg = _run(_vmath.lgamma_digamma_into, x, np.log(x), n_out=2, n_work=3)
    np.testing.assert_allclose(lg, special.gammaln(x), rtol=5e-15, atol=3e-14)
    np.testing.assert_allclose(dg, special.digamma(x), rtol=5e-15, atol=3e-14)


def test_log_gamma_uses_the_given_log_where_the_argument_underflowed():
    # a beta shape mu * phi below the smallest double: its log is still known exactly
    log_x = np.array([-800.0, math.log(1e-320)])
    lg, dg = _run(_vmath.lgamma_digamma_into, np.exp(log_x), log_x, n_out=2, n_work=3)
    # log Gamma(x) = -log x - gamma x + O(x^2): -log x to the last digit here
    np.testing.assert_allclose(lg, -log_x, rtol=1e-15)
    assert np.all(dg == -np.inf)  # psi(x) ~ -1/x: not finite, so never silently wrong


def test_non_finite_arguments_give_non_finite_results():
    x = np.array([np.inf, np.nan, 3.0, 3.0])
    log_x = np.array([np.inf, np.nan, np.nan, np.inf])
    lg, dg = _run(_vmath.lgamma_digamma_into, x, log_x, n_out=2, n_work=3)
    assert not np.isfinite(lg[[0, 1]]).any() and not np.isfinite(dg[[0, 1]]).any()
    assert not np.isfinite(lg[[2, 3]]).any()  # the given log enters below 8


def test_only_the_first_n_values_are_written():
    x = np.linspace(1.0, 2.0, 10)
    out = np.full(10, -1.0)
    _vmath.log_into(x, out, 4, np.empty(10))
    assert np.all(out[4:] == -1.0) and np.allclose(out[:4], np.log(x[:4]))
