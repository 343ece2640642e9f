"""A NUTS run at the default target acceptance that diverged is run once more, with smaller steps.

Divergent transitions mean NUTS's steps were too large for some region of the posterior
(typically the prior-dominated tail of a scale with few levels: the SD of two systems'
effects), and the draws may be biased; more draws do not cure them, smaller steps do.
So when the caller did not choose ``target_accept``, a run at the default that diverged
is redone once at :data:`RETRY_TARGET_ACCEPT`, and the result says so. A
``target_accept`` chosen by the caller is kept as given: the diagnostics gate then
reports the divergences. :func:`describe_rerun` is the sentence every summary prints
about a rerun, and :func:`refit_settings` the settings of the refit every command names
when a gate fails all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bayes_ir import defaults
from bayes_ir.hierarchical.diagnostics import count_divergences

__all__ = [
    "RETRY_TARGET_ACCEPT",
    "default_target_accept",
    "describe_rerun",
    "refit_settings",
    "retry_if_diverged",
]

#: Target acceptance of the rerun of a NUTS fit whose default run diverged (smaller
#: steps: the GLUE RTE Bernoulli table, 2 systems, diverged 49 times at 0.9, never at 0.99).
RETRY_TARGET_ACCEPT: float = 0.99
#: The target acceptances a refit after divergent transitions climbs through, in turn.
REFIT_TARGET_ACCEPTS: tuple[float, ...] = (RETRY_TARGET_ACCEPT, 0.995)


def default_target_accept(shape: tuple[int, int]) -> float:
    r"""Return the default NUTS target acceptance of a table of ``shape`` (topics, systems).

    :data:`bayes_ir.defaults.LARGE_TABLE_TARGET_ACCEPT` (0.65) when the table has at least
    :data:`bayes_ir.defaults.LARGE_TABLE_LEVELS` (20, 10) topics and systems, else
    :data:`bayes_ir.defaults.TARGET_ACCEPT` (0.9).

    Notes
    -----
    The acceptance rate that maximises the efficiency of Hamiltonian Monte Carlo tends to
    0.651 as the dimension grows (Beskos et al. 2013); Hoffman and Gelman (2014) give NUTS
    0.65. A higher target buys smaller steps, which a posterior needs where its curvature
    changes: the funnel of a scale informed by a few topics or systems. With many of both
    the scales are well informed, and 0.65 takes about half the leapfrog steps per draw of
    0.9 (7 against 15 on Robust04 AP under zoib and on rb04 under the skew-normal) while
    the ESS per draw falls less: the ESS per second of the sampling rose 1.5 (bulk) to 2
    (tail) times on Robust04 AP under zoib, 1.25 times on rb04 under the skew-normal, and
    stayed about the same on 500 x 100 Bernoulli outcomes (``benchmarks/bench_families.py``,
    ``benchmarks/bench_speed.py``). On small tables 0.7 diverged or mixed badly (30
    items x 3 systems, 8 topics x 4 systems), so they keep 0.9. Either way a run that
    diverged at the default is redone at :data:`RETRY_TARGET_ACCEPT`
    (:func:`retry_if_diverged`) and the diagnostics gate judges the draws kept.

    References
    ----------
    Beskos, A., Pillai, N., Roberts, G., Sanz-Serna, J.-M., Stuart, A. (2013). Optimal
    tuning of the hybrid Monte Carlo algorithm. *Bernoulli* 19(5A), 1501-1534.

    Hoffman, M. D., Gelman, A. (2014). The No-U-Turn sampler. *JMLR* 15, 1593-1623.
    """
    topics, systems = defaults.LARGE_TABLE_LEVELS
    if shape[0] >= topics and shape[1] >= systems:
        return defaults.LARGE_TABLE_TARGET_ACCEPT
    return defaults.TARGET_ACCEPT


def retry_if_diverged[R](
    draw: Callable[[float], R],
    stats_of: Callable[[R], Any],
    *,
    target_accept: float | None,
    default: float,
) -> tuple[R, float, int]:
    """Run ``draw(target_accept)``; at ``default`` when it is ``None``, then maybe once more.

    Parameters
    ----------
    draw
        Samples at the target acceptance it is given.
    stats_of
        The ``sample_stats`` of a result of ``draw`` (with ``diverging``), or ``None``.
    target_accept
        The caller's choice, run as given; ``None``: ``default``, and a run that
        diverged again at :data:`RETRY_TARGET_ACCEPT` (when that is higher).
    default
        The default target acceptance.

    Returns
    -------
    result, target_accept, diverged
        The result kept, the target acceptance it ran at, and the divergent transitions
        of the default run it replaced (0 when there was no rerun).
    """
    if target_accept is not None:
        return draw(target_accept), target_accept, 0
    result = draw(default)
    diverged = count_divergences(stats_of(result)) or 0
    if not diverged or default >= RETRY_TARGET_ACCEPT:
        return result, default, 0
    return draw(RETRY_TARGET_ACCEPT), RETRY_TARGET_ACCEPT, diverged


def describe_rerun(provenance: Mapping[str, Any], default: float) -> str:
    """Say whether and why a fit's NUTS run was redone, from its provenance.

    ``"rerun at target_accept 0.99 after 6 divergent transitions at the default 0.95"``,
    or ``""`` when the run kept is the first. ``default``: the default target acceptance
    of the fit's sampler, for provenance that does not record it (fits saved before it
    did).
    """
    diverged = provenance.get("divergences_at_default_target_accept")
    if not diverged:
        return ""
    at = float(provenance.get("default_target_accept", default))
    return (
        f"rerun at target_accept {float(provenance['target_accept']):g} after {int(diverged)} "
        f"divergent transitions at the default {at:g}"
    )


def refit_settings(
    diagnostics: Any, provenance: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """Return the settings that remedy a fit's failed diagnostics, and what each is for.

    Each failed check has its own remedy (:meth:`~bayes_ir.hierarchical.Diagnostics.failures`
    says why): divergent transitions call for smaller steps, the next of
    :data:`REFIT_TARGET_ACCEPTS` above the target acceptance the fit ran at (past the
    last, twice the warm-up); a low BFMI for twice the warm-up; R-hat above or ESS below
    the gate for twice the draws (at least :data:`bayes_ir.defaults.DRAWS`). More draws
    do not cure divergences. With no failed check named (a gate failed on a quantity the
    caller reads), more draws.

    Parameters
    ----------
    diagnostics
        The fit's :class:`~bayes_ir.hierarchical.Diagnostics`.
    provenance
        The fit's provenance (``target_accept``, ``tune``, ``draws`` as it ran).

    Returns
    -------
    settings, reasons
        ``{"target_accept" | "tune" | "draws": value}`` and one phrase per setting, e.g.
        ``"target_accept 0.99 (29 divergent transitions)"``.
    """
    d = diagnostics
    settings: dict[str, Any] = {}
    reasons = []
    tune = provenance.get("tune")
    if d.divergences_ok is False:
        now = float(provenance.get("target_accept") or defaults.TARGET_ACCEPT)
        higher = [t for t in REFIT_TARGET_ACCEPTS if t > now + 1e-9]
        if higher:
            settings["target_accept"] = higher[0]
            reasons.append(f"target_accept {higher[0]:g} ({d.divergences} divergent transitions)")
    if tune and (d.bfmi_ok is False or (d.divergences_ok is False and not reasons)):
        settings["tune"] = 2 * int(tune)
        reasons.append(f"a warm-up of {2 * int(tune):,}")
    if not (d.rhat_ok and d.ess_ok) or not reasons:
        settings["draws"] = max(2 * int(provenance.get("draws") or d.draws), defaults.DRAWS)
        reasons.append("more draws")
    return settings, reasons
