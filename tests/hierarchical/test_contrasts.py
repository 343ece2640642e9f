"""Contrasts, pairwise and rank probabilities: exact functionals of known posterior draws."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats
from synthetic_posterior import ROLES, SYSTEMS, FakeDiagnostics, make_posterior, synthetic_fit

from bayes_ir.errors import InsufficientDataError, OptionError, RoleError, UnknownSystemError
from bayes_ir.hierarchical import fit
from bayes_ir.hierarchical.contrasts import (
    COMPARISON_COLUMNS,
    MANY_VS_ONE_COLUMNS,
    compare,
    many_vs_one,
    pairwise_probabilities,
    pooling_of,
    rank_probabilities,
    system_mean_draws,
)
from bayes_ir.table import ScoreTable


def _flat(synth, name):
    return synth.raw["system"][..., SYSTEMS.index(name)].reshape(-1)


def test_compare_matches_numpy(synth):
    res = compare(synth, ci_prob=0.9, min_gain=0.01)
    frame = res.to_frame()
    assert list(frame.columns) == list(COMPARISON_COLUMNS)
    assert list(frame["challenger"]) == ["chal_a", "chal_b", "chal_c"]
    champ = _flat(synth, "bm25")
    for row in frame.itertuples():
        d = _flat(synth, row.challenger) - champ
        assert row.mean == pytest.approx(d.mean(), abs=1e-12)
        assert row.median == pytest.approx(np.median(d), abs=1e-12)
        assert row.sd == pytest.approx(d.std(ddof=1), abs=1e-12)
        assert row.ci_lower == pytest.approx(np.quantile(d, 0.05), abs=1e-12)
        assert row.ci_upper == pytest.approx(np.quantile(d, 0.95), abs=1e-12)
        assert row.p_better == pytest.approx((d > 0).mean(), abs=1e-12)
        assert row.p_gain == pytest.approx((d > 0.01).mean(), abs=1e-12)
    assert res.diagnostics_passed
    # the system means route (b0 + system) gives the same contrasts
    means = system_mean_draws(synth)
    d = (means.sel(system="chal_a") - means.sel(system="bm25")).values.reshape(-1)
    assert frame.loc[0, "mean"] == pytest.approx(d.mean(), abs=1e-12)


def test_compare_verdicts(synth):
    frame = compare(synth).to_frame().set_index("challenger")
    for _, row in frame.iterrows():
        if row.ci_lower > 0:
            assert row.verdict == "better"
        elif row.ci_upper < 0:
            assert row.verdict == "worse"
        else:
            assert row.verdict == "uncertain"
    assert frame.loc["chal_a", "verdict"] == "better"
    assert frame.loc["chal_c", "verdict"] == "worse"
    gain = compare(synth, min_gain=0.08).to_frame().set_index("challenger")
    # chal_b's interval lies inside the region of practical equivalence [-0.08, 0.08]
    assert -0.08 <= gain.loc["chal_b", "ci_lower"] < 0 < gain.loc["chal_b", "ci_upper"] <= 0.08
    assert gain.loc["chal_b", "verdict"] == "practically equivalent"
    assert gain.loc["chal_a", "verdict"] == "better; gain uncertain"
    assert compare(synth, min_gain=0.01).to_frame()["verdict"][0] == "worthwhile gain"


def test_compare_hdi_and_conf_int(synth):
    res = compare(synth, hdi=True, ci_prob=0.8)
    frame = res.to_frame()
    assert list(frame.columns[9:11]) == ["hdi_lower", "hdi_upper"]
    # draws are normal: the HDI of a symmetric unimodal distribution ~ the central interval
    assert np.allclose(frame["hdi_lower"], frame["ci_lower"], atol=4e-3)
    d = _flat(synth, "chal_b") - _flat(synth, "bm25")
    # HDI: the shortest interval holding 80% of the sorted draws (independent computation)
    s = np.sort(d)
    k = int(np.floor(0.8 * len(s)))
    widths = s[k:] - s[: len(s) - k]
    j = int(np.argmin(widths))
    assert frame.loc[1, "hdi_upper"] - frame.loc[1, "hdi_lower"] == pytest.approx(
        widths[j], rel=0.02
    )
    ci = res.conf_int(ci_prob=0.5, hdi=False)
    assert list(ci.columns) == ["challenger", "estimate", "ci_lower", "ci_upper"]
    assert ci.loc[1, "ci_lower"] == pytest.approx(np.quantile(d, 0.25), abs=1e-12)


def test_compare_overrides_and_errors(synth):
    res = compare(synth, champion="run1", challengers=["chal_a", "run2"])
    assert res.champion == "run1" and res.challengers == ("chal_a", "run2")
    with pytest.raises(UnknownSystemError, match="nope"):
        compare(synth, champion="nope")
    with pytest.raises(UnknownSystemError, match="chal_z"):
        compare(synth, challengers=["chal_z"])
    with pytest.raises(InsufficientDataError):
        compare(synth, challengers=["bm25"])
    with pytest.raises(ValueError):
        compare(synth, ci_prob=1.5)


def test_many_vs_one_matches_numpy(synth):
    res = many_vs_one(synth, challenger="chal_a", champions=["bm25", "run1", "run3"])
    frame = res.to_frame()
    assert list(frame.columns) == list(MANY_VS_ONE_COLUMNS)
    a = _flat(synth, "chal_a")
    diffs = np.stack([a - _flat(synth, c) for c in ["bm25", "run1", "run3"]])
    assert np.allclose(frame["mean"], diffs.mean(axis=1), atol=1e-12)
    assert np.allclose(frame["p_better"], (diffs > 0).mean(axis=1), atol=1e-12)
    assert res.p_better_than_all == pytest.approx((diffs > 0).all(axis=0).mean(), abs=1e-12)
    group = np.stack([_flat(synth, s) for s in ["chal_a", "bm25", "run1", "run3"]])
    best = np.bincount(group.argmax(axis=0), minlength=4) / group.shape[1]
    assert np.allclose(res.p_best.to_numpy(), best, atol=1e-12)
    assert res.p_best.sum() == pytest.approx(1.0)
    assert "better than all 3" in res.summary()
    with pytest.raises(UnknownSystemError):
        many_vs_one(synth, challenger="x", champions=["bm25"])
    with pytest.raises(InsufficientDataError):
        many_vs_one(synth, challenger="chal_a", champions=["chal_a"])


def test_pairwise_probabilities(synth):
    res = pairwise_probabilities(synth)
    mat = res.matrix
    assert list(mat.index) == ["bm25", "chal_a", "chal_b", "chal_c"]  # artifacts left out
    off = ~np.eye(len(mat), dtype=bool)
    assert np.allclose((mat + mat.T).to_numpy()[off], 1.0)
    assert np.isnan(np.diag(mat.to_numpy())).all()
    expected = (_flat(synth, "chal_a") > _flat(synth, "chal_c")).mean()
    assert mat.loc["chal_a", "chal_c"] == pytest.approx(expected, abs=1e-12)
    tidy = res.to_frame()
    assert list(tidy.columns) == ["system", "other", "p_greater"]
    assert len(tidy) == 4 * 3
    everyone = pairwise_probabilities(synth, systems=SYSTEMS)
    assert everyone.matrix.shape == (7, 7)


def test_rank_probabilities(synth):
    res = rank_probabilities(synth, systems=SYSTEMS)
    mat = res.matrix.to_numpy()
    assert np.allclose(mat.sum(axis=0), 1.0) and np.allclose(mat.sum(axis=1), 1.0)
    draws = np.stack([_flat(synth, s) for s in SYSTEMS])  # (system, sample)
    ranks = stats.rankdata(-draws, axis=0).astype(int)  # scipy: independent ranking
    for j in range(len(SYSTEMS)):
        expected = np.bincount(ranks[j] - 1, minlength=len(SYSTEMS)) / draws.shape[1]
        assert np.allclose(mat[j], expected, atol=1e-12)
    assert res.p_best.sum() == pytest.approx(1.0)
    assert res.expected_rank.loc["chal_a"] == pytest.approx(ranks[1].mean())
    assert list(res.to_frame().columns) == ["system", "rank", "probability"]
    many = many_vs_one(synth, challenger="chal_a", champions=[s for s in SYSTEMS if s != "chal_a"])
    assert np.allclose(many.p_best.reindex(SYSTEMS).to_numpy(), mat[:, 0], atol=1e-12)


def test_failed_fit_diagnostics_are_loud():
    bad = synthetic_fit(n_draw=300, diagnostics=FakeDiagnostics(False, ("R-hat 1.2 on b0",)))
    res = compare(bad)
    assert not res.diagnostics_passed
    text = res.summary()
    assert "DIAGNOSTICS FAILED" in text and "R-hat 1.2 on b0" in text
    assert all(v.startswith("UNRELIABLE") for v in res.to_frame()["verdict"])
    assert "DIAGNOSTICS FAILED" in pairwise_probabilities(bad).summary()
    assert "DIAGNOSTICS FAILED" in rank_probabilities(bad).summary()
    good = synthetic_fit(n_draw=300, diagnostics=FakeDiagnostics(True))
    assert compare(good).diagnostics_passed


def test_contrast_level_gate_catches_stuck_chains(synth):
    """A contrast whose chains disagree fails even when the fit says it passed."""
    raw = {k: v.copy() for k, v in synth.raw.items()}
    raw["system"][0, :, 1] += 0.2  # chain 0 of chal_a stuck elsewhere
    topics = [str(t) for t in synth.posterior["posterior"]["topic"].values]
    tree = make_posterior(raw, SYSTEMS, topics, ROLES)
    fit = type(synth)(tree, synth.table, diagnostics=FakeDiagnostics(True), raw=raw)
    res = compare(fit)
    assert not res.diagnostics_passed
    assert any("chal_a" in m for m in res.gate.messages)
    assert res.to_frame().set_index("challenger").loc["chal_a", "rhat"] > 1.01
    assert "DIAGNOSTICS FAILED" in str(res)


def test_summary_and_html_show_the_draws_functionals(synth):
    res = compare(synth, min_gain=0.01)
    text = res.summary()
    assert "Diagnostics: PASS" in text and "95% equal-tailed" in text
    assert "p_gain = P(difference > 0.01)" in text
    lines = {ln.split()[0]: ln.split() for ln in text.splitlines() if ln.startswith("chal_")}
    cells = re.findall(r"<tr>\s*(.*?)\s*</tr>", res._repr_html_(), flags=re.S)
    html = {row[0]: row for row in (re.findall(r"<td>(.*?)</td>", c) for c in cells)}
    assert list(lines) == list(html) == ["chal_a", "chal_b", "chal_c"]
    champ = _flat(synth, "bm25")
    scores = synth.table.wide()
    for name in lines:
        d = _flat(synth, name) - champ
        lo, hi = np.quantile(d, [0.025, 0.975])
        p_better, p_gain = (d > 0).mean(), (d > 0.01).mean()
        observed = float((scores[name] - scores["bm25"]).mean())
        # NaN when its Monte Carlo SE exceeds POOLED_SHARE_MCSE (chal_c, observed -0.007)
        mcse = d.std(ddof=1) / np.sqrt(res.diagnostics.loc[name, "ess_bulk"])
        share = 1 - d.mean() / observed if mcse / abs(observed) <= 0.05 else np.nan
        # summary: challenger, observed, mean, pooled_share, ci_lower, ci_upper, p_better,
        # p_gain (4, 2 and 3 decimals)
        assert lines[name][1:8] == [f"{v:.4f}" for v in (observed, d.mean())] + [
            f"{share:.2f}",
            *(f"{v:.4f}" for v in (lo, hi)),
            f"{p_better:.3f}",
            f"{p_gain:.3f}",
        ]
        # HTML: every column of to_frame(), numbers to 4 decimals
        want = [name, "bm25"] + [
            f"{v:.4f}"
            for v in (
                observed,
                d.mean(),
                share,
                np.median(d),
                d.std(ddof=1),
                lo,
                hi,
                p_better,
                0.01,
            )
        ]
        want[4] = "NaN" if np.isnan(share) else want[4]  # pandas' to_html writes NaN
        assert html[name][:11] == want and html[name][11] == f"{p_gain:.4f}"


def test_compare_on_bare_datatree(synth):
    res = compare(synth.posterior, champion="bm25")
    assert res.challengers == ("chal_a", "chal_b", "chal_c")
    no_roles = make_posterior(synth.raw, SYSTEMS, [str(i) for i in range(20)], [""] * 7)
    with pytest.raises(RoleError, match="champion"):
        compare(no_roles)
    assert compare(no_roles, champion="bm25", challengers=["run1"]).challengers == ("run1",)


# ---------------------------------------------------------------------- real fits
def test_compare_on_rb04_matches_rstanarm(rb04_fit):
    from rstanarm_check import assert_matches_rstanarm

    res = compare(rb04_fit)
    assert res.champion == "Champion"
    assert res.challengers == ("Chal. 1", "Chal. 2", "Chal. 3", "Chal. 4")
    assert res.diagnostics_passed
    row = res.to_frame().set_index("challenger").loc["Chal. 4"]
    assert row["verdict"] == "better"
    # the reported numbers are functionals of the engine's own contrast draws...
    engine = rb04_fit.contrast_draws().sel(challenger="Chal. 4")
    flat = engine.values.reshape(-1)
    assert row["mean"] == pytest.approx(flat.mean(), abs=1e-12)
    lo, hi = np.quantile(flat, [0.025, 0.975])
    assert row["ci_lower"] == pytest.approx(lo, abs=1e-12)
    assert row["ci_upper"] == pytest.approx(hi, abs=1e-12)
    # ...and those draws agree with rstanarm's (results/hierarchical.py)
    assert_matches_rstanarm(engine)


def test_rb04_pairs_and_ranks_are_coherent(rb04_fit):
    pairs = pairwise_probabilities(rb04_fit)
    ranks = rank_probabilities(rb04_fit)
    comp = compare(rb04_fit).to_frame().set_index("challenger")
    for chal in comp.index:
        assert pairs.matrix.loc[chal, "Champion"] == pytest.approx(comp.loc[chal, "p_better"])
    assert ranks.p_best.idxmax() == "Chal. 4"
    many = many_vs_one(
        rb04_fit, challenger="Chal. 4", champions=["Champion", "Chal. 1", "Chal. 2", "Chal. 3"]
    )
    assert many.p_best.to_dict() == pytest.approx(ranks.p_best.to_dict())
    assert many.p_better_than_all <= many.to_frame()["p_better"].min()


def test_compare_on_example_fit(example_fit):
    """The example data's contract: chal_fusion clearly better, chal_dense about equal."""
    frame = compare(example_fit, min_gain=0.01).to_frame().set_index("challenger")
    # the interval's reading; "unreliable: model misfit" when the model check flags it
    fusion = frame.loc["chal_fusion"]
    expected = "worthwhile gain" if fusion["fit"] == "ok" else "unreliable: model misfit"
    assert fusion["verdict"] == expected
    assert frame.loc["chal_dense", "ci_lower"] < 0 < frame.loc["chal_dense", "ci_upper"]
    assert "Diagnostics: PASS" in compare(example_fit).summary()


