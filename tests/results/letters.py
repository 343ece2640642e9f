"""Compact letter display of a Tukey HSD, from R 4.2 ``multcomp::cld`` (multcomp 1.4).

Data: ``SCORES`` below, 30 topics (rows) x 8 systems (columns ``SYSTEMS``), simulated
(numpy seed 2004: topic effects N(0.35, 0.15), system effects 0.105, 0.09, ..., 0 in steps
of 0.015, residuals N(0, 0.05), clipped to [0, 1], rounded to 4 decimals) so that the
groups overlap: adjacent systems do not differ, distant ones do.

How the numbers were made: the long table of ``SCORES`` (columns topic, system, score;
topics ``t01`` .. ``t30``) is written to ``scores.csv`` and ``R_SCRIPT`` is run as
``Rscript cld.R scores.csv out_``: ``aov(score ~ system + topic)`` with the system levels
in decreasing order of mean score, ``glht(..., mcp(system = "Tukey"))`` and
``cld(summary(...), level = 0.05)``. ``R_LETTERS`` is ``out_letters.csv``. The
single-step p-values closest to 0.05 are 0.030, 0.020 and 0.065 (R) against 0.0299,
0.0202 and 0.0650 (scipy's studentized range), so the rejections agree.

``R_SCRIPT_TUKEYHSD`` gives the same display for any complete table from R's
``TukeyHSD(aov(score ~ system + topic))`` and multcomp's insert-absorb
(``multcomp:::insert_absorb``, what ``cld`` calls): the live tests run it on this table,
on ``bayesian_risk/rb04_data.csv`` (45 systems; system names without spaces) and on
``trec_adhoc/adhoc8_ap.csv`` (129 systems, 3423 rejected pairs).
"""

from __future__ import annotations

SYSTEMS = ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"]
TOPICS = [f"t{i:02d}" for i in range(1, 31)]
SCORES = [
    [0.4648, 0.4950, 0.4052, 0.3888, 0.4287, 0.4356, 0.3977, 0.3175],
    [0.5269, 0.5788, 0.4407, 0.4950, 0.4234, 0.4217, 0.4871, 0.4309],
    [0.6336, 0.5424, 0.5645, 0.4551, 0.3990, 0.4705, 0.4165, 0.5395],
    [0.5142, 0.4596, 0.4663, 0.4705, 0.4064, 0.3386, 0.3731, 0.3478],
    [0.3897, 0.3999, 0.2752, 0.3380, 0.3115, 0.3632, 0.3500, 0.3580],
    [0.3527, 0.2435, 0.2787, 0.3025, 0.1889, 0.2429, 0.1571, 0.1686],
    [0.6611, 0.6716, 0.6916, 0.6175, 0.6672, 0.6451, 0.6209, 0.6141],
    [0.3967, 0.4983, 0.4576, 0.4613, 0.4330, 0.4761, 0.3798, 0.3778],
    [0.4651, 0.4652, 0.4168, 0.4278, 0.3979, 0.3828, 0.4345, 0.3472],
    [0.3618, 0.3863, 0.3286, 0.3689, 0.3196, 0.3009, 0.2943, 0.3309],
    [0.8078, 0.7238, 0.6985, 0.6059, 0.7265, 0.7397, 0.6800, 0.7120],
    [0.6752, 0.5721, 0.5199, 0.5736, 0.4906, 0.6164, 0.5136, 0.6051],
    [0.3660, 0.4160, 0.3583, 0.4003, 0.3844, 0.3070, 0.4573, 0.2976],
    [0.3530, 0.3733, 0.3099, 0.2812, 0.3668, 0.2198, 0.3270, 0.2988],
    [0.7173, 0.7561, 0.7465, 0.7933, 0.7432, 0.8217, 0.7567, 0.6816],
    [0.3296, 0.2947, 0.3484, 0.2254, 0.2203, 0.2524, 0.2537, 0.2296],
    [0.3178, 0.3361, 0.4178, 0.3251, 0.4137, 0.3325, 0.3232, 0.2712],
    [0.6608, 0.7823, 0.7043, 0.6916, 0.6665, 0.6208, 0.6049, 0.5637],
    [0.4908, 0.5167, 0.4959, 0.4536, 0.4211, 0.4735, 0.3590, 0.2991],
    [0.5805, 0.5948, 0.4493, 0.4640, 0.3996, 0.3855, 0.5032, 0.3736],
    [0.6373, 0.5645, 0.5005, 0.5220, 0.4778, 0.5431, 0.4711, 0.5219],
    [0.6352, 0.5804, 0.5290, 0.4930, 0.5462, 0.5681, 0.4559, 0.3866],
    [0.5239, 0.4207, 0.3223, 0.3761, 0.3567, 0.2911, 0.3098, 0.2752],
    [0.7702, 0.7209, 0.7057, 0.5981, 0.5990, 0.7030, 0.5697, 0.6280],
    [0.3877, 0.3662, 0.5199, 0.3369, 0.2906, 0.4241, 0.3259, 0.3467],
    [0.4914, 0.5333, 0.5294, 0.4194, 0.4474, 0.4588, 0.4288, 0.4372],
    [0.4118, 0.4525, 0.3882, 0.2829, 0.2418, 0.2930, 0.3054, 0.2548],
    [0.4049, 0.4620, 0.3845, 0.3544, 0.3834, 0.3552, 0.3492, 0.2034],
    [0.3417, 0.2007, 0.1816, 0.2320, 0.2276, 0.1746, 0.1674, 0.1602],
    [0.1917, 0.2338, 0.2300, 0.1825, 0.2384, 0.1067, 0.1541, 0.1427],
]  # fmt: skip

