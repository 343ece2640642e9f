"""bayes_ir: is the new IR/NLP system really better, and how risky is it to deploy?

The package is built in three floors, imports only going down:

1. ground: the score table (:mod:`bayes_ir.table`, :mod:`bayes_ir.roles`,
   :mod:`bayes_ir.readers`), errors, defaults and the sweep helper;
2. methods, which read the score table: the Bayesian hierarchical models,
   risk measures, :mod:`bayes_ir.frequentist` (meta-analysis, GLMs) and
   ranking reliability;
3. presentation: :mod:`bayes_ir.plots`, :mod:`bayes_ir.report` and the CLI.
"""

from bayes_ir.errors import (
    BayesIRError,
    BayesIRWarning,
    ConvergenceError,
    ConvergenceWarning,
    InsufficientDataError,
    ScoreTableError,
    UnknownSystemError,
)
from bayes_ir.readers import detect_format, read_scores
from bayes_ir.roles import Roles
from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

__all__ = [
    "BayesIRError",
    "BayesIRWarning",
    "ConvergenceError",
    "ConvergenceWarning",
    "InsufficientDataError",
    "Roles",
    "ScoreTable",
    "ScoreTableError",
    "UnknownSystemError",
    "detect_format",
    "read_scores",
    "sweep",
]
