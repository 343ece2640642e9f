r"""Estimators of the pairwise swap probabilities p_ij (Urbano and Marrero 2016).

The systems are sorted by observed mean score, best first (ties keep the order in
which the systems are given). For every pair :math:`i < j` the :math:`n` per-topic
differences :math:`X = x_i - x_j` have a non-negative mean, and :math:`p_{ij}` is
the probability that the true mean difference is negative, i.e. that the true order
of the pair is the reverse of the observed one. Each estimator is a private numpy
kernel that works on all pairs at once; :func:`swap_probabilities` is the labelled
entry point.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from bayes_ir import defaults, validate
from bayes_ir.errors import InsufficientDataError, OptionError

__all__ = ["plugin_bandwidth", "swap_probabilities"]

#: Pairs per chunk in the Monte Carlo and bandwidth kernels (bounds memory).
_PAIR_CHUNK = 512


def sort_by_mean(x: np.ndarray) -> np.ndarray:
    """Column order that sorts a topic x system matrix by mean, best first (stable)."""
    return np.argsort(-x.mean(axis=0), kind="stable")


def _pair_index(m: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(m, 1)


def check_matrix(
    x: np.ndarray,
    *,
    min_topics: int = defaults.MIN_TOPICS_RELIABILITY,
    method: str = "ranking reliability",
    where: str = "the score matrix",
) -> np.ndarray:
    """Validate a complete topic x system matrix (at least 2 systems and ``min_topics``)."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        raise OptionError(f"expected a topic x system matrix, got shape {x.shape}")
    n, m = x.shape
    if m < 2:
        raise InsufficientDataError(f"a ranking needs at least 2 systems, got {m}")
    validate.require_topics(n, min_topics, method=method, where=where)
    if not np.all(np.isfinite(x)):
        raise InsufficientDataError(
            "the score matrix has missing or infinite cells; load the scores with "
            "missing='intersect' (or 'error') so that every system has every topic"
        )
    return x


def _student_p(mean: np.ndarray, sigma: np.ndarray, n: int) -> np.ndarray:
    """T_{n-1}(-sqrt(n) mean / sigma); NaN where 0/0 (identical columns)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = -np.sqrt(n) * mean / sigma
    return stats.t.cdf(t, df=n - 1)


def c_n(n: int) -> float:
    r"""Bias correction :math:`C_n = \sqrt{(n-1)/2}\,\Gamma((n-1)/2) / \Gamma(n/2)` (= 1/c4)."""
    return math.exp(
        0.5 * math.log((n - 1) / 2) + special.gammaln((n - 1) / 2) - special.gammaln(n / 2)
    )


def _p_ml(d: np.ndarray) -> np.ndarray:
    """ML estimator over the columns of ``d`` (topics x pairs)."""
    n = d.shape[0]
    return _student_p(d.mean(axis=0), d.std(axis=0, ddof=1) * c_n(n), n)


def _msqd_sigma(d: np.ndarray) -> np.ndarray:
    n = d.shape[0]
    z = stats.norm.ppf(stats.rankdata(d, axis=0) / (n + 1))
    zz = (z * z).sum(axis=0)
    # All differences equal: every rank ties, z = 0, and the spread is 0 (not 0/0).
    return np.divide((d * z).sum(axis=0), zz, out=np.zeros_like(zz), where=zz > 0)


def _p_msqd(d: np.ndarray) -> np.ndarray:
    """MSQD estimator over the columns of ``d`` (topics x pairs)."""
    return _student_p(d.mean(axis=0), _msqd_sigma(d), d.shape[0])


def _bootstrap_means(x: np.ndarray, samples: int, rng: np.random.Generator) -> np.ndarray:
    """Return system means on ``samples`` bootstrap resamples of the topics, ``(samples, m)``."""
    n = x.shape[0]
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=samples)
    return counts @ x / n


def _p_res(x: np.ndarray, samples: int, rng: np.random.Generator) -> np.ndarray:
    """RES: fraction of bootstrap mean differences below 0, for every pair of sorted columns."""
    i, j = _pair_index(x.shape[1])
    boot = _bootstrap_means(x, samples, rng)
    out = np.empty(len(i))
    for k in range(0, len(i), _PAIR_CHUNK):
        sl = slice(k, k + _PAIR_CHUNK)
        out[sl] = np.mean(boot[:, i[sl]] - boot[:, j[sl]] < 0, axis=0)
    return out


_HERMITE = {4: (1.0, -6.0, 3.0), 6: (1.0, -15.0, 45.0, -15.0)}  # He_r(u) in powers of u^2


def _psi(diffs: np.ndarray, g: np.ndarray, order: int, n: int) -> np.ndarray:
    """Kernel estimate of the density functional psi_r with bandwidth g (per column).

    ``diffs`` holds the differences x_a - x_b of the pairs a < b only: the sum over all
    (a, b) is twice theirs plus the n diagonal terms phi^(r)(0). The r-th derivative of
    the normal density is He_r(u) phi(u) (r even); computed in place, in float32.
    """
    u2 = diffs / g.astype(diffs.dtype)
    u2 *= u2
    dens = np.multiply(u2, -0.5)
    np.exp(dens, out=dens)
    coefs = _HERMITE[order]
    poly = np.full_like(u2, coefs[0])
    for c in coefs[1:]:
        poly *= u2
        poly += c
    total = 2.0 * np.einsum("ij,ij->j", poly, dens, dtype=np.float64) + n * coefs[-1]
    return total / (math.sqrt(2 * math.pi) * n * n * g ** (order + 1))


def _scale_estimate(d: np.ndarray) -> np.ndarray:
    """KernSmooth's ``scalest = "minim"``: min(SD, IQR / 1.349) of every column."""
    q1, q3 = np.quantile(d, [0.25, 0.75], axis=0)
    iqr_scale = (q3 - q1) / (stats.norm.ppf(0.75) - stats.norm.ppf(0.25))
    return np.minimum(d.std(axis=0, ddof=1), iqr_scale)


