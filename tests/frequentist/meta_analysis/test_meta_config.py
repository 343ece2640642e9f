"""YAML configs: this package's layout (tidy file, runs + qrels) and Ranger's layout."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bayes_ir.errors import ScoreTableError
from bayes_ir.frequentist import effect_size, meta_analysis, read_meta_config
from bayes_ir.readers import read_scores

DATA = Path(__file__).resolve().parents[3] / "data"


def test_example_config_with_tidy_file():
    config = read_meta_config(DATA / "example_meta.yaml")
    assert (config.control, config.treatment, config.measure) == ("bm25", "dense", "nDCG@10")
    assert config.extra_measures == ("Judged@10",)
    table = config.load()
    assert set(table.measures) == {"nDCG@10", "Judged@10"}
    assert len(table.collections) == 6
    direct = read_scores(DATA / "example_collections.csv")
    a = effect_size(table, control="bm25", treatment="dense", score_measure="nDCG@10")
    b = effect_size(direct, control="bm25", treatment="dense", score_measure="nDCG@10")
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert config.display_names["trec-covid"] == "TREC-COVID"


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.DataWarning")  # a query without qrels
def test_runs_and_qrels_per_collection(tmp_path):
    runs = DATA / "example_runs"
    (tmp_path / "meta.yaml").write_text(
        f"""
control: bm25
treatment: dense
measure: nDCG@10
extra_measures: [Judged@10]
collections:
  first:
    display_name: First
    qrels: {runs / "qrels.txt"}
    runs: {{bm25: {runs / "bm25.run"}, dense: {runs / "dense.run"}}}
  second:
    qrels: {runs / "qrels.txt"}
    runs: {{bm25: {runs / "bm25.run"}, dense: {runs / "dense.run"}}}
