"""Fit the hierarchical model and hold the result: :func:`fit` and :class:`HierarchicalFit`."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import BayesIRError, IgnoredOptionWarning
from bayes_ir.hierarchical.adequacy import ModelCheck, check_model
from bayes_ir.hierarchical.diagnostics import (
    HYPERPARAMETERS,
    Diagnostics,
    GateStatus,
    Thresholds,
    contrast_draws,
    diagnose,
)
from bayes_ir.hierarchical.exact import sample_exact
from bayes_ir.hierarchical.families import Family, family_of, get_family
from bayes_ir.hierarchical.families.logit import UNPOOLED_PRIOR
from bayes_ir.hierarchical.gibbs import sample_gibbs
from bayes_ir.hierarchical.intervals import hdi_bounds
from bayes_ir.hierarchical.model import (
    Design,
    check_likelihood,
    check_pooling,
    check_sigma,
    design_of,
    posterior_with_roles,
    resolve_pooling,
)
from bayes_ir.hierarchical.priors import Priors
from bayes_ir.hierarchical.samplers.chains import describe_draws
from bayes_ir.hierarchical.samplers.retry import (
    RETRY_TARGET_ACCEPT,
    default_target_accept,
    describe_rerun,
    retry_if_diverged,
)
from bayes_ir.hierarchical.sampling import sample_nuts
from bayes_ir.provenance import package_versions
from bayes_ir.table import ScoreTable

__all__ = [
    "HierarchicalFit",
    "assemble_datatree",
    "fit",
    "log_likelihood_cells",
    "log_likelihood_draws",
    "EXACT_ESS_PER_DRAW",
    "GIBBS_MIN_ESS_PER_DRAW",
    "GIBBS_TUNE",
    "default_draws",
    "SKEW_NORMAL_TUNE",
    "RETRY_TARGET_ACCEPT",
    "skew_normal_draws",
]

Method = Literal["auto", "exact", "gibbs", "nuts"]
#: ESS per draw the default draws of the exact sampler count on: its draws are
#: independent (measured 0.93-1.0 over the checked quantities of rb04 and Robust04 AP).
EXACT_ESS_PER_DRAW: float = 1.0
#: Smallest ESS per draw the default draws of the blocked Gibbs sampler (missing cells,
#: Gaussian) allow for: a pilot measures it (:func:`~bayes_ir.hierarchical.gibbs.sample_gibbs`,
#: 0.38-0.43 on rb04 with 10% of the cells missing, 0.9 on 2,000 x 500 with 10%
#: missing) and sets the draws, at most those of this floor.
GIBBS_MIN_ESS_PER_DRAW: float = 0.1
#: Discarded warm-up iterations per chain of the Gibbs sampler: it starts from moment
#: estimates and forgets them within a few iterations.
GIBBS_TUNE: int = 300
#: Tuning steps per chain of the skew-normal model: the chains start at the signs'
#: modes (:func:`~bayes_ir.hierarchical.skewnormal_kernel.sign_modes`), and 250 gave the
#: ESS per draw of 500 on rb04 and Robust04 AP with half the warm-up gradients.
SKEW_NORMAL_TUNE: int = 250
#: Float64 values per block of :func:`_interval_frame`.
_INTERVAL_BLOCK: int = 20_000_000
_PACKAGES = ("bayes_ir", "pymc", "pytensor", "nutpie", "arviz", "numpy", "scipy", "xarray")
#: Hyperparameters in reporting order: those the diagnostics gate checks, then the
#: skew-normal's skewness (a function of alpha).
_HYPER = (*HYPERPARAMETERS, "skewness")
#: Posterior variables after the hyperparameters and the effects (score-scale means).
_DERIVED = ("system_mean",)
_GLOSS = {
    "sigma_topic": "SD of topic effects (topic difficulty)",
    "sigma_system": "SD of system effects",
    "sigma": "residual SD",
    "sigma_typical": "geometric mean of the residual SDs",
    "sigma_log_sd": "SD of log residual SD across systems",
    "alpha": "skew-normal shape",
    "skewness": "skewness of the errors",
    "b0": "mean over systems and topics",
}
#: Glosses of the logit families' parameters (link scale).
_LOGIT_GLOSS = {
    "sigma_topic": "SD of topic effects, logit scale",
    "sigma_system": "SD of system effects, logit scale",
    "b0": "logit of the mean at the average topic and system",
}


#: What ``fit.summary()`` says of each ``pooling``.
_POOLING_LINE = {
    "all": "pooling 'all': every system effect (artifacts included) is shrunk towards their "
    "mean, with SD sigma_system",
    "artifacts": "pooling 'artifacts': champion and challengers unpooled (flat priors); the "
    "artifact runs share sigma_system",
    "none": "pooling 'none': every system effect unpooled (zero-sum, prior "
    f"{UNPOOLED_PRIOR} on the logit scale): no sigma_system, no pull towards the mean",
}


@lru_cache(maxsize=1)
def _versions() -> dict[str, str]:
    return package_versions(_PACKAGES)


def _interval_frame(x: np.ndarray, ci_prob: float) -> pd.DataFrame:
    """mean, sd, equal-tailed and HDI limits of draws ``x`` with shape (chain, draw, K).

    Computed in float64, blocks of columns at a time on :data:`~bayes_ir.defaults.COMPUTE_THREADS`
    threads (float32 draws are not copied whole); each block is sorted once for both intervals.
    """
    flat = x.reshape(-1, x.shape[-1])
    lo, hi = (1 - ci_prob) / 2, 1 - (1 - ci_prob) / 2
    threads = defaults.COMPUTE_THREADS
    step = max(1, _INTERVAL_BLOCK // (threads * max(flat.shape[0], 1)))
    step = min(step, -(-flat.shape[1] // threads))

    def columns(start: int) -> np.ndarray:
        block = np.sort(np.asarray(flat[:, start : start + step], dtype=float).T, axis=1)
        eti = np.quantile(block, [lo, hi], axis=1)
        hdi = hdi_bounds(block, ci_prob, sorted_rows=True)
        mean, sd = block.mean(axis=1), block.std(axis=1, ddof=1)
        return np.column_stack([mean, sd, eti[0], eti[1], hdi[:, 0], hdi[:, 1]])

    starts = range(0, flat.shape[1], step)
    if len(starts) > 1 and threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            parts = list(pool.map(columns, starts))
    else:
        parts = [columns(start) for start in starts]
    names = ["mean", "sd", "eti_lower", "eti_upper", "hdi_lower", "hdi_upper"]
    return pd.DataFrame(np.concatenate(parts), columns=names)


@dataclass(frozen=True, eq=False)
class HierarchicalFit:
    """Posterior of the crossed topic x system model of one collection and measure.

    Attributes
    ----------
    posterior
        ``xarray.DataTree`` with groups ``posterior`` (``b0``, ``sigma``,
        ``sigma_topic``, ``sigma_system``, ``topic_effect`` (chain, draw, topic),
        ``system_effect`` (chain, draw, system), and ``alpha`` and ``skewness`` for
        the skew-normal), ``sample_stats`` (NUTS statistics; absent for the exact
        sampler, whose draws are independent), ``observed_data`` (``score``, topic x
        system, NaN for missing cells, with the ``role`` coordinate of ``system``:
        :attr:`draws` carries it over to the posterior) and ``log_likelihood``
        (``score``, when asked). ArviZ reads it as it is; :meth:`to_arviz` adds the
        groups ``loo``, ``compare`` and ``plot_ppc_dist`` need.
    table
        The :class:`~bayes_ir.table.ScoreTable` that was fitted.
    likelihood
        ``"gaussian"`` or ``"skew_normal"``.
    method
        ``"exact"`` (collapsed sampler), ``"gibbs"`` (blocked Gibbs sampler) or ``"nuts"``.
    priors
        The resolved :class:`~bayes_ir.hierarchical.Priors`.
    diagnostics
        The :class:`~bayes_ir.hierarchical.Diagnostics` of the fit.
    provenance
        Data hash, roles, collection, measure, likelihood, residual-SD structure
        (``sigma``: ``"pooled"`` or ``"system"``), method, seed, sampler settings,
        ``acceptance_rate`` (the exact sampler's share of accepted proposals, NUTS's mean
        acceptance statistic), ``ess_per_draw`` (smallest bulk ESS of a hyperparameter
        per draw), package versions and a UTC timestamp.
    model_check
        The posterior predictive checks of every system
        (:class:`~bayes_ir.hierarchical.ModelCheck`; ``None`` when the fit was made
        with ``model_check=False``).
    likelihood_choice
        With ``fit(likelihood="auto")``: the
        :class:`~bayes_ir.hierarchical.likelihoods.LikelihoodComparison` that chose this
        model (PSIS-LOO of every candidate); ``None`` otherwise (and after ``load``).

    Notes
    -----
    ``system_effect`` is a *zero-sum* effect: the deviation of a system's mean score
    from the average of all systems in the model (champion, challengers and
    artifacts), and ``b0`` is that average; the system mean is ``b0 + system_effect``.
    Differences between systems do not depend on this convention.
    """

    posterior: xr.DataTree
    table: ScoreTable
    likelihood: str
    method: str
    priors: Priors
    diagnostics: Diagnostics
    provenance: dict[str, Any] = field(default_factory=dict)
    model_check: ModelCheck | None = None
    likelihood_choice: Any = field(default=None, repr=False)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the loader changed or left out in the fitted table (its ``notes``)."""
        return self.table.notes

    # ------------------------------------------------------------ draws
    @property
    def draws(self) -> xr.Dataset:
        """The ``posterior`` group as a Dataset, with the ``role`` coordinate of ``system``."""
        return posterior_with_roles(self.posterior)

    def system_effect_draws(self) -> xr.DataArray:
        """Draws of the system effects, dims ``(chain, draw, system)``, ``role`` coord.

        Float64 (the exact sampler stores them as float32), so that sums over draws
        keep float64 precision.
        """
        return self.draws["system_effect"].astype(float)

    def system_mean_draws(self) -> xr.DataArray:
        """Draws of the system means ``b0 + system_effect`` (chain, draw, system)."""
        from bayes_ir.hierarchical.contrasts import system_mean_draws

        return system_mean_draws(self).rename("system_mean")

    def contrast_draws(self) -> xr.DataArray:
        """Draws of each challenger minus the champion, dims ``(chain, draw, challenger)``."""
        return contrast_draws(self.draws)

    def to_arviz(self, *, draws: int | None = None, seed: int | None = None) -> xr.DataTree:
        """Return the fit with every group ArviZ reads (log-likelihood, posterior predictive).

        ``fit.posterior`` works as it is with ``arviz_stats.summary``, ``ess``, ``rhat`` and
        arviz-plots' ``plot_trace`` and ``plot_forest``; ``loo``, ``compare`` and
        ``plot_ppc_dist`` also need the pointwise log-likelihood and the posterior
        predictive draws, which this adds on a seeded subset of ``draws`` draws (default
        :data:`bayes_ir.defaults.LOO_DRAWS`). See
        :func:`bayes_ir.hierarchical.likelihoods.arviz_data`.
        """
        from bayes_ir.hierarchical.likelihoods import arviz_data

        return arviz_data(self, draws=draws, seed=seed)

    @property
    def pooling(self) -> str:
        """``"all"`` or ``"artifacts"``: the systems that share ``sigma_system`` (:func:`fit`)."""
        return str(self.provenance.get("pooling", "all"))

    @property
    def n_topics(self) -> int:
        """Number of topics."""
        return int(self.draws.sizes["topic"])

    @property
    def n_systems(self) -> int:
        """Number of systems."""
        return int(self.draws.sizes["system"])

    @property
    def n_draws(self) -> int:
        """Total number of posterior draws (chains x draws)."""
        return int(self.draws.sizes["chain"] * self.draws.sizes["draw"])

    # ------------------------------------------------------------ tables
    def to_frame(self, *, ci_prob: float | None = None) -> pd.DataFrame:
        """System effects and system means with intervals, one row per system and quantity.

        Parameters
        ----------
        ci_prob
            Interval probability (default :data:`bayes_ir.defaults.CI_PROB`).

        Returns
        -------
        pandas.DataFrame
            Columns ``system, role, quantity`` (``"effect"``: zero-sum system effect;
            ``"mean"``: ``b0 + effect``), ``mean, sd, eti_lower, eti_upper, hdi_lower,
            hdi_upper, ci_prob``.
        """
        p = defaults.ci_prob(ci_prob)
        eff = self.system_effect_draws().transpose("chain", "draw", "system")
        means = self.system_mean_draws().transpose("chain", "draw", "system")
        frames = []
        for quantity, arr in (("effect", eff), ("mean", means)):
            frame = _interval_frame(arr.values, p)
            frame.insert(0, "quantity", quantity)
            frame.insert(0, "role", eff["role"].values)
            frame.insert(0, "system", eff["system"].values)
            frame["ci_prob"] = p
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def conf_int(self, *, ci_prob: float | None = None) -> pd.DataFrame:
        """Return equal-tailed credible intervals of the system means.

        Columns ``system, role, estimate, ci_lower, ci_upper``.
        """
        frame = self.to_frame(ci_prob=ci_prob)
        frame = frame[frame["quantity"] == "mean"]
        return frame.rename(
            columns={"mean": "estimate", "eti_lower": "ci_lower", "eti_upper": "ci_upper"}
        )[["system", "role", "estimate", "ci_lower", "ci_upper"]].reset_index(drop=True)

    def topic_effects(self, *, ci_prob: float | None = None) -> pd.DataFrame:
        """Return topic effects (negative: hard topic) with intervals.

        Columns ``topic, mean, sd, eti_lower, eti_upper, hdi_lower, hdi_upper, ci_prob``,
        topics in the table's order.
        """
        p = defaults.ci_prob(ci_prob)
        arr = self.draws["topic_effect"].transpose("chain", "draw", "topic")
        frame = _interval_frame(arr.values, p)
        frame.insert(0, "topic", arr["topic"].values)
        frame["ci_prob"] = p
        return frame

    def hyperparameters(self, *, ci_prob: float | None = None) -> pd.DataFrame:
        """Return ``b0``, the scales (and the skew-normal shape) with intervals."""
        p = defaults.ci_prob(ci_prob)
        post = self.draws
        order = dict.fromkeys((*_HYPER, *family_of(self).hyperparameters))
        names = [n for n in order if n in post and post[n].ndim == 2]  # per-system: summary
        x = np.stack([post[n].transpose("chain", "draw").values for n in names], axis=-1)
        frame = _interval_frame(x, p)
        frame.insert(0, "parameter", names)
        frame["ci_prob"] = p
        return frame

    def summary(self, *, ci_prob: float | None = None) -> str:
        """Return a metafor-like printout: header, diagnostics, variance components, systems.

        A fit that failed its diagnostics starts with the DIAGNOSTICS FAILED banner.
        """
        p = defaults.ci_prob(ci_prob)
        prov = self.provenance
        post = self.draws
        roles = list(self.system_effect_draws()["role"].values)
        n_chal, n_art = roles.count("challenger"), roles.count("artifact")
        lines = [
            f"Bayesian hierarchical model (likelihood: {self.likelihood}; sampler: {self.method})",
            self._sampler_line(),
            f"collection {prov.get('collection')!r}, measure {prov.get('measure')!r}: "
            f"{self.n_topics} topics x {self.n_systems} systems "
            + (
                f"(1 champion, {n_chal} challengers, {n_art} artifacts)"
                if "champion" in roles
                else "(no roles: every system alike)"
            ),
            self.describe_draws(),
            _POOLING_LINE[self.pooling],
            "",
            "Diagnostics (hyperparameters, system effects"
            + (", challenger - champion contrasts):" if "champion" in roles else "):"),
            self.diagnostics.summary(),
            "",
            *self._model_check_lines(),
            f"Variance components (posterior mean [{p:.0%} equal-tailed interval]):",
        ]
        hyper = self.hyperparameters(ci_prob=p).set_index("parameter")
        family = family_of(self)
        gloss = {**_GLOSS, **(_LOGIT_GLOSS if family.link == "logit" else {})}
        for name in (
            "sigma_topic",
            "sigma_system",
            "sigma",
            "sigma_typical",
            "sigma_log_sd",
            "alpha",
            "skewness",
            *(n for n in family.hyperparameters if n not in gloss),
            "b0",
        ):
            if name in hyper.index:
                row = hyper.loc[name]
                lines.append(
                    f"  {name:<13} {row['mean']:8.4f} [{row['eti_lower']:.4f}, "
                    f"{row['eti_upper']:.4f}]  ({family.gloss(name) or gloss.get(name, '')})"
                )
        effect = "effect" if family.link == "identity" else f"effect on the {family.link} scale"
        lines += [
            "",
            f"System means {family.mean_note()} ({p:.0%} equal-tailed interval; {effect} = "
            f"deviation from the mean of the {self.n_systems} systems):"
            if family.link == "identity"
            else f"System means on the measure's scale: {family.mean_note()} ({p:.0%} "
            f"equal-tailed interval; {effect} = deviation from the mean of the "
            f"{self.n_systems} systems):",
        ]
        frame = self.to_frame(ci_prob=p)
        wide = frame.pivot(index="system", columns="quantity", values=["mean", "sd"])
        mean_rows = frame[frame["quantity"] == "mean"].set_index("system")
        shown = [s for s, r in zip(mean_rows.index, mean_rows["role"], strict=True)]
        width = max(len(s) for s in shown) if shown else 6
        lines.append(
            f"  {'system':<{width}}  {'role':<10} {'mean':>8} {'sd':>7} {'lower':>8} "
            f"{'upper':>8} {'effect':>8}"
        )
        for s in shown:
            row = mean_rows.loc[s]
            if row["role"] == "artifact":
                continue
            lines.append(
                f"  {s:<{width}}  {row['role']:<10} {row['mean']:8.4f} {row['sd']:7.4f} "
                f"{row['eti_lower']:8.4f} {row['eti_upper']:8.4f} "
                f"{wide.loc[s, ('mean', 'effect')]:8.4f}"
            )
        if n_art:
            lines.append(f"  (+ {n_art} artifact runs: see to_frame())")
        if not self.diagnostics.passed:
            lines.insert(0, GateStatus.of(self).banner())
        if "sigma" in post and post["sigma"].ndim == 3:
            from bayes_ir.hierarchical.likelihoods import residual_sd_lines

            lines += ["", *residual_sd_lines(self, ci_prob=p)]
        if self.likelihood_choice is not None:
            lines += ["", self.likelihood_choice.choice_text()]
        return "\n".join(lines)

    def describe_draws(self) -> str:
        """One line: chains x draws, and the ESS the default draws were chosen for.

        See :func:`~bayes_ir.hierarchical.samplers.chains.describe_draws` (the exact
        sampler's draws from :func:`default_draws`, the Gibbs sampler's from a pilot).
        """
        post = self.draws
        return describe_draws(post.sizes["chain"], post.sizes["draw"], self.provenance)

    def _sampler_line(self) -> str:
        """Say what drew the posterior, its acceptance rate and its ESS per draw."""
        prov = self.provenance
        rate = prov.get("acceptance_rate")
        ess = f"ESS per draw {self.diagnostics.ess_per_draw:.2f} (bulk, min over hyperparameters)"
        if self.method == "exact":
            accepted = "" if rate is None else f", {rate:.1%} of {prov['proposals']:,} accepted"
            return (
                f"  exact: scales by rejection sampling (independent draws{accepted}), "
                f"effects exactly given the scales; {ess}"
            )
        if self.method == "gibbs":
            rates = ", ".join(
                f"{prov[f'accept_{name}']:.0%}"
                for name in ("sigma", "sigma_topic", "sigma_system")
                if f"accept_{name}" in prov
            )
            return (
                f"  Gibbs: effects jointly and exactly given the scales, scales by "
                f"Metropolis-Hastings (accepted {rates}); {ess}"
            )
        shown = "" if rate is None else f", mean acceptance statistic {rate:.2f}"
        rerun = describe_rerun(prov, defaults.TARGET_ACCEPT)
        if rerun:
            shown += f"; {rerun}"
        return f"  NUTS ({prov.get('sampler', 'nutpie')}{shown}); {ess}"

    def _model_check_lines(self) -> list[str]:
        """Return the MODEL CHECK section of :meth:`summary` (empty without a check)."""
        if self.model_check is None:
            return []
        return [self.model_check.summary(), ""]

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (
            f"HierarchicalFit(likelihood={self.likelihood!r}, method={self.method!r}, "
            f"topics={self.n_topics}, systems={self.n_systems}, draws={self.n_draws}, "
            f"diagnostics={'PASS' if self.diagnostics.passed else 'FAIL'})"
        )

    def _repr_html_(self) -> str:
        return self.to_frame().to_html(index=False)

    # ------------------------------------------------------------ io and plots
    def save(self, path: str | Path | None = None) -> Path:
        """Write the fit to netCDF and return the path.

        The default path is ``models/<collection>_<measure>_<likelihood>_<method>_<hash>.nc``;
        provenance, priors and roles travel in the attributes (see
        :func:`bayes_ir.hierarchical.io.save_fit`).
        """
        from bayes_ir.hierarchical.io import save_fit

        return save_fit(self, path)

    @classmethod
    def load(cls, path: str | Path, table: ScoreTable | None = None) -> HierarchicalFit:
        """Read a fit written by :meth:`save`; see :func:`bayes_ir.hierarchical.load_fit`.

        Without ``table`` the table is rebuilt from the observed data; with it, the fit
        must be that table's (same data and roles) and holds it.
        """
        from bayes_ir.hierarchical.io import load_fit

        return load_fit(path, table)

    def plot(self, **kwargs: Any) -> Any:
        """System means on top, topic effects below (Benham et al. 2020, Figure 4).

        See :func:`bayes_ir.plots.hierarchical.plot_system_topic_intervals`.
        """
        from bayes_ir.plots.hierarchical import plot_system_topic_intervals

        return plot_system_topic_intervals(self, **kwargs)

    def plot_trace(self, **kwargs: Any) -> Any:
        """Thinned traces and rank plots (:func:`bayes_ir.plots.diagnostics.plot_trace`)."""
        from bayes_ir.plots.diagnostics import plot_trace

        return plot_trace(self, **kwargs)

    def plot_rank(self, **kwargs: Any) -> Any:
        """Rank plots of the hyperparameters (:func:`bayes_ir.plots.diagnostics.plot_rank`)."""
        from bayes_ir.plots.diagnostics import plot_rank

        return plot_rank(self, **kwargs)