# ---------------------------------------------------------------------- verdict regions
_G = 0.01


@pytest.mark.parametrize(
    ("lower", "upper", "min_gain", "expected"),
    [
        (0.02, 0.05, _G, "worthwhile gain"),  # whole interval above g
        (0.005, 0.02, _G, "better; gain uncertain"),  # above 0, straddles g
        (_G, 0.02, _G, "better; gain uncertain"),  # lower limit exactly g
        (0.002, 0.008, _G, "better, but by less than min_gain"),  # issue 14: inside (0, g)
        (0.002, _G, _G, "better, but by less than min_gain"),  # upper limit exactly g
        (-0.004, 0.006, _G, "practically equivalent"),  # ROPE, straddling 0
        (0.0, 0.005, _G, "practically equivalent"),  # ROPE, touching 0
        (-_G, _G, _G, "practically equivalent"),  # the ROPE itself
        (-0.03, 0.006, _G, "no worthwhile gain"),  # may lose more than g, cannot gain g
        (-0.004, 0.03, _G, "no loss beyond min_gain"),  # may gain more than g, cannot lose g
        (-0.03, 0.03, _G, "uncertain"),  # both beyond the ROPE
        (-0.008, -0.002, _G, "worse, but by less than min_gain"),  # ROPE below 0
        (-0.02, -0.005, _G, "worse; loss uncertain"),  # below 0, straddles -g
        (-0.05, -0.02, _G, "worse by more than min_gain"),  # whole interval below -g
        (0.002, 0.008, 0.0, "better"),
        (-0.008, -0.002, 0.0, "worse"),
        (-0.004, 0.006, 0.0, "uncertain"),
        (0.002, 0.008, -0.01, "better"),  # a negative min_gain reads as 0
        (-0.004, 0.006, -0.01, "uncertain"),
    ],
)
def test_verdict_regions(lower, upper, min_gain, expected):
    from bayes_ir.decision.rules import interval_verdict as _verdict

    assert _verdict(lower, upper, min_gain) == expected


