"""PSIS-LOO, likelihood choice, per-system residual SD and the mean-difference check (issue 14).

References: ArviZ's own ``arviz_stats.loo`` / ``compare`` run on the same log-likelihood, the
paired-difference SE formula of Vehtari et al. (2017), and data simulated with known truth.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayes_ir.errors import BayesIRError
from bayes_ir.hierarchical import (
    compare_likelihoods,
    fit,
    loo,
    mean_difference_check,
    residual_sd_draws,
)
from bayes_ir.hierarchical.likelihoods import MODELS, _choose
from bayes_ir.table import ScoreTable

N_TOPICS, N_SYSTEMS = 30, 8


def simulated_table(
    *, sd=None, alpha=None, seed: int = 0, n_topics: int = N_TOPICS, n_systems: int = N_SYSTEMS
) -> tuple[ScoreTable, np.ndarray]:
    """Scores b0 + topic + system + error with known system effects, SDs and skew shapes.

    The errors of system s are skew-normal with mean 0, SD ``sd[s]`` and shape ``alpha[s]``
    (Gaussian when alpha is 0). Returns the table and the true system effects.
    """
    rng = np.random.default_rng(seed)
    sd = np.full(n_systems, 0.05) if sd is None else np.asarray(sd, dtype=float)
    alpha = np.zeros(n_systems) if alpha is None else np.asarray(alpha, dtype=float)
    effects = np.linspace(-0.03, 0.03, n_systems)
    topic = rng.normal(0, 0.15, n_topics)
    delta = alpha / np.sqrt(1 + alpha**2)
    omega = sd / np.sqrt(1 - 2 * delta**2 / np.pi)
    xi = -omega * delta * np.sqrt(2 / np.pi)  # mean-zero errors
    err = stats.skewnorm.rvs(
        alpha, loc=xi, scale=omega, size=(n_topics, n_systems), random_state=rng
    )
    y = 0.4 + topic[:, None] + effects[None, :] + err
    systems = [f"s{j}" for j in range(n_systems)]
    frame = pd.DataFrame(y, index=[f"t{i}" for i in range(n_topics)], columns=systems)
    long = frame.rename_axis(index="topic", columns="system").stack().rename("score").reset_index()
    table = ScoreTable.from_frame(long, collection="sim", measure="score", source="simulated")
    return table.with_roles(champion="s0", challengers=systems[1:4]), effects


# ---------------------------------------------------------------------- PSIS-LOO
@pytest.fixture(scope="module")
def small_fit():
    table, _ = simulated_table(seed=1)
    return fit(table, chains=2, draws=1000, seed=5, log_likelihood=True)


def test_loo_equals_arviz_on_the_full_log_likelihood(small_fit):
    """All draws used: exactly az.loo on the fit's stored pointwise log-likelihood."""
    import arviz_stats as azs

    ours = loo(small_fit, draws=10_000)
    ref = azs.loo(small_fit.posterior, var_name="score", pointwise=True)
    assert ours.n_samples == 2000 and ours.n_data_points == N_TOPICS * N_SYSTEMS
    assert ours.elpd == pytest.approx(ref.elpd, rel=1e-10)
    assert ours.se == pytest.approx(ref.se, rel=1e-10)
    assert ours.p == pytest.approx(ref.p, rel=1e-10)
    np.testing.assert_allclose(
        np.sort(ours.pareto_k.values), np.sort(ref.pareto_k.values.ravel()), rtol=1e-8
    )


