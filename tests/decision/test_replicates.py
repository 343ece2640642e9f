"""Decisions of systems with several runs: in expectation over seeds, and for one run."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_ir import decide
from bayes_ir.decision import RUN_COLUMNS, decide_replicates
from bayes_ir.decision.rules import UNRELIABLE
from bayes_ir.errors import OptionError
from bayes_ir.hierarchical import fit_replicates


def _fit(runs_table, *args, **kwargs):
    table, _ = runs_table(*args, **kwargs)
    return fit_replicates(table, draws=1000, seed=1)


@pytest.fixture(scope="module")
def clear(runs_table):
    """A true gain of 0.1 with a tiny run-to-run SD."""
    return _fit(runs_table, 30, 4, 4, seed=0, system=[0, 0.1, 0, 0], sd_run=0.002)


@pytest.fixture(scope="module")
def null(runs_table):
    """No true difference, a large run-to-run SD."""
    return _fit(runs_table, 30, 4, 4, seed=1, system=[0, 0, 0, 0], sd_run=0.05)


@pytest.fixture(scope="module")
def noisy_runs(runs_table):
    """A true gain of 0.12 whose runs spread with SD 0.06: sure on average, not per run."""
    return _fit(runs_table, 30, 4, 8, seed=0, system=[0, 0.12, 0, 0], sd_run=0.06)


@pytest.mark.parametrize("over", ["expectation", "single_run"])
def test_the_decision_is_the_rule_on_the_chosen_draws(noisy_runs, over):
    d = decide(noisy_runs, over=over, margin=0.01)
    draws = noisy_runs.contrast_draws(over=over)
    for j, row in d.table.iterrows():
        x = draws[:, j]
        assert row["p_better"] == pytest.approx((x > 0.01).mean())
        assert row["p_worse"] == pytest.approx((x < -0.01).mean())
        assert row["loss_deploy"] == pytest.approx(np.maximum(0.01 - x, 0).mean())
        assert row["loss_keep"] == pytest.approx(np.maximum(x - 0.01, 0).mean())
        assert row["mean"] == pytest.approx(x.mean())
    runs = d.runs
    assert list(runs.columns) == list(RUN_COLUMNS)
    single = noisy_runs.contrast_draws(over="single_run")
    expect = noisy_runs.contrast_draws(over="expectation")
    assert runs["p_run_beats"].to_numpy() == pytest.approx((single > 0).mean(axis=0))
    assert runs["p_better_expectation"].to_numpy() == pytest.approx((expect > 0).mean(axis=0))
    assert (runs["runs_challenger"] == 8).all() and (runs["runs_champion"] == 8).all()
    assert d.over == over and d.measure == "AP" and d.collection == "c"


def test_rule_names_the_quantity_and_summary_the_run_probability(noisy_runs):
    e = decide(noisy_runs, over="expectation")
    s = decide(noisy_runs, over="single_run")
    assert "in expectation over seeds" in e.rule and "one run of each" not in e.rule
    assert "one run of each, drawn at random: the run-to-run variance included" in s.rule
    for d in (e, s):
        text = d.summary()
        assert "P(run beats)" in text and "a random run of the challenger beats" in text
        p = d.runs.loc[d.runs["challenger"] == "s1", "p_run_beats"].iat[0]
        assert f"{p:.3f}" in text


def test_a_big_gain_with_tiny_run_noise_deploys(clear):
    d = decide(clear, over="expectation", margin=0.01)
    assert d.actions["s1"] == "deploy"
    assert d.actions["s2"] != "deploy" and d.actions["s3"] != "deploy"
    assert decide(clear, over="single_run", margin=0.01).actions["s1"] == "deploy"


def test_no_true_difference_with_large_run_noise_does_not_deploy(null):
    for over in ("expectation", "single_run"):
        d = decide(null, over=over, margin=0.01)
        assert "deploy" not in d.actions.values()
        assert d.overall != "deploy"


def test_sure_in_expectation_but_not_for_one_run(noisy_runs):
    e = decide(noisy_runs, over="expectation", margin=0.01)
    s = decide(noisy_runs, over="single_run", margin=0.01)
    assert e.actions["s1"] == "deploy"
    assert s.actions["s1"] == "collect more data"
    row_e = e.table.set_index("challenger").loc["s1"]
    row_s = s.table.set_index("challenger").loc["s1"]
    assert row_s["p_better"] < 0.95 <= row_e["p_better"]
    assert row_s["ci_upper"] - row_s["ci_lower"] > 2 * (row_e["ci_upper"] - row_e["ci_lower"])
    # the run-to-run SD the single-run contrast adds is the fit's
    kappa = noisy_runs.replicate_sd_draws()
    assert s.runs["run_sd_challenger"].iat[0] == pytest.approx(kappa[:, 1].mean())


def test_dispatch_equals_the_direct_call(noisy_runs):
    a = decide(noisy_runs, over="single_run", margin=0.02, challengers=["s1"])
    b = decide_replicates(noisy_runs, over="single_run", margin=0.02, challengers=["s1"])
    assert a.table.equals(b.table) and a.runs.equals(b.runs)
    assert decide(noisy_runs).over == "expectation"


def test_failed_diagnostics_and_a_flagged_system_are_unreliable(runs_table, noisy_runs):
    table, _ = runs_table(30, 4, 4, seed=2, system=[0, 0.1, 0, 0], sd_run=0.002)
    with pytest.warns(Warning):
        bad = fit_replicates(table, draws=200, seed=1, thresholds={"ess_bulk_min": 1e9})
    d = decide(bad, margin=0.01)
    assert not d.diagnostics_passed and set(d.actions.values()) == {UNRELIABLE}
    assert "diagnostics" in d.table["reason"].iat[0]
    # a model check that flags the champion makes every comparison unreliable
    check = noisy_runs.model_check
    frame = check.table.copy()
    frame.loc[(frame["system"] == "s0") & (frame["check"] == "run_sd"), "failed"] = True
    from dataclasses import replace

    flagged = replace(noisy_runs, model_check=replace(check, table=frame))
    d = decide(flagged, margin=0.01)
    assert d.misfit == ("s0",) and set(d.actions.values()) == {UNRELIABLE}
    assert "run_sd" in d.table["fit"].iat[0]


def test_options_that_do_not_apply(noisy_runs):
    for bad in ({"r": 2}, {"topics": [10]}, {"n_sim": 10}, {"seed": 3}):
        with pytest.raises(OptionError, match="do not apply to a fit of runs") as err:
            decide(noisy_runs, **bad)
        assert "\n" not in str(err.value)
    with pytest.raises(OptionError, match="'expectation', 'single_run'") as err:
        decide(noisy_runs, over="average")
    assert "\n" not in str(err.value)
    with pytest.raises(OptionError, match="over must be one of"):
        decide_replicates(noisy_runs, over="single-run")
