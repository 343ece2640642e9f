"""Progress of the long steps (sampling, sweeps), told to whoever listens; silent by default.

Methods open a :func:`task` around a long step and update it; nothing is shown unless
a caller installed a :class:`Reporter` with :func:`reporting` (the command line does:
a rich progress bar with an ETA on a terminal, plain periodic lines when stderr is
piped, nothing with ``--quiet``). The library itself never prints.

>>> from bayes_ir import progress
>>> with progress.task("resampling", total=3) as step:
...     for i in range(3):
...         step.advance()
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class Reporter(Protocol):
    """What shows the progress: one call when a step starts, updates, one when it ends."""

    def start(self, label: str, total: float | None) -> object:
        """Show a new step; return a handle passed to the other two methods."""

    def update(self, handle: object, completed: float, total: float | None = None) -> None:
        """Say that ``completed`` of ``total`` units of the step are done (thread-safe)."""

    def finish(self, handle: object) -> None:
        """Say that the step ended (done, failed or interrupted)."""


_REPORTER: contextvars.ContextVar[Reporter | None] = contextvars.ContextVar(
    "bayes_ir_progress", default=None
)


class Step:
    """One long step being reported: :meth:`advance` by units or :meth:`update` to a count.

    Safe to call from another thread (nutpie's progress callback runs on one): the
    reporter was looked up when the step started.
    """

    def __init__(self, reporter: Reporter | None, handle: object, total: float | None) -> None:
        self._reporter = reporter
        self._handle = handle
        self.total = total
        self.completed = 0.0

    def advance(self, units: float = 1.0) -> None:
        """Count ``units`` more done."""
        self.update(self.completed + units)

    def update(self, completed: float, total: float | None = None) -> None:
        """Set the count done (and, when it becomes known, the total)."""
        self.completed = float(completed)
        if total is not None:
            self.total = float(total)
        if self._reporter is not None:
            self._reporter.update(self._handle, self.completed, self.total)


@contextmanager
def task(label: str, total: float | None = None) -> Iterator[Step]:
    """Report a long step called ``label`` of ``total`` units (``None``: not known yet)."""
    reporter = _REPORTER.get()
    handle = reporter.start(label, total) if reporter is not None else None
    step = Step(reporter, handle, total)
    try:
        yield step
    finally:
        if reporter is not None:
            reporter.finish(handle)


@contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Show the progress of every :func:`task` opened inside the block with ``reporter``."""
    token = _REPORTER.set(reporter)
    try:
        yield
    finally:
        _REPORTER.reset(token)


__all__ = ["Reporter", "Step", "reporting", "task"]
