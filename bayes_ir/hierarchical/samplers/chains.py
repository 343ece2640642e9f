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
    "stretch_seed",
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


def stretch_seed(seed: int, salt: int, chain: int, stretch: int) -> int:
    """Return the seed of one stretch of one chain (independent streams by SeedSequence)."""
    return int(np.random.SeedSequence([int(seed), salt, chain, stretch]).generate_state(1)[0])


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


def ess_per_draw(scalars: np.ndarray) -> float:
    """Smallest bulk or tail ESS per draw over the quantities of ``scalars`` (chain, draw, k).

    0 when no ESS is defined (e.g. every quantity constant).
    """
    from bayes_ir.hierarchical.diagnostics import draw_diagnostics

    table = draw_diagnostics(scalars)
    smallest = np.nanmin(table[["ess_bulk", "ess_tail"]].to_numpy(), initial=np.inf)
    n = scalars.shape[0] * scalars.shape[1]
    return float(smallest) / n if np.isfinite(smallest) else 0.0


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
    ess: float | None,
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
        Bulk and tail ESS to reach, or ``None`` for ``draws`` draws. With it the chains
        run :data:`PILOT_DRAWS` kept draws first and continue to :math:`\lceil E / (C
        e) \rceil` draws (at least the pilot's, at most ``draws``), :math:`e` the
        pilot's :func:`ess_per_draw`.
    check
        Called with the draws per chain before they are drawn (the pilot's, then the
        chosen ones); raises to refuse them (e.g. beyond the memory limit).

    Returns
    -------
    draws : int
        Kept draws per chain.
    per_draw : float or None
        The pilot's ESS per draw (``None`` without a pilot).
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
    need = math.ceil(float(ess) / (chains * per_draw)) if per_draw > 0 else draws
    total = int(min(max(need, PILOT_DRAWS), draws))
    if total > PILOT_DRAWS:
        check(total)
        grow(total)
        run(total - PILOT_DRAWS, 0, PILOT_DRAWS, "rest")
    return total, per_draw


def describe_draws(chains: int, draws: int, provenance: dict) -> str:
    """One line: chains x draws, and the ESS the default draws were chosen for.

    E.g. ``draws: 4 x 3,125 = 12,500 (chosen for ESS >= 10,000)`` (bulk and tail ESS;
    ``provenance["draws_for_ess"]``), with the pilot's ESS per draw when a pilot chose
    them (``provenance["pilot_ess_per_draw"]``, :func:`run_to_ess`); without the
    parenthesis when the draws were given.
    """
    line = f"draws: {chains} x {draws:,} = {chains * draws:,}"
    target = provenance.get("draws_for_ess")
    pilot = provenance.get("pilot_ess_per_draw")
    if target and pilot is not None:
        line += f" (chosen for ESS >= {target:,.0f} from a pilot's ESS per draw, {pilot:.2f})"
    elif target:
        line += f" (chosen for ESS >= {target:,.0f})"
    return line
