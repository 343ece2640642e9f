"""BRisk: the hierarchical model of risk-adjusted scores (engine: bayes_ir.hierarchical.fit)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from predictive_reference import check_coverage, exact_pit
from rstanarm_check import assert_matches_rstanarm

from bayes_ir.errors import RoleError, UnknownSystemError
from bayes_ir.risk import BRiskSweep, brisk, brisk_sweep, urisk
from bayes_ir.risk.brisk import BRISK_COLUMNS
from bayes_ir.table import ScoreTable


def spread_table() -> ScoreTable:
    """Systems far apart (0.12 steps) with small noise: shrinkage is negligible, so the
    BRisk contrast with the champion must equal URisk (the mean adjusted difference)."""
    rng = np.random.default_rng(2)
    n = 40
    topic = rng.uniform(0.3, 0.6, n)[:, None]
    offsets = np.array([0.0, 0.12, -0.12, 0.24, -0.24, 0.06])[None, :]
    scores = topic + offsets + rng.normal(0, 0.03, (n, 6))
    return ScoreTable.from_matrix(
        scores, systems=["champ", "up", "down", "a1", "a2", "a3"], measure="score"
    ).with_roles(champion="champ", challengers=["up", "down"])


@pytest.fixture(scope="module")
def spread():
    table = spread_table()
    return table, brisk(table, r=2, seed=4, chains=2, draws=3000)


def test_contrast_equals_urisk_without_shrinkage(spread):
    table, res = spread
    frame = res.to_frame().set_index("system")
    u = urisk(table, r=2, challengers=["up", "down", "a1", "a2", "a3"])
    for s, v in zip(u.systems, u.urisk, strict=True):
        assert frame.loc[s, "contrast"] == pytest.approx(v, abs=0.004)
    assert frame.loc["down", "p_riskier"] > 0.999
    assert frame.loc["up", "p_riskier"] < 0.001


def test_frame_is_minus_the_system_effect(spread):
    _, res = spread
    frame = res.to_frame()
    assert list(frame.columns) == list(BRISK_COLUMNS)
    u = res.effects.stack(sample=("chain", "draw")).transpose("sample", "system").values
    np.testing.assert_allclose(frame["brisk_minus"], -u.mean(axis=0))
    np.testing.assert_allclose(frame["ci_lower"], np.quantile(-u, 0.025, axis=0))
    champ = u[:, 0]
    np.testing.assert_allclose(
        frame["p_riskier"].iloc[1:], (u[:, 1:] < champ[:, None]).mean(axis=0)
    )
    assert np.isnan(frame["p_riskier"].iloc[0])
    assert res.diagnostics_passed and "Diagnostics: PASS" in res.summary()
    assert res.measure == "score" and res.champion == "champ"


def test_failed_diagnostics_are_said_loudly(spread):
    _, res = spread
    bad = replace(res, diagnostics_passed=False, diagnostics_messages=("R-hat above 1.01",))
    text = bad.summary()
    assert "DIAGNOSTICS FAILED" in text and "R-hat above 1.01" in text
    assert not bad.to_frame()["diagnostics_passed"].any()


def test_forecast_uses_the_fit(spread):
    table, res = spread
    fc = res.forecast("down", ci_prob=0.9)
    frame = fc.to_frame()
    assert len(frame) == 40
    np.testing.assert_allclose(frame["champion_score"], table.wide()["champ"].loc[frame["topic"]])
    adj = table.wide()["champ"] + np.where(
        table.wide()["down"] < table.wide()["champ"],
        2 * (table.wide()["down"] - table.wide()["champ"]),
        table.wide()["down"] - table.wide()["champ"],
    )
    np.testing.assert_allclose(frame["adjusted_score"], adj.loc[frame["topic"]])
    # the exact coverage of the fit's Gaussian predictive (predictive_reference.py), up to
    # the Monte Carlo error of the simulated intervals
    observed = res.fit.table.wide()[["down"]]
    np.testing.assert_allclose(frame["adjusted_score"], observed["down"].loc[frame["topic"]])
    check_coverage(frame, exact_pit(res.fit, observed, 0.9), res.fit.n_draws)
    with pytest.raises(RoleError, match="'champ' is the champion"):
        res.forecast("champ")
    with pytest.raises(UnknownSystemError, match="challenger 'dwn' is not in the data"):
        res.forecast("dwn")


def test_rb04_r1_matches_rstanarm(rb04):
    res = brisk(rb04, r=1, seed=1)
    row = res.to_frame().set_index("system").loc["Chal. 4"]
    # at r = 1 BRisk is the model on the raw scores: the contrast's draws are
    # Chal. 4's effect minus the Champion's, and they must agree with rstanarm's
    diff = res.effects.sel(system="Chal. 4") - res.effects.sel(system="Champion")
    flat = diff.values.reshape(-1)
    assert row["contrast"] == pytest.approx(flat.mean(), abs=1e-12)
    assert row["contrast_lower"] == pytest.approx(np.quantile(flat, 0.025), abs=1e-12)
    assert row["contrast_upper"] == pytest.approx(np.quantile(flat, 0.975), abs=1e-12)
    assert_matches_rstanarm(diff)


def test_sweep_over_r(spread):
    from concurrent.futures import ThreadPoolExecutor

    table, _ = spread
    with ThreadPoolExecutor(max_workers=1) as pool:
        sw = brisk_sweep(table, r_levels=(1, 5), executor=pool, seed=4, chains=2, draws=1000)
    assert isinstance(sw, BRiskSweep) and sw.r_levels == (1.0, 5.0)
    frame = sw.to_frame()
    down = frame[frame["system"] == "down"].set_index("r")["contrast"]
    assert down[5.0] < down[1.0]  # losses weigh more
    assert all(res.fit is None for res in sw.results)
    assert "BRisk-" in sw.summary()
