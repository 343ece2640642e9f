"""Posterior predictive checks (``check_model``): kernels against closed forms and scipy,
the flagging rule's false-alarm and detection rates on data simulated from the model,
and the example's risky challenger flagged wherever a decision is shown."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

from bayes_ir.errors import ModelCheckWarning
from bayes_ir.hierarchical import adequacy
from bayes_ir.hierarchical.adequacy import (
    CHECKS,
    MEASURED_RATES,
    MODEL_CHECK_COLUMNS,
    _cdf,
    _count_tails,
    check_model,
)
from bayes_ir.table import ScoreTable


def _tree(y, b0, topic, system, sigma, alpha=None, roles=None) -> xr.DataTree:
    """DataTree with one chain of the given draws (n,), (n, T), (n, S), sigma (n,) or (n, S)."""
    n, n_t = topic.shape
    n_s = system.shape[1]
    systems = ["champ"] + [f"s{j}" for j in range(1, n_s)]
    topics = [f"t{i}" for i in range(n_t)]
    roles = roles or ["champion"] + ["challenger"] * (n_s - 1)
    data = {
        "b0": (("chain", "draw"), b0[None]),
        "topic_effect": (("chain", "draw", "topic"), topic[None]),
        "system_effect": (("chain", "draw", "system"), system[None]),
        "sigma": (
            ("chain", "draw", "system") if sigma.ndim == 2 else ("chain", "draw"),
            sigma[None],
        ),
    }
    if alpha is not None:
        data["alpha"] = (("chain", "draw"), alpha[None])
    coords = {"chain": [0], "draw": np.arange(n), "topic": topics, "system": systems}
    post = xr.Dataset(data, coords=coords).assign_coords(role=("system", roles))
    obs = xr.Dataset(
        {"score": (("topic", "system"), y)},
        coords={"topic": topics, "system": systems, "role": ("system", roles)},
    )
    return xr.DataTree.from_dict({"posterior": post, "observed_data": obs})


def _fixed(y, mu_t, mu_s, sigma, n=2000, alpha=None):
    """A 'posterior' whose draws all equal one parameter value (the mixture is one law)."""
    n_t, n_s = y.shape
    a = None if alpha is None else np.full(n, alpha)
    sig = np.full(n, sigma) if np.ndim(sigma) == 0 else np.tile(sigma, (n, 1))
    return _tree(y, np.zeros(n), np.tile(mu_t, (n, 1)), np.tile(mu_s, (n, 1)), sig, alpha=a)


# ---------------------------------------------------------------------- kernels
def test_coverage_equals_normal_closed_form():
    """One fixed parameter value: inside the 95% interval iff |y - mu| <= 1.96 sigma."""
    rng = np.random.default_rng(1)
    n_t, n_s, sigma = 40, 4, 0.1
    mu_t, mu_s = rng.normal(0.3, 0.1, n_t), np.array([0.0, 0.02, -0.01, 0.05])
    mu = mu_t[:, None] + mu_s[None, :]
    y = mu + sigma * rng.standard_normal((n_t, n_s)) * np.array([1, 1, 1, 2.5])
    frame = check_model(_fixed(y, mu_t, mu_s, sigma), n_draws=500).to_frame()
    assert list(frame.columns) == list(MODEL_CHECK_COLUMNS)
    z = np.abs(y - mu) / sigma
    for q, col in ((0.95, "coverage_95"), (0.5, "coverage_50")):
        expected = (z <= stats.norm.ppf((1 + q) / 2)).mean(axis=0)
        assert np.allclose(frame[col], expected, atol=1e-12), col
    # the ppp-values of a fixed law: T(y_rep) has a known distribution
    m_obs = y.mean(axis=0)
    ppp_mean = stats.norm.sf(m_obs, loc=mu.mean(axis=0), scale=sigma / np.sqrt(n_t))
    assert np.allclose(frame["ppp_mean"], ppp_mean, atol=0.05)
    # SD of the residuals y - mu: (n_t - 1) s^2 / sigma^2 ~ chi2(n_t - 1) under the law
    resid_sd = (y - mu).std(axis=0, ddof=1)
    ppp_sd = stats.chi2.sf((n_t - 1) * resid_sd**2 / sigma**2, n_t - 1)
    assert np.allclose(frame["ppp_sd"], ppp_sd, atol=0.05)
    assert frame.loc[3, "flagged"] and "coverage_95" in frame.loc[3, "failed_checks"]


def test_skew_normal_cdf_is_scipys():
    from bayes_ir.hierarchical.skewnormal import skewnormal_location_scale

    rng = np.random.default_rng(2)
    y, mu = rng.normal(0.3, 0.2, 50), rng.normal(0.3, 0.2, 50)
    sigma, alpha = 0.1, np.array(-3.0)
    xi, omega = skewnormal_location_scale(mu, sigma, alpha)
    ref = stats.skewnorm.cdf(y, alpha, loc=xi, scale=omega)
    assert np.allclose(_cdf(y, mu, sigma, alpha), ref, atol=1e-10)


def test_skew_normal_replicates_match_the_law():
    """Replicates of a fixed skew-normal law: ppp of mean/SD/skewness near their scipy values."""
    rng = np.random.default_rng(3)
    n_t, alpha = 60, -4.0
    from bayes_ir.hierarchical.skewnormal import skewnormal_location_scale

    mu_t, mu_s = np.zeros(n_t), np.zeros(2)
    xi, omega = skewnormal_location_scale(0.0, 0.1, alpha)
    y = stats.skewnorm.rvs(alpha, loc=xi, scale=omega, size=(n_t, 2), random_state=rng)
    frame = check_model(_fixed(y, mu_t, mu_s, 0.1, alpha=alpha), n_draws=2000).to_frame()
    sims = stats.skewnorm.rvs(alpha, loc=xi, scale=omega, size=(20000, n_t, 2), random_state=4)
    for col, stat in (
        ("ppp_mean", lambda x: x.mean(axis=-2)),
        ("ppp_sd", lambda x: x.std(axis=-2, ddof=1)),
        ("ppp_skewness", lambda x: stats.skew(x, axis=-2)),
    ):
        ref = (stat(sims) >= stat(y)).mean(axis=0)
        assert np.allclose(frame[col], ref, atol=0.06), col
    assert np.allclose(frame["coverage_95"], 0.95, atol=0.1)


def test_skewness_score_is_scipys_skewtest():
    """The skewness check reads D'Agostino's z (scipy.stats.skewtest), per system size."""
    from bayes_ir.hierarchical.adequacy import _skewness_z

    rng = np.random.default_rng(6)
    for n in (8, 25, 50, 249):
        x = rng.gamma(2.0, size=(4, n))
        ref = stats.skewtest(x, axis=1).statistic
        assert np.allclose(_skewness_z(stats.skew(x, axis=1), n), ref, atol=1e-12)


def test_missing_cells_and_per_system_sigma():
    """NaN cells are left out; a per-system sigma (dim ``system``) broadcasts by system."""
    rng = np.random.default_rng(5)
    n_t, sig = 50, np.array([0.1, 0.1, 0.3])
    mu_t, mu_s = rng.normal(0.3, 0.15, n_t), np.zeros(3)
    y = mu_t[:, None] + sig * rng.standard_normal((n_t, 3))
    y[:10, 1] = np.nan
    shared = check_model(_fixed(y, mu_t, mu_s, 0.1), seed=1).to_frame()
    own = check_model(_fixed(y, mu_t, mu_s, sig), seed=1).to_frame()
    assert list(shared["n_topics"]) == [50, 40, 50]
    z = np.abs(y - mu_t[:, None]) / sig
    inside = np.nanmean(np.where(np.isnan(y), np.nan, z <= stats.norm.ppf(0.975)), axis=0)
    assert np.allclose(own["coverage_95"], inside, atol=1e-12)
    assert shared.loc[2, "flagged"] and not own.loc[2, "flagged"]
    # the same sigma given per system or per draw: the same check, number for number
    same = check_model(_fixed(y, mu_t, mu_s, np.full(3, 0.1)), seed=1).to_frame()
    pd.testing.assert_frame_equal(same, shared)


# ---------------------------------------------------------------------- the rule's rates
def _simulate_table(rng, n_t, n_s, ratio):
    """Scores from the Gaussian model itself (rb04-like scales); system s1's residual SD x ratio."""
    a, c = rng.normal(0, 0.19, n_t), rng.normal(0, 0.02, n_s)
    sd = np.full(n_s, 0.10)
    sd[1] *= ratio
    y = 0.3 + a[:, None] + c[None, :] + sd * rng.standard_normal((n_t, n_s))
    systems = ["champ"] + [f"s{j:02d}" for j in range(1, n_s)]
    topics = [f"t{i}" for i in range(n_t)]
    table = ScoreTable.from_matrix(
        y, systems=systems, topics=topics, measure="sim", collection="sim"
    )
    chal = systems[1 : min(n_s, 5)]
    return table.with_roles(
        champion="champ", challengers=chal, artifacts=systems[len(chal) + 1 :] or None
    )


