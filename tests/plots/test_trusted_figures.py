"""Figures a reviewer would trust: checked on the artists each figure draws.

Every figure names its measure and collection, keeps a bounded measure's axis inside
its range, writes probabilities beyond three decimals as >0.999 / <0.001, starts bars at
0, orders the pairwise map by the posterior means, draws BRisk's reference at the
champion, labels the Tukey plot with multcomp's letters, and draws on the axes it is
given, returning their figure.
"""

from __future__ import annotations

import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402
from results import letters as cld_ref  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hierarchical"))
from synthetic_posterior import (  # noqa: E402
    SYSTEMS,
    SyntheticFit,
    fake_fit,
    make_posterior,
    synthetic_fit,
)

import bayes_ir  # noqa: E402
from bayes_ir.frequentist import effect_size, meta_analysis  # noqa: E402
from bayes_ir.frequentist.glm import compare_links, fit_glm, tukey_hsd  # noqa: E402
from bayes_ir.hierarchical import (  # noqa: E402
    compare,
    pairwise_probabilities,
    posterior_predictive,
    rank_probabilities,
)
from bayes_ir.plots import adequacy, decision, diagnostics, forest, glm, hierarchical  # noqa: E402
from bayes_ir.plots import reliability as rel_plots  # noqa: E402
from bayes_ir.plots import risk as risk_plots  # noqa: E402
from bayes_ir.reliability import (  # noqa: E402
    bootstrap_interval,
    expected_correlation,
    simulation_study,
)
from bayes_ir.risk import BRiskForecast, BRiskResult, BRiskSweep, OneToOneResult  # noqa: E402
from bayes_ir.table import ScoreTable  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def fit():
    return synthetic_fit(n_draw=400)


