"""The numba kernel of the zoib family equals the PyMC model it implements.

The reference is PyMC itself (``compile_logp`` / ``compile_dlogp`` and the
deterministics of :func:`~bayes_ir.hierarchical.families.zoib.build_pymc_model`) at
random unconstrained points, for the four structures (precision and inflation pooled
or per system), with topics centred on the intercept and one (every score 0) not; its
special functions are checked in ``test_vmath.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from kernel_checks import assert_callbacks_equal, assert_equals_pymc, logp_callback
from scipy import special

from bayes_ir.hierarchical import build_model
from bayes_ir.hierarchical.families import _kernel, get_family, inflation_kernel
from bayes_ir.hierarchical.families import zoib_kernel as kernel
from bayes_ir.hierarchical.families.logit import UNPOOLED_SD
from bayes_ir.hierarchical.families.zoib import centred_effects as zoib_centred_effects
from bayes_ir.hierarchical.model import design_of
from bayes_ir.table import ScoreTable


def _table(n_t: int = 15, n_s: int = 5, seed: int = 3) -> ScoreTable:
    rng = np.random.default_rng(seed)
    mu = special.expit(rng.normal(-0.8, 0.8, (n_t, 1)) + rng.normal(0, 0.5, (1, n_s)))
    y = rng.beta(mu * 8, (1 - mu) * 8)
    y[rng.random((n_t, n_s)) < 0.1] = 0.0
    y[rng.random((n_t, n_s)) < 0.05] = 1.0
    y[7] = 0.0  # a topic with no score inside (0, 1)
    y[2, 3] = np.nan
    table = ScoreTable.from_matrix(
        y, systems=[f"s{i}" for i in range(n_s)], measure="AP", missing="keep"
    )
    return table.with_roles(champion="s0", challengers=["s1"])


@pytest.fixture(
    scope="module",
    params=[
        ("zoib", "all"),
        ("zoib(phi=system)", "all"),
        ("zoib(inflation=system)", "all"),
        ("zoib(inflation=system, phi=system)", "all"),
        ("zoib", "none"),
        ("zoib(inflation=system, phi=system)", "none"),
    ],  # fmt: skip
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def case(request):
    spec, pooling = request.param
    design = design_of(_table())
    family = get_family(spec).resolved(design)
    priors = family.resolve_priors(design, None)
    model = build_model(design, likelihood=spec, priors=priors, pooling=pooling)
    data = family.data_block(design, priors, pooling)
    block = inflation_kernel.pack(design.matrix, priors.values().inflation_sd_rate)
    return design, family, model, data, block if family.inflation_by_system else None


class _Joint:
    """The beta part's kernel and the inflation block apart: one density over both."""

    def __init__(self, data: np.ndarray, block: np.ndarray | None) -> None:
        self.split, self.block = kernel.n_coordinates(data), block

    def size(self) -> int:
        extra = 0 if self.block is None else inflation_kernel.n_coordinates(self.block)
        return self.split + extra

    def logp_and_grad(self, theta: np.ndarray, data: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = kernel.logp_and_grad(theta[: self.split], data)
        if self.block is None:
            return value, grad
        more, g = inflation_kernel.logp_and_grad(theta[self.split :], self.block)
        return value + more, np.concatenate([grad, g])


def _pymc_point(theta: np.ndarray, design, family, model) -> dict[str, np.ndarray]:
    """PyMC's value variables from joint coordinates: the beta kernel's, then the block's."""
    n_t, n_s = design.shape
    names = [v.name for v in model.value_vars]
    out = {"intercept": theta[0], "sigma_topic_log__": theta[1]}
    c = 2
    if "sigma_system" in model.named_vars:  # pooled systems
        out["sigma_system_log__"], c = theta[2], 3
    out["phi_typical_log__" if family.phi_by_system else "phi_log__"] = theta[c]
    i = c + 1
    if not family.inflation_by_system:
        out["zoi_logit"], out["coi_logit"] = theta[i], theta[i + 1]
        i += 2
    if family.phi_by_system:
        out["phi_log_sd_log__"] = theta[i]
        i += 1
    out["topic_level"] = theta[i : i + n_t]
    i += n_t
    out[next(n for n in names if n.startswith("system"))] = theta[i : i + n_s - 1]
    i += n_s - 1
    if family.phi_by_system:
        out["phi_z_zerosum__"] = theta[i : i + n_s - 1]
        i += n_s - 1
    if family.inflation_by_system:
        out["zoi_logit"], out["coi_logit"] = theta[i], theta[i + 1]
        out["zoi_sd_log__"], out["coi_sd_log__"] = theta[i + 2], theta[i + 3]
        i += 4
        out["zoi_z_zerosum__"] = theta[i : i + n_s - 1]
        out["coi_z_zerosum__"] = theta[i + n_s - 1 : i + 2 * n_s - 2]
        i += 2 * n_s - 2
    assert i == theta.size
    return out


def _points(design, data, block, n: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    points = [rng.normal(0, 0.7, _Joint(data, block).size()) for _ in range(n)]
    far = points[0].copy()
    # means near 1, precision 400: Stirling's branch, 1 - mu tiny
    n_t, c = design.shape[0], _kernel.n_crossed(data)
    far[0], far[c] = 12.0, 6.0
    first = c + kernel.n_scalars(data)
    far[first : first + n_t][data[data.size - n_t :] != 0.0] += 12.0  # centred topics' levels
    return [*points, far]


def test_the_topics_take_both_forms():
    """The topic with every score 0 is not centred on the intercept; some others are."""
    design = design_of(_table())
    topics, _ = zoib_centred_effects(design.matrix)
    assert not topics[7]
    assert topics.any()


def test_log_density_and_gradient_equal_pymc(case):
    """The beta kernel (plus the inflation block, when apart) is PyMC's model."""
    design, family, model, data, block = case
    points = _points(design, data, block)
    assert_equals_pymc(_Joint(data, block), model, data, points,
                       lambda x: _pymc_point(x, design, family, model))  # fmt: skip


def test_c_callbacks_equal_the_python_entry_and_pymc_deterministics(case):
    design, family, model, data, block = case
    names, shapes = kernel.expanded_layout(
        *design.shape, family.phi_by_system, family.inflation_by_system
    )
    unpooled = "sigma_system" not in model.named_vars
    points = _points(design, data, block, n=2)
    split = kernel.n_coordinates(data)

    def beta_point(x):  # the block's coordinates from the first point
        return _pymc_point(np.concatenate([x, points[0][split:]]), design, family, model)

    assert_callbacks_equal(
        kernel, model, data, [p[:split] for p in points], beta_point, names,
        int(sum(np.prod(s) for s in shapes)), 1e-12,
        fixed={"sigma_system": UNPOOLED_SD} if unpooled else None,
    )  # fmt: skip
    if block is None:
        return
    names, shapes = inflation_kernel.expanded_layout(design.shape[1])

    def block_point(x):
        return _pymc_point(np.concatenate([points[0][:split], x]), design, family, model)

    assert_callbacks_equal(
        inflation_kernel, model, block, [p[split:] for p in points], block_point, names,
        int(sum(np.prod(s) for s in shapes)), 1e-12,
    )  # fmt: skip


def test_non_finite_density_is_reported_to_the_sampler(case):
    design, family, _, data, block = case
    for index in (1, _kernel.n_crossed(data)):  # a topic SD or a precision of exp(800)
        theta = np.zeros(kernel.n_coordinates(data))
        theta[index] = 800.0
        assert logp_callback(kernel, theta, data)[0] in (3, 4), index
    if block is not None:  # an inflation SD of exp(800)
        theta = np.zeros(inflation_kernel.n_coordinates(block))
        theta[2] = 800.0
        assert logp_callback(inflation_kernel, theta, block)[0] in (3, 4)


def test_the_data_block_counts_exact_zeros_and_ones_per_system():
    design = design_of(_table())
    y = design.matrix
    data = (
        get_family("zoib")
        .resolved(design)
        .data_block(design, get_family("zoib").resolve_priors(design, None))
    )
    n_s = y.shape[1]
    counts = data[kernel.N_HEADER : kernel.N_HEADER + 3 * n_s].reshape(3, n_s)
    np.testing.assert_array_equal(counts[0], (y == 0).sum(axis=0))
    np.testing.assert_array_equal(counts[1], (y == 1).sum(axis=0))
    np.testing.assert_array_equal(counts[2], ((y > 0) & (y < 1)).sum(axis=0))


def test_pack_checks_its_input():
    with pytest.raises(ValueError, match="crossed part"):
        kernel.pack(np.zeros((3, 2)), np.zeros(4), rates=(1, 1, 1), phi_by_system=False,
                    inflation_by_system=False)  # fmt: skip
