"""lme4 on rb04: the system random effects (deviations from the intercept), R 4.2.2, lme4.

Data: ``../shared/data/bayesian_risk/rb04_data.csv`` (rmit-ir/bayesian-risk; 45 systems x 50
topics, AP). ``R_SCRIPT`` below was run as ``Rscript ranef.R rb04_data.csv out.csv`` and the
CSV pasted here. It printed sigma_topic 0.1941279971840804, sigma_system 0.0156566682703332,
sigma_residual 0.1044834265247531 and the intercept 0.314697155555617.

These are the conditional modes of :math:`b_s` in ``score ~ (1|topic) + (1|system)``: i.i.d.
effects around an intercept, the parametrisation of rstanarm's ``stan_glmer`` that Benham et
al. (2020) plot in Figure 5. ``cond_sd`` is lme4's conditional SD given the intercept and the
variances (so it leaves out the intercept's uncertainty, which the Bayesian posterior keeps).
``tests/hierarchical/test_artifact_sweep.py`` re-runs the script when R is installed.
"""

from __future__ import annotations

R_SCRIPT = r"""
# Rscript ranef.R rb04_data.csv out.csv
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
m <- lme4::lmer(score ~ (1 | topic) + (1 | system), data = d, REML = TRUE)
re <- lme4::ranef(m, condVar = TRUE)$system
sd <- sqrt(attr(re, "postVar")[1, 1, ])
vc <- as.data.frame(lme4::VarCorr(m))
options(digits = 15)
write.csv(data.frame(system = rownames(re), ranef = re[, 1], cond_sd = sd), args[2],
          row.names = FALSE)
print(vc[, c("grp", "sdcor")]); print(lme4::fixef(m))
"""

# R: write.csv(data.frame(system, ranef, cond_sd)), options(digits = 15)
SIGMA_SYSTEM = 0.0156566682703332
RANEF = {
    "Chal. 1": (0.00431316005032513, 0.0108775806510615),
    "Chal. 2": (0.00376838511536458, 0.0108775806510615),
    "Chal. 3": (-0.0268828741378703, 0.0108775806510615),
    "Chal. 4": (0.034452436646238, 0.0108775806510615),
    "Champion": (-0.0216625551009185, 0.0108775806510615),
    "input.apl04rsTDNfw": (0.0150806630852049, 0.0108775806510615),
    "input.fub04De": (-0.00803048794201332, 0.0108775806510615),
    "input.fub04Dg": (-0.00407954739428988, 0.0108775806510615),
    "input.fub04Dge": (0.00638330480317512, 0.0108775806510615),
    "input.fub04T2ge": (-0.00441064361689695, 0.0108775806510615),
    "input.fub04TDNe": (0.0089707212903856, 0.0108775806510615),
    "input.fub04TDNg": (0.0064573518817135, 0.0108775806510615),
    "input.fub04Te": (-0.00395895643781322, 0.0108775806510615),
    "input.fub04Tg": (-0.00503052344580347, 0.0108775806510615),
    "input.fub04Tge": (0.00260055690527453, 0.0108775806510615),
    "input.NLPR04clus10": (-0.00789508756982892, 0.0108775806510615),
    "input.NLPR04clus9": (-0.00243358661992383, 0.0108775806510615),
    "input.pircRB04d2": (0.00986034404825313, 0.0108775806510615),
    "input.pircRB04d3": (0.00729196823838116, 0.0108775806510615),
    "input.pircRB04d4": (0.0071047349112199, 0.0108775806510615),
    "input.pircRB04d5": (0.00729196823838116, 0.0108775806510615),
    "input.pircRB04t2": (0.00699895337045091, 0.0108775806510615),
    "input.pircRB04t3": (0.0166356517345098, 0.0108775806510615),
    "input.pircRB04t4": (0.01280212869704, 0.0108775806510615),
    "input.pircRB04td3": (0.0283065291275572, 0.0108775806510615),
    "input.SABIR04BA": (-0.00146780115270253, 0.0108775806510615),
    "input.SABIR04FA": (-0.00636548649030871, 0.0108775806510615),
    "input.uic0401": (-0.00626499402657818, 0.0108775806510615),
    "input.uogRobDBase": (-0.012683817920443, 0.0108775806510615),
    "input.uogRobDWR10": (-0.00358343196808313, 0.0108775806510615),
    "input.uogRobDWR5": (-0.00173331282003275, 0.0108775806510615),
    "input.uogRobLBase": (-0.00801990978793641, 0.0108775806510615),
    "input.uogRobLT": (-0.00246849452837751, 0.0108775806510615),
    "input.uogRobLWR10": (0.000655234370531988, 0.0108775806510615),
    "input.uogRobLWR5": (0.00260267253608985, 0.0108775806510615),
    "input.uogRobSBase": (-0.00123085050137985, 0.0108775806510615),
    "input.uogRobSWR10": (-0.00510457052434191, 0.0108775806510615),
    "input.uogRobSWR5": (-0.00192371959341702, 0.0108775806510615),
    "input.vtumdesc": (-0.0249978470813661, 0.0108775806510615),
    "input.vtumlong252": (-0.00331686248534515, 0.0108775806510615),
    "input.vtumlong254": (-0.00297518810866117, 0.0108775806510615),
    "input.vtumlong344": (-0.00317194177449159, 0.0108775806510615),
    "input.vtumlong348": (-0.00277420318119999, 0.0108775806510615),
    "input.vtumlong432": (0.0013237737081922, 0.0108775806510615),
    "input.wdoqla1": (-0.0104338445482857, 0.0108775806510615),
}
