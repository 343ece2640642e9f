"""Package-wide defaults, set once (in the spirit of ArviZ's ``rcParams``).

Every public function that takes one of these options uses the same keyword name
and falls back to the value here when the caller passes ``None``.
"""

from __future__ import annotations

#: Probability mass of credible and confidence intervals.
CI_PROB: float = 0.95
#: Loss weights r of the risk-adjusted difference used by sweeps (Benham et al. 2020).
RISK_LEVELS: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0)
#: MCMC defaults of the hierarchical model.
CHAINS: int = 4
DRAWS: int = 2000
TUNE: int = 1000
TARGET_ACCEPT: float = 0.9
#: Diagnostics gate: R-hat at most, bulk and tail ESS at least.
RHAT_MAX: float = 1.01
ESS_MIN: float = 400.0
#: Kruschke's bar for stable 95% interval limits, the Bayesian-risk paper's standard.
ESS_MIN_PAPER: float = 10_000.0
#: Fraction of artifact runs dropped from the bottom by mean (Benham et al. 2020; Urbano 2016).
ARTIFACT_DROP_BOTTOM: float = 0.25
#: Default seed of stochastic methods when the caller gives none.
SEED: int = 20200725
#: Tolerance when checking scores against a measure's range.
RANGE_TOLERANCE: float = 1e-9


def ci_prob(value: float | None) -> float:
    """Return ``value`` or the default interval probability, validated to lie in (0, 1)."""
    p = CI_PROB if value is None else float(value)
    if not 0.0 < p < 1.0:
        raise ValueError(f"ci_prob must lie strictly between 0 and 1, got {p}")
    return p
