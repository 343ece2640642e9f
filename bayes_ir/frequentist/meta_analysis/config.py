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

from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import yaml

from bayes_ir.errors import ScoreTableError
from bayes_ir.readers import read_scores
from bayes_ir.table import ScoreTable, concat


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
    """A parsed meta-analysis config; :meth:`load` reads the scores into a table.

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

    @property
    def collection_names(self) -> tuple[str, ...] | None:
        """Collections in config order, or ``None`` when they come from a tidy file."""
        return tuple(c.name for c in self.collections) or None

    def load(self, *, missing: str = "keep") -> ScoreTable:
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
        self, spec: CollectionSpec, measures: list[str], missing: str
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


def _path(base: Path, value: Any, what: str, source: Path) -> Path:
    if not isinstance(value, str | PathLike):
        raise ScoreTableError(f"{what} must be a file path, got {value!r}", source=str(source))
    p = Path(value)
    return p if p.is_absolute() else (base / p)


def read_meta_config(path: str | PathLike[str]) -> MetaConfig:
    """Parse a meta-analysis YAML config (this package's layout or Ranger's).

    Parameters
    ----------
    path
        The YAML file; relative paths inside it are resolved against its folder.

    Returns
    -------
    MetaConfig

    Raises
    ------
    ScoreTableError
        If the file is not a mapping, or lacks the systems or the collections.
    """
    path = Path(path)
    if not path.exists():
        raise ScoreTableError("config file not found", source=str(path))
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ScoreTableError(f"not valid YAML: {exc}", source=str(path)) from None
    if not isinstance(raw, dict):
        raise ScoreTableError("the config must be a YAML mapping", source=str(path))
    base = path.parent
    if "available_rankings" in raw or "eval_metrics" in raw:
        raw = _from_ranger(raw, path)
    for key in ("control", "treatment"):
        if not raw.get(key):
            raise ScoreTableError(f"the config needs a {key!r} system name", source=str(path))
    specs = []
    for name, entry in (raw.get("collections") or {}).items():
        if not isinstance(entry, dict):
            raise ScoreTableError(f"collection {name!r} must be a mapping", source=str(path))
        files = entry.get("runs") or entry.get("scores") or {}
        if not isinstance(files, dict) or not files:
            raise ScoreTableError(
                f"collection {name!r} needs 'runs' (with 'qrels') or 'scores': "
                "a mapping {system: file}",
                source=str(path),
            )
        if "runs" in entry and "qrels" not in entry:
            raise ScoreTableError(f"collection {name!r} has runs but no qrels", source=str(path))
        specs.append(
            CollectionSpec(
                name=str(name),
                files={str(s): _path(base, f, f"{name}/{s}", path) for s, f in files.items()},
                qrels=_path(base, entry["qrels"], f"{name}/qrels", path)
                if "qrels" in entry
                else None,
                format=entry.get("format"),
            )
        )
    scores = raw.get("scores")
    if not specs and scores is None:
        raise ScoreTableError(
            "the config needs 'collections' (per-collection files) or 'scores' (a tidy file)",
            source=str(path),
        )
    names = {str(k): str(v) for k, v in (raw.get("display_names") or {}).items()}
    for name, entry in (raw.get("collections") or {}).items():
        if isinstance(entry, dict) and entry.get("display_name"):
            names[str(name)] = str(entry["display_name"])
    extra = raw.get("extra_measures") or ()
    return MetaConfig(
        path=path,
        control=str(raw["control"]),
        treatment=str(raw["treatment"]),
        measure=raw.get("measure"),
        extra_measures=tuple([extra] if isinstance(extra, str) else extra),
        effect=raw.get("effect"),
        method=raw.get("method"),
        hk=bool(raw.get("hk", False)),
        collections=tuple(specs),
        scores=_path(base, scores, "scores", path) if scores is not None else None,
        display_names=names,
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
