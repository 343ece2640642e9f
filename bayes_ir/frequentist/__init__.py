"""Frequentist siblings of the Bayesian analysis: random-effects meta-analysis and GLMs."""

from bayes_ir.frequentist.glm import (  # noqa: F401  (GLM part)
    GLMFitResult,
    LinkComparison,
    TukeyHSDResult,
    compare_links,
    fit_glm,
    tukey_hsd,
)
from bayes_ir.frequentist.meta_analysis import (  # noqa: F401  (meta-analysis part)
    EffectSizes,
    MetaAnalysisResult,
    MetaConfig,
    effect_size,
    meta_analysis,
    read_meta_config,
)