def test_loo_in_blocks_of_cells_equals_arviz_on_the_whole_matrix(small_fit, monkeypatch):
    """PSIS is pointwise: blocks of 7 cells give ArviZ's loo of the full log-likelihood."""
    import arviz_stats as azs

    from bayes_ir.hierarchical import likelihoods

    ref = azs.loo(likelihoods.loo_data(small_fit, draws=800, seed=3), var_name="score",
                  pointwise=True)  # fmt: skip
    monkeypatch.setattr(likelihoods, "LOO_BLOCK", 800 * 7)
    ours = loo(small_fit, draws=800, seed=3)
    assert ours.elpd == pytest.approx(ref.elpd, rel=1e-12)
    assert ours.se == pytest.approx(ref.se, rel=1e-12)
    assert ours.p == pytest.approx(ref.p, rel=1e-10)
    np.testing.assert_allclose(ours.pareto_k.values, ref.pareto_k.values, rtol=1e-12)
    np.testing.assert_array_equal(ours.elpd_i["topic"].values, ref.elpd_i["topic"].values)
    np.testing.assert_array_equal(ours.elpd_i["system"].values, ref.elpd_i["system"].values)


def test_loo_subset_is_seeded_and_its_monte_carlo_error_is_small(small_fit):
    a, b = loo(small_fit, draws=500, seed=1), loo(small_fit, draws=500, seed=1)
    assert a.n_samples == 500 and a.elpd == b.elpd
    elpds = [loo(small_fit, draws=500, seed=s).elpd for s in range(6)]
    full = loo(small_fit, draws=10_000)
    # the subset moves the ELPD by a small fraction of its standard error
    assert np.std(elpds, ddof=1) < 0.05 * full.se
    assert abs(np.mean(elpds) - full.elpd) < 0.05 * full.se


@pytest.mark.slow
def test_loo_ignores_missing_cells():
    table, _ = simulated_table(seed=2)
    frame = table.data.copy()
    frame = frame.drop(index=frame.index[[3, 40, 77]])
    holey = ScoreTable.from_frame(
        frame[["topic", "system", "score"]],
        collection="sim",
        measure="score",
        source="sim",
        missing="keep",
    ).with_roles(champion="s0", challengers=["s1", "s2", "s3"])
    f = fit(holey, chains=2, draws=300, tune=300, seed=1)
    res = loo(f, draws=10_000)  # all 600 draws
    assert res.n_data_points == N_TOPICS * N_SYSTEMS - 3
    # ArviZ's PSIS-LOO on the Gaussian log density of the observed cells only, by scipy
    import arviz_stats as azs
    import xarray as xr

    post = f.draws
    mu = post["b0"] + post["topic_effect"] + post["system_effect"]
    wide = holey.matrix().transpose("topic", "system")
    ll = xr.DataArray(
        stats.norm.logpdf(
            wide.values,
            mu.transpose("chain", "draw", "topic", "system").values,
            post["sigma"].values[..., None, None],
        ),
        dims=("chain", "draw", "topic", "system"),
    ).stack(obs=("topic", "system"))
    ll = ll.isel(obs=np.flatnonzero(np.isfinite(wide.values).ravel())).drop_vars(
        ["obs", "topic", "system"], errors="ignore"
    )
    tree = xr.DataTree.from_dict(
        {"/posterior": post.reset_coords(drop=True), "/log_likelihood": ll.to_dataset(name="score")}
    )
    ref = azs.loo(tree, var_name="score", pointwise=True)
    assert ref.n_data_points == res.n_data_points
    assert res.elpd == pytest.approx(ref.elpd, rel=1e-10)


# ---------------------------------------------------------------------- the rule
def test_choice_rule_prefers_the_simplest_within_two_se():
    ranked = pd.DataFrame(
        {"elpd_diff": [0.0, -3.0, -30.0], "dse": [0.0, 2.0, 5.0]},
        index=["gaussian_sigma_by_system", "gaussian", "skew_normal"],
    )
    assert _choose(ranked, 2.0) == "gaussian"  # 3 < 2 x 2: the simpler model is kept
    assert _choose(ranked, 1.0) == "gaussian_sigma_by_system"  # 3 > 1 x 2
    ranked.loc["gaussian", "elpd_diff"] = -5.0
    assert _choose(ranked, 2.0) == "gaussian_sigma_by_system"