""",
        encoding="utf-8",
    )
    config = read_meta_config(tmp_path / "meta.yaml")
    assert config.collection_names == ("first", "second")
    table = config.load()
    direct = read_scores(
        [runs / "bm25.run", runs / "dense.run"], format="run", qrels=runs / "qrels.txt",
        measure="nDCG@10", collection="first", systems=["bm25", "dense"], missing="keep",
    )  # fmt: skip
    eff = effect_size(
        table, control="bm25", treatment="dense", score_measure="nDCG@10",
        extra_measures=["Judged@10"], collections=config.collection_names,
        labels=config.display_names,
    )  # fmt: skip
    ref = effect_size(direct, control="bm25", treatment="dense")
    assert list(eff.labels) == ["First", "second"]
    assert eff.yi[0] == pytest.approx(ref.yi[0]) and eff.yi[1] == pytest.approx(ref.yi[0])
    assert "Judged@10_control" in eff.frame


@pytest.mark.shared_data
def test_ranger_glue_layout(shared_data, tmp_path):
    glue = shared_data / "ranger" / "glue"
    lines = ["eval_metrics:"]
    for model, key in (("bert-base-cased", "bert"), ("distilbert-base-cased", "distilbert")):
        lines.append(f" {key}:")
        for task in ("rte", "wnli"):
            lines.append(
                f"    '{task}': '{glue / model / task / f'eval_results_{task}_accuracy.txt'}'"
            )
    lines += ["display_names:", "    'rte': 'RTE'", "    'wnli': 'WNLI'"]
    (tmp_path / "config.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = read_meta_config(tmp_path / "config.yaml")
    assert (config.control, config.treatment) == ("bert", "distilbert")
    eff = effect_size(
        config.load(), measure="SMD", control="bert", treatment="distilbert",
        labels=config.display_names, ranger_compatible=True,
    )  # fmt: skip
    published = pd.read_csv(shared_data / "ranger" / "ranger_notebook_reference_outputs.csv")
    published = published.set_index("experiment")
    res = meta_analysis(eff, ranger_compatible=True).to_frame().set_index("label")
    for task in ("RTE", "WNLI"):
        assert res.loc[task, "estimate"] == pytest.approx(published.loc[task, "eff"], abs=1e-6)
        assert res.loc[task, "ci_upper"] == pytest.approx(published.loc[task, "ci_upp"], abs=1e-6)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("- a\n- b\n", "YAML mapping"),
        ("treatment: b\nscores: x.csv\n", "'control'"),
        ("control: a\ntreatment: b\n", "needs 'collections'"),
        ("control: a\ntreatment: b\ncollections:\n  c:\n    runs: {a: x, b: y}\n", "no qrels"),
        ("control: a\ntreatment: b\ncollections:\n  c: {}\n", "needs 'runs'"),
        ("control: [a\n", "not valid YAML"),
    ],
)
def test_bad_configs(tmp_path, text, match):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScoreTableError, match=match):
        read_meta_config(path)


def test_missing_system_file(tmp_path):
    (tmp_path / "s.csv").write_text("system,topic,score\na,1,0.5\n", encoding="utf-8")
    (tmp_path / "m.yaml").write_text(
        "control: a\ntreatment: b\ncollections:\n  c:\n    scores: {a: s.csv}\n", encoding="utf-8"
    )
    with pytest.raises(ScoreTableError, match="no file for system 'b'"):
        read_meta_config(tmp_path / "m.yaml").load()


TIDY = "control: bm25\ntreatment: dense\nscores: x.csv\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # a quoted 'false' is a string: it turned Knapp-Hartung on
        (TIDY + "hk: 'false'\n", ":4: hk must be true or false, got 'false' (a string)"),
        (TIDY + "hk: 1\n", ":4: hk must be true or false, got 1 (a number)"),
        (
            TIDY + "mesure: nDCG@10\n",
            ":4: unknown key 'mesure' at the top level (did you mean measure",
        ),
        (TIDY + "measure: [nDCG@10]\n", ":4: measure must be a string, got ['nDCG@10'] (a list)"),
        (TIDY + "extra_measures: [1, 2]\n", ":4: extra_measures must be a string or a list"),
        (TIDY + "effect: XYZ\n", ":4: effect: unknown effect measure 'XYZ'"),
        (TIDY + "method: REM\n", ":4: method: unknown tau^2 estimator 'REM'"),
        (TIDY + "display_names: [a, b]\n", ":4: display_names must be a mapping"),
        ("control: [a]\ntreatment: b\nscores: x.csv\n", ":1: control must be a name, got ['a']"),
        (
            "control: a\ntreatment: b\nscores: x.csv\ncontrol: c\n",
            ":4: key 'control' appears twice",
        ),
        ("control: a\ntreatment: b\nscores: [x.csv]\n", ":3: scores must be a file path"),
        ("control: a\ntreatment: b\ncollections: [c]\n", ":3: collections must be a mapping"),
        (
            "control: a\ntreatment: b\ncollections:\n  c:\n    runs: {a: x, b: y}\n    qrel: q\n",
            ":6: unknown key 'qrel' in collection 'c' (did you mean qrels?)",
        ),
        (
            "control: a\ntreatment: b\ncollections:\n  c:\n    scores: {a: 1, b: y}\n",
            ":5: collections/c/scores must be a mapping {system: file}",
        ),
        ("control: a\ntreatment: [b\n", ":3: not valid YAML: expected ',' or ']'"),
        ("control: a\n  treatment: b\n", ":2: not valid YAML: mapping values are not allowed"),
        ("treatment: b\nscores: x.csv\n", ": the config needs a 'control' system name"),
    ],
)
def test_schema_errors_name_file_line_and_key(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScoreTableError) as info:
        read_meta_config(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value), info.value


def test_latin1_config_names_the_byte_offset(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes("control: a\ntreatment: syst\xe8me\nscores: x.csv\n".encode("latin-1"))
    with pytest.raises(ScoreTableError) as info:
        read_meta_config(path)
    offset = len(b"control: a\ntreatment: syst")
    assert str(info.value) == (
        f"{path}:2: not UTF-8 text (byte 0xe8 at offset {offset}); re-encode the file as UTF-8"
    )


def test_typed_values_are_read(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(TIDY + "hk: false\nmethod: reml\neffect: smd\nextra_measures: J@10\n")
    config = read_meta_config(path)
    assert config.hk is False and config.method == "REML" and config.effect == "SMD"
    assert config.extra_measures == ("J@10",)
    path.write_text(TIDY + "hk: true\n")
    assert read_meta_config(path).hk is True


def test_names_are_read_as_written_not_as_yaml_1_1(tmp_path):
    """``010`` is not 8, ``no`` is not False, ``1.10`` is not 1.1: names keep their text."""
    path = tmp_path / "names.yaml"
    path.write_text(
        "control: 010\ntreatment: no\nscores: x.csv\ndisplay_names: {010: 1.10, on: yes}\n",
        encoding="utf-8",
    )
    config = read_meta_config(path)
    assert (config.control, config.treatment) == ("010", "no")
    assert config.display_names == {"010": "1.10", "on": "yes"}


def test_config_limits_name_the_file(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("control: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"deep\.yaml.*nested more than 20 levels"):
        read_meta_config(deep)
    bom = tmp_path / "bom.yaml"
    bom.write_bytes(("\ufeff" + TIDY).encode("utf-8"))
    assert read_meta_config(bom).control == "bm25"
    wide = tmp_path / "utf16.yaml"
    wide.write_bytes(TIDY.encode("utf-16"))
    with pytest.raises(ScoreTableError, match=r"utf16\.yaml:1: UTF-16 text"):
        read_meta_config(wide)
