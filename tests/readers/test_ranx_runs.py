"""ranx Runs through read_scores, checked against ranx's own metrics and ir_measures."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers import read_scores

ranx = pytest.importorskip("ranx")
ir_measures = pytest.importorskip("ir_measures")

pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")

#: Graded judgments, and three runs with no tied scores (ranx and trec_eval break ties
#: differently; without ties both give the textbook values).
QRELS = {
    "q1": {"d1": 1, "d3": 2, "d7": 0},
    "q2": {"d2": 1, "d5": 1},
    "q3": {"d9": 1},
    "q4": {"d4": 2, "d8": 1},
}
RUNS = {
    "bm25": {
        "q1": {"d1": 3.0, "d2": 2.5, "d3": 1.0},
        "q2": {"d2": 0.5, "d1": 0.9, "d5": 0.1},
        "q3": {"d9": 1.0, "d1": 0.7},
        "q4": {"d8": 2.0, "d6": 1.5, "d4": 1.2},
    },
    "dense": {
        "q1": {"d3": 3.0, "d2": 2.0, "d1": 1.0},
        "q2": {"d1": 0.5, "d2": 0.2},
        "q3": {"d4": 1.0},
        "q4": {"d4": 0.9, "d8": 0.8},
    },
    "splade": {
        "q1": {"d7": 9.0, "d3": 8.0},
        "q2": {"d5": 4.0, "d2": 3.0, "d9": 2.0},
        "q3": {"d1": 1.0, "d9": 0.5},
        "q4": {"d6": 5.0, "d4": 4.0, "d8": 3.0},
    },
}


def ranx_runs():
    return [ranx.Run(docs, name=name) for name, docs in RUNS.items()]


def ir_measures_reference(measure: str) -> dict[tuple[str, str], float]:
    """``{(system, query): value}`` straight from ir_measures on the same dicts."""
    parsed = ir_measures.parse_measure(measure)
    return {
        (name, m.query_id): m.value
        for name, docs in RUNS.items()
        for m in ir_measures.iter_calc([parsed], QRELS, docs)
    }


def ranx_reference(metric: str) -> dict[tuple[str, str], float]:
    """``{(system, query): value}`` from ranx's own implementation of the metric."""
    qrels = ranx.Qrels(QRELS)
    out = {}
    for run in ranx_runs():
        values = ranx.evaluate(qrels, run, metric, return_mean=False)
        out.update(
            {(run.name, q): float(v) for q, v in zip(run.get_query_ids(), values, strict=True)}
        )
    return out


def as_dict(table, measure: str) -> dict[tuple[str, str], float]:
    frame = table.select(measure=measure).to_frame()
    return {(r.system, r.topic): r.score for r in frame.itertuples()}


@pytest.mark.parametrize("measure", ["AP", "nDCG@10", "P@2", "RR"])
def test_runs_with_qrels_equal_ir_measures(measure):
    table = read_scores(ranx_runs(), qrels=ranx.Qrels(QRELS), measure=measure)
    got = as_dict(table, measure)
    expected = ir_measures_reference(measure)
    assert got.keys() == expected.keys() and len(got) == 12
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.slow  # ranx compiles its metrics with numba on first use (about 20 s)
@pytest.mark.parametrize(("measure", "metric"), [("AP", "map"), ("nDCG@10", "ndcg@10")])
def test_runs_with_qrels_equal_ranx_metrics(measure, metric):
    table = read_scores(ranx_runs(), qrels=ranx.Qrels(QRELS), measure=measure)
    got = as_dict(table, measure)
    expected = ranx_reference(metric)  # ranx's own code; no ties in these runs
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-9), key


def test_closed_form_ap_of_one_run():
    # bm25 on q1 ranks d1 (rel), d2, d3 (rel) of 2 relevant: AP = (1/1 + 2/3) / 2
    table = read_scores(ranx_runs()[0], qrels=ranx.Qrels(QRELS), measure="AP")
    assert table.wide().loc["q1", "bm25"] == pytest.approx((1 + 2 / 3) / 2)
    # dense retrieved no relevant document for q3: AP 0; splade q1: d3 at rank 2 of 2 relevant
    both = read_scores(ranx_runs()[1:], qrels=ranx.Qrels(QRELS), measure="AP")
    assert both.wide().loc["q3", "dense"] == 0.0
    assert both.wide().loc["q1", "splade"] == pytest.approx((1 / 2) / 2)


