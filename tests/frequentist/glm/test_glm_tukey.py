"""Topic-blocked Tukey HSD against R's TukeyHSD and multcomp, and the studentized range tail."""

from __future__ import annotations

import numpy as np
import pytest
from results import glm as ref
from scipy.stats import studentized_range

from bayes_ir.errors import ConvergenceWarning, ScoreTableError
from bayes_ir.frequentist.glm import fit_glm, tukey_hsd
from bayes_ir.frequentist.glm.tukey import _ptukey_sf, _sf_interpolated
from bayes_ir.table import ScoreTable


def test_identity_link_equals_r_tukeyhsd_on_two_way_anova(ref_table):
    res = tukey_hsd(ref_table)  # identity link: aov(score ~ system + topic)
    frame = res.to_frame()
    assert list(frame["pair"]) == ref.R_TUKEY["pair"]
    np.testing.assert_allclose(frame["diff"], ref.R_TUKEY["diff"], atol=1e-12)
    np.testing.assert_allclose(frame["lwr"], ref.R_TUKEY["lwr"], atol=1e-8)
    np.testing.assert_allclose(frame["upr"], ref.R_TUKEY["upr"], atol=1e-8)
    np.testing.assert_allclose(frame["p_adj"], ref.R_TUKEY["p_adj"], atol=5e-9)
    significant = np.array(ref.R_TUKEY["p_adj"]) < 0.05
    np.testing.assert_array_equal(frame["significant"], significant)
    assert res.n_significant == significant.sum() == 2
    assert res.df_resid == 171 and res.n_pairs == 45


def test_logit_contrasts_equal_multcomp_glht(ref_table):
    res = tukey_hsd(fit_glm(ref_table, link="logit"))
    frame = res.to_frame()
    assert list(frame["pair"]) == ref.R_GLHT_LOGIT["pair"]
    np.testing.assert_allclose(frame["diff"], ref.R_GLHT_LOGIT["estimate"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(frame["se"], ref.R_GLHT_LOGIT["std_err"], rtol=1e-6)
    # p adj is the studentized range tail of each Wald contrast (Tukey-Kramer form)
    q = np.sqrt(2) * np.abs(frame["diff"]) / frame["se"]
    np.testing.assert_allclose(frame["statistic"], q)
    np.testing.assert_allclose(frame["p_adj"], studentized_range.sf(q, 10, 171), atol=1e-12)
    crit = studentized_range.ppf(0.95, 10, 171)
    np.testing.assert_allclose(frame["upr"] - frame["diff"], crit * frame["se"] / np.sqrt(2))
    assert res.significant_pairs() == [
        (a, b) for a, b, s in zip(frame["system_1"], frame["system_2"], q > crit, strict=True) if s
    ]


def test_conf_int_family_coverage(ref_table):
    res = tukey_hsd(ref_table, alpha=0.05)
    wide = res.conf_int(ci_prob=0.99)
    crit = studentized_range.ppf(0.99, 10, 171)
    np.testing.assert_allclose(wide["ci_upper"] - wide["diff"], crit * res.se / np.sqrt(2))
    same = res.conf_int()
    np.testing.assert_allclose(same["ci_lower"], res.lwr)
    assert "2 of 45" in res.summary()


def test_blocking_matters():
    # one-way Tukey (statsmodels' pairwise_tukeyhsd, ranx) keeps the topic variance in
    # the error term; blocked by topic, the same difference is far more precise.
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    rng = np.random.default_rng(11)
    topic = rng.normal(0.4, 0.2, size=(30, 1))
    y = np.clip(topic + np.array([0.0, 0.04, 0.01]) + rng.normal(0, 0.03, (30, 3)), 0, 1)
    table = ScoreTable.from_matrix(y, systems=["a", "b", "c"])
    blocked = tukey_hsd(table).to_frame().set_index("pair")
    one_way = pairwise_tukeyhsd(y.T.ravel(), np.repeat(["a", "b", "c"], 30))
    p_one_way = dict(zip(["b-a", "c-a", "c-b"], one_way.pvalues, strict=True))
    assert p_one_way["b-a"] > 0.05 > blocked.loc["b-a", "p_adj"]
    np.testing.assert_allclose(blocked["diff"], [0.04, 0.01, -0.03], atol=0.02)


def test_interpolated_tail_matches_scipy():
    q = np.concatenate([np.linspace(0, 9, 37), [0.013, 4.4445, 6.1]])
    exact = studentized_range.sf(q, 40, 2000)
    np.testing.assert_allclose(_sf_interpolated(q, 40, 2000), exact, atol=1e-10)
    # many pairs take the interpolated path; far tails are 0 as in R's ptukey
    many = np.linspace(0, 60, 400)
    p = _ptukey_sf(many, 40, 2000)
    assert p[0] == 1.0 and p[-1] == 0.0 and np.all(np.diff(p) <= 1e-12)
    np.testing.assert_allclose(p[::50], studentized_range.sf(many[::50], 40, 2000), atol=1e-10)


def test_bad_input_and_warnings(ref_table):
    with pytest.raises(ScoreTableError, match="GLMFitResult or a ScoreTable"):
        tukey_hsd([1, 2, 3])
    with pytest.raises(ValueError, match="alpha"):
        tukey_hsd(ref_table, alpha=1.5)
    y = np.array(ref.SCORES)
    y[:, 3] = 0.0
    table = ScoreTable.from_matrix(y, systems=ref.SYSTEMS, topics=ref.TOPICS)
    with pytest.warns(ConvergenceWarning):
        fit = fit_glm(table, link="log", boundary="none")
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        tukey_hsd(fit)
