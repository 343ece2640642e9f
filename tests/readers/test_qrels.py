"""Qrels in every form (file, dict, DataFrame, ir_measures/ir_datasets namedtuples)."""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pandas as pd
import pytest

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers import load_qrels, read_scores

pytestmark = pytest.mark.filterwarnings("ignore::bayes_ir.errors.DataWarning")  # query 6
RUNS = Path(__file__).resolve().parents[2] / "data" / "example_runs"
QRELS = RUNS / "qrels.txt"


def judged() -> list[tuple[str, str, int]]:
    """The qrels file's triples, parsed by ir_measures (the reference parser)."""
    return [(q.query_id, q.doc_id, q.relevance) for q in ir_measures.read_trec_qrels(str(QRELS))]


def forms() -> dict[str, object]:
    triples = judged()
    nested: dict[str, dict[str, int]] = {}
    for q, d, g in triples:
        nested.setdefault(q, {})[d] = g
    return {
        "dict": nested,
        "ir_measures Qrel list": [ir_measures.Qrel(q, d, g) for q, d, g in triples],
        "ir_measures DataFrame": pd.DataFrame(triples, columns=["query_id", "doc_id", "relevance"]),
        "PyTerrier DataFrame": pd.DataFrame(triples, columns=["qid", "docno", "label"]),
    }


@pytest.mark.parametrize("form", list(forms()))
def test_every_form_scores_like_the_file(form):
    qrels = forms()[form]
    expected = read_scores(RUNS / "bm25.run", qrels=QRELS, measure="nDCG@10")
    assert load_qrels(qrels)[0] == load_qrels(QRELS)[0]
    table = read_scores(RUNS / "bm25.run", qrels=qrels, measure="nDCG@10")
    assert table.wide().equals(expected.wide())


def test_bad_qrels_objects():
    with pytest.raises(ScoreTableError, match=r"<qrels dict>: item 2: relevance grade 'high'"):
        load_qrels({"1": {"a": 1, "b": "high"}})
    with pytest.raises(ScoreTableError, match=r"<ir_measures qrels>: document 'a' of query '1'"):
        load_qrels([ir_measures.Qrel("1", "a", 1), ir_measures.Qrel("1", "a", 0)])
    with pytest.raises(ScoreTableError, match=r"item 2 is int, not a qrel"):
        load_qrels([ir_measures.Qrel("1", "a", 1), 5])
    with pytest.raises(ScoreTableError, match=r"qrels hold no judgments"):
        read_scores(RUNS / "bm25.run", qrels={}, measure="AP")
    with pytest.raises(ScoreTableError, match=r"qrels= got float"):
        read_scores(RUNS / "bm25.run", qrels=1.5, measure="AP")
