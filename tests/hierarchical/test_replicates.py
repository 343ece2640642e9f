"""The model of runs (seeds, folds, samples): fit_replicates and its results.

Known truth (simulated tables, :mod:`replicate_tables`): the variance components and the
contrasts are recovered; the single-run contrast has the variance of the contrast in
expectation plus both systems' run-to-run variances; the blocked Gibbs sampler agrees
with NUTS on the PyMC twin of the same model; simulation-based calibration (Talts et al.
2018) of every parameter under a pooled and a per-system run-to-run SD; the model check
flags a system whose runs spread unlike the others' and stops flagging it once each
system has its own run-to-run SD.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from replicate_tables import simulate_runs
from results.hierarchical import SBC_ALPHA, SBC_BINS, SBC_BINS_SLOW, SBC_LEVEL

from bayes_ir.errors import BayesIRError, InsufficientDataError, ModelCheckWarning, ScoreTableError
from bayes_ir.hierarchical import ReplicateFit, fit_replicates, sampling
from bayes_ir.hierarchical.design import DesignPriors, replicates_design
from bayes_ir.hierarchical.design_calibration import calibrate_design, design_parameter_names
from bayes_ir.table import ScoreTable

#: Datasets of the slow coverage check (one quantity's coverage SD: 0.95 points).
N_COVERAGE = 1000


@pytest.fixture(scope="module")
def big():
    """80 topics x 4 systems x 6 seeds; true effects 0, +0.03, 0, -0.02."""
    table = simulate_runs(80, [0.0, 0.03, 0.0, -0.02], 6, seed=3, interaction_sd=0.04,
                          run_sd=0.03, residual_sd=0.05)  # fmt: skip
    return table, fit_replicates(table, seed=1, draws=2000)


def test_variance_components_are_recovered(big):
    _, fit = big
    assert isinstance(fit, ReplicateFit)
    assert fit.diagnostics.passed
    for name, truth in (("sigma", 0.05), ("sigma_topic_system", 0.04), ("sigma_topic", 0.15)):
        x = fit.term_draws(name)[:, 0]
        lo, hi = np.quantile(x, [0.005, 0.995])
        assert lo < truth < hi, (name, lo, hi)
    # 24 runs: the run-to-run SD is known to about 20%
    k = fit.term_draws("sigma_replicate")[:, 0]
    assert np.quantile(k, 0.005) < 0.03 < np.quantile(k, 0.995)


def test_contrasts_cover_the_truth_and_single_runs_add_the_run_variance(big):
    table, fit = big
    e = fit.contrast_draws(over="expectation")
    one = fit.contrast_draws(over="single_run")
    assert e.shape == one.shape == (fit.n_draws, 3)
    truth = np.array([0.03, 0.0, -0.02])
    lo, hi = np.quantile(e, [0.005, 0.995], axis=0)
    assert ((lo < truth) & (truth < hi)).all(), (lo, hi)
    kappa = fit.term_draws("sigma_replicate")[:, 0]
    # Var(single) = Var(expectation) + E[2 kappa^2] (two independent new runs)
    expected = e.var(axis=0) + 2 * np.mean(kappa**2)
    np.testing.assert_allclose(one.var(axis=0), expected, rtol=0.05)
    np.testing.assert_allclose(one.mean(axis=0), e.mean(axis=0), atol=4 * one.std(axis=0).max()
                               / np.sqrt(fit.n_draws))  # fmt: skip
    # the same seed, the same new runs
    np.testing.assert_array_equal(one, fit.contrast_draws(over="single_run"))
    res = fit.contrasts()
    frame = res.to_frame()
    assert list(frame["over"]) == ["expectation", "single_run"] * 3
    # observed: the raw difference of the means over all runs
    d = table.data
    means = d.groupby("system")["score"].mean()
    np.testing.assert_allclose(frame["observed"].iloc[0], means["sys1"] - means["sys0"])
    assert (frame["runs_challenger"] == 6).all()


def test_summary_names_both_questions_and_the_components(big):
    _, fit = big
    text = fit.summary()
    for words in ("run-to-run (seed) SD", "topic x system SD", "In expectation over seeds",
                  "One run of each", "P(run beats)", "Diagnostics: PASS",
                  "sys1 - sys0"):  # fmt: skip
        assert words in text, words
    comps = fit.contrasts().components_frame()
    assert list(comps["component"]) == ["sigma_replicate", "sigma_topic_system", "sigma",
                                        "sigma_topic", "sigma_system"]  # fmt: skip


@pytest.mark.slow  # compiles the PyMC twin: 27 s of the default suite on a fresh machine
def test_gibbs_agrees_with_nuts_on_the_pymc_twin():
    table = simulate_runs(20, [0.0, 0.02, -0.01], 3, seed=5)
    gibbs = fit_replicates(table, seed=2, draws=4000, model_check=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = fit_replicates(table, seed=2, method="nuts", draws=1500, tune=1000,
                              model_check=False)  # fmt: skip
    for name in ("sigma", "sigma_topic_system", "sigma_replicate", "sigma_topic"):
        a, b = gibbs.term_draws(name)[:, 0], nuts.term_draws(name)[:, 0]
        assert abs(a.mean() - b.mean()) < 0.08 * b.std() + 0.05 * b.mean(), name
        assert abs(a.std() / b.std() - 1) < 0.1, name
    a, b = gibbs.contrast_draws(), nuts.contrast_draws()
    assert np.all(np.abs(a.mean(0) - b.mean(0)) < 0.1 * b.std(0))
    np.testing.assert_allclose(a.std(0), b.std(0), rtol=0.1)
    # a refit of the same design with other settings reuses the compiled twin
    before = sampling.compile_count()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_replicates(table, seed=3, method="nuts", draws=50, tune=50, model_check=False)
    assert sampling.compile_count() == before


def test_model_check_flags_systems_whose_runs_spread_unlike_the_others():
    # one system's seeds spread 12 times as much as the others': a pooled run-to-run SD
    # describes neither (the three steady systems' runs are far too close together)
    table = simulate_runs(40, [0.0, 0.0, 0.0, 0.0], 6, seed=8, run_sd=[0.01, 0.01, 0.01, 0.12])
    with pytest.warns(ModelCheckWarning):
        pooled = fit_replicates(table, seed=1, draws=1000)
    flagged = pooled.model_check.flagged
    assert flagged and set(flagged) <= {"sys0", "sys1", "sys2", "sys3"}
    assert all(pooled.model_check.failed(s) == ("run_sd",) for s in flagged)
    assert "sigma_replicate='system'" in pooled.model_check.summary()
    assert set(pooled.contrasts().misfit) == set(flagged)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelCheckWarning)
        per = fit_replicates(table, seed=1, draws=1000, sigma_replicate="system")
    assert per.model_check.passed
    k = per.term_draws("sigma_replicate")
    assert k.shape[1] == 4 and k[:, 3].mean() > 4 * k[:, 0].mean()


def test_model_check_passes_on_the_models_own_data(big):
    _, fit = big
    assert fit.model_check.passed, fit.model_check.table


def test_a_champion_with_one_run():
    table = simulate_runs(30, [0.0, 0.02, 0.01], [1, 4, 4], seed=9)
    fit = fit_replicates(table, seed=1, draws=1000)
    res = fit.contrasts()
    assert res.n_runs("sys0") == 1
    assert "4 vs 1" in res.summary()
    with pytest.raises(InsufficientDataError, match="sys0"):
        fit_replicates(table, sigma_replicate="system")


def test_bad_inputs_say_so_in_one_line():
    plain = ScoreTable.from_frame(
        pd.DataFrame(
            {
                "system": ["a", "b"] * 5,
                "topic": np.repeat([f"q{i}" for i in range(5)], 2),
                "score": np.linspace(0.1, 0.9, 10),
            }
        )  # fmt: skip
    ).with_roles(champion="a", challengers=["b"])
    with pytest.raises(ScoreTableError, match="replicate"):
        fit_replicates(plain)
    table = simulate_runs(10, [0.0, 0.02], 3, seed=1)
    with pytest.raises(BayesIRError, match="sigma_replicate"):
        fit_replicates(table, sigma_replicate="topic")
    with pytest.raises(BayesIRError, match="over"):
        fit_replicates(table, draws=200, model_check=False).contrast_draws(over="best")


def _calibration_design(sigma_replicate: str):
    """8 topics x 3 systems, 3 runs each but the champion's 2; fixed priors."""
    table = simulate_runs(8, [0.0, 0.0, 0.0], [2, 3, 3], seed=0)
    design = replicates_design(table, sigma_replicate=sigma_replicate)
    n = 3 if sigma_replicate == "system" else 1
    priors = DesignPriors(
        intercept_mu=np.array([0.4]),
        intercept_sd=np.array([0.1]),
        residual_rate=np.array([10.0]),
        rates={
            "topic": np.array([8.0]),
            "system": np.array([20.0]),
            "topic:system": np.array([20.0]),
            "replicate": np.full(n, 30.0),
        },  # fmt: skip
    )
    return design, priors