def test_verdict_covers_every_word_and_mirrors():
    """Every word is reachable; flipping the interval around 0 swaps better and worse."""
    from bayes_ir.decision.rules import VERDICTS
    from bayes_ir.decision.rules import interval_verdict as _verdict

    mirror = {
        "worthwhile gain": "worse by more than min_gain",
        "better; gain uncertain": "worse; loss uncertain",
        "better, but by less than min_gain": "worse, but by less than min_gain",
        "better": "worse",
        "no worthwhile gain": "no loss beyond min_gain",
        "practically equivalent": "practically equivalent",
        "uncertain": "uncertain",
    }
    mirror |= {v: k for k, v in mirror.items()}
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(4000):
        lo, hi = np.sort(rng.uniform(-0.05, 0.05, 2))
        g = float(rng.choice([0.0, 0.01, 0.02]))
        word = _verdict(lo, hi, g)
        seen.add(word)
        assert word in VERDICTS
        assert _verdict(-hi, -lo, g) == mirror[word]
    assert seen == set(VERDICTS)


# ---------------------------------------------------------------------- what the model did

NAMES = ["champ", "chal_a", "chal_b", *[f"run{i}" for i in range(5)]]
TOPICS = [f"t{i}" for i in range(20)]
SCORES = np.clip(
    0.3
    + np.random.default_rng(5).normal(0, 0.1, (20, 1))
    + np.random.default_rng(6).normal(0, 0.08, (20, 8))
    + np.array([0, 0.05, 0.1, 0, 0, 0.02, -0.02, 0.01]),
    0,
    1,
)


