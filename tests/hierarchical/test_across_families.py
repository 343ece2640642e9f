"""fit_across with a logit family: the model's likelihood against scipy, the score-scale
contrasts against adaptive quadrature, a fit against its known truth, and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from across_reference import _simulated_bernoulli
from scipy import integrate, special, stats

from bayes_ir.errors import BayesIRError, OptionError, ScoreTableError
from bayes_ir.hierarchical import fit_across
from bayes_ir.hierarchical.design import collections_design, design_priors, segments_design
from bayes_ir.hierarchical.families import get_family, population_intercept
from bayes_ir.hierarchical.group_effects import family_contrast_draws, population_intercepts
from bayes_ir.hierarchical.samplers.pymc_design import build_design_model
from bayes_ir.table import ScoreTable


def _unit_table(seed=2):
    """3 collections of scores in [0, 1] with exact 0s and 1s (a zoib-shaped table)."""
    rng = np.random.default_rng(seed)
    rows = []
    for c, n_t in enumerate((15, 20, 12)):
        for t in range(n_t):
            a = rng.normal(0, 0.8)
            for s, b in enumerate((0.0, 0.3, -0.2)):
                u = rng.random()
                y = 0.0 if u < 0.1 else 1.0 if u < 0.15 else rng.beta(*(4 * special.expit(
                    [a + b + 0.2 * c, -(a + b + 0.2 * c)]) + 0.1))  # fmt: skip
                rows.append((f"c{c}", "AP", f"s{s}", f"q{t}", float(y)))
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    return ScoreTable.from_frame(frame).with_roles(champion="s0", challengers=["s1", "s2"])


def _counts_table():
    """P@10 scores (k of 10) in 2 collections."""
    rng = np.random.default_rng(5)
    rows = [(f"c{c}", "P@10", f"s{s}", f"q{t}", rng.binomial(10, 0.3 + 0.1 * s) / 10)
            for c in range(2) for t in range(10) for s in range(3)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    return ScoreTable.from_frame(frame).with_roles(champion="s0", challengers=["s1"])


def _likelihood_term(model, family: str):
    return model["y"] if family == "zoib" else model.logp(vars=[model["y"]], sum=True)


@pytest.mark.parametrize(
    ("family", "table"),
    [("bernoulli", _simulated_bernoulli), ("binomial", _counts_table), ("zoib", _unit_table)],
)
def test_the_models_likelihood_equals_scipy(family, table):
    """At random parameter values, the PyMC model's likelihood term equals the sum of scipy's
    log probabilities of every score, its linear predictor built from the labelled effects."""
    t = table()
    design = collections_design(t, scale="measure")
    fam = get_family(family)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fam = fam.resolved(design.block(0))
    model = build_design_model(design, design_priors(design, family=fam), family=fam)
    names = ["b0", "topic_effect", "system_effect", "system_collection_effect"]
    names += ["phi", "zoi", "coi"] if family == "zoib" else []
    outputs = model.replace_rvs_by_values(
        [_likelihood_term(model, family)] + [model[n] for n in names]
    )
    fn = model.compile_fn(outputs, inputs=model.value_vars, on_unused_input="ignore")
    rng = np.random.default_rng(7)
    point = {v.name: rng.normal(0, 0.7, size=model.initial_point()[v.name].shape)
             for v in model.value_vars}  # fmt: skip
    got, b0, topic, system, sxc, *own = fn(point)
    coords = model.coords
    colls = list(coords["b0_level"])
    cells = design.cells
    topic_at = dict(zip(coords["topic"], topic, strict=True))
    sys_at = dict(zip(coords["system"], system, strict=True))
    sxc_at = dict(zip(coords["system_collection"], sxc, strict=True))
    eta = np.array([
        b0[colls.index(c)] + topic_at[f"{c}|{tp}"] + sys_at[s] + sxc_at[f"{s}|{c}"]
        for c, tp, s in zip(cells["collection"], cells["topic"], cells["system"], strict=True)
    ])  # fmt: skip
    y, p = design.y, special.expit(eta)
    if family == "zoib":
        phi, zoi, coi = (np.asarray(x)[[colls.index(c) for c in cells["collection"]]] for x in own)
        inside = (y > 0) & (y < 1)
        want = np.where(y == 0, np.log(zoi * (1 - coi)), np.log(zoi * coi))
        dens = stats.beta.logpdf(y, p * phi, (1 - p) * phi) + np.log1p(-zoi)
        want = np.where(inside, dens, want).sum()
    else:
        n = fam.trials_for("")
        want = stats.binom.logpmf(np.rint(y * n), n, p).sum()
    assert float(got) == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("tau", [0.5, 2.0, 4.0])
def test_population_intercept_splits_a_prior_on_the_sum(tau):
    """With the prior N(mu0, s0^2) on the zero-sum intercept b0 = beta + a-bar, a draw of
    b0 from it and of a-bar given b0 (prior_on_sum) is a draw of the levels form: a-bar
    ~ N(0, tau^2/T) and beta = b0 - a-bar ~ N(mu0, s0^2 - tau^2/T), independent (moments
    of 400,000 draws, within 5 standard errors)."""
    rng = np.random.default_rng(11)
    n, n_topics, mu0, s0 = 400_000, 3, 0.7, 2.5
    b0 = rng.normal(mu0, s0, n)
    beta = population_intercept(b0, np.full(n, tau), n_topics, (mu0, s0), rng, prior_on_sum=True)
    abar = b0 - beta
    v = tau**2 / n_topics
    for x, var in ((abar, v), (beta, s0**2 - v)):
        assert abs(x.mean() - (mu0 if x is beta else 0.0)) < 5 * np.sqrt(var / n)
        assert abs(x.var() / var - 1) < 5 * np.sqrt(2 / n)
    assert abs(np.corrcoef(abar, beta)[0, 1]) < 5 / np.sqrt(n)


def test_score_scale_contrasts_equal_quadrature():
    """Group, overall and new-collection contrasts of family_contrast_draws against
    scipy.integrate.quad of the expected score over a collection's topic population,
    N(0, tau^2) about the population's intercept."""
    t = _simulated_bernoulli()
    design = collections_design(t, scale="measure")
    fam = get_family("zoib")
    n, n_c, n_s = 3, 4, 5
    rng = np.random.default_rng(3)
    inter = design.term("system:collection")
    post = {
        "b0": rng.normal(0.3, 0.5, (n, n_c)),
        "sigma_topic": rng.uniform(0.5, 2.0, (n, n_c)),
        "system": rng.normal(0, 0.4, (n, n_s)),
        "system:collection": rng.normal(0, 0.3, (n, inter.n_levels)),
        "sigma_system_collection": np.array([[0.0], [0.0], [0.0]]),  # new = at gamma 0
        "phi": np.full((n, n_c), 5.0),
        "zoi": rng.uniform(0, 0.3, (n, n_c)),
        "coi": rng.uniform(0, 1, (n, n_c)),
    }
    priors = design_priors(design, family=fam)
    overall, groups, new, labels = family_contrast_draws(post, design, fam, priors, seed=1)
    intercept, tau = population_intercepts(post, design, priors, seed=1)
    assert np.array_equal(tau, post["sigma_topic"])  # one topic SD per collection
    pos = {
        (s, g): i
        for i, (s, g) in enumerate(
            zip(inter.components["system"], inter.components["collection"], strict=True)
        )
    }

    def mean(d, k, x):
        sd = post["sigma_topic"][d, k]
        f = lambda a: special.expit(intercept[d, k] + x + a) * stats.norm.pdf(a, 0, sd)  # noqa: E731
        m = integrate.quad(f, -12 * sd, 12 * sd, epsabs=1e-13)[0]
        zoi, coi = post["zoi"][d, k], post["coi"][d, k]
        return zoi * coi + (1 - zoi) * m

    beta, gamma = post["system"], post["system:collection"]
    for d in range(n):
        for j, c in enumerate(("m1", "m2")):
            s = int(c[1])
            at_zero = [mean(d, k, beta[d, s]) - mean(d, k, beta[d, 0]) for k in range(n_c)]
            assert overall[d, j] == pytest.approx(np.mean(at_zero), abs=1e-9)
            assert any(new[d, j] == pytest.approx(v, abs=1e-9) for v in at_zero)
            for k, g in enumerate(labels):
                want = mean(d, k, beta[d, s] + gamma[d, pos[(c, g)]]) - mean(
                    d, k, beta[d, 0] + gamma[d, pos[("m0", g)]]
                )
                assert groups[d, j, k] == pytest.approx(want, abs=1e-9)