@pytest.mark.parametrize(
    ("p_values", "expected"),
    [((0.5, 0.5, 0.5), "gaussian"), ((0.001, 0.5, 0.5), "skew_normal"),
     ((0.001, 0.002, 0.5), "gaussian_sigma_by_system")],
)  # fmt: skip
def test_a_candidate_failing_the_mean_check_is_not_chosen(
    small_fit, monkeypatch, p_values, expected
):
    """Equal ELPDs (one fit stands in for all): the simplest candidate that passes is chosen."""
    fit_module = importlib.import_module("bayes_ir.hierarchical.fit")  # not the function
    from bayes_ir.hierarchical import likelihoods

    monkeypatch.setattr(fit_module, "fit", lambda table, **options: small_fit)
    queue = list(p_values)

    class Check:
        def __init__(self, p):
            self.frame = pd.DataFrame({"p_value": [p]})

    monkeypatch.setattr(likelihoods, "mean_difference_check", lambda f, **k: Check(queue.pop(0)))
    res = compare_likelihoods(small_fit.table, loo_draws=500)
    assert res.chosen == expected
    assert list(res.to_frame().set_index("model").loc[list(MODELS)[:3], "mean_check_p"]) == list(
        p_values
    )


def test_all_candidates_failing_the_mean_check_warn(small_fit, monkeypatch):
    fit_module = importlib.import_module("bayes_ir.hierarchical.fit")  # not the function
    from bayes_ir.errors import DataWarning
    from bayes_ir.hierarchical import likelihoods

    monkeypatch.setattr(fit_module, "fit", lambda table, **options: small_fit)

    class Check:
        frame = pd.DataFrame({"p_value": [0.001]})

    monkeypatch.setattr(likelihoods, "mean_difference_check", lambda f, **k: Check())
    with pytest.warns(DataWarning, match="chosen by ELPD alone"):
        res = compare_likelihoods(small_fit.table, loo_draws=500)
    assert res.chosen == "gaussian"


def test_influential_cells_are_said_once_for_every_candidate(small_fit, monkeypatch):
    """--likelihood auto said one fact (cells with Pareto k > 0.7) as three warnings, one per
    model, and three notes: now one warning naming each model and its count, one note."""
    import warnings

    fit_module = importlib.import_module("bayes_ir.hierarchical.fit")  # not the function
    from bayes_ir.errors import DataWarning
    from bayes_ir.hierarchical import likelihoods

    monkeypatch.setattr(fit_module, "fit", lambda table, **options: small_fit)
    real, counts = likelihoods.loo, iter([3, 2, 1])  # high-k cells of each candidate, in order

    def loo_with_high_k(f, **options):
        res = real(f, **options)
        n = next(counts)
        res.pareto_k.values[:n] = 0.9  # above good_k: what loo itself would warn about
        warnings.warn(f"PSIS-LOO: {n} cells have Pareto k > 0.70", DataWarning, stacklevel=2)
        return res

    monkeypatch.setattr(likelihoods, "loo", loo_with_high_k)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = compare_likelihoods(small_fit.table, loo_draws=500)
    said = [str(w.message) for w in caught if "Pareto k" in str(w.message)]
    assert len(said) == 1, said
    for part in ("gaussian 3", "skew_normal 2", "gaussian_sigma_by_system 1", "of 240"):
        assert part in said[0], part
    text = res.summary()
    assert "note:" not in text and text.count("(k>good_k: cells with Pareto k >") == 1


def test_bad_options_are_clear():
    table, _ = simulated_table(seed=3)
    with pytest.raises(BayesIRError, match="unknown sigma"):
        fit(table, sigma="topic")
    with pytest.raises(BayesIRError, match="sigma='system'"):
        fit(table, sigma="system", method="exact")
    with pytest.raises(BayesIRError, match="leave sigma='pooled'"):
        fit(table, likelihood="auto", sigma="system")
    with pytest.raises(BayesIRError, match="unknown candidate"):
        compare_likelihoods(table, candidates=["gaussian", "student_t"])
    with pytest.raises(BayesIRError, match="at least two"):
        compare_likelihoods(table, candidates=["gaussian"])
    with pytest.raises(BayesIRError, match="sets 'sigma'"):
        compare_likelihoods(table, sigma="system")


