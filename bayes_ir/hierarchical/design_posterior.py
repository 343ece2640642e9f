"""Sample a crossed design's model, label its draws, and what every fit of a design shares.

:func:`sample_design` runs the blocked Gibbs sampler or NUTS on the PyMC twin,
:func:`posterior_dataset` labels the draws, and :class:`DesignFit` is the base of the fits
of crossed designs (:class:`~bayes_ir.hierarchical.AcrossFit`,
:class:`~bayes_ir.hierarchical.ReplicateFit`): the posterior, the draws of a term, the
gate, and the text and tables read from the fit's ``contrasts()``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import BayesIRError
from bayes_ir.hierarchical.design import CrossedDesign, DesignPriors
from bayes_ir.hierarchical.diagnostics import Diagnostics, GateStatus
from bayes_ir.table import ScoreTable

__all__ = ["DesignFit", "posterior_dataset", "sample_design"]


@dataclass(frozen=True, eq=False)
class DesignFit:
    """Posterior of the model of a crossed design (the base of the fits of designs).

    Attributes
    ----------
    posterior
        ``xarray.DataTree``: group ``posterior`` (:func:`posterior_dataset`);
        ``sample_stats`` for NUTS.
    design
        The :class:`~bayes_ir.hierarchical.design.CrossedDesign` that was fitted.
    table
        The score table.
    priors
        The resolved :class:`~bayes_ir.hierarchical.design.DesignPriors`.
    method
        ``"gibbs"`` or ``"nuts"``.
    diagnostics
        The :class:`~bayes_ir.hierarchical.Diagnostics` of the fit.
    provenance
        Data hash, method, seed, sampler settings, versions, timestamp.
    model_check
        The fit's posterior predictive checks (``None`` when not run).
    """

    posterior: xr.DataTree
    design: CrossedDesign
    table: ScoreTable
    priors: DesignPriors
    method: str
    diagnostics: Diagnostics
    provenance: dict[str, Any] = field(default_factory=dict)
    model_check: Any = None

    @property
    def family(self) -> Any:
        """The likelihood family of the fit (provenance ``family``; Gaussian by default)."""
        from bayes_ir.hierarchical.families import family_of

        return family_of(self)

    @property
    def draws(self) -> xr.Dataset:
        """The ``posterior`` group as a Dataset."""
        return self.posterior["posterior"].to_dataset()

    @property
    def n_draws(self) -> int:
        """Chains x draws."""
        post = self.posterior["posterior"]
        return int(post.sizes["chain"] * post.sizes["draw"])

    def describe_draws(self) -> str:
        """One line: chains x draws, and the ESS a pilot chose them for (when it did).

        See :func:`~bayes_ir.hierarchical.samplers.chains.describe_draws`.
        """
        from bayes_ir.hierarchical.samplers.chains import describe_draws
        from bayes_ir.hierarchical.samplers.retry import describe_rerun

        post = self.posterior["posterior"]
        line = describe_draws(post.sizes["chain"], post.sizes["draw"], self.provenance)
        rerun = describe_rerun(self.provenance, defaults.TARGET_ACCEPT)
        return f"{line}; NUTS {rerun}" if rerun else line

    def term_draws(self, name: str) -> np.ndarray:
        """Return the draws of a term's effects or of a scale, as (chains x draws, levels).

        ``name`` is a term (``"b0"``, ``"system"``, ``"system:collection"``,
        ``"replicate"``) or a scale (``"sigma"``, ``"sigma_system"``, ...).
        """
        post = self.posterior["posterior"]
        key = name if name in post.data_vars else f"{name.replace(':', '_')}_effect"
        if key not in post.data_vars:
            raise KeyError(name)
        values = post[key].transpose("chain", "draw", ...).values
        return np.asarray(values, dtype=float).reshape(self.n_draws, -1)

    def contrasts(
        self,
        *,
        champion: str | None = None,
        challengers: str | Iterable[str] | None = None,
        ci_prob: float | None = None,
        margin: float = 0.0,
    ) -> Any:
        """Return the fit's contrasts (each fit of a design defines them)."""
        raise NotImplementedError

    def summary(self, *, ci_prob: float | None = None) -> str:
        """Header, diagnostics and the contrasts (text; see the fit's ``contrasts()``)."""
        return str(self.contrasts(ci_prob=ci_prob).summary())

    def to_frame(self, *, ci_prob: float | None = None) -> pd.DataFrame:
        """Return the table of the fit's ``contrasts()``."""
        frame: pd.DataFrame = self.contrasts(ci_prob=ci_prob).to_frame()
        return frame

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def plot(self, **kwargs: Any) -> Any:
        """Draw the figure of the fit's ``contrasts()``."""
        return self.contrasts().plot(**kwargs)

    def __str__(self) -> str:
        return self.summary()

    def gate(self) -> GateStatus:
        """Return whether the posterior passed its diagnostics gate."""
        return GateStatus.of(self)