def _rates(n_tables, n_t, n_s, ratio, seed):
    from bayes_ir.hierarchical import fit

    rng = np.random.default_rng(seed)
    flags = []
    for r in range(n_tables):
        table = _simulate_table(rng, n_t, n_s, ratio)
        f = fit(table, chains=2, draws=500, tune=200, seed=seed + r, model_check=False)
        flags.append(check_model(f, seed=r).to_frame()["flagged"].to_numpy())
    flags = np.array(flags)  # tables x systems
    others = np.delete(flags, 1, axis=1) if ratio != 1 else flags
    return {
        "system": others.mean(),
        "table": others.any(axis=1).mean(),
        "detect": flags[:, 1].mean(),
        "n_sys": others.size,
        "n_tab": len(flags),
    }


def _upper(key: str) -> float:
    """99.9% Clopper-Pearson upper limit of a rate of the calibration study."""
    k, n = MEASURED_RATES[key]
    return float(stats.beta.ppf(0.999, k + 1, n - k))


def _lower(key: str) -> float:
    """99.9% Clopper-Pearson lower limit of a rate of the calibration study."""
    k, n = MEASURED_RATES[key]
    return float(stats.beta.ppf(0.001, k, n - k + 1)) if k > 0 else 0.0


def _not_above(rate: float, n: int, bound: float) -> bool:
    """An observed ``rate`` of ``n`` trials is compatible with a true rate <= ``bound``."""
    return stats.binom.sf(round(rate * n) - 1, n, bound) > 1e-3


