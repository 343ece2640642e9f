"""Output paths: never written over an input (even through a link), bad paths one clear line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bayes_ir.cli import main

DATA = Path(__file__).resolve().parents[2] / "data"

pytestmark = pytest.mark.skipif(
    not (DATA / "example_scores.csv").exists(), reason="example data missing"
)


def _run(argv, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    return info.value.code, out, err


@pytest.fixture
def scores(tmp_path) -> Path:
    path = tmp_path / "scores.csv"
    shutil.copy(DATA / "example_scores.csv", path)
    return path


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink", "dotdot"])
def test_output_that_is_the_input_is_refused_before_any_work(scores, tmp_path, capsys, alias):
    target = {
        "same": lambda: scores,
        "symlink": lambda: (tmp_path / "link.csv").symlink_to(scores) or tmp_path / "link.csv",
        "hardlink": lambda: os.link(scores, tmp_path / "hard.csv") or tmp_path / "hard.csv",
        "dotdot": lambda: (tmp_path / "d").mkdir() or tmp_path / "d" / ".." / "scores.csv",
    }[alias]()
    before = scores.read_bytes()
    code, out, err = _run(["inspect", str(scores), "--output", str(target)], capsys)
    assert code == 2 and out == ""  # refused before reading: nothing printed
    assert err.startswith(f"error: --output {target} is the input file {scores}")
    assert len(err.splitlines()) == 1
    assert scores.read_bytes() == before


def test_risk_markdown_output_over_input_refused(scores, capsys):
    md = scores.with_suffix(".md")
    md.write_text("# my notes\n")
    argv = ["risk", str(scores), str(md), "-c", "bm25", "-o", str(md), "--no-bayes"]
    code, _, err = _run(argv, capsys)
    assert code == 2 and "is the input file" in err
    assert md.read_text() == "# my notes\n"


def test_meta_config_output_over_its_scores_refused(tmp_path, capsys):
    for name in ("example_meta.yaml", "example_collections.csv"):
        shutil.copy(DATA / name, tmp_path / name)
    before = (tmp_path / "example_collections.csv").read_bytes()
    argv = ["meta", str(tmp_path / "example_meta.yaml"), "-o",
            str(tmp_path / "example_collections.csv")]  # fmt: skip
    code, _, err = _run(argv, capsys)
    assert code == 2 and "is the input file" in err
    assert (tmp_path / "example_collections.csv").read_bytes() == before


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: (d / "f").write_text("x") and d / "f" / "out.csv", "is a file, not a folder"),
        (lambda d: (d / "dir.csv").mkdir() or d / "dir.csv", "this is a folder"),
        (lambda d: d / ("x" * 300 + ".csv"), "is too long"),
    ],
    ids=["parent-is-file", "output-is-folder", "name-too-long"],
)
def test_bad_output_path_is_one_line(scores, tmp_path, capsys, make, message):
    target = make(tmp_path)
    code, out, err = _run(["inspect", str(scores), "-o", str(target)], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("error: --output ") and message in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_missing_folders_are_created(scores, tmp_path, capsys):
    target = tmp_path / "a" / "b" / "systems.json"
    code, _, err = _run(["inspect", str(scores), "-o", str(target)], capsys)
    assert code == 0 and err.strip() == f"wrote {target}"
    assert target.read_text().startswith("[")
