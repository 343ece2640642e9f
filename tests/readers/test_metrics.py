"""ir_measures per-query results (Metric namedtuples) through read_scores."""

from __future__ import annotations

import ir_measures
import pytest
from ir_measures import AP, RR, P, nDCG

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers import READERS, read_scores

QRELS = {"1": {"a": 1, "b": 0, "c": 1}, "2": {"b": 2}, "3": {"d": 1, "e": 1}}
RUNS = {
    "bm25": {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"a": 2.0, "b": 1.0}, "3": {"e": 1.0}},
    "dense": {"1": {"c": 3.0, "a": 2.0}, "2": {"b": 5.0}, "3": {"x": 1.0, "d": 0.5}},
}
#: AP by hand: relevant ranks of each run, over the number of relevant documents.
AP_BY_HAND = {
    ("bm25", "1"): (1 / 1 + 2 / 3) / 2,
    ("bm25", "2"): (1 / 2) / 1,
    ("bm25", "3"): (1 / 1) / 2,
    ("dense", "1"): (1 / 1 + 2 / 2) / 2,
    ("dense", "2"): 1.0,
    ("dense", "3"): (1 / 2) / 2,
}


def results(system: str, measures=(AP,)):
    return ir_measures.iter_calc(list(measures), QRELS, RUNS[system])  # a generator


def cells(table) -> dict[tuple[str, str], float]:
    return {(r.system, r.topic): r.score for r in table.to_frame().itertuples()}


def test_detected_by_shape():
    metrics = list(results("bm25"))
    assert READERS["ir_measures"].claims(metrics)
    assert READERS["ir_measures"].claims({"bm25": metrics})
    assert not READERS["ir_measures"].claims(["a.csv"])


def test_systems_mapping_of_generators_equals_ap_by_hand():
    table = read_scores({"bm25": results("bm25"), "dense": results("dense")})
    assert table.measures == ("AP",) and table.systems == ("bm25", "dense")
    got = cells(table)
    assert got.keys() == AP_BY_HAND.keys()
    for key, value in AP_BY_HAND.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key


def test_one_system_list_and_calc_results():
    metrics = list(results("bm25", (AP, nDCG @ 10)))
    table = read_scores(metrics, measure="nDCG@10", systems=["bm25"])
    expected = {m.query_id: m.value for m in metrics if str(m.measure) == "nDCG@10"}
    assert table.systems == ("bm25",) and table.measures == ("nDCG@10",)
    assert table.wide()["bm25"].to_dict() == pytest.approx(expected)
    default = read_scores(metrics, measure="AP")
    assert default.systems == ("system",) and any("'system'" in n for n in default.notes)
    calc = ir_measures.calc([P @ 2, RR], QRELS, RUNS["dense"])  # CalcResults
    both = read_scores({"dense": calc}, measure=["P@2", "RR"])
    assert both.measures == ("P@2", "RR")
    rr = {m.query_id: m.value for m in calc.per_query if m.measure == RR}
    assert both.select(measure="RR").wide()["dense"].to_dict() == pytest.approx(rr)


def test_bad_metric_results():
    mixed = list(results("bm25", (AP, P @ 5)))
    with pytest.raises(ScoreTableError, match=r"2 measures \(AP, P@5\): pass measure="):
        read_scores(mixed)
    twice = list(results("bm25")) + [ir_measures.Metric("2", AP, 0.5)]
    with pytest.raises(ScoreTableError, match=r"duplicate score for system 'system', topic '2'"):
        read_scores(twice)
    aggregate = ir_measures.calc_aggregate([AP], QRELS, RUNS["bm25"])
    with pytest.raises(ScoreTableError, match=r"mean scores only.*iter_calc"):
        read_scores(aggregate)
    with pytest.raises(ScoreTableError, match=r"system 'dense'.*item 2 is str"):
        read_scores({"bm25": list(results("bm25")), "dense": [mixed[0], "junk"]})
    with pytest.raises(ScoreTableError, match=r"no rows with measure 'nDCG@10'"):
        read_scores(mixed, measure="nDCG@10")
    with pytest.raises(ScoreTableError, match=r"systems= has 2 names"):
        read_scores(mixed, measure="AP", systems=["a", "b"])
