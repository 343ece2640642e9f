"""``bayes-ir risk``: the deployment review table on the command line."""

from __future__ import annotations

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


def test_bad_champion_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main([*BASE[:2], "--champion", "nobody", "--no-bayes"])
    assert exc.value.code == 2
    assert "nobody" in capsys.readouterr().err
