r"""How many more topics would settle an undecided comparison: a pre-posterior analysis.

For a challenger whose decision is *collect more data*, simulate judging :math:`k`
new topics and ask how often the decision would then be *deploy* or *keep champion*.

Procedure (for each :math:`k` in the grid, :math:`n_\text{sim}` simulations):

1. draw a "true" state :math:`(d^*, s_X^{*2})` from the posterior (a random posterior
   draw of the difference of system means and of the variance of the per-topic
   difference, :math:`s_X^2 = \sigma_c^2 + \sigma_h^2`);
2. draw the mean difference of :math:`k` new topics,
   :math:`\bar\delta_k \sim N(d^*, s_X^{*2}/k)` (the topic effect cancels in a
   within-topic difference);
3. update the posterior of :math:`d` by the conjugate normal update of its normal
   approximation :math:`N(\mu, v)` with known per-topic variance :math:`\hat s_X^2` (the
   posterior mean): :math:`v' = (1/v + k/\hat s_X^2)^{-1}`,
   :math:`\mu' = v'(\mu/v + k\bar\delta_k/\hat s_X^2)`;
4. decide from :math:`N(\mu', v')` with the rules of :mod:`bayes_ir.decision.rules`:
   :math:`P(d_r > s) = P(d > d^\dagger)` exactly, where :math:`d_r(d^\dagger) = s` (the
   risk-adjusted difference increases with :math:`d`); the expected losses in closed
   form for :math:`r = 1` and by quadrature on 512 normal quantiles for :math:`r > 1`.

Reported per :math:`k`: the probability that the decision becomes *deploy*, *keep
champion*, or stays undecided, and the expected loss of the best action after judging.

Assumptions, printed with the table: the new topics are exchangeable with the judged
ones (drawn from the same population), the systems are the same, and the posterior of
the difference is close to normal (true of the Gaussian model with many topics; the
difference is checked against refitting in the tests).

The classical counterpart is Sakai's topic-set-size design for the paired t-test
(:func:`sakai_topics`): the number of topics for which a two-sided t-test at level
:math:`\alpha` detects a true difference of ``minimum_difference`` with power
:math:`1 - \beta`. It plans before any data, for one fixed true difference; the
pre-posterior analysis starts from the posterior of the experiment already run and
averages over what the true difference may be.

Why the two counts differ. Sakai's :math:`n` is the *total* number of topics at which
a test would reject "no difference" with probability 0.8 *if* the true difference were
exactly the margin. The more-topics table answers another question: starting from the
topics already judged, how likely :math:`k` more are to make the decision clear-cut,
averaged over the true differences the posterior still allows. When the posterior
sits near the break-even point (:math:`d \approx s`), no finite :math:`k` settles the
decision with high probability, because a true difference at the margin is exactly
the case where deploying and keeping cost the same; Sakai's :math:`n` is finite there
because it asks only for significance against zero. Conversely, when the posterior is
already far from the break-even point a few topics suffice, whatever :math:`n` says.

References
----------
Raiffa, H., and Schlaifer, R. (1961). *Applied Statistical Decision Theory*. Harvard
University Press (pre-posterior analysis).
Sakai, T. (2016). Topic set size design. *Information Retrieval Journal* 19(3), 256-283.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special

from bayes_ir import defaults
from bayes_ir.decision.rules import (
    ACTIONS,
    choose,
    gaussian_positive_part,
    risk_adjusted_difference,
    shift_of,
)

__all__ = ["ASSUMPTIONS", "MORE_TOPICS_COLUMNS", "more_topics", "sakai_topics"]

#: What the more-topics analysis assumes, printed with its table.
ASSUMPTIONS = (
    "new topics exchangeable with the judged ones, the same systems, a near-normal posterior "
    "of the difference"
)

#: Columns of the table :func:`more_topics` returns.
MORE_TOPICS_COLUMNS = (
    "topics_added",
    "p_deploy",
    "p_keep",
    "p_undecided",
    "p_decisive",
    "expected_loss",
    "mc_se",
)
_NODES = special.ndtri((np.arange(512) + 0.5) / 512)  # scipy.stats.norm.ppf


def _break_even(shift: float, sd_topic: float, r: float) -> float:
    r"""Return the difference :math:`d^\dagger` whose risk-adjusted value equals the shift."""
    if r == 1:
        return shift
    from scipy.optimize import brentq

    def gap(x: float) -> float:
        return float(risk_adjusted_difference(np.array(x), sd_topic, r)) - shift

    lo, hi = shift - 1.0, shift + 1.0
    while gap(lo) > 0:
        lo -= 2 * (hi - lo)
    while gap(hi) < 0:
        hi += 2 * (hi - lo)
    return float(brentq(gap, lo, hi, xtol=1e-12))


def _losses(
    mu: np.ndarray, sd: float, shift: float, sd_topic: float, r: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Return the expected losses of deploying and keeping when :math:`d \sim N(\mu, sd^2)`."""
    if r == 1:
        return gaussian_positive_part(shift - mu, sd), gaussian_positive_part(mu - shift, sd)
    dr = risk_adjusted_difference(mu[:, None] + sd * _NODES[None, :], sd_topic, r)
    return np.maximum(shift - dr, 0.0).mean(axis=1), np.maximum(dr - shift, 0.0).mean(axis=1)


