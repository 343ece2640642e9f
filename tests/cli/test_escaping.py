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