# ---------------------------------------------------------------------- fitting
def _resolve_method(
    method: Method, likelihood: str, design: Design, sigma: str = "pooled"
) -> Method:
    validate.choice("method", method, ("auto", "exact", "gibbs", "nuts"))
    gaussian_ok = likelihood == "gaussian" and sigma == "pooled"
    if method == "auto":
        if not gaussian_ok:
            return "nuts"
        return "exact" if design.complete else "gibbs"
    if method in ("exact", "gibbs") and not (
        gaussian_ok and (design.complete or method == "gibbs")
    ):
        why = (
            f"the likelihood is {likelihood.replace('_', '-')}"
            if likelihood != "gaussian"
            else "sigma='system' (one residual SD per system)"
            if sigma != "pooled"
            else "cells are missing"
        )
        needs = (
            "a complete matrix, the Gaussian likelihood and one residual SD"
            if method == "exact"
            else "the Gaussian likelihood and one residual SD"
        )
        alternative = "'gibbs' or 'nuts'" if why == "cells are missing" else "'nuts'"
        raise BayesIRError(
            f"method={method!r} needs {needs}, but {why}: use method={alternative} (or 'auto')"
        )
    return method


def log_likelihood_draws(
    post: xr.Dataset, design: Design, likelihood: str, *, chunk: int = 500
) -> xr.DataArray:
    """Pointwise log-likelihood of every observed cell, dims (chain, draw, topic, system).

    Missing cells are NaN. See :func:`log_likelihood_cells`.
    """
    n_t, n_s = design.matrix.shape
    out = log_likelihood_cells(post, design, likelihood, np.arange(n_t * n_s), chunk=chunk)
    return xr.DataArray(
        out.reshape(out.shape[:2] + (n_t, n_s)),
        dims=("chain", "draw", "topic", "system"),
        coords={
            "chain": post["chain"].values,
            "draw": post["draw"].values,
            "topic": list(design.topics),
            "system": list(design.systems),
        },
        name="score",
    )


