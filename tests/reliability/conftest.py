from __future__ import annotations

import numpy as np
import pytest

from bayes_ir.readers import read_scores
from bayes_ir.table import ScoreTable


@pytest.fixture(scope="session")
def adhoc6(shared_data):
    """TREC-6 ad hoc AP, 50 topics x 74 runs (wide file, format auto-detected)."""
    return read_scores(shared_data / "trec_adhoc" / "adhoc6_ap.csv")


def make_table(n_topics: int, n_systems: int, *, seed: int = 0, gap: float = 0.1) -> ScoreTable:
    """A complete toy table in [0, 1]: system k is ``gap * k / (m - 1)`` worse than s0."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.3, 0.1, (n_topics, n_systems)) + np.linspace(gap, 0, n_systems)
    systems = [f"s{k}" for k in range(n_systems)]
    return ScoreTable.from_matrix(np.clip(x, 0, 1), systems=systems, collection="toy")


@pytest.fixture
def toy_table() -> ScoreTable:
    """15 topics x 6 systems, s0 best by design."""
    return make_table(15, 6)
