"""Robust04 AP (249 topics x 110 runs): R's deviances and the paper's qualitative findings."""

from __future__ import annotations

import pytest
from results import glm as ref

from bayes_ir.frequentist.glm import compare_links
from bayes_ir.readers import read_scores

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def robust04(shared_data):
    path = shared_data / "robust2004" / "robust2004_ap.csv"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return compare_links(read_scores(path))


def test_deviances_equal_r(robust04):
    frame = robust04.to_frame().set_index("link")
    assert frame["converged"].all()
    for link, deviance in ref.ROBUST04_AP_DEVIANCE.items():
        assert frame.loc[link, "deviance"] == pytest.approx(deviance, rel=1e-9)
    assert frame.loc["identity", "n_pairs"] == ref.ROBUST04_AP_PAIRS
    assert frame.loc["identity", "n_significant"] == ref.ROBUST04_AP_TUKEY_IDENTITY_SIGNIFICANT


def test_paper_findings(robust04):
    # Faggioli, Ferro and Fuhr (2022): sigmoid links fit IR scores better than the
    # identity link of ANOVA and find more significant pairs; exp fits worst.
    dev = robust04.table("deviance").iloc[:, 0]
    pairs = robust04.table("n_significant").iloc[:, 0]
    assert dev["logit"] < dev["identity"] and dev["probit"] < dev["identity"]
    assert dev.idxmax() == "exp"
    assert pairs["logit"] > pairs["identity"] and pairs["probit"] > pairs["identity"]
    assert robust04.best("deviance").iloc[0] in {"logit", "probit", "cloglog"}
