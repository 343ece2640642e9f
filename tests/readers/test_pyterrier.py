"""PyTerrier per-query Experiment frames (built as plain DataFrames: no Java)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers import detect_format, read_scores


def experiment(measures=("map", "ndcg_cut_10")) -> pd.DataFrame:
    """The frame of ``pt.Experiment([bm25, dense], topics, qrels, measures, perquery=True)``."""
    rng = np.random.default_rng(7)
    rows = [
        (name, str(qid), measure, float(rng.uniform(0, 1)))
        for name in ("BR(BM25)", "dense >> rerank")
        for qid in (301, 302, 303, 304)
        for measure in measures
    ]
    return pd.DataFrame(rows, columns=["name", "qid", "measure", "value"])


def test_frame_values_and_names_kept():
    frame = experiment()
    table = read_scores(frame, measure="AP")  # 'map' is AP
    assert table.measures == ("AP",)
    assert table.systems == ("BR(BM25)", "dense >> rerank")
    expected = frame[frame.measure == "map"].pivot(index="qid", columns="name", values="value")
    got = table.wide()
    assert np.array_equal(got.loc[expected.index, expected.columns].to_numpy(), expected.to_numpy())
    both = read_scores(frame, measure=["map", "ndcg_cut_10"])
    assert both.measures == ("AP", "nDCG@10")
    ndcg = frame[frame.measure == "ndcg_cut_10"].set_index(["name", "qid"])["value"]
    for r in both.select(measure="nDCG@10").to_frame().itertuples():
        assert r.score == ndcg[(r.system, r.topic)]


def test_one_measure_needs_no_option_and_file_is_detected(tmp_path):
    frame = experiment(measures=("P_10",))
    table = read_scores(frame)
    assert table.measures == ("P@10",)
    path = tmp_path / "experiment.csv"
    frame.to_csv(path)  # the index is written too: an extra column, ignored
    assert detect_format(path) == "pyterrier"
    assert read_scores(path).wide().equals(table.wide())


def test_bad_experiment_frames(tmp_path):
    with pytest.raises(ScoreTableError, match=r"2 measures \(map, ndcg_cut_10\): pass measure="):
        read_scores(experiment())
    twice = pd.concat([experiment(("map",)), experiment(("map",)).iloc[:1]])
    with pytest.raises(
        ScoreTableError, match=r"duplicate score for system 'BR\(BM25\)', topic '301'"
    ):
        read_scores(twice)
    path = tmp_path / "e.tsv"
    bad = experiment(("map",)).astype({"value": object})
    bad.loc[3, "value"] = "high"
    bad.to_csv(path, sep="\t", index=False)
    with pytest.raises(ScoreTableError, match=r"e\.tsv:5: score 'high'"):
        read_scores(path)
