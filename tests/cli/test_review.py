"""``bayes-ir review``: writes the HTML review, refuses bad outputs before any work."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markupsafe import escape
from typer.testing import CliRunner

from bayes_ir.cli import app
from bayes_ir.cli._inputs import Scores, uses_scores

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"


def test_writes_the_review(tmp_path, monkeypatch):
    out = tmp_path / "sub" / "review.html"
    args = ["review", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "-o", str(out),
            "--draws", "1000", "--chains", "2", "--r", "1,5", "--resamples", "999",
            "--min-gain", "0.03"]  # fmt: skip
    monkeypatch.setattr("sys.argv", ["bayes-ir", *args])  # the command line, as a shell gives it
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    html = out.read_text()
    headline = result.stdout.splitlines()[0]  # stderr (progress lines) aside
    assert str(escape(headline)) in html  # the printed headline is the report's
    assert "bayes-ir review " + str(EXAMPLE) in html  # the exact command is in the provenance
    assert [p.name for p in out.parent.iterdir()] == ["review.html"]  # no temporary file left


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["-o", "review.csv"], "*.html"),
        (["-o", "x.html", "--r", "1,0.5"], "--r"),
        (["-o", "x.html", "--min-gain", "nan"], "--min-gain"),
        (["-o", str(EXAMPLE.with_suffix(".html"))], None),
    ],
)
def test_bad_options_give_one_error_line(run_cli, tmp_path, monkeypatch, args, word):
    if word is None:  # an output that is the input itself (through a link named .html)
        link = tmp_path / "scores.html"
        link.symlink_to(EXAMPLE)
        args, word, inputs = ["-o", str(link)], "input", [str(link)]
    else:
        inputs = [str(EXAMPLE)]
    before = EXAMPLE.read_bytes()
    # main() in this process, as the console script calls it, run from tmp_path (relative
    # outputs land there); a real process: tests/cli/test_main.py
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["review", *inputs, "-c", "bm25", "-C", "chal_*", *args])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("error:") and word in lines[0], lines
    assert "Traceback" not in err
    assert EXAMPLE.read_bytes() == before  # the input is never touched
    assert not [p for p in tmp_path.iterdir() if p.name != "scores.html"]  # nothing written


def test_several_measures_write_one_document(tmp_path, monkeypatch):
    """-m AP -m sqrtAP: one file, the decision for every challenger x measure first."""
    import pandas as pd

    frame = pd.read_csv(EXAMPLE)
    scores = tmp_path / "scores.csv"
    pd.concat([frame, frame.assign(measure="sqrtAP", score=frame["score"] ** 0.5)]).to_csv(
        scores, index=False
    )
    out = tmp_path / "out" / "review.html"
    args = ["review", str(scores), "-c", "bm25", "-C", "chal_fusion", "-C", "chal_dense",
            "-a", "trec_run0*", "-m", "AP", "-m", "sqrtAP", "-o", str(out), "--draws", "500",
            "--chains", "2", "--r", "5", "--resamples", "199", "--min-gain", "0.03"]  # fmt: skip
    monkeypatch.setattr("sys.argv", ["bayes-ir", *args])
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "measure AP" not in result.stdout  # not run once per measure
    assert [p.name for p in out.parent.iterdir()] == ["review.html"]  # no review_AP.html
    html = out.read_text()
    rows = re.findall(
        r'<tr data-challenger="([^"]+)" data-measure="([^"]+)">.*?'
        r'<td class="action text \w+" data-label="action"><span>\S+ ([a-z ]+)</span></td>', html,
        re.S,
    )  # fmt: skip
    assert sorted((c, m) for c, m, _ in rows) == sorted(
        (c, m) for c in ("chal_dense", "chal_fusion") for m in ("AP", "sqrtAP")
    )
    headline = result.stdout.splitlines()[0]  # stderr (progress lines) aside
    assert str(escape(headline)) in html
    actions = {}
    for challenger, _, action in rows:
        actions.setdefault(challenger, []).append(action)
    deployable = [c for c, acts in actions.items() if acts == ["deploy", "deploy"]]
    assert headline.startswith("Deploy") == bool(deployable)  # deploy: every measure says so
    if deployable:
        assert headline.split(":")[0].removeprefix("Deploy ") in deployable
    assert html.index('id="summary-table"') < html.index('id="m1-decision"') < html.index(
        'id="m2-decision"'
    ) < html.index('id="provenance"')  # fmt: skip
    assert html.count('id="provenance"') == 1


def test_a_command_can_take_every_measure_at_once(monkeypatch):
    """uses_scores(per_measure=False) hands the command all measures; the default splits them."""
    import typer

    seen = []

    def command(scores: Scores) -> None:
        seen.append([view.measure for view in scores.each_measure()] + [scores.measure])

    monkeypatch.setattr("bayes_ir.cli._inputs.Scores.read_once", lambda self: None)
    args = [str(EXAMPLE), "-c", "bm25", "-m", "AP", "-m", "P@10", "--quiet"]
    for per_measure in (False, True):
        cli = typer.Typer()
        cli.command()(uses_scores(roles=True, per_measure=per_measure)(command))
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    together, *once_each = seen
    assert together == [["AP"], ["P@10"], ["AP", "P@10"]]  # the command splits them itself
    assert once_each == [[["AP"], ["AP"]], [["P@10"], ["P@10"]]]  # run once per measure
