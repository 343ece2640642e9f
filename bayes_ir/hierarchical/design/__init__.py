"""Designs of crossed terms: one description of the model that every sampler reads.

A :class:`CrossedDesign` holds the scores, an intercept per collection and a list of
:class:`Term` objects (topic within collection, system, system x collection, system x
segment, topic x system, replicate); :func:`design_priors` autoscales their priors. The
builders :func:`two_way_design`, :func:`collections_design`, :func:`segments_design` and
:func:`replicates_design` make the
designs the package fits from a :class:`~bayes_ir.table.ScoreTable`.
"""

from bayes_ir.hierarchical.design.design import (
    REPLICATE_SIGMAS,
    SCALES,
    CrossedDesign,
    collections_design,
    replicates_design,
    segments_design,
    two_way_design,
)
from bayes_ir.hierarchical.design.priors import DesignPriors, design_priors
from bayes_ir.hierarchical.design.terms import Term, intercept_term, random_term

__all__ = [
    "REPLICATE_SIGMAS",
    "SCALES",
    "CrossedDesign",
    "DesignPriors",
    "Term",
    "collections_design",
    "design_priors",
    "intercept_term",
    "random_term",
    "replicates_design",
    "segments_design",
    "two_way_design",
]
