r"""Numba pieces shared by the families' kernels: the crossed effects and their priors.

Every family sampled by a kernel of this package has the linear predictor
:math:`\eta_{ts} = b_0 + a_t + c_s` on its link scale, with the priors of the
Gaussian model (:mod:`bayes_ir.hierarchical.priors`) stated on that scale:

.. math::

    b_0 \sim N(\mu_0, s_0), \quad \tau \sim \mathrm{Exp}(\lambda_\tau), \quad
    \chi \sim \mathrm{Exp}(\lambda_\chi), \quad
    a \sim \mathrm{ZeroSumNormal}(\tau), \quad c \sim \mathrm{ZeroSumNormal}(\chi).

Unpooled systems (``fit(pooling="none")``): :math:`c \sim \mathrm{ZeroSumNormal}(s_c)`
with a fixed scale :math:`s_c` (:data:`~.logit.UNPOOLED_SD`), so no :math:`\chi` to learn
from the system effects themselves.

Unconstrained coordinates (the order of ``theta``): ``b0`` (the intercept, in the levels
form below), ``log tau``, ``log chi`` (pooled systems only: :func:`n_crossed` counts
these scalars), the family's own scalars, the topic coordinates, the ``S - 1`` free
coordinates of the system effects, then the family's own vectors. The topics take one of
two forms, as the data block says:

- *zero-sum* (the Gaussian model's): ``T - 1`` free coordinates, mapped to the effects
  by PyMC's zero-sum transform (an isometry, :func:`_extend`), centred (the coordinates
  are the effects, prior :math:`N(0, \tau)`);
- *levels* (the logit families'): ``T`` coordinates, one per topic, and topic effects
  :math:`a_t \sim N(0, \tau)` independent (brms' ``(1 | topic)``) added to the intercept
  :math:`b_0 \sim N(\mu_0, s_0)`. A topic the data inform is *centred on the intercept*
  (its coordinate is its level :math:`u_t = b_0 + a_t \sim N(b_0, \tau)`, the
  hierarchical centring of Gelfand, Sahu and Carlin 1995); one they barely inform (every
  outcome 0, say: an item no system solved) is non-centred (:math:`a_t = \tau u_t`). The
  reported ``b0`` and topic effects are the zero-sum ones, :math:`b_0 + \bar a` and
  :math:`a_t - \bar a` (:func:`reported_crossed`); the topic effects' prior is then
  exactly ``ZeroSumNormal(tau)``, and the reported ``b0``'s prior is
  :math:`N(\mu_0, \sqrt{s_0^2 + \tau^2/T})`.

  Why: with zero-sum effects, ``b0`` is pinned by every cell given the topic effects but
  moves with the mean of the topics the data barely inform, a long diagonal ridge a
  diagonal mass matrix cannot follow. On LiveCodeBench pass@1 (400 problems x 45 models,
  108 problems solved by none, k of 10 samples) the zero-sum form gave ``b0`` a bulk ESS
  of 392 in 11,108 draws (diagnostics failed), the levels 9,011
  (``tests/hierarchical/families/test_topic_levels.py`` fits that table).

Unpooled systems' effects are non-centred, pooled ones centred or non-centred as the
header says.

Data block: the header (:data:`N_CROSSED_HEADER` values: ``T, S, b0_mu, b0_sd,
rate_topic, rate_system, zero_sum_topics, centred_system, system_sd``; ``system_sd`` 0:
pooled, else the fixed scale :math:`s_c` of unpooled systems), the family's own header
and matrices, then ``T`` values closing the block: 1 for a topic centred on the
intercept, 0 for a non-centred one (read only in the levels form). :func:`pack_header`
returns the header and those ``T`` values; :func:`assemble` places them.

References
----------
Gelfand, A. E., Sahu, S. K., Carlin, B. P. (1995). Efficient parametrisations for normal
linear mixed models. *Biometrika* 82(3), 479-488.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bayes_ir.hierarchical.families._vmath import jit

__all__ = [
    "EXPAND_SIGNATURE",
    "LOGP_SIGNATURE",
    "N_CROSSED",
    "N_CROSSED_HEADER",
    "assemble",
    "chebyshev_pieces",
    "crossed_effects",
    "crossed_prior",
    "expit",
    "exponential_log",
    "free_vector_prior",
    "logistic_prior",
    "n_crossed",
    "n_topic_coordinates",
    "nutpie_status",
    "pieces_pair",
    "pack_header",
    "reported_crossed",
    "softplus_expit",
    "vectors_start",
    "with_gradient",
]

#: Unconstrained scalars of the crossed part: ``b0, log sigma_topic, log sigma_system``
#: (pooled systems; :func:`n_crossed` gives the count of a data block).
N_CROSSED = 3
#: Values of the crossed part of the data block header.
N_CROSSED_HEADER = 9
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# Positions of log sigma_topic and log sigma_system in theta, typed int64: a literal argument
# is typed ``Literal[int]`` and compiles :func:`_effect_prior` once per value.
_LOG_SIGMA_TOPIC = np.int64(1)
_LOG_SIGMA_SYSTEM = np.int64(2)


@jit
def _extend(theta, start, n, scale, out):
    """PyMC's zero-sum backward transform of ``theta[start:start+n-1]``, times ``scale``."""
    total = 0.0
    for i in range(n - 1):
        total += theta[start + i]
    norm = total / (math.sqrt(n) + n)
    for i in range(n - 1):
        out[i] = scale * (theta[start + i] - norm)
    out[n - 1] = -scale * total / math.sqrt(n)


