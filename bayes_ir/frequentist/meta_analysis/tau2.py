r"""Estimators of the between-collection variance :math:`\tau^2` of a random-effects model.

The kernels are private numpy functions that work along the last axis, so that a
whole simulation (``trials x k`` arrays) is estimated in one call. Only the
intercept-only model (no moderators) is covered.

statsmodels' :func:`statsmodels.stats.meta_analysis.combine_effects` offers the
DerSimonian-Laird and Paule-Mandel estimators, but for one set of studies at a
time, without REML and without the standard error of :math:`\tau^2`; the kernels
here are vectorised hand-written versions, cross-checked against statsmodels and
metafor in the tests.

References
----------
DerSimonian, R., & Laird, N. (1986). Meta-analysis in clinical trials. *Controlled
Clinical Trials*, 7(3), 177-188.

Paule, R. C., & Mandel, J. (1982). Consensus values and weighting factors. *Journal of
Research of the National Bureau of Standards*, 87(5), 377-385.

Viechtbauer, W. (2005). Bias and efficiency of meta-analytic variance estimators in the
random-effects model. *Journal of Educational and Behavioral Statistics*, 30(3), 261-293.
"""

from __future__ import annotations

import numpy as np

from bayes_ir.defaults import META_MAXITER, META_TOL
from bayes_ir.errors import OptionError

#: Estimators of tau^2 and their names in the printout.
TAU2_METHODS: dict[str, str] = {
    "FE": "fixed effect (tau^2 = 0)",
    "DL": "DerSimonian-Laird",
    "REML": "restricted maximum likelihood",
    "PM": "Paule-Mandel",
}
#: Relative tolerance and iteration cap of the iterative estimators (REML, PM).
TOL: float = META_TOL
MAX_ITER: int = META_MAXITER


