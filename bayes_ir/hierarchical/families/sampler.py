r"""NUTS (nutpie) on a family's numba kernel: the model object, the starts, the draws.

A kernel module (e.g. :mod:`~bayes_ir.hierarchical.families.binomial_kernel`) exposes
``logp_cfunc`` and ``expand_cfunc``, numba C callbacks that nutpie calls from its own
threads without the GIL, exactly as it calls a PyMC model compiled by
:func:`nutpie.compile_pymc_model`, whose model class is reused here (as
:func:`~bayes_ir.hierarchical.sampling.skewnormal_model` does for the skew-normal).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

__all__ = [
    "CENTRED_RATIO",
    "centred_by_information",
    "centred_topics",
    "crossed_start",
    "jittered_starts",
    "kernel_model",
    "sample_kernel",
    "sample_pymc",
    "side_by_side",
]

#: An effect vector is centred when the mean sampling variance of its effects' estimates
#: is below this share of the effects' spread (the rule of
#: :func:`~bayes_ir.hierarchical.model.centred_systems`, whose constant it is).
CENTRED_RATIO: float = 0.25


def centred_by_information(estimates: np.ndarray, variances: np.ndarray) -> bool:
    r"""Whether an effect vector samples better centred, from rough estimates of its effects.

    True when :math:`\bar v < r\,\hat\chi^2`, with :math:`\bar v` the mean sampling
    variance of the estimates, :math:`\hat\chi^2 = \mathrm{Var}(\hat e) - \bar v` their
    spread and :math:`r` = :data:`CENTRED_RATIO`: an effect known to within a small
    fraction of the spread of the effects samples better centred, a weakly identified one
    non-centred (Papaspiliopoulos, Roberts and Skold 2007).

    References
    ----------
    Papaspiliopoulos, O., Roberts, G. O., Skold, M. (2007). A general framework for the
    parametrization of hierarchical models. *Statistical Science* 22(1), 59-73.
    """
    v = float(np.mean(variances))
    spread = float(np.var(estimates)) - v
    return bool(v < CENTRED_RATIO * spread)


def centred_topics(
    estimates: np.ndarray, variances: np.ndarray, informed: np.ndarray
) -> np.ndarray:
    r"""Which topics are centred on the intercept (the levels form of ``_kernel``).

    Per topic, the rule of :func:`centred_by_information`: True when
    :math:`v_t < r\,\hat\tau^2`, with :math:`v_t` the sampling variance of the topic's
    rough estimate and :math:`\hat\tau^2 = \mathrm{Var}(\hat e) - \bar v`; and False for
    a topic whose data bound its effect on one side only (``informed`` False: every outcome
    0, or every one 1, or no score inside (0, 1) for zoib), whatever its variance says.
    """
    v = np.asarray(variances, dtype=float)
    spread = float(np.var(estimates)) - float(np.mean(v))
    return np.asarray(informed, dtype=bool) & (v < CENTRED_RATIO * spread)


def jittered_starts(centre: np.ndarray, spread: float = 1.0):
    """Return starting points: ``centre`` plus U(-spread, spread) per coordinate (PyMC's rule)."""

    def initial_point(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return centre + rng.uniform(-spread, spread, centre.size)

    return initial_point


def crossed_start(data: np.ndarray, n_dim: int, n_scalars: int = 0) -> np.ndarray:
    """Centre of the starting points of a kernel's chains, from its data block's header.

    ``b0`` at its prior mean, the log scales of the crossed part (``sigma_topic``, and
    ``sigma_system`` when pooled) at the logs of their prior means ``1 / rate``, the
    levels of topics centred on the intercept at the prior mean of ``b0`` (their effects
    0), every other of the ``n_dim`` coordinates 0 (a kernel sets its own ``n_scalars``
    scalars, which precede the topics' coordinates, after).
    """
    from bayes_ir.hierarchical.families._kernel import n_crossed

    start = np.zeros(n_dim)
    start[0] = data[2]  # b0_mu
    scales = n_crossed(data) - 1
    start[1 : 1 + scales] = -np.log(data[4 : 4 + scales])
    if data[6] == 0.0:  # topic levels: the flags close the block
        n_t = int(data[0])
        first = n_crossed(data) + n_scalars
        start[first : first + n_t] = np.where(data[data.size - n_t :] != 0.0, data[2], 0.0)
    return start


def kernel_model(
    kernel: Any,
    data: np.ndarray,
    design: Any,
    names: list[str],
    shapes: list[tuple[int, ...]],
    *,
    n_dim: int,
    start: np.ndarray | None = None,
    initial_point: Any = None,
    dims: dict[str, tuple[str, ...]] | None = None,
):
    """Return nutpie's model object for a kernel module and its data block.

    Parameters
    ----------
    kernel
        Module with ``logp_cfunc`` and ``expand_cfunc`` (and ``DIMS``, the dims of each
        vector they write, unless ``dims`` is given).
    data
        The kernel's data block (kept alive by the model: the callbacks read it).
    design
        The :class:`~bayes_ir.hierarchical.model.Design` (topic and system labels).
    names, shapes
        What ``expand_cfunc`` writes, in order.
    n_dim
        Number of unconstrained coordinates.
    start
        Centre of the starting points (default :func:`crossed_start`), jittered per
        chain by :func:`jittered_starts`.
    initial_point
        The starting-point function itself (seed -> point), instead of ``start``.
    dims
        Dims of the vectors ``expand_cfunc`` writes (default ``kernel.DIMS``).
    """
    from nutpie.compile_pymc import CompiledPyMCModel

    if initial_point is None and start is None:
        start = crossed_start(data, n_dim)
    sizes = [int(np.prod(shape)) for shape in shapes]
    ends = np.cumsum(sizes)
    slices = [slice(int(e - n), int(e)) for e, n in zip(ends, sizes, strict=True)]
    return CompiledPyMCModel(
        _n_dim=int(n_dim),
        dims=dict(kernel.DIMS if dims is None else dims),
        _coords={"topic": list(design.topics), "system": list(design.systems)},
        _shapes=dict(zip(names, shapes, strict=True)),
        compiled_logp_func=kernel.logp_cfunc,
        compiled_expand_func=kernel.expand_cfunc,
        initial_point_func=initial_point or jittered_starts(np.asarray(start, dtype=float)),
        shared_data={},
        shared_var_keys={},
        user_data=data,
        n_expanded=int(ends[-1]),
        shape_info=(names, slices, shapes),
        logp_func=None,
        expand_func=None,
    )


def sample_kernel(
    model: Any,
    family: Any,
    design: Any,
    priors: Any,
    *,
    keep: list[str],
    chains: int,
    draws: int,
    tune: int,
    target_accept: float,
    seed: int,
    apart: tuple[Any, ...] = (),
) -> tuple[xr.Dataset, xr.Dataset | None, dict[str, Any]]:
    """Sample a kernel model with nutpie; returns posterior, sample statistics, info.

    The posterior (the variables ``keep``) is labelled by the design and passed through
    ``family.finish`` (derived variables such as the score-scale ``system_mean``, from
    the resolved ``priors`` and ``seed``).

    ``apart``: models of small blocks of parameters independent of ``model``'s a
    posteriori (the posterior factorises), each sampled by a run of its own, with its own
    warm-up, at seed ``seed + i`` (:func:`side_by_side` joins the draws). A block is
    cheap, so it runs at the target acceptance of a rerun after divergences
    (:data:`~bayes_ir.hierarchical.samplers.retry.RETRY_TARGET_ACCEPT`) or the caller's,
    whichever is higher: a divergence in it would otherwise redo the whole fit at that
    target.
    """
    from bayes_ir.hierarchical.samplers.retry import RETRY_TARGET_ACCEPT
    from bayes_ir.hierarchical.sampling import nutpie_sample

    label = f"sampling the {family.name} model (NUTS)"
    accepts = [target_accept] + [max(target_accept, RETRY_TARGET_ACCEPT)] * len(apart)
    traces = [
        nutpie_sample(
            block,
            label=label,
            draws=draws,
            tune=tune,
            chains=chains,
            seed=seed + i,
            target_accept=accept,
        )  # fmt: skip
        for i, (block, accept) in enumerate(zip((model, *apart), accepts, strict=True))
    ]
    return _draws(traces, keep, family, design, priors, seed)


def _draws(
    traces: list[xr.DataTree], keep: list[str], family: Any, design: Any, priors: Any, seed: int
) -> tuple[xr.Dataset, xr.Dataset | None, dict[str, Any]]:
    """Posterior (``keep``, labelled, with the family's derived variables) and statistics."""
    post, stats = side_by_side(traces)
    post = post[keep].assign_coords(topic=list(design.topics), system=list(design.systems))
    post = post.drop_vars([c for c in post.coords if c not in ("chain", "draw", *post.dims)])
    post.attrs = {}  # sampler timings would make equal-seed fits differ
    if stats is not None:
        stats.attrs = {}
    return family.finish(post, design, priors, seed), stats, {}


def side_by_side(traces: list[xr.DataTree]) -> tuple[xr.Dataset, xr.Dataset | None]:
    r"""Posterior and sample statistics of independent blocks' runs, put side by side.

    When the posterior factorises, :math:`p(\theta_1, \theta_2 \mid y) = p(\theta_1
    \mid y)\,p(\theta_2 \mid y)`, the pairs of the blocks' chains (chain ``i`` of each)
    are Markov chains on the joint posterior. The joint run's statistics: a transition
    diverged when any block's did; its energy and log density are the sums of the
    blocks' (the joint Hamiltonian's), so the E-BFMI is computed on the joint chain. Step
    sizes and tree depths are each block's own and are not kept for a joint run.
    """
    post = xr.merge([t["posterior"].to_dataset() for t in traces], join="exact")
    sets = [t["sample_stats"].to_dataset() for t in traces if "sample_stats" in t.children]
    if len(sets) < len(traces):
        return post, None
    if len(sets) == 1:
        return post, sets[0]
    summed = [n for n in ("energy", "logp") if all(n in one for one in sets)]
    stats = sets[0][["diverging", *summed]]
    for other in sets[1:]:
        joint = {name: stats[name] + other[name] for name in summed}
        stats = stats.assign({**joint, "diverging": stats["diverging"] | other["diverging"]})
    return post, stats


def sample_pymc(
    family: Any,
    design: Any,
    priors: Any,
    *,
    pooling: str,
    chains: int,
    draws: int,
    tune: int,
    target_accept: float,
    seed: int,
) -> tuple[xr.Dataset, xr.Dataset | None, dict[str, Any]]:
    """Sample the family's PyMC model with PyMC's own NUTS (``sampler="pymc"``).

    Slower than the kernel; for cross-checks. Returns what :func:`sample_kernel` returns.
    """
    import pymc as pm

    model = family.build_pymc_model(design, priors, pooling=pooling)
    keep = [v for v in family.posterior_names if v in model.named_vars]
    with model:
        trace = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed,
                          target_accept=target_accept, progressbar=False, nuts_sampler="pymc",
                          compute_convergence_checks=False)  # fmt: skip
    return _draws([trace], keep, family, design, priors, seed)
