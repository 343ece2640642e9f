"""decide(): its table against direct numpy functionals of the fit's draws, its gate, its
options; calibration and the more-topics forecast against data simulated with known truth."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayes_ir
from bayes_ir.decision import DECISION_COLUMNS, decide
from bayes_ir.errors import ConvergenceWarning, OptionError
from bayes_ir.hierarchical import Priors

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"


@pytest.fixture(scope="module")
def example_fit():
    table = bayes_ir.read_scores(EXAMPLE).with_roles(champion="bm25", challengers="chal_*")
    return bayes_ir.fit(table, draws=2000, chains=2, seed=11)


def test_table_equals_direct_functionals_of_the_draws(example_fit):
    m = 0.03
    dec = decide(example_fit, margin=m, topics=(20,), seed=1)
    frame = dec.to_frame()
    assert list(frame.columns) == list(DECISION_COLUMNS)
    means = example_fit.draws["b0"] + example_fit.draws["system_effect"]
    flat = means.stack(sample=("chain", "draw")).transpose("sample", "system")
    champion = flat.sel(system="bm25").values
    systems = ["bm25", *frame["challenger"]]
    theta = flat.sel(system=systems).values
    for row in frame.itertuples(index=False):
        d = flat.sel(system=row.challenger).values - champion
        assert row.mean == pytest.approx(d.mean(), abs=1e-12)
        assert row.p_better == pytest.approx(np.mean(d > m))
        assert row.p_worse == pytest.approx(np.mean(d < -m))
        assert row.p_equivalent == pytest.approx(np.mean(np.abs(d) <= m))
        assert row.p_noninferior == pytest.approx(np.mean(d > -m))
        assert row.loss_deploy == pytest.approx(np.mean(np.maximum(m - d, 0)), abs=1e-12)
        assert row.loss_keep == pytest.approx(np.mean(np.maximum(d - m, 0)), abs=1e-12)
        j = systems.index(row.challenger)
        assert row.p_best == pytest.approx(np.mean(theta.argmax(axis=1) == j))
        loss_d, loss_k = np.mean(np.maximum(m - d, 0)), np.mean(np.maximum(d - m, 0))
        expected = (
            "unreliable" if row.challenger in example_fit.model_check.flagged  # chal_risky
            else "deploy" if np.mean(d > m) >= 0.95 and loss_d <= m / 10
            else "keep champion" if np.mean(d < m) >= 0.95 and loss_k <= m / 10
            else "collect more data"
        )  # fmt: skip
        assert row.action == expected
    regret = (theta.max(axis=1, keepdims=True) - theta).mean(axis=0)
    assert np.allclose(dec.best["expected_loss"], regret)
    # the example has a deployable challenger, an undecided one, and chal_risky, which the
    # Gaussian model does not describe (its model check fails): never deploy
    assert set(frame["action"]) >= {"deploy", "collect more data", "unreliable"}
    assert frame.set_index("challenger").at["chal_risky", "action"] == "unreliable"
    assert dec.misfit == ("chal_risky",)
    undecided = frame.loc[frame["action"] == "collect more data", "challenger"]
    assert set(dec.more_topics["challenger"]) == set(undecided)
    assert dec.overall == "deploy"
    text = dec.summary()
    assert "m = 0.03" in text and "How many more topics" in text and "exchangeable" in text


def test_failed_diagnostics_never_deploy():
    table = bayes_ir.read_scores(EXAMPLE).with_roles(champion="bm25", challengers="chal_*")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = bayes_ir.fit(table, draws=200, chains=2, seed=1, thresholds={"ess_bulk_min": 1e9})
    dec = decide(fit, margin=0.01, topics=())
    assert set(dec.to_frame()["action"]) == {"unreliable"}
    assert dec.overall == "unreliable"
    assert dec.summary().splitlines()[1].startswith("DIAGNOSTICS FAILED")


@pytest.mark.parametrize(
    ("options", "word"),
    [
        ({"margin": float("nan")}, "margin"),
        ({"margin": -0.01}, "margin"),
        ({"mode": "better"}, "mode"),
        ({"r": 0.5}, "r (loss weight"),
        ({"p_min": 0.4}, "p_min"),
        ({"threshold": 0.0}, "threshold"),
        ({"margin": 0.0}, "threshold="),
        ({"topics": (10, 0)}, "topics"),
        ({"n_sim": 0}, "n_sim"),
    ],
)
def test_bad_options_are_named(example_fit, options, word):
    with pytest.raises(OptionError, match=word.replace("(", r"\(")):
        decide(example_fit, **options)


# ---------------------------------------------------------------------- known truth
PRIORS = Priors(b0_mu=0.3, b0_sd=0.1, sigma_rate=12.5, sigma_topic_rate=10.0,
                sigma_system_rate=25.0)  # fmt: skip


def _truth(rng, n_systems):
    """Draw the scales and the system effects from PRIORS (zero-sum: projected normals)."""
    sigma = rng.exponential(1 / PRIORS.sigma_rate)
    sigma_topic = rng.exponential(1 / PRIORS.sigma_topic_rate)
    sigma_system = rng.exponential(1 / PRIORS.sigma_system_rate)
    c = rng.normal(0, sigma_system, n_systems)
    return {"b0": rng.normal(PRIORS.b0_mu, PRIORS.b0_sd), "c": c - c.mean(), "sigma": sigma,
            "sigma_topic": sigma_topic}  # fmt: skip


def _scores(rng, truth, n_topics, first=0):
    a = rng.normal(0, truth["sigma_topic"], n_topics)
    a -= a.mean()
    n_systems = truth["c"].size
    y = truth["b0"] + a[:, None] + truth["c"][None, :]
    y = y + rng.normal(0, truth["sigma"], (n_topics, n_systems))
    return pd.DataFrame(
        [(f"s{j}", f"t{first + t}", y[t, j]) for t in range(n_topics) for j in range(n_systems)],
        columns=["system", "topic", "score"],
    )


def _fit(frame, seed):
    table = bayes_ir.ScoreTable.from_frame(frame, measure="sim", collection="sim",
                                           check_range=False)  # fmt: skip
    table = table.with_roles(champion="s0", challengers=["s1", "s2"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return bayes_ir.fit(table, draws=1000, chains=2, seed=seed, priors=PRIORS)


@pytest.mark.slow
def test_decisions_are_calibrated_on_data_from_the_model():
    """Deploy decisions hold P(d > m) >= 0.95; the truth agrees as often as stated."""
    rng = np.random.default_rng(2024)
    margin, stated, truth_ok = (
        0.01,
        {"deploy": [], "keep champion": []},
        {"deploy": [], "keep champion": []},
    )
    for rep in range(160):
        truth = _truth(rng, 3)
        fit = _fit(_scores(rng, truth, 40), seed=rep)
        frame = decide(fit, margin=margin, topics=()).to_frame()
        for j, row in enumerate(frame.itertuples(index=False), start=1):
            true_d = truth["c"][j] - truth["c"][0]
            if row.action == "deploy":
                stated["deploy"].append(row.p_better)
                truth_ok["deploy"].append(true_d > margin)
            elif row.action == "keep champion":
                stated["keep champion"].append(1 - row.p_better)
                truth_ok["keep champion"].append(true_d <= margin)
    for action in stated:
        n = len(stated[action])
        assert n >= 30, (action, n)
        p, freq = np.mean(stated[action]), np.mean(truth_ok[action])
        se = np.sqrt(max(p * (1 - p), 0.01) / n)
        print(f"{action}: n={n} stated={p:.3f} observed={freq:.3f}")
        assert abs(freq - p) < 3 * se + 0.01, (action, n, p, freq)


@pytest.mark.slow
def test_more_topics_forecast_agrees_with_really_judging_them():
    """Predicted P(settled after k more topics) vs refitting with k more topics drawn from
    the known truth, averaged over truths drawn from the prior."""
    rng = np.random.default_rng(7)
    k, margin, predicted, realised = 30, 0.01, [], []
    for rep in range(400):
        truth = _truth(rng, 3)
        first = _scores(rng, truth, 20)
        dec = decide(_fit(first, seed=rep), margin=margin, topics=(k,), n_sim=2000, seed=rep)
        more = dec.more_topics
        if more.empty:
            continue
        after = decide(_fit(pd.concat([first, _scores(rng, truth, k, first=20)]), seed=rep),
                       margin=margin, topics=())  # fmt: skip
        actions = after.actions
        for row in more.itertuples(index=False):
            predicted.append(row.p_decisive)
            realised.append(actions[row.challenger] in ("deploy", "keep champion"))
        if len(predicted) >= 150:
            break
    n = len(predicted)
    assert n >= 100
    p, freq = np.mean(predicted), np.mean(realised)
    print(f"more topics: n={n} predicted={p:.3f} observed={freq:.3f}")
    assert abs(freq - p) < 3 * np.sqrt(p * (1 - p) / n) + 0.02, (n, p, freq)


def test_margins_wider_than_the_measure_range_are_refused():
    """A non-inferiority margin of 1.5 on AP would pass a system that scores 0 everywhere."""
    from bayes_ir.decision import check_options

    options = {"mode": "non_inferiority", "r": 1.0, "threshold": None, "p_min": None}
    with pytest.raises(OptionError, match=r"margin 1\.5 is as wide as the whole range \[0, 1\]"):
        check_options(margin=1.5, measure="AP", **options)
    with pytest.raises(OptionError, match=r"--threshold 2 is as wide"):
        check_options(margin=0.01, threshold=2.0, mode="superiority", r=1.0, p_min=None,
                      measure="nDCG@10", names={"threshold": "--threshold"})  # fmt: skip
    assert check_options(margin=1.5, measure="my_score", **options)[0] == 1.5  # unbounded
    with pytest.raises(OptionError, match=r"--min-gain must be greater than 0"):
        check_options(margin=0.0, mode="superiority", r=1.0, threshold=None, p_min=None,
                      names={"margin": "--min-gain", "threshold": None})  # fmt: skip
    with pytest.raises(OptionError, match=r"with --margin 0 .* pass --threshold$"):
        check_options(margin=0.0, mode="superiority", r=1.0, threshold=None, p_min=None,
                      names={"margin": "--margin", "threshold": "--threshold"})  # fmt: skip


def test_table_shows_the_observed_difference_and_the_share_pulled(example_fit):
    """Each row: the raw mean difference (as the paired test's) beside the model's, and why."""
    from scipy import stats

    dec = decide(example_fit, margin=0.01, topics=())
    frame = dec.to_frame().set_index("challenger")
    wide = pd.read_csv(EXAMPLE).pivot(index="topic", columns="system", values="score")
    for name, row in frame.iterrows():
        d = (wide[name] - wide["bm25"]).dropna().to_numpy()
        assert row["observed"] == pytest.approx(d.mean(), abs=1e-12)
        # scipy's paired t statistic is mean / (sd / sqrt(n)): the same mean difference
        t = stats.ttest_rel(wide[name], wide["bm25"]).statistic
        assert row["observed"] == pytest.approx(t * d.std(ddof=1) / np.sqrt(d.size))
        assert row["pooled_share"] == pytest.approx(1 - row["mean"] / row["observed"], abs=1e-12)
    assert dec.pooling.pooling == "all" and dec.pooling.n_artifacts == 40
    # docs/bayes_vs_tests.md: sigma_system 0.029 against a standard error of 0.009: 8%
    assert dec.pooling.sigma_system == pytest.approx(0.029, abs=0.002)
    assert dec.pooling.standard_error == pytest.approx(0.009, abs=0.0005)
    assert dec.pooling.share == pytest.approx(0.08, abs=0.01)
    big = frame.loc[["chal_fusion", "chal_rerank", "chal_risky"], "pooled_share"]
    assert big.between(0.06, 0.11).all()
    text = dec.summary()
    assert "Observed (raw mean difference over the topics both systems have" in text
    first = frame.index[0]
    assert f"  {first}: observed {frame.loc[first, 'observed']:+.4f}, model " in text
    assert "Pooling 'all'" in text
