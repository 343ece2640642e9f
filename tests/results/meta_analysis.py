"""Reference numbers for the meta-analysis tests, with the call that produced each.

metafor 3.8-1 on R (Debian r-cran-metafor), run on 2026-11-22. Common set-up::

    library(metafor)
    yi <- c(.021, .035, -.004, .050, .012); vi <- c(1e-4, 2.5e-4, 1.6e-4, 4e-4, 9e-5)
    tight <- list(threshold = 1e-12, maxiter = 1000)

Every value below was printed with ``sprintf("%.12g", ...)`` from the object named in
its comment (``r$beta``, ``r$se``, ``r$zval``, ``r$pval``, ``r$ci.lb``, ``r$ci.ub``,
``r$tau2``, ``r$se.tau2``, ``r$I2``, ``r$H2``, ``r$QE``, ``r$QEp``, ``predict(r)$pi.lb``,
``predict(r)$pi.ub``, ``weights(r)``).
"""

YI = (0.021, 0.035, -0.004, 0.050, 0.012)
VI = (1e-4, 2.5e-4, 1.6e-4, 4e-4, 9e-5)

#: Shared by every model: Cochran's Q with fixed weights. r$QE, r$QEp.
Q = 7.21077932732
Q_PVALUE = 0.125159997518

#: rma(yi, vi, method="FE")
FE = dict(
    estimate=0.0172272354389, se=0.00543437242094, statistic=3.17005057888,
    p_value=0.00152412404783, ci_lower=0.00657606121526, ci_upper=0.0278784096625,
    i2=44.5274939306, h2=1.80269483183,
    weights=(29.53240361, 11.81296144, 18.45775226, 7.383100902, 32.81378179),
)  # fmt: skip

#: rma(yi, vi, method="DL"); the issue quotes mu 0.01885597, se 0.007646797,
#: tau^2 0.0001261544, Q(4) 7.2108, I^2 44.53%, PI [-0.0078, 0.0455].
DL = dict(
    estimate=0.018855971492, se=0.00764679682395, statistic=2.46586537162,
    p_value=0.0136682696308, ci_lower=0.00386852511998, ci_upper=0.0338434178641,
    tau2=0.00012615439162, se_tau2=0.000204504810311, i2=44.5274939306, h2=1.80269483183,
    pi_lower=-0.00777559716646, pi_upper=0.0454875401505,
    weights=(25.85556763, 15.54508015, 20.43424927, 11.1133733, 27.05172966),
)  # fmt: skip

#: rma(yi, vi, method="REML", control=tight); metafor's default threshold (1e-5) stops
#: early at tau^2 = 0.000112778679987 (rma(yi, vi, method="REML")).
REML = dict(
    estimate=0.0186808345832, se=0.00738069444678, statistic=2.53104023176,
    p_value=0.0113724803409, ci_lower=0.00421493928657, ci_upper=0.0331467298798,
    tau2=0.000107921591359, se_tau2=0.000189666358074, i2=40.7120442527, h2=1.68668321819,
    pi_lower=-0.0062959241297, pi_upper=0.043657593296,
    weights=(26.19961215, 15.21971623, 20.33231075, 10.72501178, 27.52334909),
)  # fmt: skip
REML_DEFAULT_THRESHOLD_TAU2 = 0.000112778679987

#: rma(yi, vi, method="PM", control=list(tol=1e-12))
PM = dict(
    estimate=0.0192983307685, se=0.00837588666224, statistic=2.30403437233,
    p_value=0.0212207141797, ci_lower=0.00288189457195, ci_upper=0.0357147669651,
    tau2=0.000180275471551, se_tau2=0.000248037068959, i2=53.4246027302, h2=2.14705629714,
    pi_lower=-0.0117181193465, pi_upper=0.0503147808836,
    weights=(25.03090156, 16.30478194, 20.61725962, 12.09002979, 25.95702709),
)  # fmt: skip

#: rma(yi, vi, method="DL", test="knha")  (t with k - 1 = 4 df, also for the PI)
DL_KH = dict(
    estimate=0.018855971492, se=0.00820001413448, statistic=2.29950475484,
    p_value=0.0829842357481, ci_lower=-0.00391091761421, ci_upper=0.0416228605982,
    pi_lower=-0.0197550498015, pi_upper=0.0574669927856,
)  # fmt: skip
#: rma(yi, vi, method="REML", test="knha", control=tight)
REML_KH = dict(
    estimate=0.0186808345832, se=0.00812435104486, statistic=2.29936329438,
    p_value=0.0829971512511, ci_lower=-0.00387598010824, ci_upper=0.0412376492746,
    pi_lower=-0.0179352737033, pi_upper=0.0552969428696,
)  # fmt: skip
#: rma(yi, vi, method="PM", test="knha", control=list(tol=1e-12))
PM_KH = dict(
    estimate=0.0192983307685, se=0.00837588666224, statistic=2.30403437233,
    p_value=0.0825718697959, ci_lower=-0.00395685875653, ci_upper=0.0425535202936,
    pi_lower=-0.0246389414374, pi_upper=0.0632356029744,
)  # fmt: skip
#: rma(yi, vi, method="DL", level=90)
DL_90 = dict(
    ci_lower=0.00627811000158, ci_upper=0.0314338329825,
    pi_lower=-0.00349394546811, pi_upper=0.0412058884521,
)  # fmt: skip

