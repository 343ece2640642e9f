"""The model check across groups: the topic effects it draws, its false alarms and its power.

References: the blocked Gibbs sampler's own joint draws of the topic effects (the check
draws them from their full conditional; both must give the same posterior), data simulated
from the model (no system flagged), and a system whose residual SD is 3 times the others'
in one collection (flagged, with that collection named).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import ModelCheckWarning
from bayes_ir.hierarchical import fit_across
from bayes_ir.hierarchical.across_check import _topic_draws, check_across
from bayes_ir.table import ScoreTable


def _table(seed: int, *, wide: tuple[str, str] | None = None, sizes=(30, 40, 25, 35)):
    rng = np.random.default_rng(seed)
    rows = []
    beta = dict(zip([f"s{k}" for k in range(8)], np.linspace(-0.02, 0.03, 8), strict=True))
    for c, n_t in enumerate(sizes):
        gamma = rng.normal(0, 0.02, len(beta))
        for t in range(n_t):
            a = rng.normal(0, 0.12)
            for k, s in enumerate(beta):
                sd = 0.24 if wide == (f"c{c}", s) else 0.08
                y = 0.4 + a + beta[s] + gamma[k] + rng.normal(0, sd)
                rows.append((f"c{c}", "AP", s, f"q{t}", y))
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    table = ScoreTable.from_frame(frame, check_range=False)
    return table.with_roles(champion="s0", challengers=["s1", "s2"])


def test_conditional_topic_draws_match_the_samplers_joint_draws():
    fit = fit_across(_table(1), draws=2000, tune=200, seed=2, model_check=False)
    design = fit.design
    joint = fit.posterior["posterior"]["topic_effect"]  # kept: a small table
    b0, sigma, tau = (fit.term_draws(k) for k in ("b0", "sigma", "sigma_topic"))
    beta, gamma = fit.term_draws("system"), fit.term_draws("system:collection")
    inter = design.term("system:collection")
    rng = np.random.default_rng(5)
    for c, coll in enumerate(design.groups):
        cells = design.cells.assign(y=design.y)
        part = cells[cells["collection"] == coll]
        wide = part.pivot(index="topic", columns="system", values="y")[list(design.systems)]
        fixed = np.stack(
            [
                b0[:, c] + beta[:, j] + gamma[:, inter.levels.index(f"{s}|{coll}")]
                for j, s in enumerate(design.systems)
            ],
            axis=-1,
        )
        resid = wide.to_numpy()[None] - fixed[:, None, :]
        mine = _topic_draws(resid, sigma[:, c], tau[:, c], rng)
        labels = [f"{coll}|{t}" for t in wide.index]
        ref = joint.sel(topic=labels).stack(s=("chain", "draw")).transpose("s", "topic").values
        np.testing.assert_allclose(mine.sum(axis=1), 0.0, atol=1e-10)  # zero-sum, as the model
        se = ref.std(axis=0) / np.sqrt(1000)  # ESS of the joint draws >= 1000 at these sizes
        assert np.abs(mine.mean(axis=0) - ref.mean(axis=0)).max() < 5 * np.hypot(se, se).max()
        np.testing.assert_allclose(mine.std(axis=0), ref.std(axis=0), rtol=0.08)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_data_from_the_model_are_described(seed):
    fit = fit_across(_table(seed), draws=1000, tune=100, seed=seed, model_check=False)
    check = check_across(fit, seed=seed)
    assert check.passed, check.summary()
    assert set(check.groups) == set(fit.design.groups)
    frame = check.to_frame()
    assert len(frame) == 4 * 8 and list(frame.columns[:3]) == ["collection", "system", "role"]
    assert frame["coverage_95"].between(0.8, 1.0).all()


def test_a_system_three_times_wider_in_one_collection_is_flagged_there():
    table = _table(21, wide=("c1", "s1"), sizes=(30, 60, 25, 35))
    with pytest.warns(ModelCheckWarning, match=r"does not describe s1 \(.*in c1"):
        fit = fit_across(table, draws=1000, tune=100, seed=4)
    check = fit.model_check
    assert check.flagged == ("s1",)
    assert all(f.endswith("in c1") for f in check.failed("s1")) and "sd in c1" in check.failed("s1")
    res = fit.contrasts()
    assert res.misfit == ("s1",)
    text = res.summary()
    assert "s1 \u2020 - s0" in text and "model misfit" in text and "sd in c1" in text
    from bayes_ir.decision import decide

    d = decide(fit)
    row = d.to_frame().set_index("challenger")
    assert row.loc["s1", "action"] == "unreliable" and "sd in c1" in row.loc["s1", "fit"]
    assert row.loc["s2", "fit"] == "ok" and row.loc["s2", "action"] != "unreliable"
