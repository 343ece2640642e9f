"""Replicates (seeds, folds, epochs, repeated runs) from every input that can hold them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from bayes_ir.errors import OptionError, ScoreTableError
from bayes_ir.readers import read_scores

LOGS = Path(__file__).resolve().parent / "llm_logs"

# qrels: query 1 has d1 relevant, query 2 d3 and d4. AP of the two run shapes below:
QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n2 0 d4 1\n"
#: query 1: d1 first (AP 1); query 2: d3 only (AP 1/2)
RUN_A = "1 Q0 d1 1 2.0 tag\n1 Q0 d2 2 1.0 tag\n2 Q0 d3 1 2.0 tag\n"
#: query 1: d1 second (AP 1/2); query 2: d4, d3 (AP 1)
RUN_B = "1 Q0 d2 1 2.0 tag\n1 Q0 d1 2 1.0 tag\n2 Q0 d4 1 2.0 tag\n2 Q0 d3 2 1.0 tag\n"
SEEDS = r"(?P<system>.+)_seed(?P<replicate>\d+)\.run"


def _runs(folder: Path, names: dict[str, str]) -> Path:
    for name, text in names.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _ap(table) -> dict[tuple[str, str, str], float]:
    return {
        (s, t, r): v
        for s, t, r, v in table.data[["system", "topic", "replicate", "score"]].itertuples(
            index=False
        )
    }


def test_tidy_csv_with_a_seed_column(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text(
        "system,topic,seed,score\nbm25,1,1,0.5\nbm25,2,1,0.25\n"
        "dense,1,1,0.75\ndense,2,1,0.5\ndense,1,2,0.25\ndense,2,2,1.0\n"
    )
    table = read_scores(path)
    assert table.replicates("bm25") == ("1",)
    assert table.replicates("dense") == ("1", "2")
    assert table.mean_over_replicates().wide().loc["2", "dense"] == pytest.approx(0.75)
    assert not any("not used" in n for n in table.notes)
    with pytest.raises(ScoreTableError, match=r"runs\.csv: 1 to 2 replicates per system"):
        table.matrix()


def test_parquet_and_dataframes_with_a_fold_column(tmp_path):
    frame = pd.DataFrame(
        {"run": ["a"] * 4, "qid": ["1", "2"] * 2, "fold": [0, 0, 1, 1], "value": [1, 2, 3, 4]}
    )
    path = tmp_path / "folds.parquet"
    frame.to_parquet(path)
    for table in (read_scores(path, check_range=False), read_scores(frame, check_range=False)):
        assert table.replicates() == ("0", "1")
        assert table.one_replicate("1").wide()["a"].to_list() == [3.0, 4.0]


def test_two_replicate_columns_are_one_clear_error(tmp_path):
    path = tmp_path / "both.csv"
    path.write_text("system,topic,seed,fold,score\na,1,1,1,0.5\n")
    with pytest.raises(ScoreTableError, match="columns 'seed' and 'fold' both name the replicate"):
        read_scores(path)


def test_run_files_named_by_a_pattern(tmp_path):
    runs = _runs(tmp_path / "runs", {"bm25_seed1.run": RUN_A, "bm25_seed2.run": RUN_B,
                                     "dense_seed1.run": RUN_B})  # fmt: skip
    (tmp_path / "qrels.txt").write_text(QRELS)
    table = read_scores(runs, qrels=tmp_path / "qrels.txt", measure="AP", replicate_pattern=SEEDS)
    assert _ap(table) == {
        ("bm25", "1", "1"): 1.0,
        ("bm25", "2", "1"): 0.5,
        ("bm25", "1", "2"): 0.5,
        ("bm25", "2", "2"): 1.0,
        ("dense", "1", "1"): 0.5,
        ("dense", "2", "1"): 1.0,
    }
    assert table.replicates("dense") == ("1",)


def test_run_files_in_one_sub_folder_per_system(tmp_path):
    runs = _runs(tmp_path / "runs", {"bm25/seed1.run": RUN_A, "bm25/seed2.run": RUN_B,
                                     "dense/seed1.run": RUN_B, "dense/seed2.run": RUN_B,
                                     "qrels.txt": QRELS})  # fmt: skip
    table = read_scores(runs, qrels=runs / "qrels.txt", measure="AP")
    assert table.replicates("bm25") == ("seed1", "seed2")
    mean = table.mean_over_replicates().wide()
    assert mean.loc["1", "bm25"] == pytest.approx(0.75)
    assert mean.loc["1", "dense"] == pytest.approx(0.5)


def test_trec_eval_files_one_per_seed(tmp_path):
    for seed, values in ((1, ("0.2", "0.4")), (2, ("0.6", "0.8"))):
        text = f"map\t1\t{values[0]}\nmap\t2\t{values[1]}\nrunid\tall\tsame\nmap\tall\t0.3\n"
        (tmp_path / f"bm25_seed{seed}.txt").write_text(text)
    (tmp_path / "dense_seed1.txt").write_text("map\t1\t0.5\nmap\t2\t0.5\n")
    files = sorted(tmp_path.glob("*.txt"))
    table = read_scores(files, replicate_pattern=r"(?P<system>.+)_seed(?P<replicate>\d)")
    assert _ap(table) == {
        ("bm25", "1", "1"): 0.2,
        ("bm25", "2", "1"): 0.4,
        ("bm25", "1", "2"): 0.6,
        ("bm25", "2", "2"): 0.8,
        ("dense", "1", "1"): 0.5,
        ("dense", "2", "1"): 0.5,
    }


def test_inspect_epochs_as_replicates():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_llm_logs", LOGS / "make_llm_logs.py")
    K = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(K)
    files = sorted((LOGS / "inspect").glob("*.json"))
    table = read_scores(files, replicates=True)
    value = {"C": 1.0, "P": 0.5, "I": 0.0}
    for model, grades in K.INSPECT.items():
        assert table.replicates(model) == ("epoch1", "epoch2")
        for e in (0, 1):
            got = table.one_replicate(e).wide()[model].to_list()
            assert got == [value[epochs[e]] for epochs in grades]
    reduced = read_scores(files).wide()
    pd.testing.assert_frame_equal(table.mean_over_replicates().wide(), reduced)
    with pytest.raises(OptionError, match="replicates must be"):
        read_scores(files, replicates="yes")


def test_lm_eval_repeated_runs_in_model_folders(tmp_path):
    source = LOGS / "lm_eval" / "org__model-a"
    name = next(source.glob("samples_arc_easy_*.jsonl")).name
    later = "samples_arc_easy_2024-06-01T09-00-00.000001.jsonl"
    for model in ("org__model-a", "org__model-b"):
        folder = tmp_path / "out" / model
        folder.mkdir(parents=True)
        original = (LOGS / "lm_eval" / model / name).read_text()
        (folder / name).write_text(original)
        rows = [json.loads(line) for line in original.splitlines()]
        flipped = [r | {"acc": 1.0 - r["acc"]} for r in rows]  # the second run: every acc flipped
        (folder / later).write_text("".join(json.dumps(r) + "\n" for r in flipped))
    table = read_scores(
        tmp_path / "out", measure="acc", replicate_pattern=r"_(?P<replicate>[\dT.-]+)\.jsonl$"
    )
    assert table.replicates("org__model-b") == ("2024-05-13T14-32-10.123456",
                                                "2024-06-01T09-00-00.000001")  # fmt: skip
    assert table.collections == ("arc_easy",)
    assert (table.mean_over_replicates().data["score"] == 0.5).all()


# ---------------------------------------------------------------- hostile inputs
@pytest.mark.parametrize(
    ("pattern", "match"),
    [
        (r"(?P<system>.+)_seed\d+", "has no named group"),
        (r".+", "has no named group"),
        (r"(?P<replicate>[", "is not a regular expression"),
    ],
)
def test_patterns_without_the_groups_are_refused(tmp_path, pattern, match):
    runs = _runs(tmp_path / "runs", {"bm25_seed1.run": RUN_A})
    with pytest.raises(OptionError, match=match):
        read_scores(runs, qrels=runs / "x", measure="AP", replicate_pattern=pattern)


def test_a_file_the_pattern_does_not_match_is_named(tmp_path):
    runs = _runs(tmp_path / "runs", {"bm25_seed1.run": RUN_A, "bm25.run": RUN_B})
    (tmp_path / "qrels.txt").write_text(QRELS)
    with pytest.raises(ScoreTableError) as info:
        read_scores(runs, qrels=tmp_path / "qrels.txt", measure="AP", replicate_pattern=SEEDS)
    assert str(info.value) == (
        f"{runs / 'bm25.run'}: the file name 'bm25.run' does not match replicate_pattern {SEEDS!r}"
    )
    with pytest.raises(ScoreTableError, match="does not match replicate_pattern"):
        read_scores(runs, qrels=tmp_path / "qrels.txt", measure="AP",
                    replicate_pattern=r"(?P<system>x)(?P<replicate>\d)fold")  # fmt: skip


def test_an_empty_label_from_the_pattern_is_refused(tmp_path):
    runs = _runs(tmp_path / "runs", {"bm25_seed.run": RUN_A})
    with pytest.raises(ScoreTableError, match="finds an empty replicate in the file name"):
        read_scores(runs, qrels=runs / "x", measure="AP",
                    replicate_pattern=r"(?P<system>.+)_seed(?P<replicate>\d*)")  # fmt: skip


def test_a_replicate_file_of_two_systems_is_refused(tmp_path):
    two = RUN_A + RUN_B.replace("tag", "other")
    runs = _runs(tmp_path / "runs", {"bm25_seed1.run": two})
    (tmp_path / "qrels.txt").write_text(QRELS)
    with pytest.raises(ScoreTableError, match=r"bm25_seed1\.run: holds 2 systems; a replicate"):
        read_scores(runs, qrels=tmp_path / "qrels.txt", measure="AP", replicate_pattern=SEEDS)


def test_two_files_of_one_system_and_replicate_are_refused(tmp_path):
    runs = _runs(tmp_path / "runs", {"bm25_seed1.run": RUN_A, "bm25_seed01.run": RUN_B})
    (tmp_path / "qrels.txt").write_text(QRELS)
    with pytest.raises(ScoreTableError, match=r"system 'bm25', replicate '1' comes from two"):
        read_scores(runs, qrels=tmp_path / "qrels.txt", measure="AP",
                    replicate_pattern=r"(?P<system>.+)_seed0?(?P<replicate>\d+)")  # fmt: skip


def test_systems_and_objects_do_not_go_with_a_pattern(tmp_path):
    runs = _runs(tmp_path / "runs", {"bm25_seed1.run": RUN_A})
    (tmp_path / "qrels.txt").write_text(QRELS)
    with pytest.raises(OptionError, match="systems= does not go with replicate files"):
        read_scores(runs, qrels=tmp_path / "qrels.txt", measure="AP", replicate_pattern=SEEDS,
                    systems=["x"])  # fmt: skip
    frame = pd.DataFrame({"system": ["a"], "topic": ["1"], "score": [0.5]})
    with pytest.raises(OptionError, match="an object in memory has none"):
        read_scores(frame, replicate_pattern=SEEDS)
