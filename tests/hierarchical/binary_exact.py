"""The exact posterior of two systems' accuracy difference (Bernoulli family), by quadrature.

Two systems scored 0/1 on n items: with item effects a ~ N(0, tau^2) on the logit scale, an
intercept beta and system effects -delta/2, +delta/2 (the two-system zero-sum vector), the items
are exchangeable and each contributes one of four patterns (00, 01, 10, 11) with probability

    P_k(beta, delta, tau) = E_a[P(pattern k | beta + a -+ delta/2)],

an integral over a computed by Gauss-Hermite quadrature (40 nodes; 80 moved the limits by less
than 1e-4). The likelihood of a table is sum_k n_k log P_k, so the posterior of (beta, delta,
tau) under the family's priors (``bayes_ir.hierarchical.families.logit``: beta ~ N(logit(ybar),
INTERCEPT_SD^2), tau ~ Exp(1), delta ~ N(0, 2 UNPOOLED_SD^2)) is computed on a grid, and with it the
posterior of the accuracy difference over the item population,

    m_2 - m_1 = E_a[logit^-1(beta + a + delta/2)] - E_a[logit^-1(beta + a - delta/2)],

with no sampler and no Monte Carlo error. Because the likelihood depends on the table only
through the four counts, the coverage of an interval is a finite sum over the multinomial
outcomes (:func:`exact_coverage`).

Used by ``families/test_binary_exact.py`` (the package's fit against this posterior) and
``benchmarks/study_binary_coverage.py --exact`` (the coverage of the whole grid).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from binary_coverage import ITEM_SD, eta_for
from scipy import integrate, special, stats

from bayes_ir.hierarchical.families.logit import INTERCEPT_SD, SCALE_RATE, UNPOOLED_SD

#: Grid of the intercept, the logit difference and the item SD (their posterior mass on 50 to
#: 200 items lies well inside; a grid twice as wide and fine moved the limits by < 1e-4).
_BETA = np.linspace(-5.0, 11.0, 121)
_DELTA = np.linspace(-7.0, 7.0, 127)
_TAU = np.linspace(0.03, 5.0, 60)
_NODES = 40
#: Bins of the accuracy difference on [-1, 1] for the posterior's quantiles.
_BINS = 8000


@cache
def _grid() -> tuple[np.ndarray, ...]:
    """Log pattern probabilities (4, grid) and the accuracy difference on the grid."""
    b, d, s = np.meshgrid(_BETA, _DELTA, _TAU, indexing="ij")
    z, w = np.polynomial.hermite_e.hermegauss(_NODES)
    w = w / w.sum()
    p1 = special.expit((b - d / 2)[..., None] + s[..., None] * z)
    p2 = special.expit((b + d / 2)[..., None] + s[..., None] * z)
    probs = [((1 - p1) * (1 - p2)) @ w, ((1 - p1) * p2) @ w, (p1 * (1 - p2)) @ w, (p1 * p2) @ w]
    log_p = np.stack([np.log(np.maximum(p, 1e-300)).ravel() for p in probs])
    diff = (p2 @ w - p1 @ w).ravel()
    edges = np.linspace(-1.0, 1.0, _BINS + 1)
    bins = np.clip(np.searchsorted(edges, diff) - 1, 0, _BINS - 1)
    return b.ravel(), d.ravel(), s.ravel(), log_p, diff, bins, edges


@cache
def _scale_priors() -> np.ndarray:
    """Log prior density of tau and delta on the grid (that of beta depends on the table)."""
    _, d, s, _, _, _, _ = _grid()
    return -SCALE_RATE * s + stats.norm.logpdf(d, 0.0, np.sqrt(2.0) * UNPOOLED_SD)


def posterior_weights(counts: np.ndarray, intercept_sd: float = INTERCEPT_SD) -> np.ndarray:
    """Normalised posterior weights on the grid for pattern counts (n00, n01, n10, n11).

    ``intercept_sd``: the SD of the intercept's prior (default: the family's).
    """
    log_p = _grid()[3]
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    half = 0.5 / (2 * n)  # the family keeps the prior mean half a cell from 0 and 1
    ybar = min(max((counts[1] + counts[2] + 2 * counts[3]) / (2 * n), half), 1 - half)
    beta_prior = stats.norm.logpdf(_BETA, special.logit(ybar), intercept_sd)
    lp = (counts @ log_p + _scale_priors()).reshape(_BETA.size, -1) + beta_prior[:, None]
    w = np.exp(lp - lp.max()).ravel()
    return w / w.sum()


def difference_posterior(
    counts: np.ndarray, probs=(0.025, 0.975), intercept_sd: float = INTERCEPT_SD
) -> dict[str, float]:
    """Mean, SD and quantiles ``probs`` of the accuracy difference m_2 - m_1."""
    _, _, _, _, diff, bins, edges = _grid()
    w = posterior_weights(counts, intercept_sd)
    mean = float(w @ diff)
    cdf = np.cumsum(np.bincount(bins, w, minlength=_BINS))
    quantiles = np.interp(probs, cdf / cdf[-1], edges[1:])
    out = {"mean": mean, "sd": float(np.sqrt(w @ (diff - mean) ** 2))}
    return out | {f"q{p}": float(q) for p, q in zip(probs, quantiles, strict=True)}


def pattern_probabilities(accuracies: tuple[float, float], item_sd: float = ITEM_SD) -> np.ndarray:
    """P(00), P(01), P(10), P(11) of the simulation of ``binary_coverage`` (adaptive quadrature).

    ``item_sd``: the SD of the items' difficulty on the logit scale (default: the simulation's).
    """
    eta = [eta_for(a, item_sd) for a in accuracies]

    def pattern(f):
        return integrate.quad(
            lambda z: (
                f(special.expit(eta[0] + item_sd * z), special.expit(eta[1] + item_sd * z))
                * stats.norm.pdf(z)
            ),
            -np.inf,
            np.inf,
        )[0]

    return np.array(
        [
            pattern(lambda p, q: (1 - p) * (1 - q)),
            pattern(lambda p, q: (1 - p) * q),
            pattern(lambda p, q: p * (1 - q)),
            pattern(lambda p, q: p * q),
        ]
    )


def exact_coverage(
    n_items: int,
    accuracies: tuple[float, float],
    mass: float = 0.999,
    *,
    item_sd: float = ITEM_SD,
    intercept_sd: float = INTERCEPT_SD,
) -> tuple[float, float, float]:
    """Coverage of the exact posterior's 95% equal-tailed interval of m_2 - m_1.

    Sums P(outcome) over the multinomial outcomes of ``n_items`` items, most probable first,
    until ``mass`` of the probability is reached. Returns (coverage among those outcomes,
    their probability, the share of it whose interval lies entirely below the truth).
    ``item_sd``: the simulated items' difficulty SD; ``intercept_sd``: the SD of the
    intercept's prior of the posterior (defaults: the simulation's and the family's).
    """
    probs = pattern_probabilities(accuracies, item_sd)
    truth = accuracies[1] - accuracies[0]
    outcomes = [
        (n00, n01, n10, n_items - n00 - n01 - n10)
        for n01 in range(n_items + 1)
        for n10 in range(n_items + 1 - n01)
        for n00 in range(n_items + 1 - n01 - n10)
    ]
    p = stats.multinomial.pmf(np.array(outcomes), n_items, probs)
    order = np.argsort(-p)
    covered = below = total = 0.0
    for k in order:
        post = difference_posterior(np.array(outcomes[k]), intercept_sd=intercept_sd)
        covered += p[k] * (post["q0.025"] <= truth <= post["q0.975"])
        below += p[k] * (post["q0.975"] < truth)
        total += p[k]
        if total >= mass:
            break
    return covered / total, total, below / total
