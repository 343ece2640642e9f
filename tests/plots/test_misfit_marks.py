"""Every figure that shows a system marks the ones the model does not describe, and stays
readable at real sizes (250 topics, 110 systems); ``fit --figures`` simulates only what
it draws."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from bayes_ir import read_scores, simulate_scores  # noqa: E402
from bayes_ir.decision import decide  # noqa: E402
from bayes_ir.hierarchical import compare, fit, posterior_predictive  # noqa: E402
from bayes_ir.hierarchical.contrasts import rank_probabilities  # noqa: E402
from bayes_ir.plots._common import MISFIT_COLOR  # noqa: E402
from bayes_ir.plots.hierarchical import (  # noqa: E402
    MAX_TOPIC_LABELS,
    plot_system_topic_intervals,
    predictive_systems,
)
from bayes_ir.report.marks import MISFIT_MARK  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "example_scores.csv"

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="data/example_scores.csv missing")


@pytest.fixture(scope="module")
def fitted():
    """The example data twice: bm25 as champion, and chal_risky (which the Gaussian model
    does not describe: its residual SD is about twice the others') as champion."""
    table = read_scores(EXAMPLE)
    fits = {}
    for champion in ("bm25", "chal_risky"):
        others = [s for s in ("bm25", "chal_dense", "chal_fusion", "chal_risky") if s != champion]
        roles = table.with_roles(champion=champion, challengers=others)
        fits[champion] = fit(roles, chains=2, draws=1000, seed=5)
        flagged = set(fits[champion].model_check.flagged)  # (and a few artifact runs)
        assert flagged & {champion, *others} == {"chal_risky"}
    return fits


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _marked(labels) -> list[str]:
    """The texts of the tick labels that carry the mark, after checking they are red."""
    out = []
    for label in labels:
        if MISFIT_MARK in label.get_text():
            assert matplotlib.colors.same_color(label.get_color(), MISFIT_COLOR), label
            out.append(label.get_text())
    return out


def _legend(fig) -> str:
    return " ".join(t.get_text() for legend in fig.legends for t in legend.get_texts())


def test_contrasts_mark_a_misfitting_challenger(fitted):
    fig = compare(fitted["bm25"]).plot()
    assert _marked(fig.axes[0].get_yticklabels()) == [f"chal_risky - bm25 {MISFIT_MARK}"]
    assert "does not describe chal_risky" in " ".join(_legend(fig).split())


def test_a_misfitting_champion_marks_every_contrast_and_rank(fitted):
    fig = compare(fitted["chal_risky"]).plot()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels and all(label.endswith(MISFIT_MARK) for label in labels)
    assert "the champion chal_risky" in " ".join(_legend(fig).split())
    ranks = rank_probabilities(fitted["chal_risky"])
    fig = ranks.plot(misfit=fitted["chal_risky"].model_check.flagged)
    assert _marked(fig.axes[0].get_yticklabels()) == [f"chal_risky {MISFIT_MARK}"]
    assert "chal_risky" in _legend(fig)
    assert not rank_probabilities(fitted["bm25"]).plot().legends  # nothing flagged, no legend


def test_system_means_predictive_and_decision_mark_it(fitted):
    one = fitted["bm25"]
    fig = plot_system_topic_intervals(one)
    assert _marked(fig.axes[0].get_xticklabels()) == [f"chal_risky {MISFIT_MARK}"]
    assert "chal_risky" in _legend(fig)
    fig = posterior_predictive(one, seed=1, systems=predictive_systems(one)).plot()
    titles = {ax.get_title().split(" (")[0]: ax for ax in fig.axes if ax.get_visible()}
    assert f"chal_risky {MISFIT_MARK}" in titles and "bm25" in titles
    assert "chal_risky" in _legend(fig)
    fig = decide(one, topics=()).plot()
    assert _marked(fig.axes[0].get_yticklabels()) == [f"chal_risky {MISFIT_MARK}\n(unreliable)"]
    assert "chal_risky" in _legend(fig)


def test_fit_figures_simulate_only_the_systems_drawn(fitted, tmp_path, monkeypatch):
    """The predictive was simulated for every system of the fit (110 on Robust04)."""
    import bayes_ir.hierarchical.predictive as predictive
    from bayes_ir.cli.fit import write_figures

    asked = []

    def recorded(fit, **options):
        asked.append(options.get("systems"))
        return posterior_predictive(fit, **options)

    monkeypatch.setattr(predictive, "posterior_predictive", recorded)
    one = fitted["bm25"]
    write_figures(one, compare(one), tmp_path, ci_prob=0.95, seed=1)
    assert asked == [["bm25", "chal_dense", "chal_fusion", "chal_risky"]]  # not 45 systems


def test_predictive_panels_beyond_the_limit_keep_the_champion_and_the_worst(fitted):
    one = fitted["bm25"]
    frame = one.model_check.to_frame().set_index("system")
    chosen = predictive_systems(one, limit=3)
    assert chosen[0] == "bm25" and "chal_risky" in chosen and len(chosen) == 3
    rest = frame.loc[["chal_dense", "chal_fusion"], "coverage_95"]
    assert rest.idxmin() in chosen  # the one with fewer scores inside its interval


@pytest.mark.parametrize("n_topics", [50, 250])
def test_topic_names_never_pile_up(n_topics):
    table = simulate_scores(n_topics=n_topics, n_artifacts=3, seed=2).with_roles(
        champion="bm25", challengers=["chal_fusion"]
    )
    fig = plot_system_topic_intervals(fit(table, chains=2, draws=300, seed=1))
    topics = fig.axes[1]
    written = [t.get_text() for t in topics.get_xticklabels() if t.get_text()]
    assert len(topics.get_xticks()) == n_topics  # every topic keeps its tick
    if n_topics <= MAX_TOPIC_LABELS:
        assert len(written) == n_topics and "every" not in topics.get_xlabel()
    else:
        assert len(written) <= MAX_TOPIC_LABELS and "every 5th named" in topics.get_xlabel()
