"""Readers on the real files in ../shared/data (skipped when absent)."""

from __future__ import annotations

import hashlib

import pytest
from results.readers import (
    BAYESIAN_RISK_SHAPE,
    RANGER_GLUE_ACCURACY,
    RANGER_GLUE_N,
    RANGER_JUDGED,
    RANGER_NDCG10,
    ROBUST2004_SHAPE,
    TREC_ADHOC_SYSTEMS,
)

from bayes_ir.errors import DataWarning
from bayes_ir.readers import detect_format, read_scores

pytestmark = pytest.mark.shared_data


@pytest.mark.parametrize("name", ["rb04_data", "trec17_data", "trec18_data"])
def test_bayesian_risk_csvs(shared_data, name):
    path = shared_data / "bayesian_risk" / f"{name}.csv"
    assert detect_format(path) == "tidy"
    table = read_scores(path, measure="AP")
    assert table.wide().shape == BAYESIAN_RISK_SHAPE
    assert table.is_complete and table.measures == ("AP",)
    roles = table.with_roles(champion="Champion", challengers="Chal.*", artifacts="input.*")
    assert roles.challengers == ("Chal. 1", "Chal. 2", "Chal. 3", "Chal. 4")
    assert len(roles.artifacts) == 40
    assert table.data["score"].between(0, 1).all()


@pytest.mark.parametrize("edition", sorted(TREC_ADHOC_SYSTEMS))
@pytest.mark.parametrize(("suffix", "measure"), [("ap", "AP"), ("p10", "P@10"), ("rr", "RR")])
def test_trec_adhoc_wide(shared_data, edition, suffix, measure):
    path = shared_data / "trec_adhoc" / f"{edition}_{suffix}.csv"
    assert detect_format(path) == "wide"
    table = read_scores(path)
    assert table.collections == (edition,) and table.measures == (measure,)
    assert table.wide().shape == (50, TREC_ADHOC_SYSTEMS[edition])
    assert table.topics[:3] == ("1", "2", "3")  # no topic column: rows numbered from 1


@pytest.mark.parametrize(("suffix", "measure"), [("ap", "AP"), ("p10", "P@10")])
def test_robust2004_wide(shared_data, suffix, measure):
    table = read_scores(shared_data / "robust2004" / f"robust2004_{suffix}.csv")
    assert table.wide().shape == ROBUST2004_SHAPE and table.measures == (measure,)
    assert table.topics[0] == "301" and table.topics[-1] == "700" and "672" not in table.topics


def test_ranger_runs_qrels_mean_ndcg10(shared_data):
    root = shared_data / "ranger" / "retrieval"
    runs = sorted(root.glob("*/*_top10.txt.gz"))
    qrels = sorted((root / "qrels").glob("*_qrels.txt.gz"))
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in [*runs, *qrels]}
    with pytest.warns(DataWarning, match="no judgments"):
        table = read_scores(runs, qrels=qrels, measure="nDCG@10")
    assert set(table.collections) == set(RANGER_NDCG10)
    means = table.system_means().set_index(["collection", "system"])["mean"]
    for coll, (tasb, colberter) in RANGER_NDCG10.items():
        assert round(means[(coll, "tasb_dim768_hf")], 3) == pytest.approx(tasb, abs=1e-9)
        assert round(means[(coll, "colberter_dim1_stopwords")], 3) == pytest.approx(
            colberter, abs=1e-9
        )
        assert len(table.select(collection=coll).topics) == RANGER_JUDGED[coll]
    # The 32 tripclick and 2 podcast queries without judgments are reported, not dropped silently.
    assert any(
        "tripclick" in n and "32 retrieved queries have no judgments" in n for n in table.notes
    )
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in before} == before


def test_ranger_runs_match_tidy_derivative(shared_data):
    """Per-query scores equal the tidy table SOURCE.md derived with ir_measures (all 3 measures)."""
    import pandas as pd

    root = shared_data / "ranger" / "retrieval"
    coll = "nfcorpus"
    runs = sorted(root.glob(f"*/{coll}_top10.txt.gz"))
    table = read_scores(
        runs, qrels=root / "qrels" / f"{coll}_qrels.txt.gz", measure=["nDCG@10", "RR", "P@10"]
    )
    ref = pd.read_csv(
        shared_data / "ranger" / "retrieval_perquery_tidy.csv.gz", dtype={"topic": str}
    )
    ref = ref[ref["collection"] == coll].copy()
    ref["system"] = ref["system"].replace({"colberter_dim1": "colberter_dim1_stopwords"})
    ours = table.data.set_index(["measure", "system", "topic"])["score"].sort_index()
    theirs = ref.set_index(["measure", "system", "topic"])["score"].sort_index()
    theirs = theirs[theirs.index.get_level_values("system").isin(set(table.systems))]
    pd.testing.assert_series_equal(ours, theirs, check_exact=False, atol=1e-12)


def test_ranger_glue_line_files(shared_data):
    files = sorted((shared_data / "ranger" / "glue").glob("*/*/*.txt"))
    assert detect_format(files[0]) == "lines"
    table = read_scores(files)
    assert table.measures == ("accuracy",)
    means = table.system_means().set_index(["collection", "system"])
    for task, (bert, distil) in RANGER_GLUE_ACCURACY.items():
        assert round(means.loc[(task, "bert-base-cased"), "mean"], 3) == pytest.approx(bert)
        assert round(means.loc[(task, "distilbert-base-cased"), "mean"], 3) == pytest.approx(distil)
        assert means.loc[(task, "bert-base-cased"), "n_topics"] == RANGER_GLUE_N[task]
