"""Bernoulli and binomial families: data checks, score-scale means, cells, a fit end to end.

References: scipy (``binom``, ``integrate.quad``) for the cells and the quadrature of the
score-scale means; the posterior's own draws for the contrasts (a contrast is the
difference of two systems' score-scale means, draw by draw).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from bayes_ir.errors import BayesIRError, OptionError, ScoreTableError
from bayes_ir.hierarchical import compare, fit, posterior_predictive
from bayes_ir.hierarchical.families import (
    Bernoulli,
    Binomial,
    comparable,
    family_of,
    get_family,
    population_mean,
)
from bayes_ir.hierarchical.model import design_of
from bayes_ir.table import ScoreTable


def _table(n_t: int, n_s: int, trials: int, *, seed: int, measure: str | None = None):
    rng = np.random.default_rng(seed)
    eta = rng.normal(0.5, 1.2, (n_t, 1)) + np.linspace(-0.4, 0.4, n_s)[None, :]
    y = rng.binomial(trials, special.expit(eta)) / trials
    measure = measure or ("accuracy" if trials == 1 else f"P@{trials}")
    table = ScoreTable.from_matrix(y, systems=[f"s{i}" for i in range(n_s)], measure=measure)
    return table.with_roles(champion="s0", challengers=["s1", "s2"])


@pytest.fixture(scope="module")
def bernoulli_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit(_table(60, 5, 1, seed=1), likelihood="bernoulli", seed=3)


@pytest.fixture(scope="module")
def binomial_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit(_table(40, 4, 10, seed=2), likelihood="binomial", seed=3)


def test_specs_parse_back_and_name_their_outcome_space():
    fam = get_family("binomial(trials=10)")
    assert isinstance(fam, Binomial) and fam.spec == "binomial(trials=10)"
    assert get_family(fam.spec) == fam and get_family("bernoulli") == Bernoulli()
    assert fam.outcome_space == "counts" and Bernoulli().outcome_space == "binary"
    assert not comparable(fam, get_family("gaussian"))
    assert comparable(get_family("gaussian"), get_family("skew-normal"))
    with pytest.raises(OptionError, match="did you mean 'bernoulli'"):
        get_family("bernouli")
    with pytest.raises(OptionError, match="no option 'trial'"):
        get_family("binomial(trial=3)")
    with pytest.raises(OptionError, match="trials must be at least 1"):
        get_family("binomial(trials=0)")


def test_trials_come_from_the_option_or_the_measure():
    design = design_of(_table(8, 3, 10, seed=0))
    assert get_family("binomial").resolved(design).spec == "binomial(trials=10)"
    other = design_of(_table(8, 3, 5, seed=0, measure="accuracy"))
    with pytest.raises(ScoreTableError, match="no cutoff; give likelihood='binomial"):
        get_family("binomial").resolved(other)
    assert get_family("binomial(trials=5)").resolved(other).spec == "binomial(trials=5)"


def _with_score(trials: int, value: float) -> tuple[ScoreTable, str, str]:
    """A table whose first cell is ``value``; returns it with that cell's topic and system."""
    frame = _table(8, 3, trials, seed=0).data.copy()
    frame.loc[frame.index[0], "score"] = value
    row = frame.loc[frame.index[0]]
    table = ScoreTable.from_frame(frame).with_roles(champion="s0", challengers=["s1"])
    return table, str(row.topic), str(row.system)


def test_scores_the_family_cannot_describe_are_named():
    table, topic, system = _with_score(1, 0.5)
    with pytest.raises(ScoreTableError, match=f"topic '{topic}', system '{system}' has 0.5"):
        fit(table, likelihood="bernoulli")
    table, topic, system = _with_score(10, 0.55)
    with pytest.raises(ScoreTableError, match="k/10 with k a whole number from 0 to 10; topic"):
        fit(table, likelihood="binomial")


def test_no_residual_dispersion():
    with pytest.raises(BayesIRError, match="sigma='system' does not apply to the bernoulli"):
        fit(_table(8, 3, 1, seed=0), likelihood="bernoulli", sigma="system")


