"""Simulated leaderboards with known truth, for the leaderboard's tests and benchmarks.

``board(n_systems, n_topics, seed)`` draws the crossed Gaussian model the fit assumes,
``y[t, s] = theta[s] + a[t] + e[t, s]``, with system means ``theta`` spread like a TREC
track's runs (SD 0.02 about 0.3), topic effects SD 0.15 and residual SD 0.1; ``tiers=``
instead puts the systems in tiers of equal means separated by clear gaps. The true rank of
a system is its place in ``theta`` (1 = highest).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayes_ir.table import ScoreTable

SYSTEM_SD = 0.02
TOPIC_SD = 0.15
RESIDUAL_SD = 0.10


def names(n: int) -> list[str]:
    """System names ``sys000``, ``sys001``, ..."""
    return [f"sys{i:03d}" for i in range(n)]


def table_of(y: np.ndarray, systems: list[str]) -> ScoreTable:
    """A table without roles from a topic x system matrix (any real scores)."""
    n_t = y.shape[0]
    frame = pd.DataFrame(
        {
            "system": np.repeat(systems, n_t),
            "topic": np.tile([f"t{j:03d}" for j in range(n_t)], len(systems)),
            "score": y.T.ravel(),
        }
    )
    return ScoreTable.from_frame(frame, measure="score", collection="sim", check_range=False)


def board(
    n_systems: int,
    n_topics: int,
    seed: int,
    *,
    tiers: list[float] | None = None,
) -> tuple[ScoreTable, pd.Series]:
    """Return a simulated table (no roles) and the true system means, by system."""
    rng = np.random.default_rng(seed)
    if tiers is None:
        theta = 0.3 + rng.normal(0.0, SYSTEM_SD, n_systems)
    else:
        theta = np.asarray(tiers, dtype=float)[np.arange(n_systems) * len(tiers) // n_systems]
        theta = rng.permutation(theta)
    a = rng.normal(0.0, TOPIC_SD, n_topics)
    y = theta[None, :] + a[:, None] + rng.normal(0.0, RESIDUAL_SD, (n_topics, n_systems))
    systems = names(n_systems)
    return table_of(y, systems), pd.Series(theta, index=systems, name="theta")


def true_ranks(theta: pd.Series) -> pd.Series:
    """Rank of each system by its true mean (1 = highest)."""
    return theta.rank(ascending=False, method="first").astype(int)
