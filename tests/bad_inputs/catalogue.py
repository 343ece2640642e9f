"""The bad-input catalogue: what a demanding user expects from each hostile input (issue 20).

A case is data: an id, a class, the input (files written to a temporary folder, the
argv of one ``bayes-ir`` command, or a small callable for API cases), and the outcome
a careful user expects, *not* what the code does today:

``error``
    exit status 2 and exactly one line ``error: ...`` on stderr that names the stated
    thing (file, line, system, topic or option), checked with the regex ``match``;
``ok``
    exit status 0 and the right answer, checked by ``check`` against an independent
    computation (numpy, plain Python);
``warning``
    exit status 0 and a ``warning: ...`` line on stderr matching ``match``;
``raises``
    (API cases) the exception ``exc``, a :class:`~bayes_ir.errors.BayesIRError`
    subclass, whose message matches ``match``;
``exit``
    (signal cases) the exit status ``status`` and one line on stderr.

Argument strings may hold ``{d}`` (the folder of the input files), ``{o}`` (an empty
output folder) and ``{data}`` (the repository's ``data/`` folder). A file's content is
``str`` (written as UTF-8), ``bytes``, :data:`FIFO` (a named pipe), :class:`Sparse` (a
file of that many zero bytes that takes no disk space) or :class:`Link` (a symbolic link;
its target may use ``{d}``). ``env`` sets environment variables of a subprocess case
(``PYTHONIOENCODING=ascii``: a terminal that only takes ASCII).

Cases that fail today carry ``xfail="<class>: <what goes wrong today>"`` and the
helper/area that owns the fix in ``owner`` (``files``, ``validate``, ``readers``,
``other``); the runner marks them ``xfail(strict=True)``, so a fix turns them into
XPASS and the mark must then be removed.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Content marker: create a named pipe instead of a regular file.
FIFO = object()


@dataclass(frozen=True)
class Sparse:
    """Content marker: a sparse file of ``size`` zero bytes (huge, yet free to make)."""

    size: int


@dataclass(frozen=True)
class Link:
    """Content marker: a symbolic link to ``target`` (``{d}`` is the input folder)."""

    target: str


KINDS = ("file", "cli", "api", "signal")
EXPECTS = ("error", "ok", "warning", "raises", "exit")
OWNERS = ("files", "validate", "readers", "other")


@dataclass(frozen=True)
class Case:
    """One hostile input and the outcome a demanding user expects."""

    id: str
    cls: str
    kind: str
    expect: str
    argv: tuple[str, ...] = ()
    files: dict[str, Any] = field(default_factory=dict)
    match: str = ""
    check: Callable[[Any], None] | None = None
    call: Callable[[Any], Any] | None = None
    exc: type | None = None
    status: int | None = None
    signal: int | None = None
    subprocess: bool = False
    env: dict[str, str] = field(default_factory=dict)
    memory_limit: bool = False
    timeout: float = 120.0
    slow: bool = False
    xfail: str | None = None
    owner: str | None = None

    def __post_init__(self):
        assert self.kind in KINDS, self.id
        assert self.expect in EXPECTS, self.id
        assert (self.xfail is None) == (self.owner is None), self.id
        assert self.owner is None or self.owner in OWNERS, self.id
        assert self.xfail is None or self.xfail.startswith(self.cls + ":"), self.id
        assert self.expect != "raises" or self.exc is not None, self.id
        assert not self.env or self.subprocess, self.id


# --------------------------------------------------------------------------- data builders
SYSTEMS = ("base", "chal_a", "chal_b", "run1", "run2", "run3")
N_TOPICS = 10


def topics(n: int = N_TOPICS) -> list[str]:
    return [str(401 + i) for i in range(n)]


def scores(n_topics: int = N_TOPICS, n_systems: int = len(SYSTEMS)) -> np.ndarray:
    """A deterministic topic x system matrix in (0, 1), no two columns equal."""
    t = np.arange(n_topics)[:, None]
    s = np.arange(n_systems)[None, :]
    return np.round(0.2 + 0.04 * s + 0.05 * ((3 * t + 2 * s) % 7) + 0.001 * t, 4)


def tidy(
    systems=SYSTEMS,
    values: np.ndarray | None = None,
    *,
    measure: str = "AP",
    collection: str | None = None,
    sep: str = ",",
    topic_ids: list[str] | None = None,
    eol: str = "\n",
) -> str:
    """A tidy file (``[collection,]measure,system,topic,score``), written with the csv module."""
    values = scores(n_systems=len(systems)) if values is None else values
    topic_ids = topics(values.shape[0]) if topic_ids is None else topic_ids
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=sep, lineterminator=eol)
    head = ["measure", "system", "topic", "score"]
    writer.writerow((["collection"] if collection else []) + head)
    for j, system in enumerate(systems):
        for i, topic in enumerate(topic_ids):
            row = [measure, system, topic, _num(values[i, j])]
            writer.writerow(([collection] if collection else []) + row)
    return buf.getvalue()


def _num(x) -> str:
    return x if isinstance(x, str) else repr(float(x))


def wide(systems=SYSTEMS, values=None, *, topic_col: str | None = "topic", sep=",") -> str:
    values = scores(n_systems=len(systems)) if values is None else values
    head = ([topic_col] if topic_col else []) + list(systems)
    lines = [sep.join(head)]
    for i, topic in enumerate(topics(values.shape[0])):
        cells = [_num(v) for v in values[i]]
        lines.append(sep.join(([topic] if topic_col else []) + cells))
    return "\n".join(lines) + "\n"


def trec_eval(system: str, column: np.ndarray, *, measure: str = "map", eol="\n") -> str:
    lines = [f"{measure}\t{t}\t{_num(v)}" for t, v in zip(topics(len(column)), column, strict=True)]
    lines += [f"runid\tall\t{system}", f"{measure}\tall\t{np.mean(column):.4f}"]
    return eol.join(lines) + eol


def lines_file(column) -> str:
    return "".join(f"{_num(v)}\n" for v in column)


#: A judged pool for run-file cases: topic -> relevant documents.
QRELS_REL = {"1": {"d1", "d3"}, "2": {"d2"}, "3": {"d1", "d2", "d4"}}
DOCS = ["d1", "d2", "d3", "d4", "d5", "d6"]


def qrels(rel=QRELS_REL, topic_ids=("1", "2", "3")) -> str:
    return "".join(f"{t} 0 {d} {int(d in rel.get(t, ()))}\n" for t in topic_ids for d in DOCS)


def run(tag: str, order: list[str], topic_ids=("1", "2", "3"), tags=None) -> str:
    out = []
    for t in topic_ids:
        for rank, d in enumerate(order, start=1):
            out.append(f"{t} Q0 {d} {rank} {10 - rank}.5 {tags or tag}\n")
    return "".join(out)


def gz(text: str) -> bytes:
    return gzip.compress(text.encode(), mtime=0)


def junk(n: int = 400, seed: int = 0) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, size=n, dtype=np.uint8).tobytes()


def meta_scores(n_coll: int = 3, n_topics: int = 8) -> tuple[str, dict]:
    """Tidy scores with a collection column for ``meta``: control ``bm25``, treatment ``dense``."""
    rows = ["collection,measure,system,topic,score"]
    diffs = {}
    for c in range(n_coll):
        ctrl = 0.3 + 0.02 * c + 0.03 * ((np.arange(n_topics) * (c + 2)) % 5)
        trt = ctrl + 0.01 * (c + 1) + 0.02 * ((np.arange(n_topics) * 3) % 4)
        ctrl, trt = np.round(ctrl, 4), np.round(trt, 4)
        for name, col in (("bm25", ctrl), ("dense", trt)):
            rows += [f"coll{c},nDCG@10,{name},{t + 1},{_num(v)}" for t, v in enumerate(col)]
        diffs[f"coll{c}"] = (ctrl, trt)
    return "\n".join(rows) + "\n", diffs


META_SCORES, META_DIFFS = meta_scores()
META_OK = "control: bm25\ntreatment: dense\nmeasure: nDCG@10\nscores: scores.csv\n"


# --------------------------------------------------------------------------- answer checks
def read_csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def means_of(systems, values) -> dict[str, float]:
    return {s: float(np.mean(values[:, j])) for j, s in enumerate(systems)}


def inspect_means(expected: dict[str, float], out: str = "out.csv") -> Callable:
    """Check ``inspect -o {o}/out.csv``: exactly the expected systems, each mean to 1e-9."""

    def check(ctx) -> None:
        rows = read_csv_rows(ctx.out / out)
        got = {r["system"]: float(r["mean"]) for r in rows}
        assert set(got) == set(expected), f"systems {sorted(got)} != {sorted(expected)}"
        for name, value in expected.items():
            assert math.isclose(got[name], value, rel_tol=1e-9, abs_tol=1e-12), (
                name,
                got[name],
                value,
            )

    return check


def stdout_has(*texts: str) -> Callable:
    """Check that stdout shows each text intact (names not eaten by markup)."""

    def check(ctx) -> None:
        for text in texts:
            assert text in ctx.stdout, f"{text!r} not shown intact in:\n{ctx.stdout}"

    return check


def file_has(name: str, *texts: str) -> Callable:
    def check(ctx) -> None:
        body = (ctx.out / name).read_text(encoding="utf-8")
        for text in texts:
            assert text in body, f"{text!r} not in {name}:\n{body}"

    return check


def json_systems(name: str, expected: set[str]) -> Callable:
    def check(ctx) -> None:
        data = json.loads((ctx.out / name).read_text(encoding="utf-8"))
        rows = data if isinstance(data, list) else data.get("data", data)
        got = {row["system"] for row in rows}
        assert got == expected, (got, expected)

    return check


def challengers_are(expected: set[str], out: str = "out.csv") -> Callable:
    """Check ``fit -o``: the challengers compared are exactly ``expected``."""

    def check(ctx) -> None:
        got = {r["challenger"] for r in read_csv_rows(ctx.out / out)}
        assert got == expected, (got, expected)

    return check


def both(*checks: Callable) -> Callable:
    def check(ctx) -> None:
        for one in checks:
            one(ctx)

    return check


def exists(name: str) -> Callable:
    def check(ctx) -> None:
        assert (ctx.out / name).is_file(), f"{name} not written"

    return check
