"""The CLI entry point: help, version, and bad input as one `error:` line with status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bayes_ir.cli import main

DATA = Path(__file__).resolve().parents[2] / "data"


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    return info.value.code, out, err


def test_help_lists_commands(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    assert "Is the new system really better" in out and "inspect" in out


def test_version(capsys):
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.startswith("bayes-ir ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["inspect", "missing_file.csv"], "missing_file.csv: file not found"),
        (
            ["inspect", str(DATA / "example_scores.csv"), "--measure", "P@10"],
            "no rows with measure 'P@10'",
        ),
        (
            ["inspect", str(DATA / "example_scores.csv"), "--collection", "robust"],
            "collection 'robust' is not in the data",
        ),
        (
            [
                "inspect",
                str(DATA / "example_runs" / "bm25.run"),
                "--qrels",
                str(DATA / "example_runs" / "qrels.txt"),
                "--measure",
                "nDCG@@3",
            ],
            "is not a measure ir_measures can parse",
        ),
        (["inspect", str(DATA / "example_scores.csv"), "--missing", "maybe"], "missing must be"),
        (
            ["inspect", str(DATA / "example_scores.csv"), "--input-format", "xml"],
            "unknown input format 'xml'",
        ),
        (
            ["inspect", str(DATA / "example_scores.csv"), "--output", "out.xlsx"],
            "cannot tell the output format",
        ),
    ],
)
def test_bad_input_one_error_line_exit_2(capsys, argv, message):
    code, _, err = run(argv, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err


def test_bad_file_content(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("system,topic,score\na,1,0.5\na,2,oops\n", encoding="utf-8")
    code, _, err = run(["inspect", str(bad)], capsys)
    assert code == 2
    assert err.strip() == f"error: {bad}:3: score 'oops' of system 'a', topic '2' is not a number"


def test_subprocess_exit_status_and_single_line(tmp_path):
    bad = tmp_path / "latin.csv"
    bad.write_bytes("system,topic,score\nsyst\xe8me,1,0.5\n".encode("latin-1"))
    proc = subprocess.run(
        [sys.executable, "-c", "from bayes_ir.cli import main; main()", "inspect", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: {bad}:2: not UTF-8 text (byte 0xe8 at offset 23); re-encode the file as UTF-8"
    ]
