"""Paired tests: p-values equal scipy/statsmodels, the exact randomisation test equals a hand
enumeration of the sign flips, the sign test its binomial closed form, and the corrections
statsmodels' multipletests."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from bayes_ir import ScoreTable
from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.frequentist import paired_tests


def _table(n_topics=12, seed=0, shifts=(0.0, 0.05, 0.01, -0.03)):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.6, n_topics)
    rows = []
    for j, shift in enumerate(shifts):
        scores = np.clip(base + shift + rng.normal(0, 0.06, n_topics), 0, 1)
        rows += [(f"s{j}", f"t{t}", scores[t]) for t in range(n_topics)]
    frame = pd.DataFrame(rows, columns=["system", "topic", "score"])
    table = ScoreTable.from_frame(frame, measure="AP", collection="sim")
    return table.with_roles(champion="s0", challengers=["s1", "s2", "s3"])


def _diff(table, name):
    m = table.matrix().to_pandas()
    return (m[name] - m["s0"]).to_numpy()


def test_p_values_equal_scipy_and_corrections_statsmodels():
    table = _table()
    res = paired_tests(table, correction="holm", seed=3).to_frame()
    for name in ("s1", "s2", "s3"):
        d = _diff(table, name)
        rows = res[res["challenger"] == name].set_index("test")
        assert rows.at["t", "p_value"] == pytest.approx(stats.ttest_rel(d, 0 * d).pvalue)
        assert rows.at["wilcoxon", "p_value"] == pytest.approx(stats.wilcoxon(d).pvalue)
        assert rows.at["t", "effect_size"] == pytest.approx(d.mean() / d.std(ddof=1))
        assert rows.at["t", "mean_difference"] == pytest.approx(d.mean())
    for test, group in res.groupby("test"):
        expected = multipletests(group["p_value"], method="holm")[1]
        assert np.allclose(group["p_adjusted"], expected), test
    assert (res["significant"] == (res["p_adjusted"] < 0.05)).all()


def test_exact_randomisation_equals_enumerating_every_sign_flip():
    table = _table(n_topics=10)
    res = paired_tests(table, test="randomization", correction="none").to_frame()
    for name in ("s1", "s2", "s3"):
        d = _diff(table, name)
        flips = np.array(list(itertools.product([1, -1], repeat=d.size)))
        means = (flips * d).mean(axis=1)
        p = np.mean(np.abs(means) >= abs(d.mean()) - 1e-15)
        got = res.loc[res["challenger"] == name, "p_value"].item()
        assert got == pytest.approx(p)
        assert "exact" in res.loc[res["challenger"] == name, "method"].item()


def test_sign_test_is_the_binomial_closed_form():
    table = _table(n_topics=15)
    res = paired_tests(table, test="sign", correction="none").to_frame()
    for name in ("s1", "s2", "s3"):
        d = _diff(table, name)
        wins, n = int((d > 0).sum()), int((d != 0).sum())
        k = min(wins, n - wins)
        p = min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n)
        assert res.loc[res["challenger"] == name, "p_value"].item() == pytest.approx(p)


def test_bootstrap_is_seeded_and_agrees_with_the_t_test_on_many_topics():
    table = _table(n_topics=200, seed=4, shifts=(0.0, 0.012, 0.0, -0.01))
    a = paired_tests(table, test=["bootstrap", "t"], correction="none", seed=9).to_frame()
    b = paired_tests(table, test=["bootstrap", "t"], correction="none", seed=9).to_frame()
    assert a.equals(b)
    boot = a[a["test"] == "bootstrap"].set_index("challenger")["p_value"]
    t = a[a["test"] == "t"].set_index("challenger")["p_value"]
    assert np.allclose(boot, t, atol=0.02)  # large-sample equivalence (Efron & Tibshirani 16.4)


def test_one_sided_and_summary():
    table = _table()
    res = paired_tests(table, test="t", alternative="greater", correction="none")
    d = _diff(table, "s1")
    p = stats.ttest_1samp(d, 0, alternative="greater").pvalue
    assert res.to_frame().set_index("challenger").at["s1", "p_value"] == pytest.approx(p)
    text = res.summary()
    assert "s1" in text and "not the probability that the challenger is better" in text


@pytest.mark.parametrize(
    ("options", "word"),
    [
        ({"test": "z"}, "unknown test"),
        ({"correction": "sidak2"}, "unknown correction"),
        ({"alpha": 1.5}, "alpha"),
        ({"alternative": "bigger"}, "alternative"),
        ({"n_resamples": 10}, "n_resamples"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_options_are_named(options, word):
    with pytest.raises(OptionError, match=word):
        paired_tests(_table(), **options)


def test_too_few_shared_topics():
    frame = pd.DataFrame({"system": ["a", "b"], "topic": ["1", "1"], "score": [0.1, 0.2]})
    table = ScoreTable.from_frame(frame, measure="AP").with_roles(champion="a", challengers="b")
    with pytest.raises(
        InsufficientDataError,
        match="a paired test needs at least 2 paired topics; the pair .* has 1",
    ):
        paired_tests(table)


def test_ties_and_zeros_do_not_depend_on_float_noise():
    """0.3 - 0.1 and 0.2 are one difference: the p-values equal scipy's on the rounded data."""
    champion = np.array([0.1, 0.5, 0.3, 0.1 + 0.2, 0.4, 0.2, 0.6, 0.25, 0.45, 0.35, 0.15, 0.55])
    noisy = np.array([0.3, 0.7, 0.5, 0.3, 0.3, 0.1, 0.7, 0.35, 0.55, 0.25, 0.35, 0.75])
    exact = np.round(noisy - champion, 9)  # the differences as decimals
    assert not np.array_equal(noisy - champion, exact)  # the noise is there
    frames = []
    for challenger in (noisy, champion + exact):
        table = ScoreTable.from_matrix(
            np.column_stack([champion, challenger]), systems=["h", "c"], measure="AP"
        ).with_roles(champion="h", challengers=["c"])
        frames.append(paired_tests(table, test=["wilcoxon", "sign"]).to_frame().set_index("test"))
    for frame in frames:
        assert frame.at["wilcoxon", "p_value"] == pytest.approx(
            stats.wilcoxon(exact).pvalue, abs=1e-15
        )
        wins, losses = int((exact > 0).sum()), int((exact < 0).sum())
        assert frame.at["sign", "p_value"] == pytest.approx(
            stats.binomtest(wins, wins + losses).pvalue, abs=1e-15
        )
    assert frames[0]["p_value"].equals(frames[1]["p_value"])


def test_resamples_are_bounded_before_any_work():
    with pytest.raises(OptionError, match="n_resamples must be at most 1,000,000"):
        paired_tests(_table(), n_resamples=10**9)


def test_large_bootstrap_runs_in_batches_with_the_same_stream():
    """More resamples than one batch holds: drawn in batches, the p-value is unchanged."""
    from bayes_ir.frequentist import paired

    d = _diff(_table(n_topics=40), "s1")
    whole = paired._bootstrap_p(d, 3000, np.random.default_rng(5), "two-sided")
    cells = paired._BATCH_CELLS
    paired._BATCH_CELLS = 40 * 700  # 700 resamples per batch
    try:
        batched = paired._bootstrap_p(d, 3000, np.random.default_rng(5), "two-sided")
    finally:
        paired._BATCH_CELLS = cells
    assert batched == whole
