"""Names are shown as written: rich markup and LaTeX specials in names reach the terminal intact."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_ir.cli import _app, main

#: Hostile system names: rich markup (one that makes rich raise MarkupError), LaTeX and
#: Markdown specials, a backslash at the end.
CHAMPION = "base [bold]x[/bold]"
CHALLENGERS = ["chal new[/x]", "chal_a&b%$#{}~^", "chal |*`<i>` \\"]
COLLECTION = "coll[red]C[/red]"


@pytest.fixture
def hostile_file(tmp_path):
    rng = np.random.default_rng(5)
    rows = [
        (
            COLLECTION,
            "AP",
            system,
            f"t[{t}]",
            float(np.clip(0.3 + 0.05 * k + rng.normal(0, 0.1), 0, 1)),
        )
        for k, system in enumerate([CHAMPION, *CHALLENGERS])
        for t in range(12)
    ]
    path = tmp_path / "hostile.csv"
    pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"]).to_csv(
        path, index=False
    )
    return path


def _run(argv, capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setattr(_app.console, "width", 250)  # no name is cut by the terminal width
    monkeypatch.setattr(_app.console_err, "width", 250)
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    return info.value.code, out, err


def test_inspect_shows_names_intact(hostile_file, capsys, monkeypatch):
    code, out, err = _run(["inspect", str(hostile_file)], capsys, monkeypatch)
    assert code == 0, err
    for name in [CHAMPION, *CHALLENGERS, COLLECTION]:
        assert name in out, name


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_fit_shows_names_intact(hostile_file, tmp_path, capsys, monkeypatch):
    output = tmp_path / "out[/x].csv"  # a path with markup is named as it is too
    argv = ["fit", str(hostile_file), "--champion", CHAMPION, "--challengers", "chal*",
            "--draws", "500", "--seed", "1", "--output", str(output)]  # fmt: skip
    code, out, err = _run(argv, capsys, monkeypatch)
    assert code == 0, err
    for name in [repr(CHAMPION), *CHALLENGERS, COLLECTION]:
        assert name in out, name
    assert f"wrote {output}" in err
    back = pd.read_csv(output)
    assert sorted(back["challenger"]) == sorted(CHALLENGERS)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("a\x1b[31mred", "a\\x1b[31mred"),  # an ANSI colour code
        ("x\ry", "x\\ry"),  # a carriage return would overwrite the line
        ("a\x07b", "a\\x07b"),  # rich would drop the bell silently
        ("\u202eabc", "\\u202eabc"),  # a bidi override would reverse what follows
        ("tab\tok\nline", "tab\tok\nline"),  # tab and line feed are text
    ],
)
def test_control_characters_are_shown_as_escapes(name, shown):
    assert _app.as_written(name) == shown


def test_printed_text_keeps_emoji_codes_and_escapes_controls(capsys):
    _app.console.print(":rocket: a\x1b[31mred", markup=False, highlight=False)
    view = _app.EscapedTable()
    view.add_column("system")
    view.add_row(":tada: x\x07y")
    _app.console.print(view)
    out = capsys.readouterr().out
    assert ":rocket: a\\x1b[31mred" in out and ":tada: x\\x07y" in out
    assert "\x1b" not in out and "\U0001f680" not in out


def test_each_note_is_said_once_and_not_again_as_a_warning(capsys):
    _app.forget_shown()
    _app.warn("collection 'c': 1 missing cell(s) kept")
    _app.show_notes(
        ["collection 'c': 1 missing cell(s) kept", "run tag 'x' split", "run tag 'x' split"]
    )
    out, err = capsys.readouterr()
    assert out == "note: run tag 'x' split\n"
    assert err == "warning: collection 'c': 1 missing cell(s) kept\n"
    _app.forget_shown()
