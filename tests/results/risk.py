"""Reference numbers for the risk toolkit (bayes_ir.risk).

Every number below comes from an independent source; how it was obtained is written
next to it.
"""

# ---------------------------------------------------------------------------------------
# rmit-ir/trisk (Benham's reference implementation of URisk/TRisk, Ruby + R):
#
#   ruby trisk.rb run.csv baseline.csv map 1      # inferential mode
#
# trisk.rb weights losses by (1 + $alpha), takes the *population* SD
# (sx = sqrt(sum((x - urisk)^2) / c)), TRisk = urisk / (sx / sqrt(c)), and the p-value
# from R's pt with c - 1 df on |TRisk| rounded to 4 decimals; it prints
# "alpha,urisk,trisk,pvalue" for alpha in 0..10.
#
# The values below are the ones quoted in issue 4 for ../shared/data/bayesian_risk
# (AP, 50 topics per file). Which loss weight do they correspond to? Recomputing
# with r = 1 + alpha reproduces all of them (alpha = 0 -> r = 1, alpha = 5 -> r = 6);
# r = 5 gives different values (rb04 Chal. 4: URisk 0.0709, TRisk 2.368). So
# rmit-ir/trisk's "alpha = 5" is r = 6 in bayes_ir's (and Benham et al.'s) notation.
TRISK_REFERENCE = [
    # file, challenger, trisk alpha, bayes_ir r, URisk, TRisk, p (None: not quoted)
    ("rb04_data.csv", "Chal. 1", 0, 1.0, 0.0491, 4.056, None),
    ("rb04_data.csv", "Chal. 4", 5, 6.0, 0.0622, 1.834, 0.073),
    ("trec18_data.csv", "Chal. 4", 5, 6.0, 0.1497, 2.253, None),
]
#: The quoted values are rounded to 4 decimals (URisk), 3 decimals (TRisk, p).
TRISK_TOL = {"urisk": 5e-5, "trisk": 5e-4, "p": 5e-4}

# ---------------------------------------------------------------------------------------
# ZRisk / GeoRisk (Dincer, Macdonald and Ounis 2016) on a 3-system x 4-topic matrix,
# computed by hand with plain Python floats (no numpy), i = system (row), j = topic:
#
#   x = [[0.40, 0.10, 0.30, 0.60], [0.20, 0.30, 0.25, 0.50], [0.60, 0.05, 0.10, 0.70]]
#   S = [1.40, 1.25, 1.45]; T = [1.20, 0.45, 0.65, 1.80]; N = 4.10
#   e_ij = S_i T_j / N; z_ij = (x_ij - e_ij) / sqrt(e_ij)
#   ZRisk_i = sum_j z_ij + alpha * sum_{z_ij < 0} z_ij
#   GeoRisk_i = sqrt(S_i / 4 * Phi(ZRisk_i / 4)),  Phi(u) = (1 + erf(u / sqrt(2))) / 2
#
# (the same arithmetic is repeated inside tests/risk/test_zrisk.py).
ZRISK_MATRIX = [
    [0.40, 0.10, 0.30, 0.60],
    [0.20, 0.30, 0.25, 0.50],
    [0.60, 0.05, 0.10, 0.70],
]
ZRISK_HAND = {
    # alpha: [(ZRisk_i, GeoRisk_i) for i in systems]
    0: [(-0.005126, 0.418116), (0.215916, 0.403703), (-0.195436, 0.417357)],
    1: [(-0.17592, 0.410927), (-0.124135, 0.390361), (-0.739919, 0.393256)],
    4: [(-0.688301, 0.388705), (-1.144288, 0.347946), (-2.373368, 0.31658)],
}
ZRISK_TOL = 1e-6

# ---------------------------------------------------------------------------------------
# BRisk at r = 1 is the hierarchical model on the raw scores, so its contrast Chal. 4
# minus Champion on rb04 must match rstanarm: the stored R output, its script and the
# tolerance are in tests/results/hierarchical.py (RSTANARM_*).

# ---------------------------------------------------------------------------------------
# Risk-adjusted score, worked example of issue 4: champion 0.50, challenger 0.45,
# r = 2 -> 0.50 + 2 * (0.45 - 0.50) = 0.40.
ADJUSTED_EXAMPLE = {"champion": 0.50, "challenger": 0.45, "r": 2.0, "adjusted": 0.40}

