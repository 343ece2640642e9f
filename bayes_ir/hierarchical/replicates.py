r"""Fit systems with several runs each (seeds, folds, samples): :func:`fit_replicates`.

One posterior answers both questions a team with several runs per system asks: is the
challenger better **in expectation** over its seeds (the system effect), and is **one
run**, drawn at random from its seeds, better than one of the champion's? The model of
:func:`bayes_ir.hierarchical.design.replicates_design`,

.. math::

    y_{tsr} = b_0 + a_t + \beta_s + (a\beta)_{ts} + \rho_{sr} + e_{tsr},

(topic :math:`t`, system :math:`s`, run :math:`r`; run-to-run SD :math:`\kappa`, one or
one per system; topic x system SD :math:`\psi`; residual SD :math:`\sigma`), is sampled
by the blocked Gibbs sampler of :mod:`bayes_ir.hierarchical.samplers.blocked_gibbs` (or
NUTS on its PyMC twin) and gated by the same diagnostics as every fit.
:meth:`ReplicateFit.contrasts` returns the contrasts of both kinds, the variance
components and :math:`P(\text{a random run of the challenger beats one of the
champion})` (:mod:`bayes_ir.hierarchical.replicate_effects`).

References
----------
Bouthillier, X., Delaunay, P., Bronzi, M., et al. (2021). Accounting for variance in
machine learning benchmarks. *MLSys 2021*.

Gelman, A., Hill, J. (2007). *Data Analysis Using Regression and Multilevel/Hierarchical
Models*. Cambridge University Press, chapter 13 (non-nested crossed models).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import OptionError, UnknownSystemError
from bayes_ir.hierarchical.design import (
    CrossedDesign,
    design_priors,
    replicates_design,
)
from bayes_ir.hierarchical.design_posterior import DesignFit, posterior_dataset, sample_design
from bayes_ir.hierarchical.diagnostics import Diagnostics, Thresholds, diagnose_columns
from bayes_ir.provenance import package_versions
from bayes_ir.table import ScoreTable

__all__ = ["OVER", "REPLICATE_TUNE", "ReplicateFit", "fit_replicates"]

#: Discarded warm-up iterations per chain of the blocked Gibbs sampler (its draws are
#: chosen by a pilot for the ESS asked: :func:`.design_posterior.sample_design`).
REPLICATE_TUNE: int = 300
#: Draws and warm-up per chain of NUTS on the PyMC twin.
REPLICATE_NUTS_DRAWS: int = 2000
REPLICATE_NUTS_TUNE: int = 1000
#: What a contrast of systems with several runs is taken over: the expected score over
#: the population of runs, or one run drawn at random from each system.
OVER: tuple[str, ...] = ("expectation", "single_run")
_PACKAGES = ("bayes_ir", "pymc", "nutpie", "numba", "arviz", "numpy", "scipy", "xarray")
#: Stream of the new runs' effects of the single-run contrasts (with the fit's seed).
_SINGLE_RUN_STREAM = 0x30


@dataclass(frozen=True, eq=False)
class ReplicateFit(DesignFit):
    """Posterior of the model of systems with several runs each.

    Attributes
    ----------
    posterior
        ``xarray.DataTree``: group ``posterior`` with ``b0``, ``sigma``,
        ``system_effect`` (dim ``system``), ``topic_effect`` (dim ``topic``),
        ``replicate_effect`` (dim ``replicate``, labels ``system|run``),
        ``topic_system_effect`` when kept, and the scales ``sigma_topic``,
        ``sigma_system``, ``sigma_topic_system`` and ``sigma_replicate`` (dim
        ``system`` with ``sigma_replicate="system"``); ``sample_stats`` for NUTS.
    design
        The :class:`~bayes_ir.hierarchical.design.CrossedDesign` that was fitted.
    table
        The score table (with its ``replicate`` column).
    priors
        The resolved :class:`~bayes_ir.hierarchical.design.DesignPriors`.
    method
        ``"gibbs"`` or ``"nuts"``.
    diagnostics
        :class:`~bayes_ir.hierarchical.Diagnostics` of the scales, the system effects
        and every challenger's contrast.
    provenance
        Data hash, method, seed, sampler settings, acceptance rates, versions, timestamp.
    model_check
        The :class:`~bayes_ir.hierarchical.replicate_check.ReplicateModelCheck` (``None``
        with ``model_check=False``).
    """

    @property
    def sigma_replicate(self) -> str:
        """``"pooled"`` (one run-to-run SD) or ``"system"`` (one per system)."""
        return "system" if self.design.term("replicate").scale_dim else "pooled"

    def replicate_sd_draws(self) -> np.ndarray:
        """Draws (N, S) of every system's run-to-run SD (the pooled one repeated)."""
        k = self.term_draws("sigma_replicate")
        return np.repeat(k, len(self.design.systems), axis=1) if k.shape[1] == 1 else k

    def contrast_draws(
        self,
        *,
        over: str = "expectation",
        champion: str | None = None,
        challengers: str | Iterable[str] | None = None,
    ) -> np.ndarray:
        r"""Draws (N, J) of every challenger's contrast with the champion.

        ``over="expectation"``: :math:`\beta_s - \beta_h` (the expected scores over the
        population of runs and topics). ``over="single_run"``: :math:`\beta_s +
        \kappa_s z_1 - \beta_h - \kappa_h z_2` with :math:`z_1, z_2 \sim N(0, 1)` drawn
        once per posterior draw (seeded by the fit's seed): the contrast of one new run
        of each, the run-to-run variance included.
        """
        validate.choice("over", over, OVER)
        champ, chals = self._roles(champion, challengers)
        systems = list(self.design.systems)
        beta = self.term_draws("system")
        h = systems.index(champ)
        idx = [systems.index(c) for c in chals]
        out = beta[:, idx] - beta[:, [h]]
        if over == "single_run":
            kappa = self.replicate_sd_draws()
            seed = int(self.provenance.get("seed", defaults.SEED))
            rng = np.random.default_rng([seed, _SINGLE_RUN_STREAM])
            z = rng.standard_normal((self.n_draws, len(systems)))
            run = kappa * z
            out = out + run[:, idx] - run[:, [h]]
        return out

    def _roles(
        self, champion: str | None, challengers: str | Iterable[str] | None
    ) -> tuple[str, tuple[str, ...]]:
        """Return the champion and challengers asked for (default: the table's roles)."""
        systems = self.design.systems
        champ = self.design.champion if champion is None else str(champion)
        if challengers is None:
            chals = tuple(c for c in self.design.challengers if c != champ)
        elif isinstance(challengers, str):
            chals = (challengers,)
        else:
            chals = tuple(map(str, challengers))
        for s in (champ, *chals):
            if s not in systems:
                raise UnknownSystemError(s, systems)
        if not chals:
            raise OptionError("no challenger to compare with the champion")
        return champ, chals

    def contrasts(
        self,
        *,
        champion: str | None = None,
        challengers: str | Iterable[str] | None = None,
        ci_prob: float | None = None,
        margin: float = 0.0,
    ):
        """Every challenger against the champion, in expectation and for one run.

        See :func:`bayes_ir.hierarchical.replicate_effects.contrasts_replicates`.
        """
        from bayes_ir.hierarchical.replicate_effects import contrasts_replicates

        return contrasts_replicates(
            self, champion=champion, challengers=challengers, ci_prob=ci_prob, margin=margin
        )

    def plot(self, **kwargs: Any) -> Any:
        """Draw every system's runs beside its expected score.

        See :func:`bayes_ir.plots.replicates.plot_replicates`.
        """
        return self.contrasts().plot(**kwargs)

    def __repr__(self) -> str:
        return (
            f"ReplicateFit(systems={len(self.design.systems)}, "
            f"runs={self.design.term('replicate').n_levels}, "
            f"sigma_replicate={self.sigma_replicate!r}, method={self.method!r}, "
            f"draws={self.n_draws}, diagnostics={'PASS' if self.diagnostics.passed else 'FAIL'})"
        )


