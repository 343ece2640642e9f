"""``fit(pooling="artifacts")``: champion and challengers unpooled, the artifacts pooled.

References: lme4 (REML) with the systems of interest as fixed effects, on rb04 complete and
with 250 of its cells missing (``tests/results/unpooled.py``); the closed form of the
contrast on a complete table; and the samplers against each other (exact, Gibbs, NUTS).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
import pytest
from agreement import SCALARS, agree, cells, simulated_matrix, simulated_table
from fixed_priors import PRIORS
from results import unpooled as ref

from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.hierarchical import compare, fit, load_fit
from bayes_ir.hierarchical.exact import sample_exact
from bayes_ir.hierarchical.gibbs import sample_gibbs
from bayes_ir.readers import read_scores
from bayes_ir.table import ScoreTable

CHALLENGERS = ("Chal. 1", "Chal. 2", "Chal. 3", "Chal. 4")
#: Largest distance of a posterior mean of a scale from its REML estimate, in posterior SDs.
#: Both estimate the same quantity from the same restricted likelihood (the exact sampler's
#: marginal posterior of the scales is the REML likelihood times the priors, see
#: bayes_ir.hierarchical.exact); they differ by the skew of the posterior (mean against mode)
#: and the weak Exponential priors, a fraction of a posterior SD with 50 topics and 40
#: artifacts (0.07, 0.15 and 0.16 SD for sigma, sigma_topic and sigma_system on rb04).
#: pooling="all" puts sigma_system 1.7 posterior SDs from this REML estimate.
SCALE_SDS = 0.5


def _pooled(n_s: int) -> np.ndarray:
    """The mask of :func:`simulated_table`: champion and challenger unpooled."""
    return np.arange(n_s) >= 2


@pytest.mark.parametrize("shape", [(40, 12), (8, 30)], ids=["topics>systems", "systems>topics"])
def test_exact_and_gibbs_agree_on_the_unpooled_model(shape):
    """Two samplers written from two derivations draw the same unpooled posterior."""
    y = simulated_matrix(*shape, seed=4, chi=0.05)
    pooled = _pooled(shape[1])
    g, _ = sample_gibbs(*cells(y), PRIORS, chains=4, draws=5000, tune=200, seed=1, pooled=pooled)
    e, _, _ = sample_exact(y, PRIORS, chains=4, draws=5000, seed=2, pooled=pooled)
    agree(g, e)
    for post in (g, e):  # b0 is the mean of the system means: the effects sum to zero
        np.testing.assert_allclose(post["system_effect"].sum(axis=-1), 0, atol=1e-5)


def test_unpooled_contrast_is_the_observed_difference_on_a_complete_table():
    r"""Given :math:`\sigma`, :math:`\mu_c - \mu_h \sim N(\bar y_c - \bar y_h, 2\sigma^2/T)`.

    The challenger is 0.1 better than the crowd of systems (SD 0.02), which
    ``pooling="all"`` pulls it towards.
    """
    y = simulated_matrix(30, 10, seed=8, chi=0.02)
    y[:, 1] += 0.1
    result = fit(simulated_table(y), pooling="artifacts", seed=3, priors=PRIORS)
    d = result.contrast_draws().sel(challenger="chal_a").values.ravel()
    observed = float(np.mean(y[:, 1] - y[:, 0]))
    sd_closed = np.sqrt(2 * np.mean(result.draws["sigma"].values ** 2) / y.shape[0])
    assert abs(d.mean() - observed) < 4 * d.std() / np.sqrt(d.size)
    assert d.std() == pytest.approx(sd_closed, rel=0.02)
    pooled = fit(simulated_table(y), seed=3, priors=PRIORS)  # the seed's model pulls it in
    assert abs(pooled.contrast_draws().values.mean()) < 0.9 * abs(observed)


def test_pooling_is_checked_and_needs_two_artifacts():
    y = simulated_matrix(10, 3, seed=1)
    with pytest.raises(OptionError, match="pooling must be one of 'auto', 'all', 'artifacts'"):
        fit(simulated_table(y), pooling="some")
    with pytest.raises(OptionError, match="'none' does not apply to the gaussian likelihood"):
        fit(simulated_table(y), pooling="none")
    with pytest.raises(InsufficientDataError, match="needs at least 2 artifact runs"):
        fit(simulated_table(y), pooling="artifacts")


def test_saved_unpooled_fit_loads_back(tmp_path):
    table = simulated_table(simulated_matrix(20, 8, seed=2))
    result = fit(table, pooling="artifacts", draws=500, seed=5, priors=PRIORS)
    assert result.provenance["pooling"] == result.pooling == "artifacts"
    assert "pooling 'artifacts'" in result.summary()
    loaded = load_fit(result.save(tmp_path / "unpooled.nc"), table)
    assert loaded.pooling == "artifacts"
    np.testing.assert_array_equal(
        loaded.draws["system_effect"].values, result.draws["system_effect"].values
    )


# ---------------------------------------------------------------------- against lme4
def _rb04(shared_data, drop_every: int | None = None) -> ScoreTable:
    path = shared_data / "bayesian_risk" / "rb04_data.csv"
    if drop_every is None:
        table = read_scores(path)
    else:  # the rows the R script drops: 0-based index % k == k // 2
        data = pd.read_csv(path)
        keep = np.arange(len(data)) % drop_every != drop_every // 2
        table = ScoreTable.from_frame(
            data[keep], collection="rb04", measure="AP", missing="keep", source=str(path)
        )
    return table.with_roles(champion="Champion", challengers="Chal.*")


def _assert_like_lme4(result, reml: dict) -> None:
    d = result.contrast_draws()
    for name in CHALLENGERS:
        x = d.sel(challenger=name).values.ravel()
        estimate, se = reml[name]
        mcse = x.std() / np.sqrt(result.diagnostics.ess_per_draw * x.size)
        # the fixed-effect contrast: equal to Monte Carlo error on a complete table (both
        # are the observed difference); with gaps both weigh the topics by the variance
        # components, REML's point estimates against their posterior (0.1 SE apart at most)
        assert abs(x.mean() - estimate) < 4 * mcse + (0.1 * se if result.method == "gibbs" else 0)
        assert x.std() == pytest.approx(se, rel=0.03)
    for name in ("sigma", "sigma_topic", "sigma_system"):
        x = result.draws[name].values.ravel()
        assert abs(x.mean() - reml[name][0]) < SCALE_SDS * x.std(), name


def test_unpooled_rb04_agrees_with_lme4(shared_data):
    """Contrasts, their SEs and the variance components of lme4's REML fit (complete table)."""
    result = fit(_rb04(shared_data), pooling="artifacts", seed=2)
    assert result.method == "exact"
    _assert_like_lme4(result, ref.FULL)
    pooled = fit(_rb04(shared_data), seed=2, model_check=False)  # the seed's model differs
    x = pooled.draws["sigma_system"].values.ravel()
    assert abs(x.mean() - ref.FULL["sigma_system"][0]) > 1.5 * x.std()


