"""A synthetic posterior with known draws, for the decision-output tests.

The synthetic posterior follows the engine's contract (a DataTree whose ``posterior``
group holds ``b0``, ``topic_effect``, ``system_effect`` with a ``role`` coordinate,
``sigma``, ``sigma_topic``, ``sigma_system``): every contrast reported from it can be
recomputed exactly with numpy from the arrays kept in ``SyntheticFit.raw``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from bayes_ir.hierarchical.diagnostics import Thresholds
from bayes_ir.table import ScoreTable

SYSTEMS = ["bm25", "chal_a", "chal_b", "chal_c", "run1", "run2", "run3"]
ROLES = ["champion", "challenger", "challenger", "challenger", "artifact", "artifact", "artifact"]
TRUE_SYSTEM = np.array([0.0, 0.08, 0.005, -0.07, 0.01, -0.02, 0.02])


@dataclass(frozen=True)
class FakeDiagnostics:
    """The part of :class:`bayes_ir.hierarchical.Diagnostics` that results read."""

    passed: bool
    failure_messages: tuple[str, ...] = ()
    thresholds: Thresholds = field(default_factory=Thresholds)

    def failures(self) -> list[str]:
        return list(self.failure_messages)


@dataclass(frozen=True)
class SyntheticFit:
    """Stands in for ``HierarchicalFit``: the attributes the decision functions read."""

    posterior: xr.DataTree
    table: ScoreTable | None
    likelihood: str = "gaussian"
    diagnostics: Any = field(default_factory=lambda: FakeDiagnostics(True))
    raw: dict = field(default_factory=dict)


def make_posterior(
    raw: dict[str, np.ndarray], systems: list[str], topics: list[str], roles: list[str]
) -> xr.DataTree:
    """Build a DataTree with the engine's variable names from raw (chain, draw, ...) arrays."""
    n_chain, n_draw = raw["b0"].shape
    coords = {
        "chain": np.arange(n_chain),
        "draw": np.arange(n_draw),
        "system": systems,
        "topic": topics,
    }
    data = {
        "b0": (("chain", "draw"), raw["b0"]),
        "topic_effect": (("chain", "draw", "topic"), raw["topic"]),
        "system_effect": (("chain", "draw", "system"), raw["system"]),
        "sigma": (("chain", "draw"), raw["sigma"]),
        "sigma_topic": (("chain", "draw"), np.full((n_chain, n_draw), 0.15)),
        "sigma_system": (("chain", "draw"), np.full((n_chain, n_draw), 0.03)),
    }
    if "alpha" in raw:
        data["alpha"] = (("chain", "draw"), raw["alpha"])
    post = xr.Dataset(data, coords=coords).assign_coords(role=("system", roles))
    return xr.DataTree.from_dict({"posterior": post})


def synthetic_fit(
    *, n_chain: int = 4, n_draw: int = 1000, seed: int = 3, diagnostics: Any = None
) -> SyntheticFit:
    """Independent normal draws around known system effects (so contrasts are exact functionals)."""
    rng = np.random.default_rng(seed)
    n_topic = 20
    topics = [str(401 + i) for i in range(n_topic)]
    raw = {
        "b0": 0.3 + 0.01 * rng.standard_normal((n_chain, n_draw)),
        "topic": 0.15 * rng.standard_normal(n_topic)
        + 0.02 * rng.standard_normal((n_chain, n_draw, n_topic)),
        "system": TRUE_SYSTEM + 0.02 * rng.standard_normal((n_chain, n_draw, len(SYSTEMS))),
        "sigma": 0.08 + 0.002 * rng.standard_normal((n_chain, n_draw)),
    }
    tree = make_posterior(raw, SYSTEMS, topics, ROLES)
    scores = np.clip(
        0.3 + raw["topic"].mean(axis=(0, 1))[:, None] + TRUE_SYSTEM[None, :]
        + 0.08 * rng.standard_normal((n_topic, len(SYSTEMS))),
        0, 1,
    )  # fmt: skip
    table = ScoreTable.from_matrix(
        scores, systems=SYSTEMS, topics=topics, measure="AP", collection="synthetic"
    ).with_roles(champion="bm25", challengers="chal_*")
    return SyntheticFit(tree, table, diagnostics=diagnostics or FakeDiagnostics(True), raw=raw)


CALLS: list[tuple[tuple[str, ...], dict]] = []


def fake_fit(table, *, seed, chains=2, draws=500, **options):
    """Stand-in for ``bayes_ir.hierarchical.fit``: draws centred on the column means.

    The spread shrinks with the number of systems, so artifact sweeps narrow with m.
    Every call is recorded in :data:`CALLS` (systems fitted and options).
    """
    CALLS.append((tuple(table.systems), {"seed": seed, "draws": draws, **options}))
    wide = table.wide()
    rng = np.random.default_rng(seed)
    n_sys = wide.shape[1]
    centre = wide.mean().to_numpy() - wide.to_numpy().mean()
    scale = 0.05 / np.sqrt(n_sys)
    raw = {
        "b0": wide.to_numpy().mean() + 0.01 * rng.standard_normal((chains, draws)),
        "topic": np.zeros((chains, draws, wide.shape[0])),
        "system": centre + scale * rng.standard_normal((chains, draws, n_sys)),
        "sigma": np.full((chains, draws), 0.1),
    }
    roles = [table.roles.role_of(s) for s in wide.columns]
    tree = make_posterior(raw, list(wide.columns), list(wide.index), roles)
    return SyntheticFit(tree, table)
