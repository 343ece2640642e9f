"""NUTS for the full hierarchical model: nutpie, compiled once per model structure.

Compiling the PyMC model for nutpie (numba) costs tens of seconds, sampling a
second. The compiled model is therefore cached per *structure* (likelihood,
likelihood form, numbers of topics, systems and observed cells); a new dataset of
the same structure only swaps the data containers (scores, indices, sufficient
statistics and the autoscaled prior constants, all ``pm.Data``) through nutpie's
``with_data``, so a sweep over collections or measures compiles once. PyMC's own
NUTS is the fallback when nutpie is not installed or fails.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import xarray as xr

from bayes_ir.errors import BayesIRError
from bayes_ir.hierarchical.model import (
    SIGN_LOGODDS,
    Design,
    build_model,
    data_updates,
    draw_skewness_sign,
)
from bayes_ir.hierarchical.priors import Priors

__all__ = ["sample_nuts", "compile_count", "clear_cache"]

Sampler = Literal["nutpie", "pymc"]
_CACHE: dict[tuple, object] = {}
_COMPILES = [0]


def compile_count() -> int:
    """Return the number of nutpie compilations in this process (a sweep adds one)."""
    return _COMPILES[0]


def clear_cache() -> None:
    """Forget the compiled models (frees memory; the next fit compiles again)."""
    _CACHE.clear()


def _key(design: Design, likelihood: str, sufficient: bool) -> tuple:
    n_t, n_s = design.shape
    return (likelihood, sufficient, n_t, n_s, int(design.score.size))


def compiled_model(design: Design, priors: Priors, likelihood: str):
    """Return a nutpie-compiled model for this design, from the cache when possible.

    Returns
    -------
    compiled, fresh
        The compiled model with this design's data, and whether it was compiled now.
    """
    import nutpie

    sufficient = likelihood == "gaussian" and design.complete
    key = _key(design, likelihood, sufficient)
    fresh = key not in _CACHE
    if fresh:
        model = build_model(design, likelihood=likelihood, priors=priors)
        _CACHE[key] = nutpie.compile_pymc_model(model)
        _COMPILES[0] += 1
    compiled = _CACHE[key]
    known = {var.name for var in getattr(compiled, "shared_var_keys", {})}
    updates = data_updates(design, priors, sufficient=sufficient)
    compiled = compiled.with_data(**{k: v for k, v in updates.items() if k in known})
    return compiled, fresh


def _relabel(ds: xr.Dataset, design: Design) -> xr.Dataset:
    coords = {"topic": list(design.topics), "system": list(design.systems)}
    return ds.assign_coords({k: v for k, v in coords.items() if k in ds.dims})


def sample_nuts(
    design: Design,
    priors: Priors,
    likelihood: str,
    *,
    chains: int,
    draws: int,
    tune: int,
    target_accept: float,
    seed: int,
    sampler: Sampler = "nutpie",
) -> tuple[xr.Dataset, xr.Dataset | None]:
    """Sample the ZeroSumNormal model with NUTS.

    Parameters
    ----------
    design, priors, likelihood
        The data, resolved priors and likelihood name.
    chains, draws, tune, target_accept, seed
        NUTS settings; the same seed gives the same draws.
    sampler
        ``"nutpie"`` (default) or ``"pymc"``.

    Returns
    -------
    posterior, sample_stats
        Datasets with dims ``chain, draw`` (+ ``topic``, ``system``) labelled by the design.
    """
    keep = ["b0", "sigma", "sigma_topic", "sigma_system", "topic_effect", "system_effect"]
    if likelihood == "skew_normal":
        keep += ["abs_skewness", SIGN_LOGODDS]
    if sampler == "nutpie":
        try:
            import nutpie
        except ImportError:  # pragma: no cover - nutpie is a dependency
            sampler = "pymc"
    if sampler == "nutpie":
        compiled, _ = compiled_model(design, priors, likelihood)
        trace = nutpie.sample(
            compiled,
            draws=draws,
            tune=tune,
            chains=chains,
            cores=chains,
            seed=seed,
            progress_bar=False,
            save_warmup=False,
            target_accept=target_accept,
            # the skew-normal's shape correlates with the scales: a low-rank mass
            # matrix doubled the ESS of the contrasts on rb04
            adaptation="low_rank" if likelihood == "skew_normal" else "diag",
        )
        post = trace["posterior"].to_dataset()[keep]
        stats = trace["sample_stats"].to_dataset() if "sample_stats" in trace.children else None
    elif sampler == "pymc":
        import pymc as pm

        model = build_model(design, likelihood=likelihood, priors=priors)
        with model:
            trace = pm.sample(
                draws=draws,
                tune=tune,
                chains=chains,
                cores=1,
                random_seed=seed,
                target_accept=target_accept,
                progressbar=False,
                nuts_sampler="pymc",
                compute_convergence_checks=False,
            )
        post = trace["posterior"].to_dataset()[keep]
        stats = trace["sample_stats"].to_dataset() if "sample_stats" in trace.children else None
    else:
        raise BayesIRError(f"sampler must be 'nutpie' or 'pymc', got {sampler!r}")
    if likelihood == "skew_normal":
        post = _signed_shape(post, seed)
    post = _relabel(post, design)
    post.attrs = {}  # sampler timings would make equal-seed fits differ
    if stats is not None:
        stats.attrs = {}
    post = post.drop_vars([c for c in post.coords if c not in ("chain", "draw", *post.dims)])
    return post, stats


def _signed_shape(post: xr.Dataset, seed: int) -> xr.Dataset:
    """Replace ``abs_skewness`` and the sign log-odds by signed ``skewness`` and ``alpha``."""
    skew, alpha = draw_skewness_sign(
        post["abs_skewness"].values, post[SIGN_LOGODDS].values, seed=seed
    )
    dims = post["abs_skewness"].dims
    post = post.drop_vars(["abs_skewness", SIGN_LOGODDS])
    return post.assign(alpha=(dims, alpha), skewness=(dims, skew))


def to_numpy(post: xr.Dataset) -> dict[str, np.ndarray]:
    """Plain arrays of a posterior dataset (chain, draw, ...)."""
    return {k: np.asarray(v.values) for k, v in post.data_vars.items()}
