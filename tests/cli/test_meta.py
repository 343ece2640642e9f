"""``bayes-ir meta``: YAML config or tidy file in, metafor-style printout, table and plot out."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from bayes_ir.cli import app, main  # noqa: E402
from bayes_ir.frequentist import effect_size, meta_analysis, read_meta_config  # noqa: E402
from bayes_ir.readers import read_scores  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data"
runner = CliRunner()


def test_config_prints_and_writes(tmp_path):
    out, plot = tmp_path / "meta.csv", tmp_path / "forest.png"
    res = runner.invoke(
        app,
        ["meta", str(DATA / "example_meta.yaml"), "--effect", "SMD", "--method", "PM", "--hk",
         "--plot", str(plot), "--output", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    config = read_meta_config(DATA / "example_meta.yaml")
    eff = effect_size(
        config.load(), measure="SMD", control="bm25", treatment="dense",
        score_measure="nDCG@10", extra_measures=["Judged@10"], labels=config.display_names,
    )  # fmt: skip
    expected = meta_analysis(eff, method="PM", hk=True)
    assert expected.summary() in res.output
    frame = pd.read_csv(out)
    pd.testing.assert_frame_equal(frame, expected.to_frame(), check_dtype=False, atol=1e-12)
    assert "TREC-COVID" in set(frame["label"])
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_tidy_file_with_control_and_treatment(tmp_path):
    res = runner.invoke(
        app,
        ["meta", str(DATA / "example_collections.csv"), "--control", "bm25", "--treatment",
         "dense", "--measure", "nDCG@10", "--method", "DL", "--leave-one-out"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    table = read_scores(DATA / "example_collections.csv")
    eff = effect_size(table, control="bm25", treatment="dense", score_measure="nDCG@10")
    expected = meta_analysis(eff, method="DL")
    assert expected.summary() in res.output
    assert "Leave-one-out" in res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--measure", "nDCG@10", "--effect", "OR"], "unknown effect measure"),
        (["--measure", "nDCG@10", "--method", "XYZ"], "unknown method"),
        (["--measure", "nDCG@10", "--method", "REML", "--ranger-compatible"], "ranger_compatible"),
        (["--measure", "nDCG@10", "--control", "nope", "--treatment", "dense"], "'nope'"),
        ([], "several measures"),
    ],
)
def test_bad_input_exits_2(args, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["meta", str(DATA / "example_collections.csv"), *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
