"""The deployment review: its numbers are the API's, it is self-contained and reproducible,
a failed posterior turns it UNRELIABLE, and it renders in a real browser."""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape

import bayes_ir
from bayes_ir.report.decision import format_probability
from bayes_ir.report.review import review
from bayes_ir.report.review_measures import combine_actions, review_measures
from bayes_ir.table import ScoreTable

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
    matrix = rv.table.matrix().to_pandas()
    for row in frame.itertuples(index=False):
        chunk = html[html.index(f'data-challenger="{row.challenger}"') :][:1500]
        assert row.action in chunk
        assert f"{comparison.at[row.challenger, 'mean']:+.4f}" in chunk
        assert str(escape(format_probability(comparison.at[row.challenger, "p_gain"]))) in chunk
        assert f"{row.loss_deploy:.4f}" in chunk
        wide = matrix[[row.challenger, "bm25"]].dropna()  # observed: from the scores
        observed = (wide[row.challenger] - wide["bm25"]).mean()
        assert f'data-label="observed"><span>{observed:+.4f}</span>' in chunk
    assert str(escape(rv.decision.pooling.summary())) in html  # why they differ
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


# ---------------------------------------------------------------- several measures
THREE = ["chal_dense", "chal_fusion", "chal_rerank"]
MULTI = {"margin": 0.03, "draws": 500, "chains": 2, "n_resamples": 199, "r_levels": (5,),
         "seed": 5, "topics": (25,)}  # fmt: skip


def _two_measures():
    """AP and its mirror image 1 - AP: a challenger that gains on one loses on the other."""
    frame = pd.read_csv(EXAMPLE)
    mirror = frame.assign(measure="1-AP", score=1 - frame["score"])
    table = ScoreTable.from_frame(pd.concat([frame, mirror]), source=EXAMPLE.name)
    return table.with_roles(champion="bm25", challengers=THREE, artifacts="trec_run0*")


def _multi():
    with ThreadPoolExecutor(1) as executor:
        return review_measures(_two_measures(), measures=["AP", "1-AP"], executor=executor,
                               inputs=[EXAMPLE], **MULTI)  # fmt: skip


@pytest.fixture(scope="module")
def multi():
    return _multi()


@pytest.fixture(scope="module")
def multi_page(multi, tmp_path_factory):
    path = tmp_path_factory.mktemp("multi") / "review.html"
    multi.to_html(path)
    return path


class _Rows(HTMLParser):
    """The (challenger, measure, action text) of every row of the summary table."""

    def __init__(self):
        super().__init__()
        self.rows, self.ids, self._in, self._action = [], [], False, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "table":
            self._in = attrs.get("id") == "summary-table"
        if self._in and tag == "tr" and "data-measure" in attrs:
            self.rows.append([attrs["data-challenger"], attrs["data-measure"], ""])
        if tag == "td":  # its text may sit in a <span> (a card at phone width)
            self._action = self._in and "action" in attrs.get("class", "")

    def handle_endtag(self, tag):
        if tag == "table":
            self._in = False
        if tag == "td":
            self._action = False

    def handle_data(self, data):
        if self._action and self.rows:
            self.rows[-1][2] += data


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        (["deploy", "deploy", "deploy"], "deploy"),
        (["deploy", "collect more data"], "collect more data"),
        (["deploy", "keep champion"], "keep champion"),
        (["collect more data", "keep champion"], "keep champion"),
        (["keep champion", "unreliable"], "unreliable"),
        (["deploy", "unreliable"], "unreliable"),
        (["collect more data"] * 2, "collect more data"),
    ],
)
def test_a_challenger_deploys_only_when_every_measure_says_deploy(actions, expected):
    assert combine_actions(actions) == expected


