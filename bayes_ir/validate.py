"""Argument checks at the public boundary, shared by the API and the CLI.

Every public function checks its options with these small checkers before doing any
work, so that a bad value fails at once with one :class:`~bayes_ir.errors.OptionError`
naming the argument and the value, whatever the entry point. The rules are the same
everywhere:

- integers are :class:`numbers.Integral` (Python or NumPy integers), never ``bool``,
  never a float (``seed=1.7``, ``draws=1e9`` are refused, not truncated);
- real numbers are :class:`numbers.Real` (not ``bool``, not complex, not strings) and
  finite: NaN and infinity are refused;
- the message names the argument (the CLI passes the option, e.g. ``"--chains"``).

:func:`memory` refuses, before allocating, a request whose arrays would exceed
:func:`bayes_ir.defaults.memory_limit`.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from bayes_ir import defaults
from bayes_ir.errors import InsufficientDataError, OptionError

__all__ = [
    "choice",
    "ci_prob",
    "measure_margin",
    "finite_float",
    "flag",
    "instance",
    "integer",
    "memory",
    "positive_int",
    "probability",
    "resamples",
    "seed",
]


def _kind(value: Any) -> str:
    return type(value).__name__


def integer(
    name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """Return ``value`` as a Python ``int`` after checking its type and range.

    Parameters
    ----------
    name
        The argument's name, used in the message.
    value
        A Python or NumPy integer; ``bool``, floats, strings and complex numbers are refused.
    minimum, maximum
        Inclusive bounds; ``None`` leaves that side open.

    Returns
    -------
    int

    Raises
    ------
    OptionError
        When ``value`` is not an integer or lies outside ``[minimum, maximum]``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise OptionError(f"{name} must be an integer, got {value!r} ({_kind(value)})")
    number = int(value)
    if minimum is not None and number < minimum:
        raise OptionError(f"{name} must be at least {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise OptionError(f"{name} must be at most {maximum:,}, got {number:,}")
    return number


def positive_int(name: str, value: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` of at least ``minimum`` (1 by default).

    See :func:`integer` for the accepted types.
    """
    return integer(name, value, minimum=minimum, maximum=maximum)


def resamples(name: str, value: Any, *, minimum: int) -> int:
    """Return a number of bootstrap or randomisation resamples, at least ``minimum``.

    At most :data:`bayes_ir.defaults.MAX_RESAMPLES` (more only takes hours: the Monte
    Carlo error of a p-value is already below 0.001 there).
    """
    return integer(name, value, minimum=minimum, maximum=defaults.MAX_RESAMPLES)


def measure_margin(name: str, value: Any, measure: str | None, *, what: str = "margin") -> float:
    """Return ``value``, a margin, gain or threshold in the measure's units, checked.

    Parameters
    ----------
    name
        The option as the caller spells it (``"margin"``, ``"--min-gain"``).
    value
        A finite real number.
    measure
        The measure the value is in (``None`` or an unbounded measure: no range check).
    what
        What the value is, for the message.

    Raises
    ------
    OptionError
        ``value`` is not finite, or at least as wide as the measure's whole range
        (e.g. 1 for ``nDCG@10``, whose scores lie in [0, 1]): no difference of two
        systems can reach it, and a non-inferiority gate with it would pass a system
        that scores 0 everywhere.
    """
    number = _real(name, value)
    if measure is None:
        return number
    from bayes_ir.measures import measure_range  # ir_measures: not at import

    low, high = measure_range(measure)
    width = high - low
    if math.isfinite(width) and abs(number) >= width:
        raise OptionError(
            f"{name} {number:g} is as wide as the whole range [{low:g}, {high:g}] of measure "
            f"{measure!r}: a {what} must be smaller than {width:g} (in the measure's units, "
            "e.g. 0.01)"
        )
    return number


def seed(value: Any, *, name: str = "seed") -> int:
    """Return a random seed: ``value`` checked, or :data:`bayes_ir.defaults.SEED` for ``None``.

    A seed is a non-negative integer (what :func:`numpy.random.default_rng` accepts as
    entropy); ``True``, ``1.7``, ``-3`` and ``1+2j`` are refused rather than coerced.
    """
    if value is None:
        return defaults.SEED
    return integer(name, value, minimum=0)


def instance(name: str, value: Any, kind: type | tuple[type, ...]) -> Any:
    """Return ``value`` when it is an instance of ``kind`` (e.g. a ScoreTable), else raise."""
    if not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wanted = " or ".join(k.__name__ for k in kinds)
        raise OptionError(f"{name} must be a {wanted}, got {_kind(value)}")
    return value


def flag(name: str, value: Any) -> bool:
    """Return ``value`` when it is a boolean (Python or NumPy).

    A string such as ``"false"`` is refused rather than read as true.
    """
    if not isinstance(value, bool | np.bool_):
        raise OptionError(f"{name} must be True or False, got {value!r} ({_kind(value)})")
    return bool(value)


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise OptionError(f"{name} must be a real number, got {value!r} ({_kind(value)})")
    number = float(value)
    if not math.isfinite(number):
        raise OptionError(f"{name} must be a finite number, got {number}")
    return number


def finite_float(
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    open_minimum: bool = False,
    open_maximum: bool = False,
) -> float:
    """Return ``value`` as a finite ``float`` within the given bounds.

    Parameters
    ----------
    name
        The argument's name, used in the message.
    value
        A real number (Python or NumPy); NaN, infinities, complex numbers and strings
        are refused.
    minimum, maximum
        Bounds; ``None`` leaves that side open.
    open_minimum, open_maximum
        Exclude the bound itself (``value > minimum`` rather than ``>=``).

    Returns
    -------
    float
    """
    number = _real(name, value)
    if minimum is not None and (number < minimum or (open_minimum and number == minimum)):
        relation = "greater than" if open_minimum else "at least"
        raise OptionError(f"{name} must be {relation} {minimum:g}, got {number:g}")
    if maximum is not None and (number > maximum or (open_maximum and number == maximum)):
        relation = "less than" if open_maximum else "at most"
        raise OptionError(f"{name} must be {relation} {maximum:g}, got {number:g}")
    return number


def probability(name: str, value: Any, *, open: bool = True) -> float:
    """Return ``value`` as a probability: in (0, 1) when ``open``, else in [0, 1]."""
    number = _real(name, value)
    inside = 0.0 < number < 1.0 if open else 0.0 <= number <= 1.0
    if not inside:
        bounds = "strictly between 0 and 1" if open else "between 0 and 1"
        raise OptionError(f"{name} must lie {bounds}, got {number:g}")
    return number


def ci_prob(value: Any, *, name: str = "ci_prob") -> float:
    """Return an interval probability: ``value`` checked, or :data:`bayes_ir.defaults.CI_PROB`."""
    return defaults.CI_PROB if value is None else probability(name, value)


def choice(name: str, value: Any, options: Iterable[str]) -> str:
    """Return ``value`` when it is one of ``options``, else raise naming the close matches."""
    options = list(options)
    if isinstance(value, str) and value in options:
        return value
    close = difflib.get_close_matches(str(value), options, n=3, cutoff=0.6)
    hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    listed = ", ".join(repr(o) for o in options)
    raise OptionError(f"{name} must be one of {listed}, got {value!r}{hint}")


def require_topics(n: int, minimum: int, *, method: str, where: str, paired: bool = False) -> None:
    """Raise :class:`~bayes_ir.errors.InsufficientDataError` when ``n`` topics are too few.

    The one home of every topic-count check (the minimums are in
    :mod:`bayes_ir.defaults`, ``MIN_TOPICS_*``); :meth:`bayes_ir.table.ScoreTable.require_topics`
    applies it to every block of a table.

    Parameters
    ----------
    n
        Number of topics the method would use.
    minimum
        Fewest topics the method accepts.
    method
        The method, as the message names it (``"URisk"``, ``"the GLM comparison"``).
    where
        What has ``n`` topics: a file, a collection and measure, a pair of systems.
    paired
        Count paired topics (scored for both systems), and say so.

    Raises
    ------
    InsufficientDataError
        ``n < minimum``: "URisk needs at least 3 topics; scores.csv has 2".
    """
    if n < minimum:
        kind = "paired topics" if paired else "topics"
        raise InsufficientDataError(f"{method} needs at least {minimum} {kind}; {where} has {n}")


def _bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n / 1e3:.1f} kB"


def memory(what: str, shape: dict[str, int], *, itemsize: int = 8) -> int:
    """Refuse, before allocating, arrays larger than :func:`bayes_ir.defaults.memory_limit`.

    Parameters
    ----------
    what
        What would be stored (``"the posterior draws"``), used in the message.
    shape
        Named factors of the array size, e.g. ``{"chains": 4, "draws": 1000, "parameters": 58}``;
        their product times ``itemsize`` is the estimate.
    itemsize
        Bytes per value (8 for float64).

    Returns
    -------
    int
        The estimated number of bytes.

    Raises
    ------
    OptionError
        When the estimate exceeds the limit; the message gives both and the factors.
    """
    need = itemsize * math.prod(int(v) for v in shape.values())
    limit = defaults.memory_limit()
    if need > limit:
        factors = " x ".join(f"{v:,} {k}" for k, v in shape.items())
        raise OptionError(
            f"{what} would need about {_bytes(need)} ({factors} x {itemsize} bytes), "
            f"above the limit of {_bytes(limit)}: lower draws or chains "
            "(or raise bayes_ir.defaults.MEMORY_LIMIT or BAYES_IR_MEMORY_LIMIT)"
        )
    return need
