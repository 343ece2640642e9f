"""Figures 3, 4, 5 and the contrast plots draw the numbers of the result objects."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hierarchical"))
from synthetic_posterior import fake_fit, synthetic_fit  # noqa: E402

from bayes_ir.hierarchical.contrasts import (  # noqa: E402
    compare,
    many_vs_one,
    pairwise_probabilities,
    rank_probabilities,
)
from bayes_ir.hierarchical.predictive import posterior_predictive  # noqa: E402
from bayes_ir.plots.hierarchical import (  # noqa: E402
    plot_artifact_sweep,
    plot_predictive,
    plot_system_topic_intervals,
)


@pytest.fixture(scope="module")
def fit():
    return synthetic_fit(n_draw=400)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _segments(ax):
    """(lower, upper) of every vertical or horizontal interval drawn with vlines/hlines."""
    out = []
    for coll in ax.collections:
        if hasattr(coll, "get_segments"):
            for seg in coll.get_segments():
                out.append(tuple(sorted(seg[:, 1] if seg[0, 0] == seg[1, 0] else seg[:, 0])))
    return out


def test_figure4_draws_the_system_and_topic_intervals(fit, tmp_path):
    fig = plot_system_topic_intervals(fit, ci_prob=0.9)
    top, bottom = fig.axes[:2]
    means = (fit.raw["b0"][..., None] + fit.raw["system"]).reshape(-1, 7)
    expected = sorted(
        zip(np.quantile(means, 0.05, axis=0), np.quantile(means, 0.95, axis=0), strict=True)
    )
    assert np.allclose(sorted(_segments(top)), expected)
    assert len(_segments(bottom)) == fit.raw["topic"].shape[-1]
    fig.savefig(tmp_path / "fig4.png")
    assert (tmp_path / "fig4.png").stat().st_size > 10_000


def test_figure3_marks_observed_scores(fit, tmp_path):
    pred = posterior_predictive(fit, ci_prob=0.9, seed=1)
    fig = plot_predictive(pred)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 4  # champion + 3 challengers
    assert "bm25" in visible[0].get_title()
    assert len(_segments(visible[0])) == 20
    with pytest.raises(ValueError):
        plot_predictive(pred, systems=["nope"])
    fig.savefig(tmp_path / "fig3.png")


def test_contrast_forest_pairwise_and_ranks(fit, tmp_path):
    res = compare(fit, min_gain=0.01)
    fig = res.plot()
    ax = fig.axes[0]
    frame = res.to_frame()
    assert np.allclose(
        sorted(_segments(ax)), sorted(zip(frame["ci_lower"], frame["ci_upper"], strict=True))
    )
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        f"{c} - bm25" for c in frame["challenger"]
    ]
    fig.savefig(tmp_path / "forest.png")
    many = many_vs_one(fit, challenger="chal_a", champions=["bm25", "run1"]).plot()
    assert len(_segments(many.axes[0])) == 2
    heat = pairwise_probabilities(fit).plot()
    assert heat.axes[0].images[0].get_array().shape == (4, 4)
    ranks = rank_probabilities(fit).plot()
    assert ranks.axes[0].images[0].get_array().shape == (4, 4)
    heat.savefig(tmp_path / "pairwise.png")


def test_figure5_draws_each_m(monkeypatch, tmp_path):
    import bayes_ir.hierarchical as hier
    from bayes_ir.hierarchical.artifact_sweep import artifact_sweep

    monkeypatch.setattr(hier, "fit", fake_fit)
    table = synthetic_fit().table
    sweep = artifact_sweep(table, m_values=(0, 1, 3), max_workers=1, draws=300)
    fig = plot_artifact_sweep(sweep)
    left, right = fig.axes[:2]
    systems = sweep.system_frame()
    assert np.allclose(
        sorted(_segments(left)), sorted(zip(systems["ci_lower"], systems["ci_upper"], strict=True))
    )
    diffs = sweep.to_frame()
    assert np.allclose(
        sorted(_segments(right)), sorted(zip(diffs["ci_lower"], diffs["ci_upper"], strict=True))
    )
    assert [t.get_text() for t in right.get_xticklabels()] == ["0", "1", "3"]
    fig.savefig(tmp_path / "fig5.png")
    # the paper's parametrisation: rstanarm's deviations from the intercept on the left
    paper = plot_artifact_sweep(sweep, effects="intercept_deviation")
    dev = sweep.system_frame(effects="intercept_deviation")
    assert np.allclose(
        sorted(_segments(paper.axes[0])), sorted(zip(dev["ci_lower"], dev["ci_upper"], strict=True))
    )
    assert "deviation from the intercept" in paper.axes[0].get_ylabel()
    assert sorted(_segments(paper.axes[1])) == sorted(_segments(right))
    assert sweep.plot(effects="zero_sum").axes[0].get_ylabel() == "system effect (zero-sum), AP"


def test_role_legend_never_covers_an_interval():
    """With loc="best" the legend sat on the top of the best system's interval (rb04, Chal. 4).

    matplotlib's "best" weighs the points, not the interval bars: here the best system's
    point lies low and its interval reaches high, as for Chal. 4 on rb04.
    """
    from synthetic_posterior import SyntheticFit, make_posterior

    rng = np.random.default_rng(0)
    n_sys = 30
    systems = ["bm25", "chal_top", *(f"run{i:02d}" for i in range(n_sys - 2))]
    roles = ["champion", "challenger", *(["artifact"] * (n_sys - 2))]
    centre = np.concatenate([[0.0, 0.06], np.linspace(-0.02, 0.03, n_sys - 2)])
    spread = np.full(n_sys, 0.006)
    spread[1] = 0.03  # a wide interval for the best system
    raw = {
        "b0": 0.3 + 0.001 * rng.standard_normal((2, 400)),
        "topic": 0.01 * rng.standard_normal((2, 400, 5)),
        "system": centre + spread * rng.standard_normal((2, 400, n_sys)),
        "sigma": np.full((2, 400), 0.1),
    }
    tree = make_posterior(raw, systems, [str(t) for t in range(5)], roles)
    fig = plot_system_topic_intervals(SyntheticFit(tree, None))
    top = fig.axes[0]
    fig.canvas.draw()
    box = top.get_legend().get_window_extent()
    for coll in top.collections:
        if hasattr(coll, "get_segments"):
            for seg in coll.get_segments():
                for x, y in top.transData.transform(seg):
                    assert not box.contains(x, y), (x, y, box)


def test_titles_say_what_is_shown(fit, monkeypatch):
    contrast = compare(fit).plot()
    assert contrast.axes[0].get_title() == (
        "Difference of system means, challenger - champion\nAP on synthetic"
    )
    ranks = rank_probabilities(fit).plot()
    ax = ranks.axes[0]
    assert "probability of each rank" in ax.get_title()
    assert all(t.get_rotation() == 0 for t in ax.get_xticklabels())  # ranks 1..k stay upright
    heat = pairwise_probabilities(fit).plot()
    assert all(t.get_rotation() == 45 for t in heat.axes[0].get_xticklabels())  # names slant

    import bayes_ir.hierarchical as hier
    from bayes_ir.hierarchical.artifact_sweep import artifact_sweep

    monkeypatch.setattr(hier, "fit", fake_fit)
    sweep = artifact_sweep(synthetic_fit().table, m_values=(0, 1), max_workers=1, draws=300)
    # the fake fits' draws are independent normals: every refit passes its diagnostics
    assert sweep.diagnostics_passed
    assert plot_artifact_sweep(sweep).get_suptitle() == (
        "Artifact sweep: the model refitted with the m best artifact runs (AP on synthetic)"
    )
    failed_gate = replace(sweep.points[1].gate, passed=False, messages=("R-hat above 1.01",))
    failed = replace(
        sweep,
        points=(sweep.points[0], replace(sweep.points[1], gate=failed_gate)),
        gate=replace(sweep.gate, passed=False),
    )
    assert plot_artifact_sweep(failed).get_suptitle() == (
        "WARNING: the refits with m = 1 FAILED their diagnostics (AP on synthetic)"
    )
