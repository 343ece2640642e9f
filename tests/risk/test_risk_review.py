"""The deployment review table: every cell equals the measure computed on its own."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_ir.risk import bca_urisk, risk_review, trisk, zrisk
from bayes_ir.risk.review import REVIEW_COLUMNS


@pytest.fixture(scope="module")
def review(toy):
    return risk_review(toy, r=5, n_resamples=1000, seed=9, chains=2, draws=1500)


def test_frequentist_columns(toy, review):
    frame = review.to_frame()
    assert list(frame.columns) == list(REVIEW_COLUMNS)
    assert list(frame["system"]) == ["base", "good", "risky", "same"]
    assert frame["role"].tolist() == ["champion", "challenger", "challenger", "challenger"]
    np.testing.assert_allclose(frame["mean"], toy.wide()[list(frame["system"])].mean())
    t = trisk(toy, r=5)
    np.testing.assert_allclose(frame["urisk_minus"].iloc[1:], -t.urisk)
    np.testing.assert_allclose(frame["trisk_minus"].iloc[1:], -t.trisk)
    np.testing.assert_allclose(frame["trisk_p"].iloc[1:], t.p_value)
    np.testing.assert_array_equal(frame["trisk_sig"].iloc[1:], t.p_value < 0.05)
    b = bca_urisk(toy, r=5, n_resamples=1000, seed=9)
    np.testing.assert_allclose(frame["bca_lower_minus"].iloc[1:], -b.ci_upper)
    np.testing.assert_allclose(frame["bca_upper_minus"].iloc[1:], -b.ci_lower)
    z = zrisk(toy, r=5).to_frame().set_index("system").loc[list(frame["system"])]
    np.testing.assert_allclose(frame["zrisk_minus"], z["zrisk_minus"])
    np.testing.assert_allclose(frame["georisk_minus"], z["georisk_minus"])
    assert frame.iloc[0][["urisk_minus", "trisk_minus", "bca_lower_minus"]].isna().all()


def test_bayesian_columns(review):
    frame = review.to_frame().set_index("system")
    br = review.brisk.to_frame().set_index("system")
    for col, src in [("brisk_minus", "brisk_minus"), ("brisk_lower", "ci_lower"),
                     ("brisk_upper", "ci_upper"), ("brisk_p_riskier", "p_riskier")]:  # fmt: skip
        np.testing.assert_allclose(frame[col], br.loc[frame.index, src])
    sig = (br["contrast_lower"] > 0) | (br["contrast_upper"] < 0)
    np.testing.assert_array_equal(frame["brisk_sig"].iloc[1:], sig.loc[frame.index[1:]])
    assert not frame["brisk_sig"].iloc[0]
    # the risky challenger is flagged by the loss-weighted measures
    assert frame.loc["risky", "urisk_minus"] > frame.loc["good", "urisk_minus"]


def test_renderings_state_the_sign_convention(review):
    md = review.to_markdown()
    tex = review.to_latex()
    for text in (md, tex, review.summary()):
        assert "higher = riskier" in text
        assert "r = 5" in text
    assert "| System" in md and "URisk-" in md and "BRisk- CI" in md
    assert "URisk$^-$" in tex and "\\begin{tabular}" in tex
    # the LaTeX marks follow the same columns (dagger TRisk, double dagger BCa, section
    # BRisk), and the highest mean is bold
    lines = tex.splitlines()
    body = lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]
    for line, row in zip(body, review.to_frame().itertuples(), strict=True):
        cells = line.removesuffix(r" \\").split(" & ")
        assert cells[0] == row.system
        assert cells[3].endswith(r"$^{\dagger}$") == bool(row.trisk_sig)
        assert cells[4].endswith(r"$^{\ddagger}$") == bool(row.bca_sig)
        assert cells[7].endswith(r"$^{\S}$") == bool(row.brisk_sig)
        assert cells[1] == (
            rf"\textbf{{{row.mean:.4f}}}"
            if row.mean == review.frame["mean"].max()
            else f"{row.mean:.4f}"
        )
    # significance marks follow the boolean columns
    frame = review.to_frame()
    disp = review.display_frame()
    for i, row in frame.iterrows():
        cell = disp.loc[i, "TRisk- (p)"]
        assert cell.endswith("*") == bool(row["trisk_sig"])
        # the BRisk mark sits on P(riskier), the quantity of the contrast it tests
        assert disp.loc[i, "P(riskier)"].endswith("*") == bool(row["brisk_sig"])
        assert not disp.loc[i, "BRisk-"].endswith("*")
        if row["trisk_p"] < 0.001:
            assert "(<0.001)" in cell  # a p-value is never 0.000


def test_no_bayes(toy):
    rv = risk_review(toy, r=2, n_resamples=500, bayes=False)
    assert rv.brisk is None and rv.to_frame()["brisk_minus"].isna().all()
    assert "BRisk- not computed" in rv.header
    assert "BRisk-" not in rv.display_frame().columns


def test_other_champion_without_roles(toy):
    from bayes_ir.table import ScoreTable

    plain = ScoreTable.from_frame(toy.data)
    rv = risk_review(plain, champion="good", challengers=["base"], n_resamples=500, bayes=False)
    assert rv.champion == "good"
    assert rv.to_frame()["system"].tolist() == ["good", "base"]


def test_sample_sd_reaches_the_review_and_is_printed(toy):
    from scipy import stats

    from bayes_ir.risk import risk_adjusted_differences

    rev = risk_review(toy, r=5, sd="sample", bayes=False, n_resamples=200, seed=1)
    frame = rev.to_frame()
    assert set(frame["trisk_sd"]) == {"sample"} and rev.sd == "sample"
    d = risk_adjusted_differences(toy, r=5)
    for row in frame.iloc[1:].itertuples():
        ref = stats.ttest_1samp(d.sel(system=row.system).values, 0.0)
        assert row.trisk_minus == pytest.approx(-ref.statistic, rel=1e-12)
        assert row.trisk_p == pytest.approx(ref.pvalue, rel=1e-10)
    for text in (rev.summary(), rev.to_markdown(), rev.to_latex()):
        assert "TRisk- uses the sample SD (divide by n - 1" in text
    default = risk_review(toy, r=5, bayes=False, n_resamples=200, seed=1)
    assert set(default.to_frame()["trisk_sd"]) == {"population"}
    assert "TRisk- uses the population SD (divide by n," in default.summary()
