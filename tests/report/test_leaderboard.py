"""The leaderboard's text, Markdown, LaTeX and HTML, its names escaped; the page in Chromium."""

from __future__ import annotations

import re
import shutil
import warnings

import numpy as np
import pytest
from leaderboard_truth import table_of

from bayes_ir.hierarchical import fit, leaderboard
from bayes_ir.report.escape import html_escape
from bayes_ir.report.leaderboard import (
    BORDERLINE_MARK,
    leaderboard_cells,
    leaderboard_latex,
    leaderboard_markdown,
    leaderboard_text,
)

#: Names that Markdown, LaTeX and HTML would read as markup.
NAMES = ["a|b", "x_y*", "<script>alert(1)</script>", "50% & more", "plain", "tab[1]"]


@pytest.fixture(scope="module")
def lb():
    rng = np.random.default_rng(5)
    theta = np.array([0.50, 0.49, 0.40, 0.30, 0.29, 0.10])
    y = theta + rng.normal(0, 0.15, (60, 1)) + rng.normal(0, 0.05, (60, 6))
    y[:, 5] += rng.normal(0, 0.4, 60)  # one system the model does not describe
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit(table_of(y, NAMES), draws=2000, seed=2)
    return leaderboard(result, rope=0.02, top=2)


def test_text_has_rules_between_groups_and_marks_misfit(lb):
    text = leaderboard_text(lb)
    lines = text.splitlines()
    rules = [i for i, line in enumerate(lines) if set(line.replace(" ", "")) == {"-"}]
    assert len(rules) == 1 + lb.frame["group"].max() - 1  # under the header, between groups
    row = next(line for line in lines if line.lstrip()[:1].isdigit() and "tab[1]" in line)
    assert row.rstrip().endswith("misfit")
    assert "<script>alert(1)</script>" in text  # plain text shows names as written
    head = leaderboard_text(lb, rows=2)
    assert "4 more places" in head
    assert lb.misfit == ("tab[1]",)


def test_markdown_escapes_names_and_bolds_leaders(lb):
    md = leaderboard_markdown(lb)
    rows = [line for line in md.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 6
    assert r"a\|b" in md and r"x_y\*" in md and r"\<script\>" in md and "tab\\[1\\]** †" in md
    leaders = set(lb.frame.loc[lb.frame["system"] == lb.frame["leader"], "place"])
    for row in rows:
        place = int(row.split("|")[1])
        assert ("**" in row.split("|")[2]) == (place in leaders)
    assert all(len(row.split(" | ")) == 10 for row in rows)  # no unescaped | splits a cell


def test_latex_rules_daggers_and_escapes(lb):
    tex = leaderboard_latex(lb)
    assert tex.count(r"\cmidrule(lr){1-9}") == lb.frame["group"].max() - 1
    assert r"tab[1]$^{\dagger}$" in tex and r"x\_y*" in tex and r"50\% \& more" in tex
    assert r"\textless{}script\textgreater{}" in tex
    body = tex.split(r"\midrule")[1].split(r"\bottomrule")[0]
    data = [line for line in body.splitlines() if line.endswith(r"\\")]
    assert all(line.count(" & ") == 8 for line in data)
    assert "model does not describe 1 of 6 systems" in tex


def test_cells_mark_borderline_groups(lb):
    frame = lb.frame.copy()
    frame.loc[2, "borderline"] = True
    cells = leaderboard_cells(type(lb)(**{**lb.__dict__, "frame": frame}))
    assert cells.loc[2, "group"].endswith(BORDERLINE_MARK)
    assert cells["number"].tolist() == frame["group"].tolist()


def test_html_is_self_contained_and_escaped(lb, tmp_path):
    html = lb.to_html()
    assert (
        "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    )
    assert not re.search(r'(src|href)="(?!#)', html)  # nothing loaded from elsewhere
    assert html.count("<svg") == 2 and html.count('role="img"') == 2
    for name in NAMES:
        assert f'data-system="{html_escape(name)}"' in html
    assert "MODEL MISFIT" in html
    page = lb.to_html(tmp_path / "board.html", command="bayes-ir rank x.csv")
    assert page.read_text().count("<tr") == 7


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SLACK = 2


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium, launched once for both widths; each test has a context of its own."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM,
                                      args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width", [1280, 390])
def test_page_in_a_real_browser(browser, lb, tmp_path, width):
    page = lb.to_html(tmp_path / "board.html")
    errors, requests = [], []
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        tab = context.new_page()
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.on("request", lambda r: requests.append(r.url))
        tab.goto(page.as_uri())
        text = tab.inner_text("body")
        scroll = tab.evaluate("document.documentElement.scrollWidth")
        rows = tab.locator("#board-table tbody tr").count()
        shot = tab.screenshot(full_page=True)
    finally:
        context.close()
    assert errors == [] and requests == [page.as_uri()]
    assert scroll <= width + SLACK  # the table scrolls inside its box, not the page
    assert rows == 6 and all(name in text for name in NAMES)
    png = tmp_path / f"board_{width}.png"
    png.write_bytes(shot)
    import matplotlib.image as mpimg

    pixels = mpimg.imread(png)
    assert pixels.shape[1] == width and pixels[..., :3].std() > 0.05
