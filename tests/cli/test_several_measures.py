"""Several measures per call (``-m AP -m nDCG@10``): each analysed as if asked alone."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import typer

from bayes_ir.cli._inputs import Scores, _each_measure

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture
def two_measures(tmp_path):
    """The example's AP, and a second measure derived from it (its square root, in [0, 1])."""
    frame = pd.read_csv(DATA / "example_scores.csv")
    other = frame.assign(measure="nDCG@10", score=frame["score"] ** 0.5)
    path = tmp_path / "two.csv"
    pd.concat([frame, other]).to_csv(path, index=False)
    return path


ROLES = ["-c", "bm25", "-C", "chal_*", "--test", "t,wilcoxon,sign"]


def test_each_measure_equals_its_own_run(two_measures, tmp_path, run_cli):
    both = tmp_path / "both.csv"
    code, out, _ = run_cli(["test", str(two_measures), *ROLES, "-m", "AP", "-m", "nDCG@10",
                        "-o", str(both)])  # fmt: skip
    assert code == 0
    assert out.index("measure AP") < out.index("measure nDCG@10")
    for measure in ("AP", "nDCG@10"):
        alone = tmp_path / f"alone_{measure}.csv"
        code, _, _ = run_cli(["test", str(two_measures), *ROLES, "-m", measure, "-o", str(alone)])
        assert code == 0
        pd.testing.assert_frame_equal(
            pd.read_csv(tmp_path / f"both_{measure}.csv"), pd.read_csv(alone)
        )
    assert not both.exists()


def test_a_measure_missing_from_the_files_stops_before_any_output(two_measures, tmp_path, run_cli):
    out_file = tmp_path / "o.csv"
    code, out, err = run_cli(["test", str(two_measures), *ROLES, "-m", "AP", "-m", "P@10",
                          "-o", str(out_file)])  # fmt: skip
    assert code == 2 and out == ""
    assert "measure 'P@10' is not in the data" in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.glob("o*")) == []


def test_block_commands_show_one_column_per_measure(two_measures, run_cli):
    code, out, _ = run_cli(["glm", str(two_measures), "-m", "AP", "-m", "nDCG@10", "--links",
                        "logit"])  # fmt: skip
    assert code == 0 and "example AP" in out and "example nDCG@10" in out


def test_meta_refuses_several_measures_in_one_line(two_measures, run_cli):
    code, _, err = run_cli(["meta", str(two_measures), "-m", "AP", "-m", "nDCG@10"])
    assert code == 2 and "meta pools one measure" in err


@pytest.mark.parametrize(
    ("codes", "expected"),
    [((0, 0), 0), ((0, 5), 5), ((5, 4), 4), ((4, 3), 3), ((5, 0, 3), 3), ((0, 7), 7)],
)
def test_the_most_serious_exit_status_wins(codes, expected):
    """--gate deploys (0) only when every measure deploys; unreliable (3) beats keep (4)."""
    statuses = iter(codes)

    def command(scores):
        code = next(statuses)
        if code:
            raise typer.Exit(code)

    views = [Scores([DATA / "example_scores.csv"], measure=["AP"])] * len(codes)
    if expected:
        with pytest.raises(typer.Exit) as stop:
            _each_measure(command, {}, views)
        assert stop.value.exit_code == expected
    else:
        _each_measure(command, {}, views)


def test_output_names_per_measure():
    from bayes_ir.cli._inputs import _per_measure

    assert _per_measure(Path("out/r.csv"), "nDCG@10", folder=False) == Path("out/r_nDCG@10.csv")
    assert _per_measure(Path("figs"), "AP(rel=2)", folder=True) == Path("figs/AP_rel_2")
    assert _per_measure(Path("r.tex"), "P/10", folder=False) == Path("r_P_10.tex")