def _weighted_mean(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    return (w * y).sum(-1) / w.sum(-1)


def _q_stat(y: np.ndarray, v: np.ndarray, tau2: np.ndarray | float = 0.0) -> np.ndarray:
    r"""Generalised Cochran Q: :math:`\sum_i w_i (y_i - \hat\mu_w)^2`, :math:`w_i = 1/(v_i+\tau^2)`.

    With the default ``tau2 = 0`` this is Cochran's Q.
    """
    w = 1.0 / (v + np.asarray(tau2)[..., None])
    mu = _weighted_mean(y, w)
    return (w * (y - mu[..., None]) ** 2).sum(-1)


def _tau2_dl(y: np.ndarray, v: np.ndarray, *, clip: bool = True) -> np.ndarray:
    r"""DerSimonian-Laird moment estimator.

    Notes
    -----
    .. math:: \hat\tau^2 = \frac{Q - (k-1)}{\sum w_i - \sum w_i^2 / \sum w_i},
              \quad w_i = 1/v_i,

    truncated at 0 when ``clip`` (Ranger does not truncate: ``clip=False``).
    """
    w = 1.0 / v
    c = w.sum(-1) - (w**2).sum(-1) / w.sum(-1)
    tau2 = (_q_stat(y, v) - (y.shape[-1] - 1)) / c
    return np.maximum(tau2, 0.0) if clip else tau2


def _tau2_pm(y: np.ndarray, v: np.ndarray) -> np.ndarray:
    r"""Paule-Mandel estimator: the root of :math:`Q(\tau^2) = k - 1`, or 0 if :math:`Q(0) < k-1`.

    Newton's method from :math:`\tau^2 = 0` (DerSimonian & Kacker 2007, the algorithm
    of statsmodels' ``_fit_tau_iterative``), whose iterates increase to the root while
    :math:`Q(\tau^2)` is convex; should a step overshoot the root, bisection between
    the last two iterates finishes the job (metafor uses ``uniroot``).
    """
    k = y.shape[-1]
    scale = v.mean(-1)

    def ee(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w = 1.0 / (v + t[..., None])
        r2 = (y - _weighted_mean(y, w)[..., None]) ** 2
        return (w * r2).sum(-1) - (k - 1), (w**2 * r2).sum(-1)

    tau2 = np.zeros(y.shape[:-1])
    lo, hi = tau2.copy(), np.full_like(tau2, np.inf)
    for _ in range(MAX_ITER):
        f, slope = ee(tau2)
        lo = np.where(f > 0, tau2, lo)
        hi = np.where(f < 0, np.minimum(hi, tau2), hi)
        step = np.where((f > 0) & np.isinf(hi), f / slope, 0.0)
        tau2 = tau2 + step
        if np.all(np.abs(step) <= TOL * (tau2 + scale)):
            break
    over = np.isfinite(hi) & (hi > lo)  # a Newton step overshot: bisect [lo, hi]
    if np.any(over):
        a, b = lo.copy(), np.where(over, hi, lo)
        for _ in range(200):
            mid = (a + b) / 2
            f, _ = ee(mid)
            a, b = np.where(f > 0, mid, a), np.where(f > 0, b, mid)
        tau2 = np.where(over, (a + b) / 2, tau2)
    return tau2


def _reml_parts(
    y: np.ndarray, v: np.ndarray, tau2: np.ndarray, *, third: bool = False
) -> tuple[np.ndarray, ...]:
    """Return ``y'PPy``, ``tr(P)``, ``tr(PP)`` (and ``y'PPPy``) of the intercept-only model."""
    w = 1.0 / (v + tau2[..., None])
    sw = w.sum(-1)
    py = w * (y - _weighted_mean(y, w)[..., None])  # P y
    ypppy = (py**2).sum(-1)
    tr_p = sw - (w**2).sum(-1) / sw
    sw2 = (w**2).sum(-1)
    tr_pp = sw2 - 2.0 * (w**3).sum(-1) / sw + sw2**2 / sw**2
    if not third:
        return ypppy, tr_p, tr_pp
    yp3y = (w * py**2).sum(-1) - (w * py).sum(-1) ** 2 / sw  # (Py)' P (Py)
    return ypppy, tr_p, tr_pp, yp3y


def _tau2_reml(y: np.ndarray, v: np.ndarray) -> np.ndarray:
    r"""REML estimator by Fisher scoring (Viechtbauer 2005), truncated at 0.

    Hand-written because statsmodels has no REML estimator for meta-analysis.

    Notes
    -----
    The restricted log-likelihood has score :math:`\tfrac12(y'PPy - \mathrm{tr}P)` and
    Fisher information :math:`\tfrac12\mathrm{tr}(PP)` with
    :math:`P = W - W\mathbf 1(\mathbf 1'W\mathbf 1)^{-1}\mathbf 1'W`, :math:`W =
    \mathrm{diag}(1/(v_i+\tau^2))`; the update is
    :math:`\tau^2 \leftarrow \tau^2 + (y'PPy - \mathrm{tr}P)/\mathrm{tr}(PP)`,
    halved while it would make :math:`\tau^2` negative (as metafor does), started at
    the DerSimonian-Laird estimate and stopped when the step is below
    ``TOL * (tau2 + mean(v))``. Close to the root the Newton step
    :math:`(y'PPy - \mathrm{tr}P)/(2y'PPPy - \mathrm{tr}(PP))` is used instead, since
    Fisher scoring converges only linearly.
    """
    tau2 = _tau2_dl(y, v, clip=True)
    scale = v.mean(-1)
    done = np.zeros(tau2.shape, dtype=bool)
    for _ in range(MAX_ITER):
        ypppy, tr_p, tr_pp, yp3y = _reml_parts(y, v, tau2, third=True)
        step = (ypppy - tr_p) / tr_pp
        # near the root, Newton's step on the score (quadratic convergence) replaces
        # Fisher scoring's (linear); its derivative is tr(PP) - 2 y'PPPy
        curv = 2.0 * yp3y - tr_pp
        newton = (curv > 0) & (np.abs(step) <= 1e-3 * (tau2 + scale))
        step = np.where(newton, (ypppy - tr_p) / np.where(curv > 0, curv, 1.0), step)
        for _ in range(60):  # step halving keeps tau2 >= 0
            neg = (tau2 + step < 0) & (tau2 > 0)
            if not np.any(neg):
                break
            step = np.where(neg, step / 2.0, step)
        at_zero = (tau2 <= 0) & (step < 0)  # the maximum is on the boundary
        step = np.where(done | at_zero, 0.0, step)
        tau2 = np.maximum(tau2 + step, 0.0)
        done |= at_zero | (np.abs(step) <= TOL * (tau2 + scale))
        if np.all(done):
            break
    # a boundary maximum approached by halving is snapped to 0
    ypppy, tr_p, _ = _reml_parts(y, v, np.zeros_like(tau2))
    return np.where((ypppy <= tr_p) & (tau2 <= 1e-8 * scale), 0.0, tau2)


def _tau2(y: np.ndarray, v: np.ndarray, method: str, *, clip: bool = True) -> np.ndarray:
    """Dispatch to the estimator named ``method`` (``FE``, ``DL``, ``REML``, ``PM``)."""
    if method == "FE":
        return np.zeros(y.shape[:-1])
    if method == "DL":
        return _tau2_dl(y, v, clip=clip)
    if method == "REML":
        return _tau2_reml(y, v)
    if method == "PM":
        return _tau2_pm(y, v)
    raise OptionError(
        f"unknown tau^2 estimator {method!r}; choose one of {', '.join(TAU2_METHODS)}"
    )


def _se_tau2(
    y: np.ndarray, v: np.ndarray, tau2: np.ndarray | np.float64, method: str
) -> np.ndarray:
    r"""Return the standard error of :math:`\hat\tau^2`, with metafor's formula for each estimator.

    Notes
    -----
    DL (with :math:`P` at fixed weights :math:`1/v_i`, :math:`t = \max(\tau^2, 0)`):
    :math:`\sqrt{(2(k-1) + 4 t\,\mathrm{tr}P + 2 t^2 \mathrm{tr}(PP)) / (\mathrm{tr}P)^2}`;
    REML: :math:`\sqrt{2/\mathrm{tr}(PP)}` at :math:`\hat\tau^2`;
    PM: :math:`\sqrt{2k^2/((k-1)(\sum w_i)^2)}`, :math:`w_i = 1/(v_i+\hat\tau^2)`.
    """
    k = y.shape[-1]
    t = np.maximum(tau2, 0.0)
    if method == "DL":
        _, tr_p, tr_pp = _reml_parts(y, v, np.zeros_like(t))
        return np.sqrt((2 * (k - 1) + 4 * t * tr_p + 2 * t**2 * tr_pp) / tr_p**2)
    if method == "REML":
        _, _, tr_pp = _reml_parts(y, v, t)
        return np.sqrt(2.0 / tr_pp)
    if method == "PM":
        w = 1.0 / (v + t[..., None])
        return np.sqrt(2.0 * k**2 / (k - 1) / w.sum(-1) ** 2)
    return np.full(np.shape(tau2), np.nan)
