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
plain <- function(s) {
  # a summarise_draws() table as a plain data frame of numbers (write.csv cannot take pillar_num)
  s <- as.data.frame(s)
  s[] <- lapply(s, function(col) if (is.character(col)) col else as.numeric(col))
  s
}
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
      m <- matrix(x, ncol = max(d$.chain))  # iterations x chains (draws_df is chain-major)
      rows[[length(rows) + 1]] <- data.frame(
        kind = kind, system = systems[j], mean = mean(m), sd = sd(as.vector(m)),
        q2.5 = quantile(m, 0.025, names = FALSE), q97.5 = quantile(m, 0.975, names = FALSE),
        mcse_mean = mcse_mean(m), ess_bulk = ess_bulk(m), ess_tail = ess_tail(m))
    }
  }
  do.call(rbind, rows)
}
run <- function(name, d, family, priors, champion, inflated, control = list()) {
  systems <- unique(d$system)
  d$sid <- factor(sprintf("s%d", match(d$system, systems)))
  t0 <- proc.time()[["elapsed"]]
  fit <- brm(bf(score ~ 1 + (1 | topic) + (1 | sid)), data = d, family = family,
             prior = priors, chains = 4, cores = 2, iter = 3000, warmup = 1000,
             seed = 2028, refresh = 0, control = control)
  wall <- proc.time()[["elapsed"]] - t0
  saveRDS(fit, paste0(out, "_", name, ".rds"))
  times <- rstan::get_elapsed_time(fit$fit)
  dd <- as_draws_df(fit)
  keep <- intersect(c("b_Intercept", "sd_topic__Intercept", "sd_sid__Intercept", "phi", "zoi",
                      "coi"), variables(dd))
  hyper <- plain(summarise_draws(subset_draws(dd, variable = keep), "mean", "sd",
                                 "mcse_mean", "rhat", "ess_bulk", "ess_tail"))
  res <- contrasts(dd, systems, champion, inflated)
  cat(sprintf("@@ %s: wall %.1f s (compile + sample), sampling %.1f s (slowest chain)\n",
              name, wall, max(rowSums(times))))
  write.csv(res, paste0(out, "_", name, ".csv"), row.names = FALSE)
  write.csv(hyper, paste0(out, "_", name, "_hyper.csv"), row.names = FALSE)
  options(width = 200, digits = 10); print(res); print(hyper)
}
glue <- read.csv(file.path(data_dir, "ranger", "glue_persample_tidy.csv.gz"))
rte <- glue[glue$collection == "rte", c("system", "topic", "score")]
run("bernoulli_rte", rte, bernoulli(),
    c(set_prior(sprintf("normal(%.15g, 1.5)", qlogis(mean(rte$score))), class = "Intercept"),
      set_prior("exponential(1)", class = "sd")),
    "bert-base-cased", FALSE, control = list(adapt_delta = 0.99))
rb04 <- read.csv(file.path(data_dir, "bayesian_risk", "rb04_data.csv"))
inside <- rb04$score[rb04$score > 0 & rb04$score < 1]
run("zoib_rb04", rb04, zero_one_inflated_beta(),
    c(set_prior(sprintf("normal(%.15g, 1.5)", qlogis(mean(inside))), class = "Intercept"),
      set_prior("exponential(1)", class = "sd"),
      set_prior("exponential(0.1)", class = "phi")),
    "Champion", TRUE)