def _diagnose(
    post: dict[str, np.ndarray], design: CrossedDesign, stats: xr.Dataset | None, th: Thresholds
) -> Diagnostics:
    """Diagnose the scales, intercept, system effects and every challenger's contrast."""
    names: list[str] = []
    kinds: list[str] = []
    columns: list[np.ndarray] = []

    def add(label: str, kind: str, values: np.ndarray, levels) -> None:
        one = len(levels) == 1
        names.extend(label if one else f"{label}[{lev}]" for lev in levels)
        kinds.extend([kind] * len(levels))
        columns.append(values)

    add("b0", "hyper", post["b0"], design.terms[0].levels)
    add("sigma", "hyper", post["sigma"], design.residual.levels)
    for t in design.terms[1:]:
        add(t.scale_name, "hyper", post[t.scale_name], t.scale_names)
    add("system_effect", "system", post["system"], design.systems)
    beta = post["system"]
    h = design.systems.index(design.champion)
    for c in design.challengers:
        j = design.systems.index(c)
        add(f"{c} - {design.champion}", "contrast", beta[..., j : j + 1] - beta[..., h : h + 1],
            [""])  # fmt: skip
    return diagnose_columns(names, kinds, columns, sample_stats=stats, thresholds=th)


def fit_replicates(
    table: ScoreTable,
    *,
    sigma_replicate: str = "pooled",
    measure: str | None = None,
    method: str = "auto",
    chains: int = defaults.CHAINS,
    draws: int | None = None,
    tune: int | None = None,
    target_accept: float | None = None,
    seed: int | None = None,
    priors: Mapping[str, float] | None = None,
    thresholds: Thresholds | str | dict[str, Any] | None = None,
    strict: bool = False,
    sampler: str | None = None,
    model_check: bool = True,
) -> ReplicateFit:
    r"""Fit systems with several runs each (seeds, folds, samples) in one model.

    Parameters
    ----------
    table
        Scores of one collection with roles and a ``replicate`` column (a tidy file
        with a ``replicate``, ``seed`` or ``fold`` column, several run files per system,
        an Inspect log with several epochs; see ``docs/inputs.md``). Systems may have
        different numbers of runs (a champion with one production run is fine).
    sigma_replicate
        ``"pooled"`` (default): one run-to-run SD for every system; ``"system"``: one
        per system (every system needs 2 or more runs).
    measure
        The measure, when the table holds several.
    method
        ``"gibbs"`` (blocked Gibbs; ``"auto"``, the default) or ``"nuts"`` (NUTS on the
        PyMC twin: nutpie, or PyMC's own with ``sampler="pymc"``).
    chains, draws, tune, target_accept
        Sampler settings (defaults for Gibbs: the draws a pilot chooses for bulk and tail
        ESS >= 10,000 of what the results read and the gate's ESS of the rest
        (:func:`.design_posterior.sample_design`) and :data:`REPLICATE_TUNE`
        per chain; for NUTS 2,000/1,000 and :data:`bayes_ir.defaults.TARGET_ACCEPT`).
    seed
        Random seed (default :data:`bayes_ir.defaults.SEED`); it also seeds the new
        runs of the single-run contrasts.
    priors
        Fixed Exponential rates of scales, by name (``"sigma"``, ``"sigma_topic"``,
        ``"sigma_system"``, ``"sigma_topic_system"``, ``"sigma_replicate"``); others are
        autoscaled (:func:`~bayes_ir.hierarchical.design.design_priors`).
    thresholds, strict
        Diagnostics pass marks and whether a failure raises
        :class:`~bayes_ir.errors.ConvergenceError` (else it warns).
    sampler
        NUTS implementation: ``"nutpie"`` (default) or ``"pymc"``.
    model_check
        Run the posterior predictive checks of every system's runs (default;
        :func:`~bayes_ir.hierarchical.replicate_check.check_replicates`): a flagged
        champion or challenger emits a :class:`~bayes_ir.errors.ModelCheckWarning` and
        is marked misfit in every result read from the fit.

    Returns
    -------
    ReplicateFit

    Notes
    -----
    With topic :math:`t`, system :math:`s` and run :math:`r`,

    .. math::

        y_{tsr} = b_0 + a_t + \beta_s + (a\beta)_{ts} + \rho_{sr} + e_{tsr},\quad
        \rho_{sr} \sim N(0, \kappa_s^2),\ (a\beta)_{ts} \sim N(0, \psi^2),\
        e_{tsr} \sim N(0, \sigma^2),

    zero-sum topic and system effects with SDs :math:`\tau, \chi`. The contrast in
    expectation is :math:`\beta_s - \beta_h`; the contrast of one run of each is
    :math:`\beta_s + \rho_{s,new} - \beta_h - \rho_{h,new}`, whose variance adds
    :math:`\kappa_s^2 + \kappa_h^2` (see :meth:`ReplicateFit.contrast_draws`).
    """
    validate.instance("table", table, ScoreTable)
    validate.choice("method", method, ("auto", "gibbs", "nuts"))
    method = "gibbs" if method == "auto" else method
    seed = validate.seed(seed)
    chains = validate.positive_int("chains", chains, maximum=defaults.MAX_CHAINS)
    strict = validate.flag("strict", strict)
    model_check = validate.flag("model_check", model_check)
    design = replicates_design(table, sigma_replicate=sigma_replicate, measure=measure)
    pri = design_priors(design, rates=priors)
    th = Thresholds.resolve(thresholds)
    post, stats, settings = sample_design(
        design, pri, method=method, chains=chains, draws=draws, tune=tune,
        target_accept=target_accept, seed=seed, sampler=sampler, ess_target=th.draws_ess,
        gate_ess=th.gate_ess, gibbs_tune=REPLICATE_TUNE,
        nuts=(REPLICATE_NUTS_DRAWS, REPLICATE_NUTS_TUNE),
    )  # fmt: skip
    diag = _diagnose(post, design, stats, th)
    tree = xr.DataTree.from_dict(
        {"posterior": posterior_dataset(post, design)}
        | ({"sample_stats": stats} if stats is not None else {})
    )
    provenance = {
        "data_hash": design.data_hash(),
        "source": design.source,
        "measure": design.measures,
        "sigma_replicate": sigma_replicate,
        "champion": design.champion,
        "challengers": list(design.challengers),
        "method": method,
        "seed": seed,
        "chains": chains,
        **settings,
        "thresholds": json.loads(json.dumps(th.__dict__)),
        "versions": package_versions(_PACKAGES),
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    result = ReplicateFit(
        posterior=tree,
        design=design,
        table=table,
        priors=pri,
        method=method,
        diagnostics=diag,
        provenance=provenance,
    )
    if model_check:
        from bayes_ir.hierarchical.replicate_check import check_replicates

        result = replace(result, model_check=check_replicates(result, seed=seed))
    diag.warn_or_raise(strict=strict, stacklevel=2)
    if result.model_check is not None:
        result.model_check.warn(stacklevel=2)
    return result
