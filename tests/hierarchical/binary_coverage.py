"""Coverage of the accuracy difference of two systems scored 0/1 per item (known truth).

Two systems answer n items; item i has difficulty a_i ~ N(0, 1) on the logit scale and
system s answers it right with probability logit^-1(b + c_s + a_i), so its accuracy over the
population of items is m_s = E[logit^-1(b + c_s + a)]. For each cell (n items, accuracies)
the Bernoulli family's 95% interval of m_2 - m_1 is checked against the truth; the
normal-approximation interval of the paired differences (mean +- 1.96 SE), which
under-covers with few items and accuracies near 1 (Bowyer et al., ICML 2025), is measured on
the same tables for contrast.

The truth is computed by adaptive quadrature (scipy.integrate.quad). Used by
``families/test_binary_coverage.py`` (a few cells) and ``benchmarks/study_binary_coverage.py``
(the whole grid of :data:`results.families.BINARY_GRID`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from concurrent.futures import Executor
from functools import partial

import numpy as np
from scipy import integrate, optimize, special, stats

from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

ITEM_SD = 1.0
Cell = tuple[int, tuple[float, float]]


def _accuracy(eta: float, item_sd: float) -> float:
    return integrate.quad(
        lambda z: special.expit(eta + item_sd * z) * stats.norm.pdf(z), -np.inf, np.inf
    )[0]


def eta_for(accuracy: float, item_sd: float = ITEM_SD) -> float:
    """Logit-scale level whose accuracy over the item population N(0, item_sd^2) is ``accuracy``."""
    return optimize.brentq(lambda e: _accuracy(e, item_sd) - accuracy, -15, 15, xtol=1e-12)


def coverage_trial(
    seed: int, *, n_items: int, accuracies: tuple[float, float], pooling: str = "auto"
) -> tuple:
    """One table: whether the Bayesian and the normal interval cover the truth, and more.

    ``pooling`` is the fit's (``"auto"``, the default: here ``"none"``, unpooled; ``"all"``:
    the two system effects share ``sigma_system``).

    Returns (Bayesian interval covers, normal interval covers, Bayesian width, Bayesian
    interval entirely below the truth, posterior mean of the difference, observed mean
    difference).
    """
    from bayes_ir.hierarchical import compare, fit

    rng = np.random.default_rng(seed)
    eta = np.array([eta_for(a) for a in accuracies])
    truth = accuracies[1] - accuracies[0]
    a = rng.normal(0, ITEM_SD, (n_items, 1))
    y = (rng.random((n_items, 2)) < special.expit(eta[None, :] + a)).astype(float)
    table = ScoreTable.from_matrix(y, systems=["one", "two"], measure="accuracy")
    table = table.with_roles(champion="one", challengers=["two"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit(table, likelihood="bernoulli", chains=2, draws=1000, seed=seed,
                  model_check=False, pooling=pooling)  # fmt: skip
    row = compare(res).to_frame().iloc[0]
    d = y[:, 1] - y[:, 0]
    half = 1.959963984540054 * d.std(ddof=1) / np.sqrt(n_items)
    normal = abs(d.mean() - truth) <= half
    bayes = row["ci_lower"] <= truth <= row["ci_upper"]
    width = float(row["ci_upper"] - row["ci_lower"])
    below = bool(row["ci_upper"] < truth)
    return bool(bayes), bool(normal), width, below, float(row["mean"]), float(d.mean())


def coverage_study(
    grid: Sequence[Cell],
    trials: int,
    *,
    seed: int = 0,
    pooling: str = "auto",
    executor: Executor | None = None,
    max_workers: int | None = 1,
) -> dict[Cell, np.ndarray]:
    """Run :func:`coverage_trial` ``trials`` times per cell; one (trials, 6) array per cell.

    Cell k uses the seeds ``seed + 1000 k`` onwards, so a cell's tables do not depend on
    which other cells are run.
    """
    out = {}
    for n_items, accuracies in grid:
        k = _GRID_INDEX[(n_items, accuracies)]
        func = partial(coverage_trial, n_items=n_items, accuracies=accuracies, pooling=pooling)
        seeds = range(seed + 1000 * k, seed + 1000 * k + trials)
        rows = sweep(func, seeds, executor=executor, max_workers=max_workers)
        out[(n_items, accuracies)] = np.array(rows)
    return out


def _grid_index() -> dict[Cell, int]:
    from results.families import BINARY_GRID

    return {cell: k for k, cell in enumerate(BINARY_GRID)}


_GRID_INDEX = _grid_index()