# ---------------------------------------------------------------------- per-system SD
@pytest.mark.slow
def test_per_system_sigma_recovers_known_sds():
    true_sd = np.array([0.04, 0.04, 0.06, 0.04, 0.12, 0.04, 0.08, 0.04])
    table, _ = simulated_table(sd=true_sd, seed=4, n_topics=60)
    f = fit(table, sigma="system", chains=2, draws=1000, seed=2)
    truth = pd.Series(true_sd, index=[f"s{j}" for j in range(N_SYSTEMS)])
    sig = residual_sd_draws(f)
    names = [str(s) for s in sig["system"].values]  # role order, not s0..s7
    q = sig.quantile([0.005, 0.995], dim=("chain", "draw")).values
    assert ((q[0] < truth[names].values) & (truth[names].values < q[1])).all()
    # the SDs are told apart: the 3x system is the largest
    assert names[int(np.argmax(sig.mean(("chain", "draw")).values))] == "s4"
    assert f.provenance["sigma"] == "system" and f.method == "nuts"
    assert "Residual SD per system" in f.summary()
    assert "sigma[s4]" in set(f.diagnostics.table["parameter"])


@pytest.mark.slow
def test_per_system_sigma_agrees_with_pooled_on_equal_sds():
    table, _ = simulated_table(seed=6, n_topics=60)
    pooled = fit(table, chains=4, draws=2000, seed=1)
    per = fit(table, sigma="system", chains=4, draws=2000, seed=1)
    a, b = pooled.contrast_draws(), per.contrast_draws()
    mean_a, mean_b = a.mean(("chain", "draw")), b.mean(("chain", "draw"))
    sd = a.std(("chain", "draw"))
    # Monte Carlo SE of each mean: sd / sqrt(ESS), with ESS from the fits' diagnostics
    ess = min(pooled.diagnostics.table["ess_bulk"].min(), per.diagnostics.table["ess_bulk"].min())
    mcse = float(sd.max()) * np.sqrt(2.0 / ess)
    assert float(abs(mean_a - mean_b).max()) < 4 * mcse
    np.testing.assert_allclose(b.std(("chain", "draw")), sd, rtol=0.1)


