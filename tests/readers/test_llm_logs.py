"""Readers of LLM evaluation logs: lm-evaluation-harness, Inspect AI, HELM, SWE-bench.

The files under ``tests/readers/llm_logs/`` copy each tool's layout (written by
``make_llm_logs.py``, whose constants are the scores every test below expects); the
expected values are read from those constants, not from the reader.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers import detect_format, read_scores
from bayes_ir.readers.inspect_logs import value_to_float

LOGS = Path(__file__).resolve().parent / "llm_logs"


def _constants():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_llm_logs", LOGS / "make_llm_logs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


K = _constants()


def test_the_stored_logs_are_what_the_script_writes(tmp_path, monkeypatch):
    # the committed files are the script's output, byte for byte
    monkeypatch.setattr(K, "HERE", tmp_path)
    K.lm_eval(), K.inspect(), K.helm(), K.swebench()
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    stored = sorted(p.relative_to(LOGS) for p in LOGS.rglob("*") if p.is_file()
                    and p.name != "make_llm_logs.py" and "__pycache__" not in p.parts)  # fmt: skip
    assert written == stored
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (LOGS / rel).read_bytes(), rel


# ---------------------------------------------------------------- lm-evaluation-harness
def _lm(task):
    return sorted((LOGS / "lm_eval").glob(f"*/samples_{task}_*.jsonl"))


def test_lm_eval_samples_are_detected_and_read_per_document():
    files = _lm("arc_easy")
    assert {detect_format(f) for f in files} == {"lm_eval"}
    table = read_scores(files, measure="acc")
    wide = table.wide()
    assert table.collections == ("arc_easy",) and table.measures == ("acc",)
    for model, acc in K.ARC.items():  # system = the model's folder, topic = doc_id
        assert list(wide[model]) == [float(a) for a in acc]
    norm = read_scores(files, measure="acc_norm").wide()
    assert list(norm["org__model-b"]) == [float(v) for v in np.roll(K.ARC["org__model-b"], -1)]


def test_lm_eval_filters_are_measures_named_as_the_harness_names_them():
    files = _lm("gsm8k")
    with pytest.raises(ScoreTableError, match="2 measures .*exact_match,flexible-extract"):
        read_scores(files)
    for flt in ("strict-match", "flexible-extract"):
        wide = read_scores(files, measure=f"exact_match,{flt}").wide()
        for model, values in K.GSM.items():
            assert list(wide[model]) == [float(v) for v in values[flt]]


def test_lm_eval_bad_lines_name_file_and_line(tmp_path):
    model = tmp_path / "org__m"
    model.mkdir()
    good = _lm("arc_easy")[0].read_text().splitlines()
    bad = model / f"samples_arc_easy_{K.DATE}.jsonl"
    bad.write_text("\n".join([good[0], good[1][:40]]) + "\n")
    with pytest.raises(ScoreTableError, match=r"samples_arc_easy.*:2: not a JSON line"):
        read_scores(bad, format="lm_eval")
    row = json.loads(good[0]) | {"acc": "yes"}
    bad.write_text(json.dumps(row) + "\n")
    with pytest.raises(ScoreTableError, match=r":1: metric 'acc' of doc_id 0 is 'yes'"):
        read_scores(bad, format="lm_eval", measure="acc")
    # corpus-level metrics (bleu: a [reference, prediction] pair) are left out, said in a note
    corpus = {"metrics": ["acc", "bleu"], "bleu": [["ref"], "pred"]}
    bad.write_text(json.dumps(json.loads(good[0]) | corpus) + "\n")
    table = read_scores(bad, format="lm_eval")
    assert table.measures == ("acc",) and any("bleu" in n for n in table.notes)
    # the same model and task twice (two dates): one error naming the document
    again = model / "samples_arc_easy_2024-06-01T00-00-00.000001.jsonl"
    again.write_text(good[0] + "\n")
    bad.write_text(good[0] + "\n")
    with pytest.raises(ScoreTableError, match="'0'"):
        read_scores([bad, again], measure="acc")


# ---------------------------------------------------------------- Inspect AI
def _eval_archive(log: dict, path: Path, *, with_reductions: bool) -> Path:
    """Write ``log`` as an ``.eval`` zip archive, as Inspect's EvalRecorder lays it out."""
    header = {k: v for k, v in log.items() if k not in ("samples", "reductions")}
    summaries = [{k: s[k] for k in ("id", "epoch", "input", "target", "scores")}
                 for s in log["samples"]]  # fmt: skip
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": log["eval"]}))
        for s in log["samples"]:
            archive.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        if with_reductions:
            archive.writestr("reductions.json", json.dumps(log["reductions"]))
        archive.writestr("summaries.json", json.dumps(summaries))
        archive.writestr("header.json", json.dumps(header))
    return path


def _inspect_expected(model, *, reduced):
    value = {"C": 1.0, "P": 0.5, "I": 0.0}
    return [sum(value[g] for g in epochs) / len(epochs) for epochs in K.INSPECT[model]]


def test_inspect_json_logs_read_reductions_or_the_mean_over_epochs():
    files = sorted((LOGS / "inspect").glob("*.json"))
    assert {detect_format(f) for f in files} == {"inspect"}
    table = read_scores(files)
    wide = table.wide()
    assert table.collections == ("gpqa_diamond",) and table.measures == ("choice",)
    assert list(wide.index) == ["1", "2", "3", "4", "5"]
    for model in K.INSPECT:  # the first log has Inspect's reductions, the second not
        assert np.allclose(wide[model], _inspect_expected(model, reduced=True))
    assert any("averaged over the epochs" in n for n in table.notes)


