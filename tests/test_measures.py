"""Measure strings: parsing, ranges and trec_eval names."""

from __future__ import annotations

import math

import pytest

from bayes_ir.errors import MeasureError
from bayes_ir.measures import (
    canonical_measure,
    from_trec_eval_name,
    measure_range,
    parse_measure,
    to_trec_eval_name,
)


@pytest.mark.parametrize("text", ["nDCG@10", "AP(rel=2)", "P@10", "R@1000", "Judged@10", "RR"])
def test_parse_round_trips(text):
    assert str(parse_measure(text)) == text


@pytest.mark.parametrize("text", ["nDCG@", "Foo@10", "AP(rel=", ""])
def test_parse_errors(text):
    with pytest.raises(MeasureError, match="Examples: 'nDCG@10'"):
        parse_measure(text)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nDCG@10", (0.0, 1.0)),
        ("AP(rel=2)", (0.0, 1.0)),
        ("accuracy", (0.0, 1.0)),
        ("Judged@10", (0.0, 1.0)),
        ("NumRet", (-math.inf, math.inf)),
        ("whatever", (-math.inf, math.inf)),
        (None, (-math.inf, math.inf)),
    ],
)
def test_measure_range(name, expected):
    assert measure_range(name) == expected


@pytest.mark.parametrize(
    ("trec", "ours"),
    [
        ("map", "AP"),
        ("P_10", "P@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("recip_rank", "RR"),
        ("recall_1000", "R@1000"),
        ("ndcg", "nDCG"),
        ("bpref", "Bpref"),
        ("map_cut_100", "AP@100"),
        ("success_1", "Success@1"),
        ("iprec_at_recall_0.10", "IPrec@0.1"),
        ("num_ret", "NumRet"),
    ],
)
def test_trec_eval_names_both_ways(trec, ours):
    assert from_trec_eval_name(trec) == ours
    assert to_trec_eval_name(ours) == trec


@pytest.mark.parametrize("name", ["gm_map", "P_x", "runid", "accuracy", "my_score_1"])
def test_unknown_trec_eval_names_unchanged(name):
    assert from_trec_eval_name(name) == name


def test_canonical_measure():
    assert canonical_measure("ndcg_cut_10") == canonical_measure("nDCG@10") == "nDCG@10"
    assert canonical_measure(" accuracy ") == "accuracy"


# Every spelling of a bounded measure: (trec_eval or other spelling, ir_measures name).
SPELLINGS = [
    ("P_10", "P@10"),
    ("ndcg_cut_10", "nDCG@10"),
    ("map", "AP"),
    ("MAP", "AP"),
    ("recip_rank", "RR"),
    ("Rprec", "Rprec"),
    ("recall_1000", "R@1000"),
    ("bpref", "Bpref"),
    ("ndcg", "nDCG"),
    ("ndcg@10", "nDCG@10"),
    ("NDCG@10", "nDCG@10"),
    ("P(rel=1)@10", "P@10"),
    ("iprec_at_recall_0.10", "IPrec@0.1"),
]


@pytest.mark.parametrize(("spelled", "name"), SPELLINGS)
def test_every_spelling_has_one_canonical_name_and_the_unit_range(spelled, name):
    # reference: trec_eval's documented names and ir_measures' parser of the canonical form
    assert canonical_measure(spelled) == name == str(parse_measure(name))
    assert measure_range(spelled) == measure_range(name) == (0.0, 1.0)


@pytest.mark.parametrize("name", ["r", "mrr", "score", "my_score_1", "NumRet"])
def test_plain_or_unbounded_names_stay_as_given(name):
    assert canonical_measure(name) == name
    assert measure_range(name) == (-math.inf, math.inf)


@pytest.mark.parametrize("measure", ["P@0", "nDCG@0", "AP@0", "P@10.5", "R@0"])
def test_a_cutoff_below_one_document_is_refused_before_trec_eval_aborts(measure):
    with pytest.raises(MeasureError, match=rf"{measure.replace('.', '[.]')}.*cut-off"):
        parse_measure(measure)


def test_a_cutoff_written_as_a_float_is_the_whole_number():
    assert str(parse_measure("P@1e1")) == "P@10"
