r"""Compiled log posterior and gradient of the skew-normal model, for nutpie.

The skew-normal model of :func:`~bayes_ir.hierarchical.model.build_model` is the
definition; this module is a hand-written numba implementation of *the same* log
density (same priors, same transforms, same sign-marginal likelihood) and its exact
gradient, in one fused loop over the topic x system matrix. Why by hand (issue 8):

* compiling the PyTensor graph of the model for nutpie took 9-10 s of numba time in
  every new process, a third of the time budget; this module's two C callbacks
  (:func:`logp_cfunc`, :func:`expand_cfunc`) are numba ``cfunc`` objects cached on
  disk: compiled once per machine (about 6 s, at the first import) and loaded in a
  fraction of a second afterwards, for any data shape;
* nutpie calls the callbacks from its own threads without the GIL, as it calls a
  compiled PyMC model;
* each gradient costs one ``erfc``, one ``log`` and one ``exp`` per cell and sign,
  with the two signs of the shape sharing the residuals (140 us on rb04, against
  190 us for the PyTensor-generated code).

``tests/hierarchical/test_skewnormal_kernel.py`` checks value and gradient against
PyMC's own ``compile_logp`` / ``compile_dlogp`` of the PyMC model at random points,
so the two cannot drift apart.

Unconstrained coordinates (the order of ``theta``)
--------------------------------------------------
``[b0, log sigma_topic, log sigma_system, log sigma, u, topic (T-1), system (S-1)]``
with ``abs_skewness = g * expit(u)`` (PyMC's interval transform, ``g`` the largest
skewness) and PyMC's zero-sum transform for the two effect vectors. The sampler's coordinates
``phi`` are these when the sign is settled; otherwise the sign ``s`` term is evaluated at
``theta = phi + s h``, ``h`` the sign shift of :func:`mode_shift` (the same model: a
translation per sign), and :func:`shifted_draws` moves the reported values to the sign
drawn. The system
effects are non-centred (``system_effect = sigma_system * extend(system_z)``) or
centred (``system_effect = extend(system)``), as
:func:`~bayes_ir.hierarchical.model.centred_systems` chooses for the data.

Log density
-----------
With :math:`A = \alpha(|\gamma_1|)` and :math:`L_\pm = \sum_{ts} \log SN(y_{ts} \mid
b_0 + a_t + c_s, \sigma, \pm A)` in brms' mean/SD form,

.. math::

    \log p = \log\tfrac12\,(e^{L_+} + e^{L_-}) + \log N(b_0 \mid \mu_0, s_0)
    + \sum_{j\in\{\tau,\chi,\sigma\}} (\log\lambda_j - \lambda_j \sigma_j + \log\sigma_j)
    + \sum_{t<T} \log N(\tilde a_t \mid 0, \tau) + \sum_{s<S} \log N(\tilde z_s \mid 0, 1)
    + \log\mathrm{expit}(u) + \log\mathrm{expit}(-u),

the last line being the Jacobians of the transforms (the zero-sum map is an isometry);
with centred system effects the standardised term is
:math:`\sum_{s<S} \log N(\tilde c_s \mid 0, \chi)`.
Per cell, with :math:`\delta = a/\sqrt{1+a^2}`, :math:`\omega = \sigma/\sqrt{1 -
2\delta^2/\pi}`, :math:`c = \delta\sqrt{2/\pi}`, :math:`z = (y - \mu)/\omega + c`:
:math:`\log SN = \log 2 - \tfrac12\log 2\pi - \log\omega - z^2/2 + \log\Phi(a z)`,
whose derivatives are :math:`\partial/\partial\mu = g/\omega`,
:math:`\partial/\partial\omega = (g u - 1)/\omega`, :math:`\partial/\partial c = -g`
and :math:`\partial/\partial a|_{z} = \lambda(az)\,z`, where :math:`g = z - a\lambda(az)`,
:math:`u = (y-\mu)/\omega` and :math:`\lambda = \phi/\Phi` (the inverse Mills ratio).

References
----------
Azzalini, A. (1985). A class of distributions which includes the normal ones.
*Scandinavian Journal of Statistics* 12(2), 171-178.

Abramowitz, M., Stegun, I. A. (1964). *Handbook of Mathematical Functions*, 26.2.12
(the series of :math:`\log\Phi` below -20).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bayes_ir.hierarchical.families._kernel import (
    _extend,
    _extend_adjoint,
    chebyshev_pieces,
    pieces_pair,
)
from bayes_ir.hierarchical.model import SIGN_LOGODDS
from bayes_ir.hierarchical.skewnormal import _LOG_NDTR_SWITCH

__all__ = [
    "N_HEADER",
    "N_HYPER",
    "expand_cfunc",
    "expanded_layout",
    "initial_point",
    "logp_and_grad",
    "logp_cfunc",
    "mode_shift",
    "n_coordinates",
    "pack",
    "shifted_draws",
    "sign_modes",
]

#: Number of scalar coordinates before the two effect vectors in ``theta``.
N_HYPER = 5
# The integer arguments the compiled functions are called with as constants, typed int64: a
# literal (``-2``, ``N_HYPER``) is typed ``Literal[int]`` and compiles the callee once more
# beside its int64 version (about 3 s of a fresh machine's first skew-normal fit).
_FIRST_EFFECT = np.int64(N_HYPER)
_AS_PACKED = np.int64(-2)  # _logp_grad's branch: the density the data block says
_SUMMED = np.int64(-1)  # _sign_loglik's branch: the sign summed out
_PLUS = np.int64(0)
_MINUS = np.int64(1)
#: Layout of the packed data block (:func:`pack`): ``[T, S, b0_mu, b0_sd, rate_topic,
#: rate_system, rate_sigma, skew_max, centred, sign]`` followed by ``y`` (T x S,
#: row-major) and the sign shift ``h`` (one value per coordinate of ``theta``);
#: ``centred`` is 1.0 for centred system effects, 0.0 for non-centred ones;
#: ``sign`` is 0.0 when the sign of the skewness is summed out, +1.0 or -1.0 when the
#: density is that sign's term only (see :func:`pack`).
N_HEADER = 10
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Written with explicit loops, no array expressions: numba compiles them several
# times faster (the first fit on a machine pays the compilation, later ones load it).
# IEEE division (``error_model="numpy"``): a zero scale or skewness gives inf or NaN, which
# the callbacks report as a non-finite density; Python's ZeroDivisionError cannot leave a
# C callback (numba prints it and returns garbage). FMA contraction: 1.5x faster.
_jit = numba.njit(nogil=True, cache=True, fastmath={"contract"}, error_model="numpy")


def _ndtr_table() -> np.ndarray:
    r"""Polynomial pieces of :math:`\log\Phi` and the inverse Mills ratio on a grid.

    On each interval of width :data:`_TABLE_WIDTH` between :data:`_TABLE_LO` and
    :data:`_TABLE_HI`, the polynomials of degree :data:`_TABLE_DEGREE` (in the
    interval's own coordinate :math:`v \in [-1, 1]`) that interpolate
    :func:`scipy.special.log_ndtr` and :math:`\phi/\Phi` at the Chebyshev nodes; the
    Mills ratio is :math:`\sqrt{2/\pi}/\mathrm{erfcx}(-x/\sqrt2)` below 0, where
    :math:`\Phi` underflows, and :math:`\phi(x)/\Phi(x)` above. Returns the
    coefficients, shape (intervals, 2, degree + 1), lowest power first.
    """
    from scipy import special

    def values(x: np.ndarray) -> list[np.ndarray]:
        mills = np.where(
            x < 0,
            _SQRT_2_OVER_PI / special.erfcx(-np.minimum(x, 0) / math.sqrt(2.0)),
            np.exp(-0.5 * x * x) * _INV_SQRT_2PI / special.ndtr(x),
        )
        return [special.log_ndtr(x), mills]

    return chebyshev_pieces(values, _TABLE_LO, _TABLE_HI, _TABLE_WIDTH, _TABLE_DEGREE)


#: Range, interval width and degree of the piecewise polynomials of :func:`_log_ndtr_mills`
#: (their error, measured against scipy in the tests: below 1e-13 relative).
_TABLE_LO, _TABLE_HI, _TABLE_WIDTH, _TABLE_DEGREE = _LOG_NDTR_SWITCH, 8.5, 1.0 / 16.0, 8
_TABLE = _ndtr_table()


@_jit
def _log_ndtr_mills(x):
    """``log Phi(x)`` and the inverse Mills ratio ``phi(x) / Phi(x)``.

    Inside ``[_TABLE_LO, _TABLE_HI)`` from the polynomial pieces of :func:`_ndtr_table`
    (about 2.5 times faster than ``erfc``, ``log`` and ``exp``, and equal to them
    within 1e-13); outside, from ``erfc`` (``Phi`` is 1 within rounding above) or the
    asymptotic series (below ``_LOG_NDTR_SWITCH``, which is ``_TABLE_LO``).
    """
    if _TABLE_LO <= x < _TABLE_HI:
        return pieces_pair(_TABLE, _TABLE_LO, _TABLE_WIDTH, _TABLE_DEGREE, x)
    if x >= _LOG_NDTR_SWITCH:
        cdf = 0.5 * math.erfc(-x / math.sqrt(2.0))
        return math.log(cdf), math.exp(-0.5 * x * x) * _INV_SQRT_2PI / cdf
    r = 1.0 / (x * x)
    series = 1.0 - r * (1.0 - 3.0 * r * (1.0 - 5.0 * r * (1.0 - 7.0 * r)))
    return -0.5 * x * x - math.log(-x) - _LOG_SQRT_2PI + math.log(series), -x / series


@_jit
def _shape_of(abs_skewness):
    """Shape ``A = alpha(|skewness|)`` and ``dA / d|skewness|`` (Azzalini's inversion)."""
    r = (2.0 * abs_skewness / (4.0 - math.pi)) ** (1.0 / 3.0)
    mu_z = r / math.sqrt(1.0 + r * r)
    delta = mu_z / _SQRT_2_OVER_PI
    d_a = (1.0 - delta * delta) ** -1.5 / _SQRT_2_OVER_PI * (1.0 + r * r) ** -1.5
    return delta / math.sqrt(1.0 - delta * delta), d_a * r / (3.0 * abs_skewness)


@_jit
def _unpack(data):
    """Return the matrix ``y`` and the header after T, S (priors, form, sign: N_HEADER)."""
    n_t, n_s = int(data[0]), int(data[1])
    return data[N_HEADER : N_HEADER + n_t * n_s].reshape((n_t, n_s)), data[2:N_HEADER]


@_jit
def _shift_of(data):
    """Return the sign shift ``h`` of the data block (after ``y``) and whether it is not 0."""
    n_t, n_s = int(data[0]), int(data[1])
    start = N_HEADER + n_t * n_s
    half = data[start : start + N_HYPER + n_t + n_s - 2]
    for i in range(half.size):
        if half[i] != 0.0:
            return half, True
    return half, False


@_jit
def _moved(theta, half, sgn):
    """``theta + sgn * half``: the model's coordinates of sign ``sgn`` at ``phi = theta``."""
    out = np.empty(theta.size)
    for i in range(theta.size):
        out[i] = theta[i] + sgn * half[i]
    return out


@_jit
def _state(theta, data):
    """Constrained values of ``theta``: scales, |skewness|, topic and system effects."""
    y, c = _unpack(data)
    n_t, n_s = y.shape
    scales = np.empty(3)
    for j in range(3):
        scales[j] = math.exp(theta[1 + j])
    abs_skew = c[5] / (1.0 + math.exp(-theta[N_HYPER - 1]))
    topic = np.empty(n_t)
    z_sys = np.empty(n_s)
    _extend(theta, _FIRST_EFFECT, n_t, 1.0, topic)
    _extend(theta, N_HYPER + n_t - 1, n_s, 1.0, z_sys)
    return y, c, scales, abs_skew, topic, z_sys


@_jit
def _sign_loglik(y, b0, topic, system, sigma, big_a, d_topic, d_system, branch):
    """Skew-normal log-likelihood of shapes ``+A`` and ``-A``, and their gradients.

    Returns ``loglik[2]``, ``d_sigma[2]`` and ``d_a[2]`` (derivative with respect to
    the *signed* shape of each branch) and fills ``d_topic[2, T]`` and
    ``d_system[2, S]`` (derivatives with respect to the cell means; skipped when
    ``d_topic`` has no rows, as for the expansion of a draw). ``branch`` -1 computes
    both signs; 0 (+) or 1 (-) only that one, leaving the other's entries at 0.
    """
    n_t, n_s = y.shape
    with_grad = d_topic.shape[0] == 2
    loglik = np.zeros(2)
    d_sigma = np.zeros(2)
    d_a = np.zeros(2)
    delta_abs = big_a / math.sqrt(1.0 + big_a * big_a)
    k = 1.0 / math.sqrt(1.0 - 2.0 * delta_abs * delta_abs / math.pi)
    omega = sigma * k
    inv_omega = 1.0 / omega
    c_abs = delta_abs * _SQRT_2_OVER_PI
    d_delta = (1.0 + big_a * big_a) ** -1.5  # d delta / d a, even in a
    dk_ddelta_abs = k**3 * 2.0 * delta_abs / math.pi
    for b in range(2):
        if branch >= 0 and b != branch:
            continue
        sgn = 1.0 if b == 0 else -1.0
        a = sgn * big_a
        shift = sgn * c_abs
        # sums over cells: log-likelihood, g * u, g and lambda * z
        ll = s_gu = s_g = s_mz = 0.0
        n_obs = 0
        for t in range(n_t):
            base = b0 + topic[t]
            row = 0.0
            for s in range(n_s):
                val = y[t, s]
                if val != val:  # missing cell
                    continue
                n_obs += 1
                u = (val - base - system[s]) * inv_omega
                z = u + shift
                log_cdf, mills = _log_ndtr_mills(a * z)
                ll += log_cdf - 0.5 * z * z
                if with_grad:
                    g = z - a * mills
                    row += g
                    d_system[b, s] += g * inv_omega
                    s_gu += g * u
                    s_mz += mills * z
            if with_grad:
                d_topic[b, t] = row * inv_omega
                s_g += row
        loglik[b] = ll + n_obs * (math.log(2.0) - _LOG_SQRT_2PI - math.log(omega))
        if with_grad:
            d_omega = (s_gu - n_obs) * inv_omega
            d_sigma[b] = d_omega * k
            # delta = sgn * delta_abs, k is even in delta, c = delta * sqrt(2/pi)
            d_a[b] = (
                s_mz
                + d_omega * sigma * dk_ddelta_abs * sgn * d_delta
                - s_g * _SQRT_2_OVER_PI * d_delta
            )
    return loglik, d_sigma, d_a


@_jit
def _logp_grad(theta, data, grad, branch):
    r"""Log density at ``phi = theta``; writes its gradient into ``grad``.

    ``branch`` -1 is the model (the sign summed out); 0 and 1 give the joint density
    of ``phi`` and the sign ``+`` or ``-`` (the two add up to the model's density); -2
    is what the data block's ``sign`` says (0.0: -1, +1.0: 0, -1.0: 1). With a sign
    shift ``h`` in the data block (:func:`pack`), the sign ``s`` term is the model's
    at ``phi + s h`` (unit Jacobian): :math:`p(\phi) = p_+(\phi + h) + p_-(\phi - h)`;
    with ``h = 0`` (the default) ``phi`` is the model's ``theta``.
    """
    if branch == -2:  # as the data block says
        sign = data[N_HEADER - 1]
        branch = _SUMMED if sign == 0.0 else (_PLUS if sign > 0.0 else _MINUS)
    half, shifted = _shift_of(data)
    if not shifted:
        return _logp_grad_at(theta, data, grad, branch)
    if branch >= 0:
        return _logp_grad_at(_moved(theta, half, 1.0 - 2.0 * branch), data, grad, branch)
    g_minus = np.empty(grad.size)
    l_plus = _logp_grad_at(_moved(theta, half, 1.0), data, grad, _PLUS)
    l_minus = _logp_grad_at(_moved(theta, half, -1.0), data, g_minus, _MINUS)
    top = max(l_plus, l_minus)
    lse = top + math.log(math.exp(l_plus - top) + math.exp(l_minus - top))
    w = math.exp(l_plus - lse)
    for i in range(grad.size):
        grad[i] = w * grad[i] + (1.0 - w) * g_minus[i]
    return lse


@_jit
def _logp_grad_at(theta, data, grad, branch):
    """Log posterior density at ``theta`` (the model's coordinates); gradient into ``grad``.

    ``branch`` -1 is the model (the sign summed out); 0 and 1 give the joint density
    of ``theta`` and the sign ``+`` or ``-`` (half the likelihood of that sign times
    the prior; the two add up to the model's density).
    """
    y, c, scales, abs_skew, topic, z_sys = _state(theta, data)
    b0_mu, b0_sd, rate_topic, rate_system, rate_sigma, skew_max = c[0], c[1], c[2], c[3], c[4], c[5]
    centred = c[6] != 0.0
    n_t, n_s = y.shape
    b0, u = theta[0], theta[N_HYPER - 1]
    s_topic, s_system, sigma = scales[0], scales[1], scales[2]
    e = abs_skew / skew_max
    big_a, d_a_dm = _shape_of(abs_skew)
    system = np.empty(n_s)
    sys_scale = 1.0 if centred else s_system  # system effect per unit of theta
    prior_sd = s_system if centred else 1.0  # prior SD of the system coordinates
    for s in range(n_s):
        system[s] = sys_scale * z_sys[s]
    d_topic = np.zeros((2, n_t))
    d_system = np.zeros((2, n_s))
    loglik, d_sigma, d_a = _sign_loglik(
        y, b0, topic, system, sigma, big_a, d_topic, d_system, branch
    )
    if branch < 0:
        top = max(loglik[0], loglik[1])
        lse = top + math.log(math.exp(loglik[0] - top) + math.exp(loglik[1] - top))
        w0 = math.exp(loglik[0] - lse)
    else:
        lse = loglik[branch]
        w0 = 1.0 - branch
    w1 = 1.0 - w0
    g_topic = np.empty(n_t)
    g_system = np.empty(n_s)
    sum_topic = 0.0
    for t in range(n_t):
        g_topic[t] = w0 * d_topic[0, t] + w1 * d_topic[1, t]
        sum_topic += g_topic[t]
    g_sys_z = 0.0
    for s in range(n_s):
        g_system[s] = w0 * d_system[0, s] + w1 * d_system[1, s]
        g_sys_z += g_system[s] * z_sys[s]
    ss_topic = 0.0
    for i in range(N_HYPER, N_HYPER + n_t - 1):
        ss_topic += theta[i] * theta[i]
    ss_z = 0.0
    for i in range(N_HYPER + n_t - 1, theta.size):
        ss_z += theta[i] * theta[i]

    softplus_neg_u = math.log1p(math.exp(-abs(u))) + max(-u, 0.0)
    logp = (
        lse
        - math.log(2.0)
        - 0.5 * ((b0 - b0_mu) / b0_sd) ** 2
        - math.log(b0_sd)
        - _LOG_SQRT_2PI
        + math.log(rate_topic * rate_system * rate_sigma)
        - rate_topic * s_topic
        - rate_system * s_system
        - rate_sigma * sigma
        + theta[1]
        + theta[2]
        + theta[3]
        - 0.5 * ss_topic / s_topic**2
        - (n_t - 1) * (theta[1] + _LOG_SQRT_2PI)
        - 0.5 * ss_z / prior_sd**2
        - (n_s - 1) * (math.log(s_system) if centred else 0.0)
        - (n_s - 1) * _LOG_SQRT_2PI
        - 2.0 * softplus_neg_u
        - u
    )
    grad[0] = sum_topic - (b0 - b0_mu) / b0_sd**2
    grad[1] = 1.0 - rate_topic * s_topic + ss_topic / s_topic**2 - (n_t - 1)
    if centred:
        grad[2] = 1.0 - rate_system * s_system + ss_z / s_system**2 - (n_s - 1)
    else:
        grad[2] = 1.0 - rate_system * s_system + s_system * g_sys_z
    grad[3] = 1.0 - rate_sigma * sigma + sigma * (w0 * d_sigma[0] + w1 * d_sigma[1])
    g_big_a = w0 * d_a[0] - w1 * d_a[1]
    grad[4] = g_big_a * d_a_dm * skew_max * e * (1.0 - e) + 1.0 - 2.0 * e
    for i in range(N_HYPER, theta.size):
        grad[i] = -theta[i] / (s_topic**2 if i < N_HYPER + n_t - 1 else prior_sd**2)
    _extend_adjoint(g_topic, n_t, 1.0, grad, _FIRST_EFFECT)
    _extend_adjoint(g_system, n_s, sys_scale, grad, N_HYPER + n_t - 1)
    return logp


def n_coordinates(n_t: int, n_s: int) -> int:
    """Return the number of unconstrained coordinates (the length of ``theta``) of T x S."""
    return N_HYPER + n_t + n_s - 2


def pack(
    y: np.ndarray, constants: tuple[float, ...], sign: int = 0, shift: np.ndarray | None = None
) -> np.ndarray:
    """Pack the data block read by the kernel: ``[T, S, *constants, sign, *y.ravel(), *shift]``.

    ``constants`` are ``b0_mu, b0_sd, rate_topic, rate_system, rate_sigma, skew_max``
    (the resolved priors) and ``centred`` (1.0: centred system effects, 0.0:
    non-centred). ``sign`` 0 (default) makes the sampler's density the model's,
    the sign of the skewness summed out; +1 or -1 makes it the joint density of
    ``theta`` and that sign, which costs half as much and is the model's own
    wherever the other sign's likelihood is negligible
    (:data:`~bayes_ir.hierarchical.sampling.SIGN_SETTLED`). ``shift`` (default 0: the
    sampler's coordinates are the model's) is the sign shift ``h`` of :func:`mode_shift`,
    one value per coordinate: the sampler's ``phi`` stands for the model's
    ``theta = phi + s h`` under the sign ``s``, which puts the two signs' modes on top of
    each other (:func:`_logp_grad`). Keep the block alive while nutpie samples: its
    callbacks read it through a raw pointer.
    """
    y = np.asarray(y, dtype=float)
    if sign not in (-1, 0, 1):
        raise ValueError(f"sign={sign!r}: expected -1, 0 or +1")
    head = np.array([*y.shape, *constants, sign], dtype=float)
    if head.size != N_HEADER or y.ndim != 2:
        raise ValueError(f"expected a matrix and {N_HEADER - 3} constants")
    dim = n_coordinates(*y.shape)
    half = np.zeros(dim) if shift is None else np.asarray(shift, dtype=float)
    if half.shape != (dim,) or not np.isfinite(half).all():
        raise ValueError(f"shift: expected {dim} finite values")
    return np.ascontiguousarray(np.concatenate([head, y.ravel(), half]))


def logp_and_grad(
    theta: np.ndarray, data: np.ndarray, branch: int | None = None
) -> tuple[float, np.ndarray]:
    """Log posterior density (unconstrained coordinates) and its gradient.

    Parameters
    ----------
    theta
        Unconstrained point, laid out as in the module docstring.
    data
        The block of :func:`pack` (matrix with NaN for missing cells, and priors).
    branch
        -1: the model, the sign of the skewness summed out; 0 or 1: the joint density
        of ``theta`` and the sign ``+`` or ``-`` (the two add up to the model's
        density); ``None`` (default): the density nutpie samples, as the data
        block's ``sign`` says (-1 unless :func:`pack` was given a sign).

    Returns
    -------
    logp, grad
        For ``branch=-1``, equal to PyMC's ``compile_logp`` and ``compile_dlogp`` of
        the skew-normal model at the same point (Jacobians included).
    """
    theta = np.ascontiguousarray(theta, dtype=float)
    grad = np.empty_like(theta)
    return _logp_grad(theta, data, grad, -2 if branch is None else int(branch)), grad


_double_p = numba.types.CPointer(numba.types.double)
_sizes = numba.types.uint64


@numba.cfunc(
    numba.types.int64(_sizes, _double_p, _double_p, _double_p, _double_p),
    cache=True,
    error_model="numpy",
)
def logp_cfunc(dim, x_, grad_, logp_, data_):
    """Nutpie's C callback: log density and gradient (status 3/4: not finite)."""
    header = numba.carray(data_, (2,))
    data = numba.carray(data_, (N_HEADER + int(header[0]) * int(header[1]) + dim,))
    grad = numba.carray(grad_, (dim,))
    value = _logp_grad(numba.carray(x_, (dim,)), data, grad, _AS_PACKED)
    numba.carray(logp_, (1,))[0] = value
    for i in range(dim):
        if not math.isfinite(grad[i]):
            return 3
    return 0 if math.isfinite(value) else 4


@numba.cfunc(
    numba.types.int64(_sizes, _sizes, _double_p, _double_p, _double_p),
    cache=True,
    error_model="numpy",
)
def expand_cfunc(dim, n_out, x_, out_, data_):
    """Write the reported values of one draw (nutpie's C callback).

    ``out`` receives them in the order of :func:`expanded_layout`: the values at
    ``phi`` (the model's at ``theta = phi`` when the data block has no sign shift; with
    one, :func:`shifted_draws` moves them to the sign drawn) and the sign log-odds
    given ``phi``.
    """
    header = numba.carray(data_, (2,))
    data = numba.carray(data_, (N_HEADER + int(header[0]) * int(header[1]) + dim,))
    theta = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_out,))
    y, c, scales, abs_skew, topic, z_sys = _state(theta, data)
    n_t, n_s = y.shape
    out[0] = theta[0]
    out[1], out[2], out[3] = scales[0], scales[1], scales[2]
    out[4] = abs_skew
    for t in range(n_t):
        out[5 + t] = topic[t]
    sys_scale = 1.0 if c[6] != 0.0 else scales[1]
    for s in range(n_s):
        out[5 + n_t + s] = sys_scale * z_sys[s]
    half, shifted = _shift_of(data)
    if shifted:  # each sign's term at its own point: their joint densities differ
        grad = np.empty(dim)
        plus = _logp_grad_at(_moved(theta, half, 1.0), data, grad, _PLUS)
        out[5 + n_t + n_s] = plus - _logp_grad_at(_moved(theta, half, -1.0), data, grad, _MINUS)
        return 0
    big_a = _shape_of(abs_skew)[0]
    no_grad = np.zeros((0, 0))
    loglik = _sign_loglik(y, theta[0], topic, out[5 + n_t : 5 + n_t + n_s], scales[2], big_a,
                          no_grad, no_grad, _SUMMED)[0]  # fmt: skip
    out[5 + n_t + n_s] = loglik[0] - loglik[1]
    return 0


