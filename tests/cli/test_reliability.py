from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bayes_ir.cli import app, main
from bayes_ir.readers import read_scores
from bayes_ir.reliability import bootstrap_interval, expected_correlation


@pytest.fixture
def scores(tmp_path):
    rng = np.random.default_rng(0)
    x = np.clip(rng.normal(0.3, 0.1, (15, 5)) + np.linspace(0.1, 0, 5), 0, 1)
    rows = [
        {"system": f"run{s}", "topic": str(t), "score": x[t, s]}
        for t in range(15)
        for s in range(5)
    ]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_reliability_command_writes_the_library_numbers(scores, tmp_path):
    out = tmp_path / "rel.csv"
    args = ["reliability", str(scores), "--estimator", "ML", "--intervals", "--seed", "3",
            "-o", str(out)]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0
    printed = result.stdout
    table = read_scores(scores)
    res = expected_correlation(table, estimator="ML")
    boot = bootstrap_interval(table, seed=3).conf_int()
    assert f"E[tau]    (expected Kendall tau with the true ranking):  {res.tau:.4f}" in printed
    frame = pd.read_csv(out)
    assert frame["estimate"].tolist() == pytest.approx([res.tau, res.tau_ap])
    assert frame["boot_ci_lower"].tolist() == pytest.approx(boot["ci_lower"].tolist())
    assert frame["boot_mean"].tolist() == pytest.approx(boot["estimate"].tolist())


def test_reliability_command_bad_input(scores, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reliability", str(scores), "--estimator", "KD(T=zero)"])
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_blocks_are_separated_and_lines_not_broken(monkeypatch):
    """At 80 columns "expected number of swapped pairs: \\n0.5" was broken, and the blocks of
    several measures ran into each other."""
    from bayes_ir.cli._app import console

    monkeypatch.setattr(console, "width", 80)  # a terminal of 80
    path = Path(__file__).resolve().parents[2] / "data" / "example_trec_eval.txt"
    result = CliRunner().invoke(app, ["reliability", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    swapped = [line for line in lines if line.startswith("pairs likely swapped")]
    assert len(swapped) == 3 and all("expected number of swapped pairs: 0." in s for s in swapped)
    assert lines.count("") == 2  # one blank line between each of the three measures


def test_points_to_the_interval_of_the_estimate(scores, run_cli):
    code, out, _ = run_cli(["reliability", str(scores)])
    assert code == 0
    step = out[out.index("next:") :].splitlines()[1]
    assert step.startswith(f"  bayes-ir reliability {scores} --intervals  # how sure")
    code, out, _ = run_cli(["reliability", str(scores), "--intervals", "--seed", "1"])
    assert code == 0 and "next:" not in out
