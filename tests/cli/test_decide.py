"""``bayes-ir decide``: the table, the more-topics table, the files and the --gate exit codes."""

from __future__ import annotations

import re
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
    flat_short, flat_full = " ".join(short.split()), " ".join(full.split())  # captions wrap
    for text in formulas:
        assert text not in flat_short and text in flat_full, text
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
        (["--p-min", "0.3"], "--p-min"),
    ],
)
def test_bad_options_give_one_error_line(run_cli, args, word):
    # main() in this process, as the console script calls it (a real process:
    # tests/cli/test_main.py::test_subprocess_exit_status_and_single_line)
    code, _, err = run_cli([*BASE, "-C", "chal_*", *args])
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and word in lines[0], err
    assert "Traceback" not in err


def _observed(challenger: str, champion: str = "bm25") -> float:
    """The raw mean difference over the topics both systems have, from the file itself."""
    wide = pd.read_csv(EXAMPLE).pivot(index="topic", columns="system", values="score")
    both = wide[[challenger, champion]].dropna()
    return float((both[challenger] - both[champion]).mean())


def test_observed_difference_beside_the_model_and_why_they_differ(tmp_path):
    out = tmp_path / "d.csv"
    result = _run("-C", "chal_*", "--margin", "0.03", "--topics", "0", "-o", str(out))
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out).set_index("challenger")
    for name in ("chal_fusion", "chal_rerank"):  # far from 0: the pull shows
        row = next(line for line in result.output.splitlines() if line.startswith(name))
        observed, mean = row.split()[1:3]
        assert float(observed) == pytest.approx(_observed(name), abs=5e-5)
        assert float(mean) == pytest.approx(frame.loc[name, "mean"], abs=5e-5)
        assert abs(float(mean)) < abs(float(observed))  # pooled towards 0
    # the line gives the model-wide share E[B]; each contrast's own share is within MC error
    share = 1 - frame.loc["chal_fusion", "mean"] / _observed("chal_fusion")
    said = re.search(r"mean is pulled about (\d+)% of the way from observed to 0", result.output)
    assert said and abs(int(said.group(1)) / 100 - share) < 0.02
    assert "45 system effects (the 40 artifact runs included)" in result.output


@pytest.mark.parametrize(
    ("likelihood", "said"),
    [
        ("gaussian", "--pooling artifacts needs at least 2 artifact runs to pool and this fit "
                     "has 0: include other runs"),
        ("bernoulli", "--pooling none leaves every system unpooled"),
    ],
)  # fmt: skip
def test_the_pull_line_offers_no_way_out_that_is_refused(tmp_path, likelihood, said):
    # two systems, no artifact runs: --pooling artifacts would be refused, so it is not
    # offered; the logit families' --pooling none is offered, and runs
    import numpy as np

    rng = np.random.default_rng(5)
    a = rng.normal(0, 1, (50, 1))
    y = (rng.random((50, 2)) < 1 / (1 + np.exp(-(np.array([0.9, 1.7]) + a)))).astype(int)
    rows = [("accuracy", s, f"q{t}", y[t, j]) for j, s in enumerate(("base", "new"))
            for t in range(50)]  # fmt: skip
    path = tmp_path / "two.csv"
    pd.DataFrame(rows, columns=["measure", "system", "topic", "score"]).to_csv(path, index=False)
    args = ["fit", str(path), "-c", "base", "-C", "new", "--likelihood", likelihood,
            "--draws", "1000", "--chains", "2", "--seed", "1"]  # fmt: skip
    pooled = ["--pooling", "all"] if likelihood == "bernoulli" else []  # auto: none
    result = CliRunner().invoke(app, [*args, *pooled], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    line = " ".join(result.output.split())  # the line may wrap on a narrow terminal
    assert "mean is pulled about" in line and said in line
    assert "leaves the champion and challengers unpooled" not in line
    assert "pools the 2 system effects (no artifact runs among them)" in line
    if likelihood == "bernoulli":  # the way out runs; it is the default here
        for extra in (["--pooling", "none"], []):
            result = CliRunner().invoke(app, [*args, *extra], catch_exceptions=False)
            assert result.exit_code == 0, result.output
            assert "mean is pulled" not in result.output and "decide" in result.output
            assert ("--pooling none" in result.output) == bool(extra)  # the next steps


def test_pooling_artifacts_leaves_the_champion_and_challengers_unpooled(tmp_path, run_cli):
    # flat priors on the champion and challengers of a complete Gaussian table: each
    # contrast's posterior mean is the observed difference (up to Monte Carlo error)
    out = tmp_path / "d.csv"
    result = _run("-C", "chal_fusion", "--pooling", "artifacts", "--topics", "0", "-o", str(out))
    assert result.exit_code == 0, result.output
    row = pd.read_csv(out).iloc[0]
    assert row["mean"] == pytest.approx(_observed("chal_fusion"), abs=2e-3)
    assert "pulled about" not in result.output
    code, _, err = run_cli([*BASE, "-C", "chal_fusion", "--pooling", "challengers"])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--pooling" in err and "'artifacts'" in err and "'challengers'" in err
