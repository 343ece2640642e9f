"""Reference numbers for the Bayesian hierarchical model (bayes_ir.hierarchical).

Every number below comes from an independent implementation; the code that produced
it is quoted next to it.
"""

# ---------------------------------------------------------------------------------------
# rstanarm (Stan), from ../shared/data/README.md ("Reference values worth knowing"):
#
#   library(rstanarm)
#   d <- read.csv("bayesian_risk/rb04_data.csv")
#   m <- stan_glmer(score ~ (1 | topic) + (1 | system), data = d, chains = 4, iter = 2000)
#   draws <- as.matrix(m, regex_pars = "b\\[\\(Intercept\\) system:")
#   diff <- draws[, "b[(Intercept) system:Chal._4]"] - draws[, "b[(Intercept) system:Champion]"]
#   c(mean(diff), quantile(diff, c(0.025, 0.975)))
#
# Tolerance used by the tests: 0.005 on the mean and 0.01 on the interval limits. Why:
# the Monte Carlo SE of rstanarm's 2.5%/97.5% quantiles with 4,000 draws is about
# 0.0015-0.002 (posterior SD 0.019, tail ESS ~ 1,000-2,000), ours is below 0.001; the
# priors differ (rstanarm's decov prior scales the group SDs by sigma, ours puts
# independent Exponential(1/sd(y)) priors on them), which moves sigma_system and hence
# the shrinkage of the contrast by a few thousandths at most with 50 topics.
RSTANARM_RB04_CHAL4_MINUS_CHAMPION = {"mean": 0.0558, "lower": 0.0187, "upper": 0.0929}
RSTANARM_TOL_MEAN = 0.005
RSTANARM_TOL_LIMITS = 0.01

# ---------------------------------------------------------------------------------------
# lme4 (R 4.x, lme4 from Debian r-cran-lme4), REML fit of the same crossed model on rb04:
#
#   library(lme4)
#   d <- read.csv("bayesian_risk/rb04_data.csv")
#   m <- lmer(score ~ 1 + (1 | topic) + (1 | system), data = d, REML = TRUE)
#   as.data.frame(VarCorr(m))          # sdcor column
#   fixef(m); ranef(m)$system          # BLUPs
#
# Output (run 2026-11-22 by the hierarchical engineer; also re-run live by
# tests/hierarchical/test_validation.py::test_blups_live_lme4 when R is installed):
LME4_RB04_SD = {"topic": 0.19412800, "system": 0.01565667, "residual": 0.10448343}
LME4_RB04_FIXEF = 0.31469716
LME4_RB04_BLUP = {
    "Champion": -0.02166256,
    "Chal. 1": 0.00431316,
    "Chal. 2": 0.00376839,
    "Chal. 3": -0.02688287,
    "Chal. 4": 0.03445244,
}
# Tolerance for posterior mean vs BLUP: 0.1 posterior SD of the effect. The BLUP plugs
# in the REML variance ratio; the posterior mean averages the shrinkage factor
# chi^2 / (chi^2 + sigma^2 / T) over the posterior of (sigma, chi). With sigma_system
# known to +-20% that moves an effect of size 0.03 by ~ 0.0005 (0.04 SD); the Monte
# Carlo SE of the posterior mean is ~0.01 SD. 0.1 SD covers both with margin and is
# still far tighter than the intervals a decision reads.
BLUP_TOL_SD = 0.1
# Variance components: posterior mean vs REML estimate, relative tolerance. sigma is
# pinned down by 2,156 residual df (posterior SD 1.5%): 2%. sigma_system by 44 df
# (posterior SD ~20%): posterior mean within 10% of REML. sigma_topic by 49 df: 5%.
VARCOMP_REL_TOL = {"residual": 0.02, "system": 0.10, "topic": 0.05}

# ---------------------------------------------------------------------------------------
# The authors' own test (Benham et al. 2020, rmit-ir/bayesian-risk, and
# ../shared/data/README.md): on rb04, trec17 and trec18, Chal. 4's 2.5% quantile of the
# system mean lies above the Champion's 97.5% quantile.
AUTHORS_FILES = ("rb04_data.csv", "trec17_data.csv", "trec18_data.csv")

# ---------------------------------------------------------------------------------------
# Simulation-based calibration: central 90% intervals of the system effects should
# cover the truth 90% of the time when data are simulated from the priors' model.
# Coverage is clustered by dataset (a dataset with an unlucky sigma misses several
# systems at once): in a 400-dataset run (seed 5000: coverage 90.4%, quantile
# chi-square 9.1) the per-dataset coverage had SD 0.124, so the coverage of 200
# datasets has SD 0.124 / sqrt(200) = 0.009; the test accepts [0.86, 0.94] (4.5 SD).
# The posterior quantiles of the truth must be uniform: Pearson chi-square over 5 bins
# below the chi-square(4) 0.999 quantile, 18.47.
SBC_N_DATASETS = 200
SBC_LEVEL = 0.90
SBC_RANGE = (0.86, 0.94)
SBC_CHI2_MAX = 18.47
