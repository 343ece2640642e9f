"""Package-wide defaults, set once (in the spirit of ArviZ's ``rcParams``).

Every public function that takes one of these options uses the same keyword name
and falls back to the value here when the caller passes ``None``.
"""

from __future__ import annotations

import os
from typing import Final

#: Probability mass of credible and confidence intervals.
CI_PROB: float = 0.95
#: Loss weights r of the risk-adjusted difference used by sweeps (Benham et al. 2020).
RISK_LEVELS: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0)
# MCMC defaults of the hierarchical model.
#: Number of MCMC chains.
CHAINS: int = 4
#: Posterior draws per chain of NUTS fits (the exact and Gibbs samplers choose theirs from
#: :data:`DRAWS_ESS`).
DRAWS: int = 2000
#: Draws per chain of the skew-normal model (NUTS) for a table of up to
#: :data:`SKEW_NORMAL_CELL_DRAWS` / 10,000 cells: 4 x 10,000 gives bulk and tail ESS
#: of 12,000 or more on rb04 (50 x 45; the smallest, the system scale's, 0.31-0.33 per
#: draw over seeds 0-1), :data:`DRAWS_ESS` with its margin.
SKEW_NORMAL_DRAWS: int = 10000
#: Cell evaluations per chain the default draws of a larger table stay within (the
#: draws fall in proportion to the cells, to :data:`SKEW_NORMAL_MIN_DRAWS` at least):
#: Robust04 AP (27,390 cells) gets 2,993 draws, bulk and tail ESS about 5,000 (0.42 per
#: draw at the least, the tails of system effects), the 4,000 of the speed issue (33)
#: with a margin of 1.25.
SKEW_NORMAL_CELL_DRAWS: int = 82_000_000
#: Fewest default draws per chain of the skew-normal model.
SKEW_NORMAL_MIN_DRAWS: int = 2000
#: Tuning (warm-up) draws per chain of NUTS fits.
TUNE: int = 1000
#: NUTS target acceptance rate (of a table with few topics or systems; see
#: :data:`LARGE_TABLE_TARGET_ACCEPT`).
TARGET_ACCEPT: float = 0.9
#: NUTS target acceptance of the samplers of :func:`bayes_ir.hierarchical.fit` on a table
#: with at least :data:`LARGE_TABLE_LEVELS` topics and systems
#: (:func:`bayes_ir.hierarchical.samplers.retry.default_target_accept`).
LARGE_TABLE_TARGET_ACCEPT: float = 0.65
#: Topics and systems a table has at least for :data:`LARGE_TABLE_TARGET_ACCEPT`.
LARGE_TABLE_LEVELS: tuple[int, int] = (20, 10)
# Diagnostics gate: R-hat at most, bulk and tail ESS at least.
#: Diagnostics gate: largest R-hat allowed.
RHAT_MAX: float = 1.01
#: Diagnostics gate: smallest bulk and tail ESS allowed.
ESS_MIN: float = 400.0
#: Kruschke's bar for stable 95% interval limits, the Bayesian-risk paper's standard.
ESS_MIN_PAPER: float = 10_000.0
#: Bulk and tail ESS the default draws of the exact and Gibbs samplers aim at (or the
#: gate's, when higher): what the decision rules need, a Monte Carlo SE of 0.002 on a
#: probability near the decision probability 0.95 and of 0.01 posterior SDs on a mean.
DRAWS_ESS: float = 10_000.0
#: Margin of the default draws over the ESS they aim at.
DRAWS_ESS_MARGIN: float = 1.25
#: Fraction of artifact runs dropped from the bottom by mean (Benham et al. 2020; Urbano 2016).
ARTIFACT_DROP_BOTTOM: float = 0.25
#: Default seed of stochastic methods when the caller gives none.
SEED: int = 20200725
#: Tolerance when checking scores against a measure's range.
RANGE_TOLERANCE: float = 1e-9
#: Digits, relative to the largest score of a pair of systems, to which paired differences
#: are rounded before tests that count ties and zeros (Wilcoxon, sign): ``0.3 - 0.1`` and
#: ``0.2`` are one difference, whatever the float noise of the subtraction.
TIE_DIGITS: int = 9


def ci_prob(value: float | None) -> float:
    """Return ``value`` or the default interval probability, checked by :mod:`bayes_ir.validate`."""
    from bayes_ir.validate import ci_prob as checked  # validate reads these defaults

    return checked(value)


