"""``--fit PATH``: fit, decide, risk and review reuse a saved fit and print what a fresh run prints.

Every check goes through :func:`bayes_ir.cli.main`. The reference of each reused run is
the fresh run with the same seed and settings (the saved fit was made by ``--save``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bayes_ir.cli import main
from bayes_ir.provenance import sha256_file

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "example_scores.csv"
ROLES = ["-c", "bm25", "-C", "chal_*"]
SETTINGS = ["--draws", "1000", "--chains", "2", "--seed", "4"]


def run(capsys, command: str, *args: str, roles: list[str] = ROLES) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main([command, str(EXAMPLE), *roles, *SETTINGS, *args])
    out, err = capsys.readouterr()
    return info.value.code, out, err


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """A fit saved by ``fit --save`` (the fresh fit of the example with SETTINGS)."""
    path = tmp_path_factory.mktemp("saved") / "fit.nc"
    with pytest.raises(SystemExit) as info:
        main(["fit", str(EXAMPLE), *ROLES, *SETTINGS, "--save", str(path), "--quiet"])
    assert info.value.code == 0 and path.is_file()
    return path


@pytest.mark.parametrize("command", ["fit", "decide"])
def test_reused_fit_prints_what_a_fresh_fit_prints(capsys, saved, command):
    code, fresh, _ = run(capsys, command, "--quiet")
    code_again, again, err = run(capsys, command, "--fit", str(saved), "--quiet")
    cut = fresh.index("next:")
    assert (code_again, again[:cut]) == (code, fresh[:cut])
    assert "warning: --fit" not in err  # the options typed agree with the saved fit
    # the next steps reuse the saved fit rather than the sampler options
    steps = again[cut:].splitlines()[1:]
    reused = [s for s in steps if s.split()[1] in ("decide", "review") and "--likelihood" not in s]
    assert reused and all(f"--fit {saved}" in step for step in reused), steps


def test_risk_saves_and_reuses_brisk(capsys, tmp_path):
    brisk = tmp_path / "brisk.nc"
    code, fresh, _ = run(capsys, "risk", "--resamples", "200", "--save", str(brisk))
    assert code == 0 and brisk.is_file()
    code, again, _ = run(capsys, "risk", "--resamples", "200", "--fit", str(brisk))
    assert code == 0 and again == fresh  # the review step does not take BRisk's fit
    assert "--fit" not in again[again.index("next:") :]


def test_risk_refuses_the_fit_of_the_raw_scores(capsys, saved):
    code, out, err = run(capsys, "risk", "--fit", str(saved))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {saved} is not a fit of")
    assert "measure 'AP', the table has 'AP~risk(r=5)'" in err and "risk --save" in err


def _without_command_and_date(html: str) -> str:
    html = re.sub(r"<dt>command</dt>.*", "", html)
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "DATE", html)


def test_review_of_the_saved_fit_equals_the_fresh_review(capsys, saved, tmp_path):
    fresh, again = tmp_path / "fresh.html", tmp_path / "again.html"
    options = ["--r", "5", "--resamples", "200", "--quiet"]
    assert run(capsys, "review", *options, "-o", str(fresh))[0] == 0
    assert run(capsys, "review", *options, "-o", str(again), "--fit", str(saved))[0] == 0
    reused = again.read_text()
    fit_input = f"<dt>input</dt><dd>{saved} (SHA-256 {sha256_file(saved)})</dd>"
    assert fit_input in reused  # the saved fit is an input of the review, hashed
    assert _without_command_and_date(reused.replace(fit_input, "")) == _without_command_and_date(
        fresh.read_text()
    )


def test_fit_of_other_roles_is_one_error_line(capsys, saved):
    code, out, err = run(
        capsys, "decide", "--fit", str(saved), roles=["-c", "bm25", "-C", "chal_r*"]
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {saved} is not a fit of {EXAMPLE}")
    assert "roles differ: challengers" in err


def test_fit_of_other_scores_is_one_error_line(capsys, saved, tmp_path):
    lines = EXAMPLE.read_text().splitlines()
    first = lines[1].rsplit(",", 1)
    lines[1] = f"{first[0]},{float(first[1]) + 0.01:.4f}"
    other = tmp_path / "other.csv"
    other.write_text("\n".join(lines) + "\n")
    with pytest.raises(SystemExit) as info:
        main(["fit", str(other), *ROLES, "--fit", str(saved)])
    _, err = capsys.readouterr()
    assert info.value.code == 2 and err.count("\n") == 1
    topic, system = lines[1].split(",")[3], lines[1].split(",")[2]
    assert f"error: {saved} is not a fit of {other}: 1 of " in err
    assert f"topic '{topic}', system '{system}'" in err


def test_several_measures_with_one_saved_fit_are_refused(capsys, saved):
    code, out, err = run(capsys, "decide", "-m", "AP", "-m", "nDCG@10", "--fit", str(saved))
    assert code == 2 and out == ""
    want = f"error: --fit {saved} is a fit of one measure: give one -m with --fit, not 2"
    assert err == f"{want} (AP, nDCG@10)\n"


def test_typed_options_that_disagree_are_one_warning(capsys, saved):
    code, out, err = run(capsys, "decide", "--fit", str(saved), "--draws", "500", "--seed", "9")
    assert code in (0, 4, 5) and "Decision vs champion" in out
    warning = [line for line in err.splitlines() if line.startswith("warning: --fit")]
    assert warning == [
        f"warning: --fit {saved}: --draws 500 differs from the saved fit's 1000; --seed 9 "
        "differs from the saved fit's 4: the saved fit is used as saved"
    ]


def test_missing_saved_fit_is_said_before_reading(capsys, tmp_path):
    missing = tmp_path / "nope.nc"
    code, out, err = run(capsys, "fit", "--fit", str(missing))
    assert code == 2 and out == ""
    assert err == f"error: --fit {missing}: no saved fit there (write one with --save)\n"


def test_a_saved_fit_hashes_every_input(tmp_path, capsys):
    """``--save`` records the SHA-256 of the scores and of a challenger list in the fit."""
    from bayes_ir.hierarchical import HierarchicalFit

    chosen = tmp_path / "challengers.txt"
    chosen.write_text("chal_dense\n", encoding="utf-8")
    path = tmp_path / "fit.nc"
    with pytest.raises(SystemExit) as info:
        main(["fit", str(EXAMPLE), "-c", "bm25", "-C", f"@{chosen}", *SETTINGS, "--save",
              str(path), "--quiet"])  # fmt: skip
    capsys.readouterr()
    assert info.value.code == 0
    inputs = {
        item["name"]: item["sha256"] for item in HierarchicalFit.load(path).provenance["inputs"]
    }
    assert inputs == {str(chosen): sha256_file(chosen), str(EXAMPLE): sha256_file(EXAMPLE)}