# ---------------------------------------------------------------------- choosing
@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("gaussian", "gaussian"),
        ("skewed", "skew_normal"),
        ("one_wide", "gaussian_sigma_by_system"),
    ],
)
def test_compare_likelihoods_finds_the_true_model(case, expected):
    sd = np.full(N_SYSTEMS, 0.05)
    alpha = np.zeros(N_SYSTEMS)
    if case == "skewed":
        alpha[:] = 6.0
    if case == "one_wide":
        sd[2] = 0.15
    table, _ = simulated_table(sd=sd, alpha=alpha, seed=7, n_topics=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare_likelihoods(table, chains=2, draws=1000, seed=3, loo_draws=2000)
    assert res.chosen == expected
    frame = res.to_frame()
    assert set(frame["model"]) == {"gaussian", "skew_normal", "gaussian_sigma_by_system"}
    # the reported difference and its SE are the paired ones of the pointwise ELPDs
    e_c = res.elpd[res.chosen].elpd_i.values.ravel()
    e_r = res.elpd[res.runner_up].elpd_i.values.ravel()
    assert res.elpd_diff == pytest.approx(e_c.sum() - e_r.sum(), rel=1e-9)
    se = np.sqrt(e_c.size * np.var(e_c - e_r))  # ArviZ: sqrt(n Var), Var with divisor n
    assert res.elpd_diff_se == pytest.approx(se, rel=1e-6)
    assert (frame.loc[frame["chosen"], "mean_check_p"] >= 0.01).all()
    chosen = res.chosen_fit
    assert chosen.likelihood == MODELS[expected][0]
    assert chosen.provenance["sigma"] == MODELS[expected][1]
    assert "Likelihood chosen by PSIS-LOO: " + expected in chosen.summary()
    assert f"{res.elpd_diff:+.1f}" in res.summary()


@pytest.mark.slow
def test_fit_auto_returns_the_chosen_fit():
    table, _ = simulated_table(sd=[0.05, 0.05, 0.2, 0.05, 0.05, 0.05, 0.05, 0.05], seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = fit(table, likelihood="auto", chains=2, draws=600, seed=1)
    assert f.likelihood_choice is not None
    assert f.likelihood_choice.chosen == "gaussian_sigma_by_system"
    assert f.provenance["sigma"] == "system"


# ---------------------------------------------------------------------- mean differences
@pytest.mark.slow
def test_mean_difference_check_flags_a_shared_skewness_forced_on_a_system():
    """Known truth: the example's generator (bayes_ir.simulate) with another seed.

    ``chal_risky`` loses heavily on a random 20% of topics (a two-point mixture, skewed
    left) while AP's floor skews the others right: the skew-normal model (one shape, one
    SD) pulls its mean down, away from its observed mean (issue 14); the Gaussian does not.
    """
    from bayes_ir.simulate import simulate_scores

    table = simulate_scores(
        champion="bm25", n_artifacts=40, n_topics=50, collections=["sim"], measure="AP", seed=101
    ).with_roles(champion="bm25", challengers="chal_*")
    gauss = fit(table, chains=2, draws=1000, seed=1)
    skew = fit(table, likelihood="skew_normal", chains=2, draws=1000, seed=1)
    g = mean_difference_check(gauss).to_frame().set_index("challenger")
    s = mean_difference_check(skew).to_frame().set_index("challenger")
    assert g["consistent"].all() and (g["p_value"] > 0.1).all()
    assert not s.loc["chal_risky", "consistent"] and s.loc["chal_risky", "p_value"] < 0.01
    assert s.drop(index="chal_risky")["consistent"].all()
    observed = g.loc["chal_risky", "observed"]
    assert s.loc["chal_risky", "contrast"] < observed - 0.03
    assert abs(g.loc["chal_risky", "contrast"] - observed) < 0.01


@pytest.mark.slow
def test_mean_difference_check_on_the_example(example_table, example_fit):
    g = mean_difference_check(example_fit).to_frame().set_index("challenger")
    obs = example_table.matrix().to_pandas()
    assert g.loc["chal_risky", "observed"] == pytest.approx(
        (obs["chal_risky"] - obs["bm25"]).mean(), rel=1e-12
    )
    assert g["consistent"].all()
    skew = fit(example_table, likelihood="skew_normal", chains=2, draws=1000, seed=3)
    s = mean_difference_check(skew).to_frame().set_index("challenger")
    assert not s.loc["chal_risky", "consistent"]
    assert s.loc["chal_risky", "contrast"] < 0.03 < g.loc["chal_risky", "contrast"]


def test_difference_variance_of_the_gaussian_models_is_the_two_residual_variances():
    """decide()'s new-topic variance: sigma_c^2 + sigma_h^2, per system with sigma='system'."""
    from bayes_ir.hierarchical.families import Gaussian

    rng = np.random.default_rng(3)
    per_system = {"sigma": rng.uniform(0.02, 0.1, (50, 4))}
    got = Gaussian().difference_variance(per_system, 1, np.array([0, 2, 3]))
    want = per_system["sigma"][:, [0, 2, 3]] ** 2 + per_system["sigma"][:, [1]] ** 2
    np.testing.assert_allclose(got, want, rtol=1e-12)
    pooled = {"sigma": rng.uniform(0.02, 0.1, 50)}
    got = Gaussian().difference_variance(pooled, 0, np.array([1, 2]))
    np.testing.assert_allclose(got, np.repeat(2 * pooled["sigma"][:, None] ** 2, 2, axis=1))