def more_topics(
    d: np.ndarray,
    var_topic: np.ndarray,
    *,
    margin: float,
    mode: str,
    threshold: float,
    p_min: float,
    r: float = 1.0,
    topics: Sequence[int] = (10, 25, 50, 100, 200),
    n_sim: int = defaults.MORE_TOPICS_SIMULATIONS,
    seed: int = 0,
) -> pd.DataFrame:
    r"""Probability that :math:`k` more topics settle the decision, for each :math:`k`.

    Parameters
    ----------
    d
        Posterior draws of the difference of system means (challenger minus champion),
        one dimension.
    var_topic
        Posterior draws (same length) of the variance :math:`s_X^2` of the per-topic
        difference.
    margin, mode, threshold, p_min, r
        As in :func:`bayes_ir.decide`.
    topics
        The numbers of new topics :math:`k` to simulate.
    n_sim
        Simulations per :math:`k`.
    seed
        Random seed.

    Returns
    -------
    pandas.DataFrame
        :data:`MORE_TOPICS_COLUMNS`: ``p_deploy``, ``p_keep``, ``p_undecided`` (they add
        to 1), ``p_decisive = p_deploy + p_keep``, the expected loss of the best action
        after judging, and ``mc_se``, the Monte Carlo standard error of ``p_decisive``.

    Notes
    -----
    See the module docstring for the procedure and its assumptions.
    """
    d = np.asarray(d, dtype=float).ravel()
    var_topic = np.asarray(var_topic, dtype=float).ravel()
    mu, v = float(d.mean()), float(d.var(ddof=1))
    s2_hat = float(var_topic.mean())
    shift = shift_of(margin, mode)
    break_even = _break_even(shift, np.sqrt(s2_hat), r)
    rng = np.random.default_rng(seed)
    rows = []
    for k in topics:
        pick = rng.integers(0, d.size, size=n_sim)
        mean_new = d[pick] + np.sqrt(var_topic[pick] / k) * rng.standard_normal(n_sim)
        v_new = 1.0 / (1.0 / v + k / s2_hat)
        mu_new = v_new * (mu / v + k * mean_new / s2_hat)
        loss_deploy, loss_keep = _losses(mu_new, np.sqrt(v_new), shift, np.sqrt(s2_hat), r)
        p_above = special.ndtr(-(break_even - mu_new) / np.sqrt(v_new))  # norm.sf
        action = choose(p_above, loss_deploy, loss_keep, threshold=threshold, p_min=p_min)
        p = {a: float(np.mean(action == a)) for a in ACTIONS}
        decisive = p[ACTIONS[0]] + p[ACTIONS[1]]
        rows.append(
            {
                "topics_added": int(k),
                "p_deploy": p[ACTIONS[0]],
                "p_keep": p[ACTIONS[1]],
                "p_undecided": p[ACTIONS[2]],
                "p_decisive": decisive,
                "expected_loss": float(np.minimum(loss_deploy, loss_keep).mean()),
                "mc_se": float(np.sqrt(decisive * (1 - decisive) / n_sim)),
            }
        )
    return pd.DataFrame(rows, columns=list(MORE_TOPICS_COLUMNS))


def sakai_topics(
    sd_difference: float, minimum_difference: float, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    r"""Sakai's topic-set size for the paired t-test (two-sided), by the noncentral t.

    The smallest number of topics :math:`n` for which a two-sided paired t-test at
    level ``alpha`` has power ``power`` against a true mean difference
    ``minimum_difference`` when per-topic differences have SD ``sd_difference``:
    :meth:`statsmodels.stats.power.TTestPower.solve_power` with effect size
    :math:`\text{minD}/\sigma_d`, rounded up (Sakai 2016, Section 3).

    References
    ----------
    Sakai, T. (2016). Topic set size design. *Information Retrieval Journal* 19(3),
    256-283.
    """
    from statsmodels.stats.power import TTestPower

    effect = abs(float(minimum_difference)) / float(sd_difference)
    n = TTestPower().solve_power(
        effect_size=effect, alpha=alpha, power=power, alternative="two-sided"
    )
    return int(np.ceil(float(np.asarray(n).item())))
