"""Figures of the risk toolkit, drawn from result objects built without sampling."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

from bayes_ir.plots.risk import (  # noqa: E402
    plot_brisk,
    plot_brisk_forecast,
    plot_brisk_sweep,
    plot_one_to_one,
    plot_risk_review,
)
from bayes_ir.risk import BRiskForecast, BRiskResult, BRiskSweep, OneToOneResult  # noqa: E402
from bayes_ir.table import ScoreTable  # noqa: E402

RNG = np.random.default_rng(0)
SYSTEMS = ["champ", "c1", "c2", "art"]
ROLES = ["champion", "challenger", "challenger", "artifact"]


def one_to_one_result() -> OneToOneResult:
    levels = (1.0, 5.0)
    liks = ("gaussian", "skew_normal")
    shape = (2, 2, 2, 300)
    mu = RNG.normal(0.05, 0.02, shape) - np.array([0, 0.03])[None, :, None, None]
    alpha = RNG.normal(-3, 1, shape)
    alpha[0] = np.nan
    post = xr.Dataset(
        {
            v: (("likelihood", "r", "chain", "draw"), x)
            for v, x in (("mu", mu), ("sigma", np.abs(mu) + 0.1), ("alpha", alpha))
        },
        coords={"likelihood": list(liks), "r": list(levels)},
    )
    idx = pd.MultiIndex.from_tuples(
        [(lik, r, p) for lik in liks for r in levels for p in ("mu", "sigma", "alpha")],
        names=["likelihood", "r", "parameter"],
    )
    diag = pd.DataFrame(
        {"rhat": 1.0, "ess_bulk": 1000.0, "ess_tail": 1000.0, "passed": True}, index=idx
    )
    return OneToOneResult(
        champion="champ",
        challenger="c1",
        r_levels=levels,
        likelihoods=liks,
        differences=xr.DataArray(RNG.normal(size=(2, 10)), dims=("r", "topic")),
        posterior=post,
        diagnostics=diag,
    )


def brisk_result(r: float = 5.0, passed: bool = True) -> BRiskResult:
    effects = xr.DataArray(
        RNG.normal([0.0, 0.02, -0.03, 0.01], 0.01, (2, 200, 4)),
        dims=("chain", "draw", "system"),
        coords={"system": SYSTEMS, "role": ("system", ROLES)},
    )
    return BRiskResult(
        r=r, champion="champ", effects=effects, likelihood="gaussian", ci_prob=0.95,
        diagnostics_passed=passed, diagnostics_messages=(), collection="toy", measure="AP",
        seed=1,
    )  # fmt: skip


def test_one_to_one_figure():
    fig = plot_one_to_one(one_to_one_result())
    assert len(fig.axes) == 2
    assert [ax.get_title() for ax in fig.axes] == ["Gaussian likelihood", "skew-normal likelihood"]
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["r = 1", "r = 5"]


def test_brisk_figures():
    res = brisk_result()
    fig = plot_brisk(res)
    ax = fig.axes[0]
    # champion on top (highest y), artifacts left out by default
    assert [t.get_text() for t in ax.get_yticklabels()] == ["champ", "c1", "c2"]
    assert list(ax.get_yticks()) == [2, 1, 0]
    # each interval is drawn at its system's row, from ci_lower to ci_upper
    frame = res.to_frame().set_index("system")
    line = ax.lines[0]
    np.testing.assert_allclose(line.get_xdata(), frame.loc["champ", ["ci_lower", "ci_upper"]])
    assert list(line.get_ydata()) == [2, 2]
    assert "FAILED" in plot_brisk(brisk_result(passed=False)).axes[0].get_title()
    fig = plot_brisk_sweep(BRiskSweep(results=(brisk_result(1.0), brisk_result(5.0))))
    assert [ax.get_title() for ax in fig.axes] == ["r = 1", "r = 5"]


def test_forecast_figure():
    n = 12
    champ = RNG.uniform(0.1, 0.8, n)
    frame = pd.DataFrame(
        {
            "topic": [str(i) for i in range(n)],
            "system": "c1",
            "champion_score": champ,
            "adjusted_score": champ - 0.1,
            "mean": champ - 0.05,
            "ci_lower": champ - 0.4,
            "ci_upper": np.where(np.arange(n) < 3, champ - 0.01, champ + 0.2),
            "covered": True,
        }
    )
    fc = BRiskForecast("c1", "champ", 5.0, "skew_normal", 0.95, frame, True)
    fig = plot_brisk_forecast(fc)
    ax = fig.axes[0]
    assert len(ax.get_xticks()) == n
    # red bars are the topics whose whole interval lies below the champion
    colors = ax.collections[0].get_colors()
    n_red = sum(np.allclose(c[:3], matplotlib.colors.to_rgb("#c0392b")) for c in colors)
    assert n_red == 3


def test_review_figure():
    from bayes_ir.risk import risk_review

    rng = np.random.default_rng(1)
    table = ScoreTable.from_matrix(
        rng.uniform(0.1, 0.9, (10, 4)), systems=SYSTEMS, measure="AP"
    ).with_roles(champion="champ", challengers=["c1", "c2"])
    rv = risk_review(table, n_resamples=200, bayes=False)
    fig = plot_risk_review(rv)
    assert len(fig.axes) == 1
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["c1", "c2"]
    frame = rv.to_frame().set_index("system")
    np.testing.assert_allclose(
        fig.axes[0].lines[0].get_xdata(), frame.loc["c1", ["bca_lower_minus", "bca_upper_minus"]]
    )


@pytest.fixture(autouse=True)
def _close():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def test_review_figure_title_and_ticks():
    from bayes_ir.risk import risk_review

    rng = np.random.default_rng(2)
    table = ScoreTable.from_matrix(
        rng.uniform(0.1, 0.9, (10, 4)), systems=SYSTEMS, measure="AP"
    ).with_roles(champion="champ", challengers=["c1", "c2"])
    fig = plot_risk_review(risk_review(table, r=2, n_resamples=200, bayes=False))
    title = fig.get_suptitle()
    assert "'champ'" in title and "r = 2" in title and "higher = riskier" in title
    assert "95% intervals" in title
    assert len(fig.axes[0].get_xticks()) <= 7  # the labels were crowded (touching) at 9
