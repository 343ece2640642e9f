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
# minus Champion on rb04 must match rstanarm (from ../shared/data/README.md):
#
#   stan_glmer(score ~ (1 | topic) + (1 | system), data = rb04, chains = 4, iter = 2000)
#   Chal. 4 - Champion system effect: 0.0558 [0.0187, 0.0929]
#
# Tolerances as in tests/results/hierarchical.py (priors differ slightly, MC error).
RSTANARM_RB04_CHAL4_MINUS_CHAMPION = {"mean": 0.0558, "lower": 0.0187, "upper": 0.0929}
RSTANARM_TOL_MEAN = 0.005
RSTANARM_TOL_LIMITS = 0.01

# ---------------------------------------------------------------------------------------
# Risk-adjusted score, worked example of issue 4: champion 0.50, challenger 0.45,
# r = 2 -> 0.50 + 2 * (0.45 - 0.50) = 0.40.
ADJUSTED_EXAMPLE = {"champion": 0.50, "challenger": 0.45, "r": 2.0, "adjusted": 0.40}
