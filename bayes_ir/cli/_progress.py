"""Show the library's progress (:mod:`bayes_ir.progress`) on stderr: a bar, or plain lines.

On a terminal: a rich progress bar per running step, with the elapsed time and an
estimate of the time left, removed when the step ends. When stderr is piped or
redirected (a CI log): one plain line per step every :data:`EVERY` seconds, and one
when a step that lasted more than :data:`EVERY` seconds ends. ``--quiet``: nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

#: Seconds between two plain progress lines of one step.
EVERY = 10.0


def reporter_for(console: Console, *, quiet: bool):
    """Return the reporter for ``console`` (rich bar, plain lines) or ``None`` when quiet."""
    if quiet:
        return None
    return BarReporter(console) if console.is_terminal else LineReporter(console, every=EVERY)


class BarReporter:
    """A rich progress bar per step, with an ETA; the bars vanish when their step ends."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("elapsed,"),
            TimeRemainingColumn(),
            TextColumn("left"),
            console=console,
            transient=True,
        )
        self._lock = threading.Lock()
        self._running = 0

    def start(self, label: str, total: float | None) -> object:
        """Add a bar (starting the display with the first one)."""
        with self._lock:
            if not self._running:
                self._progress.start()
            self._running += 1
            return self._progress.add_task(label, total=total)

    def update(self, handle: object, completed: float, total: float | None = None) -> None:
        """Move the bar."""
        self._progress.update(handle, completed=completed, total=total)  # type: ignore[arg-type]

    def finish(self, handle: object) -> None:
        """Remove the bar (stopping the display with the last one)."""
        with self._lock:
            self._progress.remove_task(handle)  # type: ignore[arg-type]
            self._running -= 1
            if not self._running:
                self._progress.stop()


@dataclass
class _Line:
    label: str
    total: float | None
    started: float = field(default_factory=time.monotonic)
    said: float = field(default_factory=time.monotonic)
    completed: float = 0.0


class LineReporter:
    """Plain lines for logs: ``label: 40% (1,600 of 4,000), 12 s so far, about 18 s left``."""

    def __init__(self, console: Console, *, every: float) -> None:
        self._console = console
        self._every = every
        self._lock = threading.Lock()

    def start(self, label: str, total: float | None) -> object:
        """Remember the step; nothing is said before :data:`EVERY` seconds."""
        return _Line(label, total)

    def update(self, handle: object, completed: float, total: float | None = None) -> None:
        """Say how far the step is, at most once every :data:`EVERY` seconds."""
        line: _Line = handle  # type: ignore[assignment]
        with self._lock:
            line.completed, line.total = completed, total if total is not None else line.total
            now = time.monotonic()
            if now - line.said >= self._every:
                line.said = now
                self._say(f"{line.label}: {self._status(line, now)}")

    def finish(self, handle: object) -> None:
        """Say that a step that was reported on ended, and how long it took."""
        line: _Line = handle  # type: ignore[assignment]
        took = time.monotonic() - line.started
        if took >= self._every:
            with self._lock:
                self._say(f"{line.label}: ended after {took:.0f} s")

    @staticmethod
    def _status(line: _Line, now: float) -> str:
        elapsed = now - line.started
        if not line.total:
            return f"{line.completed:,.0f} done, {elapsed:.0f} s so far"
        share = min(line.completed / line.total, 1.0)
        text = f"{share:.0%} ({line.completed:,.0f} of {line.total:,.0f}), {elapsed:.0f} s so far"
        if share > 0:
            text += f", about {elapsed * (1 - share) / share:.0f} s left"
        return text

    def _say(self, text: str) -> None:
        self._console.print(text, highlight=False, markup=False, soft_wrap=True)
