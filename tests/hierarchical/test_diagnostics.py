"""The diagnostics gate: thresholds, warnings, strict mode, contrast draws."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from bayes_ir.errors import BayesIRError, ConvergenceError, ConvergenceWarning
from bayes_ir.hierarchical import Thresholds, contrast_draws, diagnose

SYSTEMS = ["champ", "chal_a", "chal_b", "run1"]
ROLES = ["champion", "challenger", "challenger", "artifact"]


def _tree(*, shift: float = 0.0, n_draw: int = 1000, seed: int = 0, diverging: int = 0):
    rng = np.random.default_rng(seed)
    n_chain = 4
    effect = rng.normal(0, 0.02, (n_chain, n_draw, 4))
    effect[0, :, 1] += shift  # chain 0 of chal_a stuck elsewhere
    post = xr.Dataset(
        {
            "b0": (("chain", "draw"), rng.normal(0.3, 0.01, (n_chain, n_draw))),
            "sigma": (("chain", "draw"), rng.gamma(100, 0.001, (n_chain, n_draw))),
            "sigma_topic": (("chain", "draw"), rng.gamma(50, 0.004, (n_chain, n_draw))),
            "sigma_system": (("chain", "draw"), rng.gamma(20, 0.001, (n_chain, n_draw))),
            "system_effect": (("chain", "draw", "system"), effect),
        },
        coords={"chain": np.arange(n_chain), "draw": np.arange(n_draw), "system": SYSTEMS},
    ).assign_coords(role=("system", ROLES))
    div = np.zeros((n_chain, n_draw), dtype=bool)
    div.flat[:diverging] = True
    stats = xr.Dataset(
        {
            "diverging": (("chain", "draw"), div),
            "energy": (("chain", "draw"), rng.normal(0, 1, (n_chain, n_draw))),
        }
    )
    return xr.DataTree.from_dict({"/posterior": post, "/sample_stats": stats})


def test_good_posterior_passes_and_matches_arviz():
    import arviz_stats as azs

    tree = _tree()
    d = diagnose(tree)
    assert d.passed and d.divergences == 0 and d.chains == 4 and d.draws == 1000
    table = d.table.set_index("parameter")
    # 4 hyper + 4 systems + 2 contrasts
    assert len(table) == 10
    assert list(table["kind"]).count("contrast") == 2
    assert "chal_a - champ" in table.index
    post = tree["posterior"].to_dataset()
    assert table.loc["sigma", "ess_bulk"] == pytest.approx(
        float(azs.ess(post["sigma"].values, method="bulk"))
    )
    assert table.loc["b0", "rhat"] == pytest.approx(float(azs.rhat(post["b0"].values)))
    assert "PASS" in d.summary() and "FAIL" not in d.summary()


def test_contrast_draws_are_differences():
    post = _tree()["posterior"].to_dataset()
    con = contrast_draws(post)
    assert con.dims == ("chain", "draw", "challenger")
    want = post["system_effect"].sel(system="chal_b") - post["system_effect"].sel(system="champ")
    np.testing.assert_allclose(con.sel(challenger="chal_b").values, want.values)


def test_stuck_chain_fails_with_named_parameter_and_advice():
    d = diagnose(_tree(shift=0.1))
    assert not d.passed and not d.rhat_ok
    failures = " ".join(d.failures())
    assert "system_effect[chal_a]" in failures and "chal_a - champ" in failures
    assert "draws" in failures
    with pytest.warns(ConvergenceWarning, match="chal_a"):
        d.warn_or_raise()
    with pytest.raises(ConvergenceError, match="R-hat"):
        d.warn_or_raise(strict=True)


def test_divergences_and_paper_threshold():
    d = diagnose(_tree(diverging=3))
    assert d.divergences == 3 and not d.divergences_ok
    assert any("target_accept" in f for f in d.failures())
    paper = diagnose(_tree(), thresholds="paper")
    assert paper.thresholds.ess_bulk_min == 10_000
    assert not paper.ess_ok  # 4,000 draws cannot reach ESS 10,000
    custom = diagnose(_tree(), thresholds={"ess_bulk_min": 100, "ess_tail_min": 100})
    assert custom.passed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        custom.warn_or_raise()  # passing: silent


def test_var_names_and_bad_input():
    d = diagnose(_tree(), var_names=["sigma", "contrast"])
    assert set(d.table["kind"]) == {"hyper", "contrast"}
    with pytest.raises(BayesIRError, match="cannot diagnose"):
        diagnose(_tree(), var_names=["nope"])
    with pytest.raises(BayesIRError, match="thresholds"):
        Thresholds.resolve("strictest")
    with pytest.raises(BayesIRError):
        diagnose(42)


def test_checks_without_nuts_read_na_never_pass():
    """A posterior without NUTS statistics (the exact sampler): divergences and BFMI do
    not apply, read n/a, and neither pass nor fail the gate."""
    import arviz_stats as azs

    from bayes_ir.hierarchical.diagnostics import GateStatus

    tree = _tree()
    no_nuts = xr.DataTree.from_dict({"/posterior": tree["posterior"].to_dataset()})
    d = diagnose(no_nuts)
    assert d.divergences is None and d.divergences_ok is None
    assert d.bfmi is None and d.bfmi_ok is None
    checks = d.checks().set_index("check")["status"]
    assert checks.to_dict() == {"R-hat": "PASS", "ESS": "PASS", "Divergences": "n/a", "BFMI": "n/a"}
    lines = d.summary().splitlines()
    assert lines[2].startswith("  Divergences") and lines[2].endswith(": n/a")
    assert lines[3].startswith("  BFMI") and lines[3].endswith(": n/a")
    assert "PASS" not in lines[2] + lines[3]
    assert d.passed and GateStatus.of(type("F", (), {"diagnostics": d})()).passed
    # with NUTS statistics both checks apply: PASS here, FAIL after divergences
    assert set(diagnose(tree).checks()["status"]) == {"PASS"}
    bad = diagnose(_tree(diverging=3)).checks().set_index("check")
    assert bad.loc["Divergences", "status"] == "FAIL" and bad.loc["Divergences", "value"] == "3"
    # ESS per draw: the smallest bulk ESS of a hyperparameter over chains x draws
    post = tree["posterior"].to_dataset()
    want = min(
        float(azs.ess(post[v].values, method="bulk"))
        for v in ("b0", "sigma", "sigma_topic", "sigma_system")
    )
    assert d.ess_per_draw == pytest.approx(want / 4000)


def test_advice_without_nuts_names_no_nuts_option():
    """A stuck chain without NUTS statistics: the advice is more draws, not tune or
    target_accept, which the exact sampler ignores."""
    tree = _tree(shift=0.1)
    d = diagnose(xr.DataTree.from_dict({"/posterior": tree["posterior"].to_dataset()}))
    text = " ".join(d.failures())
    assert "R-hat" in text and "draws=" in text
    assert "tune" not in text and "target_accept" not in text
    assert "target_accept" in " ".join(diagnose(tree).failures())


def test_bfmi_is_the_energy_formula_per_chain():
    """E-BFMI = sum (E_i - E_{i-1})^2 / sum (E_i - mean E)^2 per chain (Betancourt 2016)."""
    tree = _tree(seed=3)
    energy = tree["sample_stats"]["energy"].values
    expected = np.sum(np.diff(energy, axis=1) ** 2, axis=1) / np.sum(
        (energy - energy.mean(axis=1, keepdims=True)) ** 2, axis=1
    )
    d = diagnose(tree)
    np.testing.assert_allclose(d.bfmi, expected, rtol=1e-12)
    assert d.bfmi_ok  # white-noise energy: E-BFMI about 2
    # a random-walk energy (each draw close to the last) explores the energy poorly
    slow = tree["sample_stats"].to_dataset()
    slow["energy"] = (("chain", "draw"), np.cumsum(energy, axis=1))
    tree = xr.DataTree.from_dict(
        {"/posterior": tree["posterior"].to_dataset(), "/sample_stats": slow}
    )
    d = diagnose(tree)
    assert d.bfmi_ok is False and "BFMI (min 0.01; need >= 0.3): FAIL" in d.summary()


@pytest.mark.parametrize("width", [1, 3, 7])
def test_blocks_of_quantities_give_the_table_of_one_arviz_call(monkeypatch, width):
    """Diagnosing a block of quantities at a time (float64 blocks of the float32 effects the
    exact sampler stores) gives the numbers of ArviZ on the whole float64 array."""
    import arviz_stats as azs

    import bayes_ir.hierarchical.diagnostics as diagnostics

    tree = _tree(shift=0.01)
    post = tree["posterior"].to_dataset()
    tree["posterior"] = post.assign(system_effect=post["system_effect"].astype(np.float32))
    monkeypatch.setattr(diagnostics, "DIAGNOSE_BLOCK", width * 4 * 1000)
    table = diagnose(tree).table
    eff = tree["posterior"]["system_effect"].values.astype(float)
    con = eff[..., 1:3] - eff[..., :1]
    hyper = [post[n].values[..., None] for n in ("b0", "sigma", "sigma_topic", "sigma_system")]
    x = np.concatenate([*hyper, eff, con], axis=-1)
    np.testing.assert_allclose(table["mean"], x.mean(axis=(0, 1)), rtol=1e-12)
    np.testing.assert_allclose(table["sd"], x.std(axis=(0, 1), ddof=1), rtol=1e-12)
    np.testing.assert_allclose(table["rhat"], azs.rhat(x), rtol=1e-12)
    np.testing.assert_allclose(table["ess_bulk"], azs.ess(x, method="bulk"), rtol=1e-12)
    np.testing.assert_allclose(table["ess_tail"], azs.ess(x, method="tail", prob=0.05), rtol=1e-12)
    np.testing.assert_allclose(table["mcse_mean"], azs.mcse(x, method="mean"), rtol=1e-12)
    np.testing.assert_allclose(table["mcse_sd"], azs.mcse(x, method="sd"), rtol=1e-12)


@pytest.mark.parametrize(
    ("provenance", "line"),
    [
        ({"target_accept": 0.65, "tune": 500, "draws": 1000},
         "!! Refit with target_accept 0.99 (3 divergent transitions): target_accept=0.99."),
        ({"target_accept": 0.99, "tune": 500, "draws": 1000},
         "!! Refit with target_accept 0.995 (3 divergent transitions): target_accept=0.995."),
        ({"target_accept": 0.995, "tune": 500, "draws": 1000},
         "!! Refit with a warm-up of 1,000: tune=1000."),
        (None, "!! Refit with more draws (draws=..., tune=...) or a higher target_accept."),
    ],
)  # fmt: skip
def test_a_failed_banner_names_the_refit_from_the_provenance(provenance, line):
    """The summary's banner says the refit the command line names (refit_settings): the next
    rung of target_accept after divergences, then a longer warm-up; the general advice
    when the fit's settings are unknown."""
    from types import SimpleNamespace

    from bayes_ir.hierarchical.diagnostics import GateStatus

    d = diagnose(_tree(diverging=3))
    banner = GateStatus.of(SimpleNamespace(diagnostics=d, provenance=provenance)).banner()
    assert line in banner.splitlines()
