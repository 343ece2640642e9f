"""The deployment review fits BRisk once per loss weight and reuses a given (or saved) fit."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

import bayes_ir
import bayes_ir.hierarchical
from bayes_ir.errors import BayesIRError
from bayes_ir.report.review import review
from bayes_ir.risk import risk_review

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "example_scores.csv"
SAMPLER = {"seed": 5, "chains": 2, "draws": 1000}
OPTIONS = {"margin": 0.03, "n_resamples": 999, "r_levels": (1, 5), "topics": (10,), **SAMPLER}


def _table(challengers: str = "chal_*"):
    return bayes_ir.read_scores(EXAMPLE).with_roles(champion="bm25", challengers=challengers)


@pytest.fixture(scope="module")
def counted():
    """The review, with the measure of every hierarchical fit it makes."""
    measures = []
    original = bayes_ir.hierarchical.fit

    def counting(table, **options):
        measures.append(table.measures[0])
        return original(table, **options)

    with pytest.MonkeyPatch.context() as patch, ThreadPoolExecutor(1) as executor:
        patch.setattr(bayes_ir.hierarchical, "fit", counting)
        result = review(_table(), executor=executor, **OPTIONS)
    return result, measures


def test_each_loss_weight_is_fitted_once(counted):
    _, measures = counted
    assert sorted(measures) == ["AP", "AP~risk(r=1)", "AP~risk(r=5)"]


def test_risk_table_equals_a_fresh_risk_review(counted):
    """Reusing the sweep's BRisk at r = 5 leaves the review's numbers unchanged."""
    rv, _ = counted
    own = risk_review(_table(), r=5, n_resamples=999, **SAMPLER)
    pd.testing.assert_frame_equal(rv.risk.to_frame(), own.to_frame())


def test_review_of_a_saved_fit_equals_the_fresh_review(counted, tmp_path):
    rv, _ = counted
    path = bayes_ir.hierarchical.fit(_table(), **SAMPLER).save(tmp_path / "fit.nc")
    loaded = bayes_ir.hierarchical.load_fit(path, _table())
    with ThreadPoolExecutor(1) as executor:
        again = review(_table(), executor=executor, fit=loaded, **OPTIONS)
    pd.testing.assert_frame_equal(again.comparison.to_frame(), rv.comparison.to_frame())
    pd.testing.assert_frame_equal(again.decision.to_frame(), rv.decision.to_frame())
    pd.testing.assert_frame_equal(again.risk.to_frame(), rv.risk.to_frame())
    pd.testing.assert_frame_equal(again.brisk.to_frame(), rv.brisk.to_frame())


def test_fit_of_other_roles_is_one_error(counted):
    rv, _ = counted
    with pytest.raises(BayesIRError, match="the given fit is not a fit of .*roles differ"):
        review(_table("chal_r*"), fit=rv.fit, **OPTIONS)
