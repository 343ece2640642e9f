"""Score tables of systems with several runs each, simulated from the model of runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import pytest

from bayes_ir.table import ScoreTable


def simulate_runs(
    n_topics: int,
    n_systems: int,
    n_runs: int,
    seed: int = 1,
    *,
    system: Sequence[float] | None = None,
    sd_run: float = 0.03,
    sd_topic_system: float = 0.05,
    sd: float = 0.05,
) -> tuple[ScoreTable, np.ndarray]:
    """Return a table of ``y = 0.4 + topic + system + topic x system + run + e`` and the truth.

    Champion ``s0``, challengers ``s1``.. ``s3``; ``system`` gives the true system
    effects (else drawn with SD 0.03).
    """
    rng = np.random.default_rng(seed)
    topic = rng.normal(0, 0.15, n_topics)
    beta = rng.normal(0, 0.03, n_systems) if system is None else np.asarray(system, float)
    ts = rng.normal(0, sd_topic_system, (n_topics, n_systems))
    run = rng.normal(0, sd_run, (n_systems, n_runs))
    e = rng.normal(0, sd, (n_topics, n_systems, n_runs))
    y = 0.4 + topic[:, None, None] + beta[None, :, None] + ts[:, :, None] + run[None] + e
    t, s, r = np.meshgrid(np.arange(n_topics), np.arange(n_systems), np.arange(n_runs),
                          indexing="ij")  # fmt: skip
    frame = pd.DataFrame(
        {
            "collection": "c",
            "measure": "AP",
            "system": [f"s{i}" for i in s.ravel()],
            "topic": [f"t{i}" for i in t.ravel()],
            "replicate": [f"r{i}" for i in r.ravel()],
            "score": y.ravel(),
        }
    )
    table = ScoreTable(data=frame, source="simulated runs")
    chals = [f"s{i}" for i in range(1, min(n_systems, 4))]
    return table.with_roles(champion="s0", challengers=chals), beta


@pytest.fixture(scope="session")
def runs_table() -> Callable[..., tuple[ScoreTable, np.ndarray]]:
    """The simulator of :func:`simulate_runs`."""
    return simulate_runs