#: Most chains one fit may run (more is a typo, and would hang the machine).
MAX_CHAINS: int = 64
#: Threads of the GIL-free numerical work inside one call (the diagnostics' blocks, the
#: model check's special functions): at most 2, the cores of the machines the package is
#: measured on; sampling chains are placed by their samplers.
COMPUTE_THREADS: int = min(2, os.cpu_count() or 1)
#: Largest text file read whole beside the scores: a selector list (``-C @file``) or a
#: config (10 MB: a million system names; a larger one is the wrong file).
MAX_SIDE_FILE_BYTES: int = 10_000_000
#: Most resamples of a bootstrap, randomisation or BCa (``--resamples``): their Monte
#: Carlo error is then below 0.001 on any p-value; more only takes hours.
MAX_RESAMPLES: int = 1_000_000
#: Largest loss weight r = 1 + alpha of the risk measures (papers use 2 to 20); a larger
#: weight makes every risk-adjusted score overflow or rest on one topic.
MAX_RISK_WEIGHT: float = 1000.0
#: Largest array (bytes) of draws a fit, log-likelihood or predictive may allocate; ``None``:
#: the environment variable ``BAYES_IR_MEMORY_LIMIT`` if set, else MEMORY_FRACTION of the RAM.
#: A fit's peak memory is about twice the draws it keeps (measured: +336 MB for +158 MB of
#: draws), so a quarter of the RAM keeps the peak within half of it.
MEMORY_LIMIT: float | None = None
#: Share of the RAM that kept draws may take when ``MEMORY_LIMIT`` is not set.
MEMORY_FRACTION: float = 0.25


def memory_limit() -> float:
    """Return the memory limit in bytes (see :data:`MEMORY_LIMIT`)."""
    if MEMORY_LIMIT is not None:
        return float(MEMORY_LIMIT)
    env = os.environ.get("BAYES_IR_MEMORY_LIMIT")
    if env:
        return float(env)
    return MEMORY_FRACTION * os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


#: Default loss weight r of risk-adjusted differences (r = 1 + alpha; Benham et al. 2020).
RISK_R: float = 5.0
#: Standard deviation used by TRisk: "population" (divide by n, as rmit-ir/trisk and
#: Dincer et al. 2014) or "sample" (divide by n - 1).
TRISK_SD: Final = "population"
#: Bootstrap resamples of the BCa intervals of URisk.
BCA_RESAMPLES: int = 9999
# Ranking reliability (Urbano & Marrero 2016): default estimator of E[tau], Monte Carlo
# samples of RES/KD, bootstrap resamples of interval estimates.
#: Default estimator of the expected Kendall tau.
RELIABILITY_ESTIMATOR: str = "MSQD"
#: Monte Carlo samples of the RES and KD estimators.
RELIABILITY_SAMPLES: int = 1000
#: Bootstrap resamples of the reliability interval estimates.
RELIABILITY_BOOTSTRAP: int = 1000
# GLM link comparison (Faggioli, Ferro and Fuhr 2022): family-wise alpha of the topic-blocked
# Tukey HSD, clipping epsilon of boundary scores, mean below which ``boundary="drop_systems"``
# drops a system, IRLS tolerance (R's relative deviance criterion) and iteration cap.
#: Family-wise alpha of the topic-blocked Tukey HSD.
GLM_ALPHA: float = 0.05
#: Clipping distance of boundary scores from a link's bounds.
GLM_EPSILON: float = 1e-6
#: Mean score below which ``boundary="drop_systems"`` drops a system.
GLM_MIN_MEAN: float = 0.01
#: IRLS tolerance (R's relative deviance criterion).
GLM_TOL: float = 1e-12
#: IRLS iteration cap.
GLM_MAXITER: int = 100
# Meta-analysis across collections: default effect size (escalc code), tau^2 estimator,
# and relative tolerance / iteration cap of the iterative tau^2 estimators (REML, PM).
#: Default effect size of the meta-analysis (escalc code).
META_EFFECT: str = "MD"
#: Default tau^2 estimator of the meta-analysis.
META_METHOD: str = "REML"
#: Relative tolerance of the iterative tau^2 estimators (REML, PM).
META_TOL: float = 1e-12
#: Iteration cap of the iterative tau^2 estimators.
META_MAXITER: int = 1000
# Decisions (bayes_ir.decide): margin in the measure's units (suits measures in [0, 1]),
# threshold of caring as a fraction of the margin, grid of new topics of the more-topics
# analysis and its simulations per grid point.
#: Decision margin in the measure's units (suits measures in [0, 1]).
DECISION_MARGIN: float = 0.01
#: Decision margin of contrasts in units of a residual SD (``fit_across(scale="sd")``):
#: a tenth of the topic-to-topic noise, half of Cohen's "small" effect.
DECISION_MARGIN_SD: float = 0.1
#: A segment is named harmed when P(its risk-adjusted contrast < 0) is at least this.
SEGMENT_HARM_PROBABILITY: float = 0.9
#: Threshold of caring, as a fraction of the margin.
DECISION_THRESHOLD_FRACTION: float = 0.1
#: Grid of new topics of the more-topics analysis.
MORE_TOPICS: tuple[int, ...] = (10, 25, 50, 100, 200)
#: Simulations per grid point of the more-topics analysis.
MORE_TOPICS_SIMULATIONS: int = 4000
#: Grid of new topics of the analysis of more topics and runs (``more_runs``).
MORE_RUNS_TOPICS: tuple[int, ...] = (0, 25, 50, 100, 200)
#: Grid of new runs per system (challenger and champion) of ``more_runs``.
MORE_RUNS_RUNS: tuple[int, ...] = (0, 1, 2, 5, 10)
#: P(decided) at which ``more_runs`` names the cheapest cell of its grid.
MORE_RUNS_TARGET: float = 0.8
#: Decision probability: an action needs at least this posterior probability of being right.
DECISION_PROBABILITY: float = 0.95
# Leaderboards (bayes_ir.leaderboard, issue 31): the region of practical equivalence in
# the measure's units, the k of P(top k), the probability at which a system is shown
# behind its group's leader, and the level of the Friedman-Nemenyi companion.
#: Region of practical equivalence of a leaderboard's tie groups, in the measure's units.
LEADERBOARD_ROPE: float = 0.01
#: The k of a leaderboard's P(in the top k).
LEADERBOARD_TOP: int = 10
#: A system leaves its leader's tie group when it is behind the leader by more than the
#: rope with at least this posterior probability.
LEADERBOARD_P_MIN: float = 0.95
#: Significance level of the Friedman test and the Nemenyi critical difference.
FRIEDMAN_ALPHA: float = 0.05
# Likelihood comparison by PSIS-LOO (issue 14): posterior draws used for the pointwise
# log-likelihood (a seeded subset, so a fit stays small), and the selection rule: the
# simplest candidate whose ELPD is within ``ELPD_SE_RULE`` standard errors of the
# difference from the best candidate's.
#: Posterior draws of the pointwise log-likelihood (a seeded subset).
LOO_DRAWS: int = 4000
#: Standard errors of the ELPD difference within which the simplest likelihood wins.
ELPD_SE_RULE: float = 2.0
#: A candidate likelihood whose posterior predictive check of a challenger's mean
#: difference from the champion gives a p-value below this is not chosen (issue 14).
MEAN_CHECK_P: float = 0.01
#: Across outcome spaces (issue 28), a family is adequate when its predictive share of
#: exact 0s and of exact 1s are each within this of the observed share.
POINT_MASS_TOLERANCE: float = 0.02

