import numpy as np
import pytest
from results.reliability import SPLIT_HALF_SIZES
from scipy import stats

from bayes_ir.errors import InsufficientDataError
from bayes_ir.reliability import split_half_fit
from bayes_ir.reliability.split_half import _extrapolate, subset_sizes


@pytest.mark.parametrize("n", list(SPLIT_HALF_SIZES))
def test_subset_sizes_as_in_r(n):
    assert subset_sizes(n, 20).tolist() == SPLIT_HALF_SIZES[n]


def test_extrapolation_recovers_an_exact_exponential():
    x = np.repeat(np.arange(2.0, 12.0), 3)
    a, b = 0.4, -0.15
    tau = 1 - 2 * a * np.exp(b * x)  # so that 1 - (tau + 1)/2 = a exp(b x)
    est, (log_a, slope) = _extrapolate(x, tau, 30)
    assert slope == pytest.approx(b) and np.exp(log_a) == pytest.approx(a)
    assert est == pytest.approx(1 - 2 * a * np.exp(b * 30))


def test_perfect_agreement_gives_one():
    x = np.tile(np.arange(6.0), (10, 1)) * 10 + np.random.default_rng(0).random((10, 6))
    fit = split_half_fit(x, replacement=False, seed=1)
    assert fit.tau == 1.0 and fit.tau_ap == 1.0


def test_observations_and_reproducibility():
    rng = np.random.default_rng(4)
    x = rng.random((20, 8)) + np.linspace(0, 0.3, 8)
    fit = split_half_fit(x, replacement=True, seed=2)
    again = split_half_fit(x, replacement=True, seed=2)
    assert fit.tau == again.tau
    assert set(np.unique(fit.sizes)) == set(subset_sizes(20, 20).tolist())
    assert len(fit.obs_tau) == len(fit.sizes) <= 2000
    # the extrapolation, by scipy: log(1 - (tau + 1) / 2) = log a + b x, tau = 1 dropped
    for estimate, obs in ((fit.tau, fit.obs_tau), (fit.tau_ap, fit.obs_tau_ap)):
        keep = obs < 1
        line = stats.linregress(fit.sizes[keep], np.log(1 - (obs[keep] + 1) / 2))
        want = 1 - 2 * min(1.0, max(0.0, np.exp(line.intercept + line.slope * 20)))
        assert estimate == pytest.approx(want, rel=1e-10)


def test_too_few_topics():
    with pytest.raises(InsufficientDataError, match="at least 4"):
        split_half_fit(np.random.default_rng(0).random((3, 4)), replacement=False)
