import math

import numpy as np
import pytest
from numpy.polynomial import hermite_e
from results.reliability import DPIK_GAMMA, DPIK_NORMAL, DPIK_R, DPIK_REL_TOL
from scipy import stats

from bayes_ir.errors import InsufficientDataError
from bayes_ir.reliability import plugin_bandwidth, swap_probabilities
from bayes_ir.reliability.estimators import _msqd_sigma, c_n, expected_from_p, sort_by_mean


def test_c_n_is_inverse_c4_and_stable_for_large_n():
    for n in (2, 5, 50, 170):
        c4 = math.sqrt(2 / (n - 1)) * math.gamma(n / 2) / math.gamma((n - 1) / 2)
        assert c_n(n) == pytest.approx(1 / c4, rel=1e-12)
    # large n: no overflow; 1/c4 = 1 + 1/(4n) + O(n^-2)
    assert c_n(100_000) == pytest.approx(1 + 1 / (4 * 100_000), rel=1e-9)


def test_ml_probability_against_student_t_by_hand():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 3)) + np.array([0.5, 0.2, 0.0])
    x = x[:, sort_by_mean(x)]
    p, _ = swap_probabilities(x, estimator="ML")
    d = x[:, 0] - x[:, 1]
    n = len(d)
    sd = np.std(d, ddof=1) * c_n(n)
    assert p[0] == pytest.approx(stats.t.sf(math.sqrt(n) * d.mean() / sd, df=n - 1))


def test_msqd_sigma_is_least_squares_slope_on_normal_quantiles():
    rng = np.random.default_rng(1)
    d = np.round(rng.gamma(2.0, 0.1, size=(30, 4)), 2)  # with ties
    for k in range(4):
        z = stats.norm.ppf(stats.rankdata(d[:, k]) / 31)
        slope = np.linalg.lstsq(z[:, None], d[:, k], rcond=None)[0][0]
        assert _msqd_sigma(d)[k] == pytest.approx(slope)
    big = rng.normal(0, 2.0, size=(4000, 1))
    assert _msqd_sigma(big)[0] == pytest.approx(2.0, rel=0.03)


def test_expected_from_p_matches_loops():
    rng = np.random.default_rng(2)
    m = 6
    i, j = np.triu_indices(m, 1)
    p = rng.uniform(0, 0.5, len(i))
    full = np.zeros((m, m))
    full[i, j] = p
    e_tau = 1 - 2 * full.sum() / (m * (m - 1) / 2)
    e_tap = 1 - 2 / (m - 1) * sum(full[:jj, jj].sum() / jj for jj in range(1, m))
    assert expected_from_p(p, m) == pytest.approx((e_tau, e_tap))


def _brute_bandwidth(x):
    # Wand & Jones two-stage DPI, with the full n x n double sum and numpy's HermiteE.
    n = len(x)
    q1, q3 = np.percentile(x, [25, 75])  # KernSmooth::dpik, scalest = "minim"
    sig = min(np.std(x, ddof=1), (q3 - q1) / (stats.norm.ppf(0.75) - stats.norm.ppf(0.25)))
    phi = lambda u: np.exp(-u * u / 2) / np.sqrt(2 * np.pi)  # noqa: E731

    def psi(r, g):
        u = (x[:, None] - x[None, :]) / g
        he = hermite_e.hermeval(u, [0] * r + [1])
        return (he * phi(u)).sum() / (n * n * g ** (r + 1))

    psi8 = 105 / (32 * np.sqrt(np.pi) * sig**9)
    k6 = hermite_e.hermeval(0.0, [0] * 6 + [1]) * phi(0.0)
    k4 = hermite_e.hermeval(0.0, [0] * 4 + [1]) * phi(0.0)
    g1 = (-2 * k6 / (psi8 * n)) ** (1 / 9)
    g2 = (-2 * k4 / (psi(6, g1) * n)) ** (1 / 7)
    return (1 / (2 * np.sqrt(np.pi)) / (psi(4, g2) * n)) ** (1 / 5)


