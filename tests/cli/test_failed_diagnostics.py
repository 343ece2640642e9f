"""Every command that fits prints one ``warning:`` line per failed diagnostics check.

The reference is the library run with the same data, options and seed: its gate
messages, in the CLI's words, must be exactly the stderr lines.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from bayes_ir.cli import cli_wording, main
from bayes_ir.hierarchical import fit
from bayes_ir.hierarchical.contrasts import compare
from bayes_ir.readers import read_scores
from bayes_ir.risk.review import risk_review

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "example_scores.csv"
TINY = ["--draws", "30", "--chains", "2", "--seed", "5"]  # far too few draws: the checks fail

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="data/example_scores.csv missing")


def _run(argv, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    return info.value.code, out, err


def _diagnostics_lines(err: str) -> list[str]:
    """The diagnostics warnings among the stderr lines (a model-check warning may follow)."""
    return [line for line in err.splitlines() if line.startswith("warning: diagnostics failed")]


def _expected(messages) -> list[str]:
    return [" ".join(cli_wording(f"warning: diagnostics failed: {m}").split()) for m in messages]


@pytest.fixture(scope="module")
def table():
    return read_scores(EXAMPLE).with_roles(champion="bm25", challengers="chal_*")


def test_fit_warns_once_per_failed_check(table, capsys, monkeypatch):
    from bayes_ir.cli import _app

    monkeypatch.setattr(_app.console_err, "width", 10_000)  # one terminal line per warning
    code, out, err = _run(["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", *TINY], capsys)
    assert code == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gate = compare(fit(table, draws=30, chains=2, seed=5)).gate
    assert not gate.passed and len(gate.messages) >= 2
    assert _diagnostics_lines(err) == _expected(gate.messages)
    assert "FAILED" in out


def test_risk_warns_once_per_failed_check(table, capsys, monkeypatch):
    from bayes_ir.cli import _app

    monkeypatch.setattr(_app.console_err, "width", 10_000)
    argv = ["risk", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--resamples", "200", *TINY]
    code, out, err = _run(argv, capsys)
    assert code == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        review = risk_review(table, draws=30, chains=2, seed=5, n_resamples=200)
    assert not review.brisk.diagnostics_passed
    assert _diagnostics_lines(err) == _expected(review.brisk.diagnostics_messages)
    assert "DIAGNOSTICS FAILED" in out


def test_strict_still_exits_3_with_the_warnings(capsys):
    argv = ["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", *TINY, "--strict"]
    code, _, err = _run(argv, capsys)
    assert code == 3 and _diagnostics_lines(err)
