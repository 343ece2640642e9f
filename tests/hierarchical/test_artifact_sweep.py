"""Artifact sweep: each m refits on the right systems and reports what compare() reports."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from synthetic_posterior import CALLS, fake_fit

import bayes_ir.hierarchical as hier
from bayes_ir.errors import DataWarning, InsufficientDataError, OptionError
from bayes_ir.hierarchical.artifact_sweep import SWEEP_COLUMNS, SYSTEM_COLUMNS, artifact_sweep
from bayes_ir.hierarchical.contrasts import compare
from bayes_ir.table import ScoreTable


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    n_art = 8
    systems = ["champ", "chal_x", "chal_y"] + [f"run{i}" for i in range(n_art)]
    effects = np.r_[0.0, 0.05, -0.01, np.linspace(0.1, -0.1, n_art)]
    scores = np.clip(0.4 + effects + rng.normal(0, 0.1, (25, len(systems))), 0, 1)
    t = ScoreTable.from_matrix(scores, systems=systems, measure="AP", collection="toy")
    return t.with_roles(champion="champ", challengers="chal_*")


@pytest.fixture
def patched(monkeypatch):
    CALLS.clear()
    monkeypatch.setattr(hier, "fit", fake_fit, raising=False)


def test_sweep_matches_compare_on_each_refit(table, patched):
    res = artifact_sweep(table, m_values=(0, 2, 8), seed=4, max_workers=1, draws=400)
    assert [len(c[0]) for c in CALLS] == [3, 5, 11]
    # the top m artifacts by mean score, as table.with_roles(top_m=m) selects them
    assert set(CALLS[1][0]) == set(table.with_roles(
        champion="champ", challengers="chal_*", top_m=2
    ).systems)  # fmt: skip
    assert all(c[1]["seed"] == 4 and c[1]["draws"] == 400 for c in CALLS)
    frame = res.to_frame()
    assert list(frame.columns) == list(SWEEP_COLUMNS)
    assert list(frame["m"]) == [0, 0, 2, 2, 8, 8]
    for m in (0, 2, 8):
        sub = table.select(systems=list(CALLS[[0, 2, 8].index(m)][0]))
        ref = compare(fake_fit(sub, seed=4, draws=400)).to_frame()
        got = frame[frame["m"] == m].reset_index(drop=True)
        for col in ("mean", "ci_lower", "ci_upper", "p_better"):
            assert np.allclose(got[col], ref[col], atol=1e-12), col
        assert np.allclose(got["width"], ref["ci_upper"] - ref["ci_lower"])
    systems = res.system_frame()
    assert list(systems.columns) == list(SYSTEM_COLUMNS)
    # gap = challenger lower limit minus champion upper limit, from the system frame
    s8 = systems[systems["m"] == 8].set_index("system")
    g = frame[(frame["m"] == 8) & (frame["challenger"] == "chal_x")]["gap"].iat[0]
    assert g == pytest.approx(s8.loc["chal_x", "ci_lower"] - s8.loc["champ", "ci_upper"])
    # the fake narrows with more systems: the interval width falls with m
    widths = frame[frame["challenger"] == "chal_x"]["width"].to_numpy()
    assert widths[0] > widths[-1]
    assert res.diagnostics_passed  # independent draws: ESS ~ 800 per contrast
    assert "Diagnostics: PASS" in res.summary()
    assert res.conf_int(ci_prob=0.5).shape == (6, 5)


def test_sweep_caps_m_and_validates(table, patched):
    with pytest.warns(DataWarning, match="only 8 artifact runs"):
        res = artifact_sweep(table, m_values=(5, 20, 40), max_workers=1, draws=200)
    assert res.m_values == (5, 8)
    with pytest.raises(InsufficientDataError):
        artifact_sweep(table, m_values=(), max_workers=1)
    no_chal = table.with_roles(champion="champ")
    with pytest.raises(InsufficientDataError):
        artifact_sweep(no_chal, m_values=(1,), max_workers=1)
    calls = len(CALLS)  # refused before any fit: the artifacts alone inform sigma_system
    with pytest.raises(OptionError, match=r"m_values \[0, 5\] include 0; start the sweep at m = 2"):
        artifact_sweep(table, m_values=(0, 5), max_workers=1, pooling="artifacts")
    assert len(CALLS) == calls


def test_rb04_sweep_with_the_real_model(rb04_table):
    """The paper's Figure 5 setting: Chal. 4's interval separates from the Champion's."""
    res = artifact_sweep(rb04_table, m_values=(0, 40), seed=3, max_workers=1, chains=2, draws=2000)
    assert res.m_values == (0, 40)
    assert res.diagnostics_passed
    frame = res.to_frame().set_index(["m", "challenger"])
    # the authors' check: Chal. 4's 2.5% quantile above the Champion's 97.5% quantile
    assert frame.loc[(40, "Chal. 4"), "gap"] > 0
    # Figure 5 plots rstanarm's effects: there Chal. 4 and the Champion overlap with no
    # artifacts and separate with 40 (the means are apart already at m = 0)
    paper = res.to_frame(effects="intercept_deviation").set_index(["m", "challenger"])["gap"]
    assert paper[(0, "Chal. 4")] < 0 < paper[(40, "Chal. 4")]
    assert frame.loc[(0, "Chal. 4"), "gap"] > 0
    from bayes_ir.hierarchical import fit

    sub = rb04_table.select(systems=["Champion", *rb04_table.challengers])
    direct = compare(fit(sub, chains=2, draws=2000, seed=3)).to_frame().set_index("challenger")
    assert frame.loc[(0, "Chal. 4"), "mean"] == pytest.approx(direct.loc["Chal. 4", "mean"])
    assert frame.loc[(0, "Chal. 4"), "ci_upper"] == pytest.approx(direct.loc["Chal. 4", "ci_upper"])