def test_observed_is_the_paired_mean_difference_and_the_pull_is_explained(rb04_fit, shared_data):
    """The issue's rb04 numbers: Chal. 4 - Champion +0.106 observed, +0.056 in the model."""
    import pandas as pd

    from bayes_ir.frequentist import paired_tests

    raw = pd.read_csv(shared_data / "bayesian_risk" / "rb04_data.csv")
    wide = raw.pivot(index="topic", columns="system", values="score")
    frame = compare(rb04_fit).to_frame().set_index("challenger")
    tests = paired_tests(rb04_fit.table).to_frame().query("test == 't'").set_index("challenger")
    for name in frame.index:
        d = (wide[name] - wide["Champion"]).dropna().to_numpy()
        assert frame.loc[name, "observed"] == pytest.approx(d.mean(), abs=1e-12)
        assert frame.loc[name, "observed"] == pytest.approx(tests.loc[name, "mean_difference"])
        share = 1 - frame.loc[name, "mean"] / frame.loc[name, "observed"]
        assert frame.loc[name, "pooled_share"] == pytest.approx(share, abs=1e-12)
    assert frame.loc["Chal. 4", "observed"] == pytest.approx(0.1061, abs=5e-5)
    assert frame.loc["Chal. 4", "mean"] == pytest.approx(0.056, abs=0.002)
    assert frame.loc["Chal. 1", "observed"] == pytest.approx(0.0491, abs=5e-5)
    assert frame.loc["Chal. 1", "mean"] == pytest.approx(0.026, abs=0.002)
    # complete table, Gaussian: every contrast is (1 - E[B]) x observed, B = se^2/(se^2 + chi^2)
    post = rb04_fit.draws
    se2 = post["sigma"].values.ravel() ** 2 / 50
    expected = np.mean(se2 / (se2 + post["sigma_system"].values.ravel() ** 2))
    mcse = frame["sd"] / np.sqrt(frame["ess_bulk"]) / frame["observed"].abs()
    assert ((frame["pooled_share"] - expected).abs() < 4 * mcse).all()
    pooling = pooling_of(rb04_fit)
    assert pooling.share == pytest.approx(expected, rel=1e-9)
    assert (pooling.pooling, pooling.n_pooled, pooling.n_artifacts) == ("all", 45, 40)
    assert 0.45 < pooling.share < 0.5  # the "50% pull" of the issue
    text = compare(rb04_fit).summary()
    assert "observed" in text and "Pooling 'all': the 45 system effects, the 40 artifact" in text
    assert "no artifact runs among them" in replace(pooling, n_artifacts=0).summary()
    assert f"about {expected:.0%} of the way to 0" in text