def log_likelihood_cells(
    post: xr.Dataset, design: Design, likelihood: str, cells: np.ndarray, *, chunk: int = 500
) -> np.ndarray:
    """Pointwise log-likelihood of the cells ``cells`` (flat topic-major indices).

    Returns an array (chain, draw, len(cells)), NaN for missing cells. ``likelihood``
    names the family (a spec such as ``"binomial(trials=10)"``); its cells give the log
    density (Gaussian, skew-normal in brms' mean/SD form, zoib: density inside (0, 1),
    mass at 0 and 1) or the log probability mass (bernoulli, binomial). Computed
    ``chunk`` draws at a time for the systems of ``cells`` only.
    """
    family = get_family(likelihood).resolved(design)
    cells = np.asarray(cells, dtype=np.int64)
    topic, system = np.divmod(cells, design.matrix.shape[1])
    systems, row = np.unique(system, return_inverse=True)
    topics, col = np.unique(topic, return_inverse=True)
    y = design.matrix.ravel()[cells]
    grid = np.zeros((1, systems.size, topics.size))  # the cells' systems x their topics
    grid[0, row, col] = np.where(np.isfinite(y), y, 0.0)
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    out = np.empty((n_chain * n_draw, cells.size))
    for start in range(0, n_chain * n_draw, chunk):
        keep = np.arange(start, min(start + chunk, n_chain * n_draw))
        params = family.parameters(post, keep)
        params["topic"] = params["topic"][:, topics]
        with np.errstate(invalid="ignore"):
            out[keep] = family.cells(params, systems).logpdf(grid)[:, row, col]
    out[:, ~np.isfinite(y)] = np.nan
    return out.reshape(n_chain, n_draw, cells.size)


