"""Frequentist siblings of the Bayesian analysis: meta-analysis, GLMs, paired tests, Friedman."""

from bayes_ir.frequentist.friedman import (  # noqa: F401  (leaderboard companion)
    FriedmanNemenyi,
    cd_groups,
    critical_difference,
    friedman_nemenyi,
)
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
from bayes_ir.frequentist.paired import PairedTests, paired_tests  # noqa: F401  (paired tests)