def test_the_way_out_of_pooling_is_offered_only_where_it_exists():
    from bayes_ir.hierarchical.contrasts import Pooling
    from bayes_ir.hierarchical.model import MIN_POOLED

    base = Pooling("all", 45, 40, 0.02, 0.01, 0.03, 0.015, 0.4, 0.95)
    assert (
        base.way_out()
        == "fit(..., pooling='artifacts') leaves the champion and challengers unpooled"
    )
    assert "(pooled_share); fit(..., pooling='artifacts') leaves" in base.summary()
    few = replace(base, n_pooled=2, n_artifacts=MIN_POOLED - 1)
    said = few.way_out(cli=True)
    assert said.startswith(f"--pooling artifacts needs at least {MIN_POOLED} artifact runs")
    assert f"this fit has {MIN_POOLED - 1}" in said and "leaves" not in said
    logit = replace(base, link="logit", n_artifacts=0)
    assert logit.way_out() == "fit(..., pooling='none') leaves every system unpooled"
    assert logit.way_out(cli=True) == "--pooling none leaves every system unpooled"
    assert "pooling='artifacts'" not in logit.summary()
    # what is offered is accepted: fit(pooling='artifacts') runs where it is named
    table = ScoreTable.from_matrix(SCORES, systems=NAMES, topics=TOPICS).with_roles(
        champion="champ", challengers=["chal_a"]
    )
    unpooled = fit(table, pooling="artifacts", seed=1, model_check=False)
    assert pooling_of(unpooled).pooling == "artifacts"
    # and pooling='none' where a logit family names it: no sigma_system, no pull
    binary = ScoreTable.from_matrix(
        (SCORES[:, :3] > np.median(SCORES)).astype(float), systems=NAMES[:3], topics=TOPICS
    ).with_roles(champion="champ", challengers=["chal_a"])
    none = fit(binary, likelihood="bernoulli", pooling="none", seed=1, draws=500, chains=2,
               model_check=False)  # fmt: skip
    said = pooling_of(none)
    assert (said.pooling, said.n_pooled, said.share, said.link) == ("none", 0, 0.0, "logit")
    assert np.isnan(said.sigma_system) and "sigma_system" not in none.draws
    assert said.summary().startswith("Pooling 'none': every system effect is unpooled")
    assert "the fixed prior N(0, 1.28^2) on the logit scale" in said.summary()  # pi / sqrt(6)
    assert "pooling 'none'" in none.summary() and "sigma_system " not in none.summary()
    with pytest.raises(OptionError, match="pooling='none' does not apply to the gaussian"):
        fit(table, pooling="none")
    with pytest.raises(OptionError, match="'artifacts' does not apply to the bernoulli"):
        fit(binary, likelihood="bernoulli", pooling="artifacts")


