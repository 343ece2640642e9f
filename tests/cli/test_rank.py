"""``bayes-ir rank``: the board, its files, its figures and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from bayes_ir.hierarchical.leaderboard import LEADERBOARD_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"
BASE = ["rank", str(EXAMPLE), "--draws", "800", "--chains", "2", "--seed", "4", "-q"]


def test_prints_the_board_groups_how_to_read_and_next_step(run_cli):
    code, out, err = run_cli(BASE)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Leaderboard: AP on example, 45 systems on 50 topics")
    assert lines[1].startswith("Diagnostics: PASS")
    assert any(line.startswith("MODEL MISFIT") and "chal_risky" in line for line in lines)
    assert any("chal_fusion" in line for line in lines)
    assert any(line.startswith("Tie groups, anchored on each group's leader") for line in lines)
    assert any(line.startswith("How to read:") for line in lines)
    assert lines[-1].startswith("Next:")
    assert "Frequentist companion: Friedman chi2(df = 44)" in out
    assert "warning" not in err  # the board marks misfit itself; no warning line per system


@pytest.mark.parametrize("suffix", [".csv", ".json", ".md", ".tex", ".html"])
def test_output_by_extension(run_cli, tmp_path, suffix):
    path = tmp_path / f"board{suffix}"
    code, out, err = run_cli([*BASE, "--rope", "0.02", "--top", "5", "-o", str(path)])
    assert code == 0, err
    assert f"wrote {path}" in err
    text = path.read_text()
    if suffix == ".csv":
        frame = pd.read_csv(path)
        assert list(frame.columns) == list(LEADERBOARD_COLUMNS) and len(frame) == 45
        assert frame["p_top"].sum() == pytest.approx(5)
    elif suffix == ".json":
        rows = json.loads(text)
        assert len(rows) == 45 and set(rows[0]) == set(LEADERBOARD_COLUMNS)
    elif suffix == ".md":
        assert text.startswith("| Place | System |") and "P(top 5)" in text
    elif suffix == ".tex":
        assert r"\begin{tabular}" in text and r"\cmidrule" in text and r"$^{\dagger}$" in text
    else:
        assert text.startswith("<!DOCTYPE html>") and "<dt>command</dt>" in text
        assert EXAMPLE.name in text  # the input, with its SHA-256, in the provenance


def test_top_above_the_number_of_systems_is_said_and_shown_as_all(run_cli, tmp_path):
    path = tmp_path / "board.csv"
    code, out, err = run_cli([*BASE, "--top", "60", "-o", str(path)])
    assert code == 0, err
    assert "--top 60 is more than the 45 systems: P(top 60) would be 1" in err
    assert (pd.read_csv(path)["p_top"] == 1.0).all()


def test_figures(run_cli, tmp_path):
    folder = tmp_path / "figs"
    code, _, err = run_cli([*BASE, "--figures", str(folder)])
    assert code == 0, err
    for name in ("rank_intervals.png", "critical_difference.png"):
        assert (folder / name).stat().st_size > 10_000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rope", "-1"], "--rope must be at least 0"),
        (["--p-min", "1.5"], "--p-min must lie strictly between 0 and 1"),
        (["--top", "0"], "--top"),
        (["-o", "board.xlsx"], "cannot tell what to write from 'board.xlsx'"),
    ],
)
def test_bad_options_give_one_line(run_cli, args, message):
    code, out, err = run_cli([*BASE, *args])
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_strict_exits_3_on_failed_diagnostics(run_cli):
    code, out, err = run_cli(["rank", str(EXAMPLE), "--draws", "30", "--chains", "2", "-q",
                              "--strict"])  # fmt: skip
    assert code == 3
    assert "DIAGNOSTICS FAILED" in out


def test_binary_items_rank_under_the_bernoulli_family(run_cli, tmp_path):
    """0/1 items: the board ranks expected accuracies (the per-system means of the scores)."""
    import numpy as np

    rng = np.random.default_rng(0)
    accuracy = np.array([0.3, 0.5, 0.8])
    y = (rng.random((80, 3)) < accuracy).astype(int)
    rows = [(f"m{j}", f"q{i}", y[i, j]) for i in range(80) for j in range(3)]
    path = tmp_path / "items.csv"
    pd.DataFrame(rows, columns=["system", "topic", "score"]).assign(measure="acc").to_csv(
        path, index=False
    )
    code, out, err = run_cli(["rank", str(path), "-l", "bernoulli", "--seed", "1", "-q",
                              "-o", str(tmp_path / "board.csv")])  # fmt: skip
    assert code == 0, err
    assert "(bernoulli model, nutpie+bernoulli_kernel sampler;" in out.splitlines()[0]
    board = pd.read_csv(tmp_path / "board.csv").set_index("system")
    assert list(board.index) == ["m2", "m1", "m0"]
    observed = y.mean(axis=0)  # each interval holds its system's observed accuracy
    for j, name in enumerate(["m0", "m1", "m2"]):
        assert board.loc[name, "ci_lower"] < observed[j] < board.loc[name, "ci_upper"]