print(R.version.string); print(packageVersion("brms")); print(packageVersion("rstan"))
"""

# Printed output of BRMS_R_SCRIPT (R 4.2.2, brms 2.18.0, rstan 2.21.7; 2 cores shared with
# other work, load average about 6-11, so the wall times are upper bounds): per system
# (posterior mean, SD, Monte Carlo SE of the mean) of its score-scale mean and of its
# contrast with the champion; the hyperparameters as (mean, SD, R-hat, bulk ESS). The
# intercept's prior is N(logit ybar, 1.5^2), as ours (families.logit.INTERCEPT_SD). The
# Bernoulli run at brms' default adapt_delta 0.8 had 587 divergent transitions and R-hat 1.14
# (sd(system) learnt from two systems: a funnel); the stored run is at 0.99 (no divergent
# transition), sampled by update() from the same compiled model, so its wall time is the
# first run's (compile + sample). Ours on the same data (fresh process, fit with its model
# check and contrasts, 2 cores, load average 2.8, before the prior changed): zoib on rb04
# 17.6 s wall, 29.3 s CPU; bernoulli on RTE 8.6 s wall, 13.1 s CPU. brms' zoib run has R-hat
# 1.008 and bulk ESS 516 for b_Intercept (its centred crossed effects); its score-scale
# contrasts, which the tests compare, have ESS > 4,000.
BRMS_ZOIB_RB04 = {
    "wall_s": 4418.2,  # compile + sample, 4 chains on 2 cores
    "sampling_s": 373.6,  # slowest chain's warm-up + sampling
    "contrast": {
        "Chal. 1": (0.02483360801, 0.01713658219, 0.000162003),
        "Chal. 2": (0.02461371706, 0.01695897402, 0.000172477),
        "Chal. 3": (-0.006257625169, 0.01636618709, 0.000157265),
        "Chal. 4": (0.05917210284, 0.01916285745, 0.000241837),
        "input.apl04rsTDNfw": (0.03391653294, 0.01751208023, 0.00019159),
        "input.fub04De": (0.001619676266, 0.01622096674, 0.000149992),
        "input.fub04Dg": (0.01984358207, 0.01683403206, 0.000168955),
        "input.fub04Dge": (0.02846520215, 0.01724101826, 0.000181407),
        "input.fub04T2ge": (0.01559621605, 0.01605695321, 0.00015145),
        "input.fub04TDNe": (0.03039702403, 0.01772663414, 0.000178854),
        "input.fub04TDNg": (0.03046663079, 0.01729107776, 0.000177409),
        "input.fub04Te": (0.01648973036, 0.01630875535, 0.000163563),
        "input.fub04Tg": (0.01698595579, 0.01677210009, 0.000165729),
        "input.fub04Tge": (0.02484604789, 0.01688128044, 0.000170002),
        "input.NLPR04clus10": (0.01494069959, 0.01673635613, 0.000151663),
        "input.NLPR04clus9": (0.01676315127, 0.01704889174, 0.000161128),
        "input.pircRB04d2": (0.01744084934, 0.01681768532, 0.000168441),
        "input.pircRB04d3": (0.02206069861, 0.01673938178, 0.000159779),
        "input.pircRB04d4": (0.02339498999, 0.01674185004, 0.000163213),
        "input.pircRB04d5": (0.02206553889, 0.01672965528, 0.000165406),
        "input.pircRB04t2": (0.02456194327, 0.0169545768, 0.000172137),
        "input.pircRB04t3": (0.0384082426, 0.01791132783, 0.000206617),
        "input.pircRB04t4": (0.03247063442, 0.01753407601, 0.000189295),
        "input.pircRB04td3": (0.05313566146, 0.01918379093, 0.000223361),
        "input.SABIR04BA": (0.01545495924, 0.01664784987, 0.000162327),
        "input.SABIR04FA": (0.007958153286, 0.01637193127, 0.000156919),
        "input.uic0401": (0.01462311975, 0.01684282696, 0.000154508),
        "input.uogRobDBase": (-0.01381253697, 0.01601451563, 0.000145177),
        "input.uogRobDWR10": (-0.001419590267, 0.01586975784, 0.000150076),
        "input.uogRobDWR5": (0.002216551273, 0.01595211249, 0.000147625),
        "input.uogRobLBase": (0.004040430561, 0.01658952751, 0.000147632),
        "input.uogRobLT": (0.00773583514, 0.01620043241, 0.000156574),
        "input.uogRobLWR10": (0.01575183438, 0.01640330516, 0.00016218),
        "input.uogRobLWR5": (0.01542523643, 0.01629653098, 0.000154109),
        "input.uogRobSBase": (0.01713406989, 0.01679344726, 0.000160264),
        "input.uogRobSWR10": (0.01080848392, 0.01622964653, 0.000155664),
        "input.uogRobSWR5": (0.008748142814, 0.01632931524, 0.000159712),
        "input.vtumdesc": (-0.01916330016, 0.01587215919, 0.000156527),
        "input.vtumlong252": (0.01452216357, 0.01654385242, 0.000162791),
        "input.vtumlong254": (0.01491682416, 0.01670736253, 0.000166184),
        "input.vtumlong344": (0.01424747715, 0.01650366457, 0.000155482),
        "input.vtumlong348": (0.01450100792, 0.01655757175, 0.000159962),
        "input.vtumlong432": (0.01964770646, 0.01669846653, 0.000158893),
        "input.wdoqla1": (0.01066423044, 0.01648249157, 0.000150265),
    },
    "mean": {
        "Chal. 1": (0.3128130971, 0.03027045947, 0.00123582),
        "Chal. 2": (0.3125932062, 0.03053699341, 0.00123892),
        "Chal. 3": (0.2817218639, 0.02930432254, 0.00119523),
        "Chal. 4": (0.3471515919, 0.03227765631, 0.00130727),
        "Champion": (0.2879794891, 0.02937456964, 0.00121934),
        "input.apl04rsTDNfw": (0.321896022, 0.03095569406, 0.00127261),
        "input.fub04De": (0.2895991654, 0.02950809524, 0.00121162),
        "input.fub04Dg": (0.3078230712, 0.03014184247, 0.00122918),
        "input.fub04Dge": (0.3164446912, 0.03040856374, 0.0012548),
        "input.fub04T2ge": (0.3035757051, 0.02975658152, 0.00122711),
        "input.fub04TDNe": (0.3183765131, 0.03053560866, 0.00123715),
        "input.fub04TDNg": (0.3184461199, 0.03060104644, 0.0012317),
        "input.fub04Te": (0.3044692195, 0.02978185963, 0.00124014),
        "input.fub04Tg": (0.3049654449, 0.03030601648, 0.00122691),
        "input.fub04Tge": (0.312825537, 0.03048342328, 0.00124129),
        "input.NLPR04clus10": (0.3029201887, 0.02998065167, 0.00121856),
        "input.NLPR04clus9": (0.3047426404, 0.03027592416, 0.00124819),
        "input.pircRB04d2": (0.3054203384, 0.02998402022, 0.00121089),
        "input.pircRB04d3": (0.3100401877, 0.03021489157, 0.00123884),
        "input.pircRB04d4": (0.3113744791, 0.03024566737, 0.00124276),
        "input.pircRB04d5": (0.310045028, 0.03021880418, 0.00123826),
        "input.pircRB04t2": (0.3125414324, 0.0305444574, 0.00124199),
        "input.pircRB04t3": (0.3263877317, 0.03096816724, 0.00126138),
        "input.pircRB04t4": (0.3204501235, 0.03069107105, 0.00128651),
        "input.pircRB04td3": (0.3411151506, 0.03181818396, 0.00124754),
        "input.SABIR04BA": (0.3034344483, 0.03015584392, 0.00123361),
        "input.SABIR04FA": (0.2959376424, 0.02971921431, 0.00121649),
        "input.uic0401": (0.3026026088, 0.03018521042, 0.0012326),
        "input.uogRobDBase": (0.2741669521, 0.02882203807, 0.001175),
        "input.uogRobDWR10": (0.2865598988, 0.0290746634, 0.00120405),
        "input.uogRobDWR5": (0.2901960404, 0.02918591382, 0.00121009),
        "input.uogRobLBase": (0.2920199197, 0.02961918783, 0.00121473),
        "input.uogRobLT": (0.2957153242, 0.02967260192, 0.00121387),
        "input.uogRobLWR10": (0.3037313235, 0.03011226101, 0.00125297),
        "input.uogRobLWR5": (0.3034047255, 0.02998632162, 0.00123286),
        "input.uogRobSBase": (0.305113559, 0.03017171137, 0.0012227),
        "input.uogRobSWR10": (0.298787973, 0.02978394088, 0.00122582),
        "input.uogRobSWR5": (0.2967276319, 0.02975328123, 0.00120519),
        "input.vtumdesc": (0.2688161889, 0.02871347516, 0.00117464),
        "input.vtumlong252": (0.3025016527, 0.02996082048, 0.00123494),
        "input.vtumlong254": (0.3028963133, 0.02990083093, 0.00125511),
        "input.vtumlong344": (0.3022269662, 0.02987325863, 0.00121965),
        "input.vtumlong348": (0.302480497, 0.02964640911, 0.0012249),
        "input.vtumlong432": (0.3076271956, 0.03011242333, 0.00123655),
        "input.wdoqla1": (0.2986437195, 0.02987117387, 0.00122894),
    },
    "hyper": {
        "b_Intercept": (-1.027319551, 0.1584571065, 1.008, 516.202),
        "sd_topic__Intercept": (1.115385233, 0.1171451584, 1.0025, 787.203),
        "sd_sid__Intercept": (0.1118385936, 0.02033426743, 1.0003, 3305.99),
        "phi": (12.383011, 0.3739411571, 1.0015, 9750.7),
        "zoi": (0.003105964599, 0.001169608537, 1.0013, 9949.24),
        "coi": (0.1253508718, 0.1104279462, 1.0008, 8517.23),
    },
}

BRMS_BERNOULLI_RTE = {
    "wall_s": 1269.0,  # compile + sample (adapt_delta 0.8, see below), 4 chains on 2 cores
    "sampling_s": 70.3,  # slowest chain's warm-up + sampling at adapt_delta 0.99
    "contrast": {
        "distilbert-base-cased": (-0.05989646571, 0.03742741308, 0.0005032763989),
    },
    "mean": {
        "bert-base-cased": (0.6196418086, 0.02982338326, 0.0003480271583),
        "distilbert-base-cased": (0.55974534288, 0.0303631109, 0.0003516702287),
    },
    "hyper": {
        "b_Intercept": (0.4985477444, 0.4795249942, 1.0003, 5976.21),
        "sd_topic__Intercept": (1.465109447, 0.2652062657, 1.0007, 2005.30),
        "sd_sid__Intercept": (0.5896086599, 0.5547601236, 1.0027, 3472.36),
    },
}

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
# (tests/hierarchical/binary_coverage.py): (items, (accuracy 1, accuracy 2)) cells; the whole
# grid is benchmarks/study_binary_coverage.py.
BINARY_GRID = [
    (n, pair)
    for n in (50, 100, 200)
    for pair in ((0.5, 0.55), (0.7, 0.8), (0.85, 0.9), (0.9, 0.95), (0.95, 0.95))
]
# The slow test's part of the grid: the cells where pooled system effects pulled a real
# difference hardest (0.7/0.8 and 0.9/0.95 at 50 items; 0.7/0.8 at 100), 60 tables each, with
# the default fit (pooling 'auto': two systems, no artifact run, so unpooled). The issue's
# requirement, at least 94% of the 95% intervals covering the truth, is measured by the study
# (200 tables per cell at 50 items, topics as levels: 91.0-97.5%, 93.9% over the 1,000; with
# 800 more seeds, before the levels, 0.7/0.8 covered 95.3% and 0.9/0.95 93.0% of 1,000); on
# 180 tables the test
# asks that the model's interval cover at most BINARY_CHECK_GAP less than the normal
# approximation on the same tables (at 50 items, on the study's tables, 1.0 point less at
# 0.7/0.8 and 1.0 more at 0.9/0.95; pooled, 2-9 points less) and that the mean estimate be at
# least BINARY_CHECK_PULL of the mean observed difference in each cell. The unpooled prior
# (UNPOOLED_SD = pi / sqrt(6)) pulls a difference supported by a handful of discordant items:
# at 50 items, 0.92 of the observed at 0.7/0.8 and 0.81 at 0.9/0.95; pooled, 0.60-0.70.
BINARY_CHECK_CELLS = [(50, (0.7, 0.8)), (50, (0.9, 0.95)), (100, (0.7, 0.8))]
BINARY_CHECK_TRIALS = 60
BINARY_CHECK_GAP = 0.02
BINARY_CHECK_PULL = 0.75
