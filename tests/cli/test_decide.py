"""``bayes-ir decide``: the table, the more-topics table, the files and the --gate exit codes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from bayes_ir.cli import app
from bayes_ir.cli.decide import GATE_EXIT
from bayes_ir.decision import DECISION_COLUMNS, MORE_TOPICS_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"
BASE = ["decide", str(EXAMPLE), "-c", "bm25", "--draws", "1000", "--chains", "2", "--seed", "4"]


def _run(*args):
    return CliRunner().invoke(app, [*BASE, *args], catch_exceptions=False)


def test_prints_the_decision_and_writes_both_tables(tmp_path):
    out = tmp_path / "decision.csv"
    result = _run("-C", "chal_*", "--margin", "0.03", "--topics", "10,50", "-o", str(out))
    assert result.exit_code == 0, result.output
    text = result.output
    assert "margin m = 0.03 AP" in text and "DEPLOY" in text
    assert "How many more topics would settle it" in text
    frame = pd.read_csv(out)
    assert list(frame.columns) == list(DECISION_COLUMNS)
    more = pd.read_csv(tmp_path / "decision_more_topics.csv")
    assert list(more.columns) == ["challenger", *MORE_TOPICS_COLUMNS, "sakai_total_topics"]
    assert sorted(more["topics_added"].unique()) == [10, 50]
    undecided = set(frame.loc[frame["action"] == "collect more data", "challenger"])
    assert set(more["challenger"]) == undecided and undecided


@pytest.mark.parametrize(
    ("args", "action"),
    [
        (["-C", "chal_fusion", "--margin", "0.03"], "deploy"),
        (["-C", "chal_dense", "--margin", "0.03"], "keep champion"),
        (["-C", "chal_rerank", "--margin", "0.03", "--topics", "0"], "collect more data"),
        (["-C", "chal_dense", "--margin", "0.05", "--non-inferiority"], "deploy"),
        (["-C", "chal_fusion", "--draws", "30"], "unreliable"),
    ],
)
def test_gate_exit_status_is_the_decision(tmp_path, args, action):
    out = tmp_path / "d.json"
    result = _run(*args, "--gate", "-o", str(out))
    assert result.exit_code == GATE_EXIT[action], result.output
    assert pd.read_json(out)["action"].tolist() == [action]


def test_the_rule_and_its_formulas_are_shown_on_request_only():
    # default: the table, how to read it and what to run next; --explain adds the rule
    # with its formulas, the reason of each action and the more-topics assumptions
    args = ["-C", "chal_*", "--margin", "0.03", "--topics", "10,50"]
    short, full = _run(*args).output, _run(*args, "--explain").output
    formulas = ("L_deploy = E[(s - d)+]", "exchangeable", "Sakai n",
                "chal_fusion: deploy: P(d > s)")  # fmt: skip
    for text in formulas:
        assert text not in short and text in full, text
    for text in (short, full):
        lines = text.splitlines()
        nexts = lines.index("next:")
        assert "bayes-ir review" in text[text.index("next:") :], text
        assert lines[nexts + 1].startswith("  ") and "# " in text[text.index("next:") :]


def test_a_misfitting_challenger_is_marked_and_its_step_is_a_better_model():
    # chal_risky's residual SD is about twice the others': the Gaussian model flags it
    text = _run("-C", "chal_*", "--margin", "0.03", "--topics", "0").output
    row = next(line for line in text.splitlines() if line.startswith("chal_risky"))
    assert row.startswith("chal_risky \u2020") and "unreliable" in row
    legend = next(line for line in text.splitlines() if line.startswith("\u2020 model misfit"))
    assert "chal_risky" in legend and "no decision is taken" in legend
    step = next(line for line in text.splitlines() if "# a model that describes" in line)
    assert step.startswith("  bayes-ir decide ") and "--likelihood auto" in step, step
    assert step.endswith("# a model that describes chal_risky"), step
    for line in text.splitlines():  # only chal_risky is marked
        assert "\u2020" not in line or "chal_risky" in line, line


def test_exit_codes_are_distinct_from_bad_input_and_failed_diagnostics():
    assert GATE_EXIT["deploy"] == 0
    assert len(set(GATE_EXIT.values())) == len(GATE_EXIT)
    assert 2 not in GATE_EXIT.values()


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["--topics", "10,x"], "--topics"),
        (["--topics", "-5"], "--topics"),
        (["--margin", "-1"], "margin"),
        (["--r", "0.5"], "loss weight"),
        (["--p-min", "0.3"], "p_min"),
    ],
)
def test_bad_options_give_one_error_line(args, word):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "bayes_ir", *BASE, "-C", "chal_*", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and word in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
