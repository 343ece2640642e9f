"""Autoscaled priors and the prior predictive check."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.hierarchical import Priors, prior_predictive
from bayes_ir.hierarchical.priors import autoscale_priors
from bayes_ir.hierarchical.skewnormal import SKEWNESS_MAX
from bayes_ir.table import ScoreTable


@pytest.fixture(scope="module")
def table() -> ScoreTable:
    rng = np.random.default_rng(0)
    y = np.clip(0.3 + rng.normal(0, 0.15, (20, 1)) + rng.normal(0, 0.08, (20, 6)), 0, 1)
    return ScoreTable.from_matrix(
        y, systems=["a", "b", "c", "d", "e", "f"], measure="AP"
    ).with_roles(champion="a", challengers=["b"])


def test_autoscale_rules(table):
    y = table.matrix().values.ravel()
    p = Priors().resolve(y)
    s = np.std(y, ddof=1)
    assert p.b0_mu == pytest.approx(y.mean()) and p.b0_sd == pytest.approx(2.5 * s)
    assert p.sigma_rate == pytest.approx(1 / s) == p.sigma_topic_rate == p.sigma_system_rate
    assert p.skewness_max == pytest.approx(0.99 * SKEWNESS_MAX) and p.is_resolved
    fixed = Priors(sigma_system_rate=100.0).resolve(y)
    assert fixed.sigma_system_rate == 100.0 and fixed.sigma_rate == pytest.approx(1 / s)
    assert "Exponential(rate=100)" in fixed.describe()


def test_bad_priors():
    with pytest.raises(OptionError, match="^prior b0_sd must be greater than 0, got -1$"):
        Priors(b0_sd=-1.0)
    with pytest.raises(OptionError, match="^prior b0_mu must be a finite number, got nan$"):
        Priors(b0_mu=float("nan"))
    with pytest.raises(OptionError, match="^prior sigma_rate must be a real number, got '1'"):
        Priors(sigma_rate="1")
    with pytest.raises(OptionError, match="^prior skewness_max must be less than 0.995272, got 1$"):
        Priors(skewness_max=1.0)
    with pytest.raises(OptionError, match="^priors must be a Priors, got dict$"):
        autoscale_priors(np.arange(4.0), {"b0_sd": 1})
    with pytest.raises(InsufficientDataError, match="every score is 0.5: with no variance"):
        Priors().resolve(np.full(10, 0.5))
    with pytest.raises(InsufficientDataError, match="every score is 0.3"):  # rounding residue
        Priors().resolve(np.full(10, 0.1) + np.full(10, 0.2))


def test_prior_predictive_moments(table):
    pp = prior_predictive(table, draws=4000, seed=1)
    p = pp.priors
    n_t, n_s = pp.observed.shape
    # grand mean of a simulated matrix = b0 + mean error: its SD is ~ b0_sd
    grand = pp.simulated.mean(axis=(1, 2))
    assert grand.std() == pytest.approx(p.b0_sd, rel=0.05)
    assert grand.mean() == pytest.approx(p.b0_mu, abs=4 * p.b0_sd / np.sqrt(4000))
    # within-matrix variance: E[sigma^2 + tau^2 (T-1)/T + chi^2 (S-1)/S] with
    # E[x^2] = 2 / rate^2 for Exponential scales, minus the grand-mean part
    within = pp.simulated.var(axis=(1, 2), ddof=0).mean()
    want = 2 / p.sigma_rate**2 * (1 - 1 / (n_t * n_s))
    want += 2 / p.sigma_topic_rate**2 * (n_t - 1) / n_t
    want += 2 / p.sigma_system_rate**2 * (n_s - 1) / n_s
    assert within == pytest.approx(want, rel=0.08)
    frame = pp.to_frame()
    assert list(frame["statistic"]) == ["mean", "sd", "min", "max"]
    # share of scores in [0, 1] against an independent simulation of the same prior:
    # b0 ~ N, Exponential scales, zero-sum effects (centred i.i.d. normals), N residuals.
    # Draws are the independent units: 4 SEs of the difference of the two means.
    rng = np.random.default_rng(99)
    d = 4000
    tau = rng.exponential(1 / p.sigma_topic_rate, (d, 1))
    chi = rng.exponential(1 / p.sigma_system_rate, (d, 1))
    a = rng.standard_normal((d, n_t))
    c = rng.standard_normal((d, n_s))
    y = (
        rng.normal(p.b0_mu, p.b0_sd, (d, 1, 1))
        + ((a - a.mean(axis=1, keepdims=True)) * tau)[:, :, None]
        + ((c - c.mean(axis=1, keepdims=True)) * chi)[:, None, :]
        + rng.exponential(1 / p.sigma_rate, (d, 1, 1)) * rng.standard_normal((d, n_t, n_s))
    )
    assert pp.score_range == (0.0, 1.0)
    ours = ((pp.simulated >= 0) & (pp.simulated <= 1)).mean(axis=(1, 2))
    ref = ((y >= 0) & (y <= 1)).mean(axis=(1, 2))
    assert pp.share_in_range == pytest.approx(ours.mean(), abs=1e-12)
    se = np.sqrt(ours.var() / len(ours) + ref.var() / d)
    assert abs(pp.share_in_range - ref.mean()) < 4 * se, (pp.share_in_range, ref.mean(), se)
    assert f"inside (0.0, 1.0): {pp.share_in_range:.1%}" in pp.summary()
    skew = prior_predictive(table, likelihood="skew_normal", draws=200, seed=1)
    assert skew.simulated.shape == (200, n_t, n_s)
