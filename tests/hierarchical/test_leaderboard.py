"""leaderboard(): rank intervals, P(best), P(top k), anchored tie groups, misfit, the gate.

References: brute-force ranks of the draws (scipy.stats.rankdata, numpy quantiles);
rank_probabilities() of the contrasts module (an independent implementation); known truth
on simulated leaderboards (``leaderboard_truth.py``: coverage of the rank intervals, false
separations, tiers recovered); stability across seeds and under an added or removed far
system; the rule itself, recomputed from the fit's draws.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from leaderboard_truth import board, table_of, true_ranks
from scipy import stats

import bayes_ir
from bayes_ir.errors import IgnoredOptionWarning, ModelCheckWarning, OptionError
from bayes_ir.hierarchical import Leaderboard, fit, leaderboard, rank_probabilities
from bayes_ir.hierarchical.leaderboard import LEADERBOARD_COLUMNS, rank_summary, tie_groups

EXAMPLE = "data/example_scores.csv"


@pytest.fixture(scope="module")
def example_fit():
    table = bayes_ir.read_scores(EXAMPLE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelCheckWarning)
        return fit(table, draws=2500, seed=4)


@pytest.fixture(scope="module")
def example_board(example_fit) -> Leaderboard:
    return leaderboard(example_fit)


def _draws(result) -> tuple[list[str], np.ndarray]:
    means = result.system_mean_draws().transpose("chain", "draw", "system")
    names = [str(s) for s in means["system"].values]
    return names, means.values.reshape(-1, len(names))


# ---------------------------------------------------------------- kernels
def test_rank_summary_equals_brute_force_ranks():
    rng = np.random.default_rng(3)
    draws = rng.normal(np.linspace(0, 1.5, 9), 1.0, size=(5000, 9))
    got = rank_summary(draws, ci_prob=0.9, top=3)
    ranks = stats.rankdata(-draws, axis=1, method="ordinal")
    assert np.allclose(got["rank_mean"], ranks.mean(axis=0))
    # equal-tailed interval of a discrete distribution: numpy's inverted-CDF quantiles
    lower = np.quantile(ranks, 0.05, axis=0, method="inverted_cdf")
    upper = np.quantile(ranks, 0.95, axis=0, method="inverted_cdf")
    assert np.array_equal(got["rank_lower"], lower) and np.array_equal(got["rank_upper"], upper)
    assert np.allclose(got["p_best"], (ranks == 1).mean(axis=0))
    assert np.allclose(got["p_top"], (ranks <= 3).mean(axis=0))


def test_tie_groups_are_anchored_and_do_not_chain():
    # A, B, C, D 0.6 apart, each step well inside a rope of 1 but A to C beyond it: chained
    # overlaps would make one group; anchored on A, C and D leave A's group
    rng = np.random.default_rng(1)
    noise = rng.normal(0, 0.05, size=(20000, 4))
    draws = np.array([3.0, 2.4, 1.8, 1.2]) + noise
    group, p_rule, borderline = tie_groups(draws, rope=1.0, p_min=0.95)
    assert list(group) == [1, 1, 2, 2]  # C leads the second group, D is within 1 of C
    assert p_rule[1] == pytest.approx((draws[:, 0] - draws[:, 1] > 1).mean())
    assert p_rule[2] == pytest.approx((draws[:, 0] - draws[:, 2] > 1).mean())
    assert np.isnan(p_rule[0]) and not borderline.any()
    # a neighbour rule (each system against the one above it) would have chained them all
    steps = [(draws[:, i] - draws[:, i + 1] > 1).mean() for i in range(3)]
    assert max(steps) < 0.95


def test_borderline_marks_a_probability_within_monte_carlo_error():
    rng = np.random.default_rng(2)
    n = 40000
    lead = rng.normal(0, 1, n)
    # the second system is behind by exactly the rope's 95% point: P(d > rope) ~ 0.95
    draws = np.column_stack([lead, lead - 1.645 * 0.1 - rng.normal(0, 0.1, n) - 0.0])
    _, p_rule, borderline = tie_groups(draws, rope=0.0, p_min=0.95)
    mcse = np.sqrt(0.95 * 0.05 / n)
    assert abs(p_rule[1] - 0.95) < 3 * mcse and borderline[1]
    _, _, far = tie_groups(draws, rope=0.0, p_min=0.80)
    assert not far.any()


# ---------------------------------------------------------------- the board of a fit
def test_board_columns_and_sums(example_board, example_fit):
    f = example_board.to_frame()
    n = example_fit.n_systems
    assert tuple(f.columns) == LEADERBOARD_COLUMNS and len(f) == n
    assert list(f["place"]) == list(range(1, n + 1))
    assert (np.diff(f["mean"]) <= 0).all()  # ordered by the posterior mean
    assert f["p_best"].sum() == pytest.approx(1.0)
    assert f["p_top"].sum() == pytest.approx(example_board.top)  # top places hold top systems
    assert f["rank_mean"].sum() == pytest.approx(n * (n + 1) / 2)
    assert (f["rank_lower"] <= f["rank_mean"]).all() and (f["rank_mean"] <= f["rank_upper"]).all()
    observed = example_fit.table.matrix().to_pandas().mean(axis=0)
    assert np.allclose(f.set_index("system")["observed_mean"], observed.reindex(f["system"]))


def test_board_equals_rank_probabilities_and_the_draws(example_board, example_fit):
    f = example_board.to_frame().set_index("system")
    names, x = _draws(example_fit)
    probs = rank_probabilities(example_fit, systems=names)  # contrasts' own implementation
    assert np.allclose(f.loc[names, "p_best"], probs.p_best.loc[names], atol=1e-12)
    assert np.allclose(f.loc[names, "rank_mean"], probs.expected_rank.loc[names], atol=1e-9)
    lo, hi = np.quantile(x, [0.025, 0.975], axis=0)
    assert np.allclose(f.loc[names, "ci_lower"], lo) and np.allclose(f.loc[names, "ci_upper"], hi)


def test_every_member_obeys_the_rule_recomputed_from_the_draws(example_board, example_fit):
    names, x = _draws(example_fit)
    col = {s: i for i, s in enumerate(names)}
    f = example_board.to_frame()
    rope, p_min = example_board.rope, example_board.p_min
    groups = example_board.groups()
    for g, members in enumerate(groups):
        lead = x[:, col[members[0]]]
        for s in members[1:]:  # no member shown behind its leader by more than the rope
            p = (lead - x[:, col[s]] > rope).mean()
            assert p < p_min
            assert p == pytest.approx(f.set_index("system").loc[s, "p_behind_leader"])
        if g + 1 < len(groups):  # the next leader is
            assert (lead - x[:, col[groups[g + 1][0]]] > rope).mean() >= p_min
    # groups are runs of consecutive places
    assert [s for members in groups for s in members] == list(f["system"])


def test_misfit_systems_are_marked(example_board, example_fit):
    flagged = set(example_fit.model_check.flagged)
    assert flagged  # chal_risky and a few artifact runs in the example
    f = example_board.to_frame()
    assert set(f.loc[f["misfit"], "system"]) == flagged == set(example_board.misfit)
    for s in flagged:
        checks = f.loc[f["system"] == s, "failed_checks"].iloc[0]
        assert checks == ", ".join(example_fit.model_check.failed(s))
    text = example_board.summary()
    assert "MODEL MISFIT" in text and all(s in text for s in flagged)


def test_friedman_companion_is_the_fit_tables(example_board, example_fit):
    from bayes_ir.frequentist import friedman_nemenyi

    direct = friedman_nemenyi(example_fit.table)
    companion = example_board.friedman
    assert companion.cd == direct.cd and companion.systems == direct.systems
    f = example_board.to_frame().set_index("system")
    assert np.allclose(f.loc[list(direct.systems), "friedman_rank"], direct.mean_ranks)
    assert "Friedman chi2(df = 44)" in example_board.summary()


def test_failed_diagnostics_are_said_first(example_fit):
    table = bayes_ir.read_scores(EXAMPLE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        poor = fit(table, draws=40, chains=2, seed=1, model_check=False)
    lb = leaderboard(poor, friedman=False)
    assert not lb.diagnostics_passed
    assert lb.summary().splitlines()[1].startswith("!" * 10)
    assert "DIAGNOSTICS FAILED" in lb.summary() and "DIAGNOSTICS FAILED" in lb.to_markdown()
    assert "DIAGNOSTICS FAILED" in lb.to_latex()
    assert "misfit cannot be told" in lb.summary()  # no model check ran


def test_options_are_checked(example_fit):
    with pytest.raises(OptionError, match="rope must be at least 0"):
        leaderboard(example_fit, rope=-0.01)
    with pytest.raises(OptionError, match="top"):
        leaderboard(example_fit, top=0)
    with pytest.raises(OptionError, match="p_min"):
        leaderboard(example_fit, p_min=1.0)
    with pytest.raises(OptionError, match="ci_prob"):
        leaderboard(example_fit, ci_prob=1.2)
    with pytest.warns(IgnoredOptionWarning, match="top=500 is more than the 45 systems"):
        wide = leaderboard(example_fit, top=500, friedman=False)
    assert wide.top == example_fit.n_systems and np.allclose(wide.frame["p_top"], 1.0)


def test_a_fit_with_roles_ranks_every_system_too(example_fit):
    table = bayes_ir.read_scores(EXAMPLE).with_roles(champion="bm25", challengers="chal_*")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelCheckWarning)
        roled = fit(table, draws=1000, seed=4)
    lb = leaderboard(roled, friedman=False)
    assert set(lb.systems) == set(table.systems)


# ---------------------------------------------------------------- known truth (slow)
def _fit_board(table, seed, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit(table, seed=seed, model_check=False, **options)


@pytest.mark.slow
def test_rank_intervals_cover_the_true_ranks():
    """At least 95% of true ranks lie in their 95% rank intervals, 24 boards of 50-200."""
    inside = total = separations = false = 0
    for b in range(24):
        n_sys = (50, 100, 200)[b % 3]
        table, theta = board(n_sys, 50, 7000 + b)
        lb = leaderboard(_fit_board(table, b, draws=1500), friedman=False)
        f = lb.to_frame().set_index("system")
        r = true_ranks(theta).reindex(f.index)
        inside += int(((f["rank_lower"] <= r) & (r <= f["rank_upper"])).sum())
        total += len(f)
        leaders = f.index[f.index == f["leader"]]
        for prev, cur in zip(leaders[:-1], leaders[1:], strict=True):
            separations += 1  # the next leader is shown behind by more than the rope
            false += int(theta[prev] - theta[cur] <= lb.rope)
    assert inside / total >= 0.95, inside / total
    # each separation has posterior probability >= 0.95: about 5% of them may be wrong
    assert separations >= 30 and false / separations <= 0.05 + 2 * np.sqrt(
        0.05 * 0.95 / separations
    )


TIERS = [0.45, 0.35, 0.25, 0.15]  # 0.1 apart; rope 0.03


def _partition(lb) -> set[frozenset[str]]:
    return {frozenset(g) for g in lb.groups()}


@pytest.mark.slow
def test_tiers_are_recovered_alike_whatever_the_seed_and_far_systems():
    table, theta = board(60, 100, 11, tiers=TIERS)
    truth = {frozenset(theta.index[theta == t]) for t in TIERS}
    first = leaderboard(_fit_board(table, 1), rope=0.03, friedman=False)
    second = leaderboard(_fit_board(table, 2), rope=0.03, friedman=False)
    assert _partition(first) == _partition(second) == truth
    y = table.wide().to_numpy()
    systems = list(table.wide().columns)
    top = table_of(np.column_stack([y, y.mean(axis=1) + 0.5]), [*systems, "far_top"])
    added = leaderboard(_fit_board(top, 1), rope=0.03, friedman=False)
    assert _partition(added) == truth | {frozenset({"far_top"})}
    bottom = theta.index[theta == TIERS[-1]][0]
    keep = [s for s in systems if s != bottom]
    removed = leaderboard(_fit_board(table.select(systems=keep), 1), rope=0.03, friedman=False)
    assert _partition(removed) == {g - {bottom} for g in truth}


def _first_difference(a, b) -> int | None:
    """Index of the first group (in board order) whose members differ, else None."""
    for i, (ga, gb) in enumerate(zip(a.groups(), b.groups(), strict=False)):
        if set(ga) != set(gb):
            return i
    return None if len(a.groups()) == len(b.groups()) else min(len(a.groups()), len(b.groups()))


def _borderline_near(lb, group: int) -> bool:
    """A system of group ``group`` or the leader of the next is borderline."""
    f = lb.to_frame()
    return bool(f.loc[f["group"].isin([group + 1, group + 2]), "borderline"].any())


@pytest.mark.slow
def test_dense_boards_differ_between_seeds_only_where_monte_carlo_error_says_so():
    """Another seed moves a group boundary only where the rule's probability is borderline.

    On dense boards (no gap between systems) a boundary sits where the probability of
    being behind the leader crosses p_min, so a boundary whose probability lies within
    Monte Carlo error of it can move with the seed; the board flags it (``borderline``).
    Every partition that differs must differ first at a flagged boundary, and the groups
    above it must be the same.
    """
    differed = 0
    for b in range(6):
        table, _ = board(100, 50, 500 + b)
        one = leaderboard(_fit_board(table, 1, draws=2500), friedman=False)
        two = leaderboard(_fit_board(table, 2, draws=2500), friedman=False)
        i = _first_difference(one, two)
        if i is None:
            continue
        differed += 1
        assert _borderline_near(one, i) or _borderline_near(two, i), (b, i)
        assert [set(g) for g in one.groups()[:i]] == [set(g) for g in two.groups()[:i]]
    assert differed < 6  # most boards have no boundary within Monte Carlo error


@pytest.mark.slow
def test_adding_a_far_system_keeps_the_groups_of_a_dense_board():
    """A system far above or below every other leaves the groups of a dense board as they were.

    Its draws change the others' posterior a little (the shared scales), so a boundary
    within Monte Carlo error of p_min may move: the groups must be the same up to the first
    boundary flagged borderline in either board.
    """
    table, _ = board(80, 50, 900)
    y = table.wide().to_numpy()
    systems = list(table.wide().columns)
    base = leaderboard(_fit_board(table, 1, draws=2500), friedman=False)
    expected = [set(g) for g in base.groups()]
    for name, column, offset in (("far_top", y.mean(axis=1) + 0.5, 1),
                                 ("far_low", y.mean(axis=1) - 0.5, 0)):  # fmt: skip
        more = table_of(np.column_stack([y, column]), [*systems, name])
        other = leaderboard(_fit_board(more, 1, draws=2500), friedman=False)
        groups = [set(g) for g in other.groups()]
        assert {name} in groups  # far from every group: a group of its own
        groups = [g for g in groups if g != {name}]
        for i, (want, got) in enumerate(zip(expected, groups, strict=False)):
            if want != got:
                assert _borderline_near(base, i) or _borderline_near(other, i + offset), (name, i)
                break
        else:
            assert len(groups) == len(expected)


def test_leaderboard_frame_round_trips_through_csv(example_board, tmp_path):
    from bayes_ir.report import write_table

    path = write_table(example_board.to_frame(), tmp_path / "board.csv")
    back = pd.read_csv(path)
    assert list(back.columns) == list(LEADERBOARD_COLUMNS)
    assert list(back["system"]) == list(example_board.systems)


def test_a_saved_fit_without_roles_loads_and_ranks_alike(example_fit, example_board, tmp_path):
    from bayes_ir.hierarchical import load_fit

    path = example_fit.save(tmp_path / "board.nc")
    for loaded in (load_fit(path), load_fit(path, example_fit.table)):
        assert loaded.table.roles is None
        again = leaderboard(loaded)
        assert again.to_frame().equals(example_board.to_frame())
