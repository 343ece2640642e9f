"""Hostile names through every output format: escaped where the format needs it, exact round trips.

References: Markdown is parsed back with markdown-it-py (CommonMark + GFM tables, the
parser rich uses), HTML with the standard library's ``html.parser``; LaTeX is checked
against the text-mode commands of the LaTeX manual (Lamport, *LaTeX: A Document
Preparation System*, 2nd ed., 1994, sec. 3.2.1 and C.3.4); CSV and JSON are read back with
pandas and :mod:`json`.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from bayes_ir.report import render_table, write_table
from bayes_ir.report.escape import html_escape, latex_escape, markdown_escape

NAMES = [
    "bm25",
    "a_b&c%d$e#f{g}h~i^j\\k",
    "pipe | star *x* _u_ `code` <b>x</b> [l](u) ~~s~~ &amp;",
    "comma, \"quote\", 'single'",
    "line\nbreak",
    "=SUM(A1:A2)",
    "unicodé ✓ 北京",
    "007",
    "[bold]x[/bold] new[/x]",
]
FRAME = pd.DataFrame(
    {"system": NAMES, "mean": np.linspace(0.1, 0.9, len(NAMES)), "n": range(len(NAMES))}
)


class _Cells(HTMLParser):
    """Text of every <td>/<th> cell, entities decoded, <br> as a line break."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[str] = []
        self._in = False

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self.cells.append("")
            self._in = True
        elif tag == "br" and self._in:
            self.cells[-1] += "\n"

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._in = False

    def handle_data(self, data):
        if self._in:
            self.cells[-1] += data


def _html_cells(html: str) -> list[str]:
    parser = _Cells()
    parser.feed(html)
    return parser.cells


#: The text-mode commands latex_escape writes (Lamport 1994, C.3.4; LaTeX2e kernel).
COMMANDS = (r"\textbackslash{}", r"\textasciitilde{}", r"\textasciicircum{}", r"\textless{}",
            r"\textgreater{}", r"\textbar{}")  # fmt: skip


def test_latex_escape_matches_the_text_mode_commands():
    assert latex_escape("a_b&c%d$e#f{g}h~i^j\\k") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
    )
    # OT1 (LaTeX's default font encoding) prints < > | as the glyphs of other characters
    assert latex_escape("a<b>c|d") == r"a\textless{}b\textgreater{}c\textbar{}d"
    assert latex_escape("line\nbreak") == "line break"


def test_latex_table_escapes_every_name():
    lines = render_table(FRAME, "latex").splitlines()
    body = lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]
    for name, line in zip(NAMES, body, strict=True):
        assert line.startswith(latex_escape(name) + " & ")
    # outside the commands, no special character is left unescaped in the names
    for line in body:
        cell = line.split(" & ")[0]
        bare = cell
        for command in COMMANDS:
            bare = bare.replace(command, "")
        for char in "&%$#_{}":
            assert bare.count(char) == bare.count("\\" + char), (cell, char)
        assert not set("~^<>|") & set(bare)


def test_markdown_table_parses_back_to_the_names():
    text = render_table(FRAME, "markdown")
    html = MarkdownIt("commonmark").enable("table").render(text)
    cells = _html_cells(html)
    assert cells[:3] == ["system", "mean", "n"]
    assert cells[3::3] == NAMES  # every name, whatever it held, is the cell's text
    assert "<b>" not in html and "<em>" not in html and "<code>" not in html
    assert "| 007 " in text  # a name that looks like a number is not re-formatted (7)


def test_markdown_escape_of_inline_markup():
    assert markdown_escape("_a_b *c* `d` <e> [f] | ~g~ &h\\") == (
        r"\_a_b \*c\* \`d\` \<e\> \[f\] \| \~g\~ \&h\\"
    )


def test_html_to_html_and_escape_round_trip():
    cells = _html_cells(FRAME.to_html(index=False))
    # pandas shows a line break as the two characters \n (an HTML cell would fold it)
    assert cells[3::3] == [name.replace("\n", "\\n") for name in NAMES]
    assert _html_cells(f"<table><tr><td>{html_escape(NAMES[2])}</td></tr></table>") == [NAMES[2]]


def test_csv_and_json_round_trip_exactly(tmp_path):
    back = pd.read_csv(write_table(FRAME, tmp_path / "t.csv"), dtype={"system": str},
                       keep_default_na=False)  # fmt: skip
    assert back["system"].tolist() == NAMES
    records = json.loads(write_table(FRAME, tmp_path / "t.json").read_text(encoding="utf-8"))
    assert [r["system"] for r in records] == NAMES


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_risk_review_markdown_and_latex_escape_names():
    """The risk review's own tables (tabulate, with significance marks) escape names too."""
    from bayes_ir.risk.review import risk_review
    from bayes_ir.table import ScoreTable

    rng = np.random.default_rng(2)
    systems = ["base_1", "new|x*", "a&b%c"]
    y = np.clip(0.4 + rng.normal(0, 0.1, (15, 1)) + rng.normal(0, 0.05, (15, 3)), 0, 1)
    table = ScoreTable.from_matrix(y, systems=systems, measure="AP", collection="c_1")
    review = risk_review(table.with_roles(champion="base_1"), bayes=False, seed=1)
    md = review.to_markdown()
    cells = _html_cells(MarkdownIt("commonmark").enable("table").render(md))
    assert "new|x*" in cells and "a&b%c" in cells
    assert "champion 'base_1', loss" in md  # an intraword _ needs no escape
    assert "new\\|x\\*" in md
    tex = review.to_latex()
    first = [re.split(r"(?<!\\)&", line)[0].strip() for line in tex.splitlines() if " & " in line]
    assert r"new\textbar{}x*" in first and r"a\&b\%c" in first


# Names as users write them: any printable text without surrounding spaces (table cells
# are stripped by every format, as they are by pandas' readers).
_name = (
    st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Co", "Cn")), min_size=1)
    .map(str.strip)
    .filter(bool)
)


@settings(max_examples=150, deadline=None)
@given(names=st.lists(_name, min_size=1, max_size=5, unique=True))
def test_markdown_round_trip_of_any_names(names):
    frame = pd.DataFrame({"system": names, "mean": np.arange(len(names)) / 10})
    cells = _html_cells(
        MarkdownIt("commonmark").enable("table").render(render_table(frame, "markdown"))
    )
    assert cells[2::2] == names


@settings(max_examples=150, deadline=None)
@given(names=st.lists(_name, min_size=1, max_size=5, unique=True))
def test_csv_and_json_round_trip_of_any_names(tmp_path_factory, names):
    folder = tmp_path_factory.mktemp("rt")
    frame = pd.DataFrame({"system": names, "mean": np.arange(len(names)) / 10})
    back = pd.read_csv(write_table(frame, folder / "t.csv"), dtype={"system": str},
                       keep_default_na=False)  # fmt: skip
    assert back["system"].tolist() == names
    records = json.loads(write_table(frame, folder / "t.json").read_text(encoding="utf-8"))
    assert [r["system"] for r in records] == names


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_latex_escape_leaves_no_special_character_bare(text):
    escaped = latex_escape(text)
    bare = escaped
    for command in COMMANDS:
        bare = bare.replace(command, "")
    for char in "&%$#_{}":
        assert bare.count(char) == bare.count("\\" + char)
    assert not set("~^<>|\n") & set(bare)
    unescaped = bare
    for char in "&%$#_{}":
        unescaped = unescaped.replace("\\" + char, char)
    assert "\\" not in unescaped  # every backslash left belongs to an escape