def test_plugin_bandwidth_against_brute_force_and_kernsmooth():
    rng = np.random.default_rng(3)
    x = rng.gamma(2.0, 1.0, 60)
    assert plugin_bandwidth(x) == pytest.approx(_brute_bandwidth(x), rel=1e-5)
    # R's KernSmooth::dpik on a fine grid (results/reliability.py: data, script, output)
    for name, data in (("gamma", DPIK_GAMMA), ("normal", DPIK_NORMAL)):
        got = plugin_bandwidth(np.array(data))
        assert got == pytest.approx(DPIK_R[name], rel=DPIK_REL_TOL), name
    assert np.isnan(plugin_bandwidth(np.ones(10)))
    assert np.isnan(plugin_bandwidth([0] * 7 + [0.1, 0.3]))  # IQR = 0: dpik fails


def _res_reference(d, samples, rng):  # the R loop: one big resample split into T means
    n = len(d)
    star = rng.choice(d, size=n * samples, replace=True).reshape(samples, n)
    return np.mean(star.mean(axis=1) < 0)


def _kd_reference(d, samples, rng):  # literal samples from the KDE: resample + h * N(0, 1)
    n = len(d)
    h = _brute_bandwidth(d)
    idx = rng.integers(0, n, size=(samples, n))
    star = d[idx] + h * rng.standard_normal((samples, n))
    return np.mean(star.mean(axis=1) < 0)


@pytest.mark.parametrize("estimator, reference", [("RES", _res_reference), ("KD", _kd_reference)])
def test_monte_carlo_estimators_against_pair_by_pair_reference(estimator, reference):
    rng = np.random.default_rng(4)
    n, m, t = 15, 4, 20_000
    x = rng.beta(2, 5, size=(n, m)) + np.array([0.04, 0.02, 0.01, 0.0])
    x = x[:, sort_by_mean(x)]
    p, _ = swap_probabilities(x, estimator=estimator, samples=t, seed=5)
    i, j = np.triu_indices(m, 1)
    for k in range(len(i)):
        ref = reference(x[:, i[k]] - x[:, j[k]], t, rng)
        se = math.sqrt(max(ref * (1 - ref), 1e-4) * 2 / t)
        assert abs(p[k] - ref) < 5 * se, (k, p[k], ref)


def test_identical_and_shifted_columns():
    rng = np.random.default_rng(6)
    a = rng.integers(0, 100, 10) / 128  # dyadic: a + 0.125 - a is exactly 0.125
    x = np.column_stack([a + 0.125, a, a, rng.random(10) / 2])
    x = x[:, sort_by_mean(x)]
    for est in ("ML", "MSQD", "RES", "KD"):
        p, info = swap_probabilities(x, estimator=est, samples=200, seed=1)
        full = np.full((4, 4), np.nan)
        full[np.triu_indices(4, 1)] = p
        top, a1, a2 = 0, *sorted(k for k in range(1, 4) if np.allclose(x[:, k], a))
        assert full[top, a1] == 0 and full[top, a2] == 0  # constant positive shift: never swapped
        if est in ("ML", "MSQD", "KD"):  # KD falls back to ML for constant differences
            assert np.isnan(full[a1, a2])  # identical columns: 0 / 0, undefined
        else:
            assert full[a1, a2] == 0  # no resampled mean is below 0
        if est == "KD":
            assert info["kd_fallback"] == 3  # the identical pair and both constant shifts


def test_seeds_make_results_reproducible():
    rng = np.random.default_rng(7)
    x = rng.random((10, 5))
    x = x[:, sort_by_mean(x)]
    for est in ("RES", "KD"):
        a, _ = swap_probabilities(x, estimator=est, samples=300, seed=1)
        b, _ = swap_probabilities(x, estimator=est, samples=300, seed=1)
        c, _ = swap_probabilities(x, estimator=est, samples=300, seed=2)
        assert np.array_equal(a, b)
        assert not np.array_equal(a, c)


def test_bad_input():
    with pytest.raises(InsufficientDataError, match="2 systems"):
        swap_probabilities(np.ones((5, 1)))
    with pytest.raises(InsufficientDataError, match="topics"):
        swap_probabilities(np.ones((1, 3)))
    with pytest.raises(InsufficientDataError, match="missing"):
        swap_probabilities(np.array([[0.1, np.nan], [0.2, 0.3]]))
    with pytest.raises(ValueError, match="unknown"):
        swap_probabilities(np.ones((5, 3)), estimator="XX")