@jit
def _extend_adjoint(grad, n, scale, out, start):
    """Add ``scale`` times the gradient over the free values of a gradient over n values."""
    head = 0.0
    for i in range(n - 1):
        head += grad[i]
    shift = head / (math.sqrt(n) + n) + grad[n - 1] / math.sqrt(n)
    for i in range(n - 1):
        out[start + i] += scale * (grad[i] - shift)


def chebyshev_pieces(values, lo: float, hi: float, width: float, degree: int) -> np.ndarray:
    r"""Piecewise polynomials interpolating functions at the Chebyshev nodes of each interval.

    Parameters
    ----------
    values
        Callable: an array of points to the list of the functions' values there.
    lo, hi, width, degree
        Range, interval width and polynomial degree.

    Returns
    -------
    numpy.ndarray
        Coefficients, shape (intervals, functions, degree + 1), lowest power first, in
        each interval's own coordinate :math:`v \in [-1, 1]` (evaluate by Horner's rule).
    """
    nodes = np.cos(np.pi * (np.arange(degree + 1) + 0.5) / (degree + 1))
    n = round((hi - lo) / width)
    x = lo + width * (np.arange(n)[:, None] + 0.5 + 0.5 * nodes[None, :])
    vander = np.vander(nodes, degree + 1, increasing=True)
    pieces = [np.linalg.solve(vander, f.T).T for f in values(x)]
    return np.ascontiguousarray(np.stack(pieces, axis=1))


@jit
def n_crossed(data):
    """Unconstrained scalars of the crossed part: 3, or 2 when the systems are unpooled."""
    return N_CROSSED if data[8] == 0.0 else N_CROSSED - 1


@jit
def n_topic_coordinates(data):
    """Coordinates of the topics: ``T - 1`` (zero-sum form) or ``T`` (levels)."""
    n_t = int(data[0])
    return n_t - 1 if data[6] != 0.0 else n_t


@jit
def vectors_start(data, n_scalars):
    """Position in ``theta`` of the first of the family's own vectors."""
    return n_crossed(data) + n_scalars + n_topic_coordinates(data) + int(data[1]) - 1


@jit
def crossed_effects(theta, data, n_scalars, topic, system):
    """Fill ``topic`` (T) and ``system`` (S) with the effects of ``theta``; return tau, chi.

    In the levels form the topic effects are the independent :math:`a_t` (not zero-sum),
    to be added to ``theta[0]``. ``chi`` is the fixed ``system_sd`` of unpooled systems.
    """
    n_t, n_s = int(data[0]), int(data[1])
    tau = math.exp(theta[1])
    pooled = data[8] == 0.0
    chi = math.exp(theta[2]) if pooled else data[8]
    start = n_crossed(data) + n_scalars
    if data[6] != 0.0:
        _extend(theta, start, n_t, 1.0, topic)
    else:
        mask = data[data.size - n_t :]
        for t in range(n_t):
            u = theta[start + t]
            topic[t] = u - theta[0] if mask[t] != 0.0 else tau * u
    start += n_topic_coordinates(data)
    _extend(theta, start, n_s, 1.0 if pooled and data[7] != 0.0 else chi, system)
    return tau, chi


