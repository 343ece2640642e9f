"""Frequentist siblings of the Bayesian analysis: random-effects meta-analysis and GLMs."""
