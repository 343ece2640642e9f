"""fit_across and its contrasts: each reported number recomputed from the draws with numpy/scipy."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayes_ir.errors import BayesIRError, OptionError, UnknownSystemError
from bayes_ir.hierarchical.across import AcrossFit, fit_across
from bayes_ir.hierarchical.group_effects import ACROSS_COLUMNS
from bayes_ir.table import ScoreTable

matplotlib.use("Agg")


def _table(seed=1, *, drop=None):
    rng = np.random.default_rng(seed)
    rows = []
    beta = {"s0": 0.0, "s1": 0.04, "s2": -0.02}
    for c, n_t in enumerate((12, 20, 16, 9)):
        gamma = rng.normal(0, 0.02, 3)
        for t in range(n_t):
            a = rng.normal(0, 0.1)
            for k, s in enumerate(beta):
                if drop == (f"c{c}", s):
                    continue
                y = 0.4 + a + beta[s] + gamma[k] + rng.normal(0, 0.08)
                rows.append((f"c{c}", "nDCG@10", s, f"q{t}", float(np.clip(y, 0, 1))))
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    table = ScoreTable.from_frame(frame, missing="keep")
    return table.with_roles(champion="s0", challengers=["s1", "s2"])


@pytest.fixture(scope="module")
def across() -> AcrossFit:
    return fit_across(_table(), draws=1500, tune=100, seed=3)


def test_the_fit_holds_labelled_draws_and_passes_its_gate(across):
    post = across.draws
    assert across.method == "gibbs" and across.diagnostics.passed
    assert post["b0"].dims == ("chain", "draw", "collection")
    assert list(post["collection"].values) == ["c0", "c1", "c2", "c3"]
    assert post["sigma_topic"].dims == ("chain", "draw", "collection")
    assert post["sigma_system"].dims == ("chain", "draw")
    assert post["system_collection_effect"].sizes["system_collection"] == 12
    kinds = set(across.diagnostics.table["kind"])
    assert kinds == {"hyper", "system", "contrast", "group_contrast"}
    assert "s1 - s0[c2]" in set(across.diagnostics.table["parameter"])
    assert across.provenance["scale"] == "measure" and across.provenance["by"] == "collection"
    assert "AcrossFit(by='collection', groups=4" in repr(across)


def test_contrasts_recomputed_from_the_draws(across):
    c = across.contrasts(ci_prob=0.9)
    beta = across.term_draws("system")
    gamma = across.term_draws("system:collection")
    levels = list(across.design.term("system:collection").levels)
    omega = across.term_draws("sigma_system_collection")[:, 0]
    d1 = beta[:, 1] - beta[:, 0]
    np.testing.assert_allclose(c.overall[:, 0], d1)
    np.testing.assert_allclose(c.between_sd, np.sqrt(2) * omega)
    g2 = d1 + gamma[:, levels.index("s1|c2")] - gamma[:, levels.index("s0|c2")]
    np.testing.assert_allclose(c.group[:, 0, 2], g2)
    p_new = stats.norm.cdf(d1 / (np.sqrt(2) * omega)).mean()
    assert c.p_new_win()[0] == pytest.approx(p_new)
    # the predictive draws agree with the Rao-Blackwellised probability
    pred = c.predictive_draws(seed=1)[:, 0]
    assert (pred > 0).mean() == pytest.approx(p_new, abs=4 * np.sqrt(0.25 / pred.size) * 3)
    frame = c.to_frame()
    assert tuple(frame.columns) == ACROSS_COLUMNS
    row = frame[(frame["challenger"] == "s1") & (frame["level"] == "c2")].iloc[0]
    assert row["mean"] == pytest.approx(g2.mean())
    assert row["ci_lower"] == pytest.approx(np.quantile(g2, 0.05))
    assert row["p_better"] == pytest.approx((g2 > 0).mean())
    new = frame[(frame["challenger"] == "s1") & (frame["kind"] == "new")].iloc[0]
    assert new["p_better"] == pytest.approx(p_new)


def test_raw_contrasts_are_the_paired_mean_differences(across):
    c = across.contrasts()
    data = across.table.data
    wide = data.pivot_table(index=["collection", "topic"], columns="system", values="score")
    d = (wide["s2"] - wide["s0"]).xs("c1", level=0)
    assert c.observed[1, 1] == pytest.approx(d.mean())
    assert c.observed_se[1, 1] == pytest.approx(d.std(ddof=1) / np.sqrt(d.size))
    assert c.n_topics[1, 1] == d.size == 20


def test_wins_on_k_of_n_count_the_draws(across):
    c = across.contrasts(margin=0.01)
    wins = c.wins()
    mine = wins[wins["challenger"] == "s1"]
    assert mine["k"].tolist() == [0, 1, 2, 3, 4] and mine["probability"].sum() == pytest.approx(1)
    k = (c.group[:, 0, :] > 0.01).sum(axis=1)
    for kk, p in zip(mine["k"], mine["probability"], strict=True):
        assert p == pytest.approx((k == kk).mean())


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_a_system_missing_from_a_collection(monkeypatch):
    f = fit_across(_table(drop=("c1", "s2")), draws=300, tune=50, seed=1)
    c = f.contrasts()
    assert np.isnan(c.group[:, 1, 1]).all() and not np.isnan(c.group[:, 0, 1]).any()
    wins = c.wins()
    assert (wins.loc[wins["challenger"] == "s2", "n_groups"] == 3).all()
    frame = c.to_frame()
    assert ((frame["challenger"] == "s2") & (frame["level"] == "c1")).sum() == 0
    checked = set(f.diagnostics.table["parameter"])  # no contrast where s2 has no score
    assert "s2 - s0[c0]" in checked and "s2 - s0[c1]" not in checked
    assert "not compared in c1: no topic has scores of both s2 and s0" in c.summary()


def test_summary_and_plot(across):
    text = across.summary()
    assert "across 4 collections" in text and "s1 - s0" in text and "wins on k of 4" in text
    assert "on a new collection" in text and "Diagnostics: PASS" in text
    for result in (across, across.contrasts(), across.model_check):  # LaTeX of to_frame()
        assert "\\begin{tabular}" in result.to_latex() and "\\toprule" in result.to_latex()
    fig = across.plot()
    assert len(fig.axes) == 2
    import matplotlib.pyplot as plt

    plt.close(fig)


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_standardised_scale_and_options():
    table = _table()
    f = fit_across(table, scale="sd", draws=300, tune=50, seed=2)
    c = f.contrasts()
    assert c.scale == "sd" and "residual SDs" in c.units
    sigma = f.term_draws("sigma").mean(axis=0)
    np.testing.assert_allclose(c.observed * sigma[None, :], c.observed_measure)
    with pytest.raises(UnknownSystemError, match="system 'nope' is not in the data"):
        f.contrasts(champion="nope")
    with pytest.raises(OptionError, match="method"):
        fit_across(table, method="exact")
    with pytest.raises(BayesIRError, match="needs segments"):
        fit_across(table, by="segment")
    with pytest.raises(BayesIRError, match="method='nuts' only"):
        fit_across(table, target_accept=0.9)


def test_default_draws_aim_at_the_gate_ess_when_it_is_higher():
    """A pilot chooses the draws for max(10,000, the gate's ESS), and the summary says so."""
    from bayes_ir.hierarchical.diagnostics import Thresholds

    assert Thresholds().draws_ess == 10_000
    assert Thresholds(ess_bulk_min=400, ess_tail_min=12_000).draws_ess == 12_000
    fit = fit_across(_table(), seed=3, thresholds={"ess_bulk_min": 12_000, "ess_tail_min": 12_000})
    assert fit.provenance["draws_for_ess"] == 12_000
    assert fit.diagnostics.passed  # the draws chosen reach it
    assert "chosen for ESS >= 12,000 from a pilot's ESS per draw" in fit.summary()
    # by default the effects and the scales of new groups get 10,000, the rest the gate's
    fit = fit_across(_table(), seed=3)
    assert fit.provenance["draws_for_ess_rest"] == 400
    assert (
        "chosen for ESS >= 10,000 of the effects and of the scales of new groups, 400 of "
        "the rest, from a pilot's ESS per draw"
    ) in fit.summary()
    assert fit.diagnostics.passed
