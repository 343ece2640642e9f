"""Reference numbers for bayes_ir.reliability, with where each one comes from.

Expected correlations on TREC-6 ad hoc (``../shared/data/trec_adhoc/adhoc6_ap.csv``,
50 topics x 74 runs, none dropped), from Urbano and Marrero's R code
(github.com/julian-urbano/sigir2016-correlation, ``src/estimators/estimator.*.R``)::

    source("src/estimators/estimator.MSQD.R")   # likewise estimator.ML.R
    eff <- read.csv("data/adhoc6.csv")
    pre <- precompute.MSQD(eff)
    Etau.MSQD(eff, pre)      # 0.8600266 in the repository's README (rounded copy)
    EtauAP.MSQD(eff, pre)    # 0.816099

The 7-digit values below were computed independently on the shared copy of the data
(see ``../shared/data/README.md``: "MSQD ... E[tau] = 0.8600267, E[tau_AP] = 0.8160991
(on the authors' own copy, rounded differently at 1e-4: 0.8600266 / 0.816099)"), and
the ML values are those of the issue (#7).
"""

from __future__ import annotations

#: (E[tau], E[tau_AP]) on adhoc6_ap.csv, all 74 runs.
ADHOC6 = {
    "MSQD": (0.8600267, 0.8160991),
    "ML": (0.8560613, 0.8126930),
}
#: Tolerance of the comparison (the references have 7 decimals).
ADHOC6_TOL = 1e-6

#: Hand-computed small cases: truth and estimate are scores (higher is better).
#: tau = 1 - 4 D / (m (m - 1)); tau_AP = 2/(m-1) sum_{i>=2} C(i)/(i-1) - 1.
HAND_CASES = {
    # name: (truth, estimate, tau, tau_ap)
    "identical": ([4, 3, 2, 1], [4, 3, 2, 1], 1.0, 1.0),
    "reversed": ([4, 3, 2, 1], [1, 2, 3, 4], -1.0, -1.0),
    # estimated order s1, s0, s2, s3: C = 0, 2, 3 -> (0/1 + 2/2 + 3/3) = 2 -> 2/3*2 - 1
    "swap_at_top": ([4, 3, 2, 1], [3, 4, 2, 1], 2 / 3, 1 / 3),
    # estimated order s0, s1, s3, s2: C = 1, 2, 2 -> (1 + 1 + 2/3) = 8/3 -> 2/3*8/3 - 1
    "swap_at_bottom": ([4, 3, 2, 1], [4, 3, 1, 2], 2 / 3, 7 / 9),
    # estimated order s2, s0, s1: C(s0) = 0, C(s1) = 1 (s0) -> (0 + 1/2) -> 1*0.5 - 1
    "three_cycle": ([3, 2, 1], [2, 1, 3], -1 / 3, -0.5),
}
#: tau_AP is asymmetric: tau_ap(truth=[2, 1, 3], estimate=[3, 2, 1]) (the three_cycle
#: case with the arguments exchanged): order s0, s1, s2; C(s1) = 1, C(s2) = 0 -> 1 - 1.
THREE_CYCLE_SWAPPED_TAU_AP = 0.0

#: Split-half subset sizes, from R: unique(round(seq(1, floor(n/2), length.out = 21)))[-1]
#: (plus 1 when only one size is left), as in src/estimators/splithalf.R.
SPLIT_HALF_SIZES = {
    50: [2, 3, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 17, 18, 19, 20, 21, 23, 24, 25],
    4: [1, 2],
}

#: The paper's finding (Urbano and Marrero 2016, Fig. 1; repeated in issue #7): with
#: simulated topic sets from TREC ad hoc collections the error (mean |estimate -
#: actual|) of the proposed estimators drops from about 0.065 at 10 topics to about
#: 0.035 at 50, and the split-half baselines are worse.
PAPER_ERROR = {10: 0.065, 50: 0.035}

# ---------------------------------------------------------------------------------------
#: The plug-in bandwidth against R's KernSmooth::dpik (KernSmooth 2.23-20, R 4.2.2), on
#: DPIK_GAMMA (60 draws of Gamma(2, 1), 4 decimals; its scale estimate is the IQR) and
#: DPIK_NORMAL (40 draws of N(0, 1); its scale estimate is the SD). DPIK_R_SCRIPT was
#: run with the two vectors pasted in (``Rscript dpik.R``). dpik bins the data on a grid;
#: with 40,001 points its binning error is below 1e-8 (it changes by 2e-7 from 4,001 to
#: 40,001 points, and the error falls as the square of the spacing). ``truncate = FALSE``
#: matters: with dpik's default ``truncate = TRUE``, linbin drops an observation that
#: falls on the last grid point, which happens to the maximum depending on rounding
#: (dpik's defaults give 0.503273 and 0.654103 here: the maximum dropped). dpik divides
#: the IQR by 1.349, bayes_ir by qnorm(0.75) - qnorm(0.25) = 1.34898: a relative change
#: of 1.5e-5 in the IQR scale, so the tests accept a relative difference of 1e-5 in h.
DPIK_R_SCRIPT = r"""
x <- c(...)  # DPIK_GAMMA
y <- c(...)  # DPIK_NORMAL
options(digits = 15)
print(c(KernSmooth::dpik(x, gridsize = 40001L, truncate = FALSE),
        KernSmooth::dpik(y, gridsize = 40001L, truncate = FALSE)))
"""
DPIK_GAMMA = [
    5.9338, 2.2668, 1.1479, 0.1825, 0.7806, 1.9755, 1.3293, 0.6419, 2.3695, 3.2341,
    1.6982, 2.4741, 1.4416, 5.6209, 1.3716, 0.7642, 3.0854, 1.7876, 0.7094, 2.0496,
    1.1559, 1.7006, 4.2195, 1.9296, 1.4152, 2.5401, 1.4044, 1.9804, 2.7258, 0.3199,
    0.7061, 2.7608, 0.1447, 2.1270, 4.6790, 2.1675, 4.2204, 1.2308, 4.9172, 2.8411,
    2.1594, 0.8323, 4.1349, 1.0092, 1.9738, 0.5183, 1.6610, 2.8475, 1.2898, 1.3718,
    0.8370, 1.5277, 1.9738, 4.4466, 0.1768, 0.9980, 3.4585, 0.6957, 1.7232, 5.9548
]  # fmt: skip
DPIK_NORMAL = [
    -1.7383, -1.3366, -1.3611, -0.3516, -2.3126, -0.1889, -0.9572, 0.8936, 0.9568,
    1.3923, 0.7675, -0.0530, 0.8598, 1.5055, -0.6536, 0.6104, -0.0427, 1.4400, -0.8369,
    -0.3015, 0.3623, 0.2581, -1.6394, 0.3602, -0.1185, -0.2397, -0.1553, 0.2190,
    -1.8164, 1.5525, -0.8614, -2.2414, -0.0820, 1.4575, -0.5186, 1.5513, 1.5569,
    -0.8627, -2.4651, -1.2352
]  # fmt: skip
DPIK_R = {"gamma": 0.505917936071111, "normal": 0.639681797963989}
DPIK_REL_TOL = 1e-5