def test_mapping_names_and_unnamed_runs():
    runs = {"a": ranx.Run(RUNS["bm25"]), "b": ranx.Run(RUNS["dense"])}
    table = read_scores(runs, qrels=ranx.Qrels(QRELS), measure="P@2")
    assert table.systems == ("a", "b")
    unnamed = read_scores(
        [ranx.Run(RUNS["bm25"]), ranx.Run(RUNS["dense"])], qrels=QRELS, measure="P@2"
    )
    assert unnamed.systems == ("run_1", "run_2")
    assert any("run_1, run_2" in n for n in unnamed.notes)
    assert np.array_equal(unnamed.wide().to_numpy(), table.wide().to_numpy())


def test_same_table_as_the_trec_file_of_the_run(tmp_path):
    run = ranx_runs()[0]
    run.save(str(tmp_path / "bm25.trec"), kind="trec")
    qrels = ranx.Qrels(QRELS)
    qrels.save(str(tmp_path / "qrels.txt"), kind="trec")
    from_file = read_scores(tmp_path / "bm25.trec", qrels=tmp_path / "qrels.txt", measure="AP")
    from_object = read_scores(run, qrels=qrels, measure="AP")
    assert from_file.wide().equals(from_object.wide())


def test_ir_datasets_qrels_give_the_same_table():
    formats = pytest.importorskip("ir_datasets.formats")
    trec = [formats.TrecQrel(q, d, g, "0") for q, docs in QRELS.items() for d, g in docs.items()]
    expected = read_scores(ranx_runs(), qrels=ranx.Qrels(QRELS), measure="nDCG@10")
    for qrels in (trec, iter(trec), QRELS):  # a list, a one-shot iterator, a dict
        table = read_scores(ranx_runs(), qrels=qrels, measure="nDCG@10")
        assert table.wide().equals(expected.wide())


@pytest.mark.slow  # ranx.compare compiles its metrics with numba (about 20 s)
def test_stored_per_query_scores_without_qrels():
    runs = ranx_runs()
    report = ranx.compare(ranx.Qrels(QRELS), runs, metrics=["ndcg@10", "map"])
    expected = ranx_reference("ndcg@10")
    table = read_scores(runs, measure="ndcg@10")
    assert table.measures == ("nDCG@10",)
    for key, value in as_dict(table, "nDCG@10").items():
        assert value == pytest.approx(expected[key], abs=1e-12)
    assert any("computed by ranx" in n for n in table.notes)
    with pytest.raises(ScoreTableError, match=r"2 measures \(ndcg@10, map\).*measure="):
        read_scores(runs)
    with pytest.raises(ScoreTableError, match="Report holds mean scores only"):
        read_scores(report, qrels=ranx.Qrels(QRELS), measure="AP")


def test_report_is_refused():
    report = ranx.data_structures.Report(
        model_names=["bm25"], results={"bm25": {"map": 0.5}}, comparisons={}, metrics=["map"],
        max_p=0.01, win_tie_loss={},
    )  # fmt: skip
    with pytest.raises(ScoreTableError, match="Report holds mean scores only"):
        read_scores(report)


def test_bad_ranx_inputs():
    with pytest.raises(ScoreTableError, match=r"ranx Run 'bm25' has no qrels.*qrels="):
        read_scores(ranx_runs()[0])
    with pytest.raises(ScoreTableError, match=r"two ranx Runs are named 'x'"):
        read_scores(
            [ranx.Run(RUNS["bm25"], name="x"), ranx.Run(RUNS["dense"], name="x")],
            qrels=QRELS,
            measure="AP",
        )
    with pytest.raises(ScoreTableError, match=r"need a measure"):
        read_scores(ranx_runs(), qrels=QRELS)
    with pytest.raises(ScoreTableError, match=r"no query in common"):
        read_scores(ranx_runs(), qrels={"zz": {"d1": 1}}, measure="AP")