def assemble_datatree(
    post: dict[str, np.ndarray] | xr.Dataset,
    design: Design,
    *,
    sample_stats: xr.Dataset | None,
    log_likelihood: xr.DataArray | None = None,
) -> xr.DataTree:
    """Posterior, sample statistics and observed data as one labelled DataTree.

    Arrays keep their dtype (the exact sampler's effects are float32).
    """
    if isinstance(post, dict):
        n_c, n_d = post["b0"].shape
        dims = {"topic_effect": ("topic",), "system_effect": ("system",)}
        post = xr.Dataset(
            {k: (("chain", "draw", *dims.get(k, ())), np.asarray(v)) for k, v in post.items()},
            coords={"chain": np.arange(n_c), "draw": np.arange(n_d)},
        )
    order = [v for v in (*_HYPER, "topic_effect", "system_effect") if v in post]
    order += [str(v) for v in post if v not in order]  # a family's own (system_mean, ...)
    post = post[order].assign_coords(
        topic=list(design.topics),
        system=list(design.systems),
    )
    post = post.drop_vars("role", errors="ignore")  # the roles live on observed_data
    observed = xr.Dataset(
        {"score": (("topic", "system"), design.matrix)},
        coords={
            "topic": list(design.topics),
            "system": list(design.systems),
            "role": ("system", list(design.roles)),
        },
    )
    groups = {"posterior": post, "observed_data": observed}
    if sample_stats is not None:
        keep = ["diverging", "energy", "step_size", "depth", "n_steps", "lp", "accepted"]
        ss = sample_stats[[v for v in keep if v in sample_stats]]
        ss = ss.drop_vars([c for c in ss.coords if c not in ("chain", "draw")])
        ss = ss.assign_coords(chain=post["chain"].values, draw=post["draw"].values)
        groups["sample_stats"] = ss
    if log_likelihood is not None:
        groups["log_likelihood"] = log_likelihood.to_dataset()
    return xr.DataTree.from_dict({f"/{k}": v for k, v in groups.items()})