def test_every_item_answered_right_is_data_not_an_error():
    """All 1s: the logit priors need no score variance; the difference is 0, by symmetry.

    With 40 items right for both systems the posterior of each accuracy is the prior pushed
    towards 1, the same for both; a Gaussian model of the same table has nothing to explain.
    The interval is narrower than that of two separate Beta(41, 1) posteriors (uniform
    priors, nothing shared), since the intercept and the topic effects are shared.
    """
    table = ScoreTable.from_matrix(np.ones((40, 2)), systems=["a", "b"], measure="accuracy")
    table = table.with_roles(champion="a", challengers=["b"])
    res = fit(table, likelihood="bernoulli", chains=2, draws=1000, seed=3)
    assert res.pooling == "none"  # auto: two systems, no artifact runs
    row = compare(res).conf_int(0.95).iloc[0]
    beta = stats.beta(41, 1).rvs((2, 200_000), random_state=np.random.default_rng(0))
    separate = np.diff(np.quantile(beta[1] - beta[0], [0.025, 0.975]))[0]
    assert row["ci_lower"] < 0 < row["ci_upper"] and row["ci_upper"] - row["ci_lower"] < separate
    assert float(res.draws["system_mean"].mean()) > 0.97
    with pytest.raises(BayesIRError, match="every score is 1: with no variance"):
        fit(table, likelihood="gaussian")


def _normal_pdf(z: float) -> float:
    """The standard normal density of a float (``scipy.stats.norm.pdf`` costs 50 us a call)."""
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


@pytest.mark.parametrize("sd", [0.0, 0.3, 1.0, 2.5, 6.0])
def test_population_mean_equals_adaptive_quadrature(sd):
    for eta in (-4.0, -0.7, 0.0, 1.3, 5.0):
        ref = integrate.quad(
            lambda z, e=eta: special.expit(e + sd * z) * _normal_pdf(z), -np.inf, np.inf,
            epsabs=1e-13, epsrel=1e-13,
        )[0]  # fmt: skip
        assert population_mean(np.array(eta), np.array(sd)) == pytest.approx(ref, abs=1e-9)


def _expected(eta: float, sd: float) -> float:
    """E[logit^-1(eta + sd Z)] by adaptive quadrature."""
    return integrate.quad(lambda z: special.expit(eta + sd * z) * _normal_pdf(z), -20, 20)[0]


def test_system_means_are_the_topic_population_means(bernoulli_fit):
    """Each draw's means share one intercept of the topic population, drawn given ``b0``.

    Solved from one system's mean by root finding, the intercept gives the other system's mean
    (items N(0, sigma_topic^2) about it, by adaptive quadrature); over the draws, ``b0`` minus
    it (the fitted items' mean effect) has the conditional mean and variance of
    ``population_intercept``.
    """
    post = bernoulli_fit.draws
    means = bernoulli_fit.system_mean_draws()
    b0, tau = post["b0"].values, post["sigma_topic"].values
    u = {s: post["system_effect"].sel(system=s).values for s in ("s0", "s1")}
    m = {s: means.sel(system=s).values for s in ("s0", "s1")}
    for i, j in ((1, 17), (0, 400), (3, 999)):
        beta = optimize.brentq(
            lambda x, i=i, j=j: _expected(x + u["s1"][i, j], tau[i, j]) - m["s1"][i, j], -20, 20,
            xtol=1e-12,
        )  # fmt: skip
        assert m["s0"][i, j] == pytest.approx(_expected(beta + u["s0"][i, j], tau[i, j]), abs=1e-7)
    hyper = family_of(bernoulli_fit).resolve_priors(design_of(bernoulli_fit.table), None).values()
    v = tau**2 / bernoulli_fit.n_topics
    k = v / (hyper.b0_sd**2 + v)
    beta = np.array([
        optimize.brentq(lambda x, e=e, t=t, y=y: _expected(x + e, t) - y, -20, 20)
        for e, t, y in zip(u["s1"].ravel()[:400], tau.ravel()[:400], m["s1"].ravel()[:400],
                           strict=True)
    ])  # fmt: skip
    abar = b0.ravel()[:400] - beta - k.ravel()[:400] * (b0.ravel()[:400] - hyper.b0_mu)
    z = abar / np.sqrt(k.ravel()[:400] * hyper.b0_sd**2)
    assert abs(z.mean()) < 4 / np.sqrt(400) and 0.85 < z.std() < 1.15
    assert family_of(bernoulli_fit).spec == "bernoulli"