@jit
def reported_crossed(theta, data, n_scalars, topic, system):
    """Fill the reported (zero-sum) topic and system effects; return ``b0``, tau, chi."""
    tau, chi = crossed_effects(theta, data, n_scalars, topic, system)
    b0 = theta[0]
    if data[6] == 0.0:
        mean = topic.mean()
        b0 += mean
        for t in range(topic.size):
            topic[t] -= mean
    return b0, tau, chi


@jit
def _effect_prior(theta, start, n, scale, centred, rate, g_effect, effect, grad, slot):
    """Prior, Jacobian and chain rule of one effect vector and its scale (log ``slot``)."""
    ss = 0.0
    for i in range(start, start + n - 1):
        ss += theta[i] * theta[i]
    logp = math.log(rate) - rate * scale + theta[slot] - (n - 1) * _LOG_SQRT_2PI
    grad[slot] = 1.0 - rate * scale
    if centred:
        logp += -0.5 * ss / (scale * scale) - (n - 1) * theta[slot]
        grad[slot] += ss / (scale * scale) - (n - 1)
        for i in range(start, start + n - 1):
            grad[i] = -theta[i] / (scale * scale)
        _extend_adjoint(g_effect, n, 1.0, grad, start)
    else:
        logp += -0.5 * ss
        dot = 0.0
        for j in range(n):
            dot += g_effect[j] * effect[j]
        grad[slot] += dot
        for i in range(start, start + n - 1):
            grad[i] = -theta[i]
        _extend_adjoint(g_effect, n, scale, grad, start)
    return logp


@jit
def _levels_prior(theta, data, start, tau, g_topic, topic, grad):
    """Prior of the topic levels and tau (with its Jacobian); their gradient.

    Returns the log prior and the part of the derivative with respect to ``b0`` that
    passes through the topics (module docstring).
    """
    n_t = int(data[0])
    rate = data[4]
    mask = data[data.size - n_t :]
    inv = 1.0 / (tau * tau)
    logp = math.log(rate) - rate * tau + theta[1] - n_t * _LOG_SQRT_2PI
    g_tau = 1.0 - rate * tau
    g_b0 = 0.0
    for t in range(n_t):
        a = topic[t]
        if mask[t] != 0.0:  # u = b0 + a ~ N(b0, tau)
            logp += -0.5 * a * a * inv - theta[1]
            g_tau += a * a * inv - 1.0
            grad[start + t] = g_topic[t] - a * inv
            g_b0 += a * inv
        else:  # a = tau u, u ~ N(0, 1)
            u = theta[start + t]
            logp += -0.5 * u * u
            g_tau += g_topic[t] * a
            grad[start + t] = g_topic[t] * tau - u
            g_b0 += g_topic[t]
    grad[1] = g_tau
    return logp, g_b0


@jit
def crossed_prior(theta, data, n_scalars, g_topic, g_system, topic, system, tau, chi, grad):
    r"""Log prior of the crossed part (with Jacobians); writes its part of the gradient.

    ``g_topic`` and ``g_system`` are the gradients of the log-likelihood with respect to
    the topic and system effects (as :func:`crossed_effects` fills them); every cell's
    predictor holds ``b0``, its topic's effect and its system's effect. Writes ``grad``
    at ``b0``, ``log tau``, ``log chi`` (pooled systems) and every effect coordinate.
    """
    n_t, n_s = int(data[0]), int(data[1])
    b0_mu, b0_sd = data[2], data[3]
    z = (theta[0] - b0_mu) / b0_sd
    logp = -0.5 * z * z - math.log(b0_sd) - _LOG_SQRT_2PI
    start = n_crossed(data) + n_scalars
    if data[6] != 0.0:
        g_b0 = 0.0
        for t in range(n_t):
            g_b0 += g_topic[t]
        # centred (data[6] != 0 here): a literal True would compile _effect_prior twice
        logp += _effect_prior(theta, start, n_t, tau, data[6] != 0.0, data[4], g_topic, topic,
                              grad, _LOG_SIGMA_TOPIC)  # fmt: skip
    else:
        prior, g_b0 = _levels_prior(theta, data, start, tau, g_topic, topic, grad)
        logp += prior
    grad[0] = g_b0 - z / b0_sd
    start += n_topic_coordinates(data)
    if data[8] == 0.0:
        logp += _effect_prior(theta, start, n_s, chi, data[7] != 0.0, data[5],
                              g_system, system, grad, _LOG_SIGMA_SYSTEM)  # fmt: skip
    else:  # unpooled: a standard ZeroSumNormal of the coordinates, times the fixed scale
        prior, _ = free_vector_prior(theta, start, n_s, chi, g_system, system, grad)
        logp += prior
    return logp