#: print(leave1out(rma(yi, vi, method="DL")), digits=8): estimate, se, tau2, I2 per omitted study
LOO_DL = dict(
    estimate=(0.01932747, 0.01593384, 0.02319792, 0.01478510, 0.02225891),
    se=(0.01057296, 0.00843468, 0.00698466, 0.00692055, 0.01051549),
    q=(7.00878929, 5.77804651, 3.75708249, 4.31159433, 6.75890110),
    tau2=(0.00024872, 0.00013317, 0.00004046, 0.00005834, 0.00024004),
    i2=(57.19660164, 48.07933799, 20.15080840, 30.42017014, 55.61408643),
)  # fmt: skip
#: print(leave1out(rma(yi, vi, method="REML", control=tight)), digits=8)
LOO_REML = dict(
    estimate=(0.01954173, 0.01564344, 0.02253397, 0.01469046, 0.02235109),
    se=(0.01093962, 0.00777014, 0.00641614, 0.00626077, 0.01071121),
    tau2=(0.00027873, 0.00009384, 0.00001560, 0.00002625, 0.00025587),
)  # fmt: skip

#: Q < k - 1: yi2 <- c(.02,.021,.019,.022); vi2 <- c(1e-4,1e-4,2e-4,1.5e-4)
#: rma(yi2, vi2, method=m) for m in DL, REML, PM: tau^2 = 0 (truncated), I^2 = 0, H^2 = 1
YI_LOWQ = (0.02, 0.021, 0.019, 0.022)
VI_LOWQ = (1e-4, 1e-4, 2e-4, 1.5e-4)
LOWQ = dict(estimate=0.0205789473684, se=0.00561951486949, q=0.0310526315789,
            q_pvalue=0.998558136268, se_tau2_dl=0.000105773420711,
            se_tau2_reml=0.000102890768604, se_tau2_pm=0.000103136410222)  # fmt: skip

#: Unclipped DL (Ranger's choice) when Q < k - 1:
#: rma(yi3, vi2, method="DL", control=list(tau2.min=-min(vi2))), yi3 <- c(.02,.035,.01,.028)
YI_NEG = (0.02, 0.035, 0.01, 0.028)
DL_NEGATIVE = dict(tau2=-2.44318181818e-05, estimate=0.0251151360906, se=0.0049921585353,
                   ci_lower=0.0153306851563, ci_upper=0.0348995870249, q=2.43421052632)  # fmt: skip

#: Paired per-topic scores of two small collections and metafor's escalc on them:
#: escalc("MC", m1i=mean(t), m2i=mean(c), sd1i=sd(t), sd2i=sd(c), ni=length(c), ri=cor(t, c))
#: escalc("ZCOR", ri=cor(t, c), ni=length(c))
PAIRED = {
    "A": ((0.2, 0.4, 0.5, 0.1, 0.3, 0.6), (0.3, 0.5, 0.4, 0.2, 0.5, 0.7)),
    "B": ((0.1, 0.2, 0.3, 0.4, 0.5, 0.35, 0.15), (0.2, 0.2, 0.5, 0.3, 0.7, 0.45, 0.1)),
}
ESCALC_MC = {"A": (0.0833333333333, 0.00161111111111), "B": (0.0642857142857, 0.00198979591837)}
ESCALC_ZCOR = {"A": (1.27317103498, 0.333333333333), "B": (1.23051579319, 0.25)}

#: z <- escalc("ZCOR", ri=c(.6, .45, .7, .52), ni=c(50, 120, 30, 80))
#: r <- rma(yi, vi, data=z, method="REML", control=tight); predict(r, transf=transf.ztor)
CORR_RI = (0.6, 0.45, 0.7, 0.52)
CORR_NI = (50, 120, 30, 80)
CORR_REML = dict(estimate=0.597061411137, se=0.0693807647564, tau2=0.00357460582849,
                 r=0.534955233328, r_lower=0.43096208687, r_upper=0.624924844183,
                 r_pi_lower=0.394866906436, r_pi_upper=0.650733503794)  # fmt: skip

#: Ranger (Sertkan et al. 2023) @ 171134191: the published tables are read at test time
#: from ../shared/data/ranger/ranger_notebook_reference_outputs.csv (never copied here).
#: Retrieval display names of that table, by collection id of retrieval_perquery_tidy.csv.gz
#: (examples/retrieval-colberter-data/config.yaml, display_names).
RANGER_RETRIEVAL_NAMES = {
    "trec-covid": "TREC Covid",
    "tripclick": "TripClick",
    "nfcorpus": "NFCorpus",
    "dbpedia-entity": "DBPedia Entity",
    "antique": "Antique",
    "trec-podcast": "TREC Podcast",
}
RANGER_GLUE_NAMES = {
    "mnli": "MNLI", "mrpc": "MRPC", "qnli": "QNLI", "qqp": "QQP", "rte": "RTE",
    "sst2": "SST-2", "wnli": "WNLI",
}  # fmt: skip
#: Combined MD of the 6 retrieval collections without robust04 (its qrels are missing), from
#: ../shared/data/ranger/SOURCE.md (an independent reimplementation of Ranger's formulas).
RANGER_RETRIEVAL_6 = dict(estimate=0.049569, ci_lower=0.020656, ci_upper=0.078482, p_value=0.000779)
