r"""The decision rules: pure functions of posterior draws of a difference.

Everything here works on plain arrays of draws of :math:`d`, a challenger's score minus
the champion's (the difference of system means), so that every result that turns
numbers into a word (:func:`bayes_ir.hierarchical.compare`, :func:`bayes_ir.decide`,
the CLI and the review) asks this module, and the words come from one place.

Three actions are compared (Berger 1985, ch. 4; the "threshold of caring" of
Stucchio's Bayesian A/B testing): *deploy* the challenger, *keep champion*, or,
when neither action's expected loss is small enough to accept,
*collect more data*. The utility of deploying is :math:`d - s` against 0 for
keeping, where the shift :math:`s = +m` for a superiority decision (the challenger
must pay for its deployment with a gain of at least the margin :math:`m`) and
:math:`s = -m` for non-inferiority (a cheaper challenger may lose up to :math:`m`).
The expected losses are

.. math::

    L_\text{deploy} = E[(s - d)^+], \qquad L_\text{keep} = E[(d - s)^+],

An action is taken when the posterior probability that it is the right one is at
least the decision probability :math:`p_\min` (0.95 by default) *and* its expected
loss is at most the threshold of caring :math:`\varepsilon` (a tenth of the margin by
default): *deploy* when :math:`P(d > s) \ge p_\min` and :math:`L_\text{deploy} \le
\varepsilon`, *keep champion* when :math:`P(d < s) \ge p_\min` and
:math:`L_\text{keep} \le \varepsilon`; otherwise the label is *collect more data*.
The probability guards against acting on a likely-wrong choice whose loss happens to be
small; the loss guards against acting on a likely-right choice that could cost a lot.

With a loss weight :math:`r \ge 1` (URisk's :math:`1 + \alpha`), :math:`d` is replaced by
the risk-adjusted difference of a new topic, :math:`d_r = E[X] - (r - 1) E[X^-]`, where
:math:`X \sim N(d, s_X^2)` is the per-topic difference and :math:`s_X^2` the variance
of the difference of two systems' errors on one topic:

.. math::

    d_r = d - (r - 1)\,\bigl(s_X\,\varphi(d/s_X) - d\,\Phi(-d/s_X)\bigr).

References
----------
Benavoli, A., Corani, G., Demsar, J., and Zaffalon, M. (2017). Time for a change: a
tutorial for comparing multiple classifiers through Bayesian analysis. *JMLR* 18(77).
Berger, J. O. (1985). *Statistical Decision Theory and Bayesian Analysis*, 2nd ed.
Springer.
Kruschke, J. K. (2018). Rejecting or accepting parameter values in Bayesian estimation.
*Advances in Methods and Practices in Psychological Science* 1(2), 270-280.
Wang, L., Bennett, P. N., and Collins-Thompson, K. (2012). Robust ranking models via
risk-sensitive optimization. *SIGIR '12*, 761-770.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import special

__all__ = [
    "ACTIONS",
    "MISFIT_VERDICT",
    "VERDICTS",
    "interval_verdict",
    "MODES",
    "UNRELIABLE",
    "choose",
    "expected_losses",
    "gaussian_positive_part",
    "reliable_action",
    "risk_adjusted_difference",
    "shift_of",
    "three_way",
]

Mode = Literal["superiority", "non_inferiority"]
#: Decision modes.
MODES: tuple[str, ...] = ("superiority", "non_inferiority")
#: The three actions, in the order of the exit codes of ``bayes-ir decide --gate``.
ACTIONS: tuple[str, ...] = ("deploy", "keep champion", "collect more data")
#: The label of a decision whose posterior failed its diagnostics or whose model does not
#: describe the challenger or the champion: never *deploy*.
UNRELIABLE = "unreliable"


def shift_of(margin: float, mode: str) -> float:
    """Return the shift :math:`s`: ``+margin`` (superiority) or ``-margin`` (non-inferiority)."""
    return float(margin) if mode == "superiority" else -float(margin)


def three_way(d: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""P(better by more than the margin), P(within +-margin), P(worse by more than it).

    Parameters
    ----------
    d
        Draws of the difference, shape ``(n_draws, ...)``; reduced over axis 0.
    margin
        The margin :math:`m \ge 0`, in the measure's units.

    Returns
    -------
    p_better, p_equivalent, p_worse
        :math:`P(d > m)`, :math:`P(-m \le d \le m)`, :math:`P(d < -m)`, each the share of
        draws (they add to 1), as baycomp reports them (Benavoli et al. 2017).
    """
    d = np.asarray(d, dtype=float)
    better = (d > margin).mean(axis=0)
    worse = (d < -margin).mean(axis=0)
    return better, 1.0 - better - worse, worse


