"""The CLI entry point: help, version, and bad input as one `error:` line with status 2."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

from bayes_ir.cli import cli_wording, main

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


def test_only_the_console_script_freezes_the_garbage_collector(capsys, monkeypatch):
    """``main()`` as the console script calls it (arguments from ``sys.argv``) freezes the
    collector before exiting (the process ends); ``main(argv)`` in a host process does not."""
    import gc

    calls = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(1))
    assert run(["--version"], capsys)[0] == 0 and calls == []
    monkeypatch.setattr(sys, "argv", ["bayes-ir", "--version"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 0 and calls == [1]
    assert capsys.readouterr().out.startswith("bayes-ir ")


def test_version_is_the_one_in_pyproject(capsys):
    """`--version` and `bayes_ir.__version__` both read pyproject.toml's `version`."""
    import bayes_ir

    pyproject = tomllib.loads((DATA.parent / "pyproject.toml").read_text(encoding="utf-8"))
    expected = pyproject["project"]["version"]
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.strip() == f"bayes-ir {expected}"
    assert bayes_ir.__version__ == expected


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


EXAMPLE = DATA / "example_scores.csv"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # Usage errors were a multi-line "Usage: ... ╭─ Error ─╮" box.
        (["fit", str(EXAMPLE)], "Missing option '--champion'"),
        (["fit", str(EXAMPLE), "-c", "bm25", "--chains", "abc"], "Invalid value for '--chains'"),
        (["inspect", str(EXAMPLE), "--bogus"], "No such option: --bogus"),
        (
            ["glm", str(EXAMPLE), "--boundary", "winsor"],
            "--boundary must be one of 'clip', 'drop_systems', 'none', got 'winsor'",
        ),
        # --ci-prob 95 was a ValueError traceback (status 1).
        (["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--ci-prob", "95"], "--ci-prob"),
        (["reliability", str(EXAMPLE), "--intervals", "--ci-prob", "2"], "strictly between 0"),
        (["meta", str(DATA / "example_meta.yaml"), "--ci-prob", "0"], "--ci-prob"),
        # A figure format matplotlib cannot write was a traceback after the analysis.
        (["meta", str(DATA / "example_meta.yaml"), "--plot", "f.docx"], "figure format"),
        (["risk", str(EXAMPLE), "-c", "bm25", "--plot", "r.doc"], "figure format"),
        (["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--target-accept", "2"], "0 and 1"),
        # Tracebacks from deep inside the methods (IndexError, ValueError, FileExistsError):
        (["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--draws", "0"], "'--draws'"),
        (["risk", str(EXAMPLE), "-c", "bm25", "--resamples", "0"], "--resamples must be at least"),
        (["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--figures", str(EXAMPLE)], "a file"),
        (["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--save", "fit.txt"], "*.nc"),
    ],
)
def test_usage_errors_are_one_line(capsys, argv, message):
    code, _, err = run(argv, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "extra",
    [
        ["--output", "decision.xlsx"],  # was refused only after the whole fit
        ["--likelihood", "student"],  # was refused after the table summary was printed
    ],
)
def test_bad_options_are_refused_before_any_work(capsys, extra):
    code, out, err = run(["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", *extra], capsys)
    assert code == 2 and out == "", out
    assert err.startswith("error: ")


def test_several_measures_name_the_cli_option(capsys):
    argv = ["fit", str(DATA / "example_trec_eval.txt"), "-c", "bm25", "-C", "dense"]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert "several measures (AP, P@5, nDCG@10); pick one with --measure" in err
    assert "table.select" not in err


def test_library_wording_becomes_cli_options(tmp_path, capsys):
    gaps = tmp_path / "gaps.csv"
    gaps.write_text("system,topic,score\na,1,0.5\na,2,0.25\nb,1,0.75\n", encoding="utf-8")
    code, _, err = run(["fit", str(gaps), "-c", "a", "-C", "b"], capsys)
    assert code == 2
    assert "--missing intersect" in err and "--missing keep" in err
    assert "missing=" not in err
    nan = tmp_path / "nan.csv"
    nan.write_text("system,topic,score\na,1,0.5\na,2,NaN\nb,1,0.75\nb,2,0.5\n", encoding="utf-8")
    code, _, err = run(["inspect", str(nan)], capsys)
    assert code == 2 and f"{nan}:3:" in err and "--missing keep or --missing intersect" in err
    code, _, err = run(["inspect", str(DATA / "example_runs" / "bm25.run")], capsys)
    assert code == 2 and err.strip() == "error: TREC runs need relevance judgments: pass --qrels"
    assert cli_wording("run more draws (draws=...) or raise target_accept") == (
        "run more draws (--draws) or raise --target-accept"
    )


def test_pytensor_future_warnings_are_silenced():
    """`fit --likelihood skew_normal` printed pytensor's "sgn is deprecated" FutureWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(SystemExit):
            main(["--version"])
        warnings.warn_explicit(
            "sgn is deprecated", FutureWarning, "math.py", 1, module="pytensor.tensor.math"
        )
        warnings.warn_explicit("ours", FutureWarning, "x.py", 1, module="bayes_ir.x")
    assert [str(w.message) for w in caught] == ["ours"]


def test_python_dash_m(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bayes_ir", "--version"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout.startswith("bayes-ir "), proc.stderr


def test_rescaled_scores_can_be_read_from_the_shell(tmp_path, capsys):
    """The error said "pass check_range=False", which no command accepted."""
    path = tmp_path / "rescaled.csv"
    path.write_text("system,topic,measure,score\na,1,AP,1.5\na,2,AP,0.5\nb,1,AP,0.7\nb,2,AP,0.2\n")
    code, _, err = run(["inspect", str(path)], capsys)
    assert code == 2 and "pass --no-range-check" in err and "check_range" not in err
    code, out, _ = run(["inspect", str(path), "--no-range-check"], capsys)
    assert code == 0 and "1.0000" in out  # mean of a: (1.5 + 0.5) / 2


def test_package_warnings_print_as_one_line(capsys):
    """DataWarning and ConvergenceWarning reach the shell as ``warning: ...``, not a file path."""
    from bayes_ir.cli import _show_warning
    from bayes_ir.errors import DataWarning

    _show_warning(
        DataWarning("dropped 3 topics\nnot scored by every system"), DataWarning, "x.py", 1
    )
    err = capsys.readouterr().err
    assert err.strip() == "warning: dropped 3 topics not scored by every system"
    assert "x.py" not in err


def test_draws_help_states_the_package_defaults():
    """The --draws help is written out (no fitting import at startup): the skew-normal's
    numbers it states are what skew_normal_draws does."""
    import re
    import typing

    from bayes_ir import defaults
    from bayes_ir.cli._app import Draws
    from bayes_ir.hierarchical.fit import skew_normal_draws

    text = " ".join(typing.get_args(Draws)[1].help.split())
    assert f"ESS >= {defaults.DRAWS_ESS:,.0f} with a margin for the exact and Gibbs" in text
    found = re.search(r"([\d,]+) for the skew-normal up to ([\d,]+) cells, fewer above in "
                      r"proportion, at least ([\d,]+);", text)  # fmt: skip
    most, cells, least = (int(g.replace(",", "")) for g in found.groups())
    assert skew_normal_draws(1) == skew_normal_draws(cells) == most
    assert skew_normal_draws(cells + 1) < most
    assert skew_normal_draws(2 * cells) == pytest.approx(most / 2, abs=1)
    assert skew_normal_draws(10**9) == least
    assert f"{defaults.DRAWS:,} for other NUTS fits" in text
