"""The replicate model (issue 30) against brms (the same model) and lme4 (REML).

The table (``replicates_reference.case``): 50 topics x 5 systems x 5 seeds simulated with
topic SD 0.15, topic x system SD 0.04, run-to-run SD 0.03 and residual SD 0.05. The stored
R outputs are in ``tests/results/replicates/`` with the scripts that made them; the live
tests run R again.

* brms (``brms_replicates.R``): the same model, priors and likelihood with i.i.d. topic and
  system effects (their system contrasts have the distribution of the zero-sum ones: the
  sums move into the intercept). Of the five SDs, the contrasts, the single-run contrasts
  (a new seed of each system) and the probabilities that a single run of the challenger
  beats one of the champion, at least 90% agree within 2 Monte Carlo SEs (both samplers')
  or 10% of brms's value, all within 4 SEs or 10%, and every mean within 0.1 posterior SD.
  The stored run (4 x 2,000 draws, about 30 minutes on a loaded 2-core machine, in
  ``simulated_brms_time.txt``) has R-hat 1.006 and no divergent transitions; 354 of its
  8,000 transitions stopped at the maximum tree depth (10), which costs efficiency (the
  Monte Carlo SEs it reports), not validity.
* lme4 (``lme4_replicates.R``): REML estimates against the posterior means of the same
  model with the default priors: the residual, topic, topic x system and run-to-run SDs
  within 10% (6,250 scores, 250 cells and 25 runs inform them) and the contrasts
  (differences of BLUPs) within 10% or 0.1 of their posterior SD. The system SD is not
  compared: with 5 systems a posterior mean and a REML point estimate differ by more than
  10% by construction. With one run-to-run SD per system (``dummy()`` terms, 4 degrees of
  freedom each) only the residual, topic and topic x system SDs are compared (the brms run is
  of the pooled model; see test_lme4_reml_one_sd_per_system).

The checks of the stored files alone (lme4 beside brms, both beside the simulated truth)
run too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from replicates_reference import (
    CHALLENGERS,
    CHAMPION,
    NAME,
    RESULTS,
    SD_REPLICATE,
    SD_RESIDUAL,
    SD_TOPIC,
    SD_TOPIC_SYSTEM,
    case,
    rates,
    run_brms,
    run_lme4,
)

#: The SDs lme4's REML estimates and the posterior means both pin down to 10%.
WELL_INFORMED = ("sigma", "sigma_topic", "sigma_topic_system", "sigma_replicate")


def _stored(tool: str) -> pd.DataFrame:
    """A stored R output; a skip naming the command when it is not stored yet."""
    path = RESULTS / f"{NAME}_{tool}.csv"
    if not path.exists():
        pytest.skip(
            f"{path.name} not stored yet: python tests/hierarchical/replicates_reference.py"
        )
    return pd.read_csv(path)


@pytest.fixture(scope="module")
def table():
    return case()


@pytest.fixture(scope="module")
def fit_replicates():
    """``bayes_ir.hierarchical.fit_replicates``."""
    from bayes_ir.hierarchical import fit_replicates

    return fit_replicates


def _mine(fit, draws: int) -> dict[str, tuple[float, float]]:
    """Posterior mean and Monte Carlo SE of every quantity the R scripts report."""
    import arviz_stats as azs

    def stat(x: np.ndarray) -> tuple[float, float]:
        x = np.asarray(x, dtype=float)
        return float(x.mean()), float(azs.mcse(x.reshape(-1, draws), method="mean"))

    out = {name: stat(fit.term_draws(name)[:, 0]) for name in rates(case())}
    expectation = fit.contrast_draws(over="expectation")
    single = fit.contrast_draws(over="single_run")
    for j, chal in enumerate(CHALLENGERS):
        out[f"contrast[{chal}]"] = stat(expectation[:, j])
        out[f"single_run_contrast[{chal}]"] = stat(single[:, j])
        out[f"p_single_run_better[{chal}]"] = stat(single[:, j] > 0)
    return out


def _agree_brms(mine: dict, ref: pd.DataFrame) -> None:
    """2 Monte Carlo SEs or 10% for at least 90% of the quantities, every quantity within
    4 SEs or 10%, and every mean within 0.1 posterior SD of brms's. brms stores a
    probability's mean only: its Monte Carlo SE is taken as ours, and the posterior-SD
    rule does not apply."""
    within, wide = [], []
    for row in ref.itertuples(index=False):
        mean, mcse = mine[row.quantity]
        theirs = mcse if np.isnan(row.mcse) else row.mcse
        gap, se = abs(mean - row.mean), np.hypot(mcse, theirs)
        within.append(gap <= max(2 * se, 0.10 * abs(row.mean)))
        rel = 0.0 if np.isnan(row.sd) else gap / row.sd
        wide.append((row.quantity, gap <= max(4 * se, 0.10 * abs(row.mean)), rel))
    missed = [q for q, ok in zip(ref["quantity"], within, strict=True) if not ok]
    assert np.mean(within) >= 0.9, missed
    assert all(ok and rel <= 0.1 for _, ok, rel in wide), [w for w in wide if not w[1]]


def test_stored_brms_run_is_clean():
    """The stored brms run converged (R-hat < 1.01, no divergent transitions) and holds
    every quantity the comparison reads."""
    ref = _stored("brms")
    assert ref["max_rhat"].max() < 1.01 and ref["divergences"].max() == 0
    want = {*rates(case()), *(f"{k}[{c}]" for c in CHALLENGERS for k in
            ("contrast", "single_run_contrast", "p_single_run_better"))}  # fmt: skip
    assert set(ref["quantity"]) == want


def test_stored_references_agree_with_each_other_and_the_simulation():
    """brms's posterior means and lme4's REML estimates of the well-informed SDs agree
    within 10%, and both recover the simulated SDs within 25%: the stored files are of the
    model and table they claim."""
    brms = _stored("brms").set_index("quantity")["mean"]
    lme4 = _stored("lme4").set_index("quantity")["estimate"]
    truth = dict(zip(WELL_INFORMED, (SD_RESIDUAL, SD_TOPIC, SD_TOPIC_SYSTEM, SD_REPLICATE),
                     strict=True))  # fmt: skip
    for q in WELL_INFORMED:
        assert abs(brms[q] - lme4[q]) <= 0.10 * lme4[q], (q, brms[q], lme4[q])
        assert abs(lme4[q] - truth[q]) <= 0.25 * truth[q], (q, lme4[q], truth[q])
    for c in CHALLENGERS:  # the same contrasts, to 0.1 posterior SD
        sd = _stored("brms").set_index("quantity").at[f"contrast[{c}]", "sd"]
        assert abs(brms[f"contrast[{c}]"] - lme4[f"contrast[{c}]"]) <= 0.1 * sd


@pytest.mark.slow
def test_brms_on_the_same_model(table, fit_replicates):
    """4 x 5,000 draws with brms's priors (the autoscaled rates, passed explicitly)."""
    ref = _stored("brms")
    fit = fit_replicates(table, priors=rates(table), seed=11, draws=5000, model_check=False)
    system = fit.term_draws("system")  # levels in the table's system order
    order = list(table.systems)
    expected = system[:, [order.index(c) for c in CHALLENGERS]] - system[:, [order.index(CHAMPION)]]
    np.testing.assert_allclose(fit.contrast_draws(over="expectation"), expected, atol=1e-12)
    _agree_brms(_mine(fit, 5000), ref)