def test_mirrored_measure_vetoes_the_deployment(multi):
    """On 1 - AP every gain on AP is a loss: no challenger may be deployed on both."""
    ap, mirror = multi.reviews["AP"], multi.reviews["1-AP"]
    # the single-measure reviews are the reference: AP deploys a challenger, 1 - AP keeps bm25
    assert "deploy" in ap.decision.actions.values()
    for name, action in ap.decision.actions.items():
        if action == "deploy":
            assert mirror.decision.actions[name] == "keep champion"
    combined = multi.combined().set_index("challenger")["action"]
    for name in THREE:
        both = [ap.decision.actions[name], mirror.decision.actions[name]]
        assert combined[name] == combine_actions(both) != "deploy"
    assert multi.overall != "deploy" and not multi.headline().startswith("Deploy")
    gains = [rv.comparison.to_frame().set_index("challenger")["p_gain"] for rv in (ap, mirror)]
    smallest = multi.combined().set_index("challenger")["min_p_gain"]
    for name in THREE:
        assert smallest[name] == min(g[name] for g in gains)
    # mirroring flips the sign of every difference (same data, same seed, same model)
    ours = multi.to_frame().set_index(["challenger", "measure"])
    for name in THREE:
        assert ours.at[(name, "1-AP"), "mean"] == pytest.approx(-ours.at[(name, "AP"), "mean"],
                                                                abs=0.01)  # fmt: skip


def test_one_document_decision_first_for_every_measure(multi, multi_page):
    html = multi_page.read_text()
    parser = _Rows()
    parser.feed(html)
    truth = {(c, m): rv.decision.actions[c] for m, rv in multi.reviews.items() for c in THREE}
    assert len(parser.rows) == len(truth) == 6  # one row per challenger x measure
    assert {(c, m): a.split(" ", 1)[1].strip() for c, m, a in parser.rows} == truth
    assert "Rule over measures." in html and "only when every measure" in html
    assert str(escape(multi.headline())) in html
    # the summary before any measure's section; each measure's sections; provenance once
    assert html.index('id="summary-table"') < html.index('id="m1-decision"')
    for i, measure in enumerate(multi.measures, start=1):
        for part in ("decision", "risk", "model-check", "diagnostics"):
            assert f"m{i}-{part}" in parser.ids
        assert str(escape(multi.reviews[measure].headline())) in html
    assert len(parser.ids) == len(set(parser.ids))  # ids unique in the page
    assert parser.ids.count("provenance") == 1 and html.count("SHA-256 ") == 1
    assert html.count("<svg") == 6 and html.count('role="img"') == 6
    for measure in multi.measures:  # every caption names measure, collection, what to see
        captions = re.findall(r"<figcaption>(.*?)</figcaption>", html, re.S)
        named = re.compile(rf"(?<![\w-]){re.escape(measure)} on example")
        assert sum(bool(named.search(c)) and "look for" in c for c in captions) == 3


def test_three_challengers_on_50_topics_stay_small(multi, multi_page):
    sizes = [len(rv.to_html().encode()) for rv in multi.reviews.values()]
    assert max(sizes) < 5_000_000 and multi_page.stat().st_size < 5_000_000
    parser = _Resources()
    parser.feed(multi_page.read_text())
    assert all(u.startswith("#") for u in parser.urls), parser.urls


def test_two_measures_rerun_byte_identical_but_the_date(multi):
    strip = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
    again = _multi().to_html()
    assert strip.sub("DATE", again) == strip.sub("DATE", multi.to_html())
    assert len(strip.findall(again)) == 2  # the date: in the header and in the provenance


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Pixels a page may exceed the viewport by (sub-pixel rounding).
SLACK = 2


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium, launched once for the module's browser tests (about 1.5 s a launch);
    each test opens its page in a fresh browser context of its own (:func:`_open`)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=flags)
        try:
            yield chromium
        finally:
            chromium.close()


def _open(browser, page, width, check):
    """Open ``page`` in ``browser`` ``width`` px wide (a new context: no cache, cookies or
    requests of another test); return errors, requests, check()."""
    errors, requests = [], []
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        tab = context.new_page()
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.on("request", lambda r: requests.append(r.url))
        tab.goto(page.as_uri())
        return errors, requests, check(tab)
    finally:
        context.close()


