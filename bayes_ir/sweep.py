"""One helper for every sweep: artifact counts, risk levels, collections, trials.

Sweeps map a function over independent work items. By default the items run in
local processes; pass any :class:`concurrent.futures.Executor` (or a Dask
``distributed.Client``, whose ``get_executor()`` gives one) to run them elsewhere
without changing the calling code.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any, Protocol


class _HasExecutor(Protocol):
    def get_executor(self, **kwargs: Any) -> Executor: ...


def sweep[T, R](
    func: Callable[[T], R],
    items: Iterable[T],
    *,
    executor: Executor | _HasExecutor | None = None,
    max_workers: int | None = None,
) -> list[R]:
    """Apply ``func`` to every item, in parallel, and return the results in item order.

    Parameters
    ----------
    func
        A picklable callable (a module-level function or a ``functools.partial`` of one).
    items
        The work items.
    executor
        Any ``concurrent.futures.Executor``, or an object with ``get_executor()``
        (a Dask ``distributed.Client``). ``None`` uses a local process pool of
        ``max_workers`` processes (default: the number of CPUs); with one item, or
        ``max_workers=1``, the work runs in this process.
    max_workers
        Size of the default local pool.

    Returns
    -------
    list
        ``[func(item) for item in items]``, computed by the executor.

    Notes
    -----
    The default pool's workers ignore SIGINT; when the caller is interrupted (Ctrl-C,
    SIGTERM turned into an exception by the CLI) or an item fails, the pending items
    are cancelled and the workers terminated, so no process outlives the sweep.
    """
    items = list(items)
    if executor is not None and hasattr(executor, "get_executor"):
        executor = executor.get_executor()
    if executor is not None:
        return list(executor.map(func, items))
    workers = min(max_workers or os.cpu_count() or 1, len(items))
    if workers <= 1:
        return [func(item) for item in items]
    # forkserver: forking a process that already runs PyMC/BLAS threads can deadlock.
    context = multiprocessing.get_context("forkserver")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_init)
    try:
        return list(pool.map(func, items))
    except BaseException:  # Ctrl-C, SIGTERM, a failed item: stop the workers, don't wait
        _stop_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _worker_init() -> None:
    """Let the parent handle Ctrl-C and speak: a worker ignores SIGINT and stays quiet.

    A worker ignores SIGINT (the parent stops it) and the package's own warnings: it has
    no terminal of its own, and every result a sweep returns carries its diagnostics
    and model check, which the caller reports once.
    """
    import warnings

    from bayes_ir.errors import BayesIRWarning

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.simplefilter("ignore", BayesIRWarning)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel the pending items and terminate the running workers of ``pool``."""
    processes = list((pool._processes or {}).values())  # no public handle before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=10)
