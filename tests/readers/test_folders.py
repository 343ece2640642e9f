"""A folder of TREC run files with qrels, through the API and ``python -m bayes_ir``."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import ir_measures
import pytest

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers import read_scores

pytestmark = pytest.mark.filterwarnings("ignore::bayes_ir.errors.DataWarning")  # query 6: unjudged
DATA = Path(__file__).resolve().parents[2] / "data"
RUNS = DATA / "example_runs"
QRELS = RUNS / "qrels.txt"


def ap_by_ir_measures(run: Path) -> dict[str, float]:
    """AP per judged query, straight from ir_measures (unretrieved judged queries: 0)."""
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    found = ir_measures.iter_calc([ir_measures.AP], qrels, ir_measures.read_trec_run(str(run)))
    values = {m.query_id: m.value for m in found}
    return {q.query_id: values.get(q.query_id, 0.0) for q in qrels}


@pytest.fixture
def folder(tmp_path) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("bm25.run", "dense.run"):
        shutil.copy(RUNS / name, runs / name)
    return runs


def test_folder_equals_its_files_and_ir_measures(folder):
    table = read_scores(folder, qrels=QRELS, measure="AP")
    files = read_scores(sorted(folder.iterdir()), qrels=QRELS, measure="AP")
    assert table.wide().equals(files.wide())
    for system in ("bm25", "dense"):
        expected = ap_by_ir_measures(folder / f"{system}.run")
        assert table.wide()[system].to_dict() == pytest.approx(expected, abs=1e-12)


def test_qrels_inside_the_folder_is_left_out():
    table = read_scores(RUNS, qrels=QRELS, measure="AP")
    assert table.systems == ("bm25", "dense")
    assert any("left out qrels.txt (the qrels)" in n for n in table.notes)


def test_ir_datasets_qrels_with_a_folder(folder):
    formats = pytest.importorskip("ir_datasets.formats")
    qrels = (formats.TrecQrel(q.query_id, q.doc_id, q.relevance, "0")
             for q in ir_measures.read_trec_qrels(str(QRELS)))  # fmt: skip
    table = read_scores(folder, qrels=qrels, measure="AP")  # a generator, as qrels_iter()
    assert table.wide().equals(read_scores(folder, qrels=QRELS, measure="AP").wide())


def test_bad_folders(tmp_path, folder):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".hidden").write_text("x", encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"empty: the folder holds no score files"):
        read_scores(empty, qrels=QRELS, measure="AP")
    (folder / "README.md").write_text("# my runs\n", encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"README\.md: is not a TREC run file .*'# my runs'"):
        read_scores(folder, qrels=QRELS, measure="AP")
    (folder / "README.md").unlink()
    with pytest.raises(ScoreTableError, match=r"need relevance judgments: pass qrels="):
        read_scores(folder, measure="AP")
    (folder / "scores.csv").write_text("system,topic,score\na,1,0.5\n", encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"scores\.csv: is tidy but bm25\.run .* is run"):
        read_scores(folder)


def test_cli_inspect_folder_end_to_end(folder, tmp_path):
    out = tmp_path / "means.csv"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-m", "bayes_ir", "inspect", str(folder), "--qrels", str(QRELS),
         "-m", "AP", "-o", str(out)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        means = {r["system"]: float(r["mean"]) for r in csv.DictReader(handle)}
    for system in ("bm25", "dense"):
        values = ap_by_ir_measures(folder / f"{system}.run")
        assert means[system] == pytest.approx(sum(values.values()) / len(values), abs=1e-12)
