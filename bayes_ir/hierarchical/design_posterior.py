"""The draws of a crossed design's samplers as a labelled :class:`xarray.Dataset`."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayes_ir.hierarchical.design import CrossedDesign

__all__ = ["posterior_dataset"]


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
