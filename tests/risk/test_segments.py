"""Risk per segment: URisk of each segment's topics and the pooled BRisk, recomputed."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest

from bayes_ir.hierarchical import fit_across
from bayes_ir.risk import SEGMENT_RISK_COLUMNS, risk_adjusted_scores, segment_risk, urisk
from bayes_ir.table import ScoreTable

matplotlib.use("Agg")


def _table():
    rng = np.random.default_rng(8)
    rows = []
    for t in range(36):
        a = rng.normal(0, 0.15)
        seg = ("nav", "info", "long")[t % 3]
        hurt = -0.15 if seg == "long" else 0.03
        for s, shift in (("bm25", 0.0), ("dense", hurt), ("other", 0.01)):
            y = 0.45 + a + shift + rng.normal(0, 0.06)
            rows.append(("c", "AP", s, f"q{t:02d}", float(np.clip(y, 0, 1))))
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    table = ScoreTable.from_frame(frame).with_roles(champion="bm25", challengers=["dense"])
    segments = {f"q{t:02d}": ("nav", "info", "long")[t % 3] for t in range(36)}
    return table, segments


@pytest.fixture(scope="module")
def result():
    table, segments = _table()
    return segment_risk(table, segments, r=2, seed=3, draws=1000, tune=100)


def test_urisk_is_each_segments_own(result):
    table, segments = _table()
    for k, g in enumerate(result.segments):
        topics = [t for t, s in segments.items() if s == g]
        u = urisk(table.select(topics=topics), r=2, champion="bm25", challengers=["dense"])
        assert result.urisk_minus[0, k] == pytest.approx(u.urisk_minus[0])
        assert result.n_topics[k] == 12


def test_brisk_is_the_pooled_model_of_the_risk_adjusted_scores(result):
    table, segments = _table()
    sub = table.select(systems=["bm25", "dense"]).with_roles(champion="bm25", challengers=["dense"])
    fit = fit_across(
        risk_adjusted_scores(sub, r=2), segments=segments, seed=3, draws=1000, tune=100
    )
    np.testing.assert_allclose(result.brisk, fit.contrasts().group)
    frame = result.to_frame()
    assert tuple(frame.columns) == SEGMENT_RISK_COLUMNS
    row = frame[frame["segment"] == "long"].iloc[0]
    x = -result.brisk[:, 0, result.segments.index("long")]
    assert row["brisk_minus"] == pytest.approx(x.mean())
    assert row["p_harm"] == pytest.approx((x > 0).mean())


def test_the_harmed_segment_is_named(result):
    assert result.harmed == {"dense": ("long",)}
    text = result.summary()
    assert "dense: harmed segments: long" in text and "HARMED" in text
    import matplotlib.pyplot as plt

    plt.close(result.plot())
