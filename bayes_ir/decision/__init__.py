"""Decide, not only estimate: deploy, keep the champion, or collect more data.

:func:`decide` reads a hierarchical fit through its public API; the rules in
:mod:`bayes_ir.decision.rules` work on arrays of draws, so every result that prints a
word (``compare()``, the CLI, the review) takes it from here. Fits of several runs per
system (:func:`~bayes_ir.hierarchical.fit_replicates`) are decided by
:func:`decide_replicates` (in expectation over seeds or for one run) and planned by
:func:`more_runs` (more topics or more runs?).
"""

from bayes_ir.decision.decide import (
    DECISION_COLUMNS,
    RUN_COLUMNS,
    Decision,
    check_options,
    decide,
)
from bayes_ir.decision.more_runs import (
    MORE_RUNS_COLUMNS,
    MoreRuns,
    mean_difference_variance,
    more_runs,
)
from bayes_ir.decision.more_topics import MORE_TOPICS_COLUMNS, more_topics, sakai_topics
from bayes_ir.decision.replicates import decide_replicates

__all__ = [
    "DECISION_COLUMNS",
    "MORE_RUNS_COLUMNS",
    "MORE_TOPICS_COLUMNS",
    "RUN_COLUMNS",
    "Decision",
    "MoreRuns",
    "check_options",
    "decide",
    "decide_replicates",
    "mean_difference_variance",
    "more_runs",
    "more_topics",
    "sakai_topics",
]