# ---------------------------------------------------------------------------------------
# BCa bootstrap of URisk against R's boot (boot 1.3-28.1, R 4.2.2). Data: BCA_SCORES, the
# champion and two challengers of tests/risk/conftest.py's toy table rounded to 4
# decimals ('risky' loses 0.25 on four topics: with r = 5 its differences are strongly
# skewed, where BCa's bias and acceleration corrections matter). The columns were written
# to bca_scores.csv (header champion,good,risky) and BCA_R_SCRIPT run as
# ``Rscript bca.R bca_scores.csv 5 0.975 1000000 out.csv`` (r = 5; level 0.975 = 0.95
# Bonferroni over the two challengers); BCA_R is its output. The acceleration is given
# to boot.ci through the exact empirical influence of the mean, L_i = d_i - mean(d), for
# which sum(L^3) / (6 sum(L^2)^(3/2)) equals Efron and Tibshirani's jackknife
# acceleration (1993, eq. 14.15) exactly. Both sides are Monte Carlo estimates: the
# tests accept a few Monte Carlo SEs of each endpoint, computed in the test.
BCA_R_SCRIPT = r"""
# Rscript bca.R bca_scores.csv r conf B out.csv
args <- commandArgs(trailingOnly = TRUE)
x <- read.csv(args[1])
r <- as.numeric(args[2]); conf <- as.numeric(args[3]); B <- as.integer(args[4])
set.seed(20261124)
out <- NULL
for (s in setdiff(names(x), "champion")) {
  d <- x[[s]] - x$champion
  adj <- ifelse(d < 0, r * d, d)
  b <- boot::boot(adj, function(v, i) mean(v[i]), R = B)
  ci <- boot::boot.ci(b, conf = conf, type = "bca", L = adj - mean(adj))
  z0 <- qnorm(mean(b$t < b$t0))
  out <- rbind(out, data.frame(system = s, urisk = mean(adj), lower = ci$bca[4],
                               upper = ci$bca[5], z0 = z0, B = B))
}
options(digits = 15)
write.csv(out, args[5], row.names = FALSE)
"""
BCA_SCORES = {
    "champion": [
        0.1705, 0.2715, 0.6172, 0.4876, 0.2045, 0.4083, 0.3286, 0.2685, 0.5252, 0.1625,
        0.3735, 0.4552, 0.3735, 0.4404, 0.5566, 0.6744, 0.3485, 0.5291, 0.5387, 0.3443,
        0.1447, 0.6576, 0.3316, 0.3402, 0.634, 0.4484, 0.4161, 0.5005, 0.1874, 0.5536,
    ],
    "good": [
        0.1813, 0.3333, 0.6483, 0.5703, 0.2035, 0.4409, 0.4099, 0.3632, 0.5205, 0.2075,
        0.4433, 0.4969, 0.4812, 0.4647, 0.6272, 0.7029, 0.4507, 0.5885, 0.5876, 0.3528,
        0.2551, 0.7402, 0.4142, 0.4343, 0.7045, 0.4892, 0.4521, 0.5365, 0.2885, 0.5698,
    ],
    "risky": [
        0.2486, 0.3551, 0.7117, 0.2376, 0.2695, 0.4637, 0.4185, 0.3828, 0.6304, 0.2568,
        0.4571, 0.5511, 0.4586, 0.5468, 0.6307, 0.767, 0.4363, 0.63, 0.6332, 0.4853,
        0.2646, 0.7776, 0.3809, 0.0902, 0.7118, 0.549, 0.4605, 0.614, 0.0, 0.6175,
    ],
}  # fmt: skip
BCA_R_LOSS_WEIGHT = 5.0
BCA_R_LEVEL = 0.975
BCA_R_RESAMPLES = 1_000_000
# write.csv output: system, urisk, lower, upper, z0 (R's bias correction)
BCA_R = {
    "good": (0.05478, 0.0400066666666666, 0.0685266666666667, -0.00849255867892964),
    "risky": (-0.0335133333333333, -0.267110138429721, 0.0853133333333333, -0.0614284441156535),
}
