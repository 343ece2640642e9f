"""The forest plot draws what the meta-analysis result holds."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection, PathCollection  # noqa: E402
from matplotlib.patches import Polygon  # noqa: E402

from bayes_ir.frequentist import effect_size, meta_analysis  # noqa: E402
from bayes_ir.plots.forest import forest_plot  # noqa: E402
from bayes_ir.table import ScoreTable  # noqa: E402


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(4)
    rows = []
    for coll, n, gain in (("alpha", 40, 0.05), ("beta", 120, 0.02), ("gamma", 25, -0.03)):
        base = rng.uniform(0.1, 0.7, n)
        new = np.clip(base + gain + rng.normal(0, 0.08, n), 0, 1)
        for i in range(n):
            rows += [
                (coll, "nDCG@10", "bm25", str(i), base[i]),
                (coll, "nDCG@10", "dense", str(i), new[i]),
                (coll, "Judged@10", "bm25", str(i), 0.9),
                (coll, "Judged@10", "dense", str(i), 0.7),
            ]
    table = ScoreTable.from_frame(
        pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    )
    eff = effect_size(
        table, control="bm25", treatment="dense", score_measure="nDCG@10",
        extra_measures=["Judged@10"],
    )  # fmt: skip
    return meta_analysis(eff, method="REML")


def texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_rows_markers_diamond_and_columns(result):
    fig = forest_plot(result)
    ax = fig.axes[0]
    frame = result.to_frame()
    study = frame[frame.kind == "study"]
    squares = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(squares) == 1
    xy = squares[0].get_offsets()
    np.testing.assert_allclose(xy[:, 0], study["estimate"])
    sizes = squares[0].get_sizes()
    assert np.argsort(sizes).tolist() == np.argsort(study["weight"].to_numpy()).tolist()
    diamond = [p for p in ax.patches if isinstance(p, Polygon)][0].get_xy()[:4]
    pooled = frame[frame.kind == "random"].iloc[0]
    np.testing.assert_allclose(
        diamond[:, 0], [pooled.ci_lower, pooled.estimate, pooled.ci_upper, pooled.estimate]
    )
    segs = [s for c in ax.collections if isinstance(c, LineCollection) for s in c.get_segments()]
    ends = {(round(s[0][0], 12), round(s[-1][0], 12)) for s in segs}
    for row in study.itertuples():
        assert (round(row.ci_lower, 12), round(row.ci_upper, 12)) in ends  # whiskers
    assert (round(pooled.pi_lower, 12), round(pooled.pi_upper, 12)) in ends  # prediction interval
    zero = [s for s in segs if s[0][0] == 0.0 and s[-1][0] == 0.0]
    assert zero, "no vertical line at 0"
    words = texts(fig)
    for row in study.itertuples():
        assert f"{100 * row.weight:.1f}%" in words
        assert f"{row.estimate:.3f}".replace("-", "\u2212") in " ".join(words)
        assert f"{row.mean_control:.3f} \u2192 {row.mean_treatment:.3f}" in words
    assert "0.90 \u2192 0.70" in words  # judged ratio column
    assert any(w.startswith("Random-effects model (REML") for w in words)
    assert any(w.startswith("Prediction interval (95%)") for w in words)
    plt.close(fig)


def test_labels_width_and_files(result, tmp_path):
    fig = forest_plot(result, labels={"alpha": "Alpha"}, width=8.0)
    assert fig.get_figwidth() == pytest.approx(8.0)
    assert "Alpha" in texts(fig)
    plt.close(fig)
    fig = forest_plot(result, labels=["A", "B", "C"], show_prediction=False, show_extra=False)
    words = texts(fig)
    assert {"A", "B", "C"} <= set(words)
    assert not any(w.startswith("Prediction interval") for w in words)
    assert "0.90 \u2192 0.70" not in words
    plt.close(fig)
    with pytest.raises(ValueError, match="labels has 2 entries"):
        forest_plot(result, labels=["A", "B"])
    magic = {"pdf": b"%PDF", "png": b"\x89PNG", "svg": b"<?xml"}
    for ext, head in magic.items():
        path = tmp_path / f"forest.{ext}"
        plt.close(result.plot(path=path))
        assert path.read_bytes()[: len(head)] == head
