"""Live cross-check against R (skipped without Rscript): glm per link, TukeyHSD, multcomp."""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
import pytest
from results import glm as ref

from bayes_ir.frequentist.glm import fit_glm, link_names, tukey_hsd


@pytest.fixture(scope="module")
def r_output(rscript, tmp_path_factory):
    out = tmp_path_factory.mktemp("glm_r")
    rows = [
        (system, topic, ref.SCORES[i][j])
        for j, system in enumerate(ref.SYSTEMS)
        for i, topic in enumerate(ref.TOPICS)
    ]
    pd.DataFrame(rows, columns=["system", "topic", "score"]).to_csv(out / "scores.csv", index=False)
    (out / "glm.R").write_text(ref.R_SCRIPT)
    if subprocess.run([rscript, "-e", "quit(status = !requireNamespace('multcomp'))"]).returncode:
        pytest.skip("R package multcomp is not installed")
    subprocess.run(
        [rscript, str(out / "glm.R"), str(out / "scores.csv"), repr(ref.EPSILON), str(out) + "/"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return {
        name: pd.read_csv(out / f"{name}.csv") for name in ("stats", "coef", "tukey", "glht_logit")
    }


def test_live_glm_every_link(ref_table, r_output):
    stats = r_output["stats"].set_index("link")
    coef = r_output["coef"]
    for link in link_names(extra=True):
        fit = fit_glm(ref_table, link=link, epsilon=ref.EPSILON)
        assert fit.converged and bool(stats.loc[link, "converged"])
        np.testing.assert_allclose(fit.deviance, stats.loc[link, "deviance"], rtol=1e-10)
        np.testing.assert_allclose(fit.aic, stats.loc[link, "aic"], rtol=1e-10)
        np.testing.assert_allclose(fit.bic, stats.loc[link, "bic"], rtol=1e-10)
        np.testing.assert_allclose(fit.llf, stats.loc[link, "loglik"], rtol=1e-10)
        assert fit.n_clipped == stats.loc[link, "n_clipped"]
        rows = coef[coef["link"] == link]
        np.testing.assert_allclose(fit.params, rows["estimate"], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(fit.bse, rows["std_err"], rtol=1e-6)


def test_live_tukey(ref_table, r_output):
    tk = r_output["tukey"]
    ours = tukey_hsd(ref_table).to_frame()
    assert list(ours["pair"]) == list(tk["pair"])
    for col, r_col, tol in (
        ("diff", "diff", 1e-12),
        ("lwr", "lwr", 1e-8),
        ("p_adj", "p adj", 5e-9),
    ):
        np.testing.assert_allclose(ours[col], tk[r_col], atol=tol)
    glht = r_output["glht_logit"]
    logit = tukey_hsd(fit_glm(ref_table, link="logit")).to_frame()
    np.testing.assert_allclose(logit["diff"], glht["estimate"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(logit["se"], glht["std_err"], rtol=1e-6)


def test_recorded_numbers_are_r_output(r_output):
    # the numbers pasted in tests/results/glm.py are what this R produces
    stats = r_output["stats"].set_index("link")
    for link, rec in ref.R_STATS.items():
        np.testing.assert_allclose(stats.loc[link, "deviance"], rec["deviance"], rtol=1e-12)
    np.testing.assert_allclose(r_output["tukey"]["p adj"], ref.R_TUKEY["p_adj"], atol=1e-12)
    # and the multcomp::glht output stored for machines without R (test_glm_tukey.py)
    glht = r_output["glht_logit"]
    assert list(glht["pair"].str.replace(" ", "")) == ref.R_GLHT_LOGIT["pair"]
    np.testing.assert_allclose(glht["estimate"], ref.R_GLHT_LOGIT["estimate"], rtol=1e-10)
    np.testing.assert_allclose(glht["std_err"], ref.R_GLHT_LOGIT["std_err"], rtol=1e-10)
