"""Every fit works with the ArviZ functions a user reaches for (issue 16).

``fit.posterior`` with ``summary``, ``ess``, ``rhat``, ``plot_trace`` and ``plot_forest``;
``fit.to_arviz()`` (log-likelihood and posterior predictive added) with ``loo``,
``compare`` and ``plot_ppc_dist`` (ArviZ 1.x's ``plot_ppc``). The numbers are checked
against numpy/scipy recomputations from the same draws.
"""

from __future__ import annotations

import warnings

import arviz_stats as azs
import numpy as np
import pytest
import xarray as xr
from scipy import stats

from bayes_ir.errors import ConvergenceWarning, ModelCheckWarning
from bayes_ir.hierarchical import HierarchicalFit, fit
from bayes_ir.hierarchical.likelihoods import loo

HYPER = ["b0", "sigma", "sigma_topic", "sigma_system"]


def _quiet_fit(table, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelCheckWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit(table, seed=5, **options)


@pytest.fixture(scope="module")
def exact(example_table):
    """The example data (50 topics x 45 systems), exact sampler, 2 x 500 draws."""
    return _quiet_fit(example_table, chains=2, draws=500)


@pytest.fixture(scope="module")
def skew(example_table):
    """The example data, skew-normal likelihood (nutpie on the kernel), short chains."""
    return _quiet_fit(example_table, likelihood="skew_normal", chains=2, draws=200, tune=200)


@pytest.fixture(scope="module")
def by_system(example_table):
    """Eight systems of the example data, one residual SD per system (NUTS)."""
    systems = ["bm25", "chal_dense", "chal_fusion", "chal_rerank", "chal_risky"]
    systems += [s for s in example_table.systems if s.startswith("trec_")][:3]
    table = example_table.select(systems=systems)
    return _quiet_fit(table, sigma="system", chains=2, draws=200, tune=300)


def _flat(da: xr.DataArray, *dims: str) -> np.ndarray:
    x = da.transpose("chain", "draw", *dims).values.astype(float)  # float32 effects: exact sums
    return x.reshape(x.shape[0] * x.shape[1], -1)


def _check_summary(f):
    frame = azs.summary(f.posterior, round_to="none")
    effect = _flat(f.posterior["posterior"]["system_effect"], "system")
    systems = list(f.posterior["posterior"]["system"].values)
    rows = [f"system_effect[{s}]" for s in systems]
    # the exact sampler's effects are float32, which ArviZ averages in float32
    rtol = 1e-6 if f.method == "exact" else 1e-12
    np.testing.assert_allclose(frame.loc[rows, "mean"], effect.mean(axis=0), rtol=rtol)
    np.testing.assert_allclose(frame.loc[rows, "sd"], effect.std(axis=0, ddof=1), rtol=1e-6)
    assert {"b0", "sigma_topic", "sigma_system"} <= set(frame.index)


def test_summary_of_the_exact_fit_and_its_reload_matches_numpy(exact, tmp_path):
    _check_summary(exact)
    _check_summary(HierarchicalFit.load(exact.save(tmp_path / "f.nc")))


@pytest.mark.slow
def test_summary_of_nuts_fits_matches_numpy(skew, by_system):
    _check_summary(skew)
    _check_summary(by_system)
    assert "alpha" in azs.summary(skew.posterior, round_to="none").index
    sigma_rows = azs.summary(by_system.posterior, var_names=["sigma"], round_to="none").index
    assert len(sigma_rows) == by_system.n_systems


def test_summary_of_the_saved_file_opened_by_xarray(exact, tmp_path):
    """A saved fit opened without bayes_ir (the file a colleague receives) summarises too."""
    path = exact.save(tmp_path / "f.nc")
    with xr.open_datatree(path, engine="h5netcdf") as tree:
        frame = azs.summary(tree, var_names=["sigma", "sigma_topic"], round_to="none")
    expected = exact.posterior["posterior"]["sigma"].values.mean()
    assert frame.loc["sigma", "mean"] == pytest.approx(expected, rel=1e-12)


def test_ess_and_rhat_of_independent_draws(exact):
    """The exact sampler's draws are independent: ESS near their number, R-hat near 1."""
    n = exact.n_draws
    ess = azs.ess(exact.posterior, var_names=HYPER).to_dataset()
    rhat = azs.rhat(exact.posterior, var_names=HYPER).to_dataset()
    for name in HYPER:
        assert 0.75 * n < float(ess[name]) < 1.3 * n
        assert abs(float(rhat[name]) - 1) < 0.01
    ess_u = azs.ess(exact.posterior, var_names=["system_effect"])["system_effect"]
    assert ess_u.sizes["system"] == exact.n_systems and float(ess_u.min()) > 0.75 * n


def test_roles_are_kept_where_the_package_reads_them(exact):
    """Roles sit once on observed_data; the fit's draws still carry them on ``system``."""
    tree = exact.posterior
    assert "role" not in tree["posterior"].coords
    assert list(tree["observed_data"]["role"].values) == list(exact.table.matrix()["role"].values)
    roles = dict(zip(exact.draws["system"].values, exact.draws["role"].values, strict=True))
    assert roles["bm25"] == "champion" and roles["chal_risky"] == "challenger"
    assert list(exact.contrast_draws()["challenger"].values) == list(exact.table.challengers)


def test_plot_trace_and_forest(exact):
    import arviz_plots as azp
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    trace = azp.plot_trace(exact.posterior, var_names=HYPER, backend="matplotlib")
    assert set(trace.viz["trace"].data_vars) == set(HYPER)
    forest = azp.plot_forest(exact.posterior, var_names=["system_effect"], backend="matplotlib")
    points = forest.viz["point_estimate"]["system_effect"]  # one row per system and chain
    assert list(points["system"].values) == list(exact.table.matrix()["system"].values)
    plt.close("all")


def _log_lik_reference(f, tree) -> np.ndarray:
    """Pointwise log-likelihood recomputed with scipy from the thinned draws (draws x obs)."""
    post = tree["posterior"].to_dataset()
    topics = list(post["topic"].values)
    systems = list(post["system"].values)
    obs = tree["observed_data"].to_dataset()
    t = [topics.index(x) for x in obs["topic"].values]
    s = [systems.index(x) for x in obs["system"].values]
    mu = (
        _flat(post["b0"])
        + _flat(post["topic_effect"], "topic")[:, t]
        + _flat(post["system_effect"], "system")[:, s]
    )
    sigma = post["sigma"]
    sd = _flat(sigma, "system")[:, s] if "system" in sigma.dims else _flat(sigma)
    y = obs["score"].values[None, :]
    if f.likelihood == "gaussian":
        return stats.norm.logpdf(y, mu, sd)
    alpha = _flat(post["alpha"])
    delta = alpha / np.sqrt(1 + alpha**2)
    omega = sd / np.sqrt(1 - 2 * delta**2 / np.pi)
    xi = mu - omega * delta * np.sqrt(2 / np.pi)
    return stats.skewnorm.logpdf(y, alpha, loc=xi, scale=omega)


@pytest.mark.parametrize(
    "name",
    [
        "exact",
        pytest.param("skew", marks=pytest.mark.slow),
        pytest.param("by_system", marks=pytest.mark.slow),
    ],
)
def test_to_arviz_log_likelihood_and_predictive(name, request):
    f = request.getfixturevalue(name)
    tree = f.to_arviz(draws=200, seed=3)
    n_cells = int(np.isfinite(f.table.matrix().values).sum())
    for group in ("observed_data", "log_likelihood", "posterior_predictive"):
        assert tree[group]["score"].sizes["obs"] == n_cells
    ll = _flat(tree["log_likelihood"]["score"], "obs")
    np.testing.assert_allclose(ll, _log_lik_reference(f, tree), rtol=1e-9, atol=1e-12)
    # the replicates scatter around the cell means with the residual SD
    post = tree["posterior"].to_dataset()
    rep = _flat(tree["posterior_predictive"]["score"], "obs")
    sd = float(post["sigma"].mean())
    assert rep.std(axis=0).mean() == pytest.approx(sd, rel=0.1)
    observed = tree["observed_data"]["score"].values
    assert np.corrcoef(rep.mean(axis=0), observed)[0, 1] > 0.9


def _loo_and_compare(exact, other):
    d_exact, d_other = exact.to_arviz(draws=200, seed=2), other.to_arviz(draws=200, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = azs.loo(d_exact, pointwise=True)
        ours = loo(exact, draws=200, seed=2)
        table = azs.compare({"gaussian": d_exact, "other": d_other}, round_to="none")
    assert res.elpd == pytest.approx(ours.elpd, rel=1e-12)
    # elpd_loo <= elpd of the in-sample log mean likelihood (lppd), by p_loo >= 0
    ll = _flat(d_exact["log_likelihood"]["score"], "obs")
    lppd = float(np.sum(np.log(np.mean(np.exp(ll), axis=0))))
    assert res.elpd == pytest.approx(lppd - res.p, rel=1e-9)
    assert set(table.index) == {"gaussian", "other"}
    assert table.loc["gaussian", "elpd"] == pytest.approx(res.elpd, rel=1e-12)
    assert table.loc["other", "elpd"] == pytest.approx(loo(other, draws=200, seed=2).elpd)


@pytest.mark.slow
def test_loo_and_compare_two_gaussian_fits(exact, example_table):
    """Two exact fits (different seeds): compare's ELPDs are each fit's LOO."""
    _loo_and_compare(exact, _quiet_fit(example_table, chains=2, draws=500, model_check=False))


@pytest.mark.slow
def test_loo_and_compare_gaussian_and_skew_normal(exact, skew):
    _loo_and_compare(exact, skew)


def test_loo_on_the_fit_with_log_likelihood(example_table):
    """``fit(log_likelihood=True).posterior`` goes straight into ``arviz_stats.loo``."""
    f = _quiet_fit(example_table, chains=2, draws=300, log_likelihood=True, model_check=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = azs.loo(f.posterior)
    ll = _flat(f.posterior["log_likelihood"]["score"], "topic", "system")
    lppd = float(np.sum(np.log(np.mean(np.exp(ll), axis=0))))
    assert res.elpd == pytest.approx(lppd - res.p, rel=1e-9)
    assert res.n_data_points == example_table.matrix().size


@pytest.mark.parametrize("name", ["exact", pytest.param("by_system", marks=pytest.mark.slow)])
def test_plot_ppc(name, request):
    import arviz_plots as azp
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f = request.getfixturevalue(name)
    tree = f.to_arviz(draws=100, seed=1)
    pc = azp.plot_ppc_dist(tree, backend="matplotlib")
    assert "score" in pc.viz["observed_dist"].data_vars
    assert "score" in pc.viz["plot"].data_vars
    plt.close("all")


@pytest.mark.slow
def test_missing_cells_are_left_out(example_table):
    """A table with missing cells (NUTS): the per-cell groups hold the observed cells only."""
    data = example_table.data
    keep = ~((data["system"] == "trec_run06") & data["topic"].isin(["401", "402"]))
    table = (
        type(example_table)
        .from_frame(data[keep], source="example minus 2 cells", missing="keep")
        .with_roles(champion="bm25", challengers="chal_*")
    )
    f = _quiet_fit(table, chains=2, draws=150, tune=200, model_check=False)
    tree = f.to_arviz(draws=100, seed=1)
    assert tree["log_likelihood"]["score"].sizes["obs"] == example_table.matrix().size - 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isfinite(azs.loo(tree).elpd)