@pytest.mark.slow
def test_unpooled_rb04_with_missing_cells_agrees_with_lme4(shared_data):
    """The Gibbs sampler on rb04 with every ninth row of the file removed (250 cells)."""
    result = fit(_rb04(shared_data, ref.GAPS_EVERY), pooling="artifacts", seed=2)
    assert result.method == "gibbs"
    _assert_like_lme4(result, ref.GAPS)


def test_lme4_live(shared_data, rscript, tmp_path):
    """Re-run the stored R script: lme4 still gives the stored numbers."""
    if subprocess.run([rscript, "-e", "quit(status = !requireNamespace('lme4'))"]).returncode:
        pytest.skip("R package lme4 is not installed")
    script = tmp_path / "unpooled.R"
    script.write_text(ref.R_SCRIPT)
    data = shared_data / "bayesian_risk" / "rb04_data.csv"
    for stored, extra in ((ref.FULL, []), (ref.GAPS, [str(ref.GAPS_EVERY)])):
        out = tmp_path / "out.csv"
        subprocess.run([rscript, str(script), str(data), str(out), *extra], check=True,
                       capture_output=True, timeout=300)  # fmt: skip
        live = pd.read_csv(out).set_index("quantity")
        for name, (estimate, se) in stored.items():
            assert live.loc[name, "estimate"] == pytest.approx(estimate, rel=1e-6)
            if se is not None:
                assert live.loc[name, "se"] == pytest.approx(se, rel=1e-6)


# ---------------------------------------------------------------------- NUTS
@pytest.mark.slow
@pytest.mark.parametrize(("sampler", "draws"), [("nutpie", 3000), ("pymc", 1500)])
def test_nuts_agrees_with_the_exact_sampler_on_the_unpooled_model(sampler, draws):
    """NUTS (nutpie, PyMC's own) on the PyMC model of pooling='artifacts' against the exact one."""
    table = simulated_table(simulated_matrix(25, 12, seed=6, chi=0.04))
    e = fit(table, pooling="artifacts", seed=1, priors=PRIORS, model_check=False)
    n = fit(table, pooling="artifacts", method="nuts", sampler=sampler, draws=draws, seed=2,
            priors=PRIORS, model_check=False)  # fmt: skip
    assert e.method == "exact" and n.method == "nuts" and n.diagnostics.passed
    names = (*SCALARS, "system_effect")
    agree(
        {k: e.draws[k].values for k in names},
        {k: n.draws[k].values for k in names},
        sd_tol=0.07,
        names=names,
    )


@pytest.mark.slow
def test_skew_normal_serves_pooling_artifacts():
    """The skew-normal samples its PyMC model; on Gaussian scores it matches the exact fit."""
    table = simulated_table(simulated_matrix(25, 8, seed=7, chi=0.04))
    s = fit(table, likelihood="skew_normal", pooling="artifacts", draws=2000, seed=1,
            priors=PRIORS, model_check=False)  # fmt: skip
    e = fit(table, pooling="artifacts", seed=1, priors=PRIORS, model_check=False)
    assert s.provenance["sampler"] == "nutpie" and s.pooling == "artifacts"
    ds, de = s.contrast_draws().values.ravel(), e.contrast_draws().values.ravel()
    assert abs(ds.mean() - de.mean()) < 0.25 * de.std()
    assert compare(s).to_frame()["challenger"].tolist() == ["chal_a"]
