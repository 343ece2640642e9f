"""Figures (presentation floor): each function draws one result object with matplotlib.

Every public figure function takes the result first, ``ax=`` (``axes=`` where it draws
several panels) to draw on existing axes, and returns the matplotlib Figure; it names
the measure and the collection, keeps a bounded measure's axis inside its range, and
writes probabilities beyond three decimals as ``>0.999`` / ``<0.001``.
"""
