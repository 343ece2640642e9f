"""Roles: selectors (exact, glob, regex, file), artifact policies and role errors."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_ir.errors import OptionError, RoleError, ScoreTableError, UnknownSystemError
from bayes_ir.roles import assign_roles, match_systems
from bayes_ir.table import ScoreTable

NAMES = ["bm25", "chal_dense", "chal_fusion", "input.uogA", "input.uogB", "input.pircX", "run7"]


@pytest.fixture
def table() -> ScoreTable:
    # System j has mean 0.1 + 0.05 j on every topic, so means order the systems by position.
    values = np.tile(0.1 + 0.05 * np.arange(len(NAMES)), (6, 1))
    return ScoreTable.from_matrix(values, systems=NAMES, measure="AP")


def test_exact_glob_regex_selectors(table):
    assert match_systems("bm25", NAMES) == ["bm25"]
    assert match_systems("chal_*", NAMES) == ["chal_dense", "chal_fusion"]
    assert match_systems("re:^input\\.uog", NAMES) == ["input.uogA", "input.uogB"]
    assert match_systems(["run7", "chal_d*"], NAMES) == ["chal_dense", "run7"]  # order of known
    roles = table.with_roles(champion="bm25", challengers="chal_*", artifacts="re:^input")
    assert roles.challengers == ("chal_dense", "chal_fusion")
    assert set(roles.artifacts) == {"input.uogA", "input.uogB", "input.pircX"}
    assert "run7" not in roles.systems


def test_file_selector(tmp_path, table):
    path = tmp_path / "challengers.txt"
    path.write_text("# candidates\nchal_dense\n\nre:fusion$\n", encoding="utf-8")
    roles = table.with_roles(champion="bm25", challengers=str(path))
    assert roles.challengers == ("chal_dense", "chal_fusion")
    at = table.with_roles(champion="bm25", challengers=f"@{path}")
    assert at.challengers == roles.challengers
    (tmp_path / "empty.txt").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(RoleError, match="names no system"):
        table.with_roles(champion="bm25", challengers=str(tmp_path / "empty.txt"))
    with pytest.raises(ScoreTableError, match=r"absent\.txt: selector file not found"):
        table.with_roles(champion="bm25", challengers=f"@{tmp_path / 'absent.txt'}")


def test_artifacts_default_exclude_drop_bottom_top_m(table):
    roles = table.with_roles(champion="bm25", challengers="chal_*")
    # Every other system, best mean first.
    assert roles.artifacts == ("run7", "input.pircX", "input.uogB", "input.uogA")
    excl = table.with_roles(champion="bm25", challengers="chal_fusion", exclude="input.uog*")
    assert excl.artifacts == ("run7", "input.pircX", "chal_dense")
    dropped = table.with_roles(champion="bm25", challengers="chal_*", drop_bottom=0.25)
    assert dropped.artifacts == ("run7", "input.pircX", "input.uogB")  # floor(4 * 0.25) = 1 gone
    top = table.with_roles(champion="bm25", challengers="chal_*", drop_bottom=0.25, top_m=2)
    assert top.artifacts == ("run7", "input.pircX")
    none = table.with_roles(champion="bm25", challengers="chal_*", top_m=0)
    assert none.artifacts == ()


def test_unknown_champion_lists_close_matches(table):
    with pytest.raises(UnknownSystemError, match="champion 'bm52' is not in the data.*bm25"):
        table.with_roles(champion="bm52")
    with pytest.raises(UnknownSystemError, match="challenger 'chal_fuson'.*chal_fusion"):
        table.with_roles(champion="bm25", challengers="chal_fuson")
    with pytest.raises(RoleError, match="a champion is required"):
        table.with_roles(champion="")


def test_overlapping_roles(table):
    with pytest.raises(RoleError, match="'bm25' cannot be both champion and challenger"):
        table.with_roles(champion="bm25", challengers="*")
    with pytest.raises(
        RoleError, match="'chal_dense' is selected both as an artifact and as challenger"
    ):
        table.with_roles(champion="bm25", challengers="chal_dense", artifacts="chal_*")


@pytest.mark.parametrize(
    ("selector", "said"),
    [
        # a glob was "not in the data" with a few of the close names, picked by spelling
        ("chall_*", "challenger glob 'chall_*' matched no system; 'chal*' matches 2: "
                    "chal_dense, chal_fusion"),
        ("CHAL_*", "ignoring case, it matches 2: chal_dense, chal_fusion"),
        ("chal_?x", "'chal_*' matches 2: chal_dense, chal_fusion"),
        ("*uogZ*", "matched no system; close names: input.uogB, input.uogA"),
        ("re:^chall", "challenger regex 're:^chall' matched no system; close names: chal_"),
    ],
)  # fmt: skip
def test_a_pattern_that_matches_nothing_says_so_and_what_would(table, selector, said):
    with pytest.raises(UnknownSystemError) as info:
        table.with_roles(champion="bm25", challengers=selector)
    message = str(info.value)
    assert said in message and "is not in the data" not in message, message


def test_empty_roles(table):
    with pytest.raises(UnknownSystemError, match="challenger glob 'zzz\\*' matched no system"):
        table.with_roles(champion="bm25", challengers="zzz*")
    with pytest.raises(UnknownSystemError, match="artifact regex 're:\\^nomatch' matched no"):
        table.with_roles(champion="bm25", artifacts="re:^nomatch")
    with pytest.raises(RoleError, match="leave no artifact run"):
        table.with_roles(champion="bm25", artifacts="input.uogA", exclude="input.uogA")
    with pytest.raises(RoleError, match="not a valid regular expression"):
        table.with_roles(champion="bm25", challengers="re:(")


@pytest.mark.parametrize(
    ("option", "value"),
    [("drop_bottom", 1.0), ("drop_bottom", -0.1), ("drop_bottom", float("nan")),
     ("drop_bottom", "0.25"), ("top_m", -1), ("top_m", 2.5), ("top_m", True)],
)  # fmt: skip
def test_bad_policy_values(table, option, value):
    with pytest.raises(OptionError, match=rf"^{option} must .*got"):
        table.with_roles(champion="bm25", **{option: value})


def _literal_table(names):
    rng = np.random.default_rng(2)
    return ScoreTable.from_matrix(
        rng.uniform(0.1, 0.9, size=(6, len(names))),
        systems=names,
        topics=[f"q{i}" for i in range(6)],
        measure="AP",
    )


@pytest.mark.parametrize(
    ("names", "selector"),
    [
        (["a[1]", "a1", "b"], "a[1]"),  # as a glob, a[1] would pick a1 and not itself
        (["chal_*", "chal_x", "chal_y", "b"], "chal_*"),  # as a glob: all three
        (["re:x", "x", "xx", "b"], "re:x"),  # as a regex: x and xx
        (["a?", "ab", "ac", "b"], "a?"),
    ],
)
def test_exact_name_wins_over_pattern(names, selector):
    table = _literal_table(names).with_roles(champion="b", challengers=selector)
    assert table.challengers == (selector,)
    assert table.with_roles(champion=selector).champion == selector
    assert match_systems(selector, names) == [selector]
    # a pattern that is not a name still acts as one
    assert match_systems("*", names) == names


def test_missing_system_is_unknown_system_error(table):
    with pytest.raises(UnknownSystemError, match="challenger 'nope' is not in the data"):
        table.with_roles(champion="bm25", challengers="nope")
    with pytest.raises(UnknownSystemError, match="champion 'nope'"):
        table.with_roles(champion="nope")


def test_roles_object():
    import pandas as pd

    means = pd.Series({"a": 0.3, "b": 0.5, "c": 0.1})
    roles = assign_roles(means, champion="a", challengers="b")
    assert roles.ordered == ("a", "b", "c")
    assert roles.role_of("c") == "artifact"
    assert roles.to_frame()["role"].tolist() == ["champion", "challenger", "artifact"]
    assert "champion 'a'; challengers: b; 1 artifact run(s)" == roles.describe()
    with pytest.raises(UnknownSystemError):
        roles.role_of("d")
