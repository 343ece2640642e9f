"""BRisk and the risk review reuse an existing or saved fit, after checking it is the right one."""

from __future__ import annotations

import pandas as pd
import pytest

from bayes_ir.errors import BayesIRError, OptionError
from bayes_ir.hierarchical import load_fit, save_fit
from bayes_ir.risk import brisk, risk_review
from bayes_ir.risk.adjusted import risk_adjusted_scores

SAMPLER = {"seed": 4, "chains": 2, "draws": 2000}
BRISK = ["brisk_minus", "brisk_lower", "brisk_upper", "brisk_p_riskier", "brisk_sig"]


@pytest.fixture(scope="module")
def fresh(toy):
    """BRisk at r = 2, fitted once."""
    return brisk(toy, r=2, **SAMPLER)


def test_reused_fit_gives_the_fresh_numbers(toy, fresh):
    again = brisk(toy, r=2, fit=fresh.fit, seed=4)
    pd.testing.assert_frame_equal(again.to_frame(), fresh.to_frame())


def test_saved_fit_gives_the_fresh_numbers(toy, fresh, tmp_path):
    path = save_fit(fresh.fit, tmp_path / "brisk.nc")
    loaded = load_fit(path, risk_adjusted_scores(toy, r=2))
    again = brisk(toy, r=2, fit=loaded, seed=4)
    pd.testing.assert_frame_equal(again.to_frame(), fresh.to_frame())


def test_fit_at_another_r_or_roles_is_one_error(toy, fresh):
    with pytest.raises(BayesIRError, match=r"r = 5.*measure 'AP~risk\(r=2\)'.*'AP~risk\(r=5\)'"):
        brisk(toy, r=5, fit=fresh.fit)
    other = toy.with_roles(champion="base", challengers=["good"])
    with pytest.raises(BayesIRError, match="roles differ") as caught:
        brisk(other, r=2, fit=fresh.fit)
    assert "\n" not in str(caught.value)


def test_risk_review_with_the_fit_equals_a_fresh_review(toy, fresh):
    """The review given BRisk's fit (or result) equals the review that fits BRisk itself."""
    settings = {"r": 2, "n_resamples": 200, "seed": 4}
    own = risk_review(toy, chains=2, draws=2000, **settings).to_frame()
    with_fit = risk_review(toy, fit=fresh.fit, **settings).to_frame()
    with_result = risk_review(toy, brisk_result=fresh, **settings).to_frame()
    pd.testing.assert_frame_equal(with_fit, own)
    pd.testing.assert_frame_equal(with_result, own)
    assert own.loc[own["role"] == "challenger", BRISK[:-1]].notna().all().all()


def test_risk_review_refuses_brisk_of_another_r(toy, fresh):
    with pytest.raises(OptionError, match="its r '2', the review's '5'"):
        risk_review(toy, r=5, brisk_result=fresh, n_resamples=200)


def test_sweep_reuses_the_given_fit_and_fits_the_other_r(toy, fresh):
    """The r given a fit is not refitted; every entry equals a fresh BRisk at that r."""
    from concurrent.futures import ThreadPoolExecutor

    from bayes_ir.risk import brisk_sweep

    with ThreadPoolExecutor(1) as executor:
        swept = brisk_sweep(toy, r_levels=(1, 2), fits={2: fresh.fit}, executor=executor,
                            **SAMPLER)  # fmt: skip
    assert swept.r_levels == (1.0, 2.0)
    pd.testing.assert_frame_equal(swept.results[1].to_frame(), fresh.to_frame())
    pd.testing.assert_frame_equal(
        swept.results[0].to_frame(), brisk(toy, r=1, **SAMPLER).to_frame()
    )
    with pytest.raises(BayesIRError, match="r = 5, which is not in r_levels"):
        brisk_sweep(toy, r_levels=(1, 2), fits={5: fresh.fit})