#: Decimals of the numbers in LaTeX tables (:mod:`bayes_ir.report.latex`).
LATEX_DIGITS: int = 4

# Fewest topics each method accepts, named by what they protect. Every check goes
# through :func:`bayes_ir.validate.require_topics` (or ``ScoreTable.require_topics``).
#: The hierarchical model: the topic-effect SD ``sigma_topic`` is not identified by one topic.
MIN_TOPICS_HIERARCHICAL: int = 2
#: Risk measures (URisk, TRisk, ZRisk and their BCa intervals): with two topics the spread
#: of the per-topic differences (TRisk's standard error) rests on one degree of freedom.
MIN_TOPICS_RISK: int = 3
#: The GLM comparison: two topics leave ``S - 1`` residual degrees of freedom.
MIN_TOPICS_GLM: int = 3
#: A paired test (t, randomisation, Wilcoxon): a standard deviation of the differences.
MIN_TOPICS_PAIRED: int = 2
#: Paired topics a meta-analysis effect size needs in each collection: MD's variance
#: ``S^2/n`` needs ``n - 1 >= 1``; SMD also a correlation and Hedges' ``J = 1 - 3/(4(n-1)-1)``
#: with two degrees of freedom; CORR's Fisher-z variance ``1/(n - 3)`` needs ``n >= 4``.
MIN_TOPICS_EFFECT_SIZE: dict[str, int] = {"MD": 2, "SMD": 3, "CORR": 4}
#: Ranking-reliability estimators (ML, MSQD, RES, KD): an SD of per-topic differences.
MIN_TOPICS_RELIABILITY: int = 2
#: The split-half estimators: two subset sizes (1 and 2) to fit the extrapolation.
MIN_TOPICS_SPLIT_HALF: int = 4
#: Urbano's topic simulator (:func:`bayes_ir.reliability.fit_simulator`): the distribution
#: of the topic effects is estimated from the topics.
MIN_TOPICS_SIMULATOR: int = 3
