"""Coverage of the Bernoulli family's interval of an accuracy difference (known truth).

The requirement (issue 28): at least 94% of 95% intervals cover the truth for 50-200 items and
accuracies 0.5-0.95. The slow test states it as a strict expected failure: the model with
pooled system effects does not meet it yet, and the test fails as soon as it does, so that the
mark is removed.

The study (:mod:`binary_coverage`) is run here on the cells where the normal approximation
is worst (50 items, accuracies near 1) and on one central cell; the whole grid of
:data:`results.families.BINARY_GRID` is ``benchmarks/study_binary_coverage.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from binary_coverage import coverage_study, coverage_trial
from results.families import BINARY_CHECK_CELLS, BINARY_CHECK_MIN, BINARY_CHECK_TRIALS


def test_one_trial():
    bayes, normal, width, below, estimate, observed = coverage_trial(
        3, n_items=50, accuracies=(0.9, 0.95)
    )
    assert isinstance(bayes, bool) and isinstance(normal, bool) and 0 < width < 0.5
    assert not (bayes and below)  # an interval below the truth does not cover it
    assert -0.2 < estimate < 0.2 and -0.2 < observed < 0.2


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="known defect (issue 28): with two systems and no artifact runs, the zero-sum system "
    "effects share sigma_system with one degree of freedom, which pulls a real 0.05-0.1 "
    "difference towards 0 where the items are few (50 items, 0.7/0.8, 200 tables: mean "
    "estimate 0.075, truth 0.100, observed 0.108; 8% of intervals miss low, 1.5% high; 90.5% "
    "cover, benchmarks/study_binary_coverage.py); a near-flat prior on sigma_system does not "
    "remove the pull: unpooled (fixed) system effects, not yet available, are the remedy",
)
def test_the_accuracy_difference_interval_covers_the_truth():
    cells = coverage_study(BINARY_CHECK_CELLS, BINARY_CHECK_TRIALS)
    results = np.concatenate(list(cells.values()))
    assert results[:, 0].mean() >= BINARY_CHECK_MIN, {
        k: (v[:, 0].mean(), v[:, 1].mean()) for k, v in cells.items()
    }