@pytest.fixture(scope="module")
def example_fit():
    table = bayes_ir.read_scores(ROOT / "data" / "example_scores.csv").with_roles(
        champion="bm25", challengers="chal_*"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bayes_ir.fit(table, draws=500, chains=2, seed=1)


def far_apart_fit() -> SyntheticFit:
    """Challenger far above the champion: every draw agrees, P(better) is a share of 1."""
    rng = np.random.default_rng(5)
    systems, roles = ["champ", "far", "near"], ["champion", "challenger", "challenger"]
    raw = {
        "b0": 0.3 + 0.001 * rng.standard_normal((2, 300)),
        "topic": 0.01 * rng.standard_normal((2, 300, 4)),
        "system": np.array([0.0, 0.3, 0.01]) + 0.01 * rng.standard_normal((2, 300, 3)),
        "sigma": np.full((2, 300), 0.1),
    }
    tree = make_posterior(raw, systems, ["1", "2", "3", "4"], roles)
    table = ScoreTable.from_matrix(
        rng.uniform(0, 1, (4, 3)), systems=systems, topics=["1", "2", "3", "4"],
        measure="nDCG@10", collection="far",
    ).with_roles(champion="champ", challengers=["far", "near"])  # fmt: skip
    return SyntheticFit(tree, table, raw=raw)


def brisk_result(champion_effect: float = -0.03) -> BRiskResult:
    rng = np.random.default_rng(0)
    effects = xr.DataArray(
        rng.normal([champion_effect, 0.02, -0.05, 0.01], 0.01, (2, 200, 4)),
        dims=("chain", "draw", "system"),
        coords={
            "system": ["champ", "c1", "c2", "art"],
            "role": ("system", ["champion", "challenger", "challenger", "artifact"]),
        },
    )
    return BRiskResult(
        r=2.0, champion="champ", effects=effects, likelihood="gaussian", ci_prob=0.95,
        diagnostics_passed=True, diagnostics_messages=(), collection="robust04",
        measure="AP", seed=1,
    )  # fmt: skip


def cld_table() -> ScoreTable:
    return ScoreTable.from_matrix(
        np.asarray(cld_ref.SCORES), systems=cld_ref.SYSTEMS, topics=cld_ref.TOPICS,
        measure="AP", collection="sim",
    )  # fmt: skip


# ---------------------------------------------------------------- measure and collection
def _words(fig) -> str:
    parts = [fig.get_suptitle() if fig._suptitle else ""]
    for ax in fig.axes:
        parts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        parts += [t.get_text() for t in ax.texts]
    return " | ".join(parts)


def test_every_figure_names_measure_and_collection(fit, example_fit):
    figures = {
        "system means": hierarchical.plot_system_topic_intervals(fit),
        "contrasts": compare(fit).plot(),
        "pairwise": pairwise_probabilities(fit).plot(),
        "ranks": rank_probabilities(fit).plot(),
        "predictive": posterior_predictive(fit, seed=1).plot(),
        "trace": example_fit.plot_trace(),
        "model check": example_fit.model_check.plot(),
        "decision": bayes_ir.decide(example_fit, margin=0.01, topics=(10,), seed=1).plot(),
        "brisk": brisk_result().plot(),
        "tukey": tukey_hsd(fit_glm(cld_table(), link="identity")).plot(),
        "glm fit": fit_glm(cld_table(), link="logit").plot(),
    }
    expected = {"decision": ("AP", "example"), "trace": ("AP", "example"),
                "model check": ("AP", "example"), "brisk": ("AP", "robust04"),
                "tukey": ("AP", "sim"), "glm fit": ("AP", "sim")}  # fmt: skip
    for name, fig in figures.items():
        measure, collection = expected.get(name, ("AP", "synthetic"))
        words = _words(fig)
        assert measure in words and collection in words, (name, words)
    # the measure is on an axis, not only in a title
    assert "AP" in figures["system means"].axes[0].get_ylabel()
    assert "AP" in figures["contrasts"].axes[0].get_xlabel()
    assert "AP" in figures["brisk"].axes[0].get_xlabel()
    assert "AP" in figures["tukey"].axes[0].get_xlabel()


def test_forest_axis_names_the_score_measure():
    rng = np.random.default_rng(2)
    frames = []
    for coll in ("c1", "c2", "c3"):
        base = rng.uniform(0.2, 0.6, 30)
        frames.append(
            pd.DataFrame(
                {
                    "collection": coll,
                    "measure": "nDCG@10",
                    "topic": range(30),
                    "bm25": base,
                    "dense": base + rng.normal(0.03, 0.02, 30),
                }
            )
        )
    long = pd.concat(frames).melt(
        id_vars=["collection", "measure", "topic"], var_name="system", value_name="score"
    )
    long["topic"] = long["topic"].astype(str)
    table = ScoreTable.from_frame(long)
    eff = effect_size(table, control="bm25", treatment="dense", score_measure="nDCG@10")
    fig = forest.forest_plot(meta_analysis(eff, method="REML"))
    assert fig.axes[0].get_xlabel() == "Mean difference in nDCG@10"


# ---------------------------------------------------------------- bounded measures
def test_predictive_band_never_leaves_the_unit_interval(fit):
    pred = posterior_predictive(fit, ci_prob=0.99, seed=1)
    assert (pred.frame["ci_lower"] < 0).any()  # the model puts mass below 0 ...
    fig = pred.plot()
    for ax in (a for a in fig.axes if a.get_visible()):
        low, high = ax.get_ylim()
        assert low >= 0.0 and high <= 1.0  # ... the figure does not
        for coll in ax.collections:
            if hasattr(coll, "get_segments"):
                for seg in coll.get_segments():
                    assert seg[:, 1].min() >= 0.0 and seg[:, 1].max() <= 1.0
    assert "cut at the range [0, 1]" in fig.get_suptitle()


# ---------------------------------------------------------------- probabilities
def test_certain_probabilities_read_as_beyond_three_decimals():
    far = far_apart_fit()
    res = compare(far)
    assert res.to_frame().set_index("challenger").loc["far", "p_better"] == 1.0
    texts = [t.get_text() for t in res.plot().axes[0].texts]
    assert "P(>0) >0.999" in texts
    assert not any("1.00" in t for t in texts)
    cells = [t.get_text() for t in pairwise_probabilities(far).plot().axes[0].texts]
    assert ">0.999" in cells and "<0.001" in cells
    assert not any(c in ("1.00", "0.00", "1.000", "0.000") for c in cells)


# ---------------------------------------------------------------- bars start at 0
def test_link_bars_start_at_zero(fit):
    comparison = compare_links(cld_table(), links=["identity", "logit"])
    fig = comparison.plot()
    for ax in fig.axes:
        assert ax.get_ylim()[0] == 0.0
        assert all(bar.get_y() == 0.0 for bar in ax.patches)


# ---------------------------------------------------------------- ordering
def test_pairwise_heatmap_is_ordered_by_the_posterior_means(fit):
    res = pairwise_probabilities(fit, systems=list(fit.table.systems))
    fig = res.plot()
    ax = fig.axes[0]
    means = fit.raw["system"].mean(axis=(0, 1))  # independent: the raw draws, SYSTEMS order
    expected = [SYSTEMS[i] for i in np.argsort(-means)]
    assert [t.get_text() for t in ax.get_yticklabels()] == expected
    assert [t.get_text() for t in ax.get_xticklabels()] == expected
    shown = np.ma.filled(ax.images[0].get_array(), np.nan)
    np.testing.assert_array_equal(shown, res.matrix.loc[expected, expected].to_numpy())


def test_rank_heatmap_rows_are_ordered_by_expected_rank(fit):
    res = rank_probabilities(fit, systems=list(SYSTEMS))
    ax = res.plot().axes[0]
    draws = fit.raw["system"].reshape(-1, len(SYSTEMS))  # independent: ranks of the raw draws
    ranks = (-draws).argsort(axis=1).argsort(axis=1) + 1
    expected = [SYSTEMS[i] for i in np.argsort(ranks.mean(axis=0), kind="stable")]
    assert [t.get_text() for t in ax.get_yticklabels()] == expected


# ---------------------------------------------------------------- BRisk reference
def test_brisk_reference_line_is_the_champions_brisk():
    res = brisk_result(champion_effect=-0.03)
    champion_level = -float(res.effects.sel(system="champ").to_numpy().mean())
    assert champion_level > 0.02  # far from 0: a line at 0 would be visibly wrong
    for fig in (res.plot(), BRiskSweep(results=(res,)).plot()):
        ax = fig.axes[0]
        refs = [ln for ln in ax.lines if ln.get_label().startswith("champion")]
        assert len(refs) == 1
        np.testing.assert_allclose(refs[0].get_xdata(), [champion_level] * 2)
        vertical = [ln for ln in ax.lines if np.ptp(ln.get_xdata()) == 0 and len(ln.get_xdata())]
        assert not any(np.allclose(ln.get_xdata(), 0.0) for ln in vertical)


# ---------------------------------------------------------------- Tukey letters
def test_tukey_plot_labels_systems_with_multcomps_letters():
    fig = tukey_hsd(fit_glm(cld_table(), link="identity")).plot()
    ax = fig.axes[0]
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert names == list(cld_ref.R_LETTERS)  # best first, as R's levels
    letters = [t.get_text() for t in ax.texts if t.get_text() != "groups"]
    assert [s.replace(" ", "") for s in letters] == list(cld_ref.R_LETTERS.values())
    assert "sharing a letter" in ax.get_title()


# ---------------------------------------------------------------- trace plots
def test_trace_plot_rows_are_few_and_labelled(example_fit):
    fig = example_fit.plot_trace(var_names=["system_effect"])
    rows = [ax for ax in fig.axes if ax.get_ylabel()]
    assert len(rows) == diagnostics.MAX_ROWS
    assert rows[0].get_ylabel().startswith("system_effect[") and "R-hat" in rows[0].get_ylabel()
    assert "6 of 45" in fig.get_suptitle()
    left = fig.axes[0]
    assert len(left.lines) == 2  # one line per chain
    assert len(left.lines[0].get_xdata()) <= diagnostics.TRACE_POINTS + 1  # thinned
    chosen = example_fit.plot_trace(var_names=["system_effect"], coords={"system": ["bm25"]})
    assert chosen.axes[0].get_ylabel().startswith("system_effect[bm25]")


# ---------------------------------------------------------------- ax= everywhere
def _one_to_one() -> OneToOneResult:
    rng = np.random.default_rng(0)
    shape = (2, 2, 2, 100)
    mu = rng.normal(0.05, 0.02, shape)
    alpha = rng.normal(-3, 1, shape)
    post = xr.Dataset(
        {v: (("likelihood", "r", "chain", "draw"), x)
         for v, x in (("mu", mu), ("sigma", np.abs(mu) + 0.1), ("alpha", alpha))},
        coords={"likelihood": ["gaussian", "skew_normal"], "r": [1.0, 5.0]},
    )  # fmt: skip
    idx = pd.MultiIndex.from_tuples(
        [(lik, r, p) for lik in ("gaussian", "skew_normal") for r in (1.0, 5.0)
         for p in ("mu", "sigma", "alpha")], names=["likelihood", "r", "parameter"],
    )  # fmt: skip
    diag = pd.DataFrame({"rhat": 1.0, "ess_bulk": 1e3, "ess_tail": 1e3, "passed": True}, idx)
    return OneToOneResult(
        champion="champ", challenger="c1", r_levels=(1.0, 5.0),
        likelihoods=("gaussian", "skew_normal"),
        differences=xr.DataArray(rng.normal(size=(2, 10)), dims=("r", "topic")),
        posterior=post, diagnostics=diag, measure="AP", collection="toy",
    )  # fmt: skip


def _forecast() -> BRiskForecast:
    champ = np.linspace(0.1, 0.8, 8)
    frame = pd.DataFrame({"topic": [str(i) for i in range(8)], "system": "c1",
                          "champion_score": champ, "adjusted_score": champ - 0.1,
                          "mean": champ - 0.05, "ci_lower": champ - 0.3,
                          "ci_upper": champ + 0.2, "covered": True})  # fmt: skip
    return BRiskForecast("c1", "champ", 2.0, "gaussian", 0.95, frame, True, "toy", "AP")


def _reliability_table() -> ScoreTable:
    rng = np.random.default_rng(3)
    scores = np.clip(rng.uniform(0.1, 0.6, (15, 1)) + np.linspace(0.1, 0, 6)
                     + rng.normal(0, 0.05, (15, 6)), 0, 1)  # fmt: skip
    return ScoreTable.from_matrix(scores, systems=[f"s{i}" for i in range(6)],
                                  measure="AP", collection="toy")  # fmt: skip


def _artifact_sweep(monkeypatch):
    import bayes_ir.hierarchical as hier
    from bayes_ir.hierarchical.artifact_sweep import artifact_sweep

    monkeypatch.setattr(hier, "fit", fake_fit)
    return artifact_sweep(synthetic_fit().table, m_values=(0, 1), max_workers=1, draws=200)


def _meta():
    rng = np.random.default_rng(4)
    rows = []
    for coll in ("a", "b"):
        base = rng.uniform(0.1, 0.7, 20)
        new = base + rng.normal(0.02, 0.03, 20)
        rows += [(coll, "AP", s, str(i), v) for i in range(20)
                 for s, v in (("bm25", base[i]), ("dense", new[i]))]  # fmt: skip
    table = ScoreTable.from_frame(
        pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    )
    return meta_analysis(effect_size(table, control="bm25", treatment="dense"), method="REML")


#: name -> (number of axes (rows, cols) it draws on, keyword, call(axes, fixtures)).
CASES = {
    "plot_model_check": ((1, 1), "ax", lambda a, f: adequacy.plot_model_check(
        f["ex"].model_check, ax=a)),
    "plot_decision": ((1, 2), "axes", lambda a, f: decision.plot_decision(
        bayes_ir.decide(f["ex"], margin=0.01, topics=(10,), seed=1), axes=a)),
    "plot_trace": ((5, 2), "axes", lambda a, f: diagnostics.plot_trace(f["ex"], axes=a)),
    "plot_rank": ((5, 1), "axes", lambda a, f: diagnostics.plot_rank(f["ex"], axes=a)),
    "forest_plot": ((1, 1), "ax", lambda a, f: forest.forest_plot(_meta(), ax=a)),
    "plot_glm_fit": ((1, 1), "ax", lambda a, f: glm.plot_glm_fit(
        fit_glm(cld_table(), link="logit"), ax=a)),
    "plot_tukey": ((1, 1), "ax", lambda a, f: glm.plot_tukey(
        tukey_hsd(fit_glm(cld_table(), link="identity")), ax=a)),
    "plot_links": ((1, 2), "axes", lambda a, f: glm.plot_links(
        compare_links(cld_table(), links=["identity", "logit"]), axes=a)),
    "plot_system_topic_intervals": ((2, 1), "axes", lambda a, f:
        hierarchical.plot_system_topic_intervals(f["fit"], axes=a)),
    "plot_predictive": ((2, 2), "axes", lambda a, f: hierarchical.plot_predictive(
        posterior_predictive(f["fit"], seed=1), axes=a)),
    "plot_artifact_sweep": ((1, 2), "axes", lambda a, f: hierarchical.plot_artifact_sweep(
        f["sweep"], axes=a)),
    "plot_contrasts": ((1, 1), "ax", lambda a, f: hierarchical.plot_contrasts(
        compare(f["fit"]), ax=a)),
    "plot_pairwise": ((1, 1), "ax", lambda a, f: hierarchical.plot_pairwise(
        pairwise_probabilities(f["fit"]), ax=a)),
    "plot_ranks": ((1, 1), "ax", lambda a, f: hierarchical.plot_ranks(
        rank_probabilities(f["fit"]), ax=a)),
    "plot_study": ((2, 2), "axes", lambda a, f: rel_plots.plot_study(
        simulation_study(_reliability_table(), sizes=(5,), trials=2,
                                              estimators=["ML"],
                                              executor=ThreadPoolExecutor(1)), axes=a)),
    "plot_swaps": ((1, 1), "ax", lambda a, f: rel_plots.plot_swaps(
        expected_correlation(_reliability_table(), estimator="ML"),
        ax=a)),
    "plot_interval": ((1, 2), "axes", lambda a, f: rel_plots.plot_interval(
        bootstrap_interval(_reliability_table(), n_boot=50, seed=1),
        axes=a)),
    "plot_one_to_one": ((1, 2), "axes", lambda a, f: risk_plots.plot_one_to_one(
        _one_to_one(), axes=a)),
    "plot_brisk": ((1, 1), "ax", lambda a, f: risk_plots.plot_brisk(brisk_result(), ax=a)),
    "plot_brisk_sweep": ((1, 2), "axes", lambda a, f: risk_plots.plot_brisk_sweep(
        BRiskSweep(results=(brisk_result(), brisk_result(-0.01))), axes=a)),
    "plot_brisk_forecast": ((1, 1), "ax", lambda a, f: risk_plots.plot_brisk_forecast(
        _forecast(), ax=a)),
    "plot_risk_review": ((1, 1), "axes", lambda a, f: risk_plots.plot_risk_review(
        bayes_ir.risk.risk_review(
            _reliability_table().with_roles(champion="s0", challengers=["s1", "s2"]),
            n_resamples=100, bayes=False), axes=a)),
}  # fmt: skip


def test_the_cases_cover_every_public_plot_function():
    public = {
        name
        for module in (adequacy, decision, diagnostics, forest, glm, hierarchical, rel_plots,
                       risk_plots)
        for name in module.__all__ if name.startswith(("plot_", "forest_plot"))
    }  # fmt: skip
    assert public == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_plot_function_draws_on_the_given_axes(name, fit, example_fit, monkeypatch):
    shape, _, call = CASES[name]
    fixtures = {"fit": fit, "ex": example_fit}
    if name == "plot_artifact_sweep":
        fixtures["sweep"] = _artifact_sweep(monkeypatch)
    given, axes = plt.subplots(*shape, squeeze=False)
    target = axes[0, 0] if shape == (1, 1) and name != "plot_risk_review" else axes
    if name == "plot_risk_review":
        target = axes[0]
    returned = call(target, fixtures)
    assert returned is given
    drawn = [ax for ax in np.ravel(axes) if ax.has_data() or ax.images or ax.texts]
    assert drawn, "nothing was drawn on the given axes"
