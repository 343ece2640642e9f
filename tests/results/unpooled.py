"""lme4 on rb04 with the champion and challengers as fixed effects (``pooling="artifacts"``).

R 4.2.2, lme4 1.1.31. Data: ``../shared/data/bayesian_risk/rb04_data.csv`` (rmit-ir/bayesian-risk;
45 systems x 50 topics, AP). ``R_SCRIPT`` below was run as ``Rscript unpooled.R rb04_data.csv
out.csv`` (``FULL``) and as ``Rscript unpooled.R rb04_data.csv out.csv 9`` (``GAPS``: every
ninth row of the file dropped, rows with 0-based index 4, 13, 22, ...: 250 of the 2,250 cells
missing) and the CSV it wrote pasted here (``options(digits = 15)``).

The model is that of :func:`bayes_ir.fit` with ``pooling="artifacts"``: the champion and the
four challengers are fixed effects, the 40 artifact runs a random intercept around their own
mean (``(0 + is_artifact | system)`` gives every artifact run a random effect and the systems
of interest none), topics a random intercept. Rows ``Chal. k`` are the fixed-effect contrast
``Chal. k - Champion`` and its standard error; the scales are REML estimates (no SE).
``tests/hierarchical/test_pooling.py`` compares them with the posterior and re-runs the
script when R and lme4 are installed.
"""

from __future__ import annotations

R_SCRIPT = r"""
# Rscript unpooled.R scores.csv out.csv [drop_every]
# The champion and challengers as fixed effects, the artifact runs as random effects:
# score ~ 0 + group + (1 | topic) + (0 + is_artifact | system), REML.
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], check.names = FALSE)
if (length(args) > 2) {  # drop every k-th row (0-based index %% k == k %/% 2): missing cells
  k <- as.integer(args[3])
  d <- d[(seq_len(nrow(d)) - 1) %% k != k %/% 2, ]
}
focus <- c("Champion", paste("Chal.", 1:4))
d$is_artifact <- as.numeric(!(d$system %in% focus))
d$group <- factor(ifelse(d$is_artifact == 1, "artifacts", d$system))
d$group <- relevel(d$group, ref = "Champion")
m <- lme4::lmer(score ~ group + (1 | topic) + (0 + is_artifact | system), data = d,
                REML = TRUE)
b <- lme4::fixef(m)
v <- as.matrix(vcov(m))
chal <- paste0("group", paste("Chal.", 1:4))
vc <- as.data.frame(lme4::VarCorr(m))
out <- rbind(
  data.frame(quantity = sub("^group", "", chal), estimate = b[chal], se = sqrt(diag(v)[chal])),
  data.frame(quantity = c("sigma_topic", "sigma_system", "sigma"),
             estimate = vc$sdcor[match(c("topic", "system", "Residual"), vc$grp)], se = NA)
)
options(digits = 15)
write.csv(out, args[2], row.names = FALSE)
print(out, row.names = FALSE)
"""

#: Rows of the script's output: quantity -> (estimate, se); se is None for the scales.
FULL = {
    "Chal. 1": (0.0491119999999986, 0.0208967031600164),
    "Chal. 2": (0.0480819999999987, 0.0208967031600164),
    "Chal. 3": (-0.00987000000000134, 0.0208967031600164),
    "Chal. 4": (0.106095999999999, 0.0208967031600164),
    "sigma_topic": (0.19412720768491, None),
    "sigma_system": (0.00913075335643595, None),
    "sigma": (0.104483515800081, None),
}
#: Every ninth row dropped (``Rscript unpooled.R rb04_data.csv out.csv 9``).
GAPS_EVERY = 9
GAPS = {
    "Chal. 1": (0.0493063170679702, 0.0221838781033563),
    "Chal. 2": (0.0474750607306974, 0.0220567569816555),
    "Chal. 3": (-0.0172615266741601, 0.0221838781033563),
    "Chal. 4": (0.10589533652372, 0.0220567569816555),
    "sigma_topic": (0.194922220467545, None),
    "sigma_system": (0.0106256881592358, None),
    "sigma": (0.103874595525369, None),
}
