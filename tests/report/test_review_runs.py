"""The review of several runs per system: both verdicts, the runs, the components, the
t-test cross-check, the plan of more topics or seeds, provenance; self-contained HTML."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from markupsafe import escape

import bayes_ir
from bayes_ir.errors import OptionError
from bayes_ir.frequentist import paired_tests
from bayes_ir.hierarchical.replicate_effects import COMPONENTS
from bayes_ir.report.numbers import format_probability
from bayes_ir.report.review_runs import CROSS_CHECK_COLUMNS, RunsReview, review_runs
from bayes_ir.table import ScoreTable

#: The sampler settles the scales at 3,000 draws (a 600-draw fit fails the ESS gate, which
#: hides the plans); the blocked Gibbs sampler makes that a few seconds.
FIT = {"draws": 3000, "chains": 2, "seed": 3}


def _runs(n_topics=30, n_runs=4, gain=0.03, run_sd=0.03, seed=1, wild=None):
    """Three systems x ``n_topics`` topics x ``n_runs`` seeds; ``wild`` spreads 6x wider."""
    rng = np.random.default_rng(seed)
    topic = rng.normal(0.45, 0.12, n_topics)
    rows = []
    for s, shift in (("bm25", 0.0), ("dense", gain), ("other", 0.01)):
        inter = rng.normal(0, 0.03, n_topics)
        sd = run_sd * (6 if s == wild else 1)
        for r in range(n_runs):
            rho = rng.normal(0, sd)
            y = np.clip(topic + shift + inter + rho + rng.normal(0, 0.04, n_topics), 0, 1)
            rows += [(s, f"q{t}", f"seed{r}", y[t]) for t in range(n_topics)]
    return pd.DataFrame(rows, columns=["system", "topic", "seed", "score"])


def _table(path, **kwargs) -> ScoreTable:
    _runs(**kwargs).to_csv(path, index=False)
    return bayes_ir.read_scores(path).with_roles(champion="bm25", challengers=["dense", "other"])


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    return tmp_path_factory.mktemp("runs") / "runs.csv"


@pytest.fixture(scope="module")
def rv(csv):
    # through bayes_ir.review: a table with replicates is a review of runs
    return bayes_ir.review(_table(csv), inputs=[csv], **FIT)


@pytest.fixture(scope="module")
def html(rv, tmp_path_factory):
    path = tmp_path_factory.mktemp("review") / "review.html"
    assert rv.save(path) == path
    return path.read_text()


class _Resources(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.urls += [v for k, v in attrs if k in ("src", "href", "xlink:href", "data") and v]


def test_bayes_ir_review_dispatches_a_table_of_runs(rv):
    assert isinstance(rv, RunsReview)
    assert set(rv.decisions) == {"expectation", "single_run"}
    assert rv.decisions["expectation"].over == "expectation"
    assert rv.decisions["single_run"].over == "single_run"
    assert rv.fit.diagnostics.passed


def test_self_contained_no_script_no_request(html):
    parser = _Resources()
    parser.feed(html)
    assert "<script" not in html and "script" not in parser.tags
    assert "link" not in parser.tags and "img" not in parser.tags
    # SVG-internal references, and the heat maps' pixels inline (data: URIs)
    assert all(u.startswith(("#", "data:image/png;base64,")) for u in parser.urls)
    # the only absolute URLs are the SVG namespaces, never fetched
    assert set(re.findall(r"https?://[^\"'\s)]+", html)) <= {
        "http://www.w3.org/2000/svg",
        "http://www.w3.org/1999/xlink",
    }
    assert not re.search(r"url\((?!#)", html)


def test_both_verdicts_each_with_its_rule_decision_first(rv, html):
    first = html.index('id="decision"')
    assert first < html.index('id="runs"') < html.index('id="cross-check"')
    assert html.index('id="cross-check"') < html.index('id="provenance"')
    for over, d in rv.decisions.items():
        table = html[html.index(f'id="decision-{over}"') :].split("</table>")[0]
        assert str(escape(d.rule)) in html
        for row in d.table.itertuples(index=False):
            assert f'data-challenger="{row.challenger}"' in table
            assert row.action in table
            assert f"{row.mean:+.4f}" in table
    assert "In expectation over seeds: " in rv.headline()
    assert "On one run of each: " in rv.headline()


def test_p_a_random_run_beats_the_champions(rv, html):
    table = html[html.index('id="run-beats"') :].split("</table>")[0]
    runs = rv.decisions["expectation"].runs
    assert list(runs["challenger"]) == ["dense", "other"]
    for r in runs.itertuples(index=False):
        assert format_probability(r.p_run_beats) in table
        assert f"{r.runs_challenger} vs {r.runs_champion}" in table
        # one run of each is harder to call than the expected scores
        assert abs(r.p_run_beats - 0.5) < abs(r.p_better_expectation - 0.5)


def test_the_runs_figure_is_inline_svg(html):
    runs = html[html.index('id="runs"') :]
    assert runs.index('<svg role="img" aria-label="runs per system"') < runs.index("Figure 1.")
    assert "one run&#39;s mean" in runs or "one run's mean" in runs


def test_variance_components(rv, html):
    table = html[html.index('id="components-table"') :].split("</table>")[0]
    frame = rv.contrasts.components_frame()
    for name, label in COMPONENTS:
        assert label in table
        row = frame[frame["component"] == name].iloc[0]
        assert f"{row['mean']:.4f}" in table
        assert f"[{row['ci_lower']:.4f}, {row['ci_upper']:.4f}]" in table


def test_paired_t_test_cross_check_says_it_ignores_the_run_variance(rv, html):
    section = html[html.index('id="cross-check"') :].split("</section>")[0]
    assert "ignores the run-to-run variance" in section
    check = rv.cross_check()
    assert tuple(check.columns) == CROSS_CHECK_COLUMNS
    t = paired_tests(rv.table.mean_over_replicates(), test="t").to_frame().set_index("challenger")
    for chal in ("dense", "other"):
        rows = check[check["challenger"] == chal].set_index("method")
        freq = rows.loc["paired t-test, per-topic means over seeds"]
        assert freq["estimate"] == pytest.approx(t.at[chal, "mean_difference"])
        assert freq["probability"] == pytest.approx(t.at[chal, "p_adjusted"])
        assert f"{freq['estimate']:+.4f}" in section
        bayes = rows.loc["Bayesian, in expectation over seeds"]
        # the t interval leaves the run-to-run variance out: it is the narrower
        assert freq["ci_upper"] - freq["ci_lower"] < bayes["ci_upper"] - bayes["ci_lower"]


def test_undecided_challengers_get_the_plan_of_more_topics_or_seeds(rv, html):
    undecided = [
        (over, r.challenger)
        for over, d in rv.decisions.items()
        for r in d.table.itertuples(index=False)
        if r.action == "collect more data"
    ]
    assert undecided, "the simulated gain should leave a challenger undecided"
    assert set(rv.plans) == set(undecided)
    section = html[html.index('id="plan"') :].split("</section>")[0]
    for over, chal in undecided:
        assert f'id="plan-line-{over}-{chal}"' in section
    assert 'aria-label="more topics or seeds dense expectation"' in section


def test_provenance(rv, csv, html):
    from bayes_ir.provenance import sha256_file

    section = html[html.index('id="provenance"') :]
    assert sha256_file(csv) in section
    assert rv.fit.provenance["data_hash"] in section
    assert "bm25: seed0, seed1, seed2, seed3" in section
    assert "sampler seed 3" in section and "numpy" in section


def test_a_flagged_system_is_marked(tmp_path):
    table = _table(tmp_path / "wild.csv", wild="dense", n_runs=6, seed=2)
    made = review_runs(table, draws=600, chains=2, seed=3)
    misfit = made.contrasts.misfit
    assert misfit
    page = made.to_html()
    name = misfit[0]
    assert f"{name} \u2020" in page
    assert "MODEL MISFIT: the model of runs does not describe" in page
    check = page[page.index('id="model-check-table"') :].split("</table>")[0]
    assert f'class="misfit">{name} \u2020</th>' in check and "FLAGGED" in check
    assert made.headline().startswith("UNRELIABLE (")
    assert not made.reliable


def test_options_of_one_score_per_cell_are_refused(rv, tmp_path):
    with pytest.raises(OptionError, match="r: with several runs per system"):
        bayes_ir.review(rv.table, r=3.0, draws=100, chains=1)
    one = rv.table.mean_over_replicates()
    with pytest.raises(OptionError, match="needs several runs per system"):
        review_runs(one)
    with pytest.raises(OptionError, match="sigma_replicate, cost_topic and cost_run apply"):
        bayes_ir.review(one, cost_run=3.0)
