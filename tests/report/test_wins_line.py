"""The ``wins on k of n`` line: each probability is the sum of the distribution it names."""

from __future__ import annotations

import numpy as np

from bayes_ir.report.across import wins_line


def test_the_line_reads_its_numbers_off_the_distribution():
    p = np.array([0.1, 0.2, 0.3, 0.4])  # k = 0..3
    assert wins_line(p, 3, "collection") == (
        "wins on k of 3 collections: most likely k = 3 (P = 0.400); P(k >= 2) = 0.700; "
        f"E[k] = {0.2 + 0.6 + 1.2:.2f}"
    )
    q = np.array([0.5, 0.3, 0.2])
    assert wins_line(q, 2, "segment") == (
        "wins on k of 2 segments: most likely k = 0 (P = 0.500); P(k = 2) = 0.200; "
        "P(k >= 1) = 0.500; E[k] = 0.70"
    )


def test_one_group_is_said_once():
    """With one group compared, 'all' and 'at least half' are the same event: said once."""
    line = wins_line(np.array([0.734, 0.266]), 1, "collection")
    assert (
        line
        == "wins on k of 1 collection: most likely k = 0 (P = 0.734); P(k = 1) = 0.266; E[k] = 0.27"
    )
