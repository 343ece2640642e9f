"""Random-effects meta-analysis of a treatment-vs-control comparison across collections.

:func:`effect_size` turns paired per-topic scores into one effect size per collection
(MD, SMD/Hedges' g, Fisher-z CORR); :func:`meta_analysis` pools them (fixed effect,
DerSimonian-Laird, REML, Paule-Mandel, optional Hartung-Knapp); :func:`read_meta_config`
loads a Ranger-like YAML description of the collections.
"""

from bayes_ir.frequentist.meta_analysis.combine import (
    ConfInt,
    Heterogeneity,
    MetaAnalysisResult,
    PredictionInterval,
    meta_analysis,
)
from bayes_ir.frequentist.meta_analysis.config import MetaConfig, read_meta_config
from bayes_ir.frequentist.meta_analysis.effect_size import EffectSizes, effect_size

__all__ = [
    "ConfInt",
    "EffectSizes",
    "Heterogeneity",
    "MetaAnalysisResult",
    "MetaConfig",
    "PredictionInterval",
    "effect_size",
    "meta_analysis",
    "read_meta_config",
]