@jit
def exponential_log(theta, i, rate, grad, g):
    """Exponential(rate) prior of ``exp(theta[i])`` with its log Jacobian.

    Sets ``grad[i]`` to ``g`` (the likelihood's derivative with respect to ``theta[i]``)
    plus the prior's; returns the log prior.
    """
    value = math.exp(theta[i])
    grad[i] = g + 1.0 - rate * value
    return math.log(rate) - rate * value + theta[i]


@jit
def free_vector_prior(theta, start, n, scale, g_effect, effect, grad):
    r"""Return the standard ZeroSumNormal prior of the coordinates ``theta[start:start+n-1]``.

    The effect is ``scale * extend(coordinates)``; adds the chain rule of ``g_effect``
    (gradient with respect to the ``n`` effects) to the coordinates' gradient and
    returns (log prior, d/d log scale of the likelihood part).
    """
    ss = 0.0
    for i in range(start, start + n - 1):
        ss += theta[i] * theta[i]
        grad[i] = -theta[i]
    _extend_adjoint(g_effect, n, scale, grad, start)
    dot = 0.0
    for j in range(n):
        dot += g_effect[j] * effect[j]
    return -0.5 * ss - (n - 1) * _LOG_SQRT_2PI, dot


@jit
def logistic_prior(x):
    r"""Return the standard logistic log density at ``x`` and its derivative.

    The prior of a probability's logit that is uniform on the probability (brms'
    ``logistic(0, 1)`` default of ``zoi`` and ``coi`` intercepts):
    :math:`\log p(x) = -x - 2\log(1 + e^{-x})`.
    """
    e = math.exp(-abs(x))
    logp = -abs(x) - 2.0 * math.log1p(e)
    sig = (1.0 if x >= 0 else e) / (1.0 + e)  # expit(x)
    return logp, 1.0 - 2.0 * sig


_double_p = numba.types.CPointer(numba.types.double)
#: Numba signature of nutpie's log-density callback: (dim, x, grad, logp, user data).
LOGP_SIGNATURE = numba.types.int64(numba.types.uint64, _double_p, _double_p, _double_p, _double_p)
#: Numba signature of nutpie's expansion callback: (dim, n_out, x, out, user data).
EXPAND_SIGNATURE = numba.types.int64(
    numba.types.uint64, numba.types.uint64, _double_p, _double_p, _double_p
)


@jit
def nutpie_status(value, grad):
    """Status a logp callback returns to nutpie: 0, or 3 / 4 for a non-finite gradient / value."""
    for i in range(grad.size):
        if not math.isfinite(grad[i]):
            return 3
    return 0 if math.isfinite(value) else 4


def with_gradient(logp_grad, theta: np.ndarray, data: np.ndarray) -> tuple[float, np.ndarray]:
    """Call a kernel's ``logp_grad(theta, data, grad)``; return the density and the gradient."""
    theta = np.ascontiguousarray(theta, dtype=float)
    grad = np.empty_like(theta)
    return logp_grad(theta, data, grad), grad


def pack_header(shape: tuple[int, int], b0: tuple[float, float], rates: tuple[float, float],
                topics: np.ndarray | None, centred_system: bool,
                system_sd: float = 0.0) -> np.ndarray:  # fmt: skip
    """Return the crossed part of a data block: the header, then ``T`` topic flags.

    ``topics``: None for zero-sum centred topics, else one bool per topic (levels form:
    True centred on the intercept). ``system_sd``: 0 for pooled systems, else the fixed
    prior scale of unpooled ones. :func:`assemble` places the two parts in the block.
    """
    n_t = int(shape[0])
    flags = np.ones(n_t) if topics is None else np.asarray(topics, dtype=float)
    if flags.shape != (n_t,):
        raise ValueError(f"expected {n_t} topic flags, got shape {flags.shape}")
    zero_sum = float(topics is None)
    head = [*shape, *b0, *rates, zero_sum, float(centred_system), system_sd]
    return np.concatenate([np.asarray(head, dtype=float), flags])