def gaussian_positive_part(mu: np.ndarray | float, tau: np.ndarray | float) -> np.ndarray:
    r"""Return the closed form of :math:`E[X^+]` for :math:`X \sim N(\mu, \tau^2)`.

    :math:`E[X^+] = \mu\,\Phi(\mu/\tau) + \tau\,\varphi(\mu/\tau)` (and :math:`\mu^+` when
    :math:`\tau = 0`).
    """
    mu = np.asarray(mu, dtype=float)
    tau = np.asarray(tau, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = mu / tau
        # Phi and phi as scipy.stats.norm computes them (scipy.stats takes a second to load)
        out = mu * special.ndtr(z) + tau * np.exp(-(z**2) / 2.0) / np.sqrt(2 * np.pi)
    return np.where(tau > 0, out, np.maximum(mu, 0.0))


def risk_adjusted_difference(d: np.ndarray, sd_topic: np.ndarray | float, r: float) -> np.ndarray:
    r"""Risk-adjusted difference :math:`d_r = d - (r - 1) E[X^-]`, :math:`X \sim N(d, s_X^2)`.

    Parameters
    ----------
    d
        Draws of the difference of system means.
    sd_topic
        :math:`s_X`, the SD of the per-topic difference around ``d`` (broadcast with ``d``).
    r
        Loss weight :math:`r \ge 1` of URisk (Wang et al. 2012); ``r = 1`` returns ``d``.

    Notes
    -----
    :math:`E[X^-] = E[(-X)^+]` is :func:`gaussian_positive_part` at :math:`(-d, s_X)`.
    """
    d = np.asarray(d, dtype=float)
    if r == 1:
        return d
    return d - (float(r) - 1.0) * gaussian_positive_part(-d, sd_topic)


def expected_losses(d: np.ndarray, shift: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Return the expected losses of deploying and keeping, :math:`E[(s-d)^+]`, :math:`E[(d-s)^+]`.

    ``d`` has draws along axis 0; the expectations are means over the draws.
    """
    d = np.asarray(d, dtype=float)
    return np.maximum(shift - d, 0.0).mean(axis=0), np.maximum(d - shift, 0.0).mean(axis=0)


def choose(
    p_above: np.ndarray,
    loss_deploy: np.ndarray,
    loss_keep: np.ndarray,
    *,
    threshold: float,
    p_min: float,
) -> np.ndarray:
    r"""Return the action for each challenger (an array of the words in :data:`ACTIONS`).

    *deploy* when :math:`P(d > s) \ge p_\min` and :math:`L_\text{deploy} \le \varepsilon`;
    *keep champion* when :math:`P(d < s) \ge p_\min` and :math:`L_\text{keep} \le
    \varepsilon`; otherwise *collect more data*.

    Parameters
    ----------
    p_above
        :math:`P(d > s)`, the posterior probability that deploying is worth it.
    loss_deploy, loss_keep
        The expected losses of :func:`expected_losses`.
    threshold
        The threshold of caring :math:`\varepsilon`, in the measure's units.
    p_min
        The decision probability :math:`p_\min > 1/2` (so at most one action qualifies).
    """
    p_above = np.asarray(p_above, dtype=float)
    deploy = (p_above >= p_min) & (np.asarray(loss_deploy, dtype=float) <= threshold)
    keep = (1.0 - p_above >= p_min) & (np.asarray(loss_keep, dtype=float) <= threshold)
    return np.where(deploy, ACTIONS[0], np.where(keep, ACTIONS[1], ACTIONS[2]))


def reliable_action(action: str, *, diagnostics_passed: bool, model_fits: bool) -> str:
    """Return ``action``, or :data:`UNRELIABLE` when the posterior cannot be trusted.

    A posterior that failed its diagnostics, or a model that does not describe the
    systems compared, never yields *deploy* (nor any other action).
    """
    return action if diagnostics_passed and model_fits else UNRELIABLE


#: Verdict words of :func:`interval_verdict`, one per region of (interval, min_gain).
VERDICTS: tuple[str, ...] = (
    "worthwhile gain",
    "better; gain uncertain",
    "better, but by less than min_gain",
    "better",
    "practically equivalent",
    "no worthwhile gain",
    "no loss beyond min_gain",
    "uncertain",
    "worse, but by less than min_gain",
    "worse; loss uncertain",
    "worse by more than min_gain",
    "worse",
)
#: Verdict of a challenger compared with a champion when the model does not describe one of
#: them: its interval is not read, since it is not to be acted on.
MISFIT_VERDICT = "unreliable: model misfit"


def interval_verdict(lower: float, upper: float, min_gain: float) -> str:
    r"""Plain-language reading of an interval ``[lower, upper]`` of challenger minus champion.

    With :math:`g` = ``min_gain`` (a value :math:`\le 0` reads as 0: no practical
    threshold), ``lo`` = ``lower`` and ``hi`` = ``upper``, the interval falls in exactly
    one region:

    * ``worthwhile gain``: :math:`g > 0`, :math:`lo > g`;
    * ``better; gain uncertain``: :math:`0 < lo \le g < hi`;
    * ``better, but by less than min_gain``: :math:`0 < lo`, :math:`hi \le g`;
    * ``better``: :math:`g = 0`, :math:`lo > 0`;
    * ``practically equivalent``: :math:`-g \le lo \le 0 \le hi \le g`, :math:`g > 0`;
    * ``no worthwhile gain``: :math:`lo < -g`, :math:`0 \le hi \le g`;
    * ``no loss beyond min_gain``: :math:`-g \le lo \le 0`, :math:`hi > g`;
    * ``uncertain``: :math:`lo \le 0 \le hi` and either :math:`g = 0` or
      :math:`lo < -g`, :math:`hi > g`;
    * ``worse, but by less than min_gain``: :math:`-g \le lo`, :math:`hi < 0`;
    * ``worse; loss uncertain``: :math:`lo < -g \le hi < 0`;
    * ``worse by more than min_gain``: :math:`g > 0`, :math:`hi < -g`;
    * ``worse``: :math:`g = 0`, :math:`hi < 0`.

    The region of practical equivalence (ROPE) is :math:`[-g, g]` (Kruschke 2018):
    ``better, but by less than min_gain``, ``practically equivalent`` and ``worse, but
    by less than min_gain`` are the intervals inside it.

    References
    ----------
    Kruschke, J. K. (2018). Rejecting or accepting parameter values in Bayesian
    estimation. *Advances in Methods and Practices in Psychological Science* 1(2),
    270-280. doi:10.1177/2515245918771304
    """
    g = max(float(min_gain), 0.0)
    if lower > 0:
        if g == 0:
            return "better"
        if lower > g:
            return "worthwhile gain"
        return "better; gain uncertain" if upper > g else "better, but by less than min_gain"
    if upper < 0:
        if g == 0:
            return "worse"
        if upper < -g:
            return "worse by more than min_gain"
        return "worse; loss uncertain" if lower < -g else "worse, but by less than min_gain"
    if g == 0:
        return "uncertain"
    if lower >= -g and upper <= g:
        return "practically equivalent"
    if upper <= g:
        return "no worthwhile gain"
    if lower >= -g:
        return "no loss beyond min_gain"
    return "uncertain"
