"""`bayes-ir inspect`: systems, topics, measures, means, missing cells, warnings, --output."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from bayes_ir.cli.inspect import INSPECT_COLUMNS

DATA = Path(__file__).resolve().parents[2] / "data"


def test_inspect_example_scores(run_cli):
    code, out, _ = run_cli(["inspect", str(DATA / "example_scores.csv")])
    assert code == 0
    assert "collection 'example', measure 'AP': 50 topics x 45 systems" in out
    assert "chal_fusion" in out and "trec_run40" in out


def test_inspect_missing_cells_and_warnings(tmp_path, run_cli):
    path = tmp_path / "gaps.csv"
    path.write_text("system,topic,score\na,1,0.5\na,2,0.25\nb,1,0.75\n", encoding="utf-8")
    code, out, _ = run_cli(["inspect", str(path), "--output", str(tmp_path / "o.csv")])
    assert code == 0 and "1 missing cells" in out and "1 missing cell(s) kept" in out
    frame = pd.read_csv(tmp_path / "o.csv")
    assert frame.set_index("system").loc["b", "n_missing"] == 1
    code, out, err = run_cli(["inspect", str(path), "--missing", "intersect"])
    assert code == 0 and "dropped 1 topic(s)" in out


def test_inspect_runs_shows_unjudged_and_unretrieved(run_cli):
    runs = DATA / "example_runs"
    code, out, err = run_cli(
        [
            "inspect",
            str(runs / "bm25.run"),
            str(runs / "dense.run"),
            "--qrels",
            str(runs / "qrels.txt"),
            "--measure",
            "nDCG@10",
        ]
    )
    assert code == 0
    assert "no judgments" in out and "did not retrieve 1 judged query (5)" in out
    assert "trec_eval -c convention" in out


def test_inspect_selects_measure_by_trec_eval_name(run_cli):
    code, out, _ = run_cli(["inspect", str(DATA / "example_trec_eval.txt"), "--measure", "map"])
    assert code == 0 and "measure 'AP': 5 topics x 2 systems" in out and "P@5" not in out


@pytest.mark.parametrize("ext", [".csv", ".json", ".md", ".tex"])
def test_inspect_output_formats_have_stable_columns(tmp_path, ext, run_cli):
    target = tmp_path / f"inspect{ext}"
    code, _, err = run_cli(["inspect", str(DATA / "example_collections.csv"), "-o", str(target)])
    assert code == 0 and f"wrote {target}" in err
    text = target.read_text(encoding="utf-8")
    if ext == ".csv":
        frame = pd.read_csv(target)
        assert tuple(frame.columns) == INSPECT_COLUMNS and len(frame) == 24
        means = (
            pd.read_csv(DATA / "example_collections.csv")
            .groupby(["collection", "measure", "system"])["score"]
            .mean()
        )
        got = frame.set_index(["collection", "measure", "system"])["mean"]
        pd.testing.assert_series_equal(got.sort_index(), means.sort_index(), check_names=False)
    elif ext == ".json":
        records = json.loads(text)
        assert len(records) == 24 and tuple(records[0]) == INSPECT_COLUMNS
    elif ext == ".md":
        assert text.splitlines()[0].split("|")[1].strip() == "collection"
        assert [c.strip() for c in text.splitlines()[0].strip("|").split("|")] == list(
            INSPECT_COLUMNS
        )
    else:
        assert text.startswith("\\begin{table}") and "\\begin{tabular}" in text
        assert "n\\_missing" in text
        assert text.count("\\\\") == 25  # header + 24 rows


def test_scores_with_roles():
    from bayes_ir.cli._inputs import Scores

    scores = Scores([DATA / "example_scores.csv"], measure=["AP"], champion="bm25",
                    challengers=["chal_*"], drop_bottom=0.25)  # fmt: skip
    table = scores.load()
    assert table.champion == "bm25" and len(table.challengers) == 4
    assert len(table.artifacts) == 30  # 40 artifacts, bottom 25% dropped


@pytest.mark.shared_data
def test_inspect_glue_line_files(shared_data, tmp_path, run_cli):
    files = sorted((shared_data / "ranger" / "glue").glob("*/*/*.txt"))
    code, out, _ = run_cli(["inspect", *map(str, files), "-o", str(tmp_path / "g.csv")])
    assert code == 0 and "collection 'rte', measure 'accuracy': 277 topics x 2 systems" in out
    frame = pd.read_csv(tmp_path / "g.csv").set_index(["collection", "system"])
    assert round(frame.loc[("rte", "bert-base-cased"), "mean"], 3) == 0.628


def test_names_are_never_cut_at_80_columns(monkeypatch, run_cli):
    """At 80 columns "webis-touche2020" was printed as "webis-touche2…"."""
    from bayes_ir.cli._app import console

    monkeypatch.setattr(console, "width", 80)  # a terminal of 80
    code, out, _ = run_cli(["inspect", str(DATA / "example_collections.csv")])
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("│ webis-touche2020 ")]
    table = out[: out.index("next:")].splitlines()  # the next command is never cut either
    assert len(rows) == 4 and all(len(line) <= 80 for line in table)


def test_long_system_names_keep_the_numbers(tmp_path, monkeypatch, run_cli):
    """GLUE model names squeezed the numbers to "0.62…" at 80 columns."""
    from bayes_ir.cli._app import console

    monkeypatch.setattr(console, "width", 80)  # a terminal of 80
    path = tmp_path / "long.csv"
    rows = ["system,topic,score"] + [
        f"{name},{t},{(t * k) % 2}"
        for k, name in ((1, "bert-base-cased"), (3, "distilbert-base-cased"))
        for t in range(9)
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, _ = run_cli(["inspect", str(path)])
    assert code == 0 and "…" not in out
    row = next(line for line in out.splitlines() if "distilbert-base-cased" in line)
    assert "0.4444" in row  # 4 of 9 topics correct


def test_inspect_ends_with_the_first_analysis_to_run(run_cli):
    code, out, _ = run_cli(["inspect", str(DATA / "example_collections.csv")])
    assert code == 0
    step = out[out.index("next:") :].splitlines()[1]
    # several collections and measures: fit takes one of each; --missing keep (inspect's
    # own default) is not carried over
    assert step.startswith(f"  bayes-ir fit {DATA / 'example_collections.csv'} --collection ")
    assert " -m " in step and "-c CHAMPION -C 'CHALLENGER*'" in step and "--missing" not in step


def test_a_file_without_a_measure_hints_at_m(tmp_path, run_cli):
    """Without a measure column every heading read "score", with no hint to pass -m."""
    path = tmp_path / "plain.csv"
    path.write_text("system,topic,score\na,1,0.5\na,2,0.25\nb,1,0.75\nb,2,0.5\n", encoding="utf-8")
    code, out, err = run_cli(["inspect", str(path)])
    assert code == 0 and "measure 'score'" in out
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "names no measure" in notes[0] and "pass -m" in notes[0]
    assert f"bayes-ir fit {path} -m MEASURE -c CHAMPION" in out
    code, out, err = run_cli(["inspect", str(path), "-m", "AP"])
    assert code == 0 and "measure 'AP'" in out and "names no measure" not in err


def _seed_runs(tmp_path: Path) -> Path:
    """Runs ``bm25_seed1.run``, ``bm25_seed2.run``, ``dense_seed1.run`` and their qrels."""
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    first = "1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n2 Q0 d3 1 1.0 t\n"  # AP 1 and 1
    second = "1 Q0 d2 1 2.0 t\n1 Q0 d1 2 1.0 t\n2 Q0 d3 1 1.0 t\n"  # AP 1/2 and 1
    for name, text in (("bm25_seed1", first), ("bm25_seed2", second), ("dense_seed1", first)):
        (runs / f"{name}.run").write_text(text)
    return runs


SEEDS = "(?P<system>.+)_seed(?P<replicate>\\d+)"


def test_inspect_shows_the_replicates_of_each_system(tmp_path, run_cli):
    runs = _seed_runs(tmp_path)
    out_csv = tmp_path / "o.csv"
    qrels = str(tmp_path / "qrels.txt")
    code, out, err = run_cli(["inspect", str(runs), "--qrels", qrels, "-m", "AP",
                              "--replicate-pattern", SEEDS, "-o", str(out_csv)])  # fmt: skip
    assert code == 0, err
    assert "replicates per system: bm25 2, dense 1" in out
    frame = pd.read_csv(out_csv).set_index("system")
    assert frame["n_replicates"].to_dict() == {"bm25": 2, "dense": 1}
    assert frame.loc["bm25", "mean"] == pytest.approx((0.75 + 1.0) / 2)


def test_methods_of_one_score_per_cell_refuse_replicates_in_one_line(tmp_path, run_cli):
    runs = _seed_runs(tmp_path)  # fit, decide and review take them (tests/cli/test_replicates.py)
    for command in ("risk", "test"):
        code, out, err = run_cli([command, str(runs), "--qrels", str(tmp_path / "qrels.txt"),
                                  "-m", "AP", "--replicate-pattern", SEEDS, "-c", "bm25",
                                  "-C", "dense"])  # fmt: skip
        assert code == 2, (command, err)
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and err.strip().count("\n") == 0, (command, err)
        assert "1 to 2 replicates per system" in lines[0]
        assert "table.mean_over_replicates()" in lines[0]


def test_a_file_the_replicate_pattern_misses_is_one_line(tmp_path, run_cli):
    runs = _seed_runs(tmp_path)
    (runs / "other.run").write_text((runs / "dense_seed1.run").read_text())
    code, _, err = run_cli(["inspect", str(runs), "--qrels", str(tmp_path / "qrels.txt"),
                            "-m", "AP", "--replicate-pattern", SEEDS])  # fmt: skip
    assert code == 2
    assert err.strip() == (
        f"error: {runs / 'other.run'}: the file name 'other.run' does not match "
        f"--replicate-pattern {SEEDS!r}"
    )
