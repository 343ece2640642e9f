r"""Roles of the systems: one champion, the challengers, and the artifact runs.

The champion is the system in production (or the baseline of an academic
comparison); challengers are the candidates; artifacts are other known runs
(for example past TREC submissions) that only inform the population of systems.

System selectors accept an exact name, a glob pattern (``"chal*"``), a regular
expression with the prefix ``re:`` (``"re:^input\.uog"``), or the path of a text
file holding one selector per line (``#`` starts a comment; prefix the path with ``@``
to make sure it is read as a file).

An exact name always wins: a selector equal to the name of a system picks that system
and nothing else, even when the name contains glob or regex characters (a system named
``a[1]``, ``chal_*`` or ``re:x`` is matched literally, not as a pattern), and even when
a file of that name exists.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bayes_ir import validate
from bayes_ir.errors import RoleError, UnknownSystemError
from bayes_ir.files import read_input_text

ROLE_NAMES = ("champion", "challenger", "artifact")


@dataclass(frozen=True)
class Roles:
    """Champion, challengers and artifacts, disjoint, in a fixed order."""

    champion: str
    challengers: tuple[str, ...]
    artifacts: tuple[str, ...]

    @property
    def ordered(self) -> tuple[str, ...]:
        """All systems: champion first, then challengers, then artifacts."""
        return (self.champion, *self.challengers, *self.artifacts)

    def role_of(self, system: str) -> str:
        """Return ``"champion"``, ``"challenger"`` or ``"artifact"``."""
        if system == self.champion:
            return "champion"
        if system in self.challengers:
            return "challenger"
        if system in self.artifacts:
            return "artifact"
        raise UnknownSystemError(system, self.ordered)

    def restrict(self, systems: Iterable[str]) -> Roles | None:
        """Roles of the systems that remain, or ``None`` if the champion is gone."""
        keep = set(systems)
        if self.champion not in keep:
            return None
        return Roles(
            self.champion,
            tuple(s for s in self.challengers if s in keep),
            tuple(s for s in self.artifacts if s in keep),
        )

    def describe(self) -> str:
        """One line: the champion, the challengers and how many artifacts."""
        chal = ", ".join(self.challengers) if self.challengers else "none"
        n_art = len(self.artifacts)
        return f"champion {self.champion!r}; challengers: {chal}; {n_art} artifact run(s)"

    def to_frame(self) -> pd.DataFrame:
        """One row per system with its role."""
        return pd.DataFrame(
            {"system": self.ordered, "role": [self.role_of(s) for s in self.ordered]}
        )


def _as_list(selectors: str | Iterable[str] | None) -> list[str]:
    if selectors is None:
        return []
    if isinstance(selectors, str):
        return [selectors]
    return list(selectors)


@dataclass(frozen=True)
class _Selector:
    """One selector, and the file and line it was read from (``None``: typed)."""

    text: str
    source: Path | None = None
    line: int | None = None


def selector_files(selectors: str | Iterable[str] | None, known: Sequence[str] = ()) -> list[Path]:
    """Return the files ``selectors`` name (``@file``, or an existing file not a system name).

    The CLI declares them as inputs before any work, so that no output is written over
    a list of challengers.
    """
    out = []
    for sel in _as_list(selectors):
        if sel.startswith("@"):
            out.append(Path(sel[1:]))
        elif not (sel.startswith("re:") or _is_glob(sel) or sel in known) and Path(sel).is_file():
            out.append(Path(sel))
    return out


def _expand_files(selectors: list[str], known: Sequence[str] = ()) -> list[_Selector]:
    """Replace each selector file by the selectors in it (``#`` comments, blank lines skipped).

    Files are read with :func:`bayes_ir.files.read_input_text` (a FIFO or device refused
    unread, a byte-order mark dropped, a size limit); errors name the file.
    """
    out: list[_Selector] = []
    for sel in selectors:
        if sel.startswith("@"):  # explicit file selector
            path = Path(sel[1:])
        elif sel.startswith("re:") or _is_glob(sel) or sel in known:
            out.append(_Selector(sel))
            continue
        else:
            path = Path(sel)
            if not path.is_file():
                out.append(_Selector(sel))
                continue
        path, text = read_input_text(path, what="selector file")
        picked = [
            _Selector(x.strip(), path, number)
            for number, x in enumerate(text.splitlines(), 1)
            if x.strip() and not x.lstrip().startswith("#")
        ]
        if not picked:
            raise RoleError(f"the selector file {path} names no system")
        out.extend(picked)
    return out


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _is_glob(selector: str) -> bool:
    return any(c in selector for c in "*?[")


def match_systems(
    selectors: str | Iterable[str] | None, known: Sequence[str], *, role: str = "system"
) -> list[str]:
    """Resolve selectors (names, globs, ``re:`` regexes, files) to known system names.

    A selector equal to a known name picks that system only (an exact name wins over
    its glob or regex reading). Every selector must match at least one system; otherwise
    :class:`UnknownSystemError` names it and lists close matches. The result keeps the
    order of ``known``.
    """
    chosen: set[str] = set()
    known = list(known)
    composed = {_nfc(k): k for k in known}  # names typed composed, written decomposed (macOS)
    for item in _expand_files(_as_list(selectors), known):
        sel = item.text
        if sel not in known and _nfc(sel) in composed:
            sel = composed[_nfc(sel)]
        if sel in known:  # an exact name wins over any pattern reading of it
            hits = {sel}
        elif sel.startswith("re:"):
            try:
                pattern = re.compile(sel[3:])
            except re.error as exc:
                raise RoleError(
                    f"{role} selector {sel!r} is not a valid regular expression: {exc}",
                    source=None if item.source is None else str(item.source),
                    line=item.line,
                ) from None
            hits = {s for s in known if pattern.search(s) or pattern.search(_nfc(s))}
        elif _is_glob(sel):
            hits = {s for s in known if fnmatch.fnmatchcase(_nfc(s), _nfc(sel))}
        else:
            hits = set()
        if not hits:
            error = UnknownSystemError(sel, known, role=role, message=_unmatched(sel, known, role))
            if item.source is not None:
                error.located(str(item.source), line=item.line)
            raise error
        chosen |= hits
    return [s for s in known if s in chosen]


#: Names listed after a suggested pattern (the rest are counted).
_LISTED = 8


def _listed(names: list[str]) -> str:
    more = len(names) - _LISTED
    return ", ".join(names[:_LISTED]) + (f" and {more} more" if more > 0 else "")


def _unmatched(selector: str, known: list[str], role: str) -> str:
    """Say that a selector matched nothing, with what it may have meant.

    A name is "not in the data", with close names. A glob "matched no system", with the
    nearest glob that matches and all its matches: the same ignoring case, with ``*``
    at the end, or with its literal start shortened (``chall_*`` -> ``chal*``); else the
    names closest to its literal text, or the first systems. A ``re:`` pattern likewise,
    with the close names.
    """
    if selector.startswith("re:"):
        close = difflib.get_close_matches(selector[3:], known, n=5, cutoff=0.3)
        hint = f"; close names: {', '.join(close)}" if close else ""
        return f"{role} regex {selector!r} matched no system{hint}"
    if not _is_glob(selector):
        return UnknownSystemError(selector, known, role=role).args[0]
    tries = [selector.lower(), selector if selector.endswith("*") else selector + "*"]
    start = re.split(r"[*?\[]", selector, maxsplit=1)[0]
    tries += [start[:k] + "*" for k in range(len(start), 0, -1)]
    for pattern in tries:
        hits = [s for s in known if fnmatch.fnmatch(s.lower() if pattern is tries[0] else s,
                                                    pattern)]  # fmt: skip
        if hits:
            said = "ignoring case, it" if pattern is tries[0] else repr(pattern)
            return (
                f"{role} glob {selector!r} matched no system; {said} matches {len(hits)}: "
                f"{_listed(hits)}"
            )
    text = re.sub(r"[*?\[\]]", "", selector)
    close = difflib.get_close_matches(text, known, n=5, cutoff=0.4)
    hint = f"close names: {', '.join(close)}" if close else f"the systems: {_listed(known)}"
    return f"{role} glob {selector!r} matched no system; {hint}"


def check_known(names: Iterable[str], known: Iterable[str]) -> None:
    """Raise :class:`UnknownSystemError` for the first name not in ``known``."""
    known = list(known)
    known_set = set(known)
    for name in names:
        if name not in known_set:
            raise UnknownSystemError(name, known)


def assign_roles(
    means: pd.Series,
    *,
    champion: str,
    challengers: str | Iterable[str] | None = None,
    artifacts: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] | None = None,
    drop_bottom: float = 0.0,
    top_m: int | None = None,
) -> Roles:
    """Assign roles from the per-system mean scores.

    Parameters
    ----------
    means
        Mean score per system (index: system names); used by ``drop_bottom`` and ``top_m``.
    champion
        Exact name of the champion.
    challengers
        Selectors of the challengers (none if ``None``).
    artifacts
        Selectors of the artifacts; ``None`` means every system that is not champion,
        challenger or excluded.
    exclude
        Selectors of systems never used as artifacts (e.g. the runs fused into a challenger).
    drop_bottom
        Fraction in [0, 1) of artifacts with the lowest means to drop
        (Benham et al. 2020 drop the bottom 25% of TREC runs).
    top_m
        Keep at most this many artifacts, the best by mean (after ``drop_bottom``).

    Returns
    -------
    Roles
    """
    known = [str(s) for s in means.index]
    if not isinstance(champion, str) or not champion:
        raise RoleError("a champion is required (the exact name of the production system)")
    if champion not in known:
        composed = [k for k in known if _nfc(k) == _nfc(champion)]
        if len(composed) != 1:
            raise UnknownSystemError(champion, known, role="champion")
        champion = composed[0]
    chal = match_systems(challengers, known, role="challenger")
    if champion in chal:
        raise RoleError(f"system {champion!r} cannot be both champion and challenger")
    excluded = set(match_systems(exclude, known, role="excluded system"))
    if artifacts is None:
        art = [s for s in known if s != champion and s not in chal and s not in excluded]
    else:
        art = match_systems(artifacts, known, role="artifact")
        clash = [s for s in art if s == champion or s in chal]
        if clash:
            raise RoleError(
                f"system {clash[0]!r} is selected both as an artifact and as "
                f"{'champion' if clash[0] == champion else 'challenger'}"
            )
        art = [s for s in art if s not in excluded]
        if not art:
            raise RoleError(f"the artifact selectors {_as_list(artifacts)} leave no artifact run")
    drop_bottom = validate.finite_float(
        "drop_bottom", drop_bottom, minimum=0, maximum=1, open_maximum=True
    )
    art_means = means.loc[art].sort_values(ascending=False, kind="stable")
    n_keep = len(art_means) - int(len(art_means) * drop_bottom)
    if top_m is not None:
        top_m = validate.integer("top_m", top_m, minimum=0)
        n_keep = min(n_keep, top_m)
    kept = list(art_means.index[:n_keep])
    art = [s for s in known if s in set(kept)]
    art.sort(key=lambda s: -means[s])
    return Roles(champion=champion, challengers=tuple(chal), artifacts=tuple(art))
