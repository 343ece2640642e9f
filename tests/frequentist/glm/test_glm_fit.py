"""fit_glm against R's glm (recorded numbers), statsmodels' GLM, and closed forms."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from results import glm as ref
from scipy import stats

from bayes_ir.errors import (
    ConvergenceWarning,
    InsufficientDataError,
    OptionError,
    ScoreTableError,
)
from bayes_ir.frequentist.glm import (
    UnknownLinkError,
    compare_links,
    fit_glm,
    link_names,
    tukey_hsd,
)
from bayes_ir.table import ScoreTable


@pytest.mark.parametrize("link", link_names(extra=True))
def test_matches_recorded_r_glm(ref_table, link):
    fit = fit_glm(ref_table, link=link, epsilon=ref.EPSILON)
    r = ref.R_STATS[link]
    assert fit.converged
    assert fit.df_resid == r["df_resid"]
    assert fit.n_clipped == r["n_clipped"]
    np.testing.assert_allclose(fit.deviance, r["deviance"], rtol=1e-10)
    np.testing.assert_allclose(
        [fit.llf, fit.aic, fit.bic], [r["llf"], r["aic"], r["bic"]], rtol=1e-10
    )
    coef = ref.R_COEF[link]
    np.testing.assert_allclose(fit.params, coef["estimate"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fit.bse, coef["std_err"], rtol=1e-6)
    assert fit.param_names[:2] == ("(Intercept)", "system[chal_dense]")
    assert fit.param_names[-1] == "topic[420]"


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.DomainWarning")
@pytest.mark.parametrize("link", ["log", "exp", "tanh", "atanh", "cauchit"])
@pytest.mark.parametrize("shape", [(20, 10), (6, 10)], ids=["topics>systems", "systems>topics"])
def test_structured_irls_equals_statsmodels(ref_table, link, shape):
    table = ref_table.select(topics=ref.TOPICS[: shape[0]], systems=ref.SYSTEMS[: shape[1]])
    fast = fit_glm(table, link=link)
    dense = fit_glm(table, link=link, method="statsmodels")
    assert dense.method == "statsmodels" and dense.converged
    np.testing.assert_allclose(fast.deviance, dense.deviance, rtol=1e-10)
    np.testing.assert_allclose(fast.params, dense.params, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fast.cov, dense.cov, rtol=1e-5, atol=1e-10)


def test_identity_link_is_the_two_way_anova(ref_table):
    fit = fit_glm(ref_table, link="identity")
    y = np.array(ref.SCORES)
    two_way = y.mean(1, keepdims=True) + y.mean(0, keepdims=True) - y.mean()
    np.testing.assert_allclose(fit.fitted, two_way, atol=1e-12)
    np.testing.assert_allclose(fit.deviance, ((y - two_way) ** 2).sum(), rtol=1e-12)
    np.testing.assert_allclose(fit.system_effects, y.mean(0) - y.mean(0)[0], atol=1e-12)
    t_n = y.shape[0]
    se = np.sqrt(2 * fit.scale / t_n)  # balanced design: every system contrast has this SE
    np.testing.assert_allclose(np.sqrt(np.diag(fit.system_cov()))[1:], se, rtol=1e-10)
    assert fit.n_clipped == 0 and fit.iterations >= 1


def test_result_frames_and_intervals(ref_table):
    fit = fit_glm(ref_table, link="probit")
    frame = fit.to_frame()
    assert list(frame.columns) == ["term", "estimate", "std_err", "t_value", "p_value"]
    assert len(frame) == fit.n_params == 1 + 9 + 19
    ci = fit.conf_int(ci_prob=0.9)
    half = stats.t.ppf(0.95, fit.df_resid) * fit.bse
    np.testing.assert_allclose(ci["ci_upper"] - ci["estimate"], half)
    np.testing.assert_allclose(fit.pvalues, 2 * stats.t.sf(np.abs(fit.params / fit.bse), 171))
    text = fit.summary()
    assert "link probit" in text and "converged" in text and "clipped 2 score(s)" in text
    assert str(fit) == text
    assert fit.cov_params().shape == (29, 29)
    assert fit.fit_statistics()["n_params"] == 29


def test_clip_and_drop_systems(ref_table):
    clipped = fit_glm(ref_table, link="logit", epsilon=1e-3)
    assert clipped.n_clipped == 2
    assert clipped.response.min() == pytest.approx(1e-3) and clipped.response.max() == 0.999
    # identity, exp and the paper's tanh have no finite mean bound: nothing is clipped
    assert fit_glm(ref_table, link="exp").n_clipped == 0
    assert fit_glm(ref_table, link="tanh").n_clipped == 0
    assert fit_glm(ref_table, link="atanh").n_clipped == 1  # chal_risky's score of 1
    # drop systems under a mean threshold (the paper's "without outliers" variant)
    means = np.array(ref.SCORES).mean(0)
    floor = np.sort(means)[2]  # drops the two systems with the lowest mean
    dropped = fit_glm(ref_table, link="log", boundary="drop_systems", min_mean=floor)
    expected = tuple(s for s, m in zip(ref.SYSTEMS, means, strict=True) if m < floor)
    assert dropped.dropped_systems == expected and len(expected) == 2
    assert len(dropped.systems) == 8 and dropped.nobs == 160
    assert "dropped 2 system(s)" in dropped.message
    # the same as fitting the table without those systems
    kept = [s for s in ref.SYSTEMS if s not in expected]
    direct = fit_glm(ref_table.select(systems=kept), link="log")
    np.testing.assert_allclose(dropped.deviance, direct.deviance, rtol=1e-12)


def test_degenerate_system_is_reported_not_hidden(ref_table):
    y = np.array(ref.SCORES)
    y[:, 3] = 0.0  # a broken run: every score 0
    table = ScoreTable.from_matrix(y, systems=ref.SYSTEMS, topics=ref.TOPICS)
    with pytest.warns(ConvergenceWarning, match="log link .* did not converge"):
        bad = fit_glm(table, link="log", boundary="none", maxiter=30)
    assert not bad.converged and "did not converge" in bad.message
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fixed = fit_glm(table, link="log")  # clipping keeps the MLE finite
        fixed_drop = fit_glm(table, link="log", boundary="drop_systems")
    assert fixed.converged and fixed.n_clipped == 21  # 20 of the broken run + topic 404
    assert fixed_drop.dropped_systems == (ref.SYSTEMS[3],)


def test_bad_input(ref_table):
    with pytest.raises(UnknownLinkError):
        fit_glm(ref_table, link="inverse")
    with pytest.raises(InsufficientDataError, match="at least 2 systems"):
        fit_glm(ref_table.select(systems=["bm25"]))
    with pytest.raises(InsufficientDataError, match="at least 3 topics"):
        fit_glm(ref_table.select(topics=["401", "402"]))
    with pytest.raises(InsufficientDataError, match="at least 2 systems"):
        fit_glm(ref_table, boundary="drop_systems", min_mean=0.5)
    with pytest.raises(ValueError, match="boundary"):
        fit_glm(ref_table, boundary="winsorize")
    frame = ref_table.data.iloc[1:]
    gappy = ScoreTable.from_frame(frame, missing="keep")
    with pytest.raises(ScoreTableError, match="missing='intersect'"):
        fit_glm(gappy)
    with pytest.raises(ScoreTableError, match="needs a ScoreTable"):
        fit_glm(pd.DataFrame({"a": [1]}))


@pytest.mark.parametrize("value", [0.5, 0.0, 0.1 + 0.2])
def test_constant_scores_are_refused(value):
    # All-constant scores gave "26 of 28 pairs significant" (rounding residue / tiny scale).
    table = ScoreTable.from_matrix(
        np.full((10, 8), value), systems=[f"s{i}" for i in range(8)], measure="AP"
    )
    with pytest.raises(InsufficientDataError, match=f"every score is {value:g}.*no variance"):
        fit_glm(table, link="logit")
    with pytest.raises(InsufficientDataError, match="no variance"):
        compare_links(table, links=["identity", "cloglog"])


@pytest.mark.parametrize(
    ("option", "value"),
    [("epsilon", 0.5), ("epsilon", float("nan")), ("epsilon", -1e-3), ("maxiter", 0),
     ("maxiter", 2.5), ("tol", 0.0), ("boundary", "clamp"), ("method", "newton")],
)  # fmt: skip
def test_bad_options_name_the_argument(option, value):
    rng = np.random.default_rng(0)
    table = ScoreTable.from_matrix(rng.uniform(0.1, 0.9, (6, 3)), systems=list("abc"))
    with pytest.raises(OptionError, match=rf"^{option} must"):
        fit_glm(table, **{option: value})


@pytest.mark.parametrize("alpha", [0.0, 1.0, float("nan"), "0.05", 1j])
def test_bad_alpha(alpha):
    rng = np.random.default_rng(0)
    table = ScoreTable.from_matrix(rng.uniform(0.1, 0.9, (6, 3)), systems=list("abc"))
    with pytest.raises(OptionError, match="^alpha must"):
        tukey_hsd(table, alpha=alpha)
    with pytest.raises(OptionError, match="^alpha must"):
        compare_links(table, links=["logit"], alpha=alpha)
