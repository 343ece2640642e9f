"""``bayes-ir test``: the printed and written table is the API's paired_tests()."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

import bayes_ir
from bayes_ir.cli import app
from bayes_ir.frequentist.paired import PAIRED_TEST_COLUMNS, paired_tests

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"


def test_table_equals_the_api(tmp_path):
    out = tmp_path / "tests.csv"
    args = ["test", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--test", "t,sign,wilcoxon",
            "--correction", "bonferroni", "-o", str(out)]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Bonferroni" in result.output and "not the probability" in result.output
    written = pd.read_csv(out)
    assert list(written.columns) == list(PAIRED_TEST_COLUMNS)
    table = bayes_ir.read_scores(EXAMPLE).with_roles(champion="bm25", challengers="chal_*")
    ref = paired_tests(table, test=["t", "sign", "wilcoxon"], correction="bonferroni").to_frame()
    assert np.allclose(written["p_adjusted"], ref["p_adjusted"], rtol=1e-6)
    assert list(written["significant"]) == list(ref["significant"])


def test_explains_on_request_and_points_to_the_bayesian_answer():
    args = ["test", str(EXAMPLE), "-c", "bm25", "-C", "chal_*", "--test", "t,sign"]
    short = CliRunner().invoke(app, args, catch_exceptions=False).output
    full = CliRunner().invoke(app, [*args, "--explain"], catch_exceptions=False).output
    for text in ("Cohen's effect size", "paired t (49 df)", "adjusted by Holm over the 4"):
        assert text not in short and text in full, text
    steps = short[short.index("next:") :].splitlines()
    assert steps[1].startswith(f"  bayes-ir fit {EXAMPLE} -c bm25 -C 'chal_*'  # how likely")