def _sampler_name(method: str, likelihood: str, sampler: str, sigma: str, pooling: str) -> str:
    """Name what drew the posterior, for the provenance record."""
    if method == "exact":
        return "exact-collapsed+rejection"
    if method == "gibbs":
        return "blocked-gibbs"
    kernel = likelihood == "skew_normal" and sigma == "pooled" and pooling == "all"
    if sampler == "nutpie" and kernel:
        return "nutpie+skewnormal_kernel"
    if sampler == "nutpie" and get_family(likelihood).kernel:
        return f"nutpie+{likelihood}_kernel"
    return sampler


def _check_memory(design: Design, opts: dict[str, Any]) -> None:
    """Refuse a fit whose draws (and pointwise log-likelihood) exceed the memory limit.

    Values per draw: b0, sigma, sigma_topic, sigma_system (+ alpha and skewness for the
    skew-normal; + sigma_typical, sigma_log_sd and one sigma per system instead of one
    for ``sigma="system"``), the topic and system effects, and the observed cells when
    the pointwise log-likelihood is kept.
    """
    shape = {"chains": opts["chains"], "draws": opts["draws"]}
    n_hyper = 4 + (2 if opts["likelihood"] == "skew_normal" else 0)
    n_hyper += (len(design.systems) + 1) if opts["sigma"] == "system" else 0
    n_par = n_hyper + len(design.topics) + len(design.systems)
    cells = n_par + (len(design.score) if opts["log_likelihood"] else 0)
    validate.memory("the posterior draws", {**shape, "values per draw": cells})


def _warn_ignored(what: str, **options: Any) -> None:
    """Warn about each option given to a sampler (``what``) that does not use it."""
    why = {
        "tune": "its draws are independent, with no warm-up to tune",
        "target_accept": "it has no NUTS step",
        "sampler": "it does not use NUTS",
    }
    for name, value in options.items():
        if value is not None:
            warnings.warn(
                f"{name}={value!r} is ignored by the {what}: {why[name]}",
                IgnoredOptionWarning,
                stacklevel=4,  # the caller of fit()
            )


def _nuts_acceptance(stats: xr.Dataset | None) -> dict[str, float]:
    """Mean acceptance statistic of the NUTS draws (nutpie's or PyMC's name)."""
    for key in ("mean_tree_accept", "acceptance_rate"):
        if stats is not None and key in stats:
            return {"acceptance_rate": float(stats[key].mean())}
    return {}


