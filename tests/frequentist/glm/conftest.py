"""Fixtures of the GLM tests: the R reference table of tests/results/glm.py."""

from __future__ import annotations

import numpy as np
import pytest
from results import glm as ref

from bayes_ir.table import ScoreTable


@pytest.fixture(scope="session")
def ref_table() -> ScoreTable:
    """20 topics x 10 systems with one score at 0 and one at 1 (see tests/results/glm.py)."""
    return ScoreTable.from_matrix(
        np.array(ref.SCORES),
        systems=ref.SYSTEMS,
        topics=ref.TOPICS,
        measure="AP",
        collection="example",
    )
