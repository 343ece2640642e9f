"""Live cross-check against metafor when R is installed (skipped otherwise)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pandas as pd
import pytest

from bayes_ir.frequentist import meta_analysis

R_SCRIPT = r"""
suppressMessages(library(metafor))
d <- read.csv(commandArgs(TRUE)[1])
out <- list()
for (m in c("DL", "REML", "PM")) for (kh in c(FALSE, TRUE)) {
  r <- rma(d$yi, d$vi, method = m, test = if (kh) "knha" else "z",
           control = list(threshold = 1e-12, tol = 1e-12, maxiter = 1000))
  p <- predict(r)
  out[[paste0(m, if (kh) "_KH" else "")]] <- c(r$beta[1], r$se, r$ci.lb, r$ci.ub, r$pval,
    r$tau2, r$se.tau2, r$I2, r$H2, r$QE, r$QEp, p$pi.lb, p$pi.ub)
}
cat(sprintf("%.15g", unlist(out)), sep = "\n")
"""


def test_random_sets_against_rma(rscript, tmp_path):
    rng = np.random.default_rng(2026)
    k = 9
    vi = rng.uniform(0.0005, 0.01, k)
    yi = 0.03 + rng.normal(0, 0.05, k) + rng.normal(0, np.sqrt(vi))
    pd.DataFrame({"yi": yi, "vi": vi}).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "check.R").write_text(R_SCRIPT, encoding="utf-8")
    run = subprocess.run(
        [rscript, str(tmp_path / "check.R"), str(tmp_path / "d.csv")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    if run.returncode != 0 and "metafor" in run.stderr:
        pytest.skip("R is installed but metafor is not")
    assert run.returncode == 0, run.stderr
    values = np.array([float(x) for x in run.stdout.split()]).reshape(6, 13)
    effects = pd.DataFrame({"yi": yi, "vi": vi})
    row = 0
    for method in ("DL", "REML", "PM"):
        for hk in (False, True):
            res = meta_analysis(effects, method=method, hk=hk)
            ci, pi, het = res.conf_int(), res.prediction_interval(), res.heterogeneity()
            ours = [res.estimate, res.se, ci.ci_lower, ci.ci_upper, res.p_value, het.tau2,
                    het.se_tau2, het.i2, het.h2, het.q, het.q_pvalue, pi.pi_lower,
                    pi.pi_upper]  # fmt: skip
            np.testing.assert_allclose(
                ours, values[row], rtol=1e-6, err_msg=json.dumps([method, hk])
            )
            row += 1
