"""The deployment review: its numbers are the API's, it is self-contained and reproducible,
a failed posterior turns it UNRELIABLE, and it renders in a real browser."""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

import bayes_ir
from bayes_ir.report.decision import format_probability
from bayes_ir.report.review import review

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"
OPTIONS = {"margin": 0.03, "draws": 1000, "chains": 2, "n_resamples": 999, "r_levels": (1, 5),
           "seed": 5, "topics": (10, 50)}  # fmt: skip


def _review(**options):
    table = bayes_ir.read_scores(EXAMPLE).with_roles(champion="bm25", challengers="chal_*")
    with ThreadPoolExecutor(1) as executor:
        return review(table, executor=executor, inputs=[EXAMPLE], **(OPTIONS | options))


@pytest.fixture(scope="module")
def rv():
    return _review()


@pytest.fixture(scope="module")
def page(rv, tmp_path_factory):
    path = tmp_path_factory.mktemp("review") / "review.html"
    rv.to_html(path)
    return path


class _Resources(HTMLParser):
    """Collect every attribute that could load something, and the script/link tags."""

    def __init__(self):
        super().__init__()
        self.urls, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "srcset", "data", "xlink:href", "action") and value:
                self.urls.append(value)


def test_self_contained_and_small(page):
    html = page.read_text()
    parser = _Resources()
    parser.feed(html)
    assert "script" not in parser.tags and "link" not in parser.tags and "img" not in parser.tags
    assert all(u.startswith("#") for u in parser.urls), parser.urls  # SVG-internal refs only
    assert not re.search(r"url\((?!#)", html)  # no CSS resource
    assert page.stat().st_size < 5_000_000
    assert html.count("<svg") == 3 and html.count('role="img"') == 3


def test_decision_first_with_the_api_numbers(rv, page):
    html = page.read_text()
    first_section = html.index('id="decision"')
    assert first_section < html.index('id="risk"') < html.index('id="diagnostics"')
    assert str(escape(rv.headline())) in html
    assert "Rule." in html and "threshold of caring" in html
    frame = rv.decision.to_frame()
    comparison = rv.comparison.to_frame().set_index("challenger")
    for row in frame.itertuples(index=False):
        chunk = html[html.index(f'data-challenger="{row.challenger}"') :][:1500]
        assert row.action in chunk
        assert f"{comparison.at[row.challenger, 'mean']:+.4f}" in chunk
        assert str(escape(format_probability(comparison.at[row.challenger, "p_gain"]))) in chunk
        assert f"{row.loss_deploy:.4f}" in chunk
    for line in rv.provenance["inputs"]:
        assert line["sha256"] in html


def test_worst_topics_are_the_largest_losses(rv):
    matrix = rv.table.matrix().to_pandas()
    for name, group in rv.worst_topics.groupby("challenger"):
        diff = (matrix[name] - matrix["bm25"]).sort_values()
        expected = [str(t) for t, v in diff.head(len(group)).items() if v < 0]
        assert list(group["topic"]) == expected


def test_rerun_is_byte_identical_but_the_date(rv):
    again = _review()
    strip = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
    assert strip.sub("DATE", again.to_html()) == strip.sub("DATE", rv.to_html())


def test_failed_posterior_makes_the_whole_review_unreliable():
    bad = _review(draws=30, r_levels=(5,), topics=())
    html = bad.to_html()
    assert bad.decision.overall == "unreliable"
    banner = html.index('class="banner"')
    assert banner < html.index('id="decision"')
    assert "UNRELIABLE" in html[banner : banner + 200]
    assert bad.headline().startswith("UNRELIABLE")


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width", [1280, 390])
def test_renders_in_a_real_browser(rv, page, tmp_path, width):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    errors, requests = [], []
    with sync_api.sync_playwright() as pw:
        flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=flags)
        try:
            tab = browser.new_page(viewport={"width": width, "height": 900})
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.on("request", lambda r: requests.append(r.url))
            tab.goto(page.as_uri())
            text = tab.inner_text("body")
            shot = tab.screenshot(full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert requests == [page.as_uri()]  # the page itself, nothing else
    assert rv.headline() in text
    for row in rv.decision.to_frame().itertuples(index=False):
        assert row.challenger in text and row.action in text
    png = tmp_path / f"review_{width}.png"
    png.write_bytes(shot)
    import matplotlib.image as mpimg

    pixels = mpimg.imread(png)
    assert pixels.shape[1] == width and pixels[..., :3].std() > 0.05  # not blank