def fit(
    table: ScoreTable,
    *,
    likelihood: str = "gaussian",
    method: Method = "auto",
    chains: int = defaults.CHAINS,
    draws: int | None = None,
    tune: int | None = None,
    target_accept: float | None = None,
    seed: int | None = None,
    priors: Priors | None = None,
    strict: bool = False,
    thresholds: Thresholds | str | dict[str, Any] | None = None,
    log_likelihood: bool = False,
    sampler: Literal["nutpie", "pymc"] | None = None,
    model_check: bool = True,
    sigma: str = "pooled",
    pooling: str = "auto",
) -> HierarchicalFit:
    r"""Fit the Bayesian crossed topic x system model of Benham et al. (2020).

    Parameters
    ----------
    table
        A :class:`~bayes_ir.table.ScoreTable` of one collection and measure, with roles
        (champion, challengers, artifacts) for contrasts and decisions, or without
        (a leaderboard, :func:`~bayes_ir.hierarchical.leaderboard`: every system alike,
        no contrast is formed or diagnosed).
    likelihood
        ``"gaussian"`` or ``"skew_normal"`` (brms' mean/SD parameterisation), or
        ``"auto"``: fit every candidate of
        :func:`~bayes_ir.hierarchical.likelihoods.compare_likelihoods` (Gaussian,
        skew-normal, Gaussian with one residual SD per system) and return the one
        chosen by PSIS-LOO, with the comparison in ``likelihood_choice`` (``sigma``
        is then part of the choice and must stay ``"pooled"``).
    method
        ``"exact"``: the collapsed sampler of :mod:`bayes_ir.hierarchical.exact`
        (complete matrix, Gaussian); ``"gibbs"``: the blocked Gibbs sampler of
        :mod:`bayes_ir.hierarchical.gibbs` (Gaussian, one residual SD, any pattern of
        missing cells); ``"nuts"``: NUTS on the full ZeroSumNormal model; ``"auto"``
        (default): exact for a complete matrix, Gibbs for the Gaussian model with
        missing cells, else NUTS.
    chains, draws, tune, target_accept
        Sampler settings; ``draws``/``tune`` default to
        :func:`skew_normal_draws` (10,000 up to 8,200 cells, fewer above) / 250 per
        chain for the skew-normal, as many as a pilot of 4 x 500 draws says bulk and tail
        ESS >= 10,000 (or the gate's ESS if higher) need, with a margin, at most
        :func:`default_draws` (4 x 31,250) / 300 for the Gibbs sampler and
        :data:`bayes_ir.defaults.DRAWS`/``TUNE`` for other NUTS fits;
        ``target_accept`` to
        :func:`~bayes_ir.hierarchical.samplers.retry.default_target_accept` (0.65 with at
        least 20 topics and 10 systems, else 0.9). The exact sampler
        draws :func:`default_draws` independent draws per chain (4 x 3,125), the summary
        says so, and has no warm-up and no step size: ``tune`` and
        ``target_accept`` given with it are ignored with an
        :class:`~bayes_ir.errors.IgnoredOptionWarning`.
    seed
        Random seed (default :data:`bayes_ir.defaults.SEED`): the same seed gives the
        same draws.
    priors
        :class:`~bayes_ir.hierarchical.Priors`; ``None`` autoscales every prior (see
        :mod:`bayes_ir.hierarchical.priors`).
    strict
        Raise :class:`~bayes_ir.errors.ConvergenceError` instead of warning when the
        diagnostics fail.
    thresholds
        Diagnostics pass marks: ``None``, ``"paper"`` (ESS >= 10,000), a dict or
        :class:`~bayes_ir.hierarchical.Thresholds`.
    log_likelihood
        Add the pointwise log-likelihood group (for LOO); costs chains x draws x cells.
    sampler
        NUTS implementation: ``"nutpie"`` (default; compiled once per model structure)
        or ``"pymc"``; ignored, with a warning, by the exact sampler.
    model_check
        Run the posterior predictive checks of every system (default; see
        :func:`~bayes_ir.hierarchical.check_model`): the result is
        ``fit.model_check`` and each flagged champion or challenger emits a
        :class:`~bayes_ir.errors.ModelCheckWarning`.
    sigma
        ``"pooled"`` (default): one residual SD; ``"system"``: one residual SD per
        system with a hierarchical prior (brms ``sigma ~ system``; see
        :func:`~bayes_ir.hierarchical.build_model`): the posterior ``sigma`` gets a
        ``system`` dim. Sampled by NUTS (the exact sampler and the skew-normal
        kernel have one residual SD; ``method="auto"`` picks NUTS).
    pooling
        Which system effects are partially pooled, i.e. share the prior
        :math:`N(0, \sigma_{system}^2)` and are pulled towards the mean of that group:
        ``"all"`` (the model of Benham et al. 2020): every system, champion,
        challengers and artifact runs alike; ``"artifacts"`` (gaussian, skew_normal): the
        artifact runs only. The champion's and the challengers' means then have flat
        priors (unpooled, fixed effects, as in ``lme4::lmer(score ~ 0 +
        system_of_interest + (1 | topic) + (0 + is_artifact | system))``), while the
        artifacts still inform the topic effects, the residual SD and ``sigma_system``;
        at least two artifact runs are needed. Every sampler serves it (the skew-normal
        is then sampled on its PyMC model instead of the compiled kernel). ``"none"``
        (the logit families: bernoulli, binomial, zoib): no system, each effect with the
        fixed prior ``N(0, 1.28^2)`` on the logit scale (a difference of two with the
        standard logistic's variance:
        :data:`~bayes_ir.hierarchical.families.logit.UNPOOLED_SD`). ``"auto"`` (default): ``"all"``,
        or ``"none"`` for a logit family with fewer than two artifact runs
        (:func:`~bayes_ir.hierarchical.model.resolve_pooling` says why). ``fit.pooling``
        is the one used. See Notes for the trade-off.

    Returns
    -------
    HierarchicalFit

    Notes
    -----
    :math:`y_{ts} = b_0 + a_t + c_s + e_{ts}` with zero-sum topic effects :math:`a`,
    zero-sum system effects :math:`c` and Gaussian or skew-normal errors; see
    :mod:`bayes_ir.hierarchical.model` and, for the exact sampler,
    :mod:`bayes_ir.hierarchical.exact`.

    Pooling. With ``pooling="all"`` each system's effect is shrunk towards the mean of
    all systems by about :math:`B = (\sigma^2/T) / (\chi^2 + \sigma^2/T)`, the share
    of its observed deviation that the standard error of its mean
    (:math:`\sigma/\sqrt{T}`, :math:`T` topics) explains against the spread
    :math:`\chi` of the systems (:math:`\sigma_{system}`); a difference between two
    systems shrinks by the same share (on rb04, :math:`B \approx 0.47`: Chal. 4 -
    Champion is +0.106 observed, +0.056 in the model). When the systems of interest
    are exchangeable with the artifact runs (drawn from the same population), shrinkage
    lowers the total squared error of the estimates across systems (James and Stein
    1961; Efron and Morris 1975). When they are not (a new system built to beat the
    others, or a production run), shrinkage pulls a genuinely different system towards
    the crowd and understates its difference. ``pooling="artifacts"`` does not pull the
    champion and challengers: their difference is the observed mean difference
    (complete table) with an interval from the shared residual SD, unbiased for each
    system but noisier. ``compare()`` and ``decide()`` report the observed difference
    and the share pulled (``observed``, ``pooled_share``) beside the model's.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *SIGIR 2020*, 339-348.
    doi:10.1145/3397271.3401033

    James, W., Stein, C. (1961). Estimation with quadratic loss. *Proceedings of the
    Fourth Berkeley Symposium on Mathematical Statistics and Probability* 1, 361-379.

    Efron, B., Morris, C. (1975). Data analysis using Stein's estimator and its
    generalizations. *JASA* 70(350), 311-319.
    """
    if str(likelihood).lower() == "auto":
        return _fit_auto(
            table,
            sigma=sigma,
            pooling=pooling,
            method=method,
            chains=chains,
            draws=draws,
            tune=tune,
            target_accept=target_accept,
            seed=seed,
            priors=priors,
            strict=strict,
            thresholds=thresholds,
            sampler=sampler,
        )
    opts = _check_options(
        likelihood=likelihood,
        sigma=sigma,
        seed=seed,
        chains=chains,
        draws=draws,
        tune=tune,
        target_accept=target_accept,
        sampler=sampler,
        strict=strict,
        log_likelihood=log_likelihood,
        pooling=pooling,
    )
    design = design_of(table)
    family = get_family(likelihood).resolved(design).with_dispersion(opts["sigma"])
    opts["family"] = family.spec
    opts["pooling"] = resolve_pooling(family, design, opts["pooling"])  # the option first
    family.check_scores(design)
    opts["pooled"] = design.pooled(opts["pooling"])
    method = _resolve_method(method, opts["likelihood"], design, opts["sigma"])
    pri = family.resolve_priors(design, priors)
    th = Thresholds.resolve(thresholds)
    opts["draws_ess"] = th.draws_ess
    if method == "exact":
        post, stats, info = _draw_exact(design, pri, opts)
    elif method == "gibbs":
        post, stats, info = _draw_gibbs(design, pri, opts)
    elif family.kernel:
        post, stats, info = _draw_family(family, design, pri, opts)
    else:
        post, stats, info = _draw_nuts(design, pri, opts)
    tree = _posterior_tree(post, stats, design, opts)
    diag = diagnose(tree, thresholds=th)
    result = HierarchicalFit(
        posterior=tree,
        table=table,
        likelihood=opts["likelihood"],
        method=method,
        priors=pri,
        diagnostics=diag,
        provenance=_provenance(table, design, method, opts, info, diag, th, model_check),
    )
    if model_check:
        result = replace(result, model_check=check_model(result, seed=opts["seed"]))
    diag.warn_or_raise(strict=opts["strict"], stacklevel=2)
    if result.model_check is not None:
        result.model_check.warn(stacklevel=2)
    return result