def test_pooled_share_is_nan_when_the_observed_difference_is_near_zero():
    from bayes_ir.hierarchical.contrasts import POOLED_SHARE_MCSE, _pooled_share

    share = _pooled_share(np.array([0.05, 0.0004, 0.001]), np.array([0.1, 0.001, 0.0]),
                          np.array([1e-4, 1e-4, 1e-4]))  # fmt: skip
    assert share[0] == pytest.approx(0.5)
    assert np.isnan(share[1]) and np.isnan(share[2])  # Monte Carlo SE 0.1 > 0.05; 0 observed
    assert POOLED_SHARE_MCSE == 0.05


def test_observed_uses_the_shared_topics_and_many_vs_one_reports_it():
    y = SCORES.copy()
    y[:5, 1] = np.nan  # chal_a lacks five topics
    table = ScoreTable.from_matrix(y, systems=NAMES, topics=TOPICS, missing="keep").with_roles(
        champion="champ", challengers=["chal_a", "chal_b"]
    )
    result = fit(table, draws=500, seed=1, model_check=False)
    frame = compare(result).to_frame().set_index("challenger")
    assert frame.loc["chal_a", "observed"] == pytest.approx(np.mean(y[5:, 1] - y[5:, 0]))
    assert frame.loc["chal_b", "observed"] == pytest.approx(np.mean(y[:, 2] - y[:, 0]))
    many = many_vs_one(result, challenger="chal_b", champions=["champ", "chal_a"]).to_frame()
    assert many["observed"].tolist() == pytest.approx(
        [np.mean(y[:, 2] - y[:, 0]), np.mean(y[5:, 2] - y[5:, 1])]
    )
    assert (
        "pooled_share" in many.columns
        and "Pooling 'all'"
        in many_vs_one(result, challenger="chal_b", champions=["champ"]).summary()
    )
