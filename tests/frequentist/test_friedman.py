"""Friedman test, Nemenyi critical difference and CD-diagram groups, against autorank.

References: Demšar (2006), Table 5 (the critical values q_0.05 of the Nemenyi test);
scipy.stats.friedmanchisquare and the formula with the tie correction; autorank 1.3.0
(stored in ``tests/results/autorank.py``; live when autorank is installed, also on TREC
ad hoc 5-8 and Robust04 AP).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from results import autorank as ref
from scipy import stats

from bayes_ir.errors import InsufficientDataError, OptionError, ScoreTableError
from bayes_ir.frequentist import cd_groups, critical_difference, friedman_nemenyi
from bayes_ir.table import ScoreTable

#: Demšar (2006), Table 5(a): q_0.05 of the two-tailed Nemenyi test for k = 2..10.
DEMSAR_Q05 = {2: 1.960, 3: 2.343, 4: 2.569, 5: 2.728, 6: 2.850, 7: 2.949, 8: 3.031,
              9: 3.102, 10: 3.164}  # fmt: skip


def _table(frame: pd.DataFrame) -> ScoreTable:
    return ScoreTable.from_matrix(frame.to_numpy(), systems=list(frame.columns), measure="score")


@pytest.mark.parametrize("k", sorted(DEMSAR_Q05))
def test_critical_difference_matches_demsar_table_5(k):
    n = 30
    q = critical_difference(k, n) / np.sqrt(k * (k + 1) / (6 * n))
    assert q == pytest.approx(DEMSAR_Q05[k], abs=1e-3)  # the table has three decimals


def test_statistic_and_mean_ranks_follow_the_formula_with_ties():
    frame = ref.binary_scores()  # 0/1 scores: most items tie
    result = friedman_nemenyi(_table(frame))
    x = frame.to_numpy()
    n, k = x.shape
    ranks = stats.rankdata(-x, axis=1)
    r = ranks.mean(axis=0)
    ties = sum(((c**3 - c).sum()) for c in (np.unique(row, return_counts=True)[1] for row in x))
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(r**2) - k * (k + 1) ** 2 / 4)
    chi2 /= 1 - ties / (n * (k**3 - k))
    assert result.statistic == pytest.approx(chi2, rel=1e-12)
    assert result.statistic == pytest.approx(stats.friedmanchisquare(*x.T).statistic, rel=1e-12)
    assert result.p_value == pytest.approx(stats.chi2.sf(chi2, k - 1), rel=1e-10)
    assert result.df == k - 1
    expected = pd.Series(r, index=frame.columns).sort_values(kind="stable")
    assert list(result.mean_ranks.index) == list(expected.index)
    assert np.allclose(result.mean_ranks, expected)


@pytest.mark.parametrize(("name", "stored"), [("letters", ref.LETTERS), ("binary", ref.BINARY)])
def test_equals_autorank_stored(name, stored):
    frame = ref.letters_scores() if name == "letters" else ref.binary_scores()
    result = friedman_nemenyi(_table(frame))
    assert result.cd == pytest.approx(stored["cd"], rel=5e-5)  # qsturng's table vs scipy
    assert result.p_value == pytest.approx(stored["pvalue"], rel=1e-10)
    assert result.mean_ranks.to_dict() == pytest.approx(stored["meanranks"], rel=1e-12)
    assert [sorted(g) for g in result.groups()] == stored["groups"]


def _live(frame: pd.DataFrame) -> None:
    pytest.importorskip("autorank", reason="autorank is not installed (pip install autorank)")
    expected = ref.autorank_reference(frame)
    result = friedman_nemenyi(_table(frame))
    k = frame.shape[1]
    # statsmodels' qsturng approximates the studentized range: 0.2% at k = 200 (scipy exact)
    assert result.cd == pytest.approx(expected["cd"], rel=5e-5 if k <= 10 else 2e-3)
    assert result.p_value == pytest.approx(expected["pvalue"], rel=1e-8, abs=1e-300)
    assert result.mean_ranks.to_dict() == pytest.approx(expected["meanranks"], rel=1e-12)
    # with autorank's CD the groups are autorank's, exactly
    r = result.mean_ranks.to_numpy()
    same_cd = [sorted(result.systems[a : b + 1]) for a, b in cd_groups(r, expected["cd"])]
    assert same_cd == expected["groups"]
    ours = [sorted(g) for g in result.groups()]
    if ours != expected["groups"]:  # only a mean-rank gap between the two CDs can differ
        low, high = sorted((result.cd, expected["cd"]))
        gaps = np.abs(r[:, None] - r[None, :])
        assert ((gaps > low) & (gaps <= high)).any()


def test_equals_autorank_live():
    _live(ref.letters_scores())
    _live(ref.binary_scores())


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["adhoc5", "adhoc6", "adhoc7", "adhoc8", "robust2004"])
def test_equals_autorank_on_trec(shared_data, name):
    folder = "robust2004" if name == "robust2004" else "trec_adhoc"
    frame = pd.read_csv(shared_data / folder / f"{name}_ap.csv")
    frame = frame.drop(columns=["topic"], errors="ignore")
    _live(frame)


def test_groups_letters_and_pairs_agree():
    result = friedman_nemenyi(_table(ref.letters_scores()))
    letters = result.group_letters()
    groups = result.named_groups()
    for letter, members in groups.items():
        assert all(letter in letters[s] for s in members)
    r = result.mean_ranks
    for a, b in result.significant_pairs():
        assert abs(r[a] - r[b]) > result.cd
        assert not set(letters[a]) & set(letters[b])  # different systems share no group
    frame = result.to_frame()
    assert list(frame.columns) == ["system", "mean_rank", "mean", "cd_groups"]
    assert "Friedman chi2(df = 7)" in result.summary() and "CD = 1.917" in result.summary()


def test_refuses_what_it_cannot_rank():
    frame = ref.letters_scores()
    with pytest.raises(InsufficientDataError, match="at least 3 systems"):
        friedman_nemenyi(_table(frame.iloc[:, :2]))
    gap = frame.copy()
    gap.iloc[3, 2] = np.nan
    table = ScoreTable.from_matrix(gap.to_numpy(), systems=list(gap.columns), measure="score",
                                   missing="keep")  # fmt: skip
    with pytest.raises(ScoreTableError, match="system 's3' has no score on topic '3'"):
        friedman_nemenyi(table)
    with pytest.raises(OptionError, match="alpha"):
        friedman_nemenyi(_table(frame), alpha=1.5)