def _fit_auto(table: ScoreTable, *, sigma: str, **options: Any) -> HierarchicalFit:
    """``likelihood="auto"``: the fit chosen by :func:`compare_likelihoods`."""
    from bayes_ir.hierarchical.likelihoods import compare_likelihoods

    if check_sigma(sigma) != "pooled":
        raise BayesIRError(
            "likelihood='auto' chooses the residual-SD structure itself: leave sigma='pooled'"
        )
    return compare_likelihoods(table, **options).chosen_fit


def _check_options(
    *,
    likelihood: str,
    sigma: str,
    seed: int | None,
    chains: int,
    draws: int | None,
    tune: int | None,
    target_accept: float | None,
    sampler: str | None,
    strict: bool,
    log_likelihood: bool,
    pooling: str,
) -> dict[str, Any]:
    """Check every option of :func:`fit` (one ``OptionError`` naming the bad one)."""
    opts: dict[str, Any] = {
        "likelihood": check_likelihood(likelihood),
        "sigma": check_sigma(sigma),
        "pooling": check_pooling(pooling),
        "seed": validate.seed(seed),
        "chains": validate.positive_int("chains", chains, maximum=defaults.MAX_CHAINS),
        "draws": None if draws is None else validate.positive_int("draws", draws),
        "tune": None if tune is None else validate.positive_int("tune", tune, minimum=0),
    }
    if target_accept is not None:
        target_accept = validate.probability("target_accept", target_accept)
    if sampler is not None:
        validate.choice("sampler", sampler, ("nutpie", "pymc"))
    opts.update(
        target_accept=target_accept, sampler=sampler, strict=validate.flag("strict", strict)
    )
    opts["log_likelihood"] = validate.flag("log_likelihood", log_likelihood)
    return opts


def _default_draws(method: str, opts: dict[str, Any]) -> None:
    """Fill in ``opts["draws"]`` from the ESS to reach (:func:`default_draws`) unless given.

    The target is :attr:`~bayes_ir.hierarchical.diagnostics.Thresholds.draws_ess`
    (``opts["ess_target"]``, set then; ``None`` for draws the user gave).
    """
    if opts["draws"] is not None:
        opts["ess_target"] = None
        return
    target = opts["draws_ess"]
    opts["draws"] = default_draws(method, int(opts["chains"]), target)
    opts["ess_target"] = target


def _draw_exact(design: Design, pri: Priors, opts: dict[str, Any]) -> tuple[Any, None, dict]:
    """Sample with the exact collapsed sampler; fills in ``opts``' sampler settings."""
    _warn_ignored(
        "exact sampler (complete matrix, Gaussian likelihood)",
        tune=opts["tune"],
        target_accept=opts["target_accept"],
        sampler=opts["sampler"],
    )
    _default_draws("exact", opts)
    opts["tune"], opts["target_accept"] = 0, None
    _check_memory(design, opts)
    post, stats, info = sample_exact(
        design.matrix,
        pri,
        chains=int(opts["chains"]),
        draws=opts["draws"],
        seed=opts["seed"],
        pooled=opts["pooled"],
    )
    return post, stats, info


def _draw_gibbs(design: Design, pri: Priors, opts: dict[str, Any]) -> tuple[Any, None, dict]:
    """Sample with the blocked Gibbs sampler; fills in ``opts``' sampler settings.

    The draws are kept at float32 precision, like NUTS draws (:func:`_draw_nuts`).
    """
    _warn_ignored(
        "Gibbs sampler (Gaussian likelihood, missing cells)",
        target_accept=opts["target_accept"],
        sampler=opts["sampler"],
    )
    _default_draws("gibbs", opts)
    opts["tune"] = GIBBS_TUNE if opts["tune"] is None else opts["tune"]
    opts["target_accept"] = None
    target = opts["ess_target"]

    def check(draws: int) -> None:  # the memory the draws will take, before they are drawn
        _check_memory(design, {**opts, "draws": draws})

    post, info = sample_gibbs(
        design.topic_idx,
        design.system_idx,
        design.score,
        design.shape,
        pri,
        chains=int(opts["chains"]),
        draws=opts["draws"],
        tune=opts["tune"],
        seed=opts["seed"],
        pooled=opts["pooled"],
        ess=None if target is None else defaults.DRAWS_ESS_MARGIN * target,
        check_draws=check,
    )
    opts["draws"] = int(post["b0"].shape[1])
    # float32 precision, as NUTS draws (a saved fit stores them as float32 without loss)
    post = {name: _float32_values(name, values) for name, values in post.items()}
    return post, None, info


def _nuts_run(opts: dict[str, Any], target_accept: float) -> dict[str, Any]:
    """Return the settings of one NUTS run (every NUTS sampler of :func:`fit` takes them)."""
    return {
        "sampler": opts["sampler"],
        "chains": int(opts["chains"]),
        "draws": opts["draws"],
        "tune": opts["tune"],
        "target_accept": float(target_accept),
        "seed": opts["seed"],
        "pooling": opts["pooling"],
    }


def _draw_nuts(
    design: Design, pri: Priors, opts: dict[str, Any]
) -> tuple[xr.Dataset, xr.Dataset | None, dict]:
    """Sample with NUTS; fills in ``opts``' sampler settings.

    The draws and sample statistics are kept at float32 precision (a relative rounding
    of 6e-8, far below the Monte Carlo error of a few thousand draws), so a saved fit
    stores them as float32 without loss (:mod:`bayes_ir.hierarchical.io`). A run at the
    default ``target_accept`` that diverged is redone once at
    :data:`~bayes_ir.hierarchical.samplers.retry.RETRY_TARGET_ACCEPT`, as
    :func:`_draw_family` does.
    """
    opts["sampler"] = "nutpie" if opts["sampler"] is None else opts["sampler"]
    skew = opts["likelihood"] == "skew_normal"
    default_draws, default_tune = (
        (skew_normal_draws(int(design.score.size)), SKEW_NORMAL_TUNE)
        if skew
        else (defaults.DRAWS, defaults.TUNE)
    )
    opts["draws"] = default_draws if opts["draws"] is None else opts["draws"]
    opts["tune"] = default_tune if opts["tune"] is None else opts["tune"]
    _check_memory(design, opts)

    def draw(target_accept: float) -> tuple[xr.Dataset, xr.Dataset | None]:
        return sample_nuts(
            design, pri, opts["likelihood"], sigma=opts["sigma"], **_nuts_run(opts, target_accept)
        )

    (post, stats), rerun = _with_retry(draw, design, opts)
    info = {**_nuts_acceptance(stats), **rerun}
    return _float32_precision(post), None if stats is None else _float32_precision(stats), info


