# Rscript lme4_across.R data.csv out.csv champion design
#   data.csv: group, topic, system, score; design "collections" or "segments".
# REML fit of the bayes_ir model across groups with one residual SD and one topic SD
# (sigma="pooled"), system effects random as in bayes_ir:
#   score ~ 0 + g + (1 | s) + (1 | t) + (1 | s:g)  (g: the collection, or the segment)
# A contrast is the difference of the system effects' conditional modes (BLUPs).
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(lme4))
d <- read.csv(args[1], colClasses = c(group = "character", topic = "character",
                                        system = "character"))
champ <- args[3]; design <- args[4]
d$g <- factor(d$group); d$s <- factor(d$system)
d$t <- paste(d$group, d$topic, sep = "|")
form <- score ~ 0 + g + (1 | s) + (1 | t) + (1 | s:g)  # an intercept per collection or segment
m <- lmer(form, data = d, REML = TRUE)
vc <- as.data.frame(VarCorr(m))
sd_of <- function(grp) vc$sdcor[vc$grp == grp]
rows <- data.frame(quantity = c("sigma[all]", "sigma_topic[all]", "sigma_system", "between_sd"),
                   estimate = c(sd_of("Residual"), sd_of("t"), sd_of("s"), sqrt(2) * sd_of("s:g")))
re <- ranef(m)$s
for (s in setdiff(rownames(re), champ)) {
  rows <- rbind(rows, data.frame(quantity = sprintf("contrast[%s]", s),
                                 estimate = re[s, 1] - re[champ, 1]))
}
options(digits = 15)
write.csv(rows, args[2], row.names = FALSE)
