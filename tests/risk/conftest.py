"""Fixtures of the risk tests: small synthetic tables and the real rb04 table."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_ir.table import ScoreTable


def make_table(n_topics: int = 30, seed: int = 3) -> ScoreTable:
    """Champion ``base``, challengers ``good`` (better), ``risky`` (better on average,
    big losses on a few topics), ``same``; two artifacts. Scores in [0, 1]."""
    rng = np.random.default_rng(seed)
    topic = rng.uniform(0.15, 0.7, size=n_topics)
    base = np.clip(topic + rng.normal(0, 0.03, n_topics), 0.01, 1)
    good = np.clip(base + 0.06 + rng.normal(0, 0.03, n_topics), 0, 1)
    risky = np.clip(base + 0.09 + rng.normal(0, 0.02, n_topics), 0, 1)
    losers = rng.choice(n_topics, size=max(2, n_topics // 8), replace=False)
    risky[losers] = np.clip(base[losers] - 0.25, 0, 1)
    same = np.clip(base + rng.normal(0, 0.04, n_topics), 0, 1)
    art1 = np.clip(topic - 0.05 + rng.normal(0, 0.05, n_topics), 0, 1)
    art2 = np.clip(topic + 0.02 + rng.normal(0, 0.05, n_topics), 0, 1)
    table = ScoreTable.from_matrix(
        np.column_stack([base, good, risky, same, art1, art2]),
        systems=["base", "good", "risky", "same", "run1", "run2"],
        topics=[f"q{i:02d}" for i in range(n_topics)],
        measure="AP",
        collection="toy",
    )
    return table.with_roles(champion="base", challengers=["good", "risky", "same"])


@pytest.fixture(scope="session")
def toy() -> ScoreTable:
    """A 30-topic synthetic table with roles (see :func:`make_table`)."""
    return make_table()


@pytest.fixture(scope="session")
def rb04(shared_data):
    """rb04 AP scores with the paper's roles (skips without the shared data)."""
    from bayes_ir.readers import read_scores

    path = shared_data / "bayesian_risk" / "rb04_data.csv"
    return read_scores(path, measure="AP").with_roles(champion="Champion", challengers="Chal.*")
