# Rscript brms_across.R data.csv priors.csv out.csv champion challengers design seed [adapt_delta [iter warmup [family]]]
#   data.csv: group, topic, system, score  (group: the collection or the segment)
#   priors.csv: name, level, value (b0_mu, b0_sd per group or "all"; sigma_rate,
#               topic_rate, system_rate, sxc_rate)
#   design: "collections" (a residual SD and a topic SD per collection, an intercept
#           per collection) or "segments" (one residual SD, one topic SD, an intercept
#           per segment)
#   family: "gaussian" (default) or "bernoulli" (0/1 scores, logit link, no residual SD;
#           contrasts, scales and SDs then on the logit scale)
# The bayes_ir model across groups with i.i.d. random effects (brms): its contrasts,
# scales and residual SDs are those of the zero-sum model (the sums move into the
# intercepts, whose priors are wide).
args <- commandArgs(trailingOnly = TRUE)
suppressMessages({library(brms); library(posterior)})
d <- read.csv(args[1], colClasses = c(group = "character", topic = "character",
                                        system = "character"))
p <- read.csv(args[2], colClasses = c(name = "character", level = "character"))
champ <- args[4]; chals <- strsplit(args[5], ",")[[1]]; design <- args[6]
seed <- as.integer(args[7])
adapt <- if (length(args) >= 8) as.numeric(args[8]) else 0.99
iter <- if (length(args) >= 10) as.integer(args[9]) else 3000L
warmup <- if (length(args) >= 10) as.integer(args[10]) else 1000L
fam <- if (length(args) >= 11) args[11] else "gaussian"
get <- function(n, l = "all") p$value[p$name == n & p$level == l]
groups <- sort(unique(d$group)); systems <- unique(d$system)
d$g <- factor(paste0("k", match(d$group, groups)))
d$s <- factor(paste0("s", match(d$system, systems)))
d$t <- paste(d$g, d$topic, sep = "_")
num <- function(x) sprintf("%.17g", x)
pri <- c(set_prior(sprintf("exponential(%s)", num(get("system_rate"))), class = "sd", group = "s"),
         set_prior(sprintf("exponential(%s)", num(get("sxc_rate"))), class = "sd", group = "s:g"))
if (fam == "bernoulli") {  # collections: an intercept and a topic SD per collection
  f <- bf(score ~ 0 + g + (1 | s) + (1 | gr(t, by = g)) + (1 | s:g))
  pri <- c(pri, set_prior(sprintf("exponential(%s)", num(get("topic_rate"))), class = "sd", group = "t"))
  for (k in seq_along(groups)) {
    pri <- c(pri, set_prior(sprintf("normal(%s, %s)", num(get("b0_mu", groups[k])),
                                    num(get("b0_sd", groups[k]))), class = "b", coef = paste0("gk", k)))
  }
  sv <- NULL
} else if (design == "collections") {
  f <- bf(score ~ 0 + g + (1 | s) + (1 | gr(t, by = g)) + (1 | s:g), sigma ~ 0 + g)
  pri <- c(pri, set_prior(sprintf("exponential(%s)", num(get("topic_rate"))), class = "sd", group = "t"))
  for (k in seq_along(groups)) {
    pri <- c(pri, set_prior(sprintf("normal(%s, %s)", num(get("b0_mu", groups[k])),
                                    num(get("b0_sd", groups[k]))), class = "b", coef = paste0("gk", k)))
  }
  # sigma_k = exp(b_sigma_k) with an Exponential prior on sigma_k (Jacobian added)
  sv <- stanvar(x = get("sigma_rate"), name = "rate_sigma") +
    stanvar(scode = "target += exponential_lpdf(exp(b_sigma) | rate_sigma) + sum(b_sigma);",
            block = "model")
} else {
  f <- bf(score ~ 0 + g + (1 | s) + (1 | t) + (1 | s:g))
  pri <- c(pri,
           set_prior(sprintf("exponential(%s)", num(get("topic_rate"))), class = "sd", group = "t"),
           set_prior(sprintf("exponential(%s)", num(get("sigma_rate"))), class = "sigma"))
  for (k in seq_along(groups)) {
    pri <- c(pri, set_prior(sprintf("normal(%s, %s)", num(get("b0_mu", groups[k])),
                                    num(get("b0_sd", groups[k]))), class = "b", coef = paste0("gk", k)))
  }
  sv <- NULL
}
fit <- brm(f, data = d, family = if (fam == "bernoulli") bernoulli() else gaussian(),
           prior = pri, stanvars = sv, chains = 4, iter = iter, warmup = warmup,
           seed = seed, cores = 2, refresh = 0, backend = "rstan",
           control = list(adapt_delta = adapt))
dr <- as_draws_df(fit)
code <- function(s) paste0("s", match(s, systems))
out <- list()
add <- function(name, x) out[[name]] <<- x
for (c in chals) {
  base <- dr[[sprintf("r_s[%s,Intercept]", code(c))]] - dr[[sprintf("r_s[%s,Intercept]", code(champ))]]
  add(sprintf("contrast[%s]", c), base)
  for (k in seq_along(groups)) {
    gc <- dr[[sprintf("r_s:g[%s_k%d,Intercept]", code(c), k)]]
    gh <- dr[[sprintf("r_s:g[%s_k%d,Intercept]", code(champ), k)]]
    add(sprintf("group_contrast[%s|%s]", c, groups[k]), base + gc - gh)
  }
}
add("between_sd", sqrt(2) * dr[["sd_s:g__Intercept"]])
add("sigma_system", dr[["sd_s__Intercept"]])
if (fam == "bernoulli") {
  for (k in seq_along(groups)) {
    add(sprintf("sigma_topic[%s]", groups[k]), dr[[sprintf("sd_t__Intercept:gk%d", k)]])
  }
} else if (design == "collections") {
  for (k in seq_along(groups)) {
    add(sprintf("sigma[%s]", groups[k]), exp(dr[[sprintf("b_sigma_gk%d", k)]]))
    add(sprintf("sigma_topic[%s]", groups[k]), dr[[sprintf("sd_t__Intercept:gk%d", k)]])
  }
} else {
  add("sigma[all]", dr[["sigma"]])
  add("sigma_topic[all]", dr[["sd_t__Intercept"]])
}
chains <- dr$.chain
res <- do.call(rbind, lapply(names(out), function(n) {
  x <- out[[n]]
  m <- matrix(x, ncol = 4)  # draws x chains (as_draws_df orders by chain)
  data.frame(quantity = n, mean = mean(x), sd = sd(x),
             mcse = mcse_mean(m), q05 = quantile(x, 0.05), q95 = quantile(x, 0.95))
}))
res$max_rhat <- max(brms::rhat(fit), na.rm = TRUE)
res$adapt_delta <- adapt
res$iter <- iter
res$family <- fam
res$warmup <- warmup
res$divergences <- sum(nuts_params(fit)$Value[nuts_params(fit)$Parameter == "divergent__"])
options(digits = 15)
write.csv(res, args[3], row.names = FALSE)
