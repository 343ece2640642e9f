"""Reference numbers for the likelihood families (bayes_ir.hierarchical.families).

brms (Buerkner 2017; R 4.2.2, brms 2.18.0, rstan 2.21.7 from Debian) fits the same
models: the crossed random effects ``(1 | topic) + (1 | system)`` with
``zero_one_inflated_beta()`` on rb04 (AP) and ``bernoulli()`` on the GLUE RTE
per-example correctness of bert-base-cased and distilbert-base-cased (Ranger's examples,
../shared/data/ranger), with our priors written in brms' terms. BRMS_R_SCRIPT (below)
was run as

    Rscript brms_families.R ../shared/data out_prefix

and each dict is its printed output. brms' intercept is that of independent topic and
system effects (ours: their zero-sum form, whose b0 is the intercept plus the mean of
the fitted effects), so the score-scale mean of a system is integrated over the topic
population N(0, sd_topic^2) around brms' intercept: the same quantity as ours
(:mod:`bayes_ir.hierarchical.families.base`), computed in R with R's own ``plogis`` and
``dnorm`` on a trapezoidal grid.

Tolerances (``tests/hierarchical/families/test_brms.py``): each score-scale contrast's
posterior mean within BRMS_N_MCSE Monte Carlo SEs of the difference (ours and brms'
combined) and its posterior SD within BRMS_SD_REL.
"""

BRMS_N_MCSE = 2.0
BRMS_SD_REL = 0.10

BRMS_R_SCRIPT = r"""
# Rscript brms_families.R DATA_DIR OUT_PREFIX
args <- commandArgs(trailingOnly = TRUE)
suppressPackageStartupMessages({library(brms); library(posterior)})
data_dir <- args[1]; out <- args[2]
pop_mean <- function(eta, sd) {
  # E[plogis(eta + sd * Z)], Z ~ N(0, 1): trapezoidal rule (step min(0.3, 0.75 / max sd))
  step <- min(0.3, 0.75 / max(sd)); z <- seq(-8.5, 8.5, by = step)
  w <- dnorm(z); w <- w / sum(w)
  acc <- 0
  for (k in seq_along(z)) acc <- acc + w[k] * plogis(eta + sd * z[k])
  acc
}
contrasts <- function(d, systems, champion, inflated) {
  # score-scale means over the topic population, and each system minus the champion
  means <- sapply(seq_along(systems), function(j) {
    eta <- d$b_Intercept + d[[sprintf("r_sid[s%d,Intercept]", j)]]
    m <- pop_mean(eta, d$sd_topic__Intercept)
    if (inflated) m <- d$zoi * d$coi + (1 - d$zoi) * m
    m
  })
  champ <- which(systems == champion)
  rows <- list()
  for (j in seq_along(systems)) {
    for (kind in c("mean", "contrast")) {
      if (kind == "contrast" && j == champ) next
      x <- if (kind == "mean") means[, j] else means[, j] - means[, champ]
      dr <- draws_df(x = x, .chain = d$.chain, .iteration = d$.iteration, .draw = d$.draw)
      s <- summarise_draws(dr, "mean", "sd", ~quantile(.x, c(0.025, 0.975)), "mcse_mean",
                           "ess_bulk", "ess_tail")
      rows[[length(rows) + 1]] <- data.frame(kind = kind, system = systems[j], s[, -1])
    }
  }
  do.call(rbind, rows)
}
run <- function(name, d, family, priors, champion, inflated) {
  systems <- unique(d$system)
  d$sid <- factor(sprintf("s%d", match(d$system, systems)))
  t0 <- proc.time()[["elapsed"]]
  fit <- brm(bf(score ~ 1 + (1 | topic) + (1 | sid)), data = d, family = family,
             prior = priors, chains = 4, cores = 2, iter = 4000, warmup = 1000,
             seed = 2028, refresh = 0)
  wall <- proc.time()[["elapsed"]] - t0
  times <- rstan::get_elapsed_time(fit$fit)
  dd <- as_draws_df(fit)
  keep <- intersect(c("b_Intercept", "sd_topic__Intercept", "sd_sid__Intercept", "phi", "zoi",
                      "coi"), variables(dd))
  hyper <- summarise_draws(subset_draws(dd, variable = keep), "mean", "sd", "mcse_mean",
                           "rhat", "ess_bulk", "ess_tail")
  res <- contrasts(dd, systems, champion, inflated)
  cat(sprintf("@@ %s: wall %.1f s (compile + sample), sampling %.1f s (slowest chain)\n",
              name, wall, max(rowSums(times))))
  write.csv(res, paste0(out, "_", name, ".csv"), row.names = FALSE)
  write.csv(hyper, paste0(out, "_", name, "_hyper.csv"), row.names = FALSE)
  options(width = 200, digits = 10); print(res); print(hyper)
}
rb04 <- read.csv(file.path(data_dir, "bayesian_risk", "rb04_data.csv"))
inside <- rb04$score[rb04$score > 0 & rb04$score < 1]
run("zoib_rb04", rb04, zero_one_inflated_beta(),
    c(set_prior(sprintf("normal(%.15g, 2.5)", qlogis(mean(inside))), class = "Intercept"),
      set_prior("exponential(1)", class = "sd"),
      set_prior("exponential(0.1)", class = "phi")),
    "Champion", TRUE)
glue <- read.csv(file.path(data_dir, "ranger", "glue_persample_tidy.csv.gz"))
rte <- glue[glue$collection == "rte", c("system", "topic", "score")]
run("bernoulli_rte", rte, bernoulli(),
    c(set_prior(sprintf("normal(%.15g, 2.5)", qlogis(mean(rte$score))), class = "Intercept"),
      set_prior("exponential(1)", class = "sd")),
    "bert-base-cased", FALSE)
print(R.version.string); print(packageVersion("brms")); print(packageVersion("rstan"))
"""

# ---------------------------------------------------------------------------------------
# Simulation-based calibration of the kernel families (tests/hierarchical/families/
# test_calibration.py): the priors the datasets are drawn from and fitted with (logit
# scale; phi's prior mean 20 keeps the beta shapes away from underflow), the number of
# datasets per family and the required coverage of the central 90% intervals.
from bayes_ir.hierarchical import Priors  # noqa: E402

SBC_PRIORS = Priors(
    b0_mu=0.5,
    b0_sd=0.5,
    sigma_rate=1.0,
    sigma_topic_rate=1.5,
    sigma_system_rate=3.0,
    skewness_max=0.9,
    phi_rate=0.05,
)
SBC_N_DATASETS = 200
SBC_COVERAGE = (0.87, 0.93)

# ---------------------------------------------------------------------------------------
# Coverage of the accuracy difference of two systems on 0/1 items
# (tests/hierarchical/families/test_binary_coverage.py): (items, (accuracy 1, accuracy 2))
# cells, tables per cell, and the required share of 95% intervals covering the truth.
BINARY_GRID = [
    (n, pair)
    for n in (50, 100, 200)
    for pair in ((0.5, 0.55), (0.7, 0.8), (0.85, 0.9), (0.9, 0.95), (0.95, 0.95))
]
BINARY_TRIALS_PER_CELL = 80
BINARY_COVERAGE_MIN = 0.94