def assemble(crossed: np.ndarray, parts: list) -> np.ndarray:
    """Return a kernel's data block: the crossed header, ``parts``, the topic flags.

    ``crossed`` comes from :func:`pack_header`; ``parts`` are the family's own header and
    matrices, in its order. Raises ValueError when ``crossed`` is not such a part.
    """
    crossed = np.asarray(crossed, dtype=float)
    if crossed.ndim != 1 or crossed.size < N_CROSSED_HEADER:
        raise ValueError("expected the crossed part of a data block (pack_header)")
    n_t = int(crossed[0])
    if crossed.size != N_CROSSED_HEADER + n_t:
        raise ValueError(f"expected {N_CROSSED_HEADER} header values and {n_t} topic flags")
    head, flags = crossed[:N_CROSSED_HEADER], crossed[N_CROSSED_HEADER:]
    body = [np.asarray(p, dtype=float).ravel() for p in parts]
    return np.ascontiguousarray(np.concatenate([head, *body, flags]))


@jit
def pieces_pair(table, lo, width, degree, x):
    """Values at ``x`` of the two functions of a :func:`chebyshev_pieces` table (Horner's rule).

    ``x`` must lie in the table's range ``[lo, lo + width * intervals)``.
    """
    pos = (x - lo) * (1.0 / width)
    j = int(pos)
    v = 2.0 * (pos - j) - 1.0
    first = table[j, 0, degree]
    second = table[j, 1, degree]
    for i in range(degree - 1, -1, -1):
        first = first * v + table[j, 0, i]
        second = second * v + table[j, 1, i]
    return first, second


@jit
def expit(x):
    """``1 / (1 + exp(-x))``: the second function of :func:`softplus_expit` alone."""
    if _LO <= x < _HI:
        pos = (x - _LO) * (1.0 / _WIDTH)
        j = int(pos)
        v = 2.0 * (pos - j) - 1.0
        sig = _TABLE[j, 1, _DEGREE]
        for i in range(_DEGREE - 1, -1, -1):
            sig = sig * v + _TABLE[j, 1, i]
        return sig
    e = math.exp(-abs(x))
    return (1.0 if x >= 0 else e) / (1.0 + e)


def _logistic_table() -> np.ndarray:
    r"""Polynomial pieces of :math:`\log(1 + e^x)` and :math:`1/(1 + e^{-x})` on a grid.

    On each interval of width :data:`_WIDTH` between :data:`_LO` and :data:`_HI`, the
    polynomials of degree :data:`_DEGREE` (in the interval's own coordinate
    :math:`v \in [-1, 1]`) interpolating both functions at the Chebyshev nodes; shape
    (intervals, 2, degree + 1), lowest power first. Their error, measured against numpy
    in the tests, is below 1e-14 relative.
    """
    from scipy import special

    def values(x: np.ndarray) -> list[np.ndarray]:
        return [np.logaddexp(0.0, x), special.expit(x)]

    return chebyshev_pieces(values, _LO, _HI, _WIDTH, _DEGREE)


#: Range, interval width and degree of the pieces of :func:`softplus_expit`.
_LO, _HI, _WIDTH, _DEGREE = -16.0, 16.0, 1.0 / 32.0, 5
_TABLE = _logistic_table()


@jit
def softplus_expit(x):
    r"""``log(1 + exp(x))`` and ``expit(x)`` (the derivative of the first).

    Inside ``[-16, 16)`` from the polynomial pieces of :func:`_logistic_table` (about
    2.5 times faster than ``exp`` and ``log1p``, equal to them within 1e-14); outside
    from ``exp`` and ``log1p``. A Bernoulli cell costs one call: its log-likelihood is
    :math:`y\eta - \log(1 + e^\eta)`, its gradient :math:`y - \mathrm{expit}(\eta)`.
    """
    if _LO <= x < _HI:
        return pieces_pair(_TABLE, _LO, _WIDTH, _DEGREE, x)
    e = math.exp(-abs(x))
    return max(x, 0.0) + math.log1p(e), (1.0 if x >= 0 else e) / (1.0 + e)
