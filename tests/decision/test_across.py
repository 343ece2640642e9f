"""Decisions across collections: each number recomputed from the fit's draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_ir import decide
from bayes_ir.decision.rules import UNRELIABLE
from bayes_ir.errors import OptionError
from bayes_ir.hierarchical import fit_across
from bayes_ir.table import ScoreTable


def _table(shift=0.05):
    rng = np.random.default_rng(5)
    rows = []
    for c, n_t in enumerate((15, 25, 20)):
        gamma = rng.normal(0, 0.01, 2)
        for t in range(n_t):
            a = rng.normal(0, 0.1)
            for k, s in enumerate(("base", "new")):
                y = 0.4 + a + shift * k + gamma[k] + rng.normal(0, 0.05)
                rows.append((f"c{c}", "AP", s, f"t{t}", float(np.clip(y, 0, 1))))
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    return ScoreTable.from_frame(frame).with_roles(champion="base", challengers=["new"])


@pytest.fixture(scope="module")
def across():
    return fit_across(_table(), draws=2000, tune=100, seed=4)


@pytest.mark.parametrize("over", ["average", "new"])
def test_the_decision_is_the_rule_on_the_chosen_draws(across, over):
    d = decide(across, over=over, margin=0.01, seed=3)
    res = across.contrasts()
    draws = res.overall[:, 0] if over == "average" else res.predictive_draws(seed=3)[:, 0]
    row = d.table.iloc[0]
    assert row["p_better"] == pytest.approx((draws > 0.01).mean())
    assert row["p_worse"] == pytest.approx((draws < -0.01).mean())
    assert row["loss_deploy"] == pytest.approx(np.maximum(0.01 - draws, 0).mean())
    assert row["mean"] == pytest.approx(draws.mean())
    expected = "deploy" if (draws > 0.01).mean() >= 0.95 and row["loss_deploy"] <= 0.001 else None
    if expected:
        assert row["action"] == expected
    assert d.over == over and d.by == "collection"
    word = (
        "averaged over the population of collections"
        if over == "average"
        else "on a new collection"
    )
    assert word in d.rule
    assert d.collection == "3 collections" and d.measure == "AP"


def test_average_deploys_a_clear_winner_and_new_is_more_cautious(across):
    avg = decide(across, over="average", margin=0.01)
    new = decide(across, over="new", margin=0.01)
    assert avg.actions == {"new": "deploy"}
    assert new.table["p_better"].iat[0] <= avg.table["p_better"].iat[0]
    assert "DEPLOY" in avg.summary()


def test_failed_diagnostics_are_unreliable():
    with pytest.warns(Warning):
        bad = fit_across(_table(), draws=200, tune=10, seed=1, thresholds={"ess_bulk_min": 1e9})
    d = decide(bad)
    assert d.table["action"].iat[0] == UNRELIABLE and not d.diagnostics_passed


def test_options_that_do_not_apply(across):
    with pytest.raises(OptionError, match="r, topics and n_sim do not apply"):
        decide(across, r=2)
    with pytest.raises(OptionError, match="over"):
        decide(across, over="next")
