r"""Fit systems across collections or query segments: :func:`fit_across` and :class:`AcrossFit`.

One posterior answers "does the challenger win, where, and on the next collection?":
the model of :mod:`bayes_ir.hierarchical.design` (an intercept, topic effects and a
residual SD per collection, system effects and system x collection effects, or system
x segment effects within one collection), sampled by the blocked Gibbs sampler of
:mod:`bayes_ir.hierarchical.samplers.blocked_gibbs` (or NUTS on its PyMC twin), with
the diagnostics gate of the one-collection model. :meth:`AcrossFit.contrasts` returns
the overall contrast, each collection's shrunken contrast beside its raw one, the
between-collection SD, the contrast on a new collection and the number of the
collections the challenger wins (:mod:`bayes_ir.hierarchical.group_effects`).
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
from bayes_ir.errors import BayesIRError
from bayes_ir.hierarchical.design import (
    CrossedDesign,
    DesignPriors,
    collections_design,
    design_priors,
    segments_design,
)
from bayes_ir.hierarchical.design_posterior import DesignFit, posterior_dataset, sample_design
from bayes_ir.hierarchical.diagnostics import Diagnostics, Thresholds, diagnose_columns
from bayes_ir.provenance import package_versions
from bayes_ir.table import ScoreTable

__all__ = ["ACROSS_TUNE", "BY", "LIKELIHOODS", "AcrossFit", "fit_across"]

#: Discarded warm-up iterations per chain of the blocked Gibbs sampler across collections
#: (its draws are chosen by a pilot for the ESS asked:
#: :func:`~bayes_ir.hierarchical.design_posterior.sample_design`).
ACROSS_TUNE: int = 300
#: Draws and warm-up per chain of NUTS on the PyMC twin.
ACROSS_NUTS_DRAWS: int = 2000
ACROSS_NUTS_TUNE: int = 1000
#: NUTS's default target acceptance with a logit family: the system x collection SD of
#: a few systems is a funnel its smaller steps cross without divergences. (GLUE's tasks, 300
#: examples each, two systems, pass the gate at 0.99 and not at 0.95, but at 0.99 a simulated
#: five-system table of the slow tests fell short of its ESS: docs/methods.md, "Two systems".)
FAMILY_TARGET_ACCEPT: float = 0.95
#: The factors the system effects can vary over.
BY: tuple[str, ...] = ("collection", "segment")
#: Likelihoods of the model across groups.
LIKELIHOODS: tuple[str, ...] = ("gaussian", "bernoulli", "binomial", "zoib")
_PACKAGES = ("bayes_ir", "pymc", "nutpie", "numba", "arviz", "numpy", "scipy", "xarray")


@dataclass(frozen=True, eq=False)
class AcrossFit(DesignFit):
    """Posterior of the model of systems across collections (or segments).

    Attributes
    ----------
    posterior
        ``xarray.DataTree``: group ``posterior`` with ``b0`` (dim ``collection``, or
        ``segment``: an intercept per segment) and ``sigma`` (dim ``collection`` when
        there is one per collection), every random term's effects ``<term>_effect`` (dim
        ``<term>``, e.g. ``system``, ``system_collection``; topic effects only when
        kept) and scale ``sigma_<term>`` (dim ``collection`` when there is one per
        collection); ``sample_stats`` for NUTS.
    design
        The :class:`~bayes_ir.hierarchical.design.CrossedDesign` that was fitted.
    table
        The score table.
    priors
        The resolved :class:`~bayes_ir.hierarchical.design.DesignPriors`.
    method
        ``"gibbs"`` or ``"nuts"``.
    diagnostics
        The :class:`~bayes_ir.hierarchical.Diagnostics` of the scales, intercepts,
        system effects and every challenger's overall and per-group contrast.
    provenance
        Data hash, design, scale, method, seed, sampler settings, acceptance rates,
        versions, timestamp.
    model_check
        The :class:`~bayes_ir.hierarchical.AcrossModelCheck` of every
        system in every group (``None`` with ``model_check=False``).
    """

    @property
    def by(self) -> str:
        """``"collection"`` or ``"segment"``."""
        return str(self.design.by)

    def contrasts(
        self,
        *,
        champion: str | None = None,
        challengers: str | Iterable[str] | None = None,
        ci_prob: float | None = None,
        margin: float = 0.0,
    ):
        """Every challenger against the champion, overall, per group and on a new one.

        See :func:`bayes_ir.hierarchical.group_effects.contrasts_across`.
        """
        from bayes_ir.hierarchical.group_effects import contrasts_across

        return contrasts_across(
            self, champion=champion, challengers=challengers, ci_prob=ci_prob, margin=margin
        )

    def plot(self, **kwargs: Any) -> Any:
        """Draw the forest plot of the per-group contrasts with shrinkage.

        See :func:`bayes_ir.plots.across.plot_across`.
        """
        return self.contrasts().plot(**kwargs)

    def __repr__(self) -> str:
        return (
            f"AcrossFit(by={self.by!r}, groups={len(self.design.groups)}, "
            f"systems={len(self.design.systems)}, scale={self.design.scale!r}, "
            f"method={self.method!r}, draws={self.n_draws}, "
            f"diagnostics={'PASS' if self.diagnostics.passed else 'FAIL'})"
        )


def _diagnose(
    post: dict[str, np.ndarray],
    design: CrossedDesign,
    stats: xr.Dataset | None,
    th: Thresholds,
    family: Any,
    priors: DesignPriors,
    seed: int,
) -> Diagnostics:
    """Diagnose the scales, intercepts, system effects and every reported contrast.

    A logit family's contrasts are diagnosed on the score scale, as they are reported.
    """
    from bayes_ir.hierarchical.group_effects import family_contrast_draws, group_contrast_draws

    names: list[str] = []
    kinds: list[str] = []
    columns: list[np.ndarray] = []

    def add(label: str, kind: str, values: np.ndarray, levels) -> None:
        one = len(levels) == 1 and kind != "group_contrast"
        names.extend(label if one else f"{label}[{lev}]" for lev in levels)
        kinds.extend([kind] * len(levels))
        columns.append(values)

    add("b0", "hyper", post["b0"], design.terms[0].levels)
    gaussian = family.name == "gaussian"
    for name in ("sigma",) if gaussian else family.design_own:
        add(name, "hyper", post[name], design.residual.levels)
    for t in design.terms[1:]:
        add(t.scale_name, "hyper", post[t.scale_name], t.scale_names)
    add("system_effect", "system", post["system"], design.systems)
    if gaussian:
        overall, groups, labels = group_contrast_draws(post, design)
    else:  # the score scale: flatten the chains, then give the draws back their shape
        lead = post["b0"].shape[:2]
        flat = {k: v.reshape(-1, *v.shape[2:]) for k, v in post.items()}
        overall, groups, _, labels = family_contrast_draws(flat, design, family, priors, seed=seed)
        overall, groups = overall.reshape(*lead, -1), groups.reshape(*lead, *groups.shape[1:])
    for j, chal in enumerate(design.challengers):
        name = f"{chal} - {design.champion}"
        add(name, "contrast", overall[..., j : j + 1], [""])
        seen = ~np.isnan(groups[0, 0, j])  # a group without both systems has no contrast
        observed = [g for g, s in zip(labels, seen, strict=True) if s]
        add(name, "group_contrast", groups[..., j, seen], observed)
    return diagnose_columns(names, kinds, columns, sample_stats=stats, thresholds=th)


def _family_for(design: CrossedDesign, family: Any) -> Any:
    """Check a logit family against every group's scores; return it with its trials set."""
    measures = sorted(set(design.measures.values()))
    if len(measures) > 1:
        raise BayesIRError(
            f"the {family.name} model across collections needs one measure in every "
            f"collection, not {', '.join(measures)}: give measure=, or use the Gaussian "
            "model with scale='sd'"
        )
    blocks = [design.block(k) for k in range(design.terms[0].n_levels)]
    family = family.resolved(blocks[0])
    for block in blocks:
        family.check_scores(block)
    return family


