"""The more-topics (pre-posterior) analysis against its closed form, statsmodels' and
scipy's power calculations, and a brute-force simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from bayes_ir.decision.more_topics import more_topics, sakai_topics
from bayes_ir.decision.rules import gaussian_positive_part, risk_adjusted_difference


def _closed_form(mu, v, s2, k, shift, eps, p_min):
    """P(deploy) and P(keep) after k topics when d ~ N(mu, v) and s2 is known.

    The updated mean mu' = v'(mu/v + k mean_new/s2) with mean_new ~ N(mu, v + s2/k) is
    normal; deploy iff mu' >= c_deploy, keep iff mu' <= c_keep (both rules are monotone).
    """
    v1 = 1 / (1 / v + k / s2)
    sd1 = np.sqrt(v1)
    sd_mu = v1 * k / s2 * np.sqrt(v + s2 / k)
    c_prob = shift + sd1 * stats.norm.ppf(p_min)
    c_loss = optimize.brentq(lambda c: gaussian_positive_part(shift - c, sd1) - eps, -5, 5)
    c_deploy = max(c_prob, c_loss)
    k_prob = shift - sd1 * stats.norm.ppf(p_min)
    k_loss = optimize.brentq(lambda c: gaussian_positive_part(c - shift, sd1) - eps, -5, 5)
    c_keep = min(k_prob, k_loss)
    return stats.norm.sf(c_deploy, mu, sd_mu), stats.norm.cdf(c_keep, mu, sd_mu)


@pytest.mark.parametrize(("mu", "mode"), [(0.012, "superiority"), (-0.004, "non_inferiority")])
def test_matches_the_closed_form_of_the_normal_model(mu, mode):
    rng = np.random.default_rng(5)
    v, s2, margin, eps, p_min = 0.01**2, 0.08**2, 0.01, 0.001, 0.95
    d = rng.normal(mu, np.sqrt(v), size=400_000)
    d = mu + (d - d.mean()) * np.sqrt(v) / d.std(ddof=1)  # exact mean and variance
    frame = more_topics(d, np.full(d.size, s2), margin=margin, mode=mode, threshold=eps,
                        p_min=p_min, topics=(10, 50, 200), n_sim=20_000, seed=1)  # fmt: skip
    shift = margin if mode == "superiority" else -margin
    for row in frame.itertuples(index=False):
        p_deploy, p_keep = _closed_form(mu, v, s2, row.topics_added, shift, eps, p_min)
        se = np.sqrt(0.25 / 20_000)
        assert abs(row.p_deploy - p_deploy) < 4 * se, (row.topics_added, row.p_deploy, p_deploy)
        assert abs(row.p_keep - p_keep) < 4 * se, (row.topics_added, row.p_keep, p_keep)
        assert row.p_deploy + row.p_keep + row.p_undecided == pytest.approx(1.0)
    assert frame["p_decisive"].is_monotonic_increasing


def test_risk_weighted_losses_match_brute_force():
    """r > 1: the quadrature losses equal a Monte Carlo integral over the updated posterior."""
    rng = np.random.default_rng(6)
    mu, v, s2, r = 0.03, 0.01**2, 0.08**2, 3.0
    d = rng.normal(mu, np.sqrt(v), size=100_000)
    frame = more_topics(d, np.full(d.size, s2), margin=0.0, mode="superiority", threshold=1e-3,
                        p_min=0.9, r=r, topics=(25,), n_sim=4000, seed=2)  # fmt: skip
    # brute force: the same simulation with the updated posterior sampled, not integrated
    rng2 = np.random.default_rng(2)
    pick = rng2.integers(0, d.size, size=4000)
    mean_new = d[pick] + np.sqrt(s2 / 25) * rng2.standard_normal(4000)
    mu_d, v_d = d.mean(), d.var(ddof=1)
    v1 = 1 / (1 / v_d + 25 / s2)
    mu1 = v1 * (mu_d / v_d + 25 * mean_new / s2)
    draws = mu1[:, None] + np.sqrt(v1) * rng.standard_normal((4000, 4000))
    dr = risk_adjusted_difference(draws, np.sqrt(s2), r)
    loss = np.minimum(np.maximum(-dr, 0).mean(axis=1), np.maximum(dr, 0).mean(axis=1))
    assert frame["expected_loss"].iloc[0] == pytest.approx(loss.mean(), rel=0.02)


@pytest.mark.parametrize(("effect", "n"), [(0.5, 34), (0.8, 15), (0.2, 199)])
def test_sakai_topics_equals_g_power_values(effect, n):
    """Paired (one-sample) t-test, two-sided, alpha 0.05, power 0.8: G*Power's sample sizes."""
    assert sakai_topics(1.0, effect) == n


def test_sakai_topics_is_the_smallest_n_with_enough_power():
    """Power by scipy's noncentral t reaches 0.8 at n and not at n - 1."""
    sd, min_d = 0.12, 0.03
    n = sakai_topics(sd, min_d)

    def power(m):
        crit = stats.t.ppf(0.975, m - 1)
        nc = min_d / sd * np.sqrt(m)
        return stats.nct.sf(crit, m - 1, nc) + stats.nct.cdf(-crit, m - 1, nc)

    assert power(n) >= 0.8 > power(n - 1)
