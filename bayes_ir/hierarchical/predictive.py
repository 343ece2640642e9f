r"""Posterior predictive intervals for every observed (topic, system) score.

For each posterior draw the model's distribution of a score is simulated once, so the
interval of a cell reflects both the uncertainty of the parameters and the residual
noise. Comparing the intervals with the observed scores shows where the model fits
(the paper's Figure 3 contrasts the Gaussian and skew-normal likelihoods this way):
about ``ci_prob`` of the observed scores should fall inside their intervals.

References
----------
Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
doi:10.1145/3397271.3401033

Gelman, A., Meng, X.-L., and Stern, H. (1996). Posterior predictive assessment of
model fitness via realized discrepancies. *Statistica Sinica* 6(4), 733-760.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.errors import OptionError
from bayes_ir.hierarchical.contrasts import (
    _check_systems,
    _gate,
    _Gated,
    _header,
    _posterior,
    system_draws,
    topic_draws,
)
from bayes_ir.hierarchical.diagnostics import GateStatus

__all__ = ["PREDICTIVE_COLUMNS", "PredictiveIntervals", "posterior_predictive"]

#: Columns of :meth:`PredictiveIntervals.to_frame`.
PREDICTIVE_COLUMNS = (
    "topic",
    "system",
    "role",
    "observed",
    "mean",
    "ci_lower",
    "ci_upper",
    "covered",
)


@dataclass(frozen=True)
class PredictiveIntervals(_Gated):
    """Posterior predictive interval and observed score of each (topic, system) cell.

    Attributes
    ----------
    frame
        One row per observed cell, columns :data:`PREDICTIVE_COLUMNS`.
    ci_prob
        Probability mass of the intervals.
    likelihood
        ``"gaussian"`` or ``"skew_normal"``.
    seed
        Seed of the predictive simulation.
    gate
        Diagnostics status of the fit.
    """

    frame: pd.DataFrame
    ci_prob: float
    likelihood: str
    seed: int
    gate: GateStatus
    header: str
    fit: Any = field(default=None, repr=False, compare=False)

    @property
    def coverage(self) -> float:
        """Fraction of observed scores inside their predictive interval."""
        return float(self.frame["covered"].mean())

    def coverage_by_system(self) -> pd.DataFrame:
        """Columns ``system, role, coverage, n`` (the fraction covered per system)."""
        g = self.frame.groupby(["system", "role"], sort=False)["covered"]
        return g.agg(coverage="mean", n="count").reset_index()

    def to_frame(self) -> pd.DataFrame:
        """One row per cell.

        Returns
        -------
        pandas.DataFrame
            With these columns:

            topic, system, role
                The cell and the system's role.
            observed
                The observed score.
            mean
                Posterior predictive mean (the model's expected score for the cell).
            ci_lower, ci_upper
                Equal-tailed ``ci_prob`` posterior predictive interval.
            covered
                Whether the observed score lies inside the interval.
        """
        return self.frame.copy()

    def conf_int(self, ci_prob: float | None = None) -> pd.DataFrame:
        """Columns ``topic, system, estimate, ci_lower, ci_upper`` (new ``ci_prob``: recomputed)."""
        res = self
        if ci_prob is not None and float(ci_prob) != self.ci_prob:
            if self.fit is None:
                raise OptionError(
                    "this result does not keep its fit: call posterior_predictive again"
                )
            systems = list(dict.fromkeys(self.frame["system"]))
            res = posterior_predictive(self.fit, ci_prob=ci_prob, seed=self.seed, systems=systems)
        out = res.frame[["topic", "system", "mean", "ci_lower", "ci_upper"]]
        return out.rename(columns={"mean": "estimate"}).reset_index(drop=True)

    def summary(self) -> str:
        """Header, diagnostics, overall coverage and coverage per system (champion, challengers)."""
        by = self.coverage_by_system()
        shown = by[by["role"] != "artifact"] if (by["role"] != "artifact").any() else by
        lines = [
            self.header,
            self.gate.banner(),
            "",
            f"{100 * self.ci_prob:g}% posterior predictive intervals ({self.likelihood}): "
            f"{self.coverage:.3f} of {len(self.frame)} observed scores inside "
            f"(expected about {self.ci_prob:g}).",
        ]
        out_of_range = ((self.frame["ci_lower"] < 0) | (self.frame["ci_upper"] > 1)).mean()
        lines.append(f"Intervals reaching outside [0, 1]: {out_of_range:.3f} of the cells.")
        lines.append("Coverage per system:")
        lines.extend(
            f"  {r.system:<20} {r.role:<10} {r.coverage:.3f} (n = {r.n})"
            for r in shown.itertuples()
        )
        return "\n".join(lines)

    def plot(self, **kwargs: Any) -> Any:
        """Intervals per topic with the observed scores (the paper's Figure 3)."""
        from bayes_ir.plots.hierarchical import plot_predictive

        return plot_predictive(self, **kwargs)


def _observed(fit: Any) -> pd.DataFrame:
    table = getattr(fit, "table", None)
    if table is None:
        raise TypeError("posterior_predictive needs a fit that keeps its ScoreTable (fit.table)")
    return table.matrix().to_pandas()


def posterior_predictive(
    fit: Any,
    *,
    ci_prob: float | None = None,
    seed: int | None = None,
    systems: Iterable[str] | None = None,
) -> PredictiveIntervals:
    r"""Posterior predictive interval of every observed score.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` (it must keep its ``table``).
    ci_prob
        Interval probability (default :data:`bayes_ir.defaults.CI_PROB`).
    seed
        Seed of the predictive simulation (default :data:`bayes_ir.defaults.SEED`).
    systems
        Restrict to these systems (default: all systems of the fit).

    Returns
    -------
    PredictiveIntervals

    Notes
    -----
    For posterior draw :math:`i` the mean of cell :math:`(t, s)` is
    :math:`\mu^{(i)}_{ts} = \beta^{(i)}_0 + a^{(i)}_t + c^{(i)}_s` and one replicate is
    drawn, :math:`\tilde y^{(i)}_{ts} \sim N(\mu^{(i)}_{ts}, \sigma^{(i)}_s)` (Gaussian) or
    from the skew-normal with mean :math:`\mu^{(i)}_{ts}`, SD :math:`\sigma^{(i)}_s` and shape
    :math:`\alpha^{(i)}` (:math:`\sigma_s = \sigma` unless the fit has one residual SD
    per system; converted to location and scale as brms does, see
    :func:`bayes_ir.hierarchical.skewnormal.skewnormal_location_scale`). The interval is
    the :math:`(1 \mp p)/2` quantiles of :math:`\tilde y_{ts}` over the draws; the
    reported mean is the mean of :math:`\mu_{ts}`, the predictive mean without
    simulation noise.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
    """
    from bayes_ir.hierarchical.families import family_of

    p = defaults.ci_prob(ci_prob)
    seed = validate.seed(seed)
    post = _posterior(fit)
    u = system_draws(fit)
    a = topic_draws(fit)
    family = family_of(fit)
    observed = _observed(fit)
    chosen = (
        [str(s) for s in u["system"].values]
        if systems is None
        else _check_systems(systems, [str(s) for s in u["system"].values], "system")
    )
    topics = [str(t) for t in a["topic"].values]
    # per system: the topic means, the simulated scores and their copies, draws x topics each
    samples = post.sizes["chain"] * post.sizes["draw"]
    shape = {"draws": samples, "topics": len(topics), "arrays at once": 4}
    validate.memory("the posterior predictive draws", shape)
    missing = set(map(str, observed.index)) - set(topics)
    if missing:
        raise TypeError(f"the fit's topics do not match its table (e.g. {sorted(missing)[0]!r})")

    likelihood = str(getattr(fit, "likelihood", "") or family.name)
    params = family.parameters(post)
    index = {str(s): j for j, s in enumerate(post["system"].values)}
    roles = dict(zip(map(str, u["system"].values), map(str, u["role"].values), strict=True))
    lo, hi = (1 - p) / 2, (1 + p) / 2
    rng = np.random.default_rng(seed)
    rows = []
    for system in chosen:
        if system not in observed.columns:
            raise TypeError(f"system {system!r} is in the fit but not in its table")
        cells = family.cells(params, np.array([index[system]]))
        mu = cells.mean[:, 0, :]
        rep = cells.rvs(rng)[:, 0, :]
        q = np.quantile(rep, [lo, hi], axis=0)
        obs = observed.loc[topics, system].to_numpy(dtype=float)
        rows.append(
            pd.DataFrame(
                {
                    "topic": topics,
                    "system": system,
                    "role": roles[system],
                    "observed": obs,
                    "mean": mu.mean(axis=0),
                    "ci_lower": q[0],
                    "ci_upper": q[1],
                }
            )
        )
    frame = pd.concat(rows, ignore_index=True)
    frame = frame[np.isfinite(frame["observed"])].reset_index(drop=True)
    frame["covered"] = (frame["observed"] >= frame["ci_lower"]) & (
        frame["observed"] <= frame["ci_upper"]
    )
    return PredictiveIntervals(
        frame=frame[list(PREDICTIVE_COLUMNS)],
        ci_prob=p,
        likelihood=likelihood,
        seed=seed,
        gate=_gate(fit),
        header=_header(fit, "Posterior predictive check"),
        fit=fit,
    )
