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
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, Protocol

from bayes_ir import progress
from bayes_ir.errors import BayesIRError


class SweepError(BayesIRError):
    """A sweep could not run its work items (workers died, or a script lacks its guard)."""


class _HasExecutor(Protocol):
    def get_executor(self, **kwargs: Any) -> Executor: ...


def sweep[T, R](
    func: Callable[[T], R],
    items: Iterable[T],
    *,
    executor: Executor | _HasExecutor | None = None,
    max_workers: int | None = None,
    label: str = "sweep",
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
    label
        Name of the step in the progress display (:mod:`bayes_ir.progress`).

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
    with progress.task(label, total=len(items)) as step:
        if executor is not None:
            return _run(executor, func, items, step)
        workers = min(max_workers or os.cpu_count() or 1, len(items))
        if workers <= 1:
            results = []
            for item in items:
                results.append(func(item))
                step.advance()
            return results
        _refuse_while_bootstrapping()
        # forkserver: forking a process that already runs PyMC/BLAS threads can deadlock.
        context = multiprocessing.get_context("forkserver")
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                   initializer=_worker_init)  # fmt: skip
        try:
            with _workers_without_script(func):
                return _run(pool, func, items, step)
        except BrokenProcessPool:
            raise SweepError(
                "the sweep's worker processes died before finishing: a script that sweeps "
                "a function of its own needs its code under 'if __name__ == \"__main__\":'; "
                "otherwise (out of memory, killed) run it with fewer workers (max_workers=) "
                "or pass executor= (e.g. a Dask cluster)"
            ) from None
        except BaseException:  # Ctrl-C, SIGTERM, a failed item: stop the workers, don't wait
            _stop_workers(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _run(executor: Executor, func: Callable, items: list, step: progress.Step) -> list:
    """Submit every item, count each one done, and return the results in item order."""
    futures = [executor.submit(func, item) for item in items]
    try:
        for future in as_completed(futures):
            future.result()  # a failed item stops the sweep now, not after the others
            step.advance()
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    return [future.result() for future in futures]


def _refuse_while_bootstrapping() -> None:
    """Refuse, in one line, a sweep started while a worker process imports the main script.

    A script without ``if __name__ == "__main__":`` that sweeps a function of its own
    runs again in every worker of the default process pool (Python's rule for the
    forkserver start method) and would start a pool there. (The package's own sweeps
    start their workers without the script: :func:`_workers_without_script`.)
    """
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise SweepError(
            "a sweep was started while a worker process was importing your script: put "
            "the script's code under 'if __name__ == \"__main__\":' (the default process "
            "pool runs the script again in every worker), or pass max_workers=1"
        )


@contextmanager
def _workers_without_script(func: Callable) -> Iterator[None]:
    """Start the workers without running the main script, unless ``func`` comes from it.

    A worker of the forkserver pool first runs the parent's main script (so that its
    functions can be unpickled); an unguarded script would then run its sweep again in
    every worker. Functions of importable modules (the package's own sweeps, numpy's)
    do not need the script, so it is hidden from the workers (``__main__.__file__``)
    while they start.
    """
    main = sys.modules.get("__main__")
    target = getattr(func, "func", func)  # a functools.partial's function
    hide = (
        main is not None
        and getattr(main, "__spec__", None) is None
        and "__file__" in vars(main)
        and getattr(target, "__module__", "__main__") != "__main__"
    )
    path = vars(main).pop("__file__") if hide else None
    try:
        yield
    finally:
        if path is not None and main is not None:
            main.__file__ = path


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