@pytest.mark.parametrize("sigma_replicate", ["pooled", "system"])
def test_a_quick_calibration_of_every_parameter(sigma_replicate):
    design, priors = _calibration_design(sigma_replicate)
    res = calibrate_design(design, priors, n_datasets=80, seed=300, max_workers=2, draws=300)
    assert res.failures(alpha=SBC_ALPHA, bins=SBC_BINS) == [], res.summary(bins=SBC_BINS)
    names = design_parameter_names(design)
    assert "sigma_replicate[all]" in names or "sigma_replicate[sys0]" in names
    assert names[-2:] == ["sys1 - sys0", "sys2 - sys0"]


@pytest.mark.slow
@pytest.mark.parametrize("sigma_replicate", ["pooled", "system"])
def test_calibration_and_coverage(sigma_replicate):
    design, priors = _calibration_design(sigma_replicate)
    res = calibrate_design(design, priors, n_datasets=N_COVERAGE, seed=1, max_workers=2, draws=300)
    assert res.failures(alpha=SBC_ALPHA, bins=SBC_BINS_SLOW) == [], res.summary()
    frame = res.to_frame(bins=SBC_BINS_SLOW).set_index("parameter")["coverage"]
    scales = frame[[n for n in frame.index if n.startswith("sigma") or " - " in n]]
    assert scales.between(SBC_LEVEL - 0.03, SBC_LEVEL + 0.03).all(), scales