@pytest.fixture(scope="module")
def bernoulli_fit():  # a NUTS fit with a fresh compile: the slow suite's
    return fit_across(_simulated_bernoulli(), likelihood="bernoulli", draws=1000, tune=500, seed=4)


@pytest.mark.slow
def test_a_bernoulli_fit_finds_its_known_truth(bernoulli_fit):
    """The simulation's 8 per-collection score-scale contrasts (its known effects, the item
    population integrated) lie within the fit's 99% intervals; the gate and the model
    check pass; the summary says what a contrast is."""
    fit = bernoulli_fit
    assert fit.diagnostics.passed and fit.model_check.passed
    assert fit.method == "nuts" and fit.provenance["likelihood"] == "bernoulli"
    post = fit.draws
    assert {"b0", "topic_effect", "sigma_topic"} <= set(post.data_vars)
    assert "sigma" not in post.data_vars
    c = fit.contrasts(ci_prob=0.99)
    _, truth = _simulated_bernoulli(truth=True)
    groups = c.to_frame().query("kind == 'collection'")
    for row in groups.itertuples():
        assert row.ci_lower <= truth[(row.challenger, row.level)] <= row.ci_upper, row
    text = c.summary()
    assert "(bernoulli; nuts)" in text and "between-collection SD (logit)" in text
    assert "expected scores over a collection's topic population" in text
    # the new collection's P(win) is the share of its draws above the margin
    assert c.p_new_win()[0] == pytest.approx(float((c.new[:, 0] > 0).mean()))


