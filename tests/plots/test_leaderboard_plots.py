"""The leaderboard's figures draw the numbers of the board they are given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from results import autorank as ref  # noqa: E402

from bayes_ir.frequentist import friedman_nemenyi  # noqa: E402
from bayes_ir.hierarchical.diagnostics import GateStatus  # noqa: E402
from bayes_ir.hierarchical.leaderboard import LEADERBOARD_COLUMNS, Leaderboard  # noqa: E402
from bayes_ir.plots.leaderboard import plot_critical_difference, plot_rank_intervals  # noqa: E402
from bayes_ir.table import ScoreTable  # noqa: E402


def _board(passed: bool = True) -> Leaderboard:
    frame = pd.DataFrame(
        {
            "place": [1, 2, 3, 4, 5],
            "system": ["s1", "s2", "s3", "s4", "s5"],
            "mean": [0.5, 0.49, 0.4, 0.3, 0.29],
            "ci_lower": 0.0,
            "ci_upper": 1.0,
            "observed_mean": 0.4,
            "rank_mean": [1.3, 1.8, 3.0, 4.4, 4.5],
            "rank_lower": [1, 1, 3, 4, 4],
            "rank_upper": [2, 2, 3, 5, 5],
            "p_best": [0.7, 0.3, 0.0, 0.0, 0.0],
            "p_top": [1.0, 1.0, 0.0, 0.0, 0.0],
            "group": [1, 1, 2, 3, 3],
            "leader": ["s1", "s1", "s3", "s4", "s4"],
            "p_behind_leader": [np.nan, 0.2, np.nan, np.nan, 0.3],
            "borderline": False,
            "p_above_next": 0.5,
            "misfit": [False, False, False, True, False],
            "failed_checks": ["", "", "", "sd", ""],
            "friedman_rank": np.nan,
            "cd_groups": "",
        }
    )[list(LEADERBOARD_COLUMNS)]
    return Leaderboard(frame=frame, rope=0.01, p_min=0.95, top=2, ci_prob=0.95,
                       gate=GateStatus(passed), misfit=("s4",), model_checked=True,
                       friedman=None, friedman_note="", likelihood="gaussian", n_topics=50,
                       n_draws=1000, collection="c", measure="AP")  # fmt: skip


def test_rank_intervals_draw_each_interval_and_band():
    fig = plot_rank_intervals(_board())
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["s1", "s2", "s3", "s4 (misfit)", "s5"]
    assert [t.get_color() for t in ax.get_yticklabels()][3] == "#cf222e"
    segments = ax.collections[0].get_segments()
    assert [(s[0][0], s[1][0]) for s in segments] == [(1, 2), (1, 2), (3, 3), (4, 5), (4, 5)]
    assert np.allclose(ax.collections[1].get_offsets()[:, 0], [1.3, 1.8, 3.0, 4.4, 4.5])
    bands = [p for p in ax.patches]
    assert len(bands) == 3  # one per group
    assert "AP on c" in ax.get_title(loc="left")
    plt.close(fig)
    failed = plot_rank_intervals(_board(passed=False))
    assert any("DIAGNOSTICS FAILED" in t.get_text() for t in failed.axes[0].texts)
    plt.close(failed)


def test_critical_difference_draws_groups_and_the_cd():
    board = _board()
    fig = plot_critical_difference(board)
    assert len(fig.axes) == 1  # no Friedman companion on this board
    ax = fig.axes[0]
    thick = [line for line in ax.lines if line.get_linewidth() == 3]
    assert len(thick) == 2  # groups {s1, s2} and {s4, s5}; s3 alone has no bar
    spans = sorted((line.get_xdata()[0] + 0.1, line.get_xdata()[1] - 0.1) for line in thick)
    assert np.allclose(spans, [(1.3, 1.8), (4.4, 4.5)])
    texts = [t.get_text() for t in ax.texts]
    assert any("s4 (misfit)" in t for t in texts)
    plt.close(fig)
    frame = ref.letters_scores()
    table = ScoreTable.from_matrix(frame.to_numpy(), systems=list(frame.columns), measure="AP")
    companion = friedman_nemenyi(table)
    fig = plot_critical_difference(companion)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert f"CD = {companion.cd:.2f}" in texts
    thin = [line for line in fig.axes[0].lines if line.get_linewidth() == 1.5]
    assert len(thin) == len(companion.cliques)
    plt.close(fig)