def _not_below(rate: float, n: int, bound: float) -> bool:
    """An observed ``rate`` of ``n`` trials is compatible with a true rate >= ``bound``."""
    return stats.binom.cdf(round(rate * n), n, bound) > 1e-3


def test_rule_rates_modest():
    """Default suite: 10 tables of 25 topics x 10 systems from the model, 10 with a 3x system.

    The rates are those of the module docstring (MEASURED_RATES), with the Monte Carlo
    error of both studies: the study's 99.9% limit, then a 0.001-level binomial test.
    """
    null = _rates(10, 25, 10, 1.0, seed=101)
    fa = _upper("false_alarm_system_T25_S10")
    assert _not_above(null["system"], null["n_sys"], fa)
    bad = _rates(10, 25, 10, 3.0, seed=202)
    assert _not_below(bad["detect"], bad["n_tab"], _lower("detect_3x_T25_S10"))
    assert _not_above(bad["system"], bad["n_sys"], fa)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n_t", "n_s", "ratio", "size"),
    [(50, 45, 1.0, "T50_S45"), (50, 45, 2.0, "T50_S45"), (25, 10, 2.0, "T25_S10")],
)
def test_rule_rates_calibration(n_t, n_s, ratio, size):
    """The docstring's rates, re-measured on 40 fresh tables, within Monte Carlo error."""
    res = _rates(40, n_t, n_s, ratio, seed=303 + int(10 * ratio) + n_t)
    assert _not_above(res["system"], res["n_sys"], _upper(f"false_alarm_system_{size}"))
    if ratio == 1.0:
        assert _not_above(res["table"], res["n_tab"], _upper(f"false_alarm_table_{size}"))
    else:
        assert _not_below(res["detect"], res["n_tab"], _lower(f"detect_2x_{size}"))


