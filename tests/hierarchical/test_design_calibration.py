"""Simulation-based calibration of the model across collections and across segments.

Known truth drawn from the priors (Talts et al. 2018): the ranks of every parameter
and reported quantity are uniform, and the 90% intervals of the overall contrast,
the between-group SD and each group's contrast cover 87-93% of the truths (slow tests,
2,000 datasets: the coverage of one quantity then has an SD of 0.67 points).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from results.hierarchical import SBC_ALPHA, SBC_BINS, SBC_BINS_SLOW, SBC_LEVEL

from bayes_ir.hierarchical.design import (
    DesignPriors,
    collections_design,
    segments_design,
)
from bayes_ir.hierarchical.design_calibration import calibrate_design, design_parameter_names
from bayes_ir.hierarchical.families import get_family
from bayes_ir.table import ScoreTable

#: Datasets of the slow checks of coverage (one quantity's coverage SD: 0.67 points; with
#: 1,000 a batch had one of 19 quantities at 86.5%, a 3.5-SD low, the next batch none).
N_COVERAGE = 2000
#: Draws per chain of each dataset's fit (ESS above the 99 draws the truth is ranked among).
DRAWS = 300


def _table(sizes, n_systems=3):
    rows = [
        (f"c{c}", "AP", f"s{s}", f"t{t}", 0.5)
        for c, n_t in enumerate(sizes)
        for t in range(n_t)
        for s in range(n_systems)
    ]
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    frame["score"] = np.random.default_rng(0).uniform(size=len(frame))
    table = ScoreTable.from_frame(frame)
    return table.with_roles(champion="s0", challengers=[f"s{s}" for s in range(1, n_systems)])


def _collections(scale):
    design = collections_design(_table((8, 12, 6, 10)), scale=scale)
    sd = scale == "sd"
    priors = DesignPriors(
        intercept_mu=np.full(4, 0.4),
        intercept_sd=np.full(4, 0.1),
        residual_rate=np.full(4, 10.0),
        rates={
            "topic": np.full(4, 8.0),
            "system": np.array([2.0 if sd else 20.0]),
            "system:collection": np.array([3.0 if sd else 30.0]),
        },
    )
    return design, priors


def _segments():
    table = _table((40,), n_systems=4)
    segments = {f"t{t}": f"g{t % 5}" for t in range(40)}
    design = segments_design(table, segments)
    priors = DesignPriors(
        intercept_mu=np.full(5, 0.4),  # an intercept per segment
        intercept_sd=np.full(5, 0.1),
        residual_rate=np.array([10.0]),
        rates={
            "topic": np.array([8.0]),
            "system": np.array([20.0]),
            "system:segment": np.array([30.0]),
        },
    )
    return design, priors


def bernoulli_collections():
    """4 collections x 15-30 items x 3 systems of 0/1 outcomes and the priors of their truths
    (logit scale; also ``benchmarks/study_across_families.py``'s)."""
    rows = [(f"c{c}", "accuracy", f"s{s}", f"t{t}", float((t + s) % 2))
            for c, n_t in enumerate((15, 25, 20, 30)) for t in range(n_t)
            for s in range(3)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    table = ScoreTable.from_frame(frame).with_roles(champion="s0", challengers=["s1", "s2"])
    priors = DesignPriors(
        intercept_mu=np.full(4, 0.5),
        intercept_sd=np.full(4, 0.7),
        residual_rate=np.empty(0),
        rates={
            "topic": np.full(4, 1.0),
            "system": np.array([2.0]),
            "system:collection": np.array([4.0]),
        },  # fmt: skip
    )
    return collections_design(table, scale="measure"), priors


def _reported(res, design):
    """Coverage of the overall contrasts, the between-group SD and each group's contrast."""
    names = design_parameter_names(design)
    start = names.index(f"{design.challengers[0]} - {design.champion}")
    frame = res.to_frame(bins=SBC_BINS_SLOW).iloc[start:]
    return frame.set_index("parameter")["coverage"]


def test_a_quick_calibration_across_collections():
    design, priors = _collections("measure")
    res = calibrate_design(design, priors, n_datasets=60, seed=100, max_workers=2)
    assert res.failures(alpha=SBC_ALPHA, bins=SBC_BINS) == [], res.summary(bins=SBC_BINS)
    assert len(res.parameters) == 76


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "n_reported"),
    [("collections/measure", 2 + 1 + 2 * 4), ("collections/sd", 2 + 1 + 2 * 4),
     ("segments", 3 + 1 + 3 * 5)],
)  # fmt: skip
def test_calibration_and_coverage(case, n_reported):
    design, priors = _segments() if case == "segments" else _collections(case.split("/")[1])
    res = calibrate_design(
        design, priors, n_datasets=N_COVERAGE, seed=1, max_workers=2, draws=DRAWS
    )
    assert res.failures(alpha=SBC_ALPHA, bins=SBC_BINS_SLOW) == [], res.summary()
    coverage = _reported(res, design)
    assert len(coverage) == n_reported
    assert coverage.between(SBC_LEVEL - 0.03, SBC_LEVEL + 0.03).all(), coverage


@pytest.mark.slow
def test_calibration_of_the_bernoulli_model_across_collections():
    """Ranks uniform for every parameter and reported quantity of the Bernoulli model across
    collections (the score-scale contrasts, overall and per collection; NUTS on the PyMC
    twin, compiled once per worker: ``benchmarks/study_across_families.py`` runs more)."""
    design, priors = bernoulli_collections()
    family = get_family("bernoulli")
    res = calibrate_design(design, priors, n_datasets=80, seed=1, max_workers=2,
                           family=family, tune=300)  # fmt: skip
    assert res.failures(alpha=SBC_ALPHA, bins=SBC_BINS) == [], res.summary(bins=SBC_BINS)
    assert len(res.parameters) == len(design_parameter_names(design, family)) == 126
