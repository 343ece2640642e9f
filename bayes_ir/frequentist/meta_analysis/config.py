"""YAML description of a multi-collection comparison, in the spirit of Ranger's config files.

A config names the control and treatment systems, the per-topic measure, and for each
collection where its scores are: TREC runs of both systems plus qrels, per-sample score
files of both systems, or one tidy score file holding every collection. Paths are
relative to the YAML file. Example (``data/example_meta.yaml``)::

    control: bm25
    treatment: dense
    measure: nDCG@10          # per-topic measure (an ir_measures string for runs)
    extra_measures: [Judged@10]
    effect: SMD               # MD, SMD or CORR (the CLI's --effect overrides it)
    method: REML              # DL, REML, PM or FE (the CLI's --method overrides it)
    scores: example_collections.csv   # a tidy file with a collection column, or:
    collections:
      trec-covid:
        display_name: TREC-COVID
        qrels: runs/trec-covid_qrels.txt
        runs: {bm25: runs/bm25.run, dense: runs/dense.run}
      mnli:
        scores: {bert: bert/mnli.txt, distilbert: distilbert/mnli.txt}
        format: lines             # optional reader name for the score files
    display_names: {arguana: ArguAna}

Ranger's own layout (``qrels:``, ``available_rankings:`` or ``eval_metrics:``, and
``display_names:``; the first system listed is the control) is read too.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import yaml

from bayes_ir.errors import BayesIRError, ScoreTableError, UnknownSystemError
from bayes_ir.files import read_input_text
from bayes_ir.frequentist.meta_analysis.effect_size import _check_measure as _check_effect
from bayes_ir.frequentist.meta_analysis.tau2 import TAU2_METHODS
from bayes_ir.readers import read_scores
from bayes_ir.table import Missing, ScoreTable, concat


@dataclass(frozen=True)
class CollectionSpec:
    """Where the scores of one collection are.

    Attributes
    ----------
    name
        Collection name (as in the scores).
    files
        ``{system: path}`` of run files (with ``qrels``) or per-sample score files.
    qrels
        Qrels file when ``files`` are TREC runs.
    format
        Reader name for score files (``None``: detect from content).
    """

    name: str
    files: Mapping[str, Path] = field(default_factory=dict)
    qrels: Path | None = None
    format: str | None = None


@dataclass(frozen=True)
class MetaConfig:
    """A parsed meta-analysis config; :meth:`MetaConfig.load` reads the scores into a table.

    Attributes
    ----------
    path
        The YAML file.
    control, treatment
        System names.
    measure
        Per-topic measure compared (``None``: the only one in the scores).
    extra_measures
        Measures carried along for the forest plot (e.g. ``Judged@10``).
    effect, method
        Default effect-size code and tau^2 estimator (``None``: the caller's default).
    hk
        Default Hartung-Knapp setting.
    collections
        Per-collection specs, in the config's order (empty with a tidy ``scores`` file).
    scores
        Tidy score file with a ``collection`` column, if given.
    display_names
        ``{collection: label}`` for tables and plots.
    """

    path: Path
    control: str
    treatment: str
    measure: str | None = None
    extra_measures: tuple[str, ...] = ()
    effect: str | None = None
    method: str | None = None
    hk: bool = False
    collections: tuple[CollectionSpec, ...] = ()
    scores: Path | None = None
    display_names: Mapping[str, str] = field(default_factory=dict)
    #: The line of each top-level key in the file, for messages.
    lines: Mapping[str, int] = field(default_factory=dict)

    @property
    def collection_names(self) -> tuple[str, ...] | None:
        """Collections in config order, or ``None`` when they come from a tidy file."""
        return tuple(c.name for c in self.collections) or None

    def load(self, *, missing: Missing = "keep") -> ScoreTable:
        """Read every collection's scores with :func:`bayes_ir.read_scores` into one table.

        Topics scored for only one system are kept (``missing="keep"``) so that
        :func:`~bayes_ir.frequentist.effect_size` reports and excludes them.
        """
        measures = [m for m in (self.measure, *self.extra_measures) if m is not None]
        if self.scores is not None:
            table = read_scores(self.scores, missing=missing)
            keep = [m for m in measures if m in table.measures] or None
            if keep and len(keep) < len(measures):
                lacking = sorted(set(measures) - set(keep))
                raise ScoreTableError(
                    f"measure(s) {', '.join(lacking)} not in the scores", source=str(self.scores)
                )
            systems = [self.control, self.treatment]
            present = list(table.data["system"].unique())
            for key, name in zip(("control", "treatment"), systems, strict=True):
                if name not in present:
                    error = UnknownSystemError(name, present, role=key)
                    raise error.located(str(self.path), line=self.lines.get(key))
            table = table.select(systems=systems)
            if keep:
                table = ScoreTable.from_frame(
                    table.data[table.data["measure"].isin(keep)],
                    source=table.source,
                    missing=missing,
                    check_range=False,
                )
            return table
        tables = [self._load_collection(spec, measures, missing) for spec in self.collections]
        return concat(tables, source=str(self.path))

    def _load_collection(
        self, spec: CollectionSpec, measures: list[str], missing: Missing
    ) -> ScoreTable:
        systems = [self.control, self.treatment]
        for s in systems:
            if s not in spec.files:
                raise ScoreTableError(
                    f"collection {spec.name!r} lists no file for system {s!r} "
                    f"(has: {', '.join(spec.files)})",
                    source=str(self.path),
                )
        if spec.qrels is not None:
            return read_scores(
                [spec.files[s] for s in systems],
                format="run",
                qrels=spec.qrels,
                collection=spec.name,
                measure=measures or None,
                systems=systems,
                missing=missing,
            )
        options: dict[str, Any] = {"collection": spec.name, "missing": missing}
        if self.measure is not None:
            options["measure"] = self.measure
        if spec.format == "lines":  # paired by line position: read both files together
            files = [spec.files[s] for s in systems]
            return read_scores(files, format="lines", systems=systems, **options)
        parts = []
        for s in systems:
            t = read_scores(spec.files[s], format=spec.format, **options)
            names = t.data["system"].unique()
            if s in names:
                t = t.select(systems=[s])
            elif len(names) == 1:
                data = t.data.assign(system=s, collection=spec.name)
                t = ScoreTable.from_frame(data, source=t.source, missing=missing)
            else:
                raise ScoreTableError(
                    f"the file holds several systems ({', '.join(names)}) and none is {s!r}",
                    source=str(spec.files[s]),
                )
            parts.append(t)
        return concat(parts, source=str(self.path))


def _path(base: Path, value: str) -> Path:
    p = Path(value)
    return p if p.is_absolute() else (base / p)


#: The schema: the kind of value of every key, at the top level and in a collection.
#: Kinds: "name" (a string; a YAML number is accepted and read as text), "text",
#: "bool", "path", "names" (a string or a list of strings), "files" ({system: path}),
#: "labels" ({name: text}), "collections" ({collection: mapping}).
_TOP_KEYS: dict[str, str] = {
    "control": "name",
    "treatment": "name",
    "measure": "text",
    "extra_measures": "names",
    "effect": "text",
    "method": "text",
    "hk": "bool",
    "scores": "path",
    "collections": "collections",
    "display_names": "labels",
}
_COLLECTION_KEYS: dict[str, str] = {
    "display_name": "text",
    "qrels": "path",
    "runs": "files",
    "scores": "files",
    "format": "text",
}
#: Ranger's own keys (its layout is translated by :func:`_from_ranger`).
_RANGER_KEYS: dict[str, str] = {
    "available_rankings": "ranger",
    "eval_metrics": "ranger",
    "qrels": "ranger",
    "format": "text",
}
_KIND_WORDS = {
    "name": "a name",
    "text": "a string",
    "bool": "true or false",
    "path": "a file path",
    "names": "a string or a list of strings",
    "files": "a mapping {system: file}",
    "labels": "a mapping {name: label}",
    "collections": "a mapping {collection: settings}",
    "ranger": "a mapping",
}


#: Deepest nesting of a config (its own layout needs 4 levels).
_MAX_DEPTH = 20
#: Most entries of a config, aliases expanded (a few collections need a few dozen).
_MAX_ENTRIES = 100_000


class _Checker:
    """Check a parsed config against the schema; errors name the file, line and key.

    ``lines`` holds the line of every key (by its path of keys) and ``texts`` the text
    of every plain scalar value as written, so that a name such as ``010`` or ``no`` is
    read as written rather than as YAML 1.1's number 8 or boolean false.
    """

    def __init__(self, path: Path, root: yaml.Node | None):
        self.path = path
        self.lines: dict[tuple[str, ...], int] = {}
        self.texts: dict[tuple[str, ...], str] = {}
        self._index(root, ())

    def _index(self, node: yaml.Node | None, prefix: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                where = (*prefix, str(key.value))
                self.lines.setdefault(where, key.start_mark.line + 1)
                self._index(value, where)
        elif isinstance(node, yaml.ScalarNode) and not node.style:
            self.texts[prefix] = node.value

    def error(self, message: str, where: tuple[str, ...] = ()) -> ScoreTableError:
        line = None
        for n in range(len(where), 0, -1):  # the key itself, else its closest parent
            line = self.lines.get(tuple(where[:n]))
            if line is not None:
                break
        return ScoreTableError(message, source=str(self.path), line=line)

    def keys(self, raw: dict, schema: dict[str, str], where: tuple[str, ...]) -> None:
        for key in raw:
            if key not in schema:
                close = difflib.get_close_matches(str(key), list(schema), n=3, cutoff=0.6)
                hint = f" (did you mean {' or '.join(close)}?)" if close else ""
                known = ", ".join(schema)
                what = f"in collection {where[-1]!r}" if where else "at the top level"
                raise self.error(
                    f"unknown key {key!r} {what}{hint}; known keys: {known}", (*where, str(key))
                )

    def written(self, value: Any, where: tuple[str, ...]) -> Any:
        """``value`` as written in the file when it is a plain scalar (``010``, not 8)."""
        if isinstance(value, bool | int | float) and where in self.texts:
            return self.texts[where]
        return value

    def value(self, value: Any, kind: str, where: tuple[str, ...]) -> Any:
        """Return ``value`` checked against ``kind`` (``None`` passes: the key is unset).

        Names (``name``, the labels of ``labels``) are returned as written.
        """
        if value is None:
            return None
        name = "/".join(where)
        shown = self.written(value, where)
        got = f"got {shown if shown is not value else repr(value)} ({_yaml_type(value)})"
        if kind == "name" and not isinstance(value, list | dict):
            return str(self.written(value, where))
        if kind == "labels" and isinstance(value, dict):
            if all(not isinstance(v, list | dict) for v in value.values()):
                return {k: str(self.written(v, (*where, str(k)))) for k, v in value.items()}
        ok = {
            "name": False,
            "text": isinstance(value, str),
            "bool": isinstance(value, bool),
            "path": isinstance(value, str),
            "names": isinstance(value, str)
            or (isinstance(value, list) and all(isinstance(v, str) for v in value)),
            "files": isinstance(value, dict)
            and all(isinstance(v, str) and not isinstance(k, bool) for k, v in value.items()),
            "labels": False,
            "collections": isinstance(value, dict),
            "ranger": isinstance(value, dict),
        }[kind]
        if not ok:
            hint = ""
            if kind == "bool" and isinstance(value, str):
                hint = f"; write {where[-1]}: true or {where[-1]}: false, without quotes"
            elif kind in ("text", "path") and where in self.texts:
                hint = f"; quote it: {where[-1]}: '{self.texts[where]}'"
            raise self.error(f"{name} must be {_KIND_WORDS[kind]}, {got}{hint}", where)
        return value


def _yaml_type(value: Any) -> str:
    return {
        bool: "a boolean", int: "a number", float: "a number", str: "a string",
        list: "a list", dict: "a mapping",
    }.get(type(value), type(value).__name__)  # fmt: skip


def _python(node: yaml.Node, path: Path, depth: int = 0, count: list[int] | None = None) -> Any:
    """Build the config's Python value from YAML nodes: keys as written, no key twice.

    Mapping keys are taken as written (``010:`` is the collection ``"010"``); a key
    repeated in one mapping is refused (YAML's loaders keep the last one silently);
    nesting deeper than :data:`_MAX_DEPTH` and more than :data:`_MAX_ENTRIES` entries
    (aliases expanded) are refused.
    """
    count = [0] if count is None else count
    count[0] += 1
    line = node.start_mark.line + 1
    if depth > _MAX_DEPTH:
        raise ScoreTableError(
            f"the config is nested more than {_MAX_DEPTH} levels deep", source=str(path), line=line
        )
    if count[0] > _MAX_ENTRIES:
        raise ScoreTableError(
            f"the config holds more than {_MAX_ENTRIES:,} entries (with its aliases expanded)",
            source=str(path),
            line=line,
        )
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        first: dict[str, int] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise ScoreTableError(
                    "a key must be a plain name, not a list or mapping",
                    source=str(path),
                    line=key.start_mark.line + 1,
                )
            name = str(key.value)
            if name in first:
                raise ScoreTableError(
                    f"key {name!r} appears twice in one mapping (lines {first[name]} and "
                    f"{key.start_mark.line + 1}); YAML would keep only the last: remove one",
                    source=str(path),
                    line=key.start_mark.line + 1,
                )
            first[name] = key.start_mark.line + 1
            out[name] = _python(value, path, depth + 1, count)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_python(item, path, depth + 1, count) for item in node.value]
    return yaml.SafeLoader("").construct_object(node)


def _parse_yaml(path: Path) -> tuple[Path, Any, yaml.Node | None]:
    """Read ``path`` as UTF-8 YAML; decoding and syntax errors name the byte or line.

    The file is read with :func:`bayes_ir.files.read_input_text` (a FIFO or device
    refused unread, a size limit, a byte-order mark dropped, UTF-16 refused).
    """
    path, text = read_input_text(path, what="config")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScoreTableError(
            f"not valid YAML: {problem}" + (f" (column {mark.column + 1})" if mark else ""),
            source=str(path),
            line=mark.line + 1 if mark else None,
        ) from None
    except RecursionError:
        raise ScoreTableError(
            f"the config is nested more than {_MAX_DEPTH} levels deep", source=str(path)
        ) from None
    if root is None:
        return path, None, None
    try:
        return path, _python(root, path), root
    except yaml.YAMLError as exc:  # a scalar YAML cannot construct (a bad timestamp)
        mark = getattr(exc, "problem_mark", None)
        raise ScoreTableError(
            f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
            source=str(path),
            line=mark.line + 1 if mark else None,
        ) from None


def read_meta_config(path: str | PathLike[str]) -> MetaConfig:
    """Parse a meta-analysis YAML config (this package's layout or Ranger's).

    Parameters
    ----------
    path
        The YAML file (UTF-8); relative paths inside it are resolved against its folder.

    Returns
    -------
    MetaConfig

    Raises
    ------
    ScoreTableError
        Naming the file and, where known, the line: a file that is not UTF-8 or not
        YAML, not a mapping, an unknown key (with close matches), a value of the wrong
        type (``hk: 'false'`` is a string, not a boolean), an unknown effect or
        method, or missing systems or collections.

    Notes
    -----
    Keys and their types: ``control``, ``treatment`` (names), ``measure``, ``effect``,
    ``method`` (strings), ``extra_measures`` (a string or a list), ``hk`` (``true`` or
    ``false``), ``scores`` (a path), ``display_names`` (a mapping), ``collections``
    (a mapping of collection to ``display_name``, ``qrels``, ``runs``, ``scores``,
    ``format``). Ranger's layout adds ``available_rankings`` / ``eval_metrics`` and
    ``qrels``.
    """
    path, raw, root = _parse_yaml(Path(path))
    if not isinstance(raw, dict):
        raise ScoreTableError("the config must be a YAML mapping", source=str(path))
    check = _Checker(path, root)
    ranger = "available_rankings" in raw or "eval_metrics" in raw
    check.keys(raw, {**_TOP_KEYS, **_RANGER_KEYS} if ranger else _TOP_KEYS, ())
    for key, value in list(raw.items()):
        raw[key] = check.value(value, {**_TOP_KEYS, **_RANGER_KEYS}[key], (key,))
    if ranger:
        raw = _from_ranger(raw, path)
    for key in ("control", "treatment"):
        if raw.get(key) is None or raw.get(key) == "":
            raise check.error(f"the config needs a {key!r} system name", (key,))
    effect, method = raw.get("effect"), raw.get("method")
    if effect is not None:
        try:
            effect = _check_effect(effect)
        except BayesIRError as exc:
            raise check.error(f"effect: {exc}", ("effect",)) from None
    if method is not None and str(method).upper() not in TAU2_METHODS:
        raise check.error(
            f"method: unknown tau^2 estimator {method!r}; choose one of {', '.join(TAU2_METHODS)}",
            ("method",),
        )
    base = path.parent
    specs = []
    for name, entry in (raw.get("collections") or {}).items():
        where = ("collections", str(name))
        if not isinstance(entry, dict):
            raise check.error(f"collection {name!r} must be a mapping", where)
        check.keys(entry, _COLLECTION_KEYS, where)
        for key, value in list(entry.items()):
            entry[key] = check.value(value, _COLLECTION_KEYS[key], (*where, key))
        files = entry.get("runs") or entry.get("scores") or {}
        if not files:
            raise check.error(
                f"collection {name!r} needs 'runs' (with 'qrels') or 'scores': "
                "a mapping {system: file}",
                where,
            )
        if "runs" in entry and "qrels" not in entry:
            raise check.error(f"collection {name!r} has runs but no qrels", where)
        specs.append(
            CollectionSpec(
                name=str(name),
                files={str(s): _path(base, f) for s, f in files.items()},
                qrels=_path(base, entry["qrels"]) if entry.get("qrels") else None,
                format=entry.get("format"),
            )
        )
    scores = raw.get("scores")
    if not specs and scores is None:
        raise check.error(
            "the config needs 'collections' (per-collection files) or 'scores' (a tidy file)"
        )
    names = {str(k): str(v) for k, v in (raw.get("display_names") or {}).items()}
    for name, entry in (raw.get("collections") or {}).items():
        if entry.get("display_name"):
            names[str(name)] = str(entry["display_name"])
    extra = raw.get("extra_measures") or ()
    return MetaConfig(
        path=path,
        control=str(raw["control"]),
        treatment=str(raw["treatment"]),
        measure=raw.get("measure"),
        extra_measures=tuple([extra] if isinstance(extra, str) else extra),
        effect=effect,
        method=None if method is None else str(method).upper(),
        hk=bool(raw.get("hk") or False),
        collections=tuple(specs),
        scores=_path(base, scores) if scores is not None else None,
        display_names=names,
        lines={key[0]: line for key, line in check.lines.items() if len(key) == 1},
    )


def _from_ranger(raw: dict, path: Path) -> dict:
    """Translate Ranger's config layout into this package's."""
    key = "available_rankings" if "available_rankings" in raw else "eval_metrics"
    systems = raw[key]
    if not isinstance(systems, dict) or len(systems) < 2:
        raise ScoreTableError(f"{key!r} must list two systems", source=str(path))
    names = list(systems)
    control = raw.get("control", names[0])
    treatment = raw.get("treatment", names[1])
    qrels = raw.get("qrels") or {}
    collections = {}
    for coll in systems[control]:
        if coll not in systems.get(treatment, {}):
            continue
        entry: dict[str, Any] = {}
        files = {control: systems[control][coll], treatment: systems[treatment][coll]}
        if key == "available_rankings":
            if coll not in qrels:
                continue  # Ranger skips collections without qrels too
            entry = {"runs": files, "qrels": qrels[coll]}
        else:
            entry = {"scores": files, "format": raw.get("format", "lines")}
        collections[coll] = entry
    out = {k: v for k, v in raw.items() if k not in (key, "qrels")}
    out.update(control=control, treatment=treatment, collections=collections)
    return out
