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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bayes_ir import validate
from bayes_ir.errors import RoleError, UnknownSystemError

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


def _expand_files(selectors: list[str], known: Sequence[str] = ()) -> list[str]:
    out: list[str] = []
    for sel in selectors:
        if sel.startswith("@"):  # explicit file selector
            path = Path(sel[1:])
        elif sel.startswith("re:") or _is_glob(sel) or sel in known:
            out.append(sel)
            continue
        else:
            path = Path(sel)
            if not path.is_file():
                out.append(sel)
                continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise RoleError(f"cannot read the selector file {path}: {exc}") from None
        picked = [x.strip() for x in lines if x.strip() and not x.lstrip().startswith("#")]
        if not picked:
            raise RoleError(f"the selector file {path} names no system")
        out.extend(picked)
    return out


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
    for sel in _expand_files(_as_list(selectors), known):
        if sel in known:  # an exact name wins over any pattern reading of it
            hits = {sel}
        elif sel.startswith("re:"):
            try:
                pattern = re.compile(sel[3:])
            except re.error as exc:
                raise RoleError(
                    f"{role} selector {sel!r} is not a valid regular expression: {exc}"
                ) from None
            hits = {s for s in known if pattern.search(s)}
        elif _is_glob(sel):
            hits = set(fnmatch.filter(known, sel))
        else:
            hits = set()
        if not hits:
            raise UnknownSystemError(sel, known, role=role, message=_unmatched(sel, known, role))
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
        raise UnknownSystemError(champion, known, role="champion")
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
