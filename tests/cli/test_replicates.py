"""Several runs per system (a seed column) on ``fit`` and ``decide``: the model of runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_ir.hierarchical.replicate_effects import REPLICATE_COLUMNS

DRAWS = ["--draws", "600", "--chains", "2", "--seed", "3", "--quiet"]


def _runs(n_topics=25, n_runs=4, gain=0.0, run_sd=0.02, seed=1):
    rng = np.random.default_rng(seed)
    topic = rng.normal(0.45, 0.12, n_topics)
    rows = []
    for s, shift in (("bm25", 0.0), ("dense", gain), ("other", 0.01)):
        inter = rng.normal(0, 0.03, n_topics)
        for r in range(n_runs):
            rho = rng.normal(0, run_sd)
            y = np.clip(topic + shift + inter + rho + rng.normal(0, 0.04, n_topics), 0, 1)
            rows += [(s, f"q{t}", f"seed{r}", y[t]) for t in range(n_topics)]
    return pd.DataFrame(rows, columns=["system", "topic", "seed", "score"])


@pytest.fixture
def runs_file(tmp_path):
    path = tmp_path / "runs.csv"
    _runs().to_csv(path, index=False)
    return path


def test_fit_reads_the_seeds_and_prints_both_questions(run_cli, runs_file, tmp_path):
    out = tmp_path / "runs_out.csv"
    figures = tmp_path / "figs"
    figures.mkdir()
    code, text, err = run_cli(["fit", str(runs_file), "-c", "bm25", "-C", "dense", "-o", str(out),
                               "--figures", str(figures), *DRAWS])  # fmt: skip
    assert code == 0, err
    assert "replicates per system: bm25 4, dense 4, other 4" in text
    for words in ("Bayesian model of runs", "run-to-run (seed) SD", "In expectation over seeds",
                  "One run of each", "P(run beats)"):  # fmt: skip
        assert words in text, words
    frame = pd.read_csv(out)
    assert tuple(frame.columns) == REPLICATE_COLUMNS
    assert list(frame["over"]) == ["expectation", "single_run"]
    assert (figures / "runs.png").stat().st_size > 1000
    steps = text.split("next:")[1]
    assert "bayes-ir decide" in steps and "--over single_run" in steps


def test_decide_in_expectation_and_on_one_run(run_cli, tmp_path):
    path = tmp_path / "runs.csv"
    _runs(n_topics=60, n_runs=6, gain=0.06, run_sd=0.05, seed=4).to_csv(path, index=False)
    args = [str(path), "-c", "bm25", "-C", "dense", *DRAWS]
    code, text, err = run_cli(["decide", *args])
    assert code == 0, err
    assert "in expectation over runs): " in text
    assert "P(run beats)" in text and "6 vs 6" in text
    code, single, err = run_cli(["decide", *args, "--over", "single_run", "--explain"])
    assert code == 0, err
    assert "on one run of each): " in single
    assert "--over expectation" in single.split("next:")[1]


def test_the_plan_of_more_topics_or_seeds_names_the_cheapest_cell(run_cli, tmp_path):
    path = tmp_path / "runs.csv"
    _runs(n_topics=20, n_runs=3, gain=0.03, run_sd=0.04, seed=6).to_csv(path, index=False)
    code, text, err = run_cli(["decide", str(path), "-c", "bm25", "-C", "dense",
                               "--cost-run", "5", *DRAWS])  # fmt: skip
    assert code == 0, err
    if "COLLECT MORE DATA" in text:
        assert "More topics or more seeds?" in text
        assert "dense:" in text.split("More topics or more seeds?")[1]


@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        ("fit", ["--likelihood", "skew_normal"], "the model is Gaussian"),
        ("fit", ["--save", "x.nc"], "--sweep and --save apply to one score per cell"),
        ("fit", ["--sigma-replicate", "topic"], "sigma_replicate"),
        ("decide", ["--over", "new"], "over"),
        ("decide", ["--r", "2"], "--r and --topics apply to one score per cell"),
        ("risk", [], "replicates per system"),
    ],
)
def test_bad_options_say_so_in_one_line(run_cli, runs_file, command, args, message):
    extra = [] if command == "risk" else DRAWS
    code, out, err = run_cli([command, str(runs_file), "-c", "bm25", "-C", "dense", *args, *extra])
    assert code == 2, (out, err)
    assert message in err and "Traceback" not in err
    assert sum(line.startswith("error:") for line in err.splitlines()) == 1, err


def test_over_without_groups_or_runs_is_refused(run_cli, tmp_path):
    path = tmp_path / "plain.csv"
    _runs(n_runs=1).drop(columns="seed").to_csv(path, index=False)
    code, out, err = run_cli(["decide", str(path), "-c", "bm25", "-C", "dense", "--over",
                              "single_run", *DRAWS])  # fmt: skip
    assert code == 2
    assert "--over applies with --by/--segments or several runs per system" in err


def test_review_of_runs_writes_one_html_file(run_cli, runs_file, tmp_path):
    out = tmp_path / "review.html"
    code, text, err = run_cli(["review", str(runs_file), "-c", "bm25", "-C", "dense", "-o",
                               str(out), "--cost-run", "2", *DRAWS])  # fmt: skip
    assert code == 0, err
    assert "In expectation over seeds: dense: " in text
    assert "On one run of each: dense: " in text
    assert "P(a random run beats bm25's): dense " in text
    assert "wrote" in text + err and out.name in text + err
    html = out.read_text()
    for part in ('id="decision-expectation"', 'id="decision-single_run"', 'id="run-beats"',
                 'aria-label="runs per system"', "paired t-test", "Provenance",
                 "cost of a topic 1.0, of a run 2.0"):  # fmt: skip
        assert part in html, part
    steps = text.split("next:")[1]
    assert "bayes-ir decide" in steps and "--over single_run --gate" in steps
    assert steps.count("--draws") == steps.count("bayes-ir")  # never twice in one command


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--r", "2"], "--r applies to one score per cell"),
        (["--likelihood", "skew_normal"], "the model is Gaussian"),
    ],
)
def test_review_of_runs_refuses_options_of_one_score_per_cell(run_cli, runs_file, tmp_path,
                                                              args, message):  # fmt: skip
    out = tmp_path / "review.html"
    code, _, err = run_cli(["review", str(runs_file), "-c", "bm25", "-C", "dense", "-o",
                            str(out), *args, *DRAWS])  # fmt: skip
    assert code == 2 and message in err, err
    assert not out.exists()


def test_review_without_runs_refuses_the_options_of_runs(run_cli, tmp_path):
    path = tmp_path / "one.csv"
    _runs().query("seed == 'seed0'").drop(columns="seed").to_csv(path, index=False)
    out = str(tmp_path / "r.html")
    code, _, err = run_cli(["review", str(path), "-c", "bm25", "-C", "dense", "-o", out,
                            "--sigma-replicate", "system", *DRAWS])  # fmt: skip
    assert code == 2 and "apply to several runs per system" in err, err


def test_inspect_logs_with_epochs_as_runs_end_to_end(run_cli):
    from pathlib import Path

    from bayes_ir.readers import read_scores

    tests = Path(__file__).resolve().parents[1]
    logs = [str(p) for p in sorted((tests / "readers" / "llm_logs" / "inspect").glob("*.json"))]
    models = read_scores(logs).systems
    code, text, err = run_cli(["inspect", *logs, "--epochs-as-runs"])
    assert code == 0, err
    assert "replicates per system" in text
    roles = ["-c", models[0], "-C", models[1]]
    code, text, err = run_cli(["fit", *logs, *roles, "--epochs-as-runs", *DRAWS])
    assert code == 0, err
    assert "Bayesian model of runs" in text and "2 vs 2" in text
    assert "--epochs-as-runs" in text.split("next:")[1]
    example = str(tests.parent / "data" / "example_scores.csv")
    code, _, err = run_cli(["fit", example, "-c", "x", "--epochs-as-runs"])
    assert code == 2 and "--epochs-as-runs does not apply to tidy input" in err
