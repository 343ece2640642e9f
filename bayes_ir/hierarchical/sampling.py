"""NUTS for the full hierarchical model with nutpie; PyMC's own NUTS as the fallback.

* Gaussian model with missing cells: the PyMC model of :func:`build_model`, compiled
  for nutpie (numba) once per model *structure* (likelihood form, numbers of topics,
  systems and observed cells). Compiling costs seconds, sampling a fraction of that, so
  the compiled model is cached and a new dataset of the same structure only swaps the
  data containers (scores, indices, sufficient statistics and the autoscaled prior
  constants, all ``pm.Data``) through nutpie's ``with_data``: a sweep over collections
  or measures compiles once.
* Skew-normal model: the hand-written kernel of
  :mod:`bayes_ir.hierarchical.skewnormal_kernel` (the same log density, tested against
  the PyMC model), which compiles once per machine (numba's disk cache) and takes
  any data shape, so nothing is compiled per dataset (:func:`skewnormal_model`).

``sampler="pymc"`` samples the PyMC model with PyMC's NUTS instead (slower; for
cross-checks, or where nutpie is missing).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
import xarray as xr

from bayes_ir import progress, validate
from bayes_ir.errors import OptionError
from bayes_ir.hierarchical.model import (
    SIGN_LOGODDS,
    Design,
    build_model,
    centred_systems,
    data_updates,
    draw_skewness_sign,
)
from bayes_ir.hierarchical.priors import Priors

__all__ = [
    "SIGN_SETTLED",
    "sample_nuts",
    "cached_compile",
    "compile_count",
    "compiled_model",
    "clear_cache",
    "signed_shape",
    "skewnormal_model",
]

Sampler = Literal["nutpie", "pymc"]
#: Fewest warm-up draws nutpie accepts (its adaptation windows need one; 0 panics).
NUTPIE_MIN_TUNE: int = 1
_CACHE: dict[tuple, Any] = {}
#: Most compiled models kept by :func:`cached_compile` (the least recently used goes):
#: a sweep over many datasets of the crossed designs, whose keys hold the data, must not
#: keep every compiled model alive.
CACHE_SIZE: int = 8
_COMPILES = [0]
_INITIAL_POINT_LOCK = threading.Lock()


def compile_count() -> int:
    """Return the number of nutpie compilations in this process (a sweep adds one)."""
    return _COMPILES[0]


def clear_cache() -> None:
    """Forget the compiled models (frees memory; the next fit compiles again)."""
    _CACHE.clear()


def _key(design: Design, likelihood: str, sufficient: bool, sigma: str, pooling: str) -> tuple:
    n_t, n_s = design.shape
    pooled = tuple(np.flatnonzero(design.pooled(pooling)))  # fixed in the graph
    shape = (design.complete, n_t, n_s, int(design.score.size))
    return (likelihood, sufficient, sigma, pooled, *shape)


def cached_compile(key: tuple, build: Callable[[], Any], data: Mapping[str, Any]):
    """Return a nutpie-compiled PyMC model from this process's cache, with ``data``.

    Parameters
    ----------
    key
        What determines the compiled graph (shapes, options); models with equal keys
        may differ only in the values of their data containers (``pm.Data``).
    build
        Builds the PyMC model; called when ``key`` is not in the cache.
    data
        Values of the data containers for this dataset (names the compiled model
        does not read are ignored).

    Returns
    -------
    compiled, fresh
        The compiled model with ``data``, and whether it was compiled now.

    Notes
    -----
    At most :data:`CACHE_SIZE` models are kept, the least recently used leaving first.
    nutpie's ``with_data`` swaps the data its log density reads, but the starting
    points come from PyMC's initial-point function, which reads the model's own
    containers: they are set to ``data`` before each call (under a lock), so the
    draws of a dataset do not depend on which dataset was compiled first.
    """
    import nutpie

    fresh = key not in _CACHE
    if fresh:
        model = build()
        _CACHE[key] = (model, nutpie.compile_pymc_model(model))
        _COMPILES[0] += 1
        while len(_CACHE) > CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
    model, compiled = _CACHE.pop(key)
    _CACHE[key] = (model, compiled)  # now the most recently used
    known = {var.name for var in compiled.shared_var_keys}
    compiled = compiled.with_data(**{k: v for k, v in data.items() if k in known})
    containers = {k: model[k] for k in data if k in model.named_vars}
    base = compiled.initial_point_func

    def initial_point(seed):
        with _INITIAL_POINT_LOCK:
            for name, var in containers.items():
                var.set_value(np.asarray(data[name], dtype=var.dtype))
            return base(seed)

    return dataclasses.replace(compiled, initial_point_func=initial_point), fresh


def compiled_model(
    design: Design, priors: Priors, likelihood: str, sigma: str = "pooled", pooling: str = "all"
):
    """Return a nutpie-compiled model for this design, from the cache when possible.

    Returns
    -------
    compiled, fresh
        The compiled model with this design's data, and whether it was compiled now
        (:func:`cached_compile`).
    """
    sufficient = likelihood == "gaussian" and design.complete and sigma == "pooled"
    return cached_compile(
        _key(design, likelihood, sufficient, sigma, pooling),
        lambda: build_model(
            design, likelihood=likelihood, priors=priors, sigma=sigma, pooling=pooling
        ),
        data_updates(design, priors, sufficient=sufficient),
    )


#: Log-density gap (nats) between the two signs' modes of the skew-normal model above
#: which the sampler keeps only the higher sign's term: the other holds a share of the
#: posterior near exp(-gap) (1e-13 at 30 nats). Robust04 AP: 44 nats; rb04: 0.3.
SIGN_SETTLED: float = 30.0


def skewnormal_model(design: Design, priors: Priors):
    r"""Return the skew-normal model for nutpie, on the compiled kernel (no PyTensor compile).

    Log density and gradient come from
    :func:`~bayes_ir.hierarchical.skewnormal_kernel.logp_and_grad` (numba, cached on
    disk), which equals the PyMC model of :func:`build_model`. nutpie calls its C
    callbacks directly, without the GIL, exactly as it calls a PyMC model compiled
    by :func:`nutpie.compile_pymc_model`, whose model class is reused here. A new
    dataset compiles nothing, so the model is not cached.

    When one sign's mode is :data:`SIGN_SETTLED` nats or more above the other's
    (:func:`~bayes_ir.hierarchical.skewnormal_kernel.sign_modes`), the sampler's
    density is the joint density of the parameters and that sign instead of the sum
    over both signs: half the cost per gradient, and the same density within a factor
    :math:`1 + e^{-\ell}`, :math:`\ell` the sign log-odds at the point, which
    :func:`sample_nuts` checks on every draw (:func:`_sign_summed` undoes it).
    Otherwise both signs' terms are summed, each at its own point: the sampler's
    coordinates are shifted by :func:`~bayes_ir.hierarchical.skewnormal_kernel.mode_shift`
    for one sign and the other (a translation per sign: the same joint posterior of the
    parameters and the sign), so that the two modes coincide and the sign given the
    coordinates is drawn afresh at every draw (:func:`signed_shape` moves the draws).
    """
    from bayes_ir.hierarchical import skewnormal_kernel as kernel
    from bayes_ir.hierarchical.families.sampler import kernel_model

    n_t, n_s = design.shape
    hyper = priors.values()
    rates = (
        float(hyper.sigma_topic_rate),
        float(hyper.sigma_system_rate),
        float(hyper.sigma_rate),
    )
    centred = float(centred_systems(design.matrix))
    constants = (float(hyper.b0_mu), float(hyper.b0_sd), *rates, float(hyper.skewness_max), centred)
    names, shapes = kernel.expanded_layout(n_t, n_s)
    data = kernel.pack(design.matrix, constants)
    modes, logps, sds = kernel.sign_modes(data, constants[0], rates)
    gap = float(logps[0] - logps[1])
    if abs(gap) >= SIGN_SETTLED:
        data = kernel.pack(design.matrix, constants, sign=1 if gap > 0 else -1)
    elif np.isfinite(modes).all():  # both signs: sample coordinates where their modes meet
        half = kernel.mode_shift(modes)
        data = kernel.pack(design.matrix, constants, shift=half)
        modes = np.stack([modes[0] - half, modes[1] + half])
    return kernel_model(
        kernel,
        data,
        design,
        names,
        shapes,
        n_dim=kernel.n_coordinates(n_t, n_s),
        initial_point=_mode_starts(modes, logps, sds),
        dims={"topic_effect": ("topic",), "system_effect": ("system",)},
    )


def sigma_by_system_model(design: Design, priors: Priors):
    r"""Return the Gaussian model with one residual SD per system for nutpie, on its kernel.

    Log density and gradient come from
    :mod:`~bayes_ir.hierarchical.families.gaussian_kernel` (numba, cached on disk), which
    equals the PyMC model of :func:`build_model` with ``sigma="system"`` and every system
    pooled. The chains start near the prior means of the scales (jittered as PyMC's).
    """
    from bayes_ir.hierarchical.families import gaussian_kernel as kernel
    from bayes_ir.hierarchical.families._kernel import N_CROSSED, pack_header
    from bayes_ir.hierarchical.families.sampler import crossed_start, kernel_model

    n_t, n_s = design.shape
    hyper = priors.values()
    header = pack_header(
        (n_t, n_s),
        (float(hyper.b0_mu), float(hyper.b0_sd)),
        (float(hyper.sigma_topic_rate), float(hyper.sigma_system_rate)),
        None,
        True,
    )
    rates = (float(hyper.sigma_rate), float(hyper.sigma_log_sd_rate))
    data = kernel.pack(design.matrix, header, rates=rates)
    start = crossed_start(data, kernel.n_coordinates(n_t, n_s))
    start[N_CROSSED : N_CROSSED + 2] = -np.log(rates)  # log prior means of the SD's scales
    names, shapes = kernel.expanded_layout(n_t, n_s)
    return kernel_model(kernel, data, design, names, shapes, n_dim=start.size, start=start)


def _mode_starts(modes: np.ndarray, logps: np.ndarray, sds: np.ndarray):
    r"""Return the starting-point function of the skew-normal chains (jittered sign modes).

    The model's density has one mode per sign of the skewness
    (:func:`~bayes_ir.hierarchical.skewnormal_kernel.sign_modes`, whose outputs these
    are). Each chain starts at
    the mode of sign ``+`` with probability :math:`\mathrm{expit}(\ell_+ - \ell_-)`
    (:math:`\ell_\pm` the log densities at the two modes), else at the mode of sign
    ``-``, plus Gaussian noise of the conditional SDs: when the modes are far apart
    (Robust04 AP: 46 nats) every chain starts in the basin of the higher one, the other
    holding a negligible share of the posterior but trapping a chain started in it;
    when they are close (rb04: 0.4 nats) chains start in both. The choice and the
    noise are drawn from the chain's seed, so a seed gives the same draws.
    """
    from scipy.special import expit

    p_plus = float(expit(logps[0] - logps[1]))

    def initial_point(seed):
        rng = np.random.default_rng(seed)
        branch = 0 if rng.random() < p_plus else 1
        return modes[branch] + sds[branch] * rng.standard_normal(modes.shape[1])

    return initial_point


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
    sigma: str = "pooled",
    pooling: str = "all",
) -> tuple[xr.Dataset, xr.Dataset | None]:
    """Sample the ZeroSumNormal model with NUTS.

    Parameters
    ----------
    design, priors, likelihood
        The data, resolved priors and likelihood name.
    chains, draws, tune, target_accept, seed
        NUTS settings; the same seed gives the same draws. ``tune`` is honoured as
        given; nutpie needs at least :data:`NUTPIE_MIN_TUNE` (fewer raises
        :class:`~bayes_ir.errors.OptionError`), PyMC accepts 0.
    sampler
        ``"nutpie"`` (default) or ``"pymc"``.
    sigma
        ``"pooled"`` or ``"system"`` (residual SD per system: the Gaussian's runs on
        :func:`sigma_by_system_model`). The skew-normal kernel has one residual SD, so a
        skew-normal model with ``sigma="system"`` is compiled from the PyMC model (slower
        to compile, same sampler).
    pooling
        ``"all"`` or ``"artifacts"`` (see :func:`~bayes_ir.hierarchical.build_model`);
        the kernels pool every system, so a model with ``pooling="artifacts"`` is
        compiled from the PyMC model.

    Returns
    -------
    posterior, sample_stats
        Datasets with dims ``chain, draw`` (+ ``topic``, ``system``) labelled by the design.
    """
    validate.choice("sampler", sampler, ("nutpie", "pymc"))
    keep = ["b0", "sigma", "sigma_topic", "sigma_system", "topic_effect", "system_effect"]
    if sigma == "system":
        keep += ["sigma_typical", "sigma_log_sd"]
    if likelihood == "skew_normal":
        keep += ["abs_skewness", SIGN_LOGODDS]
    if sampler == "nutpie":
        try:
            import nutpie  # noqa: F401  (is it installed?)
        except ImportError:  # pragma: no cover - nutpie is a dependency
            sampler = "pymc"
    block: np.ndarray | None = None  # the skew-normal kernel's data block, when it sampled
    if sampler == "nutpie":
        options: dict[str, Any] = {"draws": draws, "seed": seed, "target_accept": target_accept,
                                   "adaptation": _adaptation(design, likelihood)}  # fmt: skip
        label = f"sampling the {likelihood.replace('_', '-')} model (NUTS)"
        kernel_model = likelihood == "skew_normal" and sigma == "pooled" and pooling == "all"
        if kernel_model:
            compiled = skewnormal_model(design, priors)
        elif likelihood == "gaussian" and sigma == "system" and pooling == "all":
            compiled = sigma_by_system_model(design, priors)
        else:
            compiled, _ = compiled_model(design, priors, likelihood, sigma, pooling)
        trace = nutpie_sample(compiled, label=label, tune=tune, chains=chains, **options)
        if kernel_model and not _sign_held(compiled.user_data, trace):
            compiled = _sign_summed(compiled)
            trace = nutpie_sample(compiled, label=label, tune=tune, chains=chains, **options)
        post = trace["posterior"].to_dataset()[keep]
        stats = trace["sample_stats"].to_dataset() if "sample_stats" in trace.children else None
        block = compiled.user_data if kernel_model else None
    else:  # "pymc"
        model = build_model(
            design, likelihood=likelihood, priors=priors, sigma=sigma, pooling=pooling
        )
        trace = pymc_nuts(model, draws=draws, tune=tune, chains=chains, seed=seed,
                          target_accept=target_accept)  # fmt: skip
        post = trace["posterior"].to_dataset()[keep]
        stats = trace["sample_stats"].to_dataset() if "sample_stats" in trace.children else None
    if likelihood == "skew_normal":
        post = signed_shape(post, seed, block)
    post = _relabel(post, design)
    post.attrs = {}  # sampler timings would make equal-seed fits differ
    if stats is not None:
        stats.attrs = {}
    post = post.drop_vars([c for c in post.coords if c not in ("chain", "draw", *post.dims)])
    return post, stats


def _sign_held(data: np.ndarray, trace: xr.DataTree) -> bool:
    """Whether a run with the sign of the skewness fixed sampled the model's density.

    True when the sign was summed out, or when on every draw the fixed sign's log-odds
    is at least :data:`SIGN_SETTLED` (the other sign's term below ``exp(-30)`` of it).
    """
    from bayes_ir.hierarchical.skewnormal_kernel import N_HEADER

    sign = float(data[N_HEADER - 1])
    logodds = np.asarray(trace["posterior"].to_dataset()[SIGN_LOGODDS])
    return sign == 0.0 or float(np.min(sign * logodds)) >= SIGN_SETTLED


def _sign_summed(model):
    """Return the kernel model ``model`` with the sign of the skewness summed out."""
    import dataclasses

    from bayes_ir.hierarchical.skewnormal_kernel import N_HEADER

    data = model.user_data.copy()
    data[N_HEADER - 1] = 0.0
    return dataclasses.replace(model, user_data=data)


def _adaptation(design: Design, likelihood: str) -> str:
    """Return nutpie's mass matrix adaptation for this model.

    The skew-normal's shape correlates with the scales: a low-rank mass matrix doubled
    the ESS of the contrasts on rb04 (non-centred system effects). With centred system
    effects (Robust04 AP, 249 x 110) it broke chains instead: with seed 0, one chain in
    four adapted a step size of 0.05 and diverged at every draw, another 51 times
    (the diagonal mass matrix, seed 1: step sizes near 0.29, no divergence).
    """
    if likelihood == "skew_normal" and not centred_systems(design.matrix):
        return "low_rank"
    return "diag"


def signed_shape(post: xr.Dataset, seed: int, data: np.ndarray | None = None) -> xr.Dataset:
    """Replace ``abs_skewness`` and the sign log-odds by signed ``skewness`` and ``alpha``.

    The skew-normal model samples the size of the skewness and the log-odds of its sign
    (see :func:`~bayes_ir.hierarchical.model.draw_skewness_sign`); this draws the sign.
    ``data``: the kernel's data block when the kernel sampled; with a sign shift in it
    (:func:`skewnormal_model`) the draws are moved to the sign drawn
    (:func:`~bayes_ir.hierarchical.skewnormal_kernel.shifted_draws`).
    """
    skew, alpha = draw_skewness_sign(
        post["abs_skewness"].values, post[SIGN_LOGODDS].values, seed=seed
    )
    dims = post["abs_skewness"].dims
    if data is not None:
        from bayes_ir.hierarchical.skewnormal import skewness_to_alpha
        from bayes_ir.hierarchical.skewnormal_kernel import shifted_draws

        names = ("b0", "sigma_system", "abs_skewness", "topic_effect", "system_effect")
        before = {name: post[name].values for name in names}
        after = shifted_draws(before, np.sign(skew), data)
        if after is not before:
            skew = np.sign(skew) * after["abs_skewness"]
            alpha = skewness_to_alpha(skew)
            post = post.assign({n: (post[n].dims, after[n]) for n in names if n != "abs_skewness"})
    post = post.drop_vars(["abs_skewness", SIGN_LOGODDS])
    return post.assign(alpha=(dims, alpha), skewness=(dims, skew))


def to_numpy(post: xr.Dataset) -> dict[str, np.ndarray]:
    """Plain arrays of a posterior dataset (chain, draw, ...)."""
    return {str(k): np.asarray(v.values) for k, v in post.data_vars.items()}


def pymc_nuts(model, *, draws: int, tune: int, chains: int, seed: int, target_accept: float):
    """Sample a PyMC model with PyMC's own NUTS (one core, no progress bar, no checks)."""
    import pymc as pm

    with model:
        return pm.sample(
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


def nutpie_sample(model, *, label: str = "sampling", tune: int, chains: int, **options):
    """Run ``nutpie.sample(model, ...)``, one chain per core unless ``cores`` is given.

    An interrupt stops it and propagates.

    ``tune`` below :data:`NUTPIE_MIN_TUNE` is refused in one line (nutpie needs warm-up
    to adapt its step size); the warm-up is not saved and nutpie's own bar is off.
    ``nutpie.sample`` answers Ctrl-C by returning the draws made so far, which would be
    analysed as if complete; here the sampler is cancelled and the interrupt re-raised.
    The draws made are reported as the step ``label`` (:mod:`bayes_ir.progress`).
    """
    import nutpie

    if tune < NUTPIE_MIN_TUNE:
        raise OptionError(
            f"tune={tune}: NUTS (nutpie) needs at least {NUTPIE_MIN_TUNE} warm-up draw "
            "per chain to adapt its step size"
        )
    options = {"cores": chains, "progress_bar": False, "save_warmup": False} | options
    options |= {"tune": tune, "chains": chains}

    with progress.task(label) as step:

        def report(chains) -> None:  # nutpie's thread, every progress_rate ms
            step.update(sum(c.finished_draws for c in chains),
                        total=sum(c.total_draws for c in chains))  # fmt: skip

        sampler = nutpie.sample(model, blocking=False, progress_callback=report,
                                progress_rate=250, **options)  # fmt: skip
        try:
            return sampler.wait()
        except BaseException:
            sampler.cancel()
            raise
