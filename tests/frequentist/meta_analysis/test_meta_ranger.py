"""Ranger's published tables reproduced in ranger_compatible mode (Sertkan et al. 2023).

The reference CSV holds the numbers printed by Ranger's own notebooks
(examples/classification_glue.ipynb, examples/retrieval_colberter.ipynb @ 17113419); it is
read from ../shared/data/ranger and never copied into the repository.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from results import meta_analysis as ref

from bayes_ir.frequentist import effect_size, meta_analysis
from bayes_ir.table import ScoreTable

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def published(shared_data):
    return pd.read_csv(shared_data / "ranger" / "ranger_notebook_reference_outputs.csv")


def ranger_fit(path, names, measure, control, treatment, score_measure=None):
    data = pd.read_csv(path)
    if score_measure is not None:
        data = data[data["measure"] == score_measure]
    table = ScoreTable.from_frame(data, check_range=False)
    effects = effect_size(
        table, measure=measure, control=control, treatment=treatment, labels=names,
        collections=list(names), ranger_compatible=True,
    )  # fmt: skip
    return meta_analysis(effects, ranger_compatible=True)


def compare(frame: pd.DataFrame, expected: pd.DataFrame, weights: bool) -> None:
    got = frame.set_index("label")
    for _, row in expected.iterrows():
        ours = got.loc[row["experiment"]]
        for col in ("estimate", "ci_lower", "ci_upper"):
            key = {"estimate": "eff", "ci_lower": "ci_low", "ci_upper": "ci_upp"}[col]
            assert ours[col] == pytest.approx(row[key], abs=1e-6), (row["experiment"], col)
        # Ranger computes p as 2 * (1 - Phi(|z|)), which rounds to 0 below ~1e-16
        assert ours["p_value"] == pytest.approx(row["p"], abs=1e-6, rel=1e-5)
        if weights:
            assert ours["weight"] == pytest.approx(row["w_re"], abs=1e-6)


def test_glue_smd_all_eight_rows(shared_data, published):
    res = ranger_fit(
        shared_data / "ranger" / "glue_persample_tidy.csv.gz", ref.RANGER_GLUE_NAMES, "SMD",
        "bert-base-cased", "distilbert-base-cased",
    )  # fmt: skip
    expected = published[published["analysis"] == "glue"]
    assert len(expected) == 8
    frame = res.to_frame()
    frame.loc[frame["kind"] == "random", "label"] = "combined_effect"
    compare(frame, expected, weights=True)
    assert res.estimate == pytest.approx(-0.054860, abs=1e-6)
    ci = res.conf_int()
    assert (ci.ci_lower, ci.ci_upper) == pytest.approx((-0.078603, -0.031118), abs=1e-6)


def test_retrieval_md_six_rows(shared_data, published):
    res = ranger_fit(
        shared_data / "ranger" / "retrieval_perquery_tidy.csv.gz", ref.RANGER_RETRIEVAL_NAMES,
        "MD", "tasb_dim768_hf", "colberter_dim1", score_measure="nDCG@10",
    )  # fmt: skip
    expected = published[
        (published["analysis"] == "retrieval_ndcg10")
        & published["experiment"].isin(ref.RANGER_RETRIEVAL_NAMES.values())
    ]
    assert len(expected) == 6
    # the per-collection rows do not depend on robust04; the weights do (not compared)
    compare(res.to_frame(), expected, weights=False)
    exp = ref.RANGER_RETRIEVAL_6
    ci = res.conf_int()
    assert res.estimate == pytest.approx(exp["estimate"], abs=1e-6)
    assert (ci.ci_lower, ci.ci_upper) == pytest.approx((exp["ci_lower"], exp["ci_upper"]), abs=1e-6)
    assert res.p_value == pytest.approx(exp["p_value"], abs=1e-6)


def test_default_mode_differs_from_ranger(shared_data):
    path = shared_data / "ranger" / "glue_persample_tidy.csv.gz"
    table = ScoreTable.from_frame(pd.read_csv(path))
    ours = effect_size(
        table, measure="SMD", control="bert-base-cased", treatment="distilbert-base-cased"
    )
    ranger = effect_size(
        table, measure="SMD", control="bert-base-cased", treatment="distilbert-base-cased",
        ranger_compatible=True,
    )  # fmt: skip
    n = ours.frame["n"].to_numpy()
    # ddof=1 shrinks |g| by sqrt((n-1)/n)
    np.testing.assert_allclose(ours.yi, ranger.yi * np.sqrt((n - 1) / n), rtol=1e-12)