def sample_design(
    design: CrossedDesign,
    priors: DesignPriors,
    *,
    method: str,
    chains: int,
    draws: int | None,
    tune: int | None,
    target_accept: float | None,
    seed: int,
    sampler: str | None,
    ess_target: float,
    gate_ess: float,
    gibbs_tune: int,
    nuts: tuple[int, int],
    family: Any = None,
    default_target_accept: float = defaults.TARGET_ACCEPT,
) -> tuple[dict[str, np.ndarray], xr.Dataset | None, dict[str, Any]]:
    """Sample the model of ``design`` by blocked Gibbs or NUTS on its PyMC twin.

    Parameters
    ----------
    design, priors
        The design and its resolved priors.
    method
        ``"gibbs"`` or ``"nuts"``.
    chains, draws, tune, target_accept, seed, sampler
        Sampler settings (``None``: the defaults below; ``target_accept`` and ``sampler``
        apply to NUTS only: nutpie, or PyMC's own with ``sampler="pymc"``). Without
        ``target_accept``, NUTS runs at ``default_target_accept`` and a run that diverged
        is redone once at a higher one
        (:func:`~bayes_ir.hierarchical.samplers.retry.retry_if_diverged`; the settings
        returned say so: ``divergences_at_default_target_accept``).
    ess_target
        Bulk and tail ESS the Gibbs sampler's default draws aim at
        (:attr:`~bayes_ir.hierarchical.diagnostics.Thresholds.draws_ess`): a pilot
        chooses them for it with the margin :data:`bayes_ir.defaults.DRAWS_ESS_MARGIN`, at
        most :func:`~bayes_ir.hierarchical.samplers.chains.most_draws`, for the
        quantities the results read
        (:func:`~bayes_ir.hierarchical.samplers.blocked_gibbs.read_by_results`).
    gate_ess
        Bulk and tail ESS of the diagnostics gate, the aim of every other quantity
        (with the same margin).
    gibbs_tune, nuts
        Default warm-up per chain of the Gibbs sampler; default (draws, tune) of NUTS.
    family
        ``None`` (Gaussian) or a logit-link family (NUTS only; see
        :func:`~bayes_ir.hierarchical.samplers.pymc_design.build_design_model`).

    Returns
    -------
    posterior, sample_stats, settings
        The draws (see :func:`~bayes_ir.hierarchical.samplers.blocked_gibbs.sample_design_gibbs`),
        NUTS's statistics (``None`` for Gibbs), and the settings used with the acceptance
        rates of the Gibbs sampler's MH steps (``draws``, ``tune``, ``target_accept``, ...).
    """
    if method == "gibbs":
        from bayes_ir.hierarchical.samplers.blocked_gibbs import sample_design_gibbs

        if family is not None and family.name != "gaussian":
            raise BayesIRError(
                f"the blocked Gibbs sampler draws the Gaussian model: the {family.name} "
                "likelihood is sampled by NUTS (method='nuts', the default for it)"
            )
        from bayes_ir.hierarchical.samplers.chains import most_draws

        if target_accept is not None or sampler is not None:
            raise BayesIRError("target_accept and sampler apply to method='nuts' only")
        ess = ess_rest = None
        if draws is None:  # a pilot chooses them (the most: those of the slowest mixing)
            ess = defaults.DRAWS_ESS_MARGIN * ess_target
            ess_rest = defaults.DRAWS_ESS_MARGIN * gate_ess
            draws = most_draws(ess, chains)
        draws = validate.positive_int("draws", draws)
        tune = gibbs_tune if tune is None else validate.positive_int("tune", tune, minimum=0)
        post, info = sample_design_gibbs(
            design, priors, chains=chains, draws=draws, tune=tune, seed=seed, ess=ess,
            ess_rest=ess_rest,
        )  # fmt: skip
        draws = int(post["b0"].shape[1])
        settings = {"draws": draws, "tune": tune, "target_accept": None, **info}
        if ess is not None:
            settings["draws_for_ess"] = ess_target
            settings["draws_for_ess_rest"] = gate_ess
        return post, None, settings
    from bayes_ir.hierarchical.samplers.pymc_design import sample_design_nuts
    from bayes_ir.hierarchical.samplers.retry import retry_if_diverged

    draws = nuts[0] if draws is None else validate.positive_int("draws", draws)
    tune = nuts[1] if tune is None else validate.positive_int("tune", tune)
    if target_accept is not None:
        target_accept = validate.probability("target_accept", target_accept)
    own = 1 if family is None else max(1, len(family.design_own))
    values = sum(t.n_levels + t.n_scales for t in design.terms) + own * design.residual.n_levels
    validate.memory("the posterior draws (NUTS keeps every effect, topics included)",
                    {"chains": chains, "draws": draws, "values per draw": values})  # fmt: skip

    def draw(target_accept: float) -> tuple[dict[str, np.ndarray], xr.Dataset | None]:
        return sample_design_nuts(
            design,
            priors,
            chains=chains,
            draws=draws,
            tune=tune,
            seed=seed,
            target_accept=target_accept,
            sampler=sampler or "nutpie",
            family=family,
        )

    (post, stats), used, diverged = retry_if_diverged(
        draw, lambda out: out[1], target_accept=target_accept, default=default_target_accept
    )
    ran: dict[str, Any] = {"draws": draws, "tune": tune, "target_accept": used}
    if diverged:
        ran["divergences_at_default_target_accept"] = diverged
        ran["default_target_accept"] = default_target_accept
    return post, stats, ran


