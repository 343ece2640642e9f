"""Coverage of the accuracy difference of two systems scored 0/1 per item (known truth).

Two systems answer n items; item i has difficulty a_i ~ N(0, 1) on the logit scale and
system s answers it right with probability logit^-1(b + c_s + a_i), so its accuracy over the
population of items is m_s = E[logit^-1(b + c_s + a)]. For n = 50, 100 and 200 items and
accuracies from 0.5 to 0.95 the Bernoulli family's 95% interval of m_2 - m_1 must cover the
truth in at least 94% of the simulated tables. The normal-approximation interval of the
paired differences (mean +- 1.96 SE), which under-covers with few items and accuracies near
1 (Bowyer et al., ICML 2025), is measured on the same tables for contrast.

Reference: the truth, computed by adaptive quadrature (scipy.integrate.quad).
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest
from results.families import BINARY_COVERAGE_MIN, BINARY_GRID, BINARY_TRIALS_PER_CELL
from scipy import integrate, optimize, special, stats

from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

ITEM_SD = 1.0


def _accuracy(eta: float) -> float:
    return integrate.quad(
        lambda z: special.expit(eta + ITEM_SD * z) * stats.norm.pdf(z), -np.inf, np.inf
    )[0]


def _eta_for(accuracy: float) -> float:
    return optimize.brentq(lambda e: _accuracy(e) - accuracy, -15, 15, xtol=1e-12)


def coverage_trial(seed: int, *, n_items: int, accuracies: tuple[float, float]) -> tuple:
    """One table: (Bayesian interval covers, normal interval covers, Bayesian width)."""
    from bayes_ir.hierarchical import compare, fit

    rng = np.random.default_rng(seed)
    eta = np.array([_eta_for(a) for a in accuracies])
    truth = accuracies[1] - accuracies[0]
    a = rng.normal(0, ITEM_SD, (n_items, 1))
    y = (rng.random((n_items, 2)) < special.expit(eta[None, :] + a)).astype(float)
    table = ScoreTable.from_matrix(y, systems=["one", "two"], measure="accuracy")
    table = table.with_roles(champion="one", challengers=["two"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit(table, likelihood="bernoulli", chains=2, draws=1000, seed=seed,
                  model_check=False)  # fmt: skip
    ci = compare(res).conf_int(0.95).iloc[0]
    d = y[:, 1] - y[:, 0]
    half = 1.959963984540054 * d.std(ddof=1) / np.sqrt(n_items)
    normal = abs(d.mean() - truth) <= half
    bayes = ci["ci_lower"] <= truth <= ci["ci_upper"]
    return bool(bayes), bool(normal), float(ci["ci_upper"] - ci["ci_lower"])


def coverage_study(seed: int = 0, trials: int = BINARY_TRIALS_PER_CELL) -> dict:
    """Run :func:`coverage_trial` over :data:`BINARY_GRID`; return coverage per cell."""
    out = {}
    for k, (n_items, accuracies) in enumerate(BINARY_GRID):
        func = partial(coverage_trial, n_items=n_items, accuracies=accuracies)
        seeds = range(seed + 1000 * k, seed + 1000 * k + trials)
        # in this process: the trial function lives in a test module the workers cannot import
        out[(n_items, accuracies)] = np.array(sweep(func, seeds, max_workers=1))
    return out


def test_one_trial():
    bayes, normal, width = coverage_trial(3, n_items=50, accuracies=(0.9, 0.95))
    assert isinstance(bayes, bool) and isinstance(normal, bool) and 0 < width < 0.5


@pytest.mark.slow
def test_the_accuracy_difference_interval_covers_the_truth():
    cells = coverage_study()
    results = np.concatenate(list(cells.values()))
    assert results[:, 0].mean() >= BINARY_COVERAGE_MIN, {
        k: (v[:, 0].mean(), v[:, 1].mean()) for k, v in cells.items()
    }