#: Right edge of the widest table, figure or block, and the page's own width (in print,
#: where nothing scrolls, it shows what would be cut).
_WIDEST = """() => {
  const all = [...document.querySelectorAll('table, figure svg, pre, dl, p, h1, h2')];
  return [Math.max(...all.map(e => e.getBoundingClientRect().right)),
          document.documentElement.clientWidth];
}"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width", [1280, 390])
def test_renders_in_a_real_browser(browser, rv, page, tmp_path, width):
    def look(tab):
        return (tab.inner_text("body"), tab.screenshot(full_page=True),
                tab.evaluate("document.documentElement.scrollWidth"))  # fmt: skip

    errors, requests, (text, shot, scroll_width) = _open(browser, page, width, look)
    assert errors == []
    assert requests == [page.as_uri()]  # the page itself, nothing else
    assert scroll_width <= width + SLACK  # wide tables scroll inside their box, not the page
    assert rv.headline() in text
    for row in rv.decision.to_frame().itertuples(index=False):
        assert row.challenger in text and row.action in text
    png = tmp_path / f"review_{width}.png"
    png.write_bytes(shot)
    import matplotlib.image as mpimg

    pixels = mpimg.imread(png)
    assert pixels.shape[1] == width and pixels[..., :3].std() > 0.05  # not blank


#: Right edge of the decision table, of each of its cells and of Figure 1, in the viewport.
_FIRST_SCREEN = """() => {
  const table = document.querySelector('#decision-table');
  const cells = [...table.querySelectorAll('th, td')].map(e => e.getBoundingClientRect().right);
  const figure = document.querySelector('#decision figure svg').getBoundingClientRect().right;
  return [table.getBoundingClientRect().right, Math.max(...cells), figure, window.innerWidth];
}"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width", [1280, 390])
def test_the_decision_table_and_figure_1_are_whole_at_phone_width(browser, page, width):
    """At 390 px the decision table and Figure 1 were cut at the right edge (to scroll)."""
    errors, _, (table, cells, figure, inner) = _open(
        browser, page, width, lambda t: t.evaluate(_FIRST_SCREEN)
    )
    assert errors == [] and inner == width
    assert max(table, cells, figure) <= width + SLACK


def test_a_misfitting_challenger_is_marked_in_the_review(rv, page):
    """The model does not describe chal_risky: its rows carry the mark, with the legend."""
    html = page.read_text()
    assert "chal_risky" in rv.decision.misfit
    row = html[html.index('data-challenger="chal_risky"') :][:300]
    assert 'class="misfit">chal_risky \u2020</th>' in row
    legend = '<p class="note misfit">\u2020 model misfit: the gaussian model does not describe '
    assert legend + "chal_risky" in html
    for name in set(rv.decision.challengers) - set(rv.decision.misfit):
        assert f">{name} \u2020<" not in html, name
    assert "gaussian likelihood, one residual SD" in html[: html.index('id="decision"')]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_several_measures_at_phone_width_and_in_print(browser, multi, multi_page):
    def look(tab):
        rows = tab.locator("#summary-table tbody tr").count()
        screen = tab.evaluate("document.documentElement.scrollWidth")
        tab.emulate_media(media="print")
        tab.set_viewport_size({"width": 680, "height": 1000})  # A4 less 1.5 cm margins, 96 dpi
        return rows, screen, tab.evaluate(_WIDEST), len(tab.pdf())

    errors, requests, (rows, screen, printed, pdf) = _open(browser, multi_page, 390, look)
    assert errors == [] and requests == [multi_page.as_uri()]
    assert rows == len(multi.to_frame()) == 6
    assert screen <= 390 + SLACK  # wide tables and figures scroll inside their box
    assert printed[0] <= printed[1] + SLACK  # on paper nothing is cut at the right edge
    assert pdf > 10_000
