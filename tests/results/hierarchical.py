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
# Simulation-based calibration (Talts et al. 2018): for every parameter (b0, the three
# scales, each topic and system effect) the rank of the true value among 99 posterior
# draws is uniform on 0..99 when the sampler is right. Each parameter's ranks are binned
# (SBC_BINS equal bins) and tested with Pearson's chi-square; the family of P tests is
# held at SBC_ALPHA by Bonferroni (each at SBC_ALPHA / P). The default suite runs
# SBC_N_DATASETS datasets of 10 topics x 5 systems (19 parameters); the slow test
# SBC_N_DATASETS_SLOW datasets of 20 x 8 (32 parameters) with 10 bins.
# Coverage of the central 90% intervals is clustered by dataset (an unlucky sigma
# misses several parameters at once): SBC_COVERAGE_SD bounds the SD of the mean coverage
# per dataset (measured: 0.124 over 400 datasets of 20 x 8, system effects only; 0.070
# over 60 datasets of 10 x 5, all 19 parameters, seed 5000: coverage 88.9%, smallest
# rank p-value 0.12 (sigma)); the tests accept 0.90 +- 4.5 SD / sqrt(datasets).
SBC_LEVEL = 0.90
SBC_ALPHA = 0.01
SBC_N_DATASETS = 60
SBC_BINS = 5
SBC_N_DATASETS_SLOW = 400
SBC_BINS_SLOW = 10
SBC_COVERAGE_SD = 0.12