def expanded_layout(n_t: int, n_s: int) -> tuple[list[str], list[tuple[int, ...]]]:
    """Names and shapes of the values :func:`expand_cfunc` writes, in its order."""
    scalars = ["b0", "sigma_topic", "sigma_system", "sigma", "abs_skewness"]
    names = [*scalars, "topic_effect", "system_effect", SIGN_LOGODDS]
    return names, [()] * len(scalars) + [(n_t,), (n_s,), ()]


def mode_shift(modes: np.ndarray) -> np.ndarray:
    r"""Sign shift ``h`` that puts the two signs' modes on top of each other.

    Half the difference of the modes of :func:`sign_modes` (``modes[0]`` of sign +,
    ``modes[1]`` of sign -) in ``b0`` and the effects' coordinates; 0 for the three log
    scales (the non-centred system scale's joint mode is degenerate) and the logit of
    the skewness (its two modes differ in spread, not only in place: on a 10 x 6 table,
    at logits +4.1 and -1.0, shifting it halved the ESS of the skewness; on rb04 they
    nearly coincide). In the sampler's coordinates ``phi`` both modes then lie at their
    midpoint in those coordinates.

    Notes
    -----
    The model's density in ``theta`` is the sum of one term per sign, each with a mode
    of its own (the effects settle differently under a right and a left skew), and a
    chain crosses from one to the other rarely, through a skewness near 0 or a
    symmetric fit of the effects. Sampling ``phi`` and the sign, with
    ``theta = phi + s h`` (a translation for each sign: unit Jacobian, so the joint
    posterior of ``theta`` and the sign is the model's), the two terms overlap in
    ``phi`` and the sign given ``phi`` is drawn afresh at every draw. On rb04 (50 x 45,
    modes 0.3 nats apart) the SD of the sign log-odds fell from 17.6 to 4.0 and the
    bulk / tail ESS of the skewness in 4 x 10,000 draws rose from 9,500 / 7,700 to about
    24,000 / 35,000, at the same cost per gradient.
    """
    half = 0.5 * (np.asarray(modes[0], dtype=float) - np.asarray(modes[1], dtype=float))
    half[1:N_HYPER] = 0.0
    return half


