"""write_table / render_table (CSV, JSON, Markdown, LaTeX) and the trec_eval writer."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import BayesIRError, ScoreTableError
from bayes_ir.report import TABLE_FORMATS, render_table, render_trec_eval, write_table
from bayes_ir.table import ScoreTable

FRAME = pd.DataFrame(
    {"system": ["bm25", "chal_a&b"], "mean": [0.123456789, np.nan], "n_topics": [50, 49]}
)


def test_formats_by_extension():
    assert TABLE_FORMATS == {".csv": "csv", ".json": "json", ".md": "markdown", ".tex": "latex"}


def test_csv_and_json_keep_full_precision_and_columns(tmp_path):
    back = pd.read_csv(write_table(FRAME, tmp_path / "r.csv"))
    pd.testing.assert_frame_equal(back, FRAME)
    records = json.loads(write_table(FRAME, tmp_path / "sub" / "r.json").read_text())
    assert records == [
        {"system": "bm25", "mean": 0.123456789, "n_topics": 50},
        {"system": "chal_a&b", "mean": None, "n_topics": 49},
    ]


def test_markdown_and_latex():
    md = render_table(FRAME, "markdown").splitlines()
    assert [c.strip() for c in md[0].strip("|").split("|")] == ["system", "mean", "n_topics"]
    assert "0.123457" in md[2] and "nan" not in " ".join(md)
    # the package's one LaTeX style (bayes_ir.report.latex): fixed decimals, escaped names
    assert render_table(FRAME, "latex").splitlines() == [
        r"\begin{table}[tbp]",
        r"\centering",
        r"\begin{tabular}{lrr}",
        r"\toprule",
        r"system & mean & n\_topics \\",
        r"\midrule",
        r"bm25 & 0.1235 & 50 \\",
        r"chal\_a\&b &  & 49 \\",
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
    ]


def test_named_index_becomes_a_column():
    frame = FRAME.set_index("system")
    assert render_table(frame, "csv").splitlines()[0] == "system,mean,n_topics"


def test_errors(tmp_path):
    with pytest.raises(BayesIRError, match="cannot tell the output format"):
        write_table(FRAME, tmp_path / "r.xlsx")
    with pytest.raises(BayesIRError, match="unknown table format"):
        render_table(FRAME, "html")
    (tmp_path / "file").write_text("x")
    with pytest.raises(BayesIRError, match=r"file/r\.csv: .*/file is a file, not a folder"):
        write_table(FRAME, tmp_path / "file" / "r.csv")


def test_trec_eval_writer_layout():
    table = ScoreTable.from_frame(
        pd.DataFrame(
            {
                "system": ["a", "a", "a", "a"],
                "measure": ["AP", "AP", "nDCG@10", "nDCG@10"],
                "topic": ["2", "10", "2", "10"],
                "score": [0.25, 0.5, 0.125, 1.0],
            }
        )
    )
    lines = render_trec_eval(table).splitlines()
    assert lines[0] == f"{'map':<22}\t2\t0.2500"
    assert lines[1] == f"{'ndcg_cut_10':<22}\t2\t0.1250"
    assert lines[2].split("\t")[1] == "10"  # natural topic order
    assert lines[4:] == [
        f"{'runid':<22}\tall\ta",
        f"{'num_q':<22}\tall\t2",
        f"{'map':<22}\tall\t0.3750",
        f"{'ndcg_cut_10':<22}\tall\t0.5625",
    ]
    assert len(render_trec_eval(table, summary=False).splitlines()) == 4


def test_trec_eval_writer_one_collection_only():
    two = ScoreTable.from_frame(
        pd.DataFrame(
            {
                "collection": ["x", "y"],
                "system": ["a", "a"],
                "topic": ["1", "1"],
                "score": [0.1, 0.2],
            }
        )
    )
    with pytest.raises(ScoreTableError, match="one collection"):
        render_trec_eval(two)


def test_csv_has_no_binary_float_noise(tmp_path):
    """CSV wrote 0.3714659999999999 and 0.14717000000000002 (repr of a sum of doubles)."""
    frame = pd.DataFrame({"mean": [0.371466 + 1e-17, 0.1 + 0.04717], "x": [1 / 3, 2.5e-300]})
    text = render_table(frame, "csv")
    assert text.splitlines()[1:] == ["0.371466,0.333333333333333", "0.14717,2.5e-300"]
    back = pd.read_csv(write_table(frame, tmp_path / "r.csv"))
    np.testing.assert_allclose(back.to_numpy(), frame.to_numpy(), rtol=1e-14)


def test_counts_with_empty_cells_stay_integers():
    """A count column with an empty cell (the pooled rows of a meta-analysis) came out as
    100.0 in CSV and JSON."""
    frame = pd.DataFrame(
        {"label": ["a", "b", "RE Model"], "n": [100.0, 30.0, np.nan], "w": [0.5, 0.5, 1.0]}
    )
    assert render_table(frame, "csv").splitlines() == [
        "label,n,w",
        "a,100,0.5",
        "b,30,0.5",
        "RE Model,,1",
    ]
    records = json.loads(render_table(frame, "json"))
    assert [r["n"] for r in records] == [100, 30, None]
    assert isinstance(records[0]["n"], int)
    latex = render_table(frame, "latex")
    assert "RE Model &  & 1.0000" in latex and "<NA>" not in latex
    assert "| a        | 100 |" in render_table(frame, "markdown")
