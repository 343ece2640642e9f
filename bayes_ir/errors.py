"""Exceptions and warnings raised by bayes_ir.

The hierarchy mirrors statsmodels' ``tools/sm_exceptions.py``: one base class per
kind, so that callers can catch everything the package raises with
:class:`BayesIRError` and still get a ``ValueError`` where Python expects one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class BayesIRError(Exception):
    """Base class of every error raised by bayes_ir."""


class ScoreTableError(BayesIRError, ValueError):
    """Invalid input scores: the message names the file, line, system or topic.

    Parameters
    ----------
    message
        What is wrong, in one sentence.
    source
        The file (or ``"<DataFrame>"``) the scores came from, if known.
    line
        The 1-based line number in ``source``, if known.
    """

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.source = source
        self.line = line
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(where + message)

    def located(self, source: str, *, line: int | None = None) -> ScoreTableError:
        """Name ``source`` (and ``line``) in the message if no file is named yet; return self."""
        if self.source is None:
            self.source, self.line = source, line
            where = f"{source}:{line}: " if line is not None else f"{source}: "
            self.args = (f"{where}{self.args[0]}", *self.args[1:])
        return self


class UnknownSystemError(ScoreTableError, KeyError):
    """A system name (champion, challenger, artifact) that is not in the data.

    ``message`` replaces the default sentence (a pattern that matched nothing says so,
    :func:`bayes_ir.roles.match_systems`).
    """

    def __init__(
        self, name: str, known: Iterable[str], *, role: str = "system", message: str | None = None
    ):
        known = list(known)
        if message is None:  # a name: say which names are close to it
            close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
            hint = f" Close matches: {', '.join(close)}." if close else ""
            if not close and len(known) <= 12:
                hint = f" Known systems: {', '.join(known)}."
            message = f"{role} {name!r} is not in the data.{hint}"
        super().__init__(message)

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return self.args[0]


class RoleError(ScoreTableError):
    """Inconsistent roles: overlap between champion, challengers and artifacts, or an empty role."""


class OptionError(BayesIRError, ValueError):
    """An argument or option value outside what the method accepts (the message says which)."""


class InsufficientDataError(BayesIRError, ValueError):
    """Too few topics or systems for the requested method."""


class MeasureError(BayesIRError, ValueError):
    """A measure or risk/reliability spec string that cannot be parsed."""


class DatasetError(BayesIRError, RuntimeError):
    """A public dataset that cannot be downloaded, verified or found locally."""


class BayesIRWarning(UserWarning):
    """Base class of every warning emitted by bayes_ir."""


class ConvergenceWarning(BayesIRWarning):
    """A posterior (or an iterative fit) that failed its diagnostics."""


class ConvergenceError(BayesIRError, RuntimeError):
    """Raised instead of :class:`ConvergenceWarning` in strict mode."""


class DataWarning(BayesIRWarning):
    """Input that was accepted but altered or partly excluded (the message says how)."""


class IgnoredOptionWarning(BayesIRWarning):
    """An option that the chosen method does not use (the message names it and says why)."""


class ModelCheckWarning(BayesIRWarning):
    """A system the fitted model does not describe (its posterior predictive check failed)."""
