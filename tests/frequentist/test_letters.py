"""Compact letter display against R's multcomp::cld, and against its own definition."""

from __future__ import annotations

import itertools
import subprocess

import numpy as np
import pandas as pd
import pytest
from results import letters as ref

from bayes_ir.errors import OptionError
from bayes_ir.frequentist.glm import fit_glm, tukey_hsd
from bayes_ir.frequentist.letters import compact_letter_display
from bayes_ir.table import ScoreTable


def _table(scores, systems, topics) -> ScoreTable:
    return ScoreTable.from_matrix(
        np.asarray(scores), systems=systems, topics=topics, measure="AP", collection="sim"
    )


def _best_first(table: ScoreTable) -> list[str]:
    means = table.wide().mean()
    return list(means.sort_values(ascending=False, kind="stable").index)


def _shares(a: str, b: str) -> bool:
    return bool(set(_split(a)) & set(_split(b)))


def _split(text: str) -> list[str]:
    out, dots = [], ""
    for ch in text:
        if ch == ".":
            dots += ch
        else:
            out.append(dots + ch)
            dots = ""
    return out


def test_letters_equal_multcomp_cld_on_the_stored_example():
    table = _table(ref.SCORES, ref.SYSTEMS, ref.TOPICS)
    tukey = tukey_hsd(fit_glm(table, link="identity"))
    order = _best_first(table)
    assert order == list(ref.R_LETTERS)  # R's levels: decreasing mean
    letters = compact_letter_display(order, tukey.significant_pairs())
    assert letters.to_dict() == ref.R_LETTERS


def test_monospaced_letters_line_up():
    table = _table(ref.SCORES, ref.SYSTEMS, ref.TOPICS)
    pairs = tukey_hsd(fit_glm(table, link="identity")).significant_pairs()
    mono = compact_letter_display(_best_first(table), pairs, monospaced=True)
    assert mono["s1"] == "a    " and mono["s5"] == "  c e" and mono["s8"] == "    e"
    assert {len(v) for v in mono} == {5}


@pytest.mark.parametrize("seed", range(6))
def test_two_systems_share_a_letter_iff_they_do_not_differ(seed):
    """The definition, on random rejection patterns (up to 60 systems: beyond z and Z)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    systems = [f"r{i}" for i in range(n)]
    # rejections of a noisy ordering: distant systems differ more often
    pairs = [
        (a, b)
        for (i, a), (j, b) in itertools.combinations(enumerate(systems), 2)
        if rng.random() < min(1.0, abs(i - j) / (0.3 * n))
    ]
    letters = compact_letter_display(systems, pairs)
    rejected = {frozenset(p) for p in pairs}
    for a, b in itertools.combinations(systems, 2):
        assert _shares(letters[a], letters[b]) == (frozenset((a, b)) not in rejected), (a, b)
    assert letters[systems[0]].startswith("a")  # the first system gets the first letter


def test_no_rejection_is_one_letter_and_bad_pairs_are_refused():
    assert compact_letter_display(["x", "y", "z"], []).tolist() == ["a", "a", "a"]
    with pytest.raises(OptionError, match="'w', not a system"):
        compact_letter_display(["x", "y"], [("x", "w")])


def _run_r(rscript, tmp_path, frame: pd.DataFrame) -> pd.Series:
    check = [rscript, "-e", "quit(status = !requireNamespace('multcomp'))"]
    if subprocess.run(check, capture_output=True).returncode:
        pytest.skip("R package multcomp is not installed (apt-get install r-cran-multcomp)")
    (tmp_path / "cld.R").write_text(ref.R_SCRIPT_TUKEYHSD)
    frame.to_csv(tmp_path / "scores.csv", index=False)
    subprocess.run(
        [rscript, str(tmp_path / "cld.R"), str(tmp_path / "scores.csv"), str(tmp_path / "o.csv")],
        check=True,
        capture_output=True,
    )
    out = pd.read_csv(tmp_path / "o.csv", dtype=str, keep_default_na=False)
    return out.set_index("system")["letters"]


def _long(table: ScoreTable) -> pd.DataFrame:
    wide = table.wide()
    return wide.rename_axis(index="topic", columns="system").stack().rename("score").reset_index()


def test_live_multcomp_on_the_stored_example(rscript, tmp_path):
    table = _table(ref.SCORES, ref.SYSTEMS, ref.TOPICS)
    expected = _run_r(rscript, tmp_path, _long(table))
    pairs = tukey_hsd(fit_glm(table, link="identity")).significant_pairs()
    assert compact_letter_display(_best_first(table), pairs).to_dict() == expected.to_dict()


def _real_table(shared_data, name: str) -> ScoreTable:
    if name == "rb04":  # long; names without spaces for R's pair names
        raw = pd.read_csv(shared_data / "bayesian_risk" / "rb04_data.csv", dtype={"topic": str})
        raw["system"] = raw["system"].str.replace(" ", "", regex=False)
        wide = raw.pivot(index="topic", columns="system", values="score")
    else:  # TREC ad hoc: wide, one row per topic
        wide = pd.read_csv(shared_data / "trec_adhoc" / f"{name}.csv")
        wide.index = [f"t{i:02d}" for i in range(len(wide))]
    return _table(wide.to_numpy(), list(wide.columns), list(wide.index))


@pytest.mark.parametrize(
    ("name", "n_systems", "n_significant"),
    [("rb04", 45, 8), pytest.param("adhoc8_ap", 129, 3423, marks=pytest.mark.slow)],
)
def test_live_multcomp_on_real_systems(rscript, shared_data, tmp_path, name, n_systems,
                                       n_significant):  # fmt: skip
    """45 systems with 8 rejections (rb04), 129 with 3423 (TREC-8: 36 letters, a .. J)."""
    table = _real_table(shared_data, name)
    expected = _run_r(rscript, tmp_path, _long(table))
    tukey = tukey_hsd(fit_glm(table, link="identity"))
    letters = compact_letter_display(_best_first(table), tukey.significant_pairs())
    assert len(letters) == n_systems and tukey.n_significant == n_significant
    assert letters.to_dict() == expected.to_dict()
