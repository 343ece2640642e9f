"""Fixtures for the decision outputs: a synthetic posterior with known draws, and one real fit.

The synthetic posterior (``synthetic_posterior.py``) follows the engine's contract, so every
contrast reported from it can be recomputed exactly with numpy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_posterior import SyntheticFit, synthetic_fit

from bayes_ir.table import ScoreTable

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"


@pytest.fixture(scope="session")
def synth() -> SyntheticFit:
    """A synthetic posterior (4 chains x 1000 independent draws) that passes every check."""
    return synthetic_fit()


@pytest.fixture(scope="session")
def example_table() -> ScoreTable:
    """The README's example data with roles (skips if the file has not been generated)."""
    if not EXAMPLE.exists():
        pytest.skip("data/example_scores.csv not generated yet")
    from bayes_ir.readers import read_scores

    return read_scores(EXAMPLE).with_roles(champion="bm25", challengers="chal_*")


@pytest.fixture(scope="session")
def example_fit(example_table):
    """One real Gaussian fit of the example data (exact sampler, 4 x 2000 draws)."""
    from bayes_ir.hierarchical import fit

    return fit(example_table, chains=4, draws=2000, seed=11)


@pytest.fixture(scope="session")
def rb04_table(shared_data):
    """The SIGIR 2020 rb04 file with the paper's roles (skips without ../shared/data)."""
    from bayes_ir.readers import read_scores

    path = shared_data / "bayesian_risk" / "rb04_data.csv"
    return read_scores(path, measure="AP").with_roles(champion="Champion", challengers="Chal.*")


@pytest.fixture(scope="session")
def rb04_fit(rb04_table):
    """One Gaussian fit of rb04 (exact collapsed sampler, 4 x 3000 draws: about 2 s)."""
    from bayes_ir.hierarchical import fit

    return fit(rb04_table, chains=4, draws=3000, seed=20200725)
