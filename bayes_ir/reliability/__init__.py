"""Ranking reliability: how close the observed ranking of systems is to the true one.

Kendall tau and tau_AP between two rankings (:mod:`~bayes_ir.reliability.correlation`),
Urbano and Marrero's (SIGIR 2016) estimators of the expected correlation with the true
ranking (:mod:`~bayes_ir.reliability.expected`), interval estimates
(:mod:`~bayes_ir.reliability.intervals`) and the simulation study that measures the
estimators' error (:mod:`~bayes_ir.reliability.simulation`).
"""

from bayes_ir.reliability.correlation import kendall_tau, tau_ap
from bayes_ir.reliability.estimators import plugin_bandwidth, swap_probabilities
from bayes_ir.reliability.expected import ReliabilityResult, expected_correlation
from bayes_ir.reliability.intervals import (
    CorrelationInterval,
    bayesian_interval,
    bootstrap_interval,
)
from bayes_ir.reliability.simulation import (
    SimulationStudy,
    TopicSetSimulator,
    fit_simulator,
    simulation_study,
)
from bayes_ir.reliability.spec import (
    CORRELATIONS,
    ESTIMATORS,
    ReliabilitySpec,
    parse_reliability,
)
from bayes_ir.reliability.split_half import SplitHalfFit, split_half_fit

__all__ = [
    "CORRELATIONS",
    "ESTIMATORS",
    "CorrelationInterval",
    "ReliabilityResult",
    "ReliabilitySpec",
    "SimulationStudy",
    "SplitHalfFit",
    "TopicSetSimulator",
    "bayesian_interval",
    "bootstrap_interval",
    "expected_correlation",
    "fit_simulator",
    "kendall_tau",
    "parse_reliability",
    "plugin_bandwidth",
    "simulation_study",
    "split_half_fit",
    "swap_probabilities",
    "tau_ap",
]
