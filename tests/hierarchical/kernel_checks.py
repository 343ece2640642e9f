"""Checks shared by the tests of the numba kernels (skew-normal, binomial, zoib).

Each kernel is a hand-written log density of a PyMC model, called by nutpie through C
callbacks; these helpers compare it with PyMC's own ``compile_logp`` / ``compile_dlogp``
and deterministics at given unconstrained points, and call the callbacks as nutpie does.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from pytensor.compile.mode import Mode

_DOUBLE_P = ctypes.POINTER(ctypes.c_double)

#: PyTensor mode of the reference functions: the default graph rewrites (the numerically
#: stable forms), run by Python implementations instead of compiled C. These functions are
#: called at a few points, and a fresh machine spends minutes compiling each graph's C code
#: (no fused elementwise loops: Python runs at most 32 operands in one).
REFERENCE_MODE = Mode(linker="py", optimizer="fast_run").excluding("fusion")


def assert_equals_pymc(kernel, model, data, points, to_point) -> None:
    """Value and gradient of ``kernel.logp_and_grad`` equal PyMC's at every point.

    ``to_point(theta)`` cuts a vector laid out as the kernel's coordinates into PyMC's
    value variables (also used to lay our gradient out in PyMC's order).
    """
    logp, dlogp = model.compile_logp(mode=REFERENCE_MODE), model.compile_dlogp(mode=REFERENCE_MODE)
    for theta in points:
        point = to_point(theta)
        value, grad = kernel.logp_and_grad(theta, data)
        assert value == pytest.approx(float(logp(point)), rel=1e-11, abs=1e-9)
        named = to_point(grad)
        ours = np.concatenate([np.atleast_1d(named[var.name]) for var in model.value_vars])
        ref = dlogp(point)
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9 * abs(ref).max())


def logp_callback(kernel, theta: np.ndarray, data: np.ndarray) -> tuple[int, float, np.ndarray]:
    """Call ``kernel.logp_cfunc`` as nutpie does: status, value and gradient."""
    grad, value = np.empty(theta.size), np.empty(1)
    status = kernel.logp_cfunc.ctypes(
        theta.size, *(a.ctypes.data_as(_DOUBLE_P) for a in (theta, grad, value, data))
    )
    return int(status), float(value[0]), grad


def assert_callbacks_equal(
    kernel, model, data, points, to_point, names, n_out, tol, fixed=None
) -> None:
    """The C callbacks equal ``logp_and_grad`` and PyMC's values of ``names`` (the expansion).

    ``fixed``: names the model has no variable for, with the constant the kernel writes
    (the scale of unpooled system effects).
    """
    fixed = fixed or {}
    graphs = model.replace_rvs_by_values([model[name] for name in names if name not in fixed])
    # a kernel of one block of the model (the zoib's inflation apart) uses some inputs only
    compiled = model.compile_fn(graphs, inputs=model.value_vars, mode=REFERENCE_MODE,
                                on_unused_input="ignore")  # fmt: skip

    def deterministics(point):
        values = iter(compiled(point))
        return [fixed[name] if name in fixed else next(values) for name in names]

    for theta in points:
        status, value, grad = logp_callback(kernel, theta, data)
        ref_value, ref_grad = kernel.logp_and_grad(theta, data)
        assert status == 0 and value == ref_value
        np.testing.assert_array_equal(grad, ref_grad)
        out = np.empty(n_out)
        status = kernel.expand_cfunc.ctypes(
            theta.size, out.size, *(a.ctypes.data_as(_DOUBLE_P) for a in (theta, out, data))
        )
        assert status == 0
        expected = np.concatenate([np.atleast_1d(v) for v in deterministics(to_point(theta))])
        np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
