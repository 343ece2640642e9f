"""The vectorised diagnostics equal ArviZ's (arviz_stats) within 1e-8, quantity by quantity.

ArviZ is the reference: ``arviz_stats.base.array_stats`` computes R-hat, ESS and MCSE one
quantity at a time; :func:`draw_diagnostics` reimplements the same algorithm for all at
once. Checked on the draws of every kind of fit the package makes (exact, Gibbs, NUTS,
skew-normal kernel) and on the cases that take other branches: chains that disagree or
stick, a random walk (Geyer's sequence past the direct lags: the FFT), constant
quantities, ties, binary draws, NaN, odd draw counts, one chain, too few draws.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bayes_ir.hierarchical import diagnostics as diag_module
from bayes_ir.hierarchical.diagnostics import draw_diagnostics
from bayes_ir.hierarchical.diagnostics_kernel import DIRECT_LAGS
from bayes_ir.table import ScoreTable

QUANTILES = (0.5, 0.05, 0.975)


def arviz_reference(x: np.ndarray) -> pd.DataFrame:
    """ArviZ's statistics of each quantity of ``x`` (chain, draw, K)."""
    from arviz_stats.base import array_stats as azs

    xa = np.moveaxis(x, -1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = {
            "rhat": azs.rhat(xa),
            "ess_bulk": azs.ess(xa, method="bulk"),
            "ess_tail": azs.ess(xa, method="tail", prob=0.05),
            "ess_mean": azs.ess(xa, method="mean"),
            "mcse_mean": azs.mcse(xa, method="mean"),
            "mcse_sd": azs.mcse(xa, method="sd"),
            **{f"mcse_q{q:g}": azs.mcse(xa, method="quantile", prob=q) for q in QUANTILES},
        }
    return pd.DataFrame({k: np.asarray(v, dtype=float) for k, v in ref.items()})


def assert_equal_to_arviz(x: np.ndarray) -> pd.DataFrame:
    """Compare every column; NaN and infinity must sit where ArviZ has them."""
    ours = draw_diagnostics(x, quantiles=QUANTILES).reset_index(drop=True)
    ref = arviz_reference(x)
    for column in ref:
        np.testing.assert_allclose(
            ours[column].to_numpy(), ref[column].to_numpy(), rtol=1e-8, atol=0, err_msg=column
        )
    flat = x.reshape(-1, x.shape[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(ours["mean"], flat.mean(axis=0), rtol=1e-10)
        np.testing.assert_allclose(ours["sd"], flat.std(axis=0, ddof=1), rtol=1e-10)
    return ours


def _posterior_columns(f) -> np.ndarray:
    post = f.draws
    parts = [post[n].values[..., None] for n in ("b0", "sigma", "sigma_topic", "sigma_system")]
    parts.append(post["system_effect"].transpose("chain", "draw", "system").values)
    parts.append(f.contrast_draws().transpose("chain", "draw", "challenger").values)
    return np.concatenate([np.asarray(p, dtype=float) for p in parts], axis=-1)


def _table(n_t: int, n_s: int, seed: int, missing: float = 0.0) -> ScoreTable:
    rng = np.random.default_rng(seed)
    y = 0.4 + rng.normal(0, 0.15, (n_t, 1)) + rng.normal(0, 0.03, (1, n_s))
    y = y + rng.normal(0, 0.08, (n_t, n_s))
    if missing:
        y[rng.uniform(size=y.shape) < missing] = np.nan
        y[:, :2] = np.where(np.isnan(y[:, :2]), 0.4, y[:, :2])
    names = ["champ", "chal_a", "chal_b"] + [f"run{i}" for i in range(n_s - 3)]
    t = ScoreTable.from_matrix(y, systems=names, measure="sim", missing="keep")
    return t.with_roles(champion="champ", challengers="chal_*")


@pytest.mark.parametrize(
    ("method", "likelihood", "missing"),
    [("exact", "gaussian", 0.0), ("gibbs", "gaussian", 0.1), ("nuts", "gaussian", 0.1)],
)
def test_fits_of_each_sampler(method, likelihood, missing):
    from bayes_ir.hierarchical import fit

    table = _table(12, 8, seed=3, missing=missing)
    options = {"tune": 300, "sampler": "pymc"} if method == "nuts" else {}
    f = fit(table, method=method, likelihood=likelihood, draws=500, seed=5,
            model_check=False, **options)  # fmt: skip
    assert_equal_to_arviz(_posterior_columns(f))
    # and the gate reads the same numbers
    table_ = f.diagnostics.table
    ours = draw_diagnostics(_posterior_columns(f))
    np.testing.assert_allclose(table_["ess_bulk"], ours["ess_bulk"], rtol=1e-12)


def test_skew_normal_kernel_fit():
    from bayes_ir.hierarchical import fit

    f = fit(_table(10, 6, seed=4), likelihood="skew_normal", draws=300, tune=200, seed=2,
            model_check=False)  # fmt: skip
    x = np.concatenate(
        [_posterior_columns(f), np.asarray(f.draws["alpha"].values, dtype=float)[..., None]],
        axis=-1,
    )
    assert_equal_to_arviz(x)


def test_failing_chains_constants_ties_and_nan():
    rng = np.random.default_rng(1)
    n_chain, n_draw = 4, 1001  # odd: the middle draw is left out of the split
    x = rng.standard_normal((n_chain, n_draw, 14))
    x[..., 1] = np.cumsum(rng.standard_normal((n_chain, n_draw)), axis=1)  # random walk
    x[..., 2] = 3.0  # constant quantity
    x[..., 3] = np.round(x[..., 3], 1)  # many ties
    x[0, 5, 4] = np.nan  # one NaN draw
    x[..., 5] += np.arange(n_chain)[:, None] * 3  # chains that disagree
    x[..., 6] = x[..., 6].astype(np.float32)  # float32 precision: ties among 4000 draws
    x[..., 7] = rng.uniform(size=(n_chain, n_draw)) < 0.03  # binary
    x[0, :, 8] = 2.0  # one chain stuck at a value
    x[..., 9] = 0.0
    x[1:, :, 9] = rng.standard_normal((n_chain - 1, n_draw))
    x[:, :, 10] = np.arange(n_chain)[:, None]  # every chain stuck, each elsewhere
    y = np.zeros((n_chain, n_draw))
    for t in range(1, n_draw):  # AR(1) with 0.9: a long Geyer sequence, direct lags
        y[:, t] = 0.9 * y[:, t - 1] + rng.standard_normal(n_chain)
    x[..., 11] = y
    x[..., 12] = np.inf
    x[1:, :, 12] = 1.0
    x[..., 13] = rng.exponential(size=(n_chain, n_draw)) ** 3  # heavy right tail
    ours = assert_equal_to_arviz(x)
    assert np.isnan(ours.at[2, "rhat"]) and ours.at[2, "ess_bulk"] == 4 * 1000  # constant
    assert ours.loc[4].drop(["mean", "sd"]).isna().all()  # a NaN draw
    assert ours.at[5, "rhat"] > 1.5 and ours.at[10, "rhat"] == np.inf


def test_draws_that_differ_only_in_their_last_bits():
    """The sort keys drop each draw's lowest bits (they hold its position): draws that
    agree on the other bits are put in order by their values, ties among them kept."""
    rng = np.random.default_rng(5)
    n_chain, n_draw = 4, 1000
    ulps = rng.integers(0, 64, size=(n_chain, n_draw, 2))
    # tied values (one decimal, signs, exact zeros) a few ulps apart
    x = np.round(rng.standard_normal((n_chain, n_draw, 2)), 1) * (1 + ulps * 2.0**-52)
    assert_equal_to_arviz(x)
    # every draw within 4,000 ulps of 1: one run of equal keys to sort (the mean and SD
    # of such draws carry rounding errors near their spread, so only ranks are compared)
    near_one = 1 + rng.integers(0, 4000, size=(n_chain, n_draw, 1)) * 2.0**-52
    ours, ref = draw_diagnostics(near_one), arviz_reference(near_one)
    for column in ("rhat", "ess_bulk", "ess_tail"):
        np.testing.assert_allclose(ours[column], ref[column], rtol=1e-8, err_msg=column)


def test_the_fft_fallback_and_the_direct_lags_agree(monkeypatch):
    """A sequence longer than the direct lags goes to the FFT; forcing it changes nothing."""
    rng = np.random.default_rng(2)
    y = np.cumsum(rng.standard_normal((4, 2000, 3)), axis=1)
    y[..., 2] = rng.standard_normal((4, 2000))
    direct = draw_diagnostics(y)
    assert_equal_to_arviz(y)
    from bayes_ir.hierarchical import diagnostics_kernel as kernel

    calls = []
    original = kernel.geyer_ess

    def spy(*args):
        calls.append(args[1])
        return original(*args)

    monkeypatch.setattr(kernel, "geyer_ess", spy)
    draw_diagnostics(y)
    assert calls and min(calls) == 1000 > DIRECT_LAGS  # the FFT path ran, on all lags
    pd.testing.assert_frame_equal(direct, draw_diagnostics(y))


@pytest.mark.parametrize(("n_chain", "n_draw"), [(1, 400), (2, 5), (3, 3), (4, 4)])
def test_one_chain_and_few_draws(n_chain, n_draw):
    x = np.random.default_rng(n_draw).standard_normal((n_chain, n_draw, 3))
    ours = assert_equal_to_arviz(x)
    if n_chain == 1:
        assert ours["rhat"].isna().all() and (ours["ess_bulk"] > 0).all()
    if n_draw < 4:
        assert ours[["rhat", "ess_bulk", "ess_tail", "mcse_mean"]].isna().all().all()


def test_blocks_and_threads_change_nothing(monkeypatch):
    x = np.random.default_rng(3).standard_normal((4, 300, 25))
    whole = draw_diagnostics(x)
    monkeypatch.setattr(diag_module, "DIAGNOSE_BLOCK", 4 * 300 * 3)  # 9 blocks of 3
    monkeypatch.setattr(diag_module, "DIAGNOSE_THREADS", 2)
    pd.testing.assert_frame_equal(whole, draw_diagnostics(x))


def test_labels_of_a_data_array():
    import xarray as xr

    da = xr.DataArray(
        np.random.default_rng(0).standard_normal((2, 100, 2, 3)),
        dims=("chain", "draw", "a", "b"),
        coords={"a": ["x", "y"], "b": [1, 2, 3]},
    )
    ours = draw_diagnostics(da)
    assert list(ours.index) == ["x,1", "x,2", "x,3", "y,1", "y,2", "y,3"]
    np.testing.assert_allclose(
        ours["ess_bulk"], draw_diagnostics(da.values.reshape(2, 100, 6))["ess_bulk"]
    )


def test_bfmi_equals_arviz():
    import arviz_stats as azs

    energy = np.random.default_rng(0).standard_normal((4, 500)).cumsum(axis=1)
    np.testing.assert_allclose(diag_module._bfmi(energy), azs.bfmi(energy), rtol=1e-12)


@pytest.mark.parametrize("prob", [0.95, 0.5, 0.89])
def test_hdi_equals_arviz(prob):
    import arviz_stats as azs

    from bayes_ir.hierarchical.intervals import hdi_bounds

    rng = np.random.default_rng(4)
    flat = np.concatenate([rng.gamma(2, size=(3, 4001)), np.round(rng.normal(size=(2, 4001)), 2)])
    ref = np.stack([np.asarray(azs.hdi(row, prob=prob)) for row in flat])
    np.testing.assert_array_equal(hdi_bounds(flat, prob), ref)
    ordered = np.sort(flat, axis=1)
    np.testing.assert_array_equal(hdi_bounds(ordered, prob, sorted_rows=True), ref)


@pytest.mark.parametrize("block", [10**9, 3 * 4 * 50])
def test_interval_frame_equals_numpy_and_arviz_in_blocks_on_threads(block, monkeypatch):
    """The summary's intervals, one block or many (on threads), equal numpy and ArviZ."""
    import importlib

    import arviz_stats as azs

    fit_module = importlib.import_module("bayes_ir.hierarchical.fit")
    monkeypatch.setattr(fit_module, "_INTERVAL_BLOCK", block)
    x = np.random.default_rng(7).gamma(2.0, size=(4, 50, 9)).astype(np.float32)
    frame = fit_module._interval_frame(x, 0.9)
    flat = x.reshape(-1, 9).astype(float).T
    np.testing.assert_allclose(frame["mean"], flat.mean(axis=1), rtol=1e-14)
    np.testing.assert_allclose(frame["sd"], flat.std(axis=1, ddof=1), rtol=1e-13)
    eti = np.quantile(flat, [(1 - 0.9) / 2, 1 - (1 - 0.9) / 2], axis=1)
    np.testing.assert_array_equal(frame[["eti_lower", "eti_upper"]].to_numpy().T, eti)
    hdi = np.stack([np.asarray(azs.hdi(row, prob=0.9)) for row in flat])
    np.testing.assert_array_equal(frame[["hdi_lower", "hdi_upper"]].to_numpy(), hdi)