R_SCRIPT = r"""# Compact letter display of the topic-blocked Tukey HSD with multcomp::cld.
# Usage: Rscript cld.R scores.csv out_prefix
# scores.csv: columns topic, system, score (complete: every system on every topic).
suppressMessages(library(multcomp))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], colClasses = c("character", "character", "numeric"))
means <- tapply(d$score, d$system, mean)
d$system <- factor(d$system, levels = names(sort(means, decreasing = TRUE)))
d$topic <- factor(d$topic)
fit <- aov(score ~ system + topic, data = d)
set.seed(1)
tk <- glht(fit, linfct = mcp(system = "Tukey"))
s <- summary(tk)
letters_out <- cld(s, level = 0.05)$mcletters
write.csv(data.frame(system = names(letters_out$Letters), letters = unname(letters_out$Letters)),
          paste0(args[2], "letters.csv"), row.names = FALSE, quote = FALSE)
write.csv(data.frame(pair = names(s$test$coefficients), p = unname(s$test$pvalues)),
          paste0(args[2], "pvalues.csv"), row.names = FALSE, quote = FALSE)
"""

R_SCRIPT_TUKEYHSD = r"""# Letters of TukeyHSD(aov(score ~ system + topic)) by insert-absorb.
# Usage: Rscript cld_tukeyhsd.R scores.csv out.csv   (scores.csv: topic, system, score)
suppressMessages(library(multcomp))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], colClasses = c("character", "character", "numeric"), check.names = FALSE)
means <- tapply(d$score, d$system, mean)
lv <- names(sort(means, decreasing = TRUE))
d$system <- factor(d$system, levels = lv)
d$topic <- factor(d$topic)
tk <- TukeyHSD(aov(score ~ system + topic, data = d), "system")$system
signif <- tk[, "p adj"] < 0.05
names(signif) <- rownames(tk)
res <- multcomp:::insert_absorb(signif, lvl_order = lv, levels.x = lv)
write.csv(data.frame(system = names(res$Letters), letters = unname(res$Letters)),
          args[2], row.names = FALSE, quote = TRUE)
"""

#: ``out_letters.csv``: systems in decreasing order of mean score, and their letters.
R_LETTERS = {
    "s1": "a",
    "s2": "ab",
    "s3": "bc",
    "s4": "cd",
    "s6": "cd",
    "s5": "ce",
    "s7": "de",
    "s8": "e",
}
