"""Chains run in parallel threads, in stretches: progress between stretches, interrupts honoured.

The compiled Gibbs loops (:mod:`bayes_ir.hierarchical.gibbs_kernel`,
:mod:`bayes_ir.hierarchical.samplers.blocked_gibbs_kernel`) release the GIL, so the
chains of a fit run in threads. Each chain runs as a sequence of calls of
:data:`BLOCK` iterations (the warm-up first), each with its own seed: the progress
report advances and an interrupt (Ctrl-C in the caller's thread, or an error in
another chain) stops every chain at its next stretch. While chains run in parallel the
BLAS behind their Cholesky factors runs one thread each (``threadpoolctl``): its own
threads would contend with the other chains for the same cores (2.1 times slower per
iteration on 2,000 x 500 with 2 chains on 2 cores).

Both Gibbs samplers choose their draws from the ESS asked (:func:`run_to_ess`): a pilot
of :data:`PILOT_DRAWS` kept draws measures the ESS per draw of the slowest scalar, and the
chains continue to the draws that ESS per draw needs.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import threadpool_limits

from bayes_ir.errors import BayesIRError
from bayes_ir.progress import task

__all__ = [
    "BLOCK",
    "MIN_ESS_PER_DRAW",
    "PILOT_DRAWS",
    "describe_draws",
    "ess_per_draw",
    "grow_draws",
    "most_draws",
    "run_stretches",
    "run_to_ess",
    "stretch_rng",
]

#: Iterations per call of a compiled loop: progress is reported, and an interrupt
#: honoured, between calls (each call has its own seed).
BLOCK: int = 500
#: Kept draws per chain of the pilot that sets the draws for a target ESS (:func:`run_to_ess`).
PILOT_DRAWS: int = 500
#: Smallest ESS per draw the most draws of a Gibbs sampler allow for (:func:`most_draws`):
#: the pilots measure 0.38-0.43 on rb04 with 10% of the cells missing, 0.9 on 2,000 x 500
#: with 10% missing and about 0.6 across 13 collections.
MIN_ESS_PER_DRAW: float = 0.1


def stretch_rng(seed: int, salt: int, chain: int, stretch: int) -> np.random.Generator:
    """Return the random generator of one stretch of one chain.

    Independent streams by ``SeedSequence([seed, salt, chain, stretch])``. The compiled
    loops draw from it through numba's support of :class:`numpy.random.Generator`
    (PCG64, numpy's ziggurat normals): 12 ns a normal where numba's global
    ``np.random`` functions, whose state is thread-local, take 62 ns.
    """
    return np.random.default_rng(np.random.SeedSequence([int(seed), salt, chain, stretch]))


def run_stretches(
    stretch: Callable[[int, int, int, int, int], None],
    *,
    chains: int,
    tune: int,
    draws: int,
    label: str,
) -> None:
    """Run ``chains`` chains of ``tune`` + ``draws`` iterations in stretches, in threads.

    Parameters
    ----------
    stretch
        ``stretch(chain, k, i0, i1, n_tune)`` runs the ``k``-th stretch of ``chain``:
        ``n_tune`` discarded iterations, then the kept draws ``i0:i1``.
    chains, tune, draws
        Chains, discarded and kept iterations per chain.
    label
        What the progress report calls the work (counted in iterations, all chains).

    Raises
    ------
    BayesIRError
        A chain met a numerically singular precision matrix (numba's failed Cholesky).
    """
    blocks = [(0, 0)] + [(i, min(i + BLOCK, draws)) for i in range(0, draws, BLOCK)]
    stop = threading.Event()
    lock = threading.Lock()

    def chain(c: int, step) -> None:
        for k, (i0, i1) in enumerate(blocks):
            if stop.is_set():
                return
            n_tune = int(tune) if k == 0 else 0
            stretch(c, k, i0, i1, n_tune)
            with lock:
                step.advance(n_tune + i1 - i0)

    workers = min(chains, os.cpu_count() or 1)
    with task(label, total=chains * (tune + draws)) as step:
        try:
            with (
                threadpool_limits(limits=1 if workers > 1 else None, user_api="blas"),
                ThreadPoolExecutor(max_workers=workers) as pool,
            ):
                futures = [pool.submit(chain, c, step) for c in range(chains)]
                try:
                    for future in futures:
                        future.result()
                except BaseException:
                    stop.set()  # the other chains end at their next stretch
                    raise
        except (ValueError, np.linalg.LinAlgError) as exc:  # numba's failed Cholesky
            raise BayesIRError(
                f"the Gibbs sampler met a numerically singular precision matrix ({exc}); "
                "use method='nuts'"
            ) from None


def most_draws(ess: float, chains: int) -> int:
    r"""Most draws per chain for the ESS ``ess``: :math:`\lceil E / (C e_{min}) \rceil`.

    :math:`e_{min}` is :data:`MIN_ESS_PER_DRAW` (4 x 31,250 draws for 12,500).
    """
    return math.ceil(float(ess) / (int(chains) * MIN_ESS_PER_DRAW))


def ess_per_draw(scalars: np.ndarray) -> np.ndarray:
    """Bulk or tail ESS per draw, the smaller, of every quantity of ``scalars`` (chain, draw, k).

    NaN where no ESS is defined (e.g. a constant quantity).
    """
    from bayes_ir.hierarchical.diagnostics import draw_diagnostics

    table = draw_diagnostics(scalars)
    smallest = table[["ess_bulk", "ess_tail"]].to_numpy().min(axis=1)
    return smallest / (scalars.shape[0] * scalars.shape[1])


def grow_draws(
    out: dict[str, np.ndarray], widths: dict[str, tuple[int, ...]], chains: int, total: int
) -> None:
    """Make room in ``out`` for ``total`` draws per chain, keeping those drawn.

    ``out[name]`` becomes (chains, total, *widths[name]).
    """
    for name, width in widths.items():
        grown = np.empty((chains, total, *width))
        if name in out:
            grown[:, : out[name].shape[1]] = out[name]
        out[name] = grown


def run_to_ess(
    run: Callable[[int, int, int, str], None],
    grow: Callable[[int], None],
    scalars: Callable[[], np.ndarray],
    *,
    chains: int,
    draws: int,
    tune: int,
    ess: float | np.ndarray | None,
    check: Callable[[int], None] | None = None,
) -> tuple[int, float | None]:
    r"""Run the chains to ``draws`` kept draws each, or to the ESS ``ess`` after a pilot.

    Parameters
    ----------
    run
        ``run(n_draws, n_tune, kept, phase)`` runs every chain on by ``n_tune`` discarded
        and ``n_draws`` kept iterations, stored from draw ``kept``; ``phase`` is
        ``"all"`` (no pilot), ``"pilot"`` or ``"rest"`` (the continuation; its streams
        must differ from the pilot's).
    grow
        ``grow(total)`` makes room for ``total`` draws per chain, keeping those drawn.
    scalars
        The pilot's draws of the quantities whose ESS sets the draws, (chain, draw, k).
    chains, draws, tune
        Chains; kept draws per chain (with ``ess``, the most); discarded iterations.
    ess
        Bulk and tail ESS to reach (one for every quantity, or one per quantity), or
        ``None`` for ``draws`` draws. With it the chains run :data:`PILOT_DRAWS` kept
        draws first and continue to :math:`\lceil \max_k E_k / (C e_k) \rceil` draws (at
        least the pilot's, at most ``draws``), :math:`e_k` the pilot's
        :func:`ess_per_draw` of quantity :math:`k` (quantities without an ESS are
        skipped; with none, ``draws``).
    check
        Called with the draws per chain before they are drawn (the pilot's, then the
        chosen ones); raises to refuse them (e.g. beyond the memory limit).

    Returns
    -------
    draws : int
        Kept draws per chain.
    per_draw : float or None
        The pilot's ESS per draw of the quantity that set the draws (``None`` without a
        pilot; 0 when no quantity has an ESS).
    """
    check = check if check is not None else (lambda n: None)
    if ess is None or draws <= PILOT_DRAWS:
        check(draws)
        grow(draws)
        run(draws, tune, 0, "all")
        return draws, None
    check(PILOT_DRAWS)
    grow(PILOT_DRAWS)
    run(PILOT_DRAWS, tune, 0, "pilot")
    per_draw = ess_per_draw(scalars())
    target = np.broadcast_to(np.asarray(ess, dtype=float), per_draw.shape)
    ok = np.isfinite(per_draw) & (per_draw > 0)
    if ok.any():
        need_per = np.where(ok, target / np.where(ok, per_draw, 1.0), -np.inf)
        k = int(np.argmax(need_per))
        need, binding = math.ceil(need_per[k] / chains), float(per_draw[k])
    else:
        need, binding = draws, 0.0
    total = int(min(max(need, PILOT_DRAWS), draws))
    if total > PILOT_DRAWS:
        check(total)
        grow(total)
        run(total - PILOT_DRAWS, 0, PILOT_DRAWS, "rest")
    return total, binding


def describe_draws(chains: int, draws: int, provenance: dict) -> str:
    """One line: chains x draws, and the ESS the default draws were chosen for.

    E.g. ``draws: 4 x 3,125 = 12,500 (chosen for ESS >= 10,000)`` (bulk and tail ESS;
    ``provenance["draws_for_ess"]``), with the pilot's ESS per draw when a pilot chose
    them (``provenance["pilot_ess_per_draw"]``, :func:`run_to_ess`), and the lower ESS
    asked of the quantities no result reads beyond the diagnostics gate
    (``provenance["draws_for_ess_rest"]``); without the parenthesis when the draws were
    given.
    """
    line = f"draws: {chains} x {draws:,} = {chains * draws:,}"
    target = provenance.get("draws_for_ess")
    rest = provenance.get("draws_for_ess_rest")
    pilot = provenance.get("pilot_ess_per_draw")
    split = bool(target and rest and rest < target)
    if split:
        aim = f"ESS >= {target:,.0f} of the effects and of the scales of new groups, "
        aim += f"{rest:,.0f} of the rest"
    else:
        aim = f"ESS >= {target:,.0f}" if target else ""
    if target and pilot is not None:
        sep = "," if split else ""
        line += f" (chosen for {aim}{sep} from a pilot's ESS per draw, {pilot:.2f})"
    elif target:
        line += f" (chosen for {aim})"
    return line