# ---------------------------------------------------------------------- the example
def test_example_risky_challenger_is_flagged_everywhere(example_fit):
    check = example_fit.model_check
    assert "chal_risky" in check.flagged
    row = check.to_frame().set_index("system").loc["chal_risky"]
    assert row["coverage_95"] == pytest.approx(0.64, abs=0.03)  # the 64%
    assert "coverage_95" in check.failed("chal_risky")
    assert set(check.failed("chal_risky")) <= set(CHECKS)
    assert "MODEL CHECK" in example_fit.summary()
    text = example_fit.summary()
    assert text.index("MODEL CHECK") > text.index("Diagnostics")
    from bayes_ir.hierarchical import compare

    frame = compare(example_fit).to_frame().set_index("challenger")
    # not "MODEL MISFIT: better", which reads as "better": the interval is not read at all
    assert frame.loc["chal_risky", "verdict"] == "unreliable: model misfit"
    assert "coverage_95" in frame.loc["chal_risky", "fit"]
    for name, row in frame.iterrows():  # the champion passed: "ok" exactly when not flagged
        near = name in check.borderline
        assert (row["fit"] == "ok") == (name not in check.flagged and not near), name
        assert row["fit"].startswith("borderline: ") == near, name
        assert (row["verdict"] == "unreliable: model misfit") == (name in check.flagged), name


def test_fit_warns_once_per_flagged_system(example_table):
    from bayes_ir.hierarchical import fit

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fit(example_table, chains=2, draws=1000, seed=5)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ModelCheckWarning)]
    frame = result.model_check.to_frame()
    said = frame[(frame["flagged"] | frame["borderline"]) & (frame["role"] != "artifact")]
    assert len(msgs) == len(said) and any("chal_risky" in m for m in msgs)
    for name in said.loc[~said["flagged"], "system"]:  # said as borderline, not as a misfit
        assert any(f"the model check of {name} is borderline" in m for m in msgs)
    risky = next(m for m in msgs if "chal_risky" in m)
    assert "likelihood='skew_normal'" in risky and "95%" in risky
    quiet = fit(example_table, chains=2, draws=1000, seed=5, model_check=False)
    assert quiet.model_check is None


def test_check_is_reproducible_and_survives_save_load(example_fit, tmp_path):
    from bayes_ir.hierarchical import HierarchicalFit

    again = check_model(example_fit, seed=example_fit.provenance["seed"])
    pd.testing.assert_frame_equal(again.to_frame(), example_fit.model_check.to_frame())
    bare = check_model(example_fit.posterior, seed=example_fit.provenance["seed"])  # a DataTree
    pd.testing.assert_frame_equal(bare.to_frame(), again.to_frame())
    loaded = HierarchicalFit.load(example_fit.save(tmp_path / "fit.nc"))
    pd.testing.assert_frame_equal(loaded.model_check.to_frame(), example_fit.model_check.to_frame())


def test_check_does_not_depend_on_the_threads(example_fit, monkeypatch):
    """Blocks of systems run on threads, each with its own seeded generator."""
    from bayes_ir import defaults

    seed = example_fit.provenance["seed"]
    monkeypatch.setattr(adequacy, "_BLOCK", 20_000)  # many blocks of few systems
    on_two = check_model(example_fit, seed=seed).to_frame()
    monkeypatch.setattr(defaults, "COMPUTE_THREADS", 1)
    on_one = check_model(example_fit, seed=seed).to_frame()
    pd.testing.assert_frame_equal(on_one, on_two)
    monkeypatch.setattr(defaults, "COMPUTE_THREADS", 3)
    pd.testing.assert_frame_equal(check_model(example_fit, seed=seed).to_frame(), on_two)


def test_threads_hold_two_blocks_not_every_replicate(monkeypatch):
    """The threaded check keeps at most the blocks in flight (memory, traced exactly)."""
    import tracemalloc

    from bayes_ir import defaults
    from bayes_ir.hierarchical import fit

    rng = np.random.default_rng(8)
    y = 0.3 + rng.normal(0, 0.2, (400, 1)) + rng.normal(0, 0.1, (400, 120))
    table = ScoreTable.from_matrix(y, measure="sim").with_roles(champion="0", challengers=["1"])
    fitted = fit(table, draws=1000, chains=2, seed=1, model_check=False)
    monkeypatch.setattr(adequacy, "_BLOCK", 200_000)  # many blocks
    peaks = {}
    for threads in (1, 2):
        monkeypatch.setattr(defaults, "COMPUTE_THREADS", threads)
        tracemalloc.start()
        check_model(fitted, n_draws=300)
        peaks[threads] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks[2] < 2.5 * peaks[1], peaks


