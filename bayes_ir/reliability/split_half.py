r"""Split-half baselines SH(w) and SH(w/o) of the expected correlation with the truth.

The classic way to judge a topic set's reliability (Voorhees and Buckley 2002;
Sanderson and Zobel 2005): split the topics into two random halves, correlate the
two rankings, and extrapolate the trend to the full topic set size. Urbano and
Marrero use these as the baselines that their estimators beat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayes_ir import defaults, validate
from bayes_ir.reliability.correlation import _tau_ap_batch, _tau_batch

__all__ = ["SplitHalfFit", "split_half_fit"]


@dataclass(frozen=True)
class SplitHalfFit:
    r"""Extrapolated split-half correlations.

    Attributes
    ----------
    tau, tau_ap
        Extrapolated correlations at the full topic set size.
    sizes
        Subset sizes of the observations.
    obs_tau, obs_tau_ap
        Observed correlations between the two subsets of each trial.
    coef_tau, coef_tau_ap
        :math:`(\log a, b)` of the fitted :math:`1 - (\tau + 1)/2 = a e^{b x}`.
    """

    tau: float
    tau_ap: float
    sizes: np.ndarray
    obs_tau: np.ndarray
    obs_tau_ap: np.ndarray
    coef_tau: tuple[float, float]
    coef_tau_ap: tuple[float, float]


def subset_sizes(n: int, points: int) -> np.ndarray:
    """Subset sizes: ``points`` values from 2 to n/2 (Urbano and Marrero's choice)."""
    at = np.unique(np.round(np.linspace(1, n // 2, points + 1)))[1:]
    if len(at) == 1:
        at = np.concatenate([[1.0], at])
    return at.astype(int)


def _extrapolate(x: np.ndarray, corr: np.ndarray, n: int) -> tuple[float, tuple[float, float]]:
    y = 1.0 - (corr + 1.0) / 2.0
    with np.errstate(divide="ignore"):
        ly = np.log(y)
    keep = np.isfinite(ly)
    if not keep.any():  # every split agreed perfectly
        return 1.0, (-np.inf, 0.0)
    if np.unique(x[keep]).size < 2:  # no slope to fit: no extrapolation
        intercept, slope = float(ly[keep].mean()), 0.0
    else:
        slope, intercept = np.polyfit(x[keep], ly[keep], 1)
    pred = np.exp(intercept + slope * n)
    return float(1.0 - 2.0 * np.clip(pred, 0.0, 1.0)), (float(intercept), float(slope))


def split_half_fit(
    x: np.ndarray,
    *,
    replacement: bool,
    points: int = 20,
    trials: int = 100,
    max_obs: int = 2000,
    seed: int | np.random.Generator | None = None,
) -> SplitHalfFit:
    r"""Split-half estimate of E[tau] and E[tau_AP] from a topic x system matrix.

    Parameters
    ----------
    x
        Complete topic x system matrix (n topics, at least
        :data:`bayes_ir.defaults.MIN_TOPICS_SPLIT_HALF`).
    replacement
        Draw the two subsets with replacement (SH(w)) or as disjoint subsets (SH(w/o)).
    points, trials, max_obs
        Number of subset sizes, trials per size (at most), observations in all (at most).
    seed
        Seed or generator.

    Returns
    -------
    SplitHalfFit

    Notes
    -----
    For each subset size :math:`x` (``points`` sizes between 1 and :math:`n/2`; 1 is
    added when there is a single size), draw two subsets of :math:`x` topics each, rank
    the systems by their means on each, and compute :math:`\tau` and
    :math:`\tau_{AP}` (the first subset plays the truth; ties are never discordant).
    Fit :math:`\log(1 - (\tau + 1)/2) = \log a + b x` by least squares (observations
    with :math:`\tau = 1` are dropped, as their log is infinite) and extrapolate:
    :math:`\hat E[\tau] = 1 - 2 \min(1, \max(0, a e^{b n}))`.

    References
    ----------
    J. Urbano and M. Marrero, "Toward Estimating the Rank Correlation between the Test
    Collection Results and the True System Performance", SIGIR 2016, 1033-1036.
    E. M. Voorhees and C. Buckley, "The effect of topic set size on retrieval
    experiment error", SIGIR 2002, 316-323.
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    validate.require_topics(
        n, defaults.MIN_TOPICS_SPLIT_HALF, method="split-half estimation", where="the score matrix"
    )
    rng = np.random.default_rng(seed)
    at = subset_sizes(n, points)
    per_size = max(1, min(trials, max_obs // len(at)))
    sizes, taus, taps = [], [], []
    base = np.tile(np.arange(n), (per_size, 1))
    for size in at:
        if replacement:
            idx1 = rng.integers(0, n, size=(per_size, size))
            idx2 = rng.integers(0, n, size=(per_size, size))
        else:
            perm = rng.permuted(base, axis=1)
            idx1, idx2 = perm[:, :size], perm[:, size : 2 * size]
        mu = x[idx1].mean(axis=1)
        mu_hat = x[idx2].mean(axis=1)
        sizes.append(np.full(per_size, size))
        taus.append(_tau_batch(mu, mu_hat))
        taps.append(_tau_ap_batch(mu, mu_hat))
    xs = np.concatenate(sizes).astype(float)
    obs_tau, obs_tap = np.concatenate(taus), np.concatenate(taps)
    e_tau, coef_tau = _extrapolate(xs, obs_tau, n)
    e_tap, coef_tap = _extrapolate(xs, obs_tap, n)
    return SplitHalfFit(e_tau, e_tap, xs, obs_tau, obs_tap, coef_tau, coef_tap)
