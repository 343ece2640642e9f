"""Artifact sweep: each m refits on the right systems and reports what compare() reports."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_posterior import CALLS, fake_fit

import bayes_ir.hierarchical as hier
from bayes_ir.errors import DataWarning, InsufficientDataError
from bayes_ir.hierarchical.artifact_sweep import SWEEP_COLUMNS, SYSTEM_COLUMNS, artifact_sweep
from bayes_ir.hierarchical.contrasts import compare
from bayes_ir.table import ScoreTable


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    n_art = 8
    systems = ["champ", "chal_x", "chal_y"] + [f"run{i}" for i in range(n_art)]
    effects = np.r_[0.0, 0.05, -0.01, np.linspace(0.1, -0.1, n_art)]
    scores = np.clip(0.4 + effects + rng.normal(0, 0.1, (25, len(systems))), 0, 1)
    t = ScoreTable.from_matrix(scores, systems=systems, measure="AP", collection="toy")
    return t.with_roles(champion="champ", challengers="chal_*")


@pytest.fixture
def patched(monkeypatch):
    CALLS.clear()
    monkeypatch.setattr(hier, "fit", fake_fit, raising=False)


def test_sweep_matches_compare_on_each_refit(table, patched):
    res = artifact_sweep(table, m_values=(0, 2, 8), seed=4, max_workers=1, draws=400)
    assert [len(c[0]) for c in CALLS] == [3, 5, 11]
    # the top m artifacts by mean score, as table.with_roles(top_m=m) selects them
    assert set(CALLS[1][0]) == set(table.with_roles(
        champion="champ", challengers="chal_*", top_m=2
    ).systems)  # fmt: skip
    assert all(c[1]["seed"] == 4 and c[1]["draws"] == 400 for c in CALLS)
    frame = res.to_frame()
    assert list(frame.columns) == list(SWEEP_COLUMNS)
    assert list(frame["m"]) == [0, 0, 2, 2, 8, 8]
    for m in (0, 2, 8):
        sub = table.select(systems=list(CALLS[[0, 2, 8].index(m)][0]))
        ref = compare(fake_fit(sub, seed=4, draws=400)).to_frame()
        got = frame[frame["m"] == m].reset_index(drop=True)
        for col in ("mean", "ci_lower", "ci_upper", "p_better"):
            assert np.allclose(got[col], ref[col], atol=1e-12), col
        assert np.allclose(got["width"], ref["ci_upper"] - ref["ci_lower"])
    systems = res.system_frame()
    assert list(systems.columns) == list(SYSTEM_COLUMNS)
    # gap = challenger lower limit minus champion upper limit, from the system frame
    s8 = systems[systems["m"] == 8].set_index("system")
    g = frame[(frame["m"] == 8) & (frame["challenger"] == "chal_x")]["gap"].iat[0]
    assert g == pytest.approx(s8.loc["chal_x", "ci_lower"] - s8.loc["champ", "ci_upper"])
    # the fake narrows with more systems: the interval width falls with m
    widths = frame[frame["challenger"] == "chal_x"]["width"].to_numpy()
    assert widths[0] > widths[-1]
    assert res.diagnostics_passed  # independent draws: ESS ~ 800 per contrast
    assert "Diagnostics: PASS" in res.summary()
    assert res.conf_int(ci_prob=0.5).shape == (6, 5)


def test_sweep_caps_m_and_validates(table, patched):
    with pytest.warns(DataWarning, match="only 8 artifact runs"):
        res = artifact_sweep(table, m_values=(5, 20, 40), max_workers=1, draws=200)
    assert res.m_values == (5, 8)
    with pytest.raises(InsufficientDataError):
        artifact_sweep(table, m_values=(), max_workers=1)
    no_chal = table.with_roles(champion="champ")
    with pytest.raises(InsufficientDataError):
        artifact_sweep(no_chal, m_values=(1,), max_workers=1)


def test_rb04_sweep_with_the_real_model(rb04_table):
    """The paper's Figure 5 setting: Chal. 4's interval separates from the Champion's."""
    res = artifact_sweep(rb04_table, m_values=(0, 40), seed=3, max_workers=1, chains=2, draws=2000)
    assert res.m_values == (0, 40)
    assert res.diagnostics_passed
    frame = res.to_frame().set_index(["m", "challenger"])
    # the authors' check: Chal. 4's 2.5% quantile above the Champion's 97.5% quantile
    assert frame.loc[(40, "Chal. 4"), "gap"] > 0
    from bayes_ir.hierarchical import fit

    sub = rb04_table.select(systems=["Champion", *rb04_table.challengers])
    direct = compare(fit(sub, chains=2, draws=2000, seed=3)).to_frame().set_index("challenger")
    assert frame.loc[(0, "Chal. 4"), "mean"] == pytest.approx(direct.loc["Chal. 4", "mean"])
    assert frame.loc[(0, "Chal. 4"), "ci_upper"] == pytest.approx(direct.loc["Chal. 4", "ci_upper"])