def test_contrasts_are_differences_of_score_scale_means(bernoulli_fit):
    res = compare(bernoulli_fit)
    means = bernoulli_fit.system_mean_draws()
    want = (means.sel(system="s1") - means.sel(system="s0")).values
    np.testing.assert_allclose(res.differences.sel(challenger="s1").values, want)
    assert "expected score over the topic population" in res.summary()
    assert "logit" not in res.to_frame().columns


def test_bernoulli_fit_passes_its_checks_and_summarises(bernoulli_fit):
    assert bernoulli_fit.diagnostics.passed
    assert bernoulli_fit.model_check.passed
    text = bernoulli_fit.summary()
    assert "likelihood: bernoulli" in text and "logit scale" in text
    assert "sigma " not in text  # no residual SD
    # Bernoulli: exact 0s and 1s are the mean and its complement, not checked apart
    assert bernoulli_fit.model_check.frame["ppp_zeros"].isna().all()


def test_binomial_cells_equal_scipy(binomial_fit):
    family = family_of(binomial_fit)
    params = family.parameters(binomial_fit.draws, np.arange(5))
    cells = family.cells(params, np.array([0, 2]))
    p = special.expit(cells.eta)
    y = np.tile(np.array([0.0, 0.3, 1.0, 0.7])[None, :], (2, binomial_fit.n_topics // 4))
    below, at = cells.cdf(y[None])
    k = np.rint(10 * y)[None]
    np.testing.assert_allclose(at, stats.binom.cdf(k, 10, p), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(below, stats.binom.cdf(k - 1, 10, p), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(cells.logpdf(y[None]), stats.binom.logpmf(k, 10, p), rtol=1e-10)
    rep = cells.rvs(np.random.default_rng(0))
    assert set(np.unique(rep * 10)) <= set(range(11))


def test_bernoulli_cells_closed_forms_equal_scipy(bernoulli_fit):
    """One trial: the CDF and the replicates in closed form equal scipy's Bernoulli."""
    family = family_of(bernoulli_fit)
    cells = family.cells(family.parameters(bernoulli_fit.draws, np.arange(200)), np.array([0, 2]))
    assert cells.trials == 1
    p = special.expit(cells.eta)
    y = np.tile(np.array([0.0, 1.0])[None, :], (2, bernoulli_fit.n_topics // 2))
    y = np.pad(y, ((0, 0), (0, bernoulli_fit.n_topics - y.shape[1])))
    below, at = cells.cdf(y[None])
    np.testing.assert_allclose(at, stats.bernoulli.cdf(y[None], p), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(below, stats.bernoulli.cdf(y[None] - 1, p), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cells.mean, p, rtol=1e-15)
    rep = cells.rvs(np.random.default_rng(0))
    assert set(np.unique(rep)) <= {0.0, 1.0}
    # the replicates' share of 1s per cell over 200 draws: within 5 binomial SEs of p's mean
    freq, want = rep.mean(axis=0), p.mean(axis=0)
    se = np.sqrt(np.maximum(want * (1 - want), 1e-3) / rep.shape[0])
    assert np.all(np.abs(freq - want) < 5 * se)


def test_binomial_model_check_counts_exact_zeros_and_ones(binomial_fit):
    frame = binomial_fit.model_check.to_frame()
    y = binomial_fit.table.matrix().to_pandas()
    np.testing.assert_allclose(frame["share_zeros"], (y == 0).mean().to_numpy())
    np.testing.assert_allclose(frame["share_ones"], (y == 1).mean().to_numpy())
    assert frame[["pred_zeros", "pred_ones", "ppp_zeros", "ppp_ones"]].notna().all().all()
    assert "zeros obs/pred" in binomial_fit.model_check.summary()


def test_predictive_intervals_are_proportions(binomial_fit):
    pred = posterior_predictive(binomial_fit, ci_prob=0.9)
    frame = pred.to_frame()
    assert ((frame["ci_lower"] >= 0) & (frame["ci_upper"] <= 1)).all()
    assert set(np.unique(np.rint(frame["ci_lower"] * 10) / 10)) <= set(np.arange(11) / 10)
    assert 0.85 <= pred.coverage <= 1.0


def test_pointwise_log_likelihood_is_the_binomial_mass(binomial_fit):
    from bayes_ir.hierarchical.fit import log_likelihood_draws

    post = binomial_fit.draws.isel(draw=slice(0, 3))
    design = design_of(binomial_fit.table)
    ll = log_likelihood_draws(post, design, "binomial(trials=10)")
    eta = (post["b0"] + post["topic_effect"] + post["system_effect"]).transpose(
        "chain", "draw", "topic", "system"
    )
    ref = stats.binom.logpmf(np.rint(design.matrix * 10), 10, special.expit(eta.values))
    np.testing.assert_allclose(ll.values, ref, rtol=1e-9)


def test_working_information_is_the_fisher_information_of_the_logit(binomial_fit):
    """n p (1 - p) per cell: the information of a binomial proportion about its logit."""
    family = family_of(binomial_fit)
    cells = family.cells(family.parameters(binomial_fit.draws, np.arange(3)), np.array([0, 2]))
    p = special.expit(cells.eta)
    np.testing.assert_allclose(cells.information, 10 * p * (1 - p), rtol=1e-12)


def test_decisions_and_pooling_say_they_read_the_score_scale(bernoulli_fit):
    from bayes_ir.decision import decide
    from bayes_ir.hierarchical import pooling_of

    dec = decide(bernoulli_fit, margin=0.02)
    means = bernoulli_fit.system_mean_draws()
    gap = float((means.sel(system="s2") - means.sel(system="s0")).mean())
    assert dec.to_frame().set_index("challenger").loc["s2", "mean"] == pytest.approx(gap)
    text = dec.summary()
    assert "on the measure's scale: expected score over the topic population" in text
    y = bernoulli_fit.table.matrix()
    observed = float((y.sel(system="s2") - y.sel(system="s0")).mean())
    row = compare(bernoulli_fit).to_frame().set_index("challenger").loc["s2"]
    assert row["observed"] == pytest.approx(observed)  # raw accuracy difference
    assert row["pooled_share"] == pytest.approx(1 - row["mean"] / observed)
    pooling = pooling_of(bernoulli_fit)
    assert pooling.link == "logit" and 0 < pooling.share < 1
    assert "on the logit scale" in pooling.summary()


def test_bounded_families_are_refused_by_brisk_in_one_line():
    from bayes_ir.risk import brisk

    with pytest.raises(OptionError, match="BRisk models risk-adjusted scores.*'bernoulli'"):
        brisk(_table(10, 3, 1, seed=1), likelihood="bernoulli")


def test_review_of_a_bernoulli_fit_says_its_scale_and_fits_brisk_gaussian(bernoulli_fit):
    from bayes_ir.report.review import review

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = review(bernoulli_fit.table, fit=bernoulli_fit, r=2, r_levels=(2,),
                     n_resamples=199, seed=1)  # fmt: skip
    model = res.provenance["model"]
    assert model.startswith("bernoulli likelihood (logit link; differences are of expected")
    assert model.endswith("BRisk: gaussian model of the risk-adjusted scores")
    assert res.brisk.results[0].likelihood == "gaussian"
    assert "on the measure's scale" in res.decision.summary()


def test_a_system_against_the_items_difficulty_is_flagged_by_the_bernoulli_check():
    """Known misfit: s4 gets the hard items right and the easy ones wrong (no logit model)."""
    rng = np.random.default_rng(5)
    a = rng.normal(0, 2.0, (150, 1))
    eta = a + np.linspace(-0.3, 0.3, 15)[None, :]
    y = (rng.random((150, 15)) < special.expit(eta)).astype(float)
    y[:, 4] = (rng.random(150) < special.expit(-a[:, 0])).astype(float)
    table = ScoreTable.from_matrix(y, systems=[f"s{i}" for i in range(15)], measure="accuracy")
    table = table.with_roles(champion="s0", challengers=["s1", "s4"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # 4 x 1,000 draws, not the default 4 x 4,000: the first pass replicates 1,000 draws
        # either way and s4 is rechecked on every draw; its sd p-value is about 1e-26 (cut-off
        # 1e-4) and the other systems' p-values of mean, sd, skewness and lost above 0.26,
        # with either number of draws
        res = fit(table, likelihood="bernoulli", seed=1, draws=1000)
    assert res.model_check.flagged == ("s4",)
    assert "sd" in res.model_check.failed("s4")
    from bayes_ir.decision import decide

    assert decide(res).actions["s4"] == "unreliable"
