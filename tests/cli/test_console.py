"""Output off a terminal (a file, a pipe, a CI log) is never wrapped or split; --help flags."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bayes_ir.cli._app import UNWRAPPED_WIDTH, _Console

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="data/example_scores.csv missing")

#: Sampler settings that keep the runs short (the exact sampler: no tuning).
QUICK = ["--draws", "1000", "--chains", "2", "--seed", "4"]


def _tables(text: str) -> list[list[str]]:
    """Each rich table of ``text``: title, header, rule, rows and caption (the lines that
    rich pads to the table's width, which is the width of its rule)."""
    lines = text.splitlines()
    tables = []
    for i, line in enumerate(lines):
        if line and set(line) == {"\u2500"}:
            j = i + 1
            while j < len(lines) and len(lines[j]) == len(line):
                j += 1
            tables.append(lines[i - 2 : j])
    return tables


def _run_to_file(argv: list[str], tmp_path: Path) -> str:
    """Run ``bayes-ir ARGV > out.txt 2>&1`` with COLUMNS=80 (as a CI log might set it)."""
    out = tmp_path / "out.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    with out.open("w") as handle:
        proc = subprocess.run([sys.executable, "-m", "bayes_ir", *argv], cwd=ROOT, env=env,
                              stdout=handle, stderr=subprocess.STDOUT, timeout=600)  # fmt: skip
    assert proc.returncode == 0, out.read_text()
    return out.read_text(encoding="utf-8")


def test_a_console_off_a_terminal_takes_the_unwrapped_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert _Console(file=io.StringIO()).width == UNWRAPPED_WIDTH
    assert _Console(file=io.StringIO(), force_terminal=True).width == 80  # a terminal: its own
    assert _Console(file=io.StringIO(), width=60).width == 60  # a width given is kept


def test_decide_in_a_file_keeps_every_row_on_one_line(tmp_path):
    """In a file the action cell was wrapped ("collect more / data") at 80 columns, and the
    warning could end up glued to a line of the table."""
    text = _run_to_file(["decide", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", *QUICK], tmp_path)
    tables = _tables(text)
    assert len(tables) == 2  # the decision and the more-topics table
    for table in tables:
        width = len(table[2])
        assert all(len(line) == width for line in table), table  # nothing wider, nothing cut
    rows = {line.split()[0]: line for line in tables[0][3:] if line.startswith("chal_")}
    assert set(rows) == {"chal_dense", "chal_fusion", "chal_rerank", "chal_risky"}
    assert rows["chal_dense"].rstrip().endswith("collect more data")
    # stderr's lines are whole lines of their own, before the table
    warned = [line for line in text.splitlines() if "warning:" in line]
    assert warned and all(line.startswith("warning: ") for line in warned)
    assert text.index("warning:") < text.index("Decision vs champion")


def test_risk_in_a_file_is_one_table(tmp_path):
    """At 80 columns the risk table was split into "1 of 2" and "2 of 2"."""
    argv = ["risk", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--resamples", "200", *QUICK]
    text = _run_to_file(argv, tmp_path)
    assert "1 of 2" not in text and "2 of 2" not in text
    (table,) = _tables(text)
    assert "URisk-" in table[1] and "BRisk-" in table[1] and "GeoRisk-" in table[1]
    assert all(len(line) == len(table[2]) for line in table)


def test_flags_show_no_value_type_in_help(run_cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    for argv in (["--help"], ["fit", "--help"], ["risk", "--help"]):
        code, out, err = run_cli(argv)
        assert code == 0, err
        assert "<bool>" not in out, argv
        assert "--help" in out
    assert "--explain" in out and "--strict" in out
    assert "<float>" in out  # options that take a value still say which