def _extended(coords: np.ndarray, start: int, n: int) -> np.ndarray:
    """Return the ``n`` zero-sum values of ``coords[start:start + n - 1]`` (:func:`_extend`)."""
    out = np.empty(n)
    _extend(coords, start, n, 1.0, out)
    return out


def shifted_draws(
    draws: dict[str, np.ndarray], sign: np.ndarray, data: np.ndarray
) -> dict[str, np.ndarray]:
    """Move the reported values at ``phi`` to the model's ``theta = phi + s h``.

    Parameters
    ----------
    draws
        ``b0``, ``sigma_system``, ``abs_skewness`` (chain, draw), ``topic_effect`` and
        ``system_effect`` (chain, draw, T or S) as :func:`expand_cfunc` writes them.
    sign
        The sign ``s`` of each draw (+1.0 or -1.0, chain x draw).
    data
        The data block sampled (:func:`pack`); without a shift the draws are returned
        unchanged.

    Returns
    -------
    The same values at ``theta``: ``b0`` and the effects move by the shift (the
    zero-sum map is linear; non-centred system effects by ``sigma_system`` times it),
    ``abs_skewness`` by the shift of its logit (0 from :func:`mode_shift`).
    """
    n_t, n_s = int(data[0]), int(data[1])
    start = N_HEADER + n_t * n_s
    half = np.asarray(data[start : start + n_coordinates(n_t, n_s)], dtype=float)
    if not half.any():
        return draws
    s = np.asarray(sign, dtype=float)
    skew_max = float(data[7])
    centred = data[8] != 0.0
    topic = _extended(half, N_HYPER, n_t)
    system = _extended(half, N_HYPER + n_t - 1, n_s)
    out = dict(draws)
    out["b0"] = draws["b0"] + s * half[0]
    m = np.asarray(draws["abs_skewness"], dtype=float) / skew_max
    logit = np.log(m) - np.log1p(-m) + s * half[N_HYPER - 1]
    out["abs_skewness"] = skew_max / (1.0 + np.exp(-logit))
    out["topic_effect"] = draws["topic_effect"] + s[..., None] * topic
    sys_scale = 1.0 if centred else np.asarray(draws["sigma_system"])[..., None]
    out["system_effect"] = draws["system_effect"] + s[..., None] * sys_scale * system
    return out


