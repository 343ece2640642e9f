r"""Interval estimates of the correlation between the observed and the true ranking.

The point estimators of :mod:`~bayes_ir.reliability.expected` give the *expected*
correlation. Urbano and Marrero leave its uncertainty as future work; here are two
distributions of the actual correlation :math:`\tau(\text{truth}, \text{observed})`:

- :func:`bootstrap_interval`: by the bootstrap principle, the observed means play the
  truth and the means of topic resamples play a new observed ranking;
- :func:`bayesian_interval`: posterior draws of the true system means from the
  hierarchical model (:func:`bayes_ir.hierarchical.fit`) against the observed ranking.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import validate
from bayes_ir.defaults import RELIABILITY_BOOTSTRAP
from bayes_ir.defaults import ci_prob as _ci_prob
from bayes_ir.errors import BayesIRError
from bayes_ir.reliability.correlation import _tau_ap_batch, _tau_batch
from bayes_ir.reliability.estimators import _bootstrap_means
from bayes_ir.reliability.expected import table_matrix
from bayes_ir.table import ScoreTable

__all__ = ["CorrelationInterval", "bayesian_interval", "bootstrap_interval"]

#: Columns of :meth:`CorrelationInterval.conf_int` and ``to_frame``.
FRAME_COLUMNS = ("method", "coefficient", "estimate", "ci_lower", "ci_upper", "ci_prob")


@dataclass(frozen=True)
class CorrelationInterval:
    """Distribution of the correlation between the observed ranking and the true one.

    Attributes
    ----------
    method
        ``"bootstrap"`` or ``"bayesian"``.
    tau, tau_ap
        Draws of tau and tau_AP (truth first) between the true and the observed ranking.
    systems
        Systems in observed order (best first).
    n_topics, collection, measure
        What the interval is about.
    ci_prob
        Default probability of :meth:`conf_int`.
    seed
        Seed of the resampling (bootstrap) or of the fit (Bayesian).
    notes
        Messages (e.g. the fit's diagnostics).
    """

    method: str
    tau: np.ndarray
    tau_ap: np.ndarray
    systems: tuple[str, ...]
    n_topics: int
    collection: str
    measure: str
    ci_prob: float
    seed: int | None
    notes: tuple[str, ...] = ()

    def conf_int(self, ci_prob: float | None = None) -> pd.DataFrame:
        """Mean and equal-tailed interval of each coefficient (:data:`FRAME_COLUMNS`)."""
        prob = _ci_prob(self.ci_prob if ci_prob is None else ci_prob)
        q = [(1 - prob) / 2, (1 + prob) / 2]
        rows = []
        for name, draws in (("tau", self.tau), ("tau_ap", self.tau_ap)):
            lo, hi = np.quantile(draws, q)
            rows.append((self.method, name, float(np.mean(draws)), float(lo), float(hi), prob))
        return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))

    def to_frame(self) -> pd.DataFrame:
        """Return :meth:`conf_int` at the stored ``ci_prob``."""
        return self.conf_int()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Printable header and intervals."""
        what = {
            "bootstrap": "bootstrap over topics (observed means as the truth)",
            "bayesian": "posterior draws of the true system means (hierarchical model)",
        }[self.method]
        frame = self.conf_int()
        pct = f"{100 * self.ci_prob:g}%"
        lines = [
            f"Correlation between the observed and the true ranking: {what}",
            f"collection {self.collection!r}, measure {self.measure!r}: {self.n_topics} topics "
            f"x {len(self.systems)} systems, {len(self.tau)} draws",
        ]
        for row in frame.itertuples(index=False):
            lines.append(
                f"{row.coefficient:<7} mean {row.estimate:.4f}   {pct} interval "
                f"[{row.ci_lower:.4f}, {row.ci_upper:.4f}]"
            )
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def plot(self, **kwargs: Any) -> Any:
        """Histograms of the draws (see :func:`bayes_ir.plots.reliability.plot_interval`)."""
        from bayes_ir.plots.reliability import plot_interval

        return plot_interval(self, **kwargs)


def bootstrap_interval(
    table: ScoreTable,
    *,
    n_boot: int | None = None,
    ci_prob: float | None = None,
    collection: str | None = None,
    measure: str | None = None,
    seed: int | None = None,
) -> CorrelationInterval:
    r"""Bootstrap distribution of the correlation with the true ranking.

    Parameters
    ----------
    table
        Complete scores.
    n_boot
        Topic resamples (default :data:`bayes_ir.defaults.RELIABILITY_BOOTSTRAP`).
    ci_prob
        Interval probability (default :data:`bayes_ir.defaults.CI_PROB`).
    collection, measure
        Block of the table.
    seed
        Seed of the resampling.

    Returns
    -------
    CorrelationInterval

    Notes
    -----
    By the bootstrap principle, the distribution of :math:`\tau(\mu, \hat\mu)` (truth
    :math:`\mu`, observed means :math:`\hat\mu`) is approximated by that of
    :math:`\tau(\hat\mu, \hat\mu^*_b)`, with :math:`\hat\mu^*_b` the system means on the
    b-th resample of the topics with replacement; likewise for :math:`\tau_{AP}`.
    The mean of the tau draws is the RES estimate of :math:`E[\tau]` computed with
    shared resamples. Like RES, it tends to be slightly optimistic for small topic sets.

    References
    ----------
    B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.
    J. Urbano and M. Marrero, "Toward Estimating the Rank Correlation between the Test
    Collection Results and the True System Performance", SIGIR 2016, 1033-1036.
    """
    n_boot = validate.positive_int(
        "n_boot", RELIABILITY_BOOTSTRAP if n_boot is None else n_boot, minimum=2
    )
    seed = validate.seed(seed)
    x, systems, coll, meas = table_matrix(table, collection=collection, measure=measure)
    boot = _bootstrap_means(x, n_boot, np.random.default_rng(seed))
    # bootstrap world: the observed means are the truth, a resample is the observation
    return _interval("bootstrap", x.mean(axis=0), boot, x, systems, coll, meas, ci_prob, seed)


def _interval(
    method: str,
    truth: np.ndarray,
    estimate: np.ndarray,
    x: np.ndarray,
    systems: list[str],
    coll: str,
    meas: str,
    ci_prob: float | None,
    seed: int | None,
) -> CorrelationInterval:
    observed = x.mean(axis=0)
    order = np.argsort(-observed, kind="stable")
    return CorrelationInterval(
        method=method,
        tau=_tau_batch(truth, estimate),
        tau_ap=_tau_ap_batch(truth, estimate),
        systems=tuple(systems[k] for k in order),
        n_topics=x.shape[0],
        collection=coll,
        measure=meas,
        ci_prob=_ci_prob(ci_prob),
        seed=seed,
    )


def bayesian_interval(
    table: ScoreTable,
    *,
    fit: Any = None,
    ci_prob: float | None = None,
    collection: str | None = None,
    measure: str | None = None,
    seed: int | None = None,
    **fit_kwargs: Any,
) -> CorrelationInterval:
    r"""Posterior distribution of the correlation between the true and the observed ranking.

    Parameters
    ----------
    table
        Complete scores (one collection and measure).
    fit
        A :class:`bayes_ir.hierarchical.HierarchicalFit` of ``table`` (its
        ``system_mean_draws()`` are used); fitted with :func:`bayes_ir.hierarchical.fit`
        (``seed`` and ``fit_kwargs`` passed on) when ``None``. A table without roles gets
        its best system as a nominal champion (the posterior does not depend on it).
    ci_prob
        Interval probability.
    collection, measure
        Block of the table.
    seed
        Seed of the fit.
    **fit_kwargs
        Options of :func:`bayes_ir.hierarchical.fit` (``likelihood``, ``draws``, ...).

    Returns
    -------
    CorrelationInterval

    Notes
    -----
    In the model :math:`y_{ts} = b_0 + a_t + \theta_s + \varepsilon_{ts}` (zero-sum
    effects) the true mean of system :math:`s` over the population of topics is
    :math:`b_0 + \theta_s`. Each posterior draw :math:`d` gives a true ranking; the
    draws of :math:`\tau(b_0^{(d)} + \theta^{(d)}, \hat\mu)` and of :math:`\tau_{AP}`
    (truth first) form the posterior of the correlation with the observed ranking
    :math:`\hat\mu`. With a skew-normal likelihood the ranking is that of the model's
    means.

    References
    ----------
    D. Benham, B. Carterette, J. S. Culpepper and A. Moffat, "Bayesian inferential risk
    evaluation on multiple IR systems", SIGIR 2020.
    J. Urbano and M. Marrero, SIGIR 2016 (the point estimators).
    """
    x, systems, coll, meas = table_matrix(table, collection=collection, measure=measure)
    if fit is None:
        from bayes_ir import hierarchical

        sub = table.select(collection=coll, measure=meas)
        if sub.roles is None:  # the model needs roles; any champion gives the same posterior
            sub = sub.with_roles(champion=systems[0], challengers=[], artifacts=None)
        fit = hierarchical.fit(sub, seed=validate.seed(seed), **fit_kwargs)
    means = fit.system_mean_draws()
    known = {str(s) for s in means["system"].to_numpy()}
    missing = [s for s in systems if s not in known]
    if missing:
        raise BayesIRError(f"the fit does not cover systems {missing[:5]} of the table")
    stacked = means.sel(system=systems).stack(sample=("chain", "draw"))
    truth = stacked.transpose("sample", "system").to_numpy()
    return _interval("bayesian", truth, x.mean(axis=0), x, systems, coll, meas, ci_prob, seed)
