"""Is the new IR/NLP system really better, and how risky is it to deploy? Ask bayes_ir.

The package is built in three floors, imports only going down:

1. ground: the score table (:mod:`bayes_ir.table`, :mod:`bayes_ir.roles`,
   :mod:`bayes_ir.readers`), errors, defaults, example data and the sweep helper;
2. methods, which read the score table: the Bayesian hierarchical model
   (:mod:`bayes_ir.hierarchical`), risk measures (:mod:`bayes_ir.risk`),
   :mod:`bayes_ir.frequentist` (meta-analysis, GLMs) and ranking reliability
   (:mod:`bayes_ir.reliability`);
3. presentation: :mod:`bayes_ir.plots`, :mod:`bayes_ir.report` and the CLI.

The public names are re-exported here and imported on first use, so that
``import bayes_ir`` stays fast (PyMC is loaded only when a model is fitted).

Examples
--------
>>> import bayes_ir
>>> table = bayes_ir.read_scores("data/example_scores.csv")  # doctest: +SKIP
>>> table = table.with_roles(champion="bm25", challengers="chal_*")  # doctest: +SKIP
>>> fit = bayes_ir.fit(table, seed=7)  # doctest: +SKIP
>>> bayes_ir.compare(fit).to_frame()  # doctest: +SKIP
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from bayes_ir.errors import (
    BayesIRError,
    BayesIRWarning,
    ConvergenceError,
    ConvergenceWarning,
    DatasetError,
    DataWarning,
    InsufficientDataError,
    MeasureError,
    ModelCheckWarning,
    RoleError,
    ScoreTableError,
    UnknownSystemError,
)
from bayes_ir.sweep import sweep  # eager: the function shadows its module's name

#: Public names, imported lazily from their module on first access (the command line
#: starts without pandas, scipy, PyMC or matplotlib).
_LAZY: dict[str, str] = {
    # the score table
    "read_scores": "bayes_ir.readers",
    "detect_format": "bayes_ir.readers",
    "ScoreTable": "bayes_ir.table",
    "concat": "bayes_ir.table",
    "Roles": "bayes_ir.roles",
    "write_table": "bayes_ir.report",
    "list_datasets": "bayes_ir.datasets",
    "load_dataset": "bayes_ir.datasets",
    "SystemSpec": "bayes_ir.simulate",
    "simulate_scores": "bayes_ir.simulate",
    # Bayesian hierarchical model
    "fit": "bayes_ir.hierarchical",
    "build_model": "bayes_ir.hierarchical",
    "prior_predictive": "bayes_ir.hierarchical",
    "diagnose": "bayes_ir.hierarchical",
    "compare": "bayes_ir.hierarchical",
    "many_vs_one": "bayes_ir.hierarchical",
    "pairwise_probabilities": "bayes_ir.hierarchical",
    "rank_probabilities": "bayes_ir.hierarchical",
    "leaderboard": "bayes_ir.hierarchical",
    "Leaderboard": "bayes_ir.hierarchical",
    "posterior_predictive": "bayes_ir.hierarchical",
    "check_model": "bayes_ir.hierarchical",
    "compare_likelihoods": "bayes_ir.hierarchical",
    "artifact_sweep": "bayes_ir.hierarchical",
    "HierarchicalFit": "bayes_ir.hierarchical",
    "fit_across": "bayes_ir.hierarchical",
    "AcrossFit": "bayes_ir.hierarchical",
    "fit_replicates": "bayes_ir.hierarchical",
    "ReplicateFit": "bayes_ir.hierarchical",
    "Priors": "bayes_ir.hierarchical",
    # decisions and the deployment review
    "decide": "bayes_ir.decision",
    "Decision": "bayes_ir.decision",
    "more_runs": "bayes_ir.decision",
    "review": "bayes_ir.report.review",
    "Review": "bayes_ir.report.review",
    "review_measures": "bayes_ir.report.review_measures",
    "MultiReview": "bayes_ir.report.review_measures",
    # risk
    "parse_risk": "bayes_ir.risk",
    "iter_risk": "bayes_ir.risk",
    "calc_risk": "bayes_ir.risk",
    "risk_adjusted_scores": "bayes_ir.risk",
    "urisk": "bayes_ir.risk",
    "trisk": "bayes_ir.risk",
    "bca_urisk": "bayes_ir.risk",
    "zrisk": "bayes_ir.risk",
    "one_to_one": "bayes_ir.risk",
    "brisk": "bayes_ir.risk",
    "brisk_sweep": "bayes_ir.risk",
    "risk_review": "bayes_ir.risk",
    "segment_risk": "bayes_ir.risk",
    # frequentist
    "effect_size": "bayes_ir.frequentist",
    "meta_analysis": "bayes_ir.frequentist",
    "read_meta_config": "bayes_ir.frequentist",
    "fit_glm": "bayes_ir.frequentist",
    "tukey_hsd": "bayes_ir.frequentist",
    "compare_links": "bayes_ir.frequentist",
    "paired_tests": "bayes_ir.frequentist",
    "friedman_nemenyi": "bayes_ir.frequentist",
    # reliability
    "kendall_tau": "bayes_ir.reliability",
    "tau_ap": "bayes_ir.reliability",
    "expected_correlation": "bayes_ir.reliability",
    "parse_reliability": "bayes_ir.reliability",
    "bootstrap_interval": "bayes_ir.reliability",
    "bayesian_interval": "bayes_ir.reliability",
    "simulation_study": "bayes_ir.reliability",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        # the one version is pyproject.toml's `version`, read from the installed metadata
        from importlib.metadata import version

        globals()[name] = version("bayes_ir")
        return globals()[name]
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bayes_ir' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "BayesIRError",
    "BayesIRWarning",
    "ConvergenceError",
    "ConvergenceWarning",
    "DataWarning",
    "DatasetError",
    "InsufficientDataError",
    "MeasureError",
    "ModelCheckWarning",
    "RoleError",
    "ScoreTableError",
    "UnknownSystemError",
    "sweep",
    *_LAZY,
]
