"""``bayes-ir review``: writes the HTML review, refuses bad outputs before any work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from markupsafe import escape
from typer.testing import CliRunner

from bayes_ir.cli import app

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
        (["-o", "x.html", "--min-gain", "nan"], "margin"),
        (["-o", str(EXAMPLE.with_suffix(".html"))], None),
    ],
)
def test_bad_options_give_one_error_line(tmp_path, args, word):
    if word is None:  # an output that is the input itself (through a link named .html)
        link = tmp_path / "scores.html"
        link.symlink_to(EXAMPLE)
        args, word, inputs = ["-o", str(link)], "input", [str(link)]
    else:
        inputs = [str(EXAMPLE)]
    before = EXAMPLE.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "bayes_ir", "review", *inputs, "-c", "bm25", "-C", "chal_*",
         *args], capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("error:") and word in lines[0], lines
    assert EXAMPLE.read_bytes() == before  # the input is never touched
