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
