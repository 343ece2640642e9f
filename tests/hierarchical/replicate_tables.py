"""Tables of several runs per system simulated from the model of runs, with known truth.

y[t, s, r] = b0 + topic[t] + system[s] + (topic x system)[t, s] + run[s, r] + e (the model
of :func:`bayes_ir.hierarchical.fit_replicates`), the system effects given.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayes_ir.table import ScoreTable


def simulate_runs(
    n_topics: int,
    systems: Sequence[float],
    n_runs: int | Sequence[int],
    *,
    seed: int = 0,
    topic_sd: float = 0.15,
    interaction_sd: float = 0.04,
    run_sd: float | Sequence[float] = 0.03,
    residual_sd: float = 0.05,
    b0: float = 0.4,
) -> ScoreTable:
    """A tidy table with a ``seed`` column; the first system is the champion.

    ``systems`` are the true system effects; ``n_runs`` and ``run_sd`` are one value for
    all systems or one per system.
    """
    rng = np.random.default_rng(seed)
    n_s = len(systems)
    runs = np.broadcast_to(np.asarray(n_runs), (n_s,))
    kappa = np.broadcast_to(np.asarray(run_sd, dtype=float), (n_s,))
    topic = rng.normal(0, topic_sd, n_topics)
    inter = rng.normal(0, interaction_sd, (n_topics, n_s))
    rows = []
    for s in range(n_s):
        rho = rng.normal(0, kappa[s], runs[s])
        for r in range(runs[s]):
            y = b0 + topic + systems[s] + inter[:, s] + rho[r]
            y = y + rng.normal(0, residual_sd, n_topics)
            rows += [(f"sys{s}", f"q{t}", f"seed{r}", y[t]) for t in range(n_topics)]
    frame = pd.DataFrame(rows, columns=["system", "topic", "seed", "score"])
    table = ScoreTable.from_frame(frame, measure="AP", check_range=False)
    return table.with_roles(champion="sys0", challengers=[f"sys{s}" for s in range(1, n_s)])