def test_inspect_eval_archives_read_like_the_json_logs(tmp_path):
    logs = sorted((LOGS / "inspect").glob("*.json"))
    first = json.loads(logs[0].read_text())
    second = json.loads(logs[1].read_text())
    a = _eval_archive(first, tmp_path / "a.eval", with_reductions=True)
    b = _eval_archive(second, tmp_path / "b.eval", with_reductions=False)
    assert detect_format(a) == "inspect"
    from_zip = read_scores([a, b]).wide()
    from_json = read_scores(logs).wide()
    assert from_zip.equals(from_json)


def test_inspect_values_and_refusals(tmp_path):
    assert [value_to_float(v, where="", source="") for v in ("C", "P", "I", "N", "yes", "False",
                                                             "0.25", 2, True)] == [
        1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.25, 2.0, 1.0]  # fmt: skip
    log = json.loads(sorted((LOGS / "inspect").glob("*.json"))[1].read_text())
    log["samples"][3]["scores"]["choice"]["value"] = "maybe"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(log))
    with pytest.raises(ScoreTableError, match=r"sample 2 epoch 2, scorer 'choice': score value "
                                              r"'maybe'"):  # fmt: skip
        read_scores(bad)
    log["samples"][3]["scores"]["choice"]["value"] = {"accuracy": "C", "refusal": 0}
    bad.write_text(json.dumps(log))
    with pytest.raises(ScoreTableError, match="choice/accuracy"):  # a dict: one measure per key
        read_scores(bad)
    assert read_scores(bad, measure="choice/refusal").measures == ("choice/refusal",)
    log["status"] = "error"
    bad.write_text(json.dumps(log))
    with pytest.raises(ScoreTableError, match="status 'error', not 'success'"):
        read_scores(bad)
    (tmp_path / "broken.eval").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ScoreTableError, match="not a readable .eval archive"):
        read_scores(tmp_path / "broken.eval")


# ---------------------------------------------------------------- HELM
def test_helm_runs_read_the_test_split_of_unperturbed_instances():
    files = sorted((LOGS / "helm").rglob("per_instance_stats.json"))
    assert {detect_format(f) for f in files} == {"helm"}
    with pytest.raises(ScoreTableError, match="3 measures"):
        read_scores(files)
    table = read_scores(files, measure="exact_match")
    wide = table.wide()
    # one collection for both models: the run name without model=
    assert table.collections == ("mmlu:subject=anatomy,method=multiple_choice_joint",)
    for model, values in K.HELM.items():  # the model from run_spec.json
        assert list(wide[model]) == values
    assert list(wide.index) == ["id140", "id141", "id142", "id143"]  # not id90 (valid split)
    valid = read_scores(files, measure="exact_match", split="valid").wide()
    assert list(valid.index) == ["id90"]
    with pytest.raises(ScoreTableError, match="no statistic of split 'train'.*test, valid"):
        read_scores(files, split="train")


def test_helm_without_run_spec_takes_the_model_from_the_run_name(tmp_path):
    source = sorted((LOGS / "helm").rglob("per_instance_stats.json"))[1]
    run = tmp_path / source.parent.name
    run.mkdir()
    (run / "per_instance_stats.json").write_bytes(source.read_bytes())
    table = read_scores(run / "per_instance_stats.json", measure="exact_match")
    assert table.systems == ("openai_gpt-4-0613",)  # the run name's model= (no run_spec.json)


# ---------------------------------------------------------------- SWE-bench
def test_swebench_results_score_resolved_instances_one():
    files = sorted((LOGS / "swebench").rglob("results.json"))
    assert {detect_format(f) for f in files} == {"swebench"}
    table = read_scores(files)
    wide = table.wide()
    assert table.collections == ("lite",) and table.measures == ("resolved",)
    assert list(wide.index) == K.IDS  # the union of the ids the files name
    expected_a = [1.0 if i in (K.IDS[0], K.IDS[1], K.IDS[3]) else 0.0 for i in K.IDS]
    assert list(wide["20240101_agent-a"]) == expected_a
    assert wide["20240102_agent-b"].sum() == 2


def test_swebench_harness_report_and_instances_file(tmp_path):
    report = LOGS / "swebench" / "model-c.run1.json"
    assert detect_format(report) == "swebench"
    alone = read_scores(report).wide()
    assert list(alone.index) == K.IDS and alone["model-c.run1"].sum() == 4
    files = sorted((LOGS / "swebench").rglob("results.json")) + [report]
    table = read_scores(files, collection="lite", instances=LOGS / "swebench" / "lite_ids.txt")
    assert table.wide().shape == (8, 3)
    short = tmp_path / "ids.txt"
    short.write_text("\n".join(K.IDS[2:]) + "\n")
    with pytest.raises(
        ScoreTableError, match=r"not among instances= \(first 'django__django-11000'"
    ):
        read_scores(report, instances=short)
    with pytest.raises(ScoreTableError, match="one measure, 'resolved'"):
        read_scores(report, measure="accuracy")


def test_the_leaderboard_command_reads_every_log(tmp_path):
    from typer.testing import CliRunner

    from bayes_ir.cli import app

    files = [str(p) for p in sorted((LOGS / "helm").rglob("per_instance_stats.json"))]
    result = CliRunner().invoke(app, ["rank", *files, "-m", "exact_match", "--draws", "400",
                                      "--chains", "2", "-q"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "openai/gpt-4-0613" in result.output and "meta/llama-2-70b" in result.output
