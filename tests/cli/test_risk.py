"""``bayes-ir risk``: the deployment review table on the command line."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bayes_ir.cli import app, main
from bayes_ir.readers import read_scores
from bayes_ir.risk import risk_review
from bayes_ir.risk.review import REVIEW_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="data/example_scores.csv missing")

BASE = ["risk", str(EXAMPLE), "--champion", "bm25", "--challengers", "chal_*", "--r", "5"]


@pytest.fixture(scope="module")
def frequentist(tmp_path_factory):
    out = tmp_path_factory.mktemp("risk")
    args = [
        *BASE,
        "--no-bayes",
        "--resamples",
        "500",
        "--seed",
        "4",
        "--output",
        str(out / "r.csv"),
    ]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    return result, out


def test_prints_the_review(frequentist):
    result, _ = frequentist
    assert result.exit_code == 0, result.output
    assert "higher = riskier" in result.output
    for name in ("bm25", "chal_dense", "chal_fusion", "chal_rerank", "chal_risky"):
        assert name in result.output


def test_csv_equals_risk_review(frequentist):
    _, out = frequentist
    table = pd.read_csv(out / "r.csv")
    assert list(table.columns) == list(REVIEW_COLUMNS)
    scores = read_scores(EXAMPLE).with_roles(champion="bm25", challengers="chal_*")
    ref = risk_review(scores, r=5, n_resamples=500, seed=4, bayes=False).to_frame()
    for col in ("mean", "urisk_minus", "trisk_minus", "trisk_p", "bca_lower_minus", "zrisk_minus"):
        np.testing.assert_allclose(table[col], ref[col], equal_nan=True, err_msg=col)


def test_bayes_and_markdown(tmp_path):
    md = tmp_path / "review.md"
    args = [*BASE, "--resamples", "500", "--chains", "2", "--draws", "1000", "--output", str(md)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    text = md.read_text()
    assert "BRisk-" in text and "higher = riskier" in text and "| chal_risky" in text
    # BRisk's model does not describe chal_risky: one warning line says so and what to try
    lines = result.output.splitlines()
    warned = [line for line in lines if line.startswith("warning:") and "chal_risky" in line]
    assert len(warned) == 1 and "--likelihood skew_normal" in warned[0], result.output


def test_trisk_sd_option_is_used_and_printed(tmp_path):
    from scipy import stats

    from bayes_ir.risk import risk_adjusted_differences

    out = tmp_path / "r.csv"
    args = [*BASE, "--no-bayes", "--resamples", "200", "--trisk-sd", "sample", "--output", str(out)]
    result = CliRunner().invoke(app, [*args, "--explain"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "sample SD (divide by n - 1" in " ".join(result.output.split())
    table = pd.read_csv(out)
    assert set(table["trisk_sd"]) == {"sample"}
    scores = read_scores(EXAMPLE).with_roles(champion="bm25", challengers="chal_*")
    d = risk_adjusted_differences(scores, r=5)
    for row in table.iloc[1:].itertuples():
        ref = stats.ttest_1samp(d.sel(system=row.system).values, 0.0)
        assert row.trisk_minus == pytest.approx(-ref.statistic, rel=1e-9)


def test_bad_trisk_sd_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main([*BASE, "--no-bayes", "--resamples", "200", "--trisk-sd", "n-1"])
    assert exc.value.code == 2
    assert "--trisk-sd must be one of 'population', 'sample', got 'n-1'" in capsys.readouterr().err


def test_opens_with_one_line_and_explains_on_request(frequentist):
    """risk opened with four dense lines (title, sign convention, settings, marks)."""
    result, _ = frequentist
    lines = result.output.splitlines()
    assert lines[0].startswith("Deployment risk vs champion 'bm25' (AP on example, 50 topics")
    assert "higher = riskier" in lines[0] and lines[1].startswith("Deployment risk review")
    body = result.output[: result.output.index("next:")]
    for text in ("Sign convention", "population SD", "Bonferroni"):
        assert text not in body, text
    steps = lines[lines.index("next:") + 1 :]
    assert "--explain  # how each measure was computed" in steps[0]
    assert steps[-1].split()[:2] == ["bayes-ir", "review"] and "-o review.html" in steps[-1]
    explained = (
        CliRunner()
        .invoke(
            app, [*BASE, "--no-bayes", "--resamples", "200", "--explain"], catch_exceptions=False
        )
        .output
    )
    for text in ("Sign convention", "population SD", "Bonferroni"):
        assert text in explained, text


def test_a_misfitting_champion_is_marked_in_every_rendering(tmp_path):
    """chal_risky as champion: BRisk's model does not describe it, so every BRisk row and
    P(riskier) (each a contrast with it) is not to be acted on: marked, with a legend."""
    md = tmp_path / "review.md"
    args = ["risk", str(EXAMPLE), "-c", "chal_risky", "-C", "chal_fusion", "-C", "bm25",
            "--resamples", "200", "--chains", "2", "--draws", "1000", "--seed", "4",
            "--output", str(md)]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    row = next(line for line in lines if line.startswith("chal_risky"))
    assert row.startswith("chal_risky \u2020 ")
    assert not any(line.startswith(("bm25 \u2020", "chal_fusion \u2020")) for line in lines)
    legend = next(line for line in lines if line.startswith("\u2020 model misfit"))
    assert "the champion chal_risky" in legend and "P(riskier)" in legend
    assert "URisk-, TRisk-, BCa-, ZRisk- and GeoRisk- do not use the model" in legend
    step = next(line for line in lines if "# a BRisk model that describes" in line)
    assert "bayes-ir risk" in step and "--likelihood auto" in step
    text = md.read_text()
    assert "| chal_risky \u2020" in text and "\u2020 model misfit" in text


def test_bad_champion_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main([*BASE[:2], "--champion", "nobody", "--no-bayes"])
    assert exc.value.code == 2
    assert "nobody" in capsys.readouterr().err


def _display() -> pd.DataFrame:
    """A review's display frame with the Bayesian columns (strings, as display_frame gives)."""
    return pd.DataFrame(
        {
            "System": ["bm25", "chal_fusion", "chal_risky"],
            "Mean": ["0.3001", "0.3715", "0.3717"],
            "URisk-": ["", "-0.0343", "0.0770"],
            "TRisk- (p)": ["", "-1.383 (0.173)", "-5.755 (<0.001)*"],
            "BCa-": ["", "[-0.0866, 0.0435]", "[-0.0513, 0.3017]"],
            "BRisk-": ["-0.0728", "-0.1037", "-0.0032"],
            "BRisk- CI": ["[-0.1173, -0.0278]", "[-0.1483, -0.0587]", "[-0.0477, 0.0418]"],
            "P(riskier)": ["", "0.000*", "0.993*"],
            "ZRisk-": ["9.25", "6.29", "17.59"],
            "GeoRisk-": ["-0.3578", "-0.4088", "-0.3671"],
        }
    )


