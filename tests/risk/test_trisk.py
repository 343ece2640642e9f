"""TRisk: Student t against scipy, and rmit-ir/trisk's numbers on the paper's data."""

from __future__ import annotations

import numpy as np
import pytest
from results.risk import TRISK_REFERENCE, TRISK_TOL
from scipy import stats

from bayes_ir.errors import DataWarning, OptionError
from bayes_ir.readers import read_scores
from bayes_ir.risk import calc_risk, iter_risk, risk_adjusted_differences, trisk
from bayes_ir.table import ScoreTable


def test_sample_sd_is_scipys_one_sample_t_test(toy):
    res = trisk(toy, r=5, sd="sample")
    d = risk_adjusted_differences(toy, r=5)
    for j, system in enumerate(res.systems):
        ref = stats.ttest_1samp(d.sel(system=system).values, 0.0)
        assert res.trisk[j] == pytest.approx(ref.statistic, rel=1e-12)
        assert res.p_value[j] == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.df == toy.wide().shape[0] - 1


def test_population_sd_scales_by_sqrt_n_over_n_minus_1(toy):
    n = toy.wide().shape[0]
    pop = trisk(toy, r=2, sd="population")
    samp = trisk(toy, r=2, sd="sample")
    np.testing.assert_allclose(pop.trisk, samp.trisk * np.sqrt(n / (n - 1)))
    np.testing.assert_allclose(pop.urisk, samp.urisk)
    assert pop.sd == "population"  # the explicit default
    frame = pop.to_frame()
    np.testing.assert_allclose(frame["trisk_minus"], -frame["trisk"])


def test_bad_sd(toy):
    with pytest.raises(OptionError, match="^sd must be one of 'population', 'sample', got 'n-1'"):
        trisk(toy, sd="n-1")


@pytest.mark.parametrize("file, challenger, alpha, r, u_ref, t_ref, p_ref", TRISK_REFERENCE)
def test_rmit_trisk_reference(shared_data, file, challenger, alpha, r, u_ref, t_ref, p_ref):
    table = read_scores(shared_data / "bayesian_risk" / file, measure="AP")
    table = table.with_roles(champion="Champion", challengers="Chal.*")
    assert r == 1 + alpha  # trisk's alpha is r - 1
    res = trisk(table, r=r, sd="population", challengers=[challenger])
    assert res.urisk[0] == pytest.approx(u_ref, abs=TRISK_TOL["urisk"])
    assert res.trisk[0] == pytest.approx(t_ref, abs=TRISK_TOL["trisk"])
    if p_ref is not None:
        assert res.p_value[0] == pytest.approx(p_ref, abs=TRISK_TOL["p"])
    # and it is r = 1 + alpha, not r = alpha, that reproduces them
    if alpha > 1:
        other = trisk(table, r=alpha, challengers=[challenger])
        assert abs(other.urisk[0] - u_ref) > 10 * TRISK_TOL["urisk"]


@pytest.fixture()
def shifted():
    """``up`` = champion + 0.1 and ``twin`` = champion on every topic: constant differences."""
    rng = np.random.default_rng(5)
    base = rng.uniform(0.1, 0.8, size=25)
    other = rng.uniform(0.1, 0.8, size=25)
    return ScoreTable.from_matrix(
        np.column_stack([base, base + 0.1, base, other]),
        systems=["base", "up", "twin", "other"],
        topics=[f"q{i}" for i in range(25)],
        measure="AP",
    ).with_roles(champion="base", challengers=["up", "twin", "other"])


def test_constant_differences_give_nan_trisk_with_a_warning(shifted):
    # The rounding residue of the SD of base + 0.1 - base is ~1e-17: dividing by it gave
    # TRisk ~ -7e15. TRisk is undefined there; URisk is the constant itself.
    d = risk_adjusted_differences(shifted, r=5).sel(system="up").values
    assert 0 < d.std() < 1e-15  # the trap: not exactly zero
    with pytest.warns(DataWarning, match=r"TRisk is undefined \(NaN\) for '\w+', '\w+':") as w:
        res = trisk(shifted, r=5)
    assert "'up'" in str(w[0].message) and "'twin'" in str(w[0].message)
    frame = res.to_frame().set_index("system")
    assert np.isnan(frame.loc["up", "trisk"]) and np.isnan(frame.loc["up", "p_value"])
    assert np.isnan(frame.loc["twin", "trisk"]) and np.isnan(frame.loc["twin", "p_value"])
    assert frame.loc["up", "urisk"] == pytest.approx(0.1, abs=1e-12)
    assert frame.loc["twin", "urisk"] == 0.0
    ref = stats.ttest_1samp(risk_adjusted_differences(shifted, r=5).sel(system="other"), 0.0)
    n = 25
    assert frame.loc["other", "trisk"] == pytest.approx(ref.statistic * np.sqrt(n / (n - 1)))


def test_constant_differences_in_calc_and_iter_risk(shifted):
    with pytest.warns(DataWarning, match="TRisk is undefined.*'twin', 'up'"):
        out = calc_risk(shifted, "TRisk").set_index("system")["value"]
    assert np.isnan(out["up"]) and np.isnan(out["twin"]) and np.isfinite(out["other"])
    with pytest.warns(DataWarning, match="TRisk is undefined.*'twin', 'up'"):
        values = list(iter_risk(shifted, "TRisk"))
    assert all(np.isnan(v.value) for v in values if v.system in ("up", "twin"))
    assert all(np.isfinite(v.value) for v in values if v.system == "other")


def test_every_summary_names_its_sd_convention(toy):
    d = risk_adjusted_differences(toy, r=3)
    n = toy.wide().shape[0]
    for sd, ddof, words in (
        ("population", 0, "population SD (divide by n,"),
        ("sample", 1, "sample SD (divide by n - 1,"),
    ):
        res = trisk(toy, r=3, sd=sd)
        assert words in res.summary()
        assert set(res.to_frame()["sd"]) == {sd}
        # the standard error is the SD of that convention over sqrt(n)
        se = d.std("topic", ddof=ddof).sel(system=list(res.systems)).values / np.sqrt(n)
        np.testing.assert_allclose(res.se, se, rtol=1e-12)
