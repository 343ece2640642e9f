"""Decide, not only estimate: deploy, keep the champion, or collect more data.

:func:`decide` reads a hierarchical fit through its public API; the rules in
:mod:`bayes_ir.decision.rules` work on arrays of draws, so every result that prints a
word (``compare()``, the CLI, the review) takes it from here.
"""

from bayes_ir.decision.decide import DECISION_COLUMNS, Decision, check_options, decide
from bayes_ir.decision.more_topics import MORE_TOPICS_COLUMNS, more_topics, sakai_topics

__all__ = [
    "DECISION_COLUMNS",
    "MORE_TOPICS_COLUMNS",
    "Decision",
    "check_options",
    "decide",
    "more_topics",
    "sakai_topics",
]
