"""Each input format on small hand-made files: what is read, names, detection, override."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from results.readers import TINY_AP, TINY_NDCG3, TINY_P2

from bayes_ir.errors import DataWarning, MeasureError, ScoreTableError
from bayes_ir.readers import READERS, detect_format, read_scores
from bayes_ir.report import write_trec_eval
from bayes_ir.table import ScoreTable

DATA = Path(__file__).resolve().parents[2] / "data"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------- registry and detection
def test_registry_has_every_format():
    assert set(READERS) == {
        "tidy",
        "wide",
        "trec_eval",
        "run",
        "lines",
        "pyterrier",
        "ranx",
        "ir_measures",
        "lm_eval",
        "inspect",
        "helm",
        "swebench",
    }
    files = {n for n, r in READERS.items() if r.read is not None}
    assert files == {"tidy", "wide", "trec_eval", "run", "lines", "pyterrier", "lm_eval",
                     "inspect", "helm", "swebench"}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("example_scores.csv", "tidy"),
        ("example_collections.csv", "tidy"),
        ("example_trec_eval.txt", "trec_eval"),
        ("example_runs/bm25.run", "run"),
    ],
)
def test_detect_bundled_examples(name, fmt):
    assert detect_format(DATA / name) == fmt


def test_detect_wide_and_lines(tmp_path):
    assert detect_format(write(tmp_path / "m.csv", "a,b\n0.1,0.2\n0.3,0.4\n")) == "wide"
    assert detect_format(write(tmp_path / "m.tsv", "topic\ta\tb\n1\t0.1\t0.2\n")) == "wide"
    assert detect_format(write(tmp_path / "x.txt", "1.0\n0.0\n1.0\n")) == "lines"


def test_detect_qrels_gives_a_hint():
    with pytest.raises(ScoreTableError, match="looks like a qrels file: pass it as qrels="):
        read_scores(DATA / "example_runs" / "qrels.txt")


def test_detect_unknown_names_the_file(tmp_path):
    path = write(tmp_path / "notes.txt", "hello world, this is prose\nmore prose here\n")
    with pytest.raises(ScoreTableError, match="notes.txt.*cannot tell the format"):
        detect_format(path)


def test_format_override_beats_detection(tmp_path):
    # Three numeric columns without header-like names sniff as wide; force tidy instead.
    path = write(tmp_path / "t.csv", "run,qid,value\nA,1,0.5\nB,1,0.25\n")
    assert detect_format(path) == "tidy"
    table = read_scores(path, format="tidy", measure="AP")
    assert table.systems == ("A", "B")
    with pytest.raises(ScoreTableError, match="unknown input format 'nope'"):
        read_scores(path, format="nope")


# ---------------------------------------------------------------------- tidy
def test_tidy_csv_tsv_gzip_parquet_agree(tmp_path):
    frame = pd.DataFrame(
        {
            "system": ["a", "a", "b", "b"],
            "topic": ["1", "2", "1", "2"],
            "score": [0.1, 0.2, 0.3, 0.4],
        }
    )
    frame.to_csv(tmp_path / "s.csv", index=False)
    frame.to_csv(tmp_path / "s.tsv", index=False, sep="\t")
    with gzip.open(tmp_path / "s.csv.gz", "wt") as fh:
        frame.to_csv(fh, index=False)
    pytest.importorskip("pyarrow")
    frame.to_parquet(tmp_path / "s.parquet")
    tables = [
        read_scores(tmp_path / n, measure="AP", collection="c")
        for n in ("s.csv", "s.tsv", "s.csv.gz", "s.parquet")
    ]
    for t in tables:
        pd.testing.assert_frame_equal(t.data, tables[0].data)
    assert tables[0].measures == ("AP",) and tables[0].collections == ("c",)
    np.testing.assert_allclose(tables[0].wide().to_numpy(), [[0.1, 0.3], [0.2, 0.4]])


def test_tidy_measure_filter_accepts_trec_eval_spelling():
    table = read_scores(DATA / "example_collections.csv", measure="ndcg_cut_10")
    assert table.measures == ("nDCG@10",)
    assert len(table.collections) == 6


def test_example_scores_contract():
    table = read_scores(DATA / "example_scores.csv")
    assert table.collections == ("example",) and table.measures == ("AP",)
    assert len(table.topics) == 50 and table.topics[0] == "401" and table.topics[-1] == "450"
    assert table.is_complete
    roles = table.with_roles(champion="bm25", challengers="chal_*")
    assert roles.challengers == ("chal_dense", "chal_fusion", "chal_rerank", "chal_risky")
    assert len(roles.artifacts) == 40


# ---------------------------------------------------------------------- wide
def test_wide_without_and_with_topic_column(tmp_path):
    a = read_scores(write(tmp_path / "coll_ap.csv", "s1,s2\n0.1,0.2\n0.3,0.4\n0.5,0.6\n"))
    assert a.topics == ("1", "2", "3") and a.measures == ("AP",) and a.collections == ("coll",)
    b = read_scores(write(tmp_path / "x_p10.csv", '"topic","s1","s2"\n301,0.1,0.2\n302,0.3,0.4\n'))
    assert b.topics == ("301", "302") and b.measures == ("P@10",)
    assert b.wide().loc["302", "s2"] == pytest.approx(0.4)


def test_wide_empty_cells_are_missing(tmp_path):
    path = write(tmp_path / "w.csv", "topic,s1,s2\n1,0.1,\n2,0.3,0.4\n")
    with pytest.raises(ScoreTableError, match="'s2' has no score for 1 topic"):
        read_scores(path)
    kept = read_scores(path, missing="keep")
    assert np.isnan(kept.wide().loc["1", "s2"])
    with pytest.warns(DataWarning, match="dropped 1 topic"):
        assert read_scores(path, missing="intersect").topics == ("2",)


# ---------------------------------------------------------------------- trec_eval
TREC_EVAL_TWO_RUNS = """\
map                   \t301\t0.2500
P_10                  \t301\t0.3000
map                   \t302\t0.5000
P_10                  \t302\t0.1000
runid                 \tall\trunA
num_q                 \tall\t2
map                   \tall\t0.3750
map                   \t301\t0.1000
P_10                  \t301\t0.2000
map                   \t302\t0.7000
P_10                  \t302\t0.4000
runid                 \tall\trunB
map                   \tall\t0.4000
"""


def test_trec_eval_many_runs_runid_and_all_rows_ignored(tmp_path):
    table = read_scores(write(tmp_path / "eval.txt", TREC_EVAL_TWO_RUNS))
    assert table.systems == ("runA", "runB")
    assert set(table.measures) == {"AP", "P@10"}
    ap = table.wide(measure="AP")
    assert ap.loc["302", "runB"] == pytest.approx(0.7)
    assert "all" not in table.topics
    only = read_scores(tmp_path / "eval.txt", measure="P_10")
    assert only.measures == ("P@10",)
    same = read_scores(tmp_path / "eval.txt", measure="P@10")
    pd.testing.assert_frame_equal(only.data, same.data)


def test_trec_eval_run_name_from_file_name_and_count_measures(tmp_path):
    text = "num_ret\t1\t10\nndcg_cut_10\t1\t0.5\nndcg_cut_10\t2\t0.25\nnum_ret\t2\t10\n"
    table = read_scores(write(tmp_path / "bm25.eval", text))
    assert table.systems == ("bm25",)
    assert table.measures == ("nDCG@10",)  # counts are left out unless asked for
    counts = read_scores(tmp_path / "bm25.eval", measure="num_ret")
    assert counts.measures == ("NumRet",)


def test_trec_eval_several_files(tmp_path):
    write(tmp_path / "a.txt", "map\t1\t0.1\nmap\t2\t0.2\n")
    write(tmp_path / "b.txt", "map\t1\t0.3\nmap\t2\t0.4\n")
    table = read_scores([tmp_path / "a.txt", tmp_path / "b.txt"])
    assert table.systems == ("a", "b")
    assert table.wide().loc["2", "b"] == pytest.approx(0.4)


def test_trec_eval_unknown_measure_raises_measure_error(tmp_path):
    with pytest.raises(MeasureError, match="nDCG@@10"):
        read_scores(write(tmp_path / "e.txt", "map\t1\t0.1\n"), measure="nDCG@@10")


def test_trec_eval_round_trip(tmp_path):
    # Scores with 4 decimals (what trec_eval prints) survive write -> read exactly.
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        [
            (s, m, str(t), round(float(rng.uniform()), 4))
            for s in ("bm25", "dense", "x.run")
            for m in ("AP", "nDCG@10", "P@10", "RR", "R@1000")
            for t in range(401, 421)
        ],
        columns=["system", "measure", "topic", "score"],
    )
    original = ScoreTable.from_frame(frame, collection="default")
    path = write_trec_eval(original, tmp_path / "round.txt")
    text = path.read_text()
    assert "runid                 \tall\tbm25" in text and "ndcg_cut_10" in text
    back = read_scores(path)
    pd.testing.assert_frame_equal(back.data, original.data)


def test_trec_eval_bundled_example_matches_runs():
    from_eval = read_scores(DATA / "example_trec_eval.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        from_runs = read_scores(
            sorted((DATA / "example_runs").glob("*.run")),
            qrels=DATA / "example_runs" / "qrels.txt",
            measure=["AP", "P@5", "nDCG@10"],
        )
    a = from_eval.data.set_index(["measure", "system", "topic"])["score"]
    b = from_runs.data.set_index(["measure", "system", "topic"])["score"]
    pd.testing.assert_series_equal(a.sort_index(), b.sort_index(), atol=5e-5, check_exact=False)


# ---------------------------------------------------------------------- runs + qrels
def _tiny(tmp_path: Path) -> tuple[Path, Path]:
    qrels = write(tmp_path / "qrels.txt", "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 d9 2\n3 0 d1 1\n")
    run = write(
        tmp_path / "sys.run",
        "1 Q0 d1 1 3.0 mysys\n1 Q0 d2 2 2.0 mysys\n1 Q0 d3 3 1.0 mysys\n"
        "2 Q0 d5 1 1.0 mysys\n4 Q0 d1 1 9.0 mysys\n",
    )
    return run, qrels


def test_runs_closed_forms_and_names(tmp_path):
    run, qrels = _tiny(tmp_path)
    with pytest.warns(DataWarning, match="no judgments"):
        table = read_scores(run, qrels=qrels, measure=["AP", "P@2", "nDCG@3"], collection="tiny")
    assert table.systems == ("mysys",) and table.collections == ("tiny",)
    scores = table.data.set_index(["measure", "topic"])["score"]
    assert scores[("AP", "1")] == pytest.approx(TINY_AP)
    assert scores[("P@2", "1")] == pytest.approx(TINY_P2)
    assert scores[("nDCG@3", "1")] == pytest.approx(TINY_NDCG3)
    assert scores[("AP", "2")] == 0.0  # retrieved, nothing relevant found
    assert scores[("AP", "3")] == 0.0  # judged, not retrieved: trec_eval -c convention
    assert "4" not in table.topics  # retrieved but unjudged: reported, not scored
    notes = " ".join(table.notes)
    assert "no judgments" in notes and "(4)" in notes
    assert "did not retrieve 1 judged query (3)" in notes and "trec_eval -c" in notes


def test_runs_unretrieved_missing_option(tmp_path):
    run, qrels = _tiny(tmp_path)
    other = write(
        tmp_path / "other.run", "1 Q0 d1 1 1.0 other\n2 Q0 d9 1 1.0 other\n3 Q0 d1 1 1.0 other\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        with pytest.raises(ScoreTableError, match="'mysys' has no score for 1 topic"):
            read_scores([run, other], qrels=qrels, measure="AP", unretrieved="missing")
        t = read_scores(
            [run, other], qrels=qrels, measure="AP", unretrieved="missing", missing="keep"
        )
        zero = read_scores([run, other], qrels=qrels, measure="AP")
    assert np.isnan(t.wide().loc["3", "mysys"]) and t.wide().loc["3", "other"] == 1.0
    assert zero.wide().loc["3", "mysys"] == 0.0
    assert any("left missing" in n for n in t.notes)


@pytest.mark.parametrize("measure", ["nDCG@10", "AP(rel=2)", "P@10", "R@1000", "Judged@10"])
def test_runs_any_measure_string(tmp_path, measure):
    run, qrels = _tiny(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        table = read_scores(run, qrels=qrels, measure=measure)
    assert len(table.measures) == 1 and len(table.topics) == 3
    assert table.data["score"].between(0, 1).all()


def test_runs_four_column_format_names_system_from_folder(tmp_path):
    (tmp_path / "tasb").mkdir()
    write(tmp_path / "tasb" / "covid_top10.txt", "1\td1\t1\t3.5\n1\td3\t2\t1.5\n")
    write(tmp_path / "covid_qrels.txt", "1 0 d1 1\n1 0 d3 0\n")
    table = read_scores(
        tmp_path / "tasb" / "covid_top10.txt", qrels=tmp_path / "covid_qrels.txt", measure="P@1"
    )
    assert table.systems == ("tasb",) and table.collections == ("covid",)
    assert table.data["score"].iat[0] == 1.0


def test_runs_several_collections_paired_by_name(tmp_path):
    for sys in ("a", "b"):
        (tmp_path / sys).mkdir()
        for coll in ("c1", "c2"):
            write(tmp_path / sys / f"{coll}_top10.txt", "1\td1\t1\t2.0\n2\td2\t1\t1.0\n")
    write(tmp_path / "c1_qrels.txt", "1 0 d1 1\n2 0 d2 0\n")
    write(tmp_path / "c2_qrels.txt", "1 0 d1 0\n2 0 d2 1\n")
    runs = sorted(tmp_path.glob("*/c*_top10.txt"))
    table = read_scores(runs, qrels=sorted(tmp_path.glob("*_qrels.txt")), measure="P@1")
    assert table.collections == ("c1", "c2") and table.systems == ("a", "b")
    assert table.wide(collection="c1").loc["1", "a"] == 1.0
    assert table.wide(collection="c2").loc["1", "b"] == 0.0
    mapped = read_scores(
        runs,
        qrels={"c1": tmp_path / "c1_qrels.txt", "c2": tmp_path / "c2_qrels.txt"},
        measure="P@1",
    )
    pd.testing.assert_frame_equal(mapped.data, table.data)


def test_runs_need_qrels_and_measure(tmp_path):
    run, qrels = _tiny(tmp_path)
    with pytest.raises(ScoreTableError, match="qrels="):
        read_scores(run, format="run", measure="AP")
    with pytest.raises(ScoreTableError, match="measure="):
        read_scores(run, qrels=qrels)


# ---------------------------------------------------------------------- one score per line
def test_lines_paired_by_position_names_from_folders(tmp_path):
    for model, values in (("bert", "1.0\n0.0\n1.0\n"), ("distil", "0.0\n0.0\n1.0\n")):
        for task in ("rte", "wnli"):
            (tmp_path / model / task).mkdir(parents=True)
            write(tmp_path / model / task / f"eval_results_{task}_accuracy.txt", values)
    files = sorted(tmp_path.glob("*/*/*.txt"))
    table = read_scores(files)
    assert table.systems == ("bert", "distil") and table.collections == ("rte", "wnli")
    assert table.measures == ("accuracy",) and table.topics == ("1", "2", "3")
    assert table.wide(collection="rte")["bert"].tolist() == [1.0, 0.0, 1.0]
    named = read_scores(files[:2], format="lines", systems=["x", "y"], collections=["t", "t"])
    assert named.systems == ("x", "y")


def test_lines_unequal_lengths_error(tmp_path):
    a = write(tmp_path / "a.txt", "1\n0\n1\n")
    b = write(tmp_path / "b.txt", "1\n0\n")
    with pytest.raises(ScoreTableError, match="b.txt: has 2 scores but .*a.txt has 3"):
        read_scores([a, b], format="lines")


# ---------------------------------------------------------------------- DataFrames
def test_in_memory_frame_with_aliases():
    frame = pd.DataFrame({"Run": ["x", "y"], "QID": [1, 1], "Value": [0.5, 0.25]})
    table = ScoreTable.from_frame(frame, measure="nDCG@10")
    assert table.systems == ("x", "y") and table.topics == ("1",)


def test_read_scores_accepts_a_dataframe():
    frame = pd.DataFrame({"system": ["x", "y"], "topic": [1, 1], "score": [0.5, 0.25]})
    table = read_scores(frame, measure="AP", collection="mem")
    assert table.blocks() == [("mem", "AP")] and table.source == "<DataFrame>"


def test_wide_frame_indexed_by_topic():
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 1, size=(6, 3))
    frame = pd.DataFrame(
        values, columns=["bm25", "dense", "splade"], index=pd.Index([f"t{i}" for i in range(6)])
    )
    table = read_scores(frame, measure="nDCG@10")
    assert table.measures == ("nDCG@10",) and table.systems == ("bm25", "dense", "splade")
    got = table.wide().loc[frame.index, frame.columns]
    assert np.array_equal(got.to_numpy(), values)
    with pytest.raises(ScoreTableError, match=r"wide DataFrame .*bm25, dense, splade.*measure="):
        read_scores(frame)
    twice = pd.concat([frame, frame.iloc[[2]]])
    with pytest.raises(ScoreTableError, match=r"topic 't2' is in two rows \(3 and 7\)"):
        read_scores(twice, measure="AP")


def test_tidy_frame_measure_selects_rows():
    frame = pd.DataFrame(
        {
            "system": ["x", "x", "y", "y"],
            "topic": [1, 1, 1, 1],
            "measure": ["map", "P_10", "map", "P_10"],
            "score": [0.5, 0.2, 0.25, 0.4],
        }
    )
    table = read_scores(frame, measure="AP")
    assert table.measures == ("AP",) and table.wide().loc["1"].tolist() == [0.5, 0.25]


def test_every_reader_is_in_the_table_of_inputs():
    text = (Path(__file__).resolve().parents[2] / "docs" / "inputs.md").read_text("utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    for name in READERS:
        assert any(f"| `{name}` |" in row for row in rows), name
    assert "docs/inputs.md" in (read_scores.__doc__ or "")


def test_optional_ecosystem_packages_are_not_imported():
    import subprocess
    import sys

    code = (
        "import sys, bayes_ir, bayes_ir.readers; "
        "print(sorted({'ranx', 'ir_datasets', 'pyterrier'} & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert done.stdout.strip() == "[]"