def _dpi_bandwidth(d: np.ndarray) -> np.ndarray:
    """Two-stage direct plug-in bandwidth of every column of ``d`` (topics x columns)."""
    n = d.shape[0]
    sigma = _scale_estimate(d)
    out = np.full(d.shape[1], np.nan)
    ta, tb = np.triu_indices(n, 1)
    step = max(1, 2_000_000 // max(1, len(ta)))
    for k in range(0, d.shape[1], step):
        sl = slice(k, k + step)
        s = sigma[sl]
        ok = s > 0
        if not ok.any():
            continue
        dd = d[:, sl][:, ok]
        diffs = (dd[ta] - dd[tb]).astype(np.float32)
        psi8 = 105.0 / (32.0 * math.sqrt(math.pi) * s[ok] ** 9)
        g1 = (30.0 / math.sqrt(2 * math.pi) / (psi8 * n)) ** (1 / 9)
        psi6 = _psi(diffs, g1, 6, n)
        with np.errstate(invalid="ignore", divide="ignore"):
            g2 = (-6.0 / math.sqrt(2 * math.pi) / (psi6 * n)) ** (1 / 7)
            psi4 = _psi(diffs, g2, 4, n)
            h = (1.0 / (2 * math.sqrt(math.pi)) / (psi4 * n)) ** (1 / 5)
        block = np.full(len(s), np.nan)
        block[ok] = h
        out[sl] = block
    return out


def plugin_bandwidth(x: np.ndarray) -> float:
    r"""Two-stage direct plug-in bandwidth of a Gaussian kernel density estimate.

    Parameters
    ----------
    x
        A sample (1-d).

    Returns
    -------
    float
        The bandwidth h; NaN when it cannot be estimated: the scale estimate is 0
        (a constant sample, or one whose quartiles coincide, e.g. mostly zeros).

    Notes
    -----
    Wand and Jones' two-stage direct plug-in, as R's ``ks::hpi`` computes it for 1-d
    data through ``KernSmooth::dpik`` (Urbano and Marrero's ``kde`` calls it), with
    the scale :math:`\hat\sigma = \min(s, \mathrm{IQR}/1.349)` (``scalest = "minim"``,
    which fails when it is 0), but with exact sums instead of ``dpik``'s 401-point
    binned approximation. With :math:`\phi^{(r)}` the r-th derivative of the standard
    normal density and
    :math:`\hat\psi_r(g) = n^{-2} \sum_{i,j} g^{-r-1} \phi^{(r)}((x_i - x_j)/g)`:

    .. math::

        \psi_8^{NS} = \frac{105}{32\sqrt{\pi}\,\hat\sigma^9},\quad
        g_1 = \left(\frac{-2\phi^{(6)}(0)}{\psi_8^{NS} n}\right)^{1/9},\quad
        g_2 = \left(\frac{-2\phi^{(4)}(0)}{\hat\psi_6(g_1) n}\right)^{1/7},\quad
        h = \left(\frac{1}{2\sqrt{\pi}\,\hat\psi_4(g_2) n}\right)^{1/5}.

    For normal data it approaches the normal-reference bandwidth
    :math:`(4/3)^{1/5} \sigma n^{-1/5}`.

    References
    ----------
    M. P. Wand and M. C. Jones, *Kernel Smoothing*, Chapman & Hall, 1995, section 3.6.
    """
    arr = np.asarray(x, dtype=float).reshape(-1, 1)
    if arr.shape[0] < 2:
        raise InsufficientDataError("a bandwidth needs at least 2 observations")
    return float(_dpi_bandwidth(arr)[0])


def _p_kd(x: np.ndarray, samples: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """KD: fraction of means of samples from the KDE of each pair's differences below 0.

    A sample of size n from a Gaussian KDE is a bootstrap resample plus n independent
    N(0, h^2) perturbations, so its mean is a bootstrap mean plus h Z / sqrt(n). Returns
    the probabilities and the number of pairs that fell back to ML (no bandwidth).
    """
    n, m = x.shape
    i, j = _pair_index(m)
    d = x[:, i] - x[:, j]
    h = _dpi_bandwidth(d)
    fallback = ~(np.isfinite(h) & (h > 0))
    boot = _bootstrap_means(x, samples, rng)
    out = np.empty(len(i))
    for k in range(0, len(i), _PAIR_CHUNK):
        sl = slice(k, k + _PAIR_CHUNK)
        noise = rng.standard_normal((samples, len(i[sl]))) * (h[sl] / math.sqrt(n))
        noise[:, fallback[sl]] = 0.0
        out[sl] = np.mean(boot[:, i[sl]] - boot[:, j[sl]] + noise < 0, axis=0)
    if fallback.any():
        out[fallback] = _p_ml(d[:, fallback])
    return out, int(fallback.sum())


def swap_probabilities(
    x: np.ndarray,
    *,
    estimator: str = "MSQD",
    samples: int = 1000,
    seed: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, dict[str, int]]:
    r"""Swap probabilities of every pair of systems, vectorised over the pairs.

    Parameters
    ----------
    x
        Topic x system matrix whose columns are **already sorted** by mean, best first
        (see :func:`sort_by_mean`).
    estimator
        ``"ML"``, ``"MSQD"``, ``"RES"`` or ``"KD"``.
    samples
        Monte Carlo samples T of RES and KD.
    seed
        Seed (or generator) of RES and KD.

    Returns
    -------
    p : numpy.ndarray
        :math:`p_{ij}` for the pairs ``numpy.triu_indices(m, 1)``, NaN where undefined
        (identical columns: zero mean difference and zero spread).
    info : dict
        ``{"kd_fallback": pairs where KD fell back to ML}``.

    Notes
    -----
    With :math:`X` the :math:`n` differences of a pair, :math:`\bar X \ge 0` and
    :math:`T_{n-1}` the Student t CDF:

    - ML: :math:`p = T_{n-1}(-\sqrt n \bar X / \hat\sigma)`, :math:`\hat\sigma = s\,C_n`,
      :math:`C_n = \sqrt{(n-1)/2}\,\Gamma((n-1)/2)/\Gamma(n/2)` (in log-gamma; the
      authors' code sets :math:`C_n = 1` above 250 topics);
    - MSQD: the same with :math:`\hat\sigma = \sum X_i z_i / \sum z_i^2`,
      :math:`z_i = \Phi^{-1}(R_i/(n+1))`, :math:`R_i` the average-tie rank of :math:`X_i`;
    - RES: the fraction of T bootstrap means of :math:`X` below 0;
    - KD: the fraction of T means of samples of size n drawn from a Gaussian kernel
      density estimate of :math:`X` (plug-in bandwidth, :func:`plugin_bandwidth`) below 0;
      ML where the density cannot be estimated (the bandwidth's scale estimate
      :math:`\min(s, \mathrm{IQR}/1.349)` is 0, where R's ``ks::kde`` fails too).

    RES and KD share the T topic resamples across pairs (common random numbers): each
    :math:`p_{ij}` has the same distribution as with the authors' pair-by-pair loop.

    References
    ----------
    J. Urbano and M. Marrero, "Toward Estimating the Rank Correlation between the Test
    Collection Results and the True System Performance", SIGIR 2016, 1033-1036.
    """
    x = check_matrix(x, method=f"the {estimator} estimator")
    i, j = _pair_index(x.shape[1])
    info = {"kd_fallback": 0}
    if estimator == "ML":
        return _p_ml(x[:, i] - x[:, j]), info
    if estimator == "MSQD":
        return _p_msqd(x[:, i] - x[:, j]), info
    rng = np.random.default_rng(seed)
    if estimator == "RES":
        return _p_res(x, samples, rng), info
    if estimator == "KD":
        p, fallback = _p_kd(x, samples, rng)
        info["kd_fallback"] = fallback
        return p, info
    raise OptionError(f"unknown swap-probability estimator {estimator!r}")


def expected_from_p(p: np.ndarray, m: int) -> tuple[float, float]:
    r"""E[tau] and E[tau_AP] from the swap probabilities of the pairs ``triu_indices(m, 1)``.

    Undefined probabilities (NaN) count as 0.

    .. math::

        E[\tau] = 1 - \frac{4}{m(m-1)} \sum_{i<j} p_{ij},\qquad
        E[\tau_{AP}] = 1 - \frac{2}{m-1} \sum_{j=2}^{m} \frac{\sum_{i<j} p_{ij}}{j-1}.
    """
    p = np.nan_to_num(np.asarray(p, dtype=float), nan=0.0)
    _, j = _pair_index(m)
    e_tau = 1.0 - 4.0 / (m * (m - 1)) * p.sum()
    col = np.bincount(j, weights=p, minlength=m)
    e_tau_ap = 1.0 - 2.0 / (m - 1) * np.sum(col[1:] / np.arange(1, m))
    return float(e_tau), float(e_tau_ap)
