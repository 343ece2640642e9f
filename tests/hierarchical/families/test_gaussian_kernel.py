"""The numba kernel of the Gaussian model with one residual SD per system equals PyMC's.

The reference is PyMC itself (``compile_logp`` / ``compile_dlogp`` and the
deterministics of :func:`~bayes_ir.hierarchical.build_model` with ``sigma="system"``) at
random unconstrained points, on a complete table and on one with missing cells; the
sampler on the kernel against PyMC's own NUTS on the PyMC model.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from kernel_checks import assert_callbacks_equal, assert_equals_pymc, logp_callback

from bayes_ir.hierarchical import build_model, fit
from bayes_ir.hierarchical.families import _kernel
from bayes_ir.hierarchical.families import gaussian_kernel as kernel
from bayes_ir.hierarchical.model import design_of
from bayes_ir.hierarchical.priors import autoscale_priors
from bayes_ir.table import ScoreTable

sampling = sys.modules["bayes_ir.hierarchical.sampling"]


def _table(n_t: int = 12, n_s: int = 5, seed: int = 3, gaps: float = 0.0) -> ScoreTable:
    rng = np.random.default_rng(seed)
    sd = np.linspace(0.03, 0.12, n_s)
    y = 0.3 + rng.normal(0, 0.1, (n_t, 1)) + rng.normal(0, 0.05, (1, n_s))
    y = y + rng.normal(0, 1, (n_t, n_s)) * sd
    y[rng.random((n_t, n_s)) < gaps] = np.nan
    y[:, :2] = np.where(np.isnan(y[:, :2]), 0.3, y[:, :2])
    table = ScoreTable.from_matrix(
        y, systems=[f"s{i}" for i in range(n_s)], measure="score", missing="keep"
    )
    return table.with_roles(champion="s0", challengers=["s1"])


@pytest.fixture(scope="module", params=[0.0, 0.2], ids=["complete", "gaps"])
def case(request):
    design = design_of(_table(gaps=request.param))
    priors = autoscale_priors(design.score, None)
    model = build_model(design, priors=priors, sigma="system")
    data = sampling.sigma_by_system_model(design, priors).user_data
    return design, model, data


def _pymc_point(theta: np.ndarray, design) -> dict[str, np.ndarray]:
    n_t, n_s = design.shape
    out = {
        "b0": theta[0],
        "sigma_topic_log__": theta[1],
        "sigma_system_log__": theta[2],
        "sigma_typical_log__": theta[3],
        "sigma_log_sd_log__": theta[4],
        "topic_effect_zerosum__": theta[5 : 5 + n_t - 1],
    }
    i = 5 + n_t - 1
    out["system_effect_zerosum__"] = theta[i : i + n_s - 1]
    out["sigma_z_zerosum__"] = theta[i + n_s - 1 :]
    assert theta.size == i + 2 * (n_s - 1)
    return out


def _points(design, n: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    size = kernel.n_coordinates(*design.shape)
    points = [rng.normal(0, 0.7, size) for _ in range(n)]
    # realistic scales: residual SDs near 0.05, spread of 0.5 on the log scale
    near = points[0] * 0.2
    near[0], near[3], near[4] = 0.3, np.log(0.05), np.log(0.5)
    return [*points, near]


def test_log_density_and_gradient_equal_pymc(case):
    design, model, data = case
    assert_equals_pymc(kernel, model, data, _points(design), lambda x: _pymc_point(x, design))


def test_c_callbacks_equal_the_python_entry_and_pymc_deterministics(case):
    design, model, data = case
    names, shapes = kernel.expanded_layout(*design.shape)
    assert_callbacks_equal(
        kernel, model, data, _points(design, n=2), lambda x: _pymc_point(x, design), names,
        int(sum(np.prod(s) for s in shapes)), 1e-12,
    )  # fmt: skip


def test_the_data_block_masks_missing_cells(case):
    design, _, data = case
    y = design.matrix
    n_t, n_s = y.shape
    o = kernel.N_HEADER
    np.testing.assert_array_equal(data[o : o + n_s], np.isfinite(y).sum(axis=0))
    scores, mask = data[o + n_s : data.size - n_t].reshape(2, n_t, n_s)
    np.testing.assert_array_equal(mask, np.isfinite(y))
    np.testing.assert_array_equal(scores, np.where(np.isfinite(y), y, 0.0))


def test_non_finite_density_is_reported_to_the_sampler(case):
    design, _, data = case
    for index in (1, 3):  # a topic SD or the typical residual SD of exp(800)
        theta = np.zeros(kernel.n_coordinates(*design.shape))
        theta[index] = 800.0
        assert logp_callback(kernel, theta, data)[0] in (3, 4), index


def test_pack_checks_its_input():
    with pytest.raises(ValueError, match="crossed part"):
        kernel.pack(np.zeros((3, 2)), np.zeros(4), rates=(1.0, 1.0))
    levels = _kernel.pack_header((3, 2), (0.0, 1.0), (1.0, 1.0), np.ones(3, bool), True)
    with pytest.raises(ValueError, match="centred"):  # the kernel has zero-sum topics
        kernel.pack(np.zeros((3, 2)), levels, rates=(1.0, 1.0))


@pytest.mark.slow
def test_fit_samples_the_kernel_and_agrees_with_pymc_nuts():
    """The default sampler (nutpie on the kernel) and PyMC's NUTS on the PyMC model."""
    table = _table(n_t=40, n_s=6, seed=8, gaps=0.1)
    ours = fit(table, sigma="system", chains=4, draws=1000, seed=1)
    ref = fit(table, sigma="system", chains=4, draws=1000, seed=1, sampler="pymc")
    for name in ("sigma", "system_effect", "b0", "sigma_topic"):
        a, b = ours.draws[name], ref.draws[name]
        sd = b.std(("chain", "draw"))
        ess = min(
            f.diagnostics.table.set_index("parameter").filter(like=name, axis=0)["ess_bulk"].min()
            for f in (ours, ref)
        )
        mcse = sd * np.sqrt(2.0 / ess)  # Monte Carlo SE of the difference of two means
        assert (abs(a.mean(("chain", "draw")) - b.mean(("chain", "draw"))) < 4 * mcse).all(), name
        np.testing.assert_allclose(a.std(("chain", "draw")), sd, rtol=0.15, err_msg=name)
