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


def _failed(*, divergences=None, bfmi_ok=None, rhat_ok=True, ess_ok=True, **provenance):
    from types import SimpleNamespace

    diagnostics = SimpleNamespace(
        divergences=divergences,
        divergences_ok=None if divergences is None else divergences == 0,
        bfmi_ok=bfmi_ok,
        rhat_ok=rhat_ok,
        ess_ok=ess_ok,
        draws=provenance.get("draws", 1000),
    )
    return SimpleNamespace(diagnostics=diagnostics, provenance=provenance)


@pytest.mark.parametrize(
    ("fit", "changed", "why"),
    [  # each failed check its own remedy (Diagnostics.failures): divergences are not cured
        # by more draws, but by smaller steps
        (_failed(divergences=7, draws=2000, tune=1000, target_accept=0.95),
         {"target_accept": 0.99}, "target_accept 0.99 (7 divergent transitions)"),
        (_failed(divergences=7, draws=2000, tune=1000, target_accept=0.9),
         {"target_accept": 0.99}, "target_accept 0.99 (7 divergent transitions)"),
        (_failed(divergences=3, draws=2000, tune=1000, target_accept=0.99),
         {"target_accept": 0.995}, "target_accept 0.995 (3 divergent transitions)"),
        (_failed(divergences=3, draws=2000, tune=1000, target_accept=0.995),
         {"tune": 2000}, "a warm-up of 2,000"),  # no higher rung: a longer warm-up
        (_failed(divergences=0, bfmi_ok=False, draws=2000, tune=500, target_accept=0.9),
         {"tune": 1000}, "a warm-up of 1,000"),
        (_failed(divergences=0, rhat_ok=False, draws=2000, tune=500, target_accept=0.9),
         {"draws": 4000}, "more draws"),
        (_failed(divergences=4, ess_ok=False, draws=2000, tune=500, target_accept=0.95),
         {"target_accept": 0.99, "draws": 4000},
         "target_accept 0.99 (4 divergent transitions) and more draws"),
        (_failed(ess_ok=False, draws=3125, tune=None), {"draws": 6250}, "more draws"),  # exact
        (_failed(ess_ok=False, draws=30, tune=None), {"draws": 2000}, "more draws"),  # a floor
    ],
)  # fmt: skip
def test_the_refit_step_changes_what_failed(fit, changed, why):
    from dataclasses import replace

    from bayes_ir.cli._inputs import Sampler

    given = Sampler(likelihood="zoib", draws=fit.provenance["draws"])
    reason, again = given.refit(fit)
    assert reason == f"refit with {why}, the posterior failed its diagnostics"
    assert again == replace(given, **changed)


def test_a_saved_fit_is_refitted_not_read_again(tmp_path):
    from bayes_ir.cli._inputs import Sampler

    saved = tmp_path / "fit.nc"
    fit = _failed(divergences=2, draws=1000, tune=500, target_accept=0.9, likelihood="bernoulli")
    _, again = Sampler(fit_path=saved).refit(fit)
    words = again.words(seed=3)
    assert "--fit" not in words
    assert words == ["--likelihood", "bernoulli", "--target-accept", "0.99", "--seed", "3"]


def test_the_refit_of_a_saved_fit_keeps_its_family_options_chains_and_sigma(tmp_path):
    """A saved ``zoib(inflation=system)`` fit on one chain: the refit says so (the family's
    name alone, ``zoib``, would refit another model, on four chains)."""
    from bayes_ir.cli._inputs import Sampler

    family = "zoib(inflation=system, phi=system)"
    fit = _failed(ess_ok=False, draws=4000, tune=500, target_accept=0.9, likelihood="zoib",
                  family=family, chains=1, sigma="system")  # fmt: skip
    _, again = Sampler(fit_path=tmp_path / "fit.nc").refit(fit)
    assert again.words(seed=None) == [
        "--likelihood", family, "--sigma", "system",
        "--chains", "1", "--draws", "8000",
    ]  # fmt: skip


def test_the_fit_command_names_the_refit(capsys):
    argv = ["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", *TINY]
    _, out, _ = _run(argv, capsys)
    steps = out[out.index("next:") :].splitlines()
    assert steps[1].split("  # ") == [
        f"  bayes-ir fit {EXAMPLE} -c bm25 -C 'chal_*' --chains 2 --draws 2000 --seed 5",
        "refit with more draws, the posterior failed its diagnostics",
    ]