# ---------------------------------------------------------------- rstanarm's parametrisation
def _gaussian_posterior_cov(design: np.ndarray, prior_prec: np.ndarray, sigma: float) -> np.ndarray:
    """Posterior covariance of a Gaussian linear model with known error SD."""
    return np.linalg.inv(design.T @ design / sigma**2 + np.diag(prior_prec))


def test_intercept_deviation_is_the_iid_models_posterior():
    """With known variances both models are Gaussian: the shifted zero-sum draws must
    have the covariance of rstanarm's i.i.d. effects (flat intercept), computed directly."""
    from bayes_ir.hierarchical.artifact_sweep import _intercept_deviation

    n_t, n_s, sigma, tau, chi = 6, 5, 0.1, 0.2, 0.03
    topic = np.repeat(np.arange(n_t), n_s)
    system = np.tile(np.arange(n_s), n_t)
    t_dummies, s_dummies = np.eye(n_t)[topic], np.eye(n_s)[system]
    # rstanarm: y = alpha + a_t + b_s, b_s ~ N(0, chi^2) i.i.d., flat alpha
    iid = np.column_stack([np.ones(n_t * n_s), t_dummies, s_dummies])
    prec = np.r_[0.0, np.full(n_t, tau**-2), np.full(n_s, chi**-2)]
    cov_b = _gaussian_posterior_cov(iid, prec, sigma)[1 + n_t :, 1 + n_t :]

    # the package: zero-sum effects = orthonormal sum-zero basis with N(0, scale^2) weights
    def basis(n):
        q, _ = np.linalg.qr(np.eye(n) - 1.0 / n)
        return q[:, : n - 1]

    q_t, q_s = basis(n_t), basis(n_s)
    zs = np.column_stack([np.ones(n_t * n_s), t_dummies @ q_t, s_dummies @ q_s])
    prec_zs = np.r_[0.0, np.full(n_t - 1, tau**-2), np.full(n_s - 1, chi**-2)]
    cov_c = q_s @ _gaussian_posterior_cov(zs, prec_zs, sigma)[n_t:, n_t:] @ q_s.T
    rng = np.random.default_rng(11)
    n = 400_000
    c = rng.multivariate_normal(np.zeros(n_s), cov_c, size=(2, n // 2), method="eigh")
    b = _intercept_deviation(c, np.full((2, n // 2), chi), n_s, rng)
    got = np.cov(b.reshape(n, n_s).T)
    # Monte Carlo error of a covariance entry ~ var * sqrt(2 / n) ~ 0.2% of the variance
    np.testing.assert_allclose(got, cov_b, atol=0.01 * cov_b.diagonal().max())
    # the shift is what makes them differ: zero-sum effects have chi^2 / S less covariance
    np.testing.assert_allclose(cov_b - cov_c, np.full((n_s, n_s), chi**2 / n_s), rtol=1e-8)


def test_system_effect_draws_closed_relation(rb04_fit):
    from scipy import stats

    from bayes_ir.hierarchical.artifact_sweep import system_effect_draws

    c = system_effect_draws(rb04_fit, effects="zero_sum")
    b = system_effect_draws(rb04_fit, effects="intercept_deviation", seed=5)
    mean = system_effect_draws(rb04_fit, effects="mean")
    n_s = c.sizes["system"]
    # the model's effects are zero-sum (up to the float32 rounding of the exact sampler's draws)
    assert np.abs(c.sum("system")).max() < 1e-7
    shift = b.mean("system")
    np.testing.assert_allclose(b - shift, c, atol=1e-8)  # same effects, shifted per draw
    b0 = np.asarray(rb04_fit.posterior["posterior"]["b0"].values)[..., None]
    np.testing.assert_allclose((mean - c).values, np.broadcast_to(b0, c.shape), atol=1e-12)
    sd = rb04_fit.posterior["posterior"]["sigma_system"] / np.sqrt(n_s)
    z = (shift / sd).values.ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-3  # the shift is N(0, sigma_system^2 / S)
    again = system_effect_draws(rb04_fit, effects="intercept_deviation", seed=5)
    np.testing.assert_array_equal(again.values, b.values)  # reproducible from the seed
    with pytest.raises(OptionError, match="effects must be one of"):
        system_effect_draws(rb04_fit, effects="centred")


def _assert_like_lme4(b, ranef):
    post = b.mean(("chain", "draw")).to_series()
    ref = pd.Series({s: v[0] for s, v in ranef.items()})
    post = post.loc[ref.index]
    # lme4's conditional modes are the REML plug-in version of the posterior means
    np.testing.assert_allclose(post, ref, atol=0.002)
    big = ref.abs() > 0.005
    assert (np.sign(post[big]) == np.sign(ref[big])).all()
    assert post.rank().corr(ref.rank()) > 0.99


def test_rb04_intercept_deviations_agree_with_lme4(rb04_fit):
    from results.system_effects import RANEF

    from bayes_ir.hierarchical.artifact_sweep import system_effect_draws

    b = system_effect_draws(rb04_fit, effects="intercept_deviation")
    _assert_like_lme4(b, RANEF)
    # posterior SDs are near lme4's conditional SD (0.0109, given the REML variances);
    # the full posterior adds the variances' uncertainty, most for the extreme systems
    cond_sd = np.array([v[1] for v in RANEF.values()])
    post_sd = b.std(("chain", "draw")).to_series().loc[list(RANEF)].to_numpy()
    assert 0.95 < np.median(post_sd / cond_sd) < 1.15


def test_rb04_lme4_live(rb04_table, shared_data, rscript, tmp_path, rb04_fit):
    import subprocess

    from results import system_effects as ref

    from bayes_ir.hierarchical.artifact_sweep import system_effect_draws

    if subprocess.run([rscript, "-e", "quit(status = !requireNamespace('lme4'))"]).returncode:
        pytest.skip("R package lme4 is not installed")
    (tmp_path / "ranef.R").write_text(ref.R_SCRIPT)
    data = shared_data / "bayesian_risk" / "rb04_data.csv"
    out = tmp_path / "out.csv"
    subprocess.run([rscript, str(tmp_path / "ranef.R"), str(data), str(out)], check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    live = pd.read_csv(out).set_index("system")
    for system, (mode, sd) in ref.RANEF.items():
        assert live.loc[system, "ranef"] == pytest.approx(mode, rel=1e-6, abs=1e-9)
        assert live.loc[system, "cond_sd"] == pytest.approx(sd, rel=1e-6)
    ranef = {s: (row.ranef, row.cond_sd) for s, row in live.iterrows()}
    _assert_like_lme4(system_effect_draws(rb04_fit, effects="intercept_deviation"), ranef)


def test_sweep_effects_option(table, patched):
    res = artifact_sweep(table, m_values=(0, 8), seed=4, max_workers=1, draws=400)
    means = res.system_frame()
    zero_sum = res.system_frame(effects="zero_sum")
    dev = res.system_frame(effects="intercept_deviation")
    assert list(dev.columns) == list(SYSTEM_COLUMNS)
    assert res.system_frame(effects="mean").equals(means)
    # the shift is common to the systems of a draw: the intervals widen, the centres barely move
    assert (
        (dev["ci_upper"] - dev["ci_lower"]) > (zero_sum["ci_upper"] - zero_sum["ci_lower"])
    ).all()
    np.testing.assert_allclose(dev["mean"], zero_sum["mean"], atol=0.01)
    # differences do not depend on the parametrisation; the gap is on the chosen effects
    frame = res.to_frame(effects="intercept_deviation")
    np.testing.assert_allclose(frame["mean"], res.to_frame()["mean"])
    d8 = dev[dev["m"] == 8].set_index("system")
    g = frame[(frame["m"] == 8) & (frame["challenger"] == "chal_x")]["gap"].iat[0]
    assert g == pytest.approx(d8.loc["chal_x", "ci_lower"] - d8.loc["champ", "ci_upper"])
    assert res.system_frame(effects="intercept_deviation").equals(dev)  # seeded
    with pytest.raises(OptionError, match="effects must be one of"):
        res.system_frame(effects="centred")


@pytest.mark.parametrize(
    ("likelihood", "artifacts", "pooling"),
    [("bernoulli", 8, "all"), ("bernoulli", 1, "none"), ("gaussian", 1, "all")],
)
def test_auto_pooling_is_one_model_for_the_whole_sweep(table, patched, likelihood, artifacts,
                                                       pooling):  # fmt: skip
    """``pooling="auto"`` is decided once, on the full table: every refit uses the same model.

    Decided per refit, a logit family would be unpooled below m = 2 and pooled from there.
    """
    binary = ScoreTable.from_matrix(
        (table.wide().to_numpy() > 0.4).astype(float), systems=list(table.wide().columns),
        measure="accuracy",
    ).with_roles(champion="champ", challengers="chal_*")  # fmt: skip
    keep = ["champ", "chal_x", "chal_y", *[f"run{i}" for i in range(artifacts)]]
    binary = binary.select(systems=keep)
    artifact_sweep(binary, m_values=(0, 1), seed=1, likelihood=likelihood, max_workers=1)
    assert [options["pooling"] for _, options in CALLS] == [pooling, pooling]


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_unpooled_logit_fit_has_intercept_deviations():
    """No sigma_system: the i.i.d. deviations use the fixed prior scale of unpooled systems."""
    from bayes_ir.hierarchical.artifact_sweep import system_effect_draws
    from bayes_ir.hierarchical.families.logit import UNPOOLED_SD

    rng = np.random.default_rng(3)
    y = (rng.random((40, 3)) < [0.5, 0.6, 0.7]).astype(float)
    t = ScoreTable.from_matrix(y, systems=["a", "b", "c"], measure="accuracy")
    res = hier.fit(t.with_roles(champion="a", challengers=["b"]), likelihood="bernoulli",
                   pooling="none", chains=2, draws=300, seed=2, model_check=False)  # fmt: skip
    zero_sum = system_effect_draws(res, effects="zero_sum")
    iid = system_effect_draws(res, effects="intercept_deviation", seed=5)
    z = np.random.default_rng(5).standard_normal(zero_sum.shape[:2])
    expected = zero_sum.values + (UNPOOLED_SD / np.sqrt(3) * z)[..., None]
    np.testing.assert_allclose(iid.values, expected)