def initial_point(n_t: int, n_s: int, b0_mu: float, rates: tuple[float, float, float], rng):
    """Draw a starting point: PyMC's rule (prior location + U(-1, 1)) in ``theta``."""
    theta = rng.uniform(-1.0, 1.0, n_coordinates(n_t, n_s))
    theta[0] += b0_mu
    theta[1:4] -= np.log(np.asarray(rates, dtype=float))  # log prior mean 1/rate
    return theta


#: Half-width of the box of :func:`sign_modes` for the log scales and the logit of the
#: skewness (a factor e^12 around each scale's prior mean).
_MODE_LOG_RANGE = 12.0


def sign_modes(data: np.ndarray, b0_mu: float, rates: tuple[float, float, float]):
    r"""Modes of the joint density of ``theta`` and each sign of the skewness.

    The model sums the sign out, so its density is the sum of two terms, one per
    sign, and each has its own mode in ``theta``: the topic effects, ``b0`` and the
    scales settle differently under a right and a left skew. With many cells the two
    modes are sharp and far apart, and the valley between them (through a skewness
    near 0) is deep, so a chain started in the basin of the wrong sign does not leave
    it. On Robust04 AP (249 x 110) the modes lie at skewness +0.17 and -0.13, 46
    nats apart: chains split between the two basins by the seed (R-hat 1.56).

    Parameters
    ----------
    data
        The block of :func:`pack`.
    b0_mu, rates
        Prior location of ``b0`` and the rates of the three scales (start of the
        search: PyMC's initial point without jitter).

    Returns
    -------
    modes, logps, sds
        ``modes[b]``: the maximum of the density of sign ``b`` (0: +, 1: -), found by
        L-BFGS with the kernel's gradient (the log scales and the logit of the
        skewness kept within :data:`_MODE_LOG_RANGE` of their prior location), with
        the non-centred system scale moved
        to the SD of the system effects (the joint mode of a non-centred scale is
        degenerate); ``logps[b]``: the density there; ``sds[b]``: a scale per
        coordinate for jittering starts (conditional SDs: the curvature at the mode
        for the five scalars, :math:`\sigma/\sqrt S` for topic effects and
        :math:`\sigma/\sqrt T` for system effects, divided by :math:`\chi` when they
        are non-centred).
    """
    from scipy.optimize import minimize

    n_t, n_s = int(data[0]), int(data[1])
    start = np.zeros(N_HYPER + n_t + n_s - 2)
    start[0] = b0_mu
    start[1:4] = -np.log(np.asarray(rates, dtype=float))
    # the scales within e^12 of their prior means and |skewness| off 0 and its bound: on
    # tiny or coarse tables the joint density grows without end as a scale goes to 0
    # with its effects (a funnel's neck), where no chain should start
    bounds = [(None, None)] * start.size
    bounds[1:5] = [(v - _MODE_LOG_RANGE, v + _MODE_LOG_RANGE) for v in (*start[1:4], 0.0)]
    modes, logps, sds = [], [], []
    for branch in (0, 1):

        def negative(x, b=branch):
            value, grad = logp_and_grad(x, data, b)
            if not (math.isfinite(value) and np.isfinite(grad).all()):
                return math.inf, np.zeros_like(grad)  # (a line search steps back)
            return -value, -grad

        x = minimize(negative, start, jac=True, method="L-BFGS-B", bounds=bounds).x
        # a scale pressed against its bound has no mode: start it at its prior location
        pressed = np.abs(x[1:5] - start[1:5]) > _MODE_LOG_RANGE - 1e-3
        x[1:5][pressed] = start[1:5][pressed]
        centred = data[N_HEADER - 2] != 0.0
        spread = math.exp(x[2])
        if not centred:
            zs = x[N_HYPER + n_t - 1 :]
            system = np.empty(n_s)
            _extend(x, N_HYPER + n_t - 1, n_s, spread, system)
            spread = max(math.sqrt(float(system @ system) / (n_s - 1)), 1e-12)
            zs *= math.exp(x[2]) / spread
            x[2] = math.log(spread)
        sd = np.empty_like(x)
        step = 1e-4
        for i in range(N_HYPER):  # curvature of the scalars by finite differences
            shifted = x.copy()
            shifted[i] += step
            curv = (negative(shifted)[1][i] - negative(x)[1][i]) / step
            sd[i] = min(1.0 / math.sqrt(curv), 1.0) if curv > 0 else 0.1
        sigma = math.exp(x[3])
        sd[N_HYPER : N_HYPER + n_t - 1] = sigma / math.sqrt(n_s)
        sd[N_HYPER + n_t - 1 :] = sigma / ((1.0 if centred else spread) * math.sqrt(n_t))
        modes.append(x)
        logps.append(-negative(x)[0])
        sds.append(sd)
    return np.array(modes), np.array(logps), np.array(sds)
