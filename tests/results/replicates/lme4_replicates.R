# Rscript lme4_replicates.R data.csv out.csv out_system.csv champion
#   data.csv: topic, system, replicate, score  (several runs, seeds, per system)
# REML fits of the bayes_ir replicate model with system effects random as in bayes_ir:
#   out.csv, one run-to-run SD (sigma_replicate="pooled"):
#     score ~ 1 + (1 | s) + (1 | t) + (1 | t:s) + (1 | s:r)
#   out_system.csv, one run-to-run SD per system (sigma_replicate="system"): one term
#     (0 + dummy(s, "K") | s:r) per system K, i.e. the runs of system K with their own
#     variance (the other systems' runs have a zero column in that term)
# (s:r is unique per system: the replicate labels are reused across systems.)
# A contrast is the difference of the system effects' conditional modes (BLUPs).
# Writes quantity, estimate.
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(lme4))
d <- read.csv(args[1], colClasses = c(topic = "character", system = "character",
                                        replicate = "character"))
champ <- args[4]
systems <- unique(d$system)
d$s <- factor(d$system, levels = systems); d$t <- factor(d$topic)
d$r <- factor(d$replicate)
# tight tolerances: the per-system REML surface is flat (5 runs per SD), and with the
# default ones its optimum varies by 1e-4 (relative) from run to run, 5e-5 with these
ctrl <- lmerControl(check.conv.singular = "ignore",
                    optCtrl = list(xtol_rel = 1e-10, ftol_rel = 1e-12, maxeval = 1e5))
# (with repeated grouping factors, as.data.frame(VarCorr) spells "t:s" as "t.s")
sd_of <- function(vc, grp) vc$sdcor[vc$grp %in% c(grp, make.names(grp)) & is.na(vc$var2)]
contrasts_of <- function(m) {
  re <- ranef(m)$s
  chals <- setdiff(rownames(re), champ)
  data.frame(quantity = sprintf("contrast[%s]", chals),
             estimate = re[chals, 1] - re[champ, 1])
}
options(digits = 15)

m <- lmer(score ~ 1 + (1 | s) + (1 | t) + (1 | t:s) + (1 | s:r), data = d, REML = TRUE,
          control = ctrl)
vc <- as.data.frame(VarCorr(m))
rows <- data.frame(
  quantity = c("sigma", "sigma_topic", "sigma_system", "sigma_topic_system", "sigma_replicate"),
  estimate = c(sd_of(vc, "Residual"), sd_of(vc, "t"), sd_of(vc, "s"), sd_of(vc, "t:s"),
               sd_of(vc, "s:r")))
write.csv(rbind(rows, contrasts_of(m)), args[2], row.names = FALSE)

# one run-to-run SD per system; lme4 reorders the terms (by number of levels), so each
# is found by its dummy's name
dummies <- sprintf('dummy(s, "%s")', systems)
terms <- sprintf("(0 + %s | s:r)", dummies)
form <- as.formula(paste("score ~ 1 + (1 | s) + (1 | t) + (1 | t:s) +",
                         paste(terms, collapse = " + ")))
ms <- lmer(form, data = d, REML = TRUE, control = ctrl)
vc <- as.data.frame(VarCorr(ms))
per <- vc$sdcor[match(dummies, vc$var1)]
stopifnot(!anyNA(per))
rows <- data.frame(
  quantity = c("sigma", "sigma_topic", "sigma_system", "sigma_topic_system",
               sprintf("sigma_replicate[%s]", systems)),
  estimate = c(sd_of(vc, "Residual"), sd_of(vc, "t"), sd_of(vc, "s"), sd_of(vc, "t:s"),
               per))
write.csv(rbind(rows, contrasts_of(ms)), args[3], row.names = FALSE)
