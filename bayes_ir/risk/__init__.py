"""Risk-sensitive evaluation: is the challenger safe to deploy against the champion.

Frequentist measures (URisk, TRisk, BCa bootstrap intervals, ZRisk, GeoRisk) and
Bayesian ones (one-to-one Gaussian / skew-normal models of the risk-adjusted
differences, and BRisk from the hierarchical model fitted to risk-adjusted scores),
side by side in the deployment review table of Benham et al. (2020).

Sign convention: the result objects store each measure in its authors' orientation
(positive = better than the baseline) and report it multiplied by -1, written with
a minus (URisk-, TRisk-, ...), so that in every table higher means riskier.
"""

from bayes_ir.risk.adjusted import (
    risk_adjusted_differences,
    risk_adjusted_scores,
    risk_measure_name,
)
from bayes_ir.risk.bca import BCaResult, bca_urisk, bonferroni_level
from bayes_ir.risk.brisk import BRiskForecast, BRiskResult, BRiskSweep, brisk, brisk_sweep
from bayes_ir.risk.one_to_one import OneToOneResult, build_one_to_one_model, one_to_one
from bayes_ir.risk.review import RiskReview, risk_review
from bayes_ir.risk.segments import SEGMENT_RISK_COLUMNS, SegmentRisk, segment_risk
from bayes_ir.risk.spec import RISK_MEASURES, RiskSpec, TopicRisk, calc_risk, iter_risk, parse_risk
from bayes_ir.risk.trisk import TRiskResult, trisk
from bayes_ir.risk.urisk import URiskResult, urisk
from bayes_ir.risk.zrisk import ZRiskResult, zrisk

__all__ = [
    "BCaResult",
    "BRiskForecast",
    "BRiskResult",
    "BRiskSweep",
    "OneToOneResult",
    "RiskReview",
    "RISK_MEASURES",
    "SEGMENT_RISK_COLUMNS",
    "RiskSpec",
    "SegmentRisk",
    "TRiskResult",
    "TopicRisk",
    "URiskResult",
    "ZRiskResult",
    "bca_urisk",
    "bonferroni_level",
    "brisk",
    "brisk_sweep",
    "build_one_to_one_model",
    "calc_risk",
    "iter_risk",
    "one_to_one",
    "parse_risk",
    "risk_adjusted_differences",
    "risk_adjusted_scores",
    "risk_measure_name",
    "risk_review",
    "segment_risk",
    "trisk",
    "urisk",
    "zrisk",
]