# ---------------------------------------------------------------------- subsets
@pytest.mark.parametrize(("n_t", "n_s", "ratio"), [(25, 10, 3.0), (50, 45, 1.0), (50, 45, 3.0)])
def test_a_subset_check_flags_what_the_full_check_flags(n_t, n_s, ratio):
    """On the calibration study's designs, checking some systems flags exactly those of
    them the full check flags (each system's checks use its own scores and replicates)."""
    from bayes_ir.hierarchical import fit

    rng = np.random.default_rng(77 + n_s)
    for r in range(3):
        table = _simulate_table(rng, n_t, n_s, ratio)
        f = fit(table, chains=2, draws=500, seed=r, model_check=False)
        full = check_model(f, seed=r).to_frame().set_index("system")
        names = list(full.index)
        subset = names[:5] + names[5:][::3]
        part = check_model(f, seed=r, systems=subset).to_frame().set_index("system")
        assert list(part.index) == subset
        pd.testing.assert_series_equal(part["flagged"], full.loc[subset, "flagged"])
        if ratio == 3.0:
            assert part.loc["s01", "flagged"]


def test_a_large_table_checks_a_seeded_subset_of_artifacts(monkeypatch):
    from bayes_ir.hierarchical import adequacy, fit

    table = _simulate_table(np.random.default_rng(5), 20, 30, 1.0)
    f = fit(table, chains=2, draws=300, seed=1, model_check=False)
    monkeypatch.setattr(adequacy, "MAX_REPLICATES", 100 * 20 * 12)  # 12 of 30 systems
    check = check_model(f, seed=3)
    frame = check.to_frame()
    assert len(frame) == 12 and check.n_unchecked == 18 and check.n_draws == 100
    assert set(frame.loc[frame["role"] != "artifact", "system"]) == {
        "champ", "s01", "s02", "s03", "s04"}  # fmt: skip
    assert list(frame["system"]) == [s for s in table.systems if s in set(frame["system"])]
    assert check_model(f, seed=3).to_frame().equals(frame)  # seeded
    assert "18 artifact runs not checked" in check.summary()


# ---------------------------------------------------------------------- Monte Carlo error
@pytest.mark.parametrize("law", ["normal", "skewed"])
def test_ppp_monte_carlo_se_matches_the_spread_over_replications(law):
    """The delta-method SE of z = mean(D)/sd(D) against 2,000 independent estimates of z."""
    from bayes_ir.hierarchical.adequacy import _ppp

    rng = np.random.default_rng(7)
    n, reps = 1000, 2000
    if law == "normal":  # a tail near the cut-off: z about -3.7
        d = rng.normal(-3.7, 1.0, (reps, n))
    else:  # D skewed (a gamma shifted to mean -3.7 x its SD 1.41)
        d = rng.gamma(1.0, 1.41, (reps, n)) - 1.41 - 3.7 * 1.41
    z, se = _ppp(d.T, np.zeros(reps), n)
    assert z.std() == pytest.approx(np.mean(se), rel=0.08)
    if law == "normal":  # closed form sqrt((1 + z^2/2)/n)
        assert np.mean(se) == pytest.approx(np.sqrt((1 + 3.7**2 / 2) / n), rel=0.03)


def test_effective_draws_is_the_subset_for_independent_draws():
    from bayes_ir.hierarchical.adequacy import _effective_draws

    rng = np.random.default_rng(3)
    post = xr.Dataset(
        {"sigma": (("chain", "draw"), rng.normal(size=(4, 2500)))},
        coords={"chain": np.arange(4), "draw": np.arange(2500)},
    )
    assert _effective_draws(post, 1000) == pytest.approx(1000, rel=0.05)
    assert _effective_draws(post, 10_000) == pytest.approx(10_000, rel=0.05)  # all draws
    ar = np.zeros((4, 2500))  # AR(1) with rho 0.8: ESS about N (1 - rho) / (1 + rho)
    for t in range(1, 2500):
        ar[:, t] = 0.8 * ar[:, t - 1] + rng.normal(size=4)
    slow = post.assign(sigma=(("chain", "draw"), ar))
    ess = 10_000 * 0.2 / 1.8
    expected = 1 / ((1 - 1000 / 10_000) / 1000 + 1 / ess)
    assert _effective_draws(slow, 1000) == pytest.approx(expected, rel=0.2)


