"""Figures (presentation floor): each function draws one result object with matplotlib."""
