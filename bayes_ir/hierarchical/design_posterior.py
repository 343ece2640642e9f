"""Sample a crossed design's model, and label its draws as an :class:`xarray.Dataset`."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import BayesIRError
from bayes_ir.hierarchical.design import CrossedDesign, DesignPriors

__all__ = ["posterior_dataset", "sample_design"]


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
    gibbs: tuple[int, int],
    nuts: tuple[int, int],
) -> tuple[dict[str, np.ndarray], xr.Dataset | None, dict[str, Any]]:
    """Sample the Gaussian model of ``design`` by blocked Gibbs or NUTS on its PyMC twin.

    Parameters
    ----------
    design, priors
        The design and its resolved priors.
    method
        ``"gibbs"`` or ``"nuts"``.
    chains, draws, tune, target_accept, seed, sampler
        Sampler settings (``None``: the defaults below; ``target_accept`` and ``sampler``
        apply to NUTS only: nutpie, or PyMC's own with ``sampler="pymc"``).
    gibbs, nuts
        Default (draws, tune) per chain of each method.

    Returns
    -------
    posterior, sample_stats, settings
        The draws (see :func:`~bayes_ir.hierarchical.samplers.blocked_gibbs.sample_design_gibbs`),
        NUTS's statistics (``None`` for Gibbs), and the settings used with the acceptance
        rates of the Gibbs sampler's MH steps (``draws``, ``tune``, ``target_accept``, ...).
    """
    if method == "gibbs":
        from bayes_ir.hierarchical.samplers.blocked_gibbs import sample_design_gibbs

        if target_accept is not None or sampler is not None:
            raise BayesIRError("target_accept and sampler apply to method='nuts' only")
        draws = gibbs[0] if draws is None else validate.positive_int("draws", draws)
        tune = gibbs[1] if tune is None else validate.positive_int("tune", tune, minimum=0)
        post, info = sample_design_gibbs(
            design, priors, chains=chains, draws=draws, tune=tune, seed=seed
        )
        return post, None, {"draws": draws, "tune": tune, "target_accept": None, **info}
    from bayes_ir.hierarchical.samplers.pymc_design import sample_design_nuts

    draws = nuts[0] if draws is None else validate.positive_int("draws", draws)
    tune = nuts[1] if tune is None else validate.positive_int("tune", tune)
    target_accept = (
        defaults.TARGET_ACCEPT
        if target_accept is None
        else validate.probability("target_accept", target_accept)
    )
    post, stats = sample_design_nuts(
        design,
        priors,
        chains=chains,
        draws=draws,
        tune=tune,
        seed=seed,
        target_accept=target_accept,
        sampler=sampler or "nutpie",
    )
    return post, stats, {"draws": draws, "tune": tune, "target_accept": target_accept}


def posterior_dataset(post: dict[str, np.ndarray], design: CrossedDesign) -> xr.Dataset:
    """Return a design's draws as a labelled Dataset.

    ``b0`` (dim: the intercept's factor), ``sigma`` (dim ``collection`` when there is
    one per collection), every random term's effects ``<term>_effect`` (dim ``<term>``,
    ``:`` written ``_``; a term the sampler did not keep is left out) and its scale
    ``sigma_<term>`` (dim: the factor of its scale groups, when there are several).
    """
    b0t = design.terms[0]
    b0_dim = next(iter(b0t.components))  # "collection", or "segment" (an intercept each)
    per_collection = design.residual.n_levels > 1
    data: dict[str, Any] = {
        "b0": (("chain", "draw", b0_dim), post["b0"]),
        "sigma": (("chain", "draw", "collection"), post["sigma"])
        if per_collection
        else (("chain", "draw"), post["sigma"][..., 0]),
    }
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
