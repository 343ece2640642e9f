"""Samplers of crossed designs: blocked Gibbs (Gaussian) and its PyMC twin (NUTS).

Each reads a :class:`~bayes_ir.hierarchical.design.CrossedDesign` and its
:class:`~bayes_ir.hierarchical.design.DesignPriors` and returns draws; none knows of
reports.
"""