def _agree_lme4(fit, ref: pd.DataFrame, draws: int, *, scales: tuple[str, ...]) -> None:
    mine = _mine(fit, draws)
    expectation = fit.contrast_draws(over="expectation")
    sd = {f"contrast[{c}]": float(expectation[:, j].std()) for j, c in enumerate(CHALLENGERS)}
    for row in ref.itertuples(index=False):
        q = row.quantity
        if q in scales:
            tol = 0.10 * abs(row.estimate)
        elif q in sd:
            tol = max(0.10 * abs(row.estimate), 0.1 * sd[q])
        else:
            continue  # the system SD, per-system run-to-run SDs, the artifact's contrast
        assert abs(mine[q][0] - row.estimate) <= tol, (q, mine[q][0], row.estimate)


def test_lme4_reml(table, fit_replicates):
    """One run-to-run SD: the default priors, 4 x 1,000 draws (a posterior mean to 10%)."""
    fit = fit_replicates(table, seed=11, draws=1000, model_check=False)
    _agree_lme4(fit, _stored("lme4"), 1000, scales=WELL_INFORMED)


def test_lme4_reml_one_sd_per_system(table, fit_replicates):
    """One run-to-run SD per system (lme4's ``dummy()`` terms): the pooled SDs and the
    contrasts; each system's run-to-run SD rests on 5 runs, too few for a 10% rule.

    The contrasts are not compared here: REML plugs in each system's run-to-run SD
    estimated from 4 degrees of freedom, where the posterior averages over their wide
    uncertainty, which widens each system's effect and shrinks it more (measured: sys1
    0.0110 against lme4's 0.0151, sys3 -0.0291 against -0.0410, 0.2 and 0.45 posterior
    SD); the brms comparison of the same model is the check of its contrasts.
    """
    fit = fit_replicates(table, sigma_replicate="system", seed=11, draws=2000, model_check=False)
    scales = WELL_INFORMED[:3]
    ref = _stored("lme4_system")
    _agree_lme4(fit, ref[ref["quantity"].isin(scales)], 2000, scales=scales)


def _rerun(run, rscript, tool: str, folder: Path) -> Path:
    out = folder / f"{NAME}_{tool}.csv"
    done = run(case(), rscript, out)
    if done.returncode != 0 and ("there is no package called" in done.stderr
                                 or "Boost not found" in done.stderr):  # fmt: skip
        pytest.skip(f"R cannot run {tool}: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def test_lme4_live(rscript, tmp_path):
    """lme4 again: the stored numbers (both variants) are current."""
    out = _rerun(run_lme4, rscript, "lme4", tmp_path)
    for tool, path in (("lme4", out), ("lme4_system", out.with_name(f"{NAME}_lme4_system.csv"))):
        new, old = pd.read_csv(path), _stored(tool)
        assert list(new["quantity"]) == list(old["quantity"])
        # the optimiser; the per-system REML surface is flat (5 runs per SD), and its
        # optimum moves by 5e-5 (relative) from run to run
        rtol = 1e-4 if tool == "lme4" else 1e-3
        np.testing.assert_allclose(new["estimate"], old["estimate"], rtol=rtol)


@pytest.mark.slow
def test_brms_live(brms_rscript, tmp_path):
    """brms again (compiles Stan; ``BAYES_IR_LIVE_BRMS=1``): the same numbers within MC
    error."""
    new = pd.read_csv(_rerun(run_brms, brms_rscript, "brms", tmp_path))
    old = _stored("brms").set_index("quantity")
    for row in new.itertuples(index=False):
        ref = old.loc[row.quantity]
        se = np.hypot(row.mcse, ref["mcse"])
        if np.isnan(se):  # a probability: its mean only
            assert abs(row.mean - ref["mean"]) <= 0.05, row.quantity
        else:
            assert abs(row.mean - ref["mean"]) <= 4 * se, row.quantity
