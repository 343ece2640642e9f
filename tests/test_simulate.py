"""The example-data simulator: seeded, bounded, realistic, and the bundled files regenerate."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import OptionError
from bayes_ir.simulate import DEFAULT_CHALLENGERS, SystemSpec, simulate_judged, simulate_scores

DATA = Path(__file__).resolve().parents[1] / "data"


def _make_module():
    spec = importlib.util.spec_from_file_location(
        "make_example_data", DATA / "make_example_data.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seeded_and_reproducible():
    a, b = simulate_scores(seed=5), simulate_scores(seed=5)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert not simulate_scores(seed=6).data["score"].equals(a.data["score"])


def test_shape_names_and_bounds():
    table = simulate_scores(seed=1, n_topics=30, n_artifacts=12, first_topic=301)
    roles = table.with_roles(champion="bm25", challengers="chal_*")
    assert roles.challengers == tuple(sorted(DEFAULT_CHALLENGERS))
    assert roles.artifacts and len(roles.artifacts) == 12 and "trec_run01" in roles.artifacts
    assert table.topics[0] == "301" and len(table.topics) == 30 and table.is_complete
    s = table.data["score"]
    assert s.between(0, 1).all()
    assert (s.round(4) == s).all()  # trec_eval-like 4 decimals


def test_realistic_like_robust04():
    # rb04 (AP): grand mean 0.31, SD of topic means 0.19, SD of system means 0.02;
    # per-topic AP is right-skewed. Averaged over seeds the simulator is close.
    stats = []
    for seed in range(8):
        m = simulate_scores(seed=seed).wide()
        skew = pd.Series(m.to_numpy().ravel()).skew()
        stats.append((m.to_numpy().mean(), m.mean(axis=1).std(), m.mean(axis=0).std(), skew))
    grand, topic_sd, system_sd, skew = np.mean(stats, axis=0)
    assert 0.25 < grand < 0.4
    assert 0.15 < topic_sd < 0.25
    assert 0.01 < system_sd < 0.05
    assert skew > 0.2


def test_designed_challenger_behaviour_in_example_file():
    table = pd.read_csv(DATA / "example_scores.csv", dtype={"topic": str})
    wide = table.pivot(index="topic", columns="system", values="score")
    diff = wide.drop(columns="bm25").sub(wide["bm25"], axis=0)
    se = diff.std() / np.sqrt(len(diff))
    t = diff.mean() / se
    assert t["chal_fusion"] > 4  # clearly better
    assert abs(t["chal_dense"]) < 1  # about equal
    assert diff["chal_risky"].mean() > 0.03  # better on average ...
    assert (diff["chal_risky"] < -0.1).sum() >= 5  # ... but loses badly on some topics
    assert diff["chal_risky"].min() < diff["chal_fusion"].min() - 0.1
    assert set(wide.columns) == {
        "bm25",
        *DEFAULT_CHALLENGERS,
        *(f"trec_run{i:02d}" for i in range(1, 41)),
    }


def test_several_collections_heterogeneity_zeros_and_judged():
    table = simulate_scores(
        seed=7,
        challengers={"dense": SystemSpec(effect=0.15, spread=0.3)},
        n_artifacts=0,
        collections=["x", "y", "z"],
        n_topics=[30, 40, 50],
        measure="nDCG@10",
        collection_sd=0.3,
        zero_inflation=0.5,
    )
    assert table.collections == ("x", "y", "z")
    assert [len(table.select(collection=c).topics) for c in "xyz"] == [30, 40, 50]
    assert (table.data["score"] == 0).sum() > 0
    judged = simulate_judged(table, depth=10, rates={"bm25": 0.9, "dense": 0.6}, seed=1)
    assert judged.measures == ("Judged@10",)
    np.testing.assert_allclose(judged.data["score"] * 10, np.round(judged.data["score"] * 10))
    means = judged.system_means().groupby("system")["mean"].mean()
    assert means["bm25"] > means["dense"]


def test_bundled_files_regenerate_byte_for_byte():
    make = _make_module()
    for name, frame in (
        ("example_scores.csv", make.example_scores()),
        ("example_collections.csv", make.example_collections()),
    ):
        buffer = io.StringIO()
        frame.to_csv(buffer, index=False, float_format="%.4f", lineterminator="\n")
        assert buffer.getvalue() == (DATA / name).read_text(encoding="utf-8"), name


def test_collections_file_contract():
    frame = pd.read_csv(DATA / "example_collections.csv")
    assert frame["collection"].nunique() == 6
    assert set(frame["measure"]) == {"nDCG@10", "Judged@10"}
    assert set(frame["system"]) == {"bm25", "dense"}
    sizes = frame[frame["measure"] == "nDCG@10"].groupby("collection")["topic"].nunique()
    assert sizes.between(30, 300).all()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_artifacts": -1},
        {"zero_inflation": 2.0},
        {"noise_sd": -1.0},
        {"baseline": 1.0},
        {"collections": ["a", "a"]},
        {"collections": ["a"], "n_topics": [1, 2]},
        {"n_topics": 0},
        {"challengers": {"bm25": SystemSpec()}},
    ],
)
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        simulate_scores(**kwargs)


def test_system_spec_validation():
    with pytest.raises(ValueError, match="loss_prob"):
        SystemSpec(loss_prob=1.5)
    with pytest.raises(ValueError, match="spread"):
        SystemSpec(spread=-0.1)


def test_bundled_runs_and_trec_eval_regenerate(tmp_path):
    make = _make_module()
    make.example_runs(tmp_path / "example_runs")
    make.example_trec_eval(tmp_path / "example_runs", tmp_path / "example_trec_eval.txt")
    for name in (
        "example_runs/bm25.run",
        "example_runs/dense.run",
        "example_runs/qrels.txt",
        "example_trec_eval.txt",
    ):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


@pytest.mark.shared_data
def test_close_to_real_robust04(shared_data):
    """Grand mean, SD of topic means and of system means within 35% of TREC 2004 Robust's."""
    real = pd.read_csv(shared_data / "bayesian_risk" / "rb04_data.csv")
    m = real.pivot(index="topic", columns="system", values="score")
    target = np.array([m.to_numpy().mean(), m.mean(axis=1).std(), m.mean(axis=0).std()])
    sims = [simulate_scores(seed=s).wide() for s in range(8)]
    got = np.mean(
        [[w.to_numpy().mean(), w.mean(axis=1).std(), w.mean(axis=0).std()] for w in sims], axis=0
    )
    np.testing.assert_allclose(got, target, rtol=0.35)


@pytest.mark.parametrize(
    ("option", "value"),
    [("seed", -3), ("seed", 1.7), ("seed", 1 + 2j), ("n_topics", 0), ("n_topics", 2.5),
     ("n_artifacts", -1), ("n_artifacts", 1e3), ("noise_sd", float("nan")),
     ("topic_sd", float("inf")), ("skew", "3"), ("zero_inflation", 1.5), ("baseline", 1.0),
     ("decimals", -1), ("first_topic", 1.0)],
)  # fmt: skip
def test_bad_options_name_the_argument(option, value):
    with pytest.raises(OptionError, match=f"^{option} must"):
        simulate_scores(**{"n_topics": 5, "n_artifacts": 2, option: value})


@pytest.mark.parametrize(
    ("field", "value"), [("effect", float("nan")), ("spread", -0.1), ("loss_prob", 1.1),
                         ("loss", 1j)],
)  # fmt: skip
def test_bad_system_spec(field, value):
    with pytest.raises(OptionError, match=f"^{field} must"):
        SystemSpec(**{field: value})
