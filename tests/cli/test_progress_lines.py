"""Progress on stderr: plain lines when piped, a bar on a terminal, nothing with --quiet."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from bayes_ir import progress
from bayes_ir.cli import _progress

DATA = Path(__file__).resolve().parents[2] / "data"


def test_line_reporter_says_share_and_time_left():
    out = io.StringIO()
    reporter = _progress.LineReporter(Console(file=out, width=200), every=0)
    with progress.reporting(reporter), progress.task("fits", total=4) as step:
        step.advance()
        step.update(2)
    lines = out.getvalue().splitlines()
    assert re.fullmatch(r"fits: 25% \(1 of 4\), \d+ s so far, about \d+ s left", lines[0])
    assert lines[1].startswith("fits: 50% (2 of 4)")
    assert re.fullmatch(r"fits: ended after \d+ s", lines[2])


def test_line_reporter_without_total():
    out = io.StringIO()
    reporter = _progress.LineReporter(Console(file=out, width=200), every=0)
    with progress.reporting(reporter), progress.task("reading") as step:
        step.update(7)
    assert out.getvalue().splitlines()[0].startswith("reading: 7 done, ")


def test_a_terminal_gets_the_bar_a_pipe_gets_lines():
    terminal = Console(file=io.StringIO(), force_terminal=True)
    piped = Console(file=io.StringIO(), force_terminal=False)
    assert isinstance(_progress.reporter_for(terminal, quiet=False), _progress.BarReporter)
    assert isinstance(_progress.reporter_for(piped, quiet=False), _progress.LineReporter)
    assert _progress.reporter_for(terminal, quiet=True) is None


def test_bar_reporter_runs_and_vanishes():
    out = io.StringIO()
    reporter = _progress.BarReporter(Console(file=out, force_terminal=True, width=100))
    with progress.reporting(reporter), progress.task("fits", total=2) as step:
        step.advance()
        step.advance()
    assert "fits" in out.getvalue()


def test_cli_prints_progress_lines_and_quiet_silences_them(monkeypatch, run_cli):
    monkeypatch.setattr(_progress, "EVERY", 0.0)
    args = ["glm", str(DATA / "example_scores.csv"), "--links", "logit,probit"]
    code, _, err = run_cli(args)
    assert code == 0 and "GLM fits: ended after" in err
    code, _, err = run_cli([*args, "--quiet"])
    assert code == 0 and "GLM fits" not in err
