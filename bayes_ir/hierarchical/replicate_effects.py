r"""Contrasts of systems with several runs: in expectation, for one run, and the variance parts.

For challenger :math:`s` and champion :math:`h`, from the draws of a
:class:`~bayes_ir.hierarchical.replicates.ReplicateFit`:

* the **contrast in expectation** :math:`\delta = \beta_s - \beta_h`: the difference of
  the systems' expected scores over the population of runs (seeds) and topics;
* the **single-run contrast** :math:`\delta_1 = \delta + \rho_{s,new} - \rho_{h,new}`,
  :math:`\rho_{\cdot,new} \sim N(0, \kappa^2_\cdot)`: one run of each drawn at random,
  and :math:`P(\delta_1 > m)`, the probability that a random run of the challenger
  beats a random run of the champion (by more than the margin :math:`m`);
* the **variance components**: residual SD :math:`\sigma`, topic SD :math:`\tau`,
  system SD :math:`\chi`, topic x system SD :math:`\psi` and run-to-run SD
  :math:`\kappa` (one, or one per system);
* each system's **observed runs**: the mean score of every run over the topics it
  scored, beside the posterior of the system's expected score :math:`b_0 + \beta_s`.

References
----------
Bouthillier, X., Delaunay, P., Bronzi, M., et al. (2021). Accounting for variance in
machine learning benchmarks. *MLSys 2021*.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.hierarchical.diagnostics import GateStatus

__all__ = ["REPLICATE_COLUMNS", "ReplicateContrasts", "contrasts_replicates"]

#: Columns of :meth:`ReplicateContrasts.to_frame`.
REPLICATE_COLUMNS: tuple[str, ...] = (
    "challenger",
    "champion",
    "over",
    "mean",
    "sd",
    "ci_lower",
    "ci_upper",
    "p_better",
    "observed",
    "runs_challenger",
    "runs_champion",
)
#: The variance components, in the order they are reported.
COMPONENTS: tuple[tuple[str, str], ...] = (
    ("sigma_replicate", "run-to-run (seed) SD"),
    ("sigma_topic_system", "topic x system SD"),
    ("sigma", "residual SD"),
    ("sigma_topic", "topic SD"),
    ("sigma_system", "system SD"),
)


@dataclass(frozen=True, eq=False)
class ReplicateContrasts:
    r"""Every challenger against the champion, in expectation and for one run.

    Build it with :func:`contrasts_replicates` (or :meth:`ReplicateFit.contrasts
    <bayes_ir.hierarchical.replicates.ReplicateFit.contrasts>`). Attributes hold raw numbers.

    Attributes
    ----------
    champion, challengers
        The systems compared.
    systems
        Every system of the fit, in order.
    measure
        The measure.
    ci_prob, margin
        Interval probability; the margin a contrast must exceed.
    expectation, single_run
        Draws (N, J) of the contrasts in expectation and of one run of each.
    components
        ``{name: draws (N,) or (N, S)}`` of the variance components
        (:data:`COMPONENTS`; ``sigma_replicate`` is (N, S) with one SD per system).
    expected
        Draws (N, S) of every system's expected score :math:`b_0 + \beta_s`.
    runs
        The observed runs: ``system, replicate, mean, n_topics`` (mean score of each
        run over the topics it scored).
    observed
        Raw difference of the systems' mean scores over all their runs, (J,).
    gate
        The fit's diagnostics gate.
    header
        One line naming the data and the model.
    model_check
        The fit's model check (``None`` when it was not run).
    misfit
        The champion and challengers the model check flags.
    """

    champion: str
    challengers: tuple[str, ...]
    systems: tuple[str, ...]
    measure: str
    ci_prob: float
    margin: float
    expectation: np.ndarray
    single_run: np.ndarray
    components: dict[str, np.ndarray]
    expected: np.ndarray
    runs: pd.DataFrame
    observed: np.ndarray
    gate: GateStatus
    header: str
    model_check: Any = None
    misfit: tuple[str, ...] = ()

    def draws(self, over: str = "expectation") -> np.ndarray:
        """Draws (N, J) of the contrasts ``over`` ``"expectation"`` or ``"single_run"``."""
        from bayes_ir.hierarchical.replicates import OVER

        validate.choice("over", over, OVER)
        return self.expectation if over == "expectation" else self.single_run

    def n_runs(self, system: str) -> int:
        """Return the number of runs of ``system``."""
        return int((self.runs["system"] == system).sum())

    def to_frame(self) -> pd.DataFrame:
        """Return two rows per challenger, columns :data:`REPLICATE_COLUMNS`.

        ``over`` is ``expectation`` or ``single_run``; ``p_better`` is P(contrast > margin).
        """
        lo, hi = (1 - self.ci_prob) / 2, (1 + self.ci_prob) / 2
        rows = []
        for j, c in enumerate(self.challengers):
            for over in ("expectation", "single_run"):
                x = self.draws(over)[:, j]
                rows.append((c, self.champion, over, float(x.mean()), float(x.std(ddof=1)),
                             float(np.quantile(x, lo)), float(np.quantile(x, hi)),
                             float((x > self.margin).mean()), float(self.observed[j]),
                             self.n_runs(c), self.n_runs(self.champion)))  # fmt: skip
        return pd.DataFrame(rows, columns=list(REPLICATE_COLUMNS))

    def components_frame(self) -> pd.DataFrame:
        """Return the variance components: ``component, system, mean, ci_lower, ci_upper``.

        ``system`` is empty for a component shared by every system.
        """
        lo, hi = (1 - self.ci_prob) / 2, (1 + self.ci_prob) / 2
        rows = []
        for name, _ in COMPONENTS:
            x = self.components[name]
            if x.ndim == 1:
                x = x[:, None]
            labels = self.systems if x.shape[1] > 1 else ("",)
            for k, lab in enumerate(labels):
                v = x[:, k]
                rows.append((name, lab, float(v.mean()), float(np.quantile(v, lo)),
                             float(np.quantile(v, hi))))  # fmt: skip
        return pd.DataFrame(rows, columns=["component", "system", "mean", "ci_lower", "ci_upper"])

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Header, gate, variance components and both contrasts of every challenger."""
        from bayes_ir.report.replicates import replicates_summary

        return replicates_summary(self)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.to_frame().to_html(index=False)

    def plot(self, **kwargs: Any) -> Any:
        """Every system's runs beside the interval of its expected score.

        See :func:`bayes_ir.plots.replicates.plot_replicates`.
        """
        from bayes_ir.plots.replicates import plot_replicates

        return plot_replicates(self, **kwargs)