@pytest.mark.parametrize(("width", "n_tables"), [(80, 2), (120, 2), (130, 1)])
def test_risk_table_fits_the_terminal(width, n_tables):
    """At 80 columns every interval and "TRisk (p)" cell was broken over two lines."""
    from rich.console import Console

    from bayes_ir.cli.risk import risk_tables

    tables = risk_tables(_display(), width=width)
    assert len(tables) == n_tables
    console = Console(width=width, record=True, file=io.StringIO())
    for table in tables:
        console.print(table)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    for cell in ("[-0.0866, 0.0435]", "[-0.1483, -0.0587]", "-1.383 (0.173)", "chal_fusion"):
        assert cell in text, cell
    assert "higher = riskier" in text
    assert "-5.755 (<0.001)*" in text


def test_sampler_options_reach_the_bayesian_model(monkeypatch, capsys):
    """risk had --draws but no --tune or --target-accept, which its warnings recommend."""
    import bayes_ir.risk.review as review_module
    from bayes_ir.errors import BayesIRError

    seen = {}

    def fake_review(table, **options):
        seen.update(options)
        raise BayesIRError("stop here")

    monkeypatch.setattr(review_module, "risk_review", fake_review)
    with pytest.raises(SystemExit):
        main([*BASE, "--draws", "300", "--tune", "200", "--target-accept", "0.97"])
    assert (seen["draws"], seen["tune"], seen["target_accept"]) == (300, 200, 0.97)


def test_plot_option_writes_the_figure(tmp_path):
    path = tmp_path / "fig" / "risk.png"
    args = [*BASE, "--no-bayes", "--resamples", "200", "--plot", str(path)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:4] == b"\x89PNG"
