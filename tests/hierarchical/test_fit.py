"""fit() and HierarchicalFit: structure, tables, summary, seeds, methods, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayes_ir.errors import BayesIRError, RoleError, ScoreTableError
from bayes_ir.hierarchical import HierarchicalFit, compare, fit
from bayes_ir.table import ScoreTable

SMALL = {"chains": 2, "draws": 300, "tune": 300}


@pytest.fixture(scope="module")
def toy() -> ScoreTable:
    rng = np.random.default_rng(1)
    y = 0.4 + rng.normal(0, 0.15, (15, 1)) + np.array([0.0, 0.06, -0.02, 0.03, -0.04, 0.01])
    y = np.clip(y + rng.normal(0, 0.05, (15, 6)), 0, 1)
    table = ScoreTable.from_matrix(
        y,
        systems=["bm25", "chal_a", "chal_b", "run1", "run2", "run3"],
        topics=[str(301 + i) for i in range(15)],
        measure="AP",
        collection="toy",
    )
    return table.with_roles(champion="bm25", challengers="chal_*")


@pytest.fixture(scope="module")
def toy_fit(toy) -> HierarchicalFit:
    return fit(toy, draws=1000, seed=5, log_likelihood=True)


def test_fit_structure(toy_fit, toy):
    f = toy_fit
    assert f.method == "exact" and f.likelihood == "gaussian"
    # no sample_stats: the exact sampler's draws are independent, with no NUTS statistics
    assert set(f.posterior.children) == {"posterior", "observed_data", "log_likelihood"}
    post = f.draws
    assert set(post.data_vars) == {
        "b0",
        "sigma",
        "sigma_topic",
        "sigma_system",
        "topic_effect",
        "system_effect",
    }
    assert post["system_effect"].dims == ("chain", "draw", "system")
    assert post["topic_effect"].dims == ("chain", "draw", "topic")
    assert list(post["system"].values) == list(toy.systems)
    assert list(post["role"].values) == ["champion", "challenger", "challenger"] + ["artifact"] * 3
    # float32 effects: zero-sum up to float32 rounding
    np.testing.assert_allclose(post["system_effect"].astype(float).sum("system"), 0, atol=1e-7)
    np.testing.assert_allclose(post["topic_effect"].astype(float).sum("topic"), 0, atol=1e-6)
    obs = f.posterior["observed_data"]["score"]
    np.testing.assert_array_equal(obs.values, toy.matrix().values)
    prov = f.provenance
    assert prov["champion"] == "bm25" and prov["challengers"] == ["chal_a", "chal_b"]
    assert prov["measure"] == "AP" and prov["collection"] == "toy" and prov["seed"] == 5
    assert len(prov["data_hash"]) == 64 and "pymc" in prov["versions"]


def test_to_frame_intervals_match_numpy(toy_fit):
    frame = toy_fit.to_frame(ci_prob=0.9)
    assert list(frame.columns) == [
        "system",
        "role",
        "quantity",
        "mean",
        "sd",
        "eti_lower",
        "eti_upper",
        "hdi_lower",
        "hdi_upper",
        "ci_prob",
    ]
    post = toy_fit.draws
    means = (post["b0"] + post["system_effect"]).sel(system="chal_a").values.ravel()
    row = frame[(frame.system == "chal_a") & (frame.quantity == "mean")].iloc[0]
    assert row["mean"] == pytest.approx(means.mean())
    assert row["eti_lower"] == pytest.approx(np.quantile(means, 0.05))
    assert row["eti_upper"] == pytest.approx(np.quantile(means, 0.95))
    # HDI: the shortest interval holding 90% of the sorted draws
    s = np.sort(means)
    k = int(np.floor(0.9 * s.size))
    widths = s[k:] - s[: s.size - k]
    assert row["hdi_upper"] - row["hdi_lower"] == pytest.approx(widths.min(), rel=0.02)
    ci = toy_fit.conf_int(ci_prob=0.9)
    assert list(ci.columns) == ["system", "role", "estimate", "ci_lower", "ci_upper"]
    topics = toy_fit.topic_effects()
    assert len(topics) == 15 and topics["mean"].sum() == pytest.approx(0, abs=1e-7)


def test_log_likelihood_is_pointwise_normal(toy_fit, toy):
    post = toy_fit.draws.isel(chain=0, draw=7)
    mu = float(post["b0"]) + post["topic_effect"].values[:, None].astype(float)
    mu = mu + post["system_effect"].values[None, :].astype(float)
    want = stats.norm.logpdf(toy.matrix().values, mu, float(post["sigma"]))
    got = toy_fit.posterior["log_likelihood"]["score"].isel(chain=0, draw=7).values
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_summary_layout(toy_fit):
    text = toy_fit.summary()
    assert text.startswith("Bayesian hierarchical model (likelihood: gaussian; sampler: exact)")
    assert "15 topics x 6 systems" in text
    for key in ("R-hat", "ESS", "Divergences", "BFMI", "sigma_system", "chal_a", "bm25"):
        assert key in text
    diagnostics, model_check = text.split("MODEL CHECK")  # the check follows the diagnostics
    # R-hat and ESS are checked; divergences and BFMI do not apply without a NUTS step
    assert diagnostics.count("PASS") + diagnostics.count("FAIL") == 2
    assert "Divergences (no NUTS step; need <= 0): n/a" in diagnostics
    assert "BFMI (no energy recorded; need >= 0.3): n/a" in diagnostics
    assert "flagged" in model_check.split("\n")[0]
    assert str(toy_fit) == text
    assert "HierarchicalFit(" in repr(toy_fit)


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_same_seed_same_numbers_exact(toy):
    a = fit(toy, seed=11, **SMALL)
    b = fit(toy, seed=11, **SMALL)
    c = fit(toy, seed=12, **SMALL)
    assert a.posterior["posterior"].identical(b.posterior["posterior"])
    assert not np.allclose(a.draws["b0"].values, c.draws["b0"].values)


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_missing_cells_use_gibbs_or_nuts_and_exact_refuses(toy):
    data = toy.data[~((toy.data.system == "run2") & (toy.data.topic == "303"))]
    gappy = ScoreTable.from_frame(data, missing="keep").with_roles(
        champion="bm25", challengers="chal_*"
    )
    with pytest.raises(BayesIRError, match="cells are missing: use method='gibbs' or 'nuts'"):
        fit(gappy, method="exact")
    assert fit(gappy, seed=3, draws=200).method == "gibbs"
    f = fit(gappy, method="nuts", sampler="pymc", seed=3, **SMALL)
    assert f.method == "nuts"
    assert np.isnan(f.posterior["observed_data"]["score"].values).sum() == 1
    g = fit(gappy, method="nuts", sampler="pymc", seed=3, **SMALL)
    assert f.posterior["posterior"].identical(g.posterior["posterior"])


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_skew_normal_fit_has_alpha(toy):
    with pytest.raises(BayesIRError, match="skew-normal"):
        fit(toy, likelihood="skew_normal", method="exact")
    # PyMC's own NUTS on this model (sampler="pymc") is checked against the kernel in the slow
    # tests of test_skewnormal_kernel.py: it compiles C code for a minute on a fresh machine
    f = fit(toy, likelihood="skew_normal", seed=2, **SMALL)
    assert f.method == "nuts" and f.likelihood == "skew_normal"
    assert "alpha" in f.draws and "alpha" in f.hyperparameters()["parameter"].tolist()
    assert "skew-normal shape" in f.summary()


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
@pytest.mark.parametrize("true_alpha", [-6.0, 6.0])
def test_skew_normal_recovers_the_sign_of_the_shape(true_alpha):
    """The sign, summed out while sampling and drawn afterwards, points the right way."""
    from bayes_ir.hierarchical.skewnormal import alpha_to_skewness, skewnormal_location_scale

    rng = np.random.default_rng(7)
    mu = 0.4 + rng.normal(0, 0.1, (30, 1)) + rng.normal(0, 0.03, (1, 5))
    xi, omega = skewnormal_location_scale(mu, 0.08, true_alpha)
    y = stats.skewnorm.rvs(true_alpha, loc=xi, scale=omega, random_state=rng)
    table = ScoreTable.from_matrix(y, systems=["a", "b", "c", "d", "e"], measure="sim")
    table = table.with_roles(champion="a", challengers=["b"])
    f = fit(table, likelihood="skew_normal", seed=4, **SMALL)
    skew = f.draws["skewness"].values
    # skewness of SN(alpha=6) is 0.78; the SE of a skewness from 150 cells is about
    # sqrt(6/150) = 0.2, so a few per cent of the posterior may lie on the wrong side
    assert np.sign(skew.mean()) == np.sign(true_alpha)
    assert (np.sign(skew) == np.sign(true_alpha)).mean() > 0.9
    # the errors' sample skewness is +-0.65-0.70 here: the posterior sees a clear skew
    assert abs(skew.mean()) > 0.3 and abs(skew.mean()) < alpha_to_skewness(abs(true_alpha))


def test_strict_mode_raises_and_default_warns(toy):
    from bayes_ir.errors import ConvergenceError, ConvergenceWarning

    with pytest.raises(ConvergenceError, match="ESS below 10000"):
        fit(toy, thresholds="paper", strict=True, **SMALL)
    with pytest.warns(ConvergenceWarning, match="sigma"):
        res = fit(toy, thresholds="paper", **SMALL)
    assert not res.diagnostics.passed and "FAIL" in res.summary()


def test_fit_without_roles_fits_every_system_alike(toy):
    # a leaderboard's table has no champion: the model is the same, no contrast is formed
    plain = ScoreTable.from_frame(toy.data)
    result = fit(plain, seed=3)
    with_roles = fit(toy, seed=3)
    assert set(result.draws["role"].values) == {""}
    assert "contrast" not in set(result.diagnostics.table["kind"])
    assert result.provenance["champion"] is None and result.provenance["challengers"] == []
    assert "no roles" in result.summary()
    means = result.system_mean_draws().mean(("chain", "draw"))
    other = with_roles.system_mean_draws().mean(("chain", "draw"))
    # the same model: the same posterior of every system, to Monte Carlo error (the roles
    # order the systems differently, so the draws differ)
    assert np.allclose(means.sel(system=other["system"].values), other, atol=1e-3)
    with pytest.raises(RoleError, match="no champion"):
        compare(result)


def test_fit_rejects_bad_input(toy):
    two = ScoreTable.from_frame(pd.concat([toy.data, toy.data.assign(collection="other")]))
    with pytest.raises(ScoreTableError, match="several collections"):
        fit(two.with_roles(champion="bm25", challengers="chal_*"))
    with pytest.raises(BayesIRError, match="method"):
        fit(toy, method="metropolis")
    with pytest.raises(BayesIRError, match="target_accept"):
        fit(toy, target_accept=1.5)
    with pytest.raises(BayesIRError, match="sampler"):
        fit(toy, method="nuts", sampler="stan")


def test_trace_and_rank_plots(toy_fit):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # the trace plot draws each chain of each hyperparameter as it was sampled (thinned),
    # its rank plot beside it: one row per hyperparameter, labelled with its name
    fig = toy_fit.plot_trace()
    traces = fig.axes[0::2]
    names = [ax.get_ylabel().split("\n")[0] for ax in traces]
    assert names == ["b0", "sigma", "sigma_topic", "sigma_system"]
    for ax, name in zip(traces, names, strict=True):
        chains = toy_fit.draws[name].transpose("chain", "draw").values
        lines = ax.get_lines()
        assert len(lines) == len(chains)
        step = int(lines[0].get_xdata()[1] - lines[0].get_xdata()[0])
        for line, chain in zip(lines, chains, strict=True):
            np.testing.assert_array_equal(line.get_ydata(), chain[::step])
    # the rank plot: each chain's bars count its draws
    for ax, name in zip(fig.axes[1::2], names, strict=True):
        n_chain, n_draw = toy_fit.draws[name].transpose("chain", "draw").shape
        heights = np.array([bar.get_height() for bar in ax.patches]).reshape(n_chain, -1)
        assert (heights.sum(axis=1) == n_draw).all()
    rank = toy_fit.plot_rank(var_names=["sigma", "b0"])
    assert sorted(ax.get_ylabel().split("\n")[0] for ax in rank.axes) == ["b0", "sigma"]
    plt.close("all")
    fig = toy_fit.plot()
    assert len(fig.axes) >= 2
    plt.close(fig)