@pytest.mark.slow
def test_link_scale_contrasts_are_the_effects_differences(bernoulli_fit):
    """The sign of a collection's score-scale contrast is that of its logit contrast."""
    fit = bernoulli_fit
    c = fit.contrasts()
    beta = fit.term_draws("system")
    gamma = fit.term_draws("system:collection")
    inter = fit.design.term("system:collection")
    levels = list(zip(inter.components["system"], inter.components["collection"], strict=True))
    for k, g in enumerate(c.groups):
        logit = beta[:, 1] + gamma[:, levels.index(("m1", g))] - beta[:, 0]
        logit -= gamma[:, levels.index(("m0", g))]
        assert np.array_equal(logit > 0, c.group[:, 0, k] > 0)


def test_a_score_the_family_cannot_describe_is_named():
    frame = _simulated_bernoulli().data.copy()
    frame.loc[frame.index[frame["collection"] == "task2"][3], "score"] = 0.5
    bad = ScoreTable.from_frame(frame).with_roles(champion="m0", challengers=["m1"])
    with pytest.raises(ScoreTableError, match=r"task2.*0/1 scores|0/1 scores.*task2"):
        fit_across(bad, likelihood="bernoulli")


def _mixed_measures():
    good = _simulated_bernoulli().data
    first = good[good["collection"] == "task0"]
    two = pd.concat([good, first.assign(collection="other", measure="P@10")])
    return ScoreTable.from_frame(two).with_roles(champion="m0", challengers=["m1"])


@pytest.mark.parametrize(
    ("table", "options", "error", "message"),
    [
        (_simulated_bernoulli, {"likelihood": "skew_normal"}, BayesIRError,
         "skew_normal likelihood is not available"),
        (_simulated_bernoulli, {"likelihood": "auto"}, BayesIRError,
         "auto likelihood is not available"),
        (_simulated_bernoulli, {"likelihood": "bernoulli", "scale": "sd"}, BayesIRError,
         "scale='sd'"),
        (_simulated_bernoulli, {"likelihood": "bernoulli", "method": "gibbs"}, BayesIRError,
         "NUTS"),
        (_unit_table, {"likelihood": "zoib(inflation=system)"}, OptionError,
         "one precision and one inflation per collection"),
        (_mixed_measures, {"likelihood": "bernoulli"}, BayesIRError,
         "needs one measure in every collection"),
    ],
)  # fmt: skip
def test_options_a_family_cannot_take_are_one_clear_error(table, options, error, message):
    with pytest.raises(error, match=message):
        fit_across(table(), **options)


