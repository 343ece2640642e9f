"""``--by collection`` and ``--segments`` on ``fit``, ``decide`` and ``review``; their inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayes_ir.hierarchical.group_effects import ACROSS_COLUMNS

DRAWS = ["--draws", "600", "--chains", "2", "--seed", "3", "--quiet"]


def _frame(n_coll=3, measures=None):
    rng = np.random.default_rng(2)
    rows = []
    for c in range(n_coll):
        for t in range(14):
            a = rng.normal(0, 0.1)
            for s, shift in (("bm25", 0.0), ("dense", 0.04), ("other", 0.01)):
                y = float(np.clip(0.4 + a + shift + rng.normal(0, 0.05), 0, 1))
                rows.append((f"coll{c}", measures[c] if measures else "AP", s, f"{c}_{t}", y))
    return pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])


@pytest.fixture
def tidy(tmp_path):
    path = tmp_path / "scores.csv"
    _frame().to_csv(path, index=False)
    return path


def test_fit_by_collection_prints_and_writes(run_cli, tidy, tmp_path):
    out = tmp_path / "across.csv"
    figures = tmp_path / "figs"
    figures.mkdir()
    code, text, err = run_cli(["fit", str(tidy), "-c", "bm25", "-C", "dense", "--by", "collection",
                               "-o", str(out), "--figures", str(figures), *DRAWS])  # fmt: skip
    assert code == 0, err
    assert "across 3 collections" in text and "on a new collection" in text
    assert "wins on k of 3 collections" in text
    frame = pd.read_csv(out)
    assert tuple(frame.columns) == ACROSS_COLUMNS
    assert set(frame["level"]) >= {"coll0", "coll1", "coll2", "overall"}
    assert (figures / "forest_across.png").stat().st_size > 1000


def test_folder_per_collection_and_sd_scale(run_cli, tmp_path):
    frame = _frame(measures=["AP", "nDCG@10", "AP"])
    root = tmp_path / "collections"
    for c, part in frame.groupby("collection"):
        (root / c).mkdir(parents=True)
        part.drop(columns="collection").to_csv(root / c / "scores.csv", index=False)
    code, text, err = run_cli(
        ["fit", str(root), "-c", "bm25", "-C", "dense", "--by", "collection", *DRAWS]
    )
    assert code == 0, err
    assert "residual SDs of each collection" in text and "coll2" in text


def test_segments_from_a_pattern_and_a_file(run_cli, tmp_path):
    path = tmp_path / "one.csv"
    one = _frame().assign(collection="c")
    one.to_csv(path, index=False)
    code, text, err = run_cli(["decide", str(path), "-c", "bm25", "-C", "dense",
                               "--segments", r"re:^(\d+)_", "--over", "new", *DRAWS])  # fmt: skip
    assert code == 0, err
    assert "on a new segment" in text
    seg = tmp_path / "segments.csv"
    pd.DataFrame({"topic": one["topic"], "segment": one["topic"].str[0]}).drop_duplicates().to_csv(
        seg, index=False
    )
    code, text, err = run_cli(
        ["fit", str(path), "-c", "bm25", "-C", "dense", "--segments", str(seg), *DRAWS]
    )
    assert code == 0, err
    assert "across 3 segments" in text


def test_review_across(run_cli, tidy, tmp_path):
    out = tmp_path / "review.html"
    args = ["-c", "bm25", "-C", "dense", "--by", "collection", "-o", str(out), *DRAWS]
    code, text, err = run_cli(["review", str(tidy), *args])
    assert code == 0, err
    html = out.read_text()
    assert "On the average contrast" in text
    for part in ("REML", "DL", "between-collection SD", "Provenance", "<svg"):
        assert part in html


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--by", "topic"], "--by 'topic': choose 'collection' or 'segment'"),
        (["--by", "segment"], "--by segment needs --segments"),
        (["--by", "collection", "--save", "x.nc"], "--sweep and --save apply to one collection"),
        (["--by", "collection", "--likelihood", "skew_normal"], "not available across"),
        (["--by", "collection", "--likelihood", "bernoulli"], "needs 0/1 scores"),
        (["--segments", "re:^(x)"], "does not match topic"),
    ],
)
def test_bad_options_say_so_in_one_line(run_cli, tidy, args, message):
    code, out, err = run_cli(["fit", str(tidy), "-c", "bm25", "-C", "dense", *args, *DRAWS])
    assert code == 2
    assert message in err and "Traceback" not in err


def test_a_ranger_yaml_config(run_cli):
    config = Path(__file__).resolve().parents[2] / "data" / "example_meta.yaml"
    code, text, err = run_cli(
        ["fit", str(config), "-c", "bm25", "-C", "dense", "--by", "collection", *DRAWS]
    )
    assert code == 0, err
    assert "across 6 collections" in text and "webis-touche2020" in text and "nDCG@10" in text


def test_next_steps_follow_every_command_across_groups(run_cli, tidy):
    args = [str(tidy), "-c", "bm25", "-C", "dense", "--by", "collection", *DRAWS]
    code, text, err = run_cli(["fit", *args])
    assert code == 0, err
    steps = text.split("next:")[1]
    assert "bayes-ir decide" in steps and "--by collection" in steps
    assert "--over new" in steps and "bayes-ir review" in steps
    code, text, err = run_cli(["decide", *args, "--over", "new"])
    assert code == 0, err
    assert "on a new collection): " in text  # the title says what was decided on
    assert "observed: the mean over the collections of each one's raw mean difference" in text
    assert "--over average" in text.split("next:")[1]


def test_a_misfitting_system_is_marked_and_never_deployed(run_cli, tmp_path):
    rng = np.random.default_rng(8)
    rows = []
    for c, n_t in enumerate((30, 60, 30)):
        for t in range(n_t):
            a = rng.normal(0, 0.1)
            for k in range(8):
                sd = 0.15 if (c, k) == (1, 1) else 0.05
                rows.append(
                    (f"c{c}", "AP", f"s{k}", f"q{t}", 0.4 + a + 0.005 * k + rng.normal(0, sd))
                )
    path = tmp_path / "wide.csv"
    pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"]).to_csv(
        path, index=False
    )
    args = [str(path), "-c", "s0", "-C", "s1", "-C", "s2", "--by", "collection",
            "--no-range-check", *DRAWS]  # fmt: skip
    code, text, err = run_cli(["fit", *args])
    assert code == 0, err
    assert "s1 \u2020 - s0" in text and "model misfit" in text and "in c1" in text
    code, text, err = run_cli(["decide", *args])
    assert code == 0, err
    assert "s1 \u2020" in text and "unreliable" in text


def test_risk_per_segment(run_cli, tmp_path):
    path = tmp_path / "one.csv"
    _frame().assign(collection="c").to_csv(path, index=False)
    out, plot = tmp_path / "risk.csv", tmp_path / "risk.png"
    code, text, err = run_cli(["risk", str(path), "-c", "bm25", "-C", "dense", "--segments",
                               r"re:^(\d+)_", "-o", str(out), "--plot", str(plot),
                               *DRAWS])  # fmt: skip
    assert code == 0, err
    assert "Risk per segment" in text and "harmed segments" in text and "next:" in text
    frame = pd.read_csv(out)
    assert len(frame) == 3 and set(frame["segment"].astype(str)) == {"0", "1", "2"}
    assert plot.stat().st_size > 1000
    code, _, err = run_cli(["risk", str(path), "-c", "bm25", "-C", "dense", "--segments",
                            r"re:^(\d+)_", "--no-bayes"])  # fmt: skip
    assert code == 2 and "--no-bayes does not apply" in err


def test_review_across_segments_has_the_risk_per_segment(run_cli, tmp_path):
    path = tmp_path / "one.csv"
    _frame().assign(collection="c").to_csv(path, index=False)
    out = tmp_path / "review.html"
    code, text, err = run_cli(["review", str(path), "-c", "bm25", "-C", "dense", "--segments",
                               r"re:^(\d+)_", "-o", str(out), *DRAWS])  # fmt: skip
    assert code == 0, err
    html = out.read_text()
    assert 'id="risk"' in html and "URisk-" in html and 'id="model-check"' in html


def test_hostile_tables(run_cli, tmp_path):
    frame = _frame()
    one_topic = pd.concat([frame, pd.DataFrame(
        [("solo", "AP", s, "x1", 0.5) for s in ("bm25", "dense", "other")],
        columns=frame.columns)])  # fmt: skip
    path = tmp_path / "one_topic.csv"
    one_topic.to_csv(path, index=False)
    code, _, err = run_cli(["fit", str(path), "-c", "bm25", "-C", "dense", "--by", "collection",
                            *DRAWS])  # fmt: skip
    assert code == 2 and "collection 'solo'" in err and "has 1" in err
    mixed = tmp_path / "mixed.csv"
    _frame(measures=["AP", "nDCG@10", "P@10"]).to_csv(mixed, index=False)
    code, _, err = run_cli(["fit", str(mixed), "-c", "bm25", "-C", "dense", "--by", "collection",
                            "--scale", "measure", *DRAWS])  # fmt: skip
    assert code == 2 and "--scale measure needs one measure in every collection" in err
    code, text, err = run_cli(["fit", str(mixed), "-c", "bm25", "-C", "dense", "--by",
                               "collection", *DRAWS])  # fmt: skip
    assert code == 0 and "residual SDs of each collection" in text
    missing = tmp_path / "missing.csv"
    frame[~((frame["collection"] == "coll2") & (frame["system"] == "dense"))].to_csv(
        missing, index=False
    )
    code, text, err = run_cli(["fit", str(missing), "-c", "bm25", "-C", "dense", "--by",
                               "collection", "--missing", "keep", *DRAWS])  # fmt: skip
    assert code == 0, err
    assert "not compared in coll2" in text and "wins on k of 2 collections" in text


@pytest.mark.slow
def test_a_family_across_collections(run_cli, tmp_path):
    """``--likelihood zoib`` across collections: score-scale contrasts, said in the output and
    kept in the next steps."""
    path = tmp_path / "unit.csv"
    frame = _frame()
    frame.loc[frame.index % 7 == 0, "score"] = 0.0
    frame.to_csv(path, index=False)
    args = [str(path), "-c", "bm25", "-C", "dense", "--by", "collection", "--likelihood", "zoib"]
    code, text, err = run_cli(["fit", *args, "--draws", "400", "--tune", "300", "--seed", "3"])
    assert code == 0, err
    assert "(zoib; nuts)" in text and "between-collection SD (logit)" in text
    assert "Scale: zoib model" in text
    assert "--likelihood zoib" in text.split("next:")[1]
