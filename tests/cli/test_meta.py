"""``bayes-ir meta``: YAML config or tidy file in, metafor-style printout, table and plot out."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from bayes_ir.cli import app, cli_wording, main  # noqa: E402
from bayes_ir.frequentist import effect_size, meta_analysis, read_meta_config  # noqa: E402
from bayes_ir.readers import read_scores  # noqa: E402
from bayes_ir.report.meta import meta_conclusion  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data"
runner = CliRunner()


def test_config_prints_and_writes(tmp_path):
    out, plot = tmp_path / "meta.csv", tmp_path / "forest.png"
    res = runner.invoke(
        app,
        ["meta", str(DATA / "example_meta.yaml"), "--effect", "SMD", "--method", "PM", "--hk",
         "--plot", str(plot), "--output", str(out), "--explain"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    config = read_meta_config(DATA / "example_meta.yaml")
    eff = effect_size(
        config.load(), measure="SMD", control="bm25", treatment="dense",
        score_measure="nDCG@10", extra_measures=["Judged@10"], labels=config.display_names,
    )  # fmt: skip
    expected = meta_analysis(eff, method="PM", hk=True)
    assert cli_wording(expected.summary()) in res.output  # options, not Python names
    assert "to_frame()" not in res.output
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
    # by default: the table and the conclusion in words; metafor's printout on --explain
    assert cli_wording(expected.summary()) not in res.output
    assert "tau^2 (estimated" not in res.output
    assert meta_conclusion(expected) in res.output
    assert "Leave-one-out" in res.output
    # The pooled effect without NFCorpus, as leave_one_out() computes it, 4 decimals.
    loo = expected.leave_one_out().set_index("omitted")
    row = [line for line in res.output.splitlines() if line.startswith("nfcorpus ")][-1]
    assert f"{loo.loc['nfcorpus', 'estimate']:.4f}" in row
    assert f"{loo.loc['nfcorpus', 'ci_lower']:.4f}" in row


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--measure", "nDCG@10", "--effect", "OR"], "unknown effect measure"),
        (["--measure", "nDCG@10", "--method", "XYZ"], "--method must be one of 'FE', 'DL'"),
        (
            ["--measure", "nDCG@10", "--method", "REML", "--ranger-compatible"],
            "--ranger-compatible means DerSimonian-Laird",
        ),
        (["--measure", "nDCG@10", "--control", "nope", "--treatment", "dense"], "'nope'"),
        ([], "several measures"),
    ],
)
def test_bad_input_exits_2(args, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["meta", str(DATA / "example_collections.csv"), *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_collections_table_at_80_columns():
    """At 80 columns the names were cut ("TREC-COV…", "Touché-2…") and the pooled row wrapped;
    the table did not say the direction of the effect."""
    import io

    from rich.console import Console

    from bayes_ir.cli.meta import collections_table

    config = read_meta_config(DATA / "example_meta.yaml")
    eff = effect_size(
        config.load(), measure="MD", control="bm25", treatment="dense",
        score_measure="nDCG@10", labels=config.display_names,
    )  # fmt: skip
    result = meta_analysis(eff, method="REML")
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(collections_table(result, result.to_frame()))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    for label in ("TREC-COVID", "Touché-2020", "RE Model (REML)"):
        assert label in text, label
    assert "MD of dense - bm25" in text and "> 0 favours dense" in text and "95% CI" in text
    header = next(line for line in text.splitlines() if line.startswith("collection"))
    assert header.split()[2:4] == ["bm25", "dense"]  # the mean columns name the systems


def test_leave_one_out_needs_three_collections(tmp_path, capsys):
    two = tmp_path / "two.csv"
    rows = ["collection,system,topic,score"]
    for coll in ("c1", "c2"):
        for t in range(6):
            gain = 0.05 + 0.01 * ((t * 7) % 5)  # unequal differences: a variance to weight by
            rows += [f"{coll},bm25,{t},{0.1 * t:.2f}", f"{coll},dense,{t},{0.1 * t + gain:.2f}"]
    two.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        main(["meta", str(two), "--leave-one-out"])
    assert info.value.code == 0
    assert "leave-one-out needs 3 or more collections" in capsys.readouterr().err


def test_long_system_names_are_not_cut(tmp_path, capsys):
    """With bert-base-cased vs distilbert-base-cased the headers read "bert-bas…"."""
    frame = pd.read_csv(DATA / "example_collections.csv")
    frame = frame[frame["measure"] == "nDCG@10"]
    frame["system"] = frame["system"].map({"bm25": "bert-base-cased", "dense": "distilbert-base"})
    path = tmp_path / "long.csv"
    frame.to_csv(path, index=False)
    from bayes_ir.cli._app import console

    old = console._width
    console._width = 80
    try:
        with pytest.raises(SystemExit):
            main(["meta", str(path), "--control", "bert-base-cased", "--treatment",
                  "distilbert-base"])  # fmt: skip
    finally:
        console._width = old
    out = capsys.readouterr().out
    assert "…" not in out
    assert "control = bert-base-cased, treatment = distilbert-base" in out
