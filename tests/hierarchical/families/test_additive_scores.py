"""Scores that are exactly topic + system leave the continuous models no posterior: one error.

References: numpy's least squares (``lstsq`` on the one-hot design) for the additive fit's
residuals; the closed form of a complete matrix (row and column means); and, for the
error, the likelihood itself: with a residual sum of squares of 0 it grows without bound
as the residual SD goes to 0 (the exact sampler's rejection step then never ended).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import ScoreTableError
from bayes_ir.hierarchical import fit
from bayes_ir.hierarchical.families import get_family
from bayes_ir.hierarchical.families.gaussian import (
    additive_residuals,
    residual_df,
)
from bayes_ir.hierarchical.model import design_of
from bayes_ir.table import ScoreTable


def _one_hot(observed: np.ndarray) -> np.ndarray:
    t, s = np.nonzero(observed)
    x = np.zeros((t.size, sum(observed.shape)))
    x[np.arange(t.size), t] = 1.0
    x[np.arange(t.size), observed.shape[0] + s] = 1.0
    return x


def _least_squares(y: np.ndarray) -> np.ndarray:
    ok = np.isfinite(y)
    x = _one_hot(ok)
    beta = np.linalg.lstsq(x, y[ok], rcond=None)[0]
    out = np.zeros(y.shape)
    out[ok] = y[ok] - x @ beta
    return out


@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_the_residuals_are_those_of_least_squares(missing):
    rng = np.random.default_rng(4)
    y = rng.normal(0.4, 0.2, (25, 7))
    y[rng.uniform(size=y.shape) < missing] = np.nan
    got = additive_residuals(y)
    np.testing.assert_allclose(got, _least_squares(y), atol=1e-10 if missing else 1e-14)
    if not missing:  # the closed form
        want = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0) + y.mean()
        np.testing.assert_allclose(got, want, atol=1e-14)


def _table(y: np.ndarray) -> ScoreTable:
    names = [f"s{j}" for j in range(y.shape[1])]
    table = ScoreTable.from_matrix(y, systems=names, measure="AP", missing="keep")
    return table.with_roles(champion="s0", challengers="s1")


def _additive(n_t: int, n_s: int, missing: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(2)
    y = rng.uniform(0.1, 0.6, (n_t, 1)) + np.linspace(0.0, 0.2, n_s)
    gaps = rng.uniform(size=y.shape) < missing
    gaps[:, 0] = False  # every topic keeps its champion's score
    y[gaps] = np.nan
    return y


@pytest.mark.parametrize(
    ("y", "likelihood", "method"),
    [
        (_additive(20, 2), "gaussian", "auto"),  # the exact sampler (it never ended)
        (_additive(30, 5, 0.2), "gaussian", "auto"),  # Gibbs (a singular matrix)
        (_additive(20, 3), "gaussian", "nuts"),
        (_additive(20, 3), "skew_normal", "auto"),
    ],
)
def test_exactly_additive_scores_end_in_one_error(y, likelihood, method):
    gap = float(np.nanmean(y[:, 1] - y[:, 0]))
    with pytest.raises(ScoreTableError, match="every score is exactly a topic effect") as info:
        fit(_table(y), likelihood=likelihood, method=method, seed=1)
    if np.isfinite(y).all():  # (with gaps: the two systems with the most topics in common)
        assert f"'s1' minus 's0' is {gap:+.4g} on every topic both have" in str(info.value)


def test_scores_close_to_additive_are_data():
    """Differences of 1e-6 over scores of 0.1-0.8 are far above the rounding tolerance."""
    y = _additive(20, 3) + np.random.default_rng(5).normal(0.0, 1e-6, (20, 3))
    get_family("gaussian").check_scores(design_of(_table(y)))


@pytest.mark.parametrize("seed", range(6))
def test_the_residual_df_is_the_cells_less_the_rank_of_the_design(seed):
    rng = np.random.default_rng(seed)
    observed = rng.uniform(size=(7, 5)) < rng.uniform(0.15, 0.9)
    want = observed.sum() - np.linalg.matrix_rank(_one_hot(observed)) if observed.any() else 0
    assert residual_df(observed) == want


def test_cells_with_nothing_left_over_keep_the_prior(monkeypatch):
    """Each topic scored by one system, but one: the fit leaves no cell over by construction
    (0 residual df), and the residual SD has its prior, not an unbounded likelihood."""
    from bayes_ir.hierarchical.families import gaussian

    y = np.array([[0.2, 0.3], [0.5, np.nan], [np.nan, 0.1], [0.7, np.nan]])
    assert residual_df(np.isfinite(y)) == 0
    monkeypatch.setattr(gaussian, "exactly_additive", lambda y: True)  # as it is, exactly
    get_family("gaussian").check_scores(design_of(_table(y)))
    y[1, 1] = 0.4  # a cycle: 1 residual df, and the same scores would have no posterior
    with pytest.raises(ScoreTableError, match="every score is exactly"):
        get_family("gaussian").check_scores(design_of(_table(y)))


def _two_collections(x_additive: bool, y_additive: bool) -> ScoreTable:
    rng = np.random.default_rng(8)
    rows = []
    for name, additive in (("X", x_additive), ("Y", y_additive)):
        for t in range(12):
            a = float(rng.uniform(0.1, 0.7))
            b = a + 0.02 if additive else float(rng.uniform(0.1, 0.7))
            rows += [(name, f"{name}{t}", "a", a), (name, f"{name}{t}", "b", b)]
    frame = pd.DataFrame(rows, columns=["collection", "topic", "system", "score"])
    return ScoreTable.from_frame(frame).with_roles(champion="a", challengers=["b"])


def test_across_collections_each_residual_sd_needs_its_collection_to_vary():
    from bayes_ir.hierarchical import fit_across

    match = r"\(X\): every score is exactly a topic effect"
    with pytest.raises(ScoreTableError, match=match):
        fit_across(_two_collections(True, False), seed=1)  # one residual SD per collection
    with pytest.raises(ScoreTableError, match=match):
        fit_across(_two_collections(True, True), sigma="pooled", seed=1)
    pooled = fit_across(_two_collections(True, False), sigma="pooled", seed=1, draws=500)
    assert "b - a" in set(pooled.diagnostics.table["parameter"])  # Y's residuals: the SD's data
