"""Effect sizes from paired scores, against metafor's escalc and by-hand formulas."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from results import meta_analysis as ref

from bayes_ir.errors import (
    DataWarning,
    InsufficientDataError,
    MeasureError,
    OptionError,
    UnknownSystemError,
)
from bayes_ir.frequentist import effect_size
from bayes_ir.table import ScoreTable


def paired_table(pairs=ref.PAIRED, shuffle: bool = False) -> ScoreTable:
    rows = []
    for coll, (c, t) in pairs.items():
        topics = [f"q{i}" for i in range(len(c))]
        order = list(reversed(range(len(c)))) if shuffle else list(range(len(c)))
        rows += [(coll, "ctl", topics[i], c[i]) for i in range(len(c))]
        rows += [(coll, "trt", topics[i], t[i]) for i in order]
    frame = pd.DataFrame(rows, columns=["collection", "system", "topic", "score"])
    return ScoreTable.from_frame(frame, measure="nDCG@10", missing="keep")


def test_md_matches_escalc_mc():
    eff = effect_size(paired_table(), measure="MD", control="ctl", treatment="trt")
    for coll, (yi, vi) in ref.ESCALC_MC.items():
        row = eff.frame.set_index("collection").loc[coll]
        assert row["yi"] == pytest.approx(yi, rel=1e-10)
        assert row["vi"] == pytest.approx(vi, rel=1e-10)
    assert list(eff.frame.columns[:8]) == [
        "label", "collection", "yi", "vi", "n", "mean_control", "mean_treatment", "r"
    ]  # fmt: skip
    assert eff.frame["mean_control"].iloc[0] == pytest.approx(np.mean(ref.PAIRED["A"][0]))


def test_corr_matches_escalc_zcor():
    eff = effect_size(paired_table(), measure="CORR", control="ctl", treatment="trt")
    for coll, (yi, vi) in ref.ESCALC_ZCOR.items():
        row = eff.frame.set_index("collection").loc[coll]
        assert row["yi"] == pytest.approx(yi, rel=1e-10)
        assert row["vi"] == pytest.approx(vi, rel=1e-12)


def test_smd_by_hand_borenstein():
    c, t = (np.asarray(x) for x in ref.PAIRED["A"])
    n, diff = len(c), t - c
    r = np.corrcoef(c, t)[0, 1]
    s_within = diff.std(ddof=1) / np.sqrt(2 * (1 - r))
    d = diff.mean() / s_within
    j = 1 - 3 / (4 * (n - 1) - 1)
    v = (1 / n + d**2 / (2 * n)) * 2 * (1 - r)
    eff = effect_size(paired_table(), measure="SMD", control="ctl", treatment="trt")
    row = eff.frame.iloc[0]
    assert row["yi"] == pytest.approx(j * d, rel=1e-12)
    assert row["vi"] == pytest.approx(j**2 * v, rel=1e-12)
    ranger = effect_size(
        paired_table(), measure="SMD", control="ctl", treatment="trt", ranger_compatible=True
    )
    d0 = diff.mean() / (diff.std(ddof=0) / np.sqrt(2 * (1 - r)))
    assert ranger.frame.iloc[0]["yi"] == pytest.approx(j * d0, rel=1e-12)


def test_pairs_by_topic_id_not_position():
    a = effect_size(paired_table(), measure="MD", control="ctl", treatment="trt")
    b = effect_size(paired_table(shuffle=True), measure="MD", control="ctl", treatment="trt")
    pd.testing.assert_frame_equal(a.frame, b.frame)


def test_unpaired_topics_reported_and_excluded():
    table = paired_table()
    data = table.data
    drop = (data.system == "trt") & (data.collection == "A") & (data.topic == "q0")
    extra = pd.DataFrame(
        [["B", "nDCG@10", "ctl", "q99", 0.5]],
        columns=["collection", "measure", "system", "topic", "score"],
    )
    gappy = ScoreTable.from_frame(pd.concat([data[~drop], extra]), missing="keep")
    with pytest.warns(DataWarning, match="A: 1, B: 1"):
        eff = effect_size(gappy, measure="MD", control="ctl", treatment="trt")
    assert sorted(map(tuple, eff.unpaired.to_numpy())) == [("A", "q0", "ctl"), ("B", "q99", "ctl")]
    assert list(eff.frame["n"]) == [5, 7]
    c, t = (np.asarray(x)[1:] for x in ref.PAIRED["A"])
    assert eff.frame["yi"].iloc[0] == pytest.approx((t - c).mean())
    assert "unpaired topics excluded" in eff.summary()


def test_extra_measures_and_labels_and_order():
    table = paired_table()
    judged = table.data.assign(
        measure="Judged@10", score=lambda d: np.where(d.system == "ctl", 0.9, 0.6)
    )
    both = ScoreTable.from_frame(pd.concat([table.data, judged]), missing="keep")
    eff = effect_size(
        both, measure="MD", control="ctl", treatment="trt", score_measure="nDCG@10",
        extra_measures=["Judged@10"], collections=["B", "A"], labels={"A": "Alpha"},
    )  # fmt: skip
    assert list(eff.labels) == ["B", "Alpha"]
    assert list(eff.frame["Judged@10_control"]) == pytest.approx([0.9, 0.9])
    assert list(eff.frame["Judged@10_treatment"]) == pytest.approx([0.6, 0.6])


def test_bad_input():
    table = paired_table()
    with pytest.raises(MeasureError, match="unknown effect measure"):
        effect_size(table, measure="OR", control="ctl", treatment="trt")
    with pytest.raises(UnknownSystemError, match="treatment 'new'"):
        effect_size(table, control="ctl", treatment="new")
    small = paired_table({"A": ((0.1, 0.2, 0.4), (0.2, 0.1, 0.5))})
    with pytest.raises(InsufficientDataError, match="CORR needs at least 4"):
        effect_size(small, measure="CORR", control="ctl", treatment="trt")
    flat = paired_table({"A": ((0.1, 0.2, 0.4), (0.2, 0.3, 0.5))})
    with pytest.raises(InsufficientDataError, match="differences are all equal"):
        effect_size(flat, measure="MD", control="ctl", treatment="trt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        effect_size(table, control="ctl", treatment="trt")  # complete table: no warning


def test_bad_arguments_name_the_argument():
    with pytest.raises(OptionError, match="^table must be a ScoreTable, got NoneType"):
        effect_size(None, control="ctl", treatment="trt")
    with pytest.raises(OptionError, match="^ranger_compatible must be True or False"):
        effect_size(paired_table(), control="ctl", treatment="trt", ranger_compatible="no")
