"""The vectorised tau^2 kernels: defining equations, and batch = one-by-one."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_ir.frequentist.meta_analysis.tau2 import _q_stat, _reml_parts, _tau2


@pytest.fixture(scope="module")
def batch():
    rng = np.random.default_rng(3)
    v = rng.uniform(0.001, 0.02, size=(200, 6))
    y = (
        0.1
        + rng.normal(0, 0.08, size=(200, 1)) * rng.uniform(0, 1, size=(200, 1))
        + rng.normal(0, np.sqrt(v) + rng.uniform(0, 0.1, size=(200, 6)))
    )
    return y, v


@pytest.mark.parametrize("method", ["DL", "REML", "PM"])
def test_batch_equals_one_by_one(batch, method):
    y, v = batch
    together = _tau2(y, v, method)
    alone = np.array([_tau2(y[i], v[i], method) for i in range(len(y))])
    np.testing.assert_allclose(together, alone, rtol=1e-9, atol=1e-14)
    assert np.all(together >= 0)


def test_pm_solves_its_estimating_equation(batch):
    y, v = batch
    tau2 = _tau2(y, v, "PM")
    q = _q_stat(y, v, tau2)
    pos = tau2 > 0
    np.testing.assert_allclose(q[pos], y.shape[1] - 1, rtol=1e-8)
    assert np.all(_q_stat(y[~pos], v[~pos]) <= y.shape[1] - 1 + 1e-9)


def test_reml_score_is_zero_inside(batch):
    y, v = batch
    tau2 = _tau2(y, v, "REML")
    ypppy, tr_p, _ = _reml_parts(y, v, tau2)
    pos = tau2 > 0
    np.testing.assert_allclose(ypppy[pos], tr_p[pos], rtol=1e-7)
    # at the boundary the restricted likelihood decreases into tau2 > 0
    assert np.all(ypppy[~pos] <= tr_p[~pos] * (1 + 1e-7))


def test_dl_formula_by_hand():
    y = np.array([0.1, 0.3, 0.2])
    v = np.array([0.01, 0.02, 0.015])
    w = 1 / v
    mu = (w * y).sum() / w.sum()
    q = (w * (y - mu) ** 2).sum()
    expected = (q - 2) / (w.sum() - (w**2).sum() / w.sum())
    assert _tau2(y, v, "DL") == pytest.approx(max(expected, 0.0))
    assert _tau2(y, v, "DL", clip=False) == pytest.approx(expected)


def test_unknown_method():
    with pytest.raises(ValueError, match="unknown tau"):
        _tau2(np.zeros(3), np.ones(3), "SJ")
