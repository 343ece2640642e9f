"""GLM comparisons of IR systems (Faggioli, Ferro and Fuhr, CIKM 2022).

Gaussian GLMs ``score ~ topic + system`` under eight link functions, their goodness
of fit, the topic-blocked Tukey HSD on each GLM's system contrasts, and the
comparison of links over measures x collections (the paper's Tables 1 and 2).

>>> from bayes_ir.frequentist import fit_glm, tukey_hsd, compare_links  # doctest: +SKIP
>>> fit = fit_glm(table, link="logit")                                   # doctest: +SKIP
>>> tukey_hsd(fit, alpha=0.05).n_significant                             # doctest: +SKIP
>>> compare_links(table).to_markdown("deviance")                         # doctest: +SKIP
"""

from bayes_ir.frequentist.glm.comparison import STATISTICS, LinkComparison, compare_links
from bayes_ir.frequentist.glm.fit import GLMFitResult, fit_glm
from bayes_ir.frequentist.glm.links import (
    EXTRA_LINKS,
    LINKS,
    Atanh,
    Exp,
    Tanh,
    UnknownLinkError,
    get_link,
    link_names,
)
from bayes_ir.frequentist.glm.tukey import TukeyHSDResult, tukey_hsd

__all__ = [
    "EXTRA_LINKS",
    "LINKS",
    "STATISTICS",
    "Atanh",
    "Exp",
    "GLMFitResult",
    "LinkComparison",
    "Tanh",
    "TukeyHSDResult",
    "UnknownLinkError",
    "compare_links",
    "fit_glm",
    "get_link",
    "link_names",
    "tukey_hsd",
]
