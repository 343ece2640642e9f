"""``bayes-ir fit``: prints the verdict and the decision table, writes figures, table and fit."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bayes_ir.cli import app, main
from bayes_ir.hierarchical.contrasts import COMPARISON_COLUMNS, compare

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="data/example_scores.csv missing")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fit")
    args = [
        "fit", str(EXAMPLE), "--champion", "bm25", "--challengers", "chal_*",
        "--draws", "1500", "--chains", "2", "--seed", "3", "--min-gain", "0.01",
        "--figures", str(out / "figures"), "--save", str(out / "fit.nc"),
        "--output", str(out / "decision.csv"),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    return result, out


def test_prints_verdict_and_table(run):
    result, _ = run
    assert result.exit_code == 0, result.output
    text = result.output
    assert "Model: gaussian likelihood, one residual SD (exact sampler); diagnostics PASS" in text
    for name in ("chal_dense", "chal_fusion", "chal_rerank", "chal_risky"):
        assert name in text
    assert "P(>0)" in text and "P(>0.01)" in text and "worthwhile" in text


def test_ends_with_the_next_commands(run):
    """fit -> a model that describes chal_risky, then decide and review on the saved fit."""
    result, out = run
    lines = result.output.splitlines()
    steps = lines[lines.index("next:") + 1 :]
    assert [s.split()[1] for s in steps] == ["fit", "decide", "review"], steps
    assert "--likelihood auto" in steps[0] and steps[0].endswith("describes chal_risky")
    saved = f"--fit {out / 'fit.nc'} --margin 0.01"
    assert saved in steps[1] and saved in steps[2] and "-o review.html" in steps[2]
    assert all("-c bm25 -C 'chal_*'" in step for step in steps)


def test_diagnostics_detail_is_shown_on_request_only(run_cli):
    argv = ["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_fusion", "--draws", "500", "--chains",
            "2", "--top-m", "5"]  # fmt: skip
    _, short, _ = run_cli(argv)
    _, full, _ = run_cli([*argv, "--explain"])
    for text in ("R-hat (max", "BFMI", "Diagnostics: PASS", "verdict: read"):
        assert text not in short and text in full, text
    assert "--explain shows each check" in short


def test_table_equals_compare_on_the_saved_fit(run):
    """The CSV holds what compare() reports on the fit that was saved (reloaded from netCDF)."""
    from bayes_ir.hierarchical import HierarchicalFit

    _, out = run
    table = pd.read_csv(out / "decision.csv")
    assert list(table.columns) == list(COMPARISON_COLUMNS)
    loaded = HierarchicalFit.load(out / "fit.nc")
    ref = compare(loaded, min_gain=0.01).to_frame()
    assert list(table["challenger"]) == list(ref["challenger"])
    for col in ("mean", "ci_lower", "ci_upper", "p_better", "p_gain"):
        assert np.allclose(table[col], ref[col], atol=1e-12), col
    assert list(table["verdict"]) == list(ref["verdict"])


def test_figures_written(run):
    _, out = run
    names = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert names == sorted(
        ["contrasts.png", "predictive.png", "rank_probabilities.png", "system_topic_intervals.png"]
    )
    assert all(p.stat().st_size > 5_000 for p in (out / "figures").glob("*.png"))


def test_failed_diagnostics_are_loud():
    args = [
        "fit", str(EXAMPLE), "--champion", "bm25", "--challengers", "chal_fusion",
        "--top-m", "3", "--draws", "25", "--tune", "25", "--chains", "2",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0
    assert "FAILED" in result.output and "UNRELIABLE" in result.output
    # The advice said "(tune=..., draws=...)" and "raise target_accept": Python, not options.
    assert "draws=" not in result.output and "tune=" not in result.output
    # the refit is named in options: more draws (the exact sampler has no step size to tune)
    assert "Refit with more draws: --draws 2000." in result.output
    assert "--target-accept" not in result.output
    # --strict: the same output, then exit status 3 so that a CI pipeline stops.
    with pytest.raises(SystemExit) as exc:
        main([*args, "--strict"])
    assert exc.value.code == 3


def test_bad_input_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(EXAMPLE), "--champion", "nope", "--challengers", "chal_*"])
    assert exc.value.code == 2
    assert "nope" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(EXAMPLE), "--champion", "bm25"])
    assert exc.value.code == 2
    assert "challenger" in capsys.readouterr().err


def test_sweep_option(tmp_path):
    args = [
        "fit", str(EXAMPLE), "--champion", "bm25", "--challengers", "chal_fusion",
        "--top-m", "4", "--draws", "1000", "--chains", "2", "--seed", "1",
        "--sweep", "0,4", "--figures", str(tmp_path), "--output", str(tmp_path / "fit.csv"),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Artifact sweep" in result.output
    assert (tmp_path / "artifact_sweep.png").stat().st_size > 5_000
    # --output writes the decision table and, beside it, the sweep's table
    assert list(pd.read_csv(tmp_path / "fit.csv")["challenger"]) == ["chal_fusion"]
    sweep = pd.read_csv(tmp_path / "fit_artifact_sweep.csv")
    assert sorted(sweep["m"]) == [0, 4] and set(sweep["challenger"]) == {"chal_fusion"}
    m4 = sweep.set_index("m").loc[4]
    assert f"{m4['mean']:+.4f}" in result.output  # the printed row is the written row


def test_sweep_with_unpooled_roles_refused_before_fitting(capsys):
    args = ["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_fusion", "--pooling", "artifacts",
            "--sweep", "0,5"]  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == ""  # nothing fitted, nothing printed
    assert err.strip() == (
        "error: --pooling artifacts needs at least 2 artifact runs in every fit of the sweep: "
        "--sweep [0, 5] include 0; start the sweep at m = 2"
    )


@pytest.mark.slow
def test_sweep_effects_option(tmp_path, monkeypatch):
    import importlib

    # the package re-exports the function under the module's name: import the module itself
    module = importlib.import_module("bayes_ir.hierarchical.artifact_sweep")
    made = []
    real = module.artifact_sweep
    monkeypatch.setattr(
        module, "artifact_sweep", lambda *a, **k: made.append(real(*a, **k)) or made[-1]
    )
    args = [
        "fit", str(EXAMPLE), "--champion", "bm25", "--challengers", "chal_fusion",
        "--top-m", "4", "--draws", "1000", "--chains", "2", "--seed", "1", "--sweep", "0,4",
        "--sweep-effects", "intercept_deviation", "--figures", str(tmp_path),
        "--output", str(tmp_path / "fit.csv"),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "artifact_sweep.png").stat().st_size > 5_000
    written = pd.read_csv(tmp_path / "fit_artifact_sweep.csv")
    (sweep,) = made
    np.testing.assert_allclose(written["gap"], sweep.to_frame(effects="intercept_deviation")["gap"])
    assert not np.allclose(written["gap"], sweep.to_frame()["gap"])  # not the means' gap


def test_bad_sweep_effects_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--sweep", "1",
              "--sweep-effects", "centred"])  # fmt: skip
    assert exc.value.code == 2
    assert "--sweep-effects" in capsys.readouterr().err


def test_bad_sweep_values_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(
            ["fit", str(EXAMPLE), "--champion", "bm25", "--challengers", "chal_*", "--sweep", "a,b"]
        )
    assert exc.value.code == 2
    assert "--sweep" in capsys.readouterr().err


def test_target_accept_reaches_the_sampler(monkeypatch, capsys):
    import bayes_ir.hierarchical as hier
    from bayes_ir.errors import BayesIRError

    seen = {}

    def fake_fit(table, **options):
        seen.update(options)
        raise BayesIRError("stop here")

    monkeypatch.setattr(hier, "fit", fake_fit)
    with pytest.raises(SystemExit):
        main(["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--target-accept", "0.99",
              "--likelihood", "skew-normal"])  # fmt: skip
    assert seen["target_accept"] == 0.99 and seen["likelihood"] == "skew_normal"


def test_role_summary_is_not_broken_mid_list(monkeypatch):
    """At 80 columns rich broke "challengers: ..., chal_rerank, \\nchal_risky" mid-list."""
    from bayes_ir.cli._app import console

    monkeypatch.setattr(console, "width", 80)  # a terminal of 80
    args = ["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--draws", "1000", "--chains", "2",
            "--min-gain", "0.01"]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert "challengers: chal_dense, chal_fusion, chal_rerank, chal_risky; 40 artifact" in (
        result.output
    )
    # The decision table's verdict was folded ("worthwhil\ne gain") at 80 columns; on a
    # terminal that narrow the interval wraps at its comma and a long verdict between its
    # words, but no word or number is cut.
    lines = result.output.splitlines()
    for name, verdict in (("chal_fusion ", "worthwhile gain"),
                          ("chal_risky ", "unreliable: model misfit")):  # fmt: skip
        i = next(i for i, line in enumerate(lines) if line.startswith(name))
        cell = [line.rstrip() for line in lines[i : i + 2]]
        assert all(len(line) <= 80 for line in cell), cell
        tokens = cell[0].split() + cell[1].split()
        assert " ".join(tokens).endswith(verdict.split()[-1]), cell
        assert all(word in tokens for word in verdict.split()), cell
        assert any(re.fullmatch(r"\[[+-]0\.\d{4},", t) for t in tokens), cell


def test_options_the_exact_sampler_ignores_are_named(run_cli):
    """--tune with the exact sampler: one warning line naming the CLI option; none for
    --target-accept, which the CLI passes only when given."""
    argv = [
        "fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_fusion",
        "--top-m", "3", "--draws", "200", "--chains", "2", "--tune", "100",
    ]  # fmt: skip
    code, _, err = run_cli(argv)  # main() in this process, as the console script calls it
    assert code == 0, err
    assert "warning: --tune 100 is ignored by the exact sampler" in err
    assert "target" not in err and "Traceback" not in err


def test_flagged_system_warns_on_stderr(capsys, tmp_path):
    """One ``warning:`` line per flagged system, naming it, the failed check and what to try."""
    out = tmp_path / "decision.csv"
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--draws", "1000",
              "--chains", "2", "--seed", "3", "--output", str(out)])  # fmt: skip
    assert exc.value.code == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("warning:")]
    risky = [line for line in lines if "chal_risky" in line]
    assert len(risky) == 1, err
    assert "coverage" in risky[0] or "95%" in risky[0]
    assert "--likelihood skew_normal" in risky[0] and "likelihood=" not in risky[0]
    table = pd.read_csv(out).set_index("challenger")
    assert table.loc["chal_risky", "verdict"] == "unreliable: model misfit"
    assert "coverage_95" in table.loc["chal_risky", "fit"]
    assert len(lines) == int((table["fit"] != "ok").sum())  # one line per flagged challenger


def test_likelihood_auto_reaches_fit(monkeypatch):
    import bayes_ir.hierarchical as hier
    from bayes_ir.errors import BayesIRError

    seen = {}

    def fake_fit(table, **options):
        seen.update(options)
        raise BayesIRError("stop here")

    monkeypatch.setattr(hier, "fit", fake_fit)
    with pytest.raises(SystemExit):
        main(["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--likelihood", "auto"])
    assert seen["likelihood"] == "auto"


@pytest.mark.slow
def test_likelihood_auto_prints_the_choice(tmp_path):
    """Simulated scores, one system with 4x the residual SD: per-system SD is chosen."""
    rng = np.random.default_rng(4)
    sd = np.array([0.05, 0.05, 0.2, 0.05, 0.05, 0.05])
    y = 0.4 + rng.normal(0, 0.15, (30, 1)) + sd * rng.standard_normal((30, 6))
    rows = [("sim", "score", f"s{j}", f"t{i}", y[i, j]) for i in range(30) for j in range(6)]
    path = tmp_path / "sim.csv"
    pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"]).to_csv(
        path, index=False
    )
    args = ["fit", str(path), "-c", "s0", "-C", "s1", "-C", "s2", "--likelihood", "auto",
            "--draws", "600", "--chains", "2", "--seed", "2"]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("Model chosen by PSIS-LOO"))
    assert line.startswith("Model chosen by PSIS-LOO: gaussian with a per-system residual SD;")
    assert "ELPD (SE" in line and "--explain shows every candidate" in line


def test_likelihood_auto_names_a_choice_without_a_runner_up(tmp_path):
    """40% exact 1s (as RR has): zoib alone is fitted, and the line says how it was chosen."""
    rng = np.random.default_rng(5)
    y = np.clip(0.5 + rng.normal(0, 0.2, (30, 1)) + rng.normal(0, 0.15, (30, 5)), 0.01, 0.99)
    y[rng.random(y.shape) < 0.4] = 1.0
    rows = [("sim", "RR", f"s{j}", f"t{i}", y[i, j]) for i in range(30) for j in range(5)]
    path = tmp_path / "rr.csv"
    pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"]).to_csv(
        path, index=False
    )
    # draws enough for zoib's posterior to pass its diagnostics (2 x 600 did not: then the
    # continuous candidates are fitted too, test_choice.py)
    args = ["fit", str(path), "-c", "s0", "-C", "s1", "--likelihood", "auto",
            "--draws", "1000", "--seed", "2"]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert (
        "Model chosen by PSIS-LOO and the checks across spaces: zoib, the only candidate of its "
        "outcome space fitted (--explain shows every candidate and the checks)"
    ) in text
    assert " nan " not in f" {text} "
    # the review shows the choice, the candidates not fitted and the rule, one per line
    out = tmp_path / "review.html"
    review = ["review", *args[1:], "-o", str(out)]
    assert CliRunner().invoke(app, review, catch_exceptions=False).exit_code == 0
    html = out.read_text()
    assert (
        "<br>Likelihood chosen by PSIS-LOO and the checks across spaces: zoib (the only "
        "candidate of its outcome space)<br>not fitted: gaussian, skew_normal, "
        "gaussian_sigma_by_system: a continuous family predicts no exact 0s or 1s"
    ) in html
    assert "<br>rule: within each outcome space" in html


def test_a_table_with_gaps_is_fitted_by_the_gibbs_sampler(tmp_path, run_cli):
    """Runs that skip topics: ``--missing keep`` fits the gaps with the Gibbs sampler."""
    data = pd.read_csv(EXAMPLE)
    rng = np.random.default_rng(0)
    gappy = tmp_path / "gappy.csv"
    data[rng.uniform(size=len(data)) > 0.1].to_csv(gappy, index=False)
    argv = ["fit", str(gappy), "--champion", "bm25", "--challengers", "chal_*", "--seed", "2"]
    code, out, err = run_cli([*argv, "--draws", "3000", "--missing", "keep"])
    assert code == 0, err
    assert "Model: gaussian likelihood, one residual SD (Gibbs sampler); diagnostics PASS" in out
    code, _, err = run_cli(argv)  # without --missing keep, the gaps are refused in one line
    assert code == 2 and "--missing keep" in err and err.count("\n") == 1