def _check_residuals(design: CrossedDesign, family: Any, *, per_block: bool) -> None:
    """Raise when the Gaussian model's residual SD has no posterior (scores topic + system).

    With one residual SD per collection (``per_block``) any collection whose scores are
    exactly topic + system with cells to spare leaves its SD without a posterior; with one
    for all, every group's must be (:meth:`~bayes_ir.hierarchical.families.gaussian.
    Gaussian.check_scores`, whose error names the group).
    """
    from bayes_ir.hierarchical.families.gaussian import exactly_additive, residual_df

    blocks = [design.block(k) for k in range(design.terms[0].n_levels)]
    if per_block or all(
        exactly_additive(b.matrix) or residual_df(np.isfinite(b.matrix)) == 0 for b in blocks
    ):
        for block in blocks:
            family.check_scores(block)


def fit_across(
    table: ScoreTable,
    *,
    by: str = "collection",
    segments: Mapping[str, str] | None = None,
    measure: str | Mapping[str, str] | None = None,
    scale: str = "auto",
    sigma: str = "collection",
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
    likelihood: str = "gaussian",
) -> AcrossFit:
    r"""Fit systems across collections (or query segments) in one hierarchical model.

    Parameters
    ----------
    table
        Scores with roles; ``by="collection"``: a ``collection`` column with at least
        2 collections (a tidy file, a folder per collection, a Ranger YAML config);
        ``by="segment"``: one collection and ``segments``.
    by
        ``"collection"`` (default) or ``"segment"``.
    segments
        ``{topic: segment}`` (see :func:`bayes_ir.readers.read_segments`); with it,
        ``by`` defaults to ``"segment"``.
    measure
        The measure of every collection when a collection holds several: a name or
        ``{collection: measure}``.
    scale
        Common scale of the system effects: ``"auto"`` (default: the measure when
        every collection uses the same one, else ``"sd"``), ``"measure"``, or
        ``"sd"`` (each collection's effects in units of its own residual SD, the
        Bayesian sibling of a standardised mean difference).
    sigma
        ``"collection"`` (default): a residual SD and a topic SD per collection;
        ``"pooled"``: one of each (lme4's ``lmer`` model; segments always pool).
    method
        ``"gibbs"`` (blocked Gibbs; ``"auto"``, the default) or ``"nuts"`` (NUTS on
        the PyMC twin: nutpie, or PyMC's own with ``sampler="pymc"``).
    chains, draws, tune, target_accept
        Sampler settings (defaults for Gibbs: the draws a pilot chooses for bulk and tail
        ESS >= 10,000 of what the results read and the gate's ESS of the rest
        (:func:`.design_posterior.sample_design`) and :data:`ACROSS_TUNE`
        per chain; for NUTS 2,000/1,000 and :data:`bayes_ir.defaults.TARGET_ACCEPT`,
        :data:`FAMILY_TARGET_ACCEPT` with a logit family, a run of which that diverged
        is redone once at
        :data:`~bayes_ir.hierarchical.samplers.retry.RETRY_TARGET_ACCEPT`; a
        ``target_accept`` given is kept).
    seed
        Random seed (default :data:`bayes_ir.defaults.SEED`).
    priors
        Fixed Exponential rates of scales, by name (see
        :func:`~bayes_ir.hierarchical.design.design_priors`); others are autoscaled.
    thresholds, strict
        Diagnostics pass marks and whether a failure raises
        :class:`~bayes_ir.errors.ConvergenceError` (else it warns).
    sampler
        NUTS implementation: ``"nutpie"`` (default) or ``"pymc"``.
    likelihood
        ``"gaussian"`` (default), or a logit-link family for bounded scores:
        ``"bernoulli"`` (0/1 per item), ``"binomial"`` (k of n; ``"binomial(trials=N)"``
        when the measure does not say n) or ``"zoib"`` (scores in [0, 1] with exact 0s
        and 1s; one precision and inflation per collection with ``sigma="collection"``).
        A family needs one measure in every collection; it is sampled by NUTS and its
        contrasts are differences of expected scores (see Notes).
    model_check
        Run the posterior predictive checks of every system in every group (default;
        :func:`~bayes_ir.hierarchical.check_across`): a flagged champion
        or challenger emits a :class:`~bayes_ir.errors.ModelCheckWarning` and is marked
        misfit in every result read from the fit.

    Returns
    -------
    AcrossFit

    Notes
    -----
    Across collections :math:`c`, with topics :math:`t` within them and systems
    :math:`s`,

    .. math::

        y_{cts} = b_{0c} + a_{ct} + u_c\,(\beta_s + \gamma_{sc}) + e_{cts},\quad
        e_{cts} \sim N(0, \sigma_c^2),

    zero-sum topic effects with SD :math:`\tau_c`, system effects with SD
    :math:`\chi`, system x collection effects with SD :math:`\omega` (zero-sum over
    the systems of each collection), :math:`u_c = 1` or :math:`\sigma_c`
    (``scale="sd"``). The contrast of challenger :math:`s` with champion :math:`h` is
    :math:`\beta_s - \beta_h` overall, :math:`\beta_s - \beta_h + \gamma_{sc} -
    \gamma_{hc}` in collection :math:`c`, and :math:`N(\beta_s - \beta_h, 2\omega^2)`
    on a new collection (Corani et al. 2017 for two systems; Gelman et al. 2013,
    chapter 5, for the predictive distribution of a new group).

    With a logit-link ``likelihood`` the same terms make the linear predictor
    :math:`\eta_{cts}` of the family (``y ~ Bernoulli(logit^-1(eta))``, ...), with the
    priors of :mod:`~bayes_ir.hierarchical.design.priors`, and the contrasts are on the
    measure's scale: in collection :math:`c` the difference of the two systems'
    expected scores over its topic population (marginal means, as the two-way family
    model's, :mod:`bayes_ir.hierarchical.families.base`); overall, the mean over the
    collections of that difference at :math:`\gamma = 0`; on a new collection, with new
    :math:`\gamma \sim N(0, \omega^2)` at the baseline of a fitted collection drawn at
    random (:func:`~bayes_ir.hierarchical.group_effects.family_contrast_draws`). The
    between-collection SD :math:`\sqrt2\,\omega` stays on the logit scale.

    References
    ----------
    Corani, G., Benavoli, A., Demsar, J., Mangili, F., Zaffalon, M. (2017). Statistical
    comparison of classifiers through Bayesian hierarchical modelling. *Machine
    Learning* 106(11), 1817-1837.

    Gelman, A., Carlin, J. B., Stern, H. S., Dunson, D. B., Vehtari, A., Rubin, D. B.
    (2013). *Bayesian Data Analysis*, 3rd ed. CRC Press.
    """
    from bayes_ir.hierarchical.families import get_family

    validate.instance("table", table, ScoreTable)
    if segments is not None and by == "collection":
        by = "segment"
    validate.choice("by", by, BY)
    family = None if str(likelihood).strip() == "auto" else get_family(likelihood)
    if family is None or family.name not in LIKELIHOODS:
        raise BayesIRError(
            f"the {'auto' if family is None else family.name} likelihood is not available "
            f"across collections or segments: choose {', '.join(LIKELIHOODS)}"
        )
    gaussian = family.name == "gaussian"
    validate.choice("method", method, ("auto", "gibbs", "nuts"))
    if method == "auto":
        method = "gibbs" if gaussian else "nuts"
    seed = validate.seed(seed)
    chains = validate.positive_int("chains", chains, maximum=defaults.MAX_CHAINS)
    strict = validate.flag("strict", strict)
    model_check = validate.flag("model_check", model_check)
    if by == "segment":
        if segments is None:
            raise BayesIRError("by='segment' needs segments= ({topic: segment})")
        if scale not in ("auto", "measure"):
            raise BayesIRError("segments share their collection's measure: leave scale='auto'")
        design = segments_design(
            table, segments, measure=measure if isinstance(measure, str) else None
        )
    else:
        if not gaussian and scale == "sd":
            raise BayesIRError(
                f"scale='sd' standardises by a residual SD, which the {family.name} model "
                "has not: its contrasts are on the measure's scale (scale='auto')"
            )
        design = collections_design(
            table, measure=measure, scale=scale if gaussian else "measure", sigma=sigma
        )
    if gaussian:
        _check_residuals(design, family, per_block=by == "collection" and sigma == "collection")
    else:
        family = _family_for(design, family)
    pri = design_priors(design, rates=priors, family=None if gaussian else family)
    th = Thresholds.resolve(thresholds)
    post, stats, settings = sample_design(
        design, pri, method=method, chains=chains, draws=draws, tune=tune,
        target_accept=target_accept, seed=seed, sampler=sampler, ess_target=th.draws_ess,
        gate_ess=th.gate_ess, gibbs_tune=ACROSS_TUNE, nuts=(ACROSS_NUTS_DRAWS, ACROSS_NUTS_TUNE),
        family=None if gaussian else family,
        default_target_accept=defaults.TARGET_ACCEPT if gaussian else FAMILY_TARGET_ACCEPT,
    )  # fmt: skip
    diag = _diagnose(post, design, stats, th, family, pri, seed)
    own = ("sigma",) if gaussian else family.design_own
    tree = xr.DataTree.from_dict(
        {"posterior": posterior_dataset(post, design, own)}
        | ({"sample_stats": stats} if stats is not None else {})
    )
    provenance = {
        "data_hash": design.data_hash(),
        "source": design.source,
        "by": design.by,
        "groups": list(design.groups),
        "measures": design.measures,
        "scale": design.scale,
        "likelihood": family.name,
        "family": family.spec,
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
    result = AcrossFit(
        posterior=tree,
        design=design,
        table=table,
        priors=pri,
        method=method,
        diagnostics=diag,
        provenance=provenance,
    )
    if model_check:
        from bayes_ir.hierarchical.across_check import check_across

        result = replace(result, model_check=check_across(result, seed=seed))
    diag.warn_or_raise(strict=strict, stacklevel=2)
    if result.model_check is not None:
        result.model_check.warn(stacklevel=2)
    return result
