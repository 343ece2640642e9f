"""Decision rules against closed forms, scipy integration and direct simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from bayes_ir.decision.rules import (
    ACTIONS,
    UNRELIABLE,
    choose,
    expected_losses,
    gaussian_positive_part,
    reliable_action,
    risk_adjusted_difference,
    shift_of,
    three_way,
)


@pytest.mark.parametrize(("mu", "tau"), [(0.0, 1.0), (0.3, 0.2), (-0.05, 0.01), (2.0, 0.5)])
def test_positive_part_equals_numerical_integral(mu, tau):
    upper = max(mu, 0.0) + 40 * tau  # a finite range: quad misses a far-off bump on [0, inf)
    ref, _ = integrate.quad(lambda x: x * stats.norm.pdf(x, mu, tau), 0, upper, epsabs=1e-14)
    assert gaussian_positive_part(mu, tau) == pytest.approx(ref, rel=1e-6, abs=1e-14)


def test_positive_part_of_a_point_mass():
    assert gaussian_positive_part(0.3, 0.0) == 0.3
    assert gaussian_positive_part(-0.3, 0.0) == 0.0


def test_three_way_is_the_normal_probabilities_of_gaussian_draws():
    rng = np.random.default_rng(1)
    mu, tau, m, n = 0.012, 0.01, 0.01, 400_000
    d = rng.normal(mu, tau, size=(n, 1))
    better, equiv, worse = three_way(d, m)
    ref_better = stats.norm.sf(m, mu, tau)
    ref_worse = stats.norm.cdf(-m, mu, tau)
    se = np.sqrt(0.25 / n)
    assert abs(better[0] - ref_better) < 4 * se
    assert abs(worse[0] - ref_worse) < 4 * se
    assert better[0] + equiv[0] + worse[0] == pytest.approx(1.0)


@pytest.mark.parametrize("shift", [0.01, -0.02, 0.0])
def test_expected_losses_equal_their_closed_form_under_a_gaussian_posterior(shift):
    """L_deploy = E[(s - d)+] and L_keep = E[(d - s)+] for d ~ N(mu, tau^2)."""
    rng = np.random.default_rng(2)
    mu, tau, n = 0.015, 0.012, 400_000
    d = rng.normal(mu, tau, size=n)
    loss_deploy, loss_keep = expected_losses(d, shift)
    ref_deploy = gaussian_positive_part(shift - mu, tau)
    ref_keep = gaussian_positive_part(mu - shift, tau)
    se = tau / np.sqrt(n)
    assert abs(loss_deploy - ref_deploy) < 5 * se
    assert abs(loss_keep - ref_keep) < 5 * se
    # the two losses differ by exactly E[d] - s (x+ - (-x)+ = x)
    assert loss_keep - loss_deploy == pytest.approx(d.mean() - shift, abs=1e-12)


@pytest.mark.parametrize("r", [1.0, 2.0, 5.0])
def test_risk_adjusted_difference_equals_simulated_urisk(r):
    """d_r = E[X+] - r E[X-] for X ~ N(d, s^2), computed from simulated per-topic differences."""
    rng = np.random.default_rng(3)
    d, s, n = 0.02, 0.15, 2_000_000
    x = rng.normal(d, s, size=n)
    ref = np.maximum(x, 0).mean() - r * np.maximum(-x, 0).mean()
    assert risk_adjusted_difference(np.array([d]), s, r)[0] == pytest.approx(ref, abs=4 * s / 1e3)


def test_shift_by_mode():
    assert shift_of(0.01, "superiority") == 0.01
    assert shift_of(0.01, "non_inferiority") == -0.01


# (P(d > s), L_deploy, L_keep) -> action, with p_min 0.95 and threshold 0.001
@pytest.mark.parametrize(
    ("p_above", "loss_deploy", "loss_keep", "action"),
    [
        (0.99, 0.0001, 0.03, "deploy"),  # probable and cheap: deploy
        (0.95, 0.001, 0.03, "deploy"),  # both bounds are inclusive
        (0.99, 0.002, 0.03, "collect more data"),  # probable but a costly mistake
        (0.90, 0.0001, 0.03, "collect more data"),  # cheap but not probable enough
        (0.01, 0.03, 0.0001, "keep champion"),
        (0.05, 0.03, 0.001, "keep champion"),
        (0.01, 0.03, 0.002, "collect more data"),
        (0.50, 0.0005, 0.0005, "collect more data"),  # a coin flip is never acted on
    ],
)
def test_choose_covers_every_region(p_above, loss_deploy, loss_keep, action):
    got = choose(np.array([p_above]), np.array([loss_deploy]), np.array([loss_keep]),
                 threshold=0.001, p_min=0.95)  # fmt: skip
    assert got[0] == action
    assert action in ACTIONS


@pytest.mark.parametrize(
    ("passed", "fits", "expected"),
    [(True, True, "deploy"), (False, True, UNRELIABLE), (True, False, UNRELIABLE)],
)
def test_an_untrusted_posterior_never_deploys(passed, fits, expected):
    assert reliable_action("deploy", diagnostics_passed=passed, model_fits=fits) == expected
