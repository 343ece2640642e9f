"""Coverage of the Bernoulli family's interval of an accuracy difference (known truth).

The requirement (issue 28): at least 94% of 95% intervals cover the truth for 50-200 items and
accuracies 0.5-0.95. With two systems and no artifact run the default fit leaves the system
effects unpooled (``pooling="auto"``); pooled, their shared ``sigma_system`` (one degree of
freedom) pulled a real difference 30-40% of the way to 0 and the intervals missed on the low
side.

The study (:mod:`binary_coverage`) is run here on the cells where the pull was worst; the
whole grid of :data:`results.families.BINARY_GRID` is ``benchmarks/study_binary_coverage.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from binary_coverage import coverage_study, coverage_trial
from results.families import (
    BINARY_CHECK_CELLS,
    BINARY_CHECK_GAP,
    BINARY_CHECK_PULL,
    BINARY_CHECK_TRIALS,
)


def test_one_trial():
    bayes, normal, width, below, estimate, observed = coverage_trial(
        3, n_items=50, accuracies=(0.9, 0.95)
    )
    assert isinstance(bayes, bool) and isinstance(normal, bool) and 0 < width < 0.5
    assert not (bayes and below)  # an interval below the truth does not cover it
    assert -0.2 < estimate < 0.2 and -0.2 < observed < 0.2


@pytest.mark.slow
def test_the_accuracy_difference_interval_covers_the_truth():
    """On the same tables, the model's interval covers as the normal approximation does.

    180 tables are too few to test 94% itself: their Monte Carlo error (the first 60 tables
    of 50 items at 0.7/0.8 cover 85% for both intervals, 1,000 cover 95.2% and 95.0%) is
    larger than the gap to find. Both intervals are computed on each table, so their
    difference in coverage is free of that luck: pooled, the model covered 2-9 points less
    than the normal approximation in these cells; here it may be at most
    ``BINARY_CHECK_GAP`` below. The absolute coverage is measured by the study.
    """
    cells = coverage_study(BINARY_CHECK_CELLS, BINARY_CHECK_TRIALS)
    results = np.concatenate(list(cells.values()))
    report = {k: (v[:, 0].mean(), v[:, 1].mean(), v[:, 4].mean(), v[:, 5].mean())
              for k, v in cells.items()}  # fmt: skip
    assert results[:, 0].mean() >= results[:, 1].mean() - BINARY_CHECK_GAP, report
    for cell, rows in cells.items():  # no pull towards 0: estimates follow the observed
        assert rows[:, 4].mean() >= BINARY_CHECK_PULL * rows[:, 5].mean(), (cell, report)
