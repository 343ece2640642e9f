r"""Rank correlations between two rankings of systems: Kendall tau and tau_AP.

Both functions take *scores* (higher is better), one value per system, in the same
system order; pass ``ranks=True`` when the vectors are ranks (1 = best). The batched
kernels :func:`_tau_batch` and :func:`_tau_ap_batch` compare many rankings at once and
are what the estimators, intervals and the simulation study use.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from bayes_ir import validate
from bayes_ir.errors import InsufficientDataError, OptionError

__all__ = ["kendall_tau", "tau_ap"]


def _as_scores(x: Sequence[float] | np.ndarray, *, ranks: bool, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise OptionError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise OptionError(f"{name} holds NaN or infinite values")
    return -arr if ranks else arr


def _check_pair(a: np.ndarray, b: np.ndarray) -> None:
    if a.shape != b.shape:
        raise OptionError(f"the two rankings differ in length: {a.size} and {b.size}")
    if a.size < 2:
        raise InsufficientDataError(f"a rank correlation needs at least 2 systems, got {a.size}")


def kendall_tau(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    ranks: bool = False,
    variant: str = "b",
) -> float:
    r"""Kendall's rank correlation between two rankings of the same systems.

    Parameters
    ----------
    x, y
        Scores of the same systems in the same order (higher is better), or ranks
        (1 = best) with ``ranks=True``. Symmetric: ``kendall_tau(x, y) == kendall_tau(y, x)``.
    ranks
        Whether ``x`` and ``y`` are ranks rather than scores.
    variant
        ``"b"`` (default) or ``"c"``, as in :func:`scipy.stats.kendalltau`.

    Returns
    -------
    float
        tau in [-1, 1]; NaN when one of the rankings is constant (every system tied).

    Notes
    -----
    With :math:`C` concordant and :math:`D` discordant pairs among the
    :math:`m(m-1)/2` pairs of systems,

    .. math::

        \tau_b = \frac{C - D}{\sqrt{(C + D + T_x)(C + D + T_y)}},

    where :math:`T_x` (:math:`T_y`) counts the pairs tied only in ``x`` (``y``).
    Without ties this is :math:`\tau = 1 - 4D/(m(m-1))`. Ties are handled by
    :func:`scipy.stats.kendalltau` (tau-b). The expected-correlation estimators of
    :func:`bayes_ir.reliability.expected_correlation` and the simulation study use the
    convention of Urbano and Marrero's code instead: :math:`1 - 4D/(m(m-1))`, i.e. a
    tie is never a discordance (identical to tau-b when there are no ties).

    References
    ----------
    M. G. Kendall, "The treatment of ties in ranking problems", Biometrika 33(3),
    239-251, 1945.
    """
    a = _as_scores(x, ranks=ranks, name="x")
    b = _as_scores(y, ranks=ranks, name="y")
    _check_pair(a, b)
    validate.choice("variant", variant, ("b", "c"))
    return float(stats.kendalltau(a, b, variant=variant).statistic)


def tau_ap(
    truth: Sequence[float] | np.ndarray,
    estimate: Sequence[float] | np.ndarray,
    *,
    ranks: bool = False,
) -> float:
    r"""AP rank correlation of Yilmaz, Aslam and Robertson: swaps at the top cost more.

    tau_AP is asymmetric: the positions come from ``estimate`` (e.g. the ranking
    observed on a topic set), and ``truth`` (e.g. the true ranking) says which of the
    systems above each position are correctly above it.

    Parameters
    ----------
    truth
        Scores (higher is better) of the reference ranking, one per system.
    estimate
        Scores of the ranking being judged, same systems in the same order.
    ranks
        Whether the vectors are ranks (1 = best) rather than scores.

    Returns
    -------
    float
        tau_AP in [-1, 1].

    Notes
    -----
    Sort the systems by ``estimate`` (best first). For the system at position
    :math:`i = 2, \ldots, m`, let :math:`C(i)` be the number of systems above it in
    the estimated ranking that are also above it in the true ranking. Then

    .. math::

        \tau_{AP} = \frac{2}{m-1} \sum_{i=2}^{m} \frac{C(i)}{i-1} - 1.

    Ties are broken by the order in which the systems are given (a stable sort), in
    both rankings, exactly as in Urbano and Marrero's R code (``order()``). Without
    ties, ``tau_ap(x, x) == 1`` and ``tau_ap(x, -x) == -1``.

    References
    ----------
    E. Yilmaz, J. A. Aslam and S. Robertson, "A new rank correlation coefficient for
    information retrieval", SIGIR 2008, 587-594.
    """
    t = _as_scores(truth, ranks=ranks, name="truth")
    e = _as_scores(estimate, ranks=ranks, name="estimate")
    _check_pair(t, e)
    return float(_tau_ap_batch(t[None, :], e[None, :])[0])


# ---------------------------------------------------------------------- batched kernels
def _positions(scores: np.ndarray) -> np.ndarray:
    """0-based position of each system in the descending ranking (stable: ties by index)."""
    order = np.argsort(-scores, axis=-1, kind="stable")
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.arange(scores.shape[-1])[None, :], axis=-1)
    return pos


_CHUNK_CELLS = 4_000_000  # rows x m x m cells per chunk of the batched kernels


def _broadcast_rows(truth: np.ndarray, estimate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    truth = np.atleast_2d(np.asarray(truth, dtype=float))
    estimate = np.atleast_2d(np.asarray(estimate, dtype=float))
    b = max(truth.shape[0], estimate.shape[0])
    return (
        np.broadcast_to(truth, (b, truth.shape[-1])),
        np.broadcast_to(estimate, (b, estimate.shape[-1])),
    )


def _chunked(kernel, truth: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    truth, estimate = _broadcast_rows(truth, estimate)
    m = truth.shape[-1]
    step = max(1, _CHUNK_CELLS // (m * m))
    out = [kernel(truth[k : k + step], estimate[k : k + step]) for k in range(0, len(truth), step)]
    return np.concatenate(out) if out else np.empty(0)


def _tau_batch(truth: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """Kendall tau with Urbano and Marrero's tie convention, row by row.

    ``truth`` and ``estimate`` are ``(B, m)`` (or one of them ``(m,)``, broadcast).
    tau = 1 - 4 D / (m (m - 1)), D = pairs with strictly opposite signs.
    """
    return _chunked(_tau_kernel, truth, estimate)


def _tau_ap_batch(truth: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """tau_AP(truth, estimate) row by row; ``(B, m)`` arrays, or one of them ``(m,)``."""
    return _chunked(_tau_ap_kernel, truth, estimate)


def _tau_kernel(truth: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    m = truth.shape[-1]
    i, j = np.triu_indices(m, 1)
    st = np.sign(truth[:, i] - truth[:, j]).astype(np.int8)
    st *= np.sign(estimate[:, i] - estimate[:, j]).astype(np.int8)
    discordant = np.count_nonzero(st < 0, axis=-1)
    return 1.0 - 4.0 * discordant / (m * (m - 1))


def _tau_ap_kernel(truth: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    m = truth.shape[-1]
    true_pos = _positions(truth)
    order = np.argsort(-estimate, axis=-1, kind="stable")
    r = np.take_along_axis(true_pos, order, axis=-1).astype(np.int16)  # true pos., est. order
    # C(i) = #{k < i : r_k < r_i}: systems above i in the estimate and in the truth.
    above = np.tril(np.ones((m, m), dtype=bool), -1)  # above[i, k] = k < i
    counts = np.count_nonzero((r[:, None, :] < r[:, :, None]) & above[None], axis=-1)
    weights = np.zeros(m)
    weights[1:] = 1.0 / np.arange(1, m)
    return 2.0 / (m - 1) * (counts @ weights) - 1.0