def test_borderline_band_straddles_the_cut_off():
    """z 1 SE above, 1 below, 4 below the cut-off; coverage cells on the edge of the interval."""
    from scipy import special

    from bayes_ir.hierarchical.adequacy import BORDERLINE_Z, _classify

    z_cut, se = float(special.ndtri(1e-4)), 0.05
    z = np.array([z_cut + se, z_cut - se, z_cut - 4 * se, z_cut + 4 * se])
    pit = np.full((4, 40), 0.5)
    pit[3, :8] = 0.02  # 8 of 40 outside the 95% interval: binomial tail 7.1e-4 (passes) ...
    pit[3, 8:12] = 0.026  # ... or 12 of 40 (tail 3.7e-7) if these 4 cells are outside
    res = {
        "n": np.full(4, 40),
        "pit": pit,
        "pit_se": np.full((4, 40), 0.001),
        **{f"z_{s}": np.zeros(4) for s in ("mean", "lost")},
        **{f"se_{s}": np.full(4, se) for s in ("mean", "sd", "skewness", "lost")},
        "z_sd": z,
        "z_skewness": -z,  # two-sided: the upper tail mirrors the lower
    }
    failed, borderline = _classify(res, 1e-4, 1e-4, BORDERLINE_Z)
    assert failed == [(), (), ("sd", "skewness"), ()]
    assert borderline == [("sd", "skewness"), ("sd", "skewness"), (), ("coverage_95",)]
    res["pit_se"][:] = 0.0  # settled: the 4 cells at 0.026 are inside
    assert _classify(res, 1e-4, 1e-4, BORDERLINE_Z)[1][3] == ()


def test_readme_example_marks_chal_fusion_borderline_with_its_cut_off(example_table):
    """The issue's flip: chal_fusion's skewness p-value is about 1.1e-4 against 1e-4."""
    from bayes_ir.decision import decide
    from bayes_ir.hierarchical import fit

    table = example_table.with_roles(champion="bm25", challengers="chal_*", drop_bottom=0.25)
    result = fit(table, seed=7)
    check = result.model_check
    row = check.to_frame().set_index("system").loc["chal_fusion"]
    assert "chal_fusion" in check.borderline and "chal_fusion" not in check.flagged
    assert check.borderline_of("chal_fusion") == ("skewness",)
    assert row["n_draws"] == result.n_draws > check.n_draws  # checked again on every draw
    assert 9e-5 < row["ppp_skewness"] < 1.4e-4 and 0 < row["ppp_skewness_mcse"] < 2e-5
    assert "chal_risky" in check.flagged  # generated with a too-high SD: always flagged
    text, p = check.summary(), f"{row['ppp_skewness']:.1e}"
    assert "borderline: skewness" in text and p in text and "< 1e-04" in text
    assert f"p = {p} (cut-off 1e-04; Monte Carlo SE" in check.borderline_message("chal_fusion")
    decision = decide(result, margin=0.01)
    assert decision.actions["chal_fusion"] == "deploy" and decision.borderline == ("chal_fusion",)
    reason = decision.to_frame().set_index("challenger").loc["chal_fusion", "reason"]
    assert f"model check borderline (chal_fusion skewness p = {p} (cut-off 1e-04" in reason
    assert "the decision stands" in reason


def test_count_tails_equal_the_binomial_and_a_direct_convolution():
    """The Poisson-binomial tails of a count of cells (exact recursion, with the flip)."""
    rng = np.random.default_rng(0)
    # equal probabilities per draw: the count is binomial
    p = rng.uniform(0.05, 0.6, (7, 3))
    prob = np.repeat(p[..., None], 40, axis=-1)
    k = np.array([3.0, 25.0, 0.0])  # the second above half the cells: flipped
    below, above = _count_tails(prob, k)
    np.testing.assert_allclose(below, stats.binom.cdf(k, 40, p).mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(above, stats.binom.sf(k - 1, 40, p).mean(axis=0), rtol=1e-12)
    # unequal probabilities, a missing cell (probability 0): the mass by convolution
    prob = rng.uniform(0, 0.5, (5, 2, 12))
    prob[:, 1, 4] = 0.0
    k = np.array([2.0, 9.0])
    below, above = _count_tails(prob, k)
    for s in range(2):
        pmf = np.zeros((5, 13))
        for i in range(5):
            f = np.array([1.0])
            for q in prob[i, s]:
                f = np.convolve(f, [1 - q, q])
            pmf[i] = f
        cum = np.cumsum(pmf, axis=1)
        j = int(k[s])
        assert below[s] == pytest.approx(cum[:, j].mean(), rel=1e-12)
        assert above[s] == pytest.approx(1 - cum[:, j - 1].mean(), rel=1e-12, abs=1e-14)