def _draw_family(
    family: Family, design: Design, pri: Priors, opts: dict[str, Any]
) -> tuple[xr.Dataset, xr.Dataset | None, dict]:
    """Sample a family of :mod:`bayes_ir.hierarchical.families` (NUTS on its kernel).

    Fills in ``opts``' sampler settings (the family's default draws and warm-up); the
    draws are kept at float32 precision as :func:`_draw_nuts` keeps them. A run at the
    default ``target_accept`` that diverged is redone once at
    :data:`~bayes_ir.hierarchical.samplers.retry.RETRY_TARGET_ACCEPT` (recorded in the
    provenance and the summary; :func:`~bayes_ir.hierarchical.samplers.retry.retry_if_diverged`).
    """
    opts["sampler"] = "nutpie" if opts["sampler"] is None else opts["sampler"]
    default_draws, default_tune = family.default_draws(int(design.score.size))
    opts["draws"] = default_draws if opts["draws"] is None else opts["draws"]
    opts["tune"] = default_tune if opts["tune"] is None else opts["tune"]
    _check_memory(design, opts)

    def draw(target_accept: float) -> tuple[xr.Dataset, xr.Dataset | None, dict]:
        return family.sample(design, pri, **_nuts_run(opts, target_accept))

    (post, stats, info), rerun = _with_retry(draw, design, opts)
    info = {**info, **rerun, **_nuts_acceptance(stats)}
    return _float32_precision(post), None if stats is None else _float32_precision(stats), info


def _with_retry(
    draw: Callable[[float], tuple[Any, ...]], design: Design, opts: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    """Run ``draw`` (its sample statistics second) at the caller's or the table's target.

    The default is :func:`~bayes_ir.hierarchical.samplers.retry.default_target_accept` of
    the table; a default run that diverged is redone once
    (:func:`~bayes_ir.hierarchical.samplers.retry.retry_if_diverged`). Sets
    ``opts["target_accept"]`` to the target kept; returns the result and the rerun's
    provenance (empty without a rerun).
    """
    default = default_target_accept(design.shape)
    result, opts["target_accept"], diverged = retry_if_diverged(
        draw,
        lambda out: out[1],
        target_accept=opts["target_accept"],
        default=default,
    )
    if not diverged:
        return result, {}
    return result, {
        "divergences_at_default_target_accept": diverged,
        "default_target_accept": default,
    }


def default_draws(method: str, chains: int, ess: float | None = None) -> int:
    r"""Default draws per chain of the exact or Gibbs sampler, from the ESS they must reach.

    :math:`\lceil m E / (C e) \rceil` for the target ESS :math:`E` (``ess``, default
    :data:`bayes_ir.defaults.DRAWS_ESS`), the margin :math:`m`
    (:data:`bayes_ir.defaults.DRAWS_ESS_MARGIN`), :math:`C` chains and the sampler's
    ESS per draw :math:`e` (:data:`EXACT_ESS_PER_DRAW`, :data:`GIBBS_MIN_ESS_PER_DRAW`):
    4 x 3,125 draws for the exact sampler; for the Gibbs sampler 4 x 31,250 is the most,
    and a pilot sets the draws (:func:`~bayes_ir.hierarchical.gibbs.sample_gibbs`).
    """
    target = defaults.DRAWS_ESS if ess is None else float(ess)
    per_draw = {"exact": EXACT_ESS_PER_DRAW, "gibbs": GIBBS_MIN_ESS_PER_DRAW}[method]
    return math.ceil(defaults.DRAWS_ESS_MARGIN * target / (int(chains) * per_draw))


def skew_normal_draws(n_cells: int) -> int:
    """Default draws per chain of the skew-normal model for a table of ``n_cells`` scores.

    :data:`SKEW_NORMAL_DRAWS`, or fewer for a large table: at most
    :data:`SKEW_NORMAL_CELL_DRAWS` cell evaluations per chain, never fewer than
    :data:`SKEW_NORMAL_MIN_DRAWS` draws. Each draw costs a gradient pass over the
    cells per leapfrog step, so this bounds the time of a default fit while keeping
    ESS in the thousands (about 5,000 on Robust04 AP).
    """
    budget = defaults.SKEW_NORMAL_CELL_DRAWS // max(int(n_cells), 1)
    return int(max(defaults.SKEW_NORMAL_MIN_DRAWS, min(defaults.SKEW_NORMAL_DRAWS, budget)))


#: Variables kept at full precision: the intercept carries the scores' offset, and float32
#: (7 significant digits) would quantise scores like 1e6 +- 1e-3 to steps of 0.06.
_FULL_PRECISION = frozenset({"b0"})


def _float32_values(name: str, values: Any) -> Any:
    """``values`` rounded to float32 precision (kept as float64), unless full precision."""
    if name in _FULL_PRECISION or np.asarray(values).dtype != np.float64:
        return values
    return values.astype(np.float32).astype(np.float64)


def _float32_precision(ds: xr.Dataset) -> xr.Dataset:
    """Round the float64 variables of ``ds`` to float32 precision (kept as float64)."""
    return ds.map(lambda v: _float32_values(str(v.name), v))


def _posterior_tree(
    post: Any, stats: xr.Dataset | None, design: Design, opts: dict[str, Any]
) -> xr.DataTree:
    """Assemble the fit's DataTree, with the pointwise log-likelihood when asked."""
    tree = assemble_datatree(post, design, sample_stats=stats)
    if not opts["log_likelihood"]:
        return tree
    posterior = tree["posterior"].to_dataset()
    return assemble_datatree(
        posterior,
        design,
        sample_stats=tree["sample_stats"].to_dataset() if stats is not None else None,
        log_likelihood=log_likelihood_draws(posterior, design, opts["family"]),
    )


def _provenance(
    table: ScoreTable,
    design: Design,
    method: str,
    opts: dict[str, Any],
    info: dict[str, Any],
    diag: Diagnostics,
    th: Thresholds,
    model_check: bool,
) -> dict[str, Any]:
    """Record what was fitted, how and with what (the fit's provenance)."""
    return {
        "data_hash": design.data_hash(),
        "source": design.source,
        "collection": design.collection,
        "measure": design.measure,
        "champion": table.champion if table.roles is not None else None,
        "challengers": list(table.challengers) if table.roles is not None else [],
        "artifacts": list(table.artifacts) if table.roles is not None else [],
        "likelihood": opts["likelihood"],
        "family": opts["family"],
        "sigma": opts["sigma"],
        "pooling": opts["pooling"],
        "method": method,
        "sampler": _sampler_name(
            method, opts["likelihood"], opts["sampler"] or "nutpie", opts["sigma"], opts["pooling"]
        ),
        "seed": opts["seed"],
        "chains": int(opts["chains"]),
        "draws": opts["draws"],
        "draws_for_ess": opts.get("ess_target"),
        "tune": opts["tune"],
        "target_accept": None if opts["target_accept"] is None else float(opts["target_accept"]),
        **info,
        "ess_per_draw": diag.ess_per_draw,
        "thresholds": json.loads(json.dumps(th.__dict__)),
        "model_check": bool(model_check),
        "versions": dict(_versions()),
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
    }
