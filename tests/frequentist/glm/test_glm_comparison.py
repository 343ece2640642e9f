"""compare_links: the Tables 1 and 2 layout, best-link highlighting, sweeps and failures."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import matplotlib
import numpy as np
import pytest
from results import glm as ref

from bayes_ir.errors import BayesIRError, ConvergenceError
from bayes_ir.frequentist.glm import compare_links, fit_glm, tukey_hsd
from bayes_ir.frequentist.glm.comparison import COLUMNS
from bayes_ir.table import ScoreTable, concat

matplotlib.use("Agg")

LINKS = ["identity", "exp", "logit", "cloglog"]


@pytest.fixture(scope="module")
def two_blocks() -> ScoreTable:
    y = np.array(ref.SCORES)
    a = ScoreTable.from_matrix(
        y, systems=ref.SYSTEMS, topics=ref.TOPICS, collection="A", measure="AP"
    )
    b = ScoreTable.from_matrix(
        y[:12, :6] ** 1.5, systems=ref.SYSTEMS[:6], topics=ref.TOPICS[:12], collection="B",
        measure="AP",
    )  # fmt: skip
    return concat([a, b])


@pytest.fixture(scope="module")
def comparison(two_blocks):
    with ThreadPoolExecutor(2) as pool:
        return compare_links(two_blocks, links=LINKS, alpha=0.05, executor=pool)


def test_rows_equal_single_fits(two_blocks, comparison):
    frame = comparison.to_frame()
    assert list(frame.columns) == list(COLUMNS)
    assert len(frame) == 2 * len(LINKS)
    for row in frame.itertuples(index=False):
        block = two_blocks.select(collection=row.collection)
        fit = fit_glm(block, link=row.link)
        assert row.deviance == pytest.approx(fit.deviance, rel=1e-12)
        assert row.aic == pytest.approx(fit.aic, rel=1e-12)
        if row.link == "logit":
            assert row.n_significant == tukey_hsd(fit).n_significant
        assert row.n_pairs == len(fit.systems) * (len(fit.systems) - 1) // 2
    a = frame[frame.collection == "A"].set_index("link")
    for link in LINKS:
        assert a.loc[link, "deviance"] == pytest.approx(ref.R_STATS[link]["deviance"], rel=1e-10)


def test_tables_and_best_link(comparison):
    dev = comparison.table("deviance")
    assert list(dev.index) == LINKS and list(dev.columns) == ["A AP", "B AP"]
    best = comparison.best("deviance")
    for col in dev.columns:
        assert best[col] == dev[col].idxmin()
    assert best["A AP"] == "cloglog"  # R: cloglog 0.91162 < logit 0.91216 < identity < exp
    pairs = comparison.table("n_significant")
    winners = comparison.best("n_significant")["A AP"].split(", ")
    assert set(winners) == set(pairs.index[pairs["A AP"] == pairs["A AP"].max()])
    md = comparison.to_markdown("deviance")
    assert f"**{dev.loc['cloglog', 'A AP']:.4f}**" in md
    assert md.count("**") == 4  # one bold cell per column (no ties in deviance)
    tex = comparison.to_latex("n_significant")
    assert "\\textbf{" in tex and "\\begin{tabular}" in tex
    # every deviance cell in 4 decimals, the best link of each column (R: cloglog) bold
    lines = comparison.to_latex("deviance", label="tab:dev").splitlines()
    assert r"\label{tab:dev}" in lines and r"\toprule" in lines
    body = lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]
    rows = {r.split(" & ")[0]: r.removesuffix(r" \\").split(" & ")[1:] for r in body}
    for j, col in enumerate(dev.columns):
        for link in LINKS:
            cell = f"{dev.loc[link, col]:.4f}"
            assert rows[link][j] == (rf"\textbf{{{cell}}}" if link == best[col] else cell)
    text = comparison.summary()
    assert "Residual deviance" in text and "Significantly different pairs" in text
    with pytest.raises(BayesIRError, match="unknown statistic"):
        comparison.table("r2")


def test_get_fit_and_tukey(comparison):
    fit = comparison.get_fit("logit", collection="B")
    assert fit.link == "logit" and fit.collection == "B"
    assert comparison.get_tukey("logit", collection="B").n_pairs == 15
    with pytest.raises(BayesIRError, match="2 rows match"):
        comparison.get_fit("logit")


def test_failed_link_is_a_row_not_an_abort():
    y = np.array(ref.SCORES)
    y[:, 2] = 0.0
    table = ScoreTable.from_matrix(y, systems=ref.SYSTEMS, topics=ref.TOPICS)
    result = compare_links(table, links=["identity", "log"], boundary="none")
    frame = result.to_frame().set_index("link")
    assert bool(frame.loc["identity", "converged"]) and not bool(frame.loc["log", "converged"])
    assert "no finite MLE" in frame.loc["log", "message"]
    # identity link, Gaussian: the two-way ANOVA residual sum of squares (closed form)
    resid = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0) + y.mean()
    assert frame.loc["identity", "deviance"] == pytest.approx((resid**2).sum(), rel=1e-10)
    # the failed link is not a candidate for best, and is starred in the table
    assert result.best("deviance").iloc[0] == "identity"
    rows = [[c.strip() for c in ln.split("|")[1:3]] for ln in result.to_markdown().splitlines()]
    assert rows[2] == ["identity", f"**{frame.loc['identity', 'deviance']:.4f}**"]
    assert rows[3] == ["log", f"{frame.loc['log', 'deviance']:.4f}\\*"]
    assert "did not converge" in result.summary()
    # LaTeX: the lower deviance of the failed fit is marked, not bold; the converged one is
    lines = result.to_latex().splitlines()
    dev = frame["deviance"]
    assert f"log & {dev['log']:.4f}$^{{\\dagger}}$ \\\\" in lines
    assert f"identity & \\textbf{{{dev['identity']:.4f}}} \\\\" in lines
    assert r"$^{\dagger}$ did not converge\par" in lines


def test_failed_fit_raises_on_get(monkeypatch, ref_table):
    import bayes_ir.frequentist.glm.comparison as comp

    def boom(*args, **kwargs):
        raise ConvergenceError("synthetic failure")

    monkeypatch.setattr(comp, "_fit_matrix", boom)
    result = compare_links(ref_table, links=["logit"])
    assert result.to_frame()["message"].iat[0] == "fit failed: synthetic failure"
    assert np.isnan(result.to_frame()["deviance"].iat[0])
    assert "failed" in result.to_markdown()
    assert "logit & failed \\\\" in result.to_latex()
    with pytest.raises(ConvergenceError, match="synthetic failure"):
        result.get_fit("logit")


def test_bad_input(ref_table):
    with pytest.raises(BayesIRError, match="unknown link"):
        compare_links(ref_table, links=["logit", "nope"])
    with pytest.raises(BayesIRError, match="no \\(collection, measure\\) block"):
        compare_links(ref_table, collections=["elsewhere"])


def test_plots(comparison, ref_table):
    import matplotlib.pyplot as plt

    fig = comparison.plot()
    assert len(fig.axes) == 2
    fit = comparison.get_fit("logit", collection="A")
    # the scatter shows (fitted mean, observed score) of every cell
    offsets = fit.plot().axes[0].collections[0].get_offsets()
    np.testing.assert_array_equal(
        offsets, np.column_stack([fit.fitted.ravel(), fit.response.ravel()])
    )
    # the Tukey matrix marks each significant pair twice (+1 and -1), the rest 0
    tukey = fit.tukey()
    image = tukey.plot(kind="matrix").axes[0].get_images()[0].get_array()
    assert np.count_nonzero(image) == 2 * tukey.n_significant and image.sum() == 0
    plt.close("all")
    aic = comparison.table("aic")
    for link in LINKS:
        assert aic.loc[link, "A AP"] == pytest.approx(ref.R_STATS[link]["aic"], rel=1e-10)
