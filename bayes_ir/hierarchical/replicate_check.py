r"""Posterior predictive checks of a model of runs: every system's run-to-run and residual spread.

Within system :math:`s`, the model of :func:`~bayes_ir.hierarchical.fit_replicates` is

.. math::

    y_{tr} = \mu_t + \rho_r + e_{tr}, \qquad \mu_t = b_0 + a_t + \beta_s + (a\beta)_{ts},
    \quad \rho_r \sim N(0, \kappa_s^2),\ e_{tr} \sim N(0, \sigma^2).

The checks read the least-squares fit of :math:`y_{tr} = m_t + c_r` (fixed topic and
run effects) to the system's observed cells: its run effects :math:`\hat c_r` and
residuals :math:`\hat e_{tr}` do not depend on :math:`\mu_t` at all, so their
distribution given :math:`(\kappa_s, \sigma)` is that of the same fit to
:math:`\tilde y_{tr} = \tilde\rho_r + \tilde e_{tr}` on the same cells. For a seeded
subset of posterior draws the statistics

* ``run_sd``: :math:`\log` SD of the run effects :math:`\hat c_r` (is the run-to-run
  spread of this system the model's?),
* ``residual_sd``: :math:`\log` residual SD (is its per-topic noise the model's?),
* ``skewness``: skewness of the residuals (are its errors Gaussian?),

are replicated, and a two-sided posterior predictive p-value (normal approximation of
the replicated statistic, as :mod:`bayes_ir.hierarchical.adequacy`) below
:data:`~bayes_ir.hierarchical.adequacy.ALPHA_PPP` flags the system. A system with one
run is not checked (its residuals are its topic x system effects). A system whose
runs spread far more than the others' is the usual failure of a pooled run-to-run SD: refit with
``sigma_replicate="system"``.

References
----------
Gelman, A., Meng, X.-L., and Stern, H. (1996). Posterior predictive assessment of model
fitness via realized discrepancies. *Statistica Sinica* 6(4), 733-760.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from bayes_ir import defaults
from bayes_ir.errors import ModelCheckWarning
from bayes_ir.hierarchical.adequacy import ALPHA_PPP

__all__ = ["REPLICATE_CHECKS", "ReplicateModelCheck", "check_replicates"]

#: The checks, in the order ``failed`` lists them.
REPLICATE_CHECKS: tuple[str, ...] = ("run_sd", "residual_sd", "skewness")
#: Posterior draws replicated (a seeded subset).
N_DRAWS: int = 400
#: Largest change of a fitted value at which the alternating least squares stop.
_TOL: float = 1e-12


@dataclass(frozen=True)
class ReplicateModelCheck:
    """The checks of every system's runs: build with :func:`check_replicates`.

    Attributes
    ----------
    table
        One row per system and check: ``system, role, n_runs, check, observed,
        replicated_mean, p_value, failed`` (``observed`` and ``replicated_mean`` on the
        statistic's scale: log SD, or skewness).
    alpha
        The cut-off of the two-sided p-values.
    n_draws
        Posterior draws replicated.
    """

    table: pd.DataFrame
    alpha: float
    n_draws: int

    @property
    def flagged(self) -> tuple[str, ...]:
        """Systems with a failed check, in the fit's order."""
        bad = self.table.loc[self.table["failed"].astype(bool), "system"]
        return tuple(dict.fromkeys(bad))

    @property
    def passed(self) -> bool:
        """True when no system is flagged."""
        return not self.flagged

    @property
    def borderline(self) -> tuple[str, ...]:
        """No system is borderline: the p-values are exact in the statistics' tails."""
        return ()

    def failed(self, system: str) -> tuple[str, ...]:
        """Return the checks ``system`` fails."""
        mine = (self.table["system"] == system) & self.table["failed"].astype(bool)
        return tuple(self.table.loc[mine, "check"])

    def to_frame(self) -> pd.DataFrame:
        """Return :attr:`table` (a copy)."""
        return self.table.copy()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """One line when every system is described, else one line per flagged system."""
        if self.table.empty:
            return (
                "Model check (runs): no system has 2 or more runs on 3 or more topics, "
                "nothing to check"
            )
        if self.passed:
            return (
                f"Model check (runs of {self.table['system'].nunique()} systems): every "
                "system's run-to-run and residual spread described"
            )
        lines = ["Model check (runs): the model does not describe"]
        for s in self.flagged:
            lines.append(f"  {s}: {', '.join(self.failed(s))}")
        if any("run_sd" in self.failed(s) for s in self.flagged):
            lines.append("  (runs spread unlike the others': try sigma_replicate='system')")
        return "\n".join(lines)

    def warn(self, *, stacklevel: int = 1) -> None:
        """Emit a :class:`~bayes_ir.errors.ModelCheckWarning` per flagged system."""
        for s in self.flagged:
            warnings.warn(
                f"the model of runs does not describe {s} ({', '.join(self.failed(s))}): "
                "do not act on its numbers",
                ModelCheckWarning,
                stacklevel=stacklevel + 1,
            )

    def __str__(self) -> str:
        return self.summary()


def _two_way(y: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Run effects (centred) and residuals of ``y ~ topic + run`` on the observed cells.

    ``y`` (D, T, R) (the last two axes the system's topics and runs), ``mask`` (T, R).
    Alternating least squares (exact in one sweep when every cell is observed).
    """
    w = mask.astype(float)
    nt = np.maximum(w.sum(axis=1), 1.0)
    nr = np.maximum(w.sum(axis=0), 1.0)
    y = np.where(mask, y, 0.0)
    m = (y.sum(axis=2) / nt)[..., None]
    c = np.zeros((y.shape[0], 1, y.shape[2]))
    for _ in range(500):
        c_new = (((y - m) * w).sum(axis=1) / nr)[:, None, :]
        m_new = (((y - c_new) * w).sum(axis=2) / nt)[..., None]
        done = max(np.abs(c_new - c).max(), np.abs(m_new - m).max()) < _TOL
        c, m = c_new, m_new
        if done or mask.all():
            break
    res = (y - m - c) * w
    return c[:, 0, :] - c[:, 0, :].mean(axis=1, keepdims=True), res


def _stats(y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(D, 3): log SD of the run effects, log residual SD and residual skewness."""
    c, res = _two_way(y, mask)
    n_t, n_r = mask.shape
    df = max(int(mask.sum()) - n_t - n_r + 1, 1)
    e = res[:, mask]
    sd = np.sqrt((e**2).sum(axis=1) / df)
    skew = (e**3).mean(axis=1) / np.maximum((e**2).mean(axis=1), 1e-300) ** 1.5
    run_sd = np.sqrt((c**2).sum(axis=1) / max(n_r - 1, 1))
    with np.errstate(divide="ignore"):
        return np.stack([np.log(run_sd), np.log(sd), skew], axis=1)


def check_replicates(fit: Any, *, n_draws: int | None = None, seed: int | None = None):
    """Run the posterior predictive checks of every system's runs (see the module docstring).

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.replicates.ReplicateFit`.
    n_draws
        Posterior draws to replicate (a seeded subset; default :data:`N_DRAWS`).
    seed
        Seed of the subset and the replicates (default :data:`bayes_ir.defaults.SEED`).

    Returns
    -------
    ReplicateModelCheck
    """
    design = fit.design
    seed = defaults.SEED if seed is None else int(seed)
    rng = np.random.default_rng([seed, 0x30C])
    total = fit.n_draws
    n = min(total, N_DRAWS if n_draws is None else int(n_draws))
    pick = np.sort(rng.choice(total, size=n, replace=False))
    sigma = fit.term_draws("sigma")[pick, 0]
    kappa = fit.replicate_sd_draws()[pick]
    cells = design.cells.assign(score=design.y)
    rows = []
    for k, system in enumerate(design.systems):
        part = cells[cells["system"] == system]
        wide = part.pivot(index="topic", columns="replicate", values="score")
        mask = wide.notna().to_numpy()
        n_t, n_r = mask.shape
        if n_t < 3 or n_r < 2:
            continue
        obs = _stats(wide.to_numpy()[None], mask)[0]
        rep = kappa[:, k, None, None] * rng.standard_normal((n, 1, n_r)) + sigma[
            :, None, None
        ] * rng.standard_normal((n, n_t, n_r))
        sim = _stats(rep, mask)
        role = design.roles[k]
        for i, check in enumerate(REPLICATE_CHECKS):
            x = sim[:, i][np.isfinite(sim[:, i])]
            mean, sd = float(x.mean()), float(x.std(ddof=1))
            z = (obs[i] - mean) / sd if sd > 0 else 0.0
            p = float(min(1.0, 2.0 * special.ndtr(-abs(z)))) if np.isfinite(z) else 0.0
            rows.append((system, role, n_r, check, float(obs[i]), mean, p, p < ALPHA_PPP))
    table = pd.DataFrame(
        rows,
        columns=[
            "system",
            "role",
            "n_runs",
            "check",
            "observed",
            "replicated_mean",
            "p_value",
            "failed",
        ],  # fmt: skip
    )
    return ReplicateModelCheck(table=table, alpha=ALPHA_PPP, n_draws=n)
