import numpy as np
import pytest
import xarray as xr
from scipy import stats

from bayes_ir.errors import BayesIRError, OptionError
from bayes_ir.reliability import bayesian_interval, bootstrap_interval, tau_ap
from bayes_ir.reliability.estimators import _bootstrap_means


@pytest.fixture
def table(toy_table):
    return toy_table


def test_bootstrap_draws_are_correlations_with_resampled_rankings(table):
    res = bootstrap_interval(table, n_boot=200, seed=4)
    x = table.matrix().to_numpy()
    boot = _bootstrap_means(x, 200, np.random.default_rng(4))
    observed = x.mean(axis=0)
    ref_tau = [stats.kendalltau(observed, b).statistic for b in boot]
    ref_tap = [tau_ap(observed, b) for b in boot]
    assert res.tau == pytest.approx(ref_tau)
    assert res.tau_ap == pytest.approx(ref_tap)
    ci = res.conf_int(ci_prob=0.9)
    assert list(ci.columns) == ["method", "coefficient", "estimate", "ci_lower", "ci_upper",
                                "ci_prob"]  # fmt: skip
    lo, hi = np.quantile(ref_tau, [0.05, 0.95])
    assert ci.loc[0, "ci_lower"] == pytest.approx(lo) and ci.loc[0, "ci_upper"] == pytest.approx(hi)
    assert "bootstrap" in res.summary() and "95% interval" in res.summary()
    for bad in (1, 0, 2.5, "100"):
        with pytest.raises(OptionError, match="^n_boot must"):
            bootstrap_interval(table, n_boot=bad)
    for bad in (-3, 1.7, True, 2j):
        with pytest.raises(OptionError, match="^seed must"):
            bootstrap_interval(table, seed=bad)
    with pytest.raises(ValueError):
        res.conf_int(ci_prob=1.5)


class _FakeFit:
    def __init__(self, draws, systems):
        self._da = xr.DataArray(draws, dims=("chain", "draw", "system"), coords={"system": systems})

    def system_mean_draws(self):
        return self._da


def test_bayesian_interval_from_given_draws(table):
    rng = np.random.default_rng(1)
    systems = [f"s{k}" for k in range(6)][::-1]  # any order: matched by name
    draws = rng.normal(size=(2, 50, 6))
    res = bayesian_interval(table, fit=_FakeFit(draws, systems))
    observed = table.matrix().sel(system=systems).to_numpy().mean(axis=0)
    flat = draws.reshape(100, 6)
    assert res.tau == pytest.approx([stats.kendalltau(d, observed).statistic for d in flat])
    assert res.tau_ap == pytest.approx([tau_ap(d, observed) for d in flat])
    with pytest.raises(BayesIRError, match="does not cover"):
        bayesian_interval(table, fit=_FakeFit(draws[..., :5], systems[:5]))


def test_bayesian_interval_with_the_hierarchical_model(table):
    from bayes_ir.hierarchical import fit

    res = bayesian_interval(table, seed=3, chains=2, draws=2000)
    assert res.method == "bayesian" and len(res.tau) == 4000
    # the same fit made directly (any champion: the posterior does not depend on it);
    # tau of each draw of the true system means with the observed ones, by scipy
    direct = fit(table.with_roles(champion="s0", challengers=[]), seed=3, chains=2, draws=2000)
    systems = list(table.systems)
    means = direct.system_mean_draws().sel(system=systems).stack(s=("chain", "draw"))
    observed = table.matrix().sel(system=systems).to_numpy().mean(axis=0)
    want = [stats.kendalltau(d, observed).statistic for d in means.transpose("s", ...).values]
    assert res.tau == pytest.approx(want, abs=1e-12)
    ci = res.conf_int(ci_prob=0.9).set_index("coefficient")
    for name, draws in (("tau", np.array(want)), ("tau_ap", res.tau_ap)):
        lo, hi = np.quantile(draws, [0.05, 0.95])
        assert ci.loc[name, ["estimate", "ci_lower", "ci_upper"]].tolist() == pytest.approx(
            [draws.mean(), lo, hi], abs=1e-12
        )
