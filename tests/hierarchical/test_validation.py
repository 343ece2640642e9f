"""Validation against independent references: the authors' test, rstanarm, lme4 REML."""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
import pytest
from results import hierarchical as ref
from rstanarm_check import assert_matches_rstanarm

from bayes_ir.hierarchical import HierarchicalFit, fit
from bayes_ir.readers import read_scores


def _load(shared_data, name: str):
    table = read_scores(shared_data / "bayesian_risk" / name, measure="AP")
    return table.with_roles(champion="Champion", challengers="Chal.*")


@pytest.fixture(scope="module")
def rb04(shared_data) -> HierarchicalFit:
    # exact sampler, default 4 x 10000 draws: ESS >= 10,000 for every checked quantity
    return fit(_load(shared_data, "rb04_data.csv"), seed=2020)


@pytest.mark.parametrize("name", ref.AUTHORS_FILES)
def test_authors_test_chal4_above_champion(shared_data, name):
    f = fit(_load(shared_data, name), draws=2000, seed=7)
    means = f.system_mean_draws()
    chal4 = float(means.sel(system="Chal. 4").quantile(0.025))
    champ = float(means.sel(system="Champion").quantile(0.975))
    assert chal4 > champ


def test_contrast_agrees_with_rstanarm(rb04):
    assert_matches_rstanarm(rb04.contrast_draws().sel(challenger="Chal. 4"))


def test_system_effects_agree_with_lme4_blups(rb04):
    frame = rb04.to_frame().query("quantity == 'effect'").set_index("system")
    for system, blup in ref.LME4_RB04_BLUP.items():
        row = frame.loc[system]
        assert abs(row["mean"] - blup) < ref.BLUP_TOL_SD * row["sd"], system
    hyper = rb04.hyperparameters().set_index("parameter")["mean"]
    for ours, theirs in (
        ("sigma", "residual"),
        ("sigma_system", "system"),
        ("sigma_topic", "topic"),
    ):
        assert hyper[ours] == pytest.approx(
            ref.LME4_RB04_SD[theirs], rel=ref.VARCOMP_REL_TOL[theirs]
        )
    # b0 (mean of the system means): with zero-sum effects and the prior centred on the
    # grand mean ybar, b0's posterior is centred on ybar exactly; lme4's intercept is ybar
    # too (balanced design). So the posterior mean differs from it by Monte Carlo error
    # only: 4 SEs, sd / sqrt(ESS) with the smallest bulk ESS of the fit.
    ybar = rb04.table.data["score"].mean()
    assert ref.LME4_RB04_FIXEF == pytest.approx(ybar, abs=5e-9)  # R printed 8 decimals
    b0 = rb04.draws["b0"].values
    mcse = b0.std() / np.sqrt(rb04.diagnostics.min_ess_bulk)
    assert abs(b0.mean() - ybar) < 4 * mcse, (b0.mean(), ybar, mcse)


def test_blups_live_lme4(rb04, rscript, shared_data, tmp_path):
    code = f"""
    suppressMessages(library(lme4))
    d <- read.csv("{shared_data / "bayesian_risk" / "rb04_data.csv"}")
    m <- lmer(score ~ 1 + (1 | topic) + (1 | system), data = d, REML = TRUE)
    re <- ranef(m)$system
    write.csv(data.frame(system = rownames(re), blup = re[, 1]), "{tmp_path / "blup.csv"}",
              row.names = FALSE)
    """
    run = subprocess.run([rscript, "-e", code], capture_output=True, text=True, timeout=300)
    if run.returncode != 0 and "there is no package called" in run.stderr:
        pytest.skip("R package lme4 is not installed")
    assert run.returncode == 0, run.stderr
    blup = pd.read_csv(tmp_path / "blup.csv").set_index("system")["blup"]
    frame = rb04.to_frame().query("quantity == 'effect'").set_index("system")
    assert set(blup.index) == set(frame.index)
    gap = (frame["mean"] - blup.reindex(frame.index)).abs() / frame["sd"]
    assert gap.max() < ref.BLUP_TOL_SD, gap.sort_values().tail()
    for system, value in ref.LME4_RB04_BLUP.items():  # the recorded numbers are current
        assert blup[system] == pytest.approx(value, abs=1e-6)


def test_rb04_passes_the_paper_standard(rb04):
    d = rb04.diagnostics
    assert d.passed
    # Kruschke's ESS >= 10,000 holds for every hyperparameter, effect and contrast
    assert d.min_ess_bulk >= 10_000 and d.min_ess_tail >= 10_000