@pytest.mark.parametrize("family", ["bernoulli", "zoib"])
def test_the_intercepts_along_the_ridge_keep_their_prior(family):
    """A logit model samples each collection's intercept divided by sqrt(1 + pi s_c^2 / 8)
    (s_c its topic SD), from its conditional prior: b0 itself must keep its prior N(m, v^2)
    whatever s_c, so 4,000 joint prior draws give b0 that KS-match N(m, v^2) in every
    collection, uncorrelated with s_c. (Drawing the free coordinate from N(m, v^2) instead
    would give b0 an SD v k_c, correlated with s_c.) The Gaussian model keeps b0 as is."""
    import pymc as pm

    table = _simulated_bernoulli() if family == "bernoulli" else _unit_table()
    design = collections_design(table, scale="measure")
    fam = get_family(family)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fam = fam.resolved(design.block(0))
    pri = design_priors(design, family=fam)
    model = build_design_model(design, pri, family=fam)
    assert "b0_stretched" in model.named_vars
    assert "b0" in {d.name for d in model.deterministics}
    b0, s = pm.draw([model["b0"], model["sigma_topic"]], draws=4000, random_seed=3)
    for c in range(b0.shape[1]):
        m, v = pri.intercept_mu[c], pri.intercept_sd[c]
        assert stats.kstest(b0[:, c], stats.norm(m, v).cdf).pvalue > 0.001
        assert abs(np.corrcoef(b0[:, c], s[:, c])[0, 1]) < 0.06  # 4 SE at 4,000 draws
    # the coordinate is that of the mean score: E[logit^-1(b0 + s z)] is logit^-1(b0 / k)
    # within 0.01 (adaptive quadrature; 0.0086 at worst on this grid)
    for b in np.linspace(-4, 4, 9):
        for sd in np.linspace(0, 3, 7):

            def density(z, b=b, sd=sd):
                return special.expit(b + sd * z) * stats.norm.pdf(z)

            mean = integrate.quad(density, -12, 12)[0]
            assert abs(mean - special.expit(b / np.sqrt(1 + np.pi * sd**2 / 8))) < 0.01
    gaussian = build_design_model(design, design_priors(design))
    assert "b0" in {v.name for v in gaussian.free_RVs} and "b0_stretched" not in gaussian.named_vars


def test_segments_with_a_family_build_their_model():
    """Across segments the family's model has an intercept per segment and one topic SD."""
    t = _simulated_bernoulli().select(collection="task1")
    seg = {tp: ("short" if int(tp[1:]) % 2 else "long") for tp in t.topics}
    design = segments_design(t, seg)
    fam = get_family("bernoulli")
    pri = design_priors(design, family=fam)
    assert pri.residual_rate.size == 0 and np.allclose(pri.intercept_sd, 2.5)
    model = build_design_model(design, pri, family=fam)
    assert "sigma" not in model.named_vars and model["b0"].eval().shape == (2,)


def test_draws_beyond_the_memory_limit_are_refused_before_sampling(monkeypatch):
    """NUTS keeps every topic effect: 4 x 2,000 draws of 230 items' effects need ~15 MB."""
    from bayes_ir import defaults

    monkeypatch.setattr(defaults, "MEMORY_LIMIT", 1e6)
    with pytest.raises(OptionError, match="the posterior draws"):
        fit_across(_simulated_bernoulli(), likelihood="bernoulli")


def test_zoib_scores_simulated_on_a_design_have_the_drawn_inflation():
    """simulate_scores with the zoib family: each collection's shares of exact 0s and 1s are
    zoi (1 - coi) and zoi coi of the drawn truth (binomial SE, 4 SEs)."""
    from bayes_ir.hierarchical.design.simulate import draw_parameters, simulate_scores

    design = collections_design(_unit_table(), scale="measure")
    fam = get_family("zoib")
    pri = design_priors(design, family=fam)
    rng = np.random.default_rng(0)
    truth = draw_parameters(design, pri, rng, fam)
    assert set(truth) >= {"phi", "zoi", "coi"} and "sigma" not in truth
    # a precision drawn near 0 makes numpy's beta draws round to exact 0s and 1s: fix it
    truth["phi"] = np.full_like(truth["phi"], 8.0)
    y = np.concatenate([simulate_scores(design, truth, rng, fam).y for _ in range(200)])
    group = np.tile(design.residual.index, 200)
    for g in range(design.residual.n_levels):
        x = y[group == g]
        for share, want in ((np.mean(x == 0), truth["zoi"][g] * (1 - truth["coi"][g])),
                            (np.mean(x == 1), truth["zoi"][g] * truth["coi"][g])):  # fmt: skip
            assert abs(share - want) <= 4 * np.sqrt(want * (1 - want) / x.size) + 1e-12
        inside = x[(x > 0) & (x < 1)]
        assert inside.size and np.all((inside > 0) & (inside < 1))