def _runs(fit: Any) -> pd.DataFrame:
    """Mean score of every run over the topics it scored."""
    cells = fit.design.cells.assign(score=fit.design.y)
    runs = (
        cells.groupby(["system", "replicate"], sort=False)["score"]
        .agg(["mean", "size"])
        .reset_index()
        .rename(columns={"size": "n_topics"})
    )
    order = {s: i for i, s in enumerate(fit.design.systems)}
    return runs.sort_values("system", key=lambda s: s.map(order), kind="stable").reset_index(
        drop=True
    )


def contrasts_replicates(
    fit: Any,
    *,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    ci_prob: float | None = None,
    margin: float = 0.0,
) -> ReplicateContrasts:
    """Contrasts of every challenger with the champion from a :class:`ReplicateFit`.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.replicates.ReplicateFit`.
    champion, challengers
        Override the roles of the fit's table.
    ci_prob
        Interval probability (default :data:`bayes_ir.defaults.CI_PROB`).
    margin
        P(better) is P(contrast > ``margin``) (in the measure's units; default 0).

    Returns
    -------
    ReplicateContrasts
    """
    design = fit.design
    p = defaults.ci_prob(ci_prob)
    margin = validate.finite_float("margin", margin)
    champ, chals = fit._roles(champion, challengers)
    runs = _runs(fit)
    sys_mean = runs.groupby("system", sort=False)["mean"].mean()
    observed = np.array([sys_mean[c] - sys_mean[champ] for c in chals])
    components = {name: fit.term_draws(name) for name, _ in COMPONENTS}
    components = {k: (v[:, 0] if v.shape[1] == 1 else v) for k, v in components.items()}
    expected = fit.term_draws("b0")[:, :1] + fit.term_draws("system")
    n_runs = design.term("replicate").n_levels
    header = (
        f"Bayesian model of runs (Gaussian; {fit.method}): {len(design.systems)} systems, "
        f"{n_runs} runs, {design.term('topic').n_levels} topics; "
        f"run-to-run SD {'per system' if fit.sigma_replicate == 'system' else 'pooled'}\n"
        f"{fit.describe_draws()}"
    )
    flagged = getattr(fit.model_check, "flagged", ())
    return ReplicateContrasts(
        champion=champ,
        challengers=chals,
        systems=tuple(design.systems),
        measure=", ".join(sorted(set(design.measures.values()))),
        ci_prob=p,
        margin=margin,
        expectation=fit.contrast_draws(over="expectation", champion=champ, challengers=chals),
        single_run=fit.contrast_draws(over="single_run", champion=champ, challengers=chals),
        components=components,
        expected=expected,
        runs=runs,
        observed=observed,
        gate=fit.gate(),
        header=header,
        model_check=fit.model_check,
        misfit=tuple(s for s in flagged if s in (champ, *chals)),
    )
