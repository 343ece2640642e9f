# Rscript brms_replicates.R data.csv priors.csv out.csv champion challengers seed
#   data.csv: topic, system, replicate, score  (several runs, seeds, per system)
#   priors.csv: name, value (b0_mu, b0_sd; sigma_rate, sigma_topic_rate, sigma_system_rate,
#               sigma_topic_system_rate, sigma_replicate_rate: Exponential rates)
#   challengers: comma-separated
# The bayes_ir replicate model (one run-to-run SD) with i.i.d. topic and system effects:
#   score ~ 1 + (1 | s) + (1 | t) + (1 | t:s) + (1 | s:r)
# its system contrasts, scales and residual SD are those of the zero-sum model (the sums
# move into the intercept, whose prior is wide). A single-run contrast adds the effects of
# a new run of each system: r_s[c] - r_s[h] + N(0, sd_s:r) - N(0, sd_s:r), per draw.
# Writes quantity, mean, sd, mcse, q05, q95 (and max_rhat, divergences) to out.csv and the
# wall times of compiling and sampling to <out>_time.txt.
args <- commandArgs(trailingOnly = TRUE)
suppressMessages({library(brms); library(posterior)})
d <- read.csv(args[1], colClasses = c(topic = "character", system = "character",
                                        replicate = "character"))
p <- read.csv(args[2], colClasses = c(name = "character"))
champ <- args[4]; chals <- strsplit(args[5], ",")[[1]]; seed <- as.integer(args[6])
# Debian's r-cran-bh leaves the Boost headers in /usr/include (BH's own include folder is
# absent), where rstan does not look by default
if (!file.exists(rstan::rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan::rstan_options(boost_lib = "/usr/include")
}
get <- function(n) p$value[p$name == n]
systems <- unique(d$system)
code <- function(s) paste0("s", match(s, systems))
d$s <- factor(code(d$system)); d$t <- factor(d$topic); d$r <- factor(d$replicate)
num <- function(x) sprintf("%.17g", x)
expo <- function(n) sprintf("exponential(%s)", num(get(paste0(n, "_rate"))))
pri <- c(set_prior(sprintf("normal(%s, %s)", num(get("b0_mu")), num(get("b0_sd"))),
                   class = "Intercept"),
         set_prior(expo("sigma"), class = "sigma"),
         set_prior(expo("sigma_topic"), class = "sd", group = "t"),
         set_prior(expo("sigma_system"), class = "sd", group = "s"),
         set_prior(expo("sigma_topic_system"), class = "sd", group = "t:s"),
         set_prior(expo("sigma_replicate"), class = "sd", group = "s:r"))  # s:r unique per system
f <- bf(score ~ 1 + (1 | s) + (1 | t) + (1 | t:s) + (1 | s:r))
# compile once (no chains), then sample with the compiled model
t_compile <- system.time(
  m0 <- brm(f, data = d, prior = pri, chains = 0, seed = seed, backend = "rstan", refresh = 0)
)[["elapsed"]]
t_sample <- system.time(
  fit <- update(m0, recompile = FALSE, chains = 4, iter = 3000, warmup = 1000, seed = seed,
                cores = 2, refresh = 0, control = list(adapt_delta = 0.99))
)[["elapsed"]]
dr <- as_draws_df(fit)
n <- nrow(dr)
out <- list()
add <- function(name, x) out[[name]] <<- x
add("sigma", dr[["sigma"]])
add("sigma_topic", dr[["sd_t__Intercept"]])
add("sigma_system", dr[["sd_s__Intercept"]])
add("sigma_topic_system", dr[["sd_t:s__Intercept"]])
kappa <- dr[["sd_s:r__Intercept"]]
add("sigma_replicate", kappa)
set.seed(seed)
for (c in chals) {
  base <- dr[[sprintf("r_s[%s,Intercept]", code(c))]] -
    dr[[sprintf("r_s[%s,Intercept]", code(champ))]]
  add(sprintf("contrast[%s]", c), base)
  add(sprintf("single_run_contrast[%s]", c), base + rnorm(n, 0, kappa) - rnorm(n, 0, kappa))
}
res <- do.call(rbind, lapply(names(out), function(q) {
  x <- out[[q]]
  m <- matrix(x, ncol = 4)  # draws x chains (as_draws_df orders by chain)
  data.frame(quantity = q, mean = mean(x), sd = sd(x), mcse = mcse_mean(m),
             q05 = unname(quantile(x, 0.05)), q95 = unname(quantile(x, 0.95)))
}))
for (c in chals) {  # a probability: its mean only
  x <- out[[sprintf("single_run_contrast[%s]", c)]]
  res <- rbind(res, data.frame(quantity = sprintf("p_single_run_better[%s]", c),
                               mean = mean(x > 0), sd = NA, mcse = NA, q05 = NA, q95 = NA))
}
res$max_rhat <- max(brms::rhat(fit), na.rm = TRUE)
np <- nuts_params(fit)
res$divergences <- sum(np$Value[np$Parameter == "divergent__"])
options(digits = 15)
write.csv(res, args[3], row.names = FALSE)
el <- rstan::get_elapsed_time(fit$fit)
writeLines(c(sprintf("brms %s, rstan %s, 4 chains x 3000 iterations (1000 warmup), cores 2",
                     packageVersion("brms"), packageVersion("rstan")),
             sprintf("compile_seconds %.1f", t_compile),
             sprintf("sampling_seconds %.1f", t_sample),
             sprintf("total_seconds %.1f", t_compile + t_sample),
             sprintf("chain_seconds %s", paste(sprintf("%.1f", rowSums(el)), collapse = " "))),
           sub("\\.csv$", "_time.txt", args[3]))