def posterior_dataset(
    post: dict[str, np.ndarray], design: CrossedDesign, own: tuple[str, ...] = ("sigma",)
) -> xr.Dataset:
    """Return a design's draws as a labelled Dataset.

    ``b0`` (dim: the intercept's factor), ``sigma`` (or the family's ``own``
    parameters; dim ``collection`` when there is one per collection), every random
    term's effects ``<term>_effect`` (dim ``<term>``, ``:`` written ``_``; a term the
    sampler did not keep is left out) and its scale ``sigma_<term>`` (dim: the factor
    of its scale groups, when there are several).
    """
    b0t = design.terms[0]
    b0_dim = next(iter(b0t.components))  # "collection", or "segment" (an intercept each)
    per_collection = design.residual.n_levels > 1
    data: dict[str, Any] = {"b0": (("chain", "draw", b0_dim), post["b0"])}
    for name in own:
        data[name] = (
            (("chain", "draw", "collection"), post[name])
            if per_collection
            else (("chain", "draw"), post[name][..., 0])
        )
    coords: dict[str, Any] = {b0_dim: list(b0t.levels)}
    if per_collection:
        coords["collection"] = list(design.residual.levels)
    for t in design.terms[1:]:
        if t.name in post:
            data[f"{t.dim}_effect"] = (("chain", "draw", t.dim), post[t.name])
            coords[t.dim] = list(t.levels)
        scale = post[t.scale_name]
        if t.scale_dim is None:
            data[t.scale_name] = (("chain", "draw"), scale[..., 0])
        else:
            data[t.scale_name] = (("chain", "draw", t.scale_dim), scale)
            coords.setdefault(t.scale_dim, list(t.scale_names))
    chains, draws = post["b0"].shape[:2]
    coords.update(chain=np.arange(chains), draw=np.arange(draws))
    return xr.Dataset(data, coords=coords)
