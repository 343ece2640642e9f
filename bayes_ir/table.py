"""The score table: per-topic effectiveness scores of many systems, validated once.

Every method in bayes_ir reads a :class:`ScoreTable`. It is a long table with the
columns ``collection, measure, system, topic, score`` (one row per cell), plus the
roles of the systems (champion, challengers, artifacts) once they are assigned
with :meth:`ScoreTable.with_roles`. The topic x system matrix of one collection
and measure is available as an :class:`xarray.DataArray` through
:meth:`ScoreTable.matrix`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir.defaults import RANGE_TOLERANCE
from bayes_ir.errors import DataWarning, InsufficientDataError, OptionError, ScoreTableError
from bayes_ir.measures import canonical_measure, measure_range
from bayes_ir.roles import Roles, assign_roles, check_known

COLUMNS: tuple[str, ...] = ("collection", "measure", "system", "topic", "score")
#: Default collection and measure names when the input does not say.
DEFAULT_COLLECTION = "default"
DEFAULT_MEASURE = "score"

Missing = Literal["error", "intersect", "keep"]


@dataclass(frozen=True)
class ScoreTable:
    """Validated per-topic scores of several systems.

    Build it with :func:`bayes_ir.read_scores` (files) or :meth:`ScoreTable.from_frame`
    (a pandas DataFrame); the constructor itself does not validate.

    Attributes
    ----------
    data
        Long DataFrame with the columns ``collection, measure, system, topic, score``
        (strings and float), sorted, one row per observed cell.
    roles
        Champion, challengers and artifacts, or ``None`` before roles are assigned.
    source
        Where the scores came from (file names), for error messages and provenance.
    missing
        How missing (topic, system) cells were handled at load time.
    notes
        Messages about what the loader changed or excluded (shown by ``summary()``).
    """

    data: pd.DataFrame
    roles: Roles | None = None
    source: str = "<DataFrame>"
    missing: Missing = "error"
    notes: tuple[str, ...] = field(default=())

    # ------------------------------------------------------------------ building
    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        collection: str | None = None,
        measure: str | None = None,
        missing: Missing = "error",
        source: str = "<DataFrame>",
        check_range: bool = True,
        notes: Sequence[str] = (),
        lines: Sequence[int] | np.ndarray | None = None,
    ) -> ScoreTable:
        """Validate a long DataFrame of scores and build a table.

        Parameters
        ----------
        frame
            Columns ``system``, ``topic``, ``score`` and optionally ``collection`` and
            ``measure`` (the column names are matched case-insensitively; ``query_id``,
            ``qid`` and ``query`` are accepted for ``topic``, ``run`` for ``system``,
            ``value`` for ``score``).
        collection, measure
            Values for the columns when the frame has none.
        missing
            What to do when a system lacks some topics of its collection and measure:
            ``"error"`` (default) raises; ``"intersect"`` keeps only the topics every
            system has (and says so in ``notes``); ``"keep"`` keeps the gaps for methods
            that allow missing cells.
        source
            Name used in error messages.
        check_range
            Reject scores outside the measure's range (e.g. [0, 1] for ``nDCG@10``).
        notes
            Messages from the reader to carry along.
        lines
            The 1-based line number in ``source`` of each row of ``frame`` (readers pass
            it so that errors name the line instead of the row).

        Returns
        -------
        ScoreTable
        """
        df = _normalise_columns(frame, source=source)
        if lines is not None:
            if len(lines) != len(df):
                raise OptionError(f"lines has {len(lines)} entries for {len(df)} rows")
            df["_line"] = np.asarray(lines, dtype=np.int64)
        else:
            df["_line"] = np.arange(1, len(df) + 1, dtype=np.int64)
        where = _Where(source=source, has_lines=lines is not None)
        if "collection" not in df:
            df["collection"] = collection or DEFAULT_COLLECTION
        if "measure" not in df:
            df["measure"] = measure or DEFAULT_MEASURE
        if missing not in ("error", "intersect", "keep"):
            raise ScoreTableError(
                f"missing must be 'error', 'intersect' or 'keep', got {missing!r}", source=source
            )
        df = df[[*COLUMNS, "_line"]].reset_index(drop=True)
        if df.empty:
            raise ScoreTableError("no scores found (the input is empty)", source=source)
        for col in _LABELS:
            df[col] = _labels(df, col, where=where)
        given = df["measure"]
        df["measure"], spelled = _canonical_measures(given)
        df["score"] = _numeric_scores(df, where=where)
        order = _check_duplicates(df, where=where)
        if check_range:
            _check_range(df, given=given, where=where)
        df = df.take(order).drop(columns="_line")  # sorted by collection, measure, system, topic
        complete = _is_complete(df)
        for col in _LABELS:
            df[col] = _as_str(df[col])
        df = df.reset_index(drop=True)
        more_notes: list[str] = []
        if not complete:
            df, more_notes = _handle_missing(df, missing=missing, source=source)
        return cls(
            data=df.reset_index(drop=True),
            source=source,
            missing=missing,
            notes=tuple(notes) + tuple(spelled) + tuple(more_notes),
        )

    @classmethod
    def from_matrix(
        cls,
        matrix: np.ndarray | pd.DataFrame,
        *,
        systems: Sequence[str] | None = None,
        topics: Sequence[str] | None = None,
        collection: str | None = None,
        measure: str | None = None,
        source: str = "<matrix>",
        missing: Missing = "error",
    ) -> ScoreTable:
        """Build a table from a topic x system matrix (rows topics, columns systems)."""
        wide = pd.DataFrame(matrix).copy()
        if systems is not None:
            wide.columns = list(systems)
        if topics is not None:
            wide.index = list(topics)
        wide.index = wide.index.map(str)
        wide.columns = wide.columns.map(str)
        long = wide.rename_axis(index="topic", columns="system").stack(future_stack=True)
        long = long.rename("score").reset_index()
        return cls.from_frame(
            long, collection=collection, measure=measure, source=source, missing=missing
        )

    # ------------------------------------------------------------------ looking
    @property
    def collections(self) -> tuple[str, ...]:
        """Collections in the table, in sorted order."""
        return tuple(self.data["collection"].unique())

    @property
    def measures(self) -> tuple[str, ...]:
        """Measures in the table, in sorted order."""
        return tuple(self.data["measure"].unique())

    @property
    def systems(self) -> tuple[str, ...]:
        """Systems, in role order (champion, challengers, artifacts) once roles are set."""
        names = tuple(self.data["system"].unique())
        if self.roles is None:
            return names
        return self.roles.ordered

    @property
    def topics(self) -> tuple[str, ...]:
        """Topics present for at least one system, sorted naturally (numbers as numbers)."""
        return tuple(_natural_sorted(self.data["topic"].unique()))

    @property
    def champion(self) -> str:
        """Name of the champion (requires roles)."""
        return self._require_roles().champion

    @property
    def challengers(self) -> tuple[str, ...]:
        """Names of the challengers (requires roles)."""
        return self._require_roles().challengers

    @property
    def artifacts(self) -> tuple[str, ...]:
        """Names of the artifact runs (requires roles)."""
        return self._require_roles().artifacts

    @property
    def is_complete(self) -> bool:
        """True when every (collection, measure) block has a score for every topic x system."""
        for _, block in self.data.groupby(["collection", "measure"], sort=False):
            if len(block) != block["topic"].nunique() * block["system"].nunique():
                return False
        return True

    def __len__(self) -> int:
        return len(self.data)

    # ------------------------------------------------------------------ selecting
    def select(
        self,
        *,
        collection: str | None = None,
        measure: str | Sequence[str] | None = None,
        systems: Iterable[str] | None = None,
        topics: Iterable[str] | None = None,
    ) -> ScoreTable:
        """Return the sub-table of one collection, some measures, some systems or topics.

        ``measure`` is one measure or several (a list); a name the table spells
        differently selects its own spelling (``P_10`` selects ``P@10``). Roles are kept
        for the systems that remain; a champion that is removed drops the roles altogether.
        """
        df = self.data
        mask = np.ones(len(df), dtype=bool)
        present = set(df["measure"].unique())
        measures = [measure] if isinstance(measure, str) else measure
        if measures is not None:
            measures = [m if m in present else canonical_measure(m) for m in measures]
        for col, values in (
            ("collection", None if collection is None else [collection]),
            ("measure", measures),
        ):
            if values is not None:
                for value in values:
                    if value not in set(df[col].unique()):
                        raise ScoreTableError(
                            f"{col} {value!r} is not in the data "
                            f"(have: {', '.join(df[col].unique())})",
                            source=self.source,
                        )
                mask &= df[col].isin(values).to_numpy()
        if systems is not None:
            systems = list(systems)
            check_known(systems, df["system"].unique())
            mask &= df["system"].isin(systems).to_numpy()
        if topics is not None:
            mask &= df["topic"].isin([str(t) for t in topics]).to_numpy()
        sub = df[mask].reset_index(drop=True)
        if sub.empty:
            raise ScoreTableError(
                "the selection leaves no score (check the topics and systems asked for)",
                source=self.source,
            )
        roles = self.roles.restrict(sub["system"].unique()) if self.roles is not None else None
        return replace(self, data=sub, roles=roles)

    def with_roles(
        self,
        *,
        champion: str,
        challengers: str | Iterable[str] | None = None,
        artifacts: str | Iterable[str] | None = None,
        exclude: str | Iterable[str] | None = None,
        drop_bottom: float = 0.0,
        top_m: int | None = None,
    ) -> ScoreTable:
        r"""Assign roles and return a new table restricted to the systems that have one.

        Parameters
        ----------
        champion
            Exact name of the production system.
        challengers
            Names, glob patterns (``"chal*"``) or regular expressions (``"re:^Chal\."``)
            of the candidate systems; a path to a text file (one pattern per line) also works.
        artifacts
            Patterns of the background runs; ``None`` means every other system, ``[]`` none.
        exclude
            Patterns of systems that must not be artifacts (e.g. runs fused into a challenger).
        drop_bottom
            Fraction of artifact runs with the lowest mean score to drop (the paper uses 0.25).
        top_m
            Keep only the ``top_m`` artifacts by mean score (after ``drop_bottom``).

        Returns
        -------
        ScoreTable
            With :attr:`roles` set and only champion, challengers and artifacts left.
        """
        means = self.data.groupby("system")["score"].mean()
        try:
            roles = assign_roles(
                means,
                champion=champion,
                challengers=challengers,
                artifacts=artifacts,
                exclude=exclude,
                drop_bottom=drop_bottom,
                top_m=top_m,
            )
        except ScoreTableError as exc:
            raise exc.located(self.source) from None
        sub = self.data[self.data["system"].isin(roles.ordered)].reset_index(drop=True)
        return replace(self, data=sub, roles=roles)

    def _require_roles(self) -> Roles:
        if self.roles is None:
            raise ScoreTableError(
                "no roles assigned: call table.with_roles(champion=..., challengers=...) first",
                source=self.source,
            )
        return self.roles

    def _single_block(
        self, collection: str | None, measure: str | None
    ) -> tuple[pd.DataFrame, str, str]:
        table = self.select(collection=collection, measure=measure)
        for col, name in (("collection", "collections"), ("measure", "measures")):
            values = table.data[col].unique()
            if len(values) > 1:
                raise ScoreTableError(
                    f"the table holds several {name} ({', '.join(values)}): "
                    f"pass {col}=... to choose one",
                    source=self.source,
                )
        return table.data, table.data["collection"].iat[0], table.data["measure"].iat[0]

    # ------------------------------------------------------------------ views
    def matrix(self, *, collection: str | None = None, measure: str | None = None) -> xr.DataArray:
        """Return the topic x system score matrix of one collection and measure.

        Missing cells (only possible with ``missing="keep"``) are NaN. Systems follow
        :attr:`systems` (role order); with roles the ``role`` coordinate labels them.

        Returns
        -------
        xarray.DataArray
            dims ``("topic", "system")``, attrs ``collection``, ``measure``, ``source``.
        """
        block, coll, meas = self._single_block(collection, measure)
        wide = block.pivot(index="topic", columns="system", values="score")
        systems = [s for s in self.systems if s in wide.columns]
        wide = wide.reindex(index=_natural_sorted(wide.index), columns=systems)
        da = xr.DataArray(
            wide.to_numpy(dtype=float),
            dims=("topic", "system"),
            coords={"topic": list(wide.index), "system": systems},
            name="score",
            attrs={"collection": coll, "measure": meas, "source": self.source},
        )
        if self.roles is not None:
            da = da.assign_coords(role=("system", [self.roles.role_of(s) for s in systems]))
        return da

    def wide(self, *, collection: str | None = None, measure: str | None = None) -> pd.DataFrame:
        """Return :meth:`matrix` as a pandas DataFrame (index topic, columns system)."""
        return self.matrix(collection=collection, measure=measure).to_pandas()

    def blocks(self) -> list[tuple[str, str]]:
        """Return the (collection, measure) pairs present, in order."""
        pairs = self.data[["collection", "measure"]].drop_duplicates()
        return [tuple(p) for p in pairs.itertuples(index=False, name=None)]

    def require_topics(self, n_min: int, *, method: str) -> None:
        """Raise :class:`InsufficientDataError` if any block has fewer than ``n_min`` topics."""
        for (coll, meas), block in self.data.groupby(["collection", "measure"], sort=False):
            n = block["topic"].nunique()
            if n < n_min:
                raise InsufficientDataError(
                    f"{method} needs at least {n_min} topics; collection {coll!r}, "
                    f"measure {meas!r} in {self.source} has {n}"
                )

    def to_frame(self) -> pd.DataFrame:
        """Return the long table (a copy) with a ``role`` column when roles are set."""
        df = self.data.copy()
        if self.roles is not None:
            df["role"] = df["system"].map(self.roles.role_of)
        return df

    def system_means(self) -> pd.DataFrame:
        """Mean, SD and number of topics per (collection, measure, system)."""
        g = self.data.groupby(["collection", "measure", "system"], sort=False)["score"]
        out = g.agg(mean="mean", sd="std", n_topics="count").reset_index()
        if self.roles is not None:
            out["role"] = out["system"].map(self.roles.role_of)
        return out

    def summary(self) -> str:
        """Human-readable description: sizes, roles, missing cells and loader notes."""
        lines = [f"ScoreTable from {self.source}"]
        sizes = self.data.groupby(["collection", "measure"], sort=False).agg(
            n_t=("topic", "nunique"), n_s=("system", "nunique"), n=("topic", "size")
        )
        for (coll, meas), n_t, n_s, n in sizes.itertuples(name=None):
            gaps = n_t * n_s - n
            lines.append(
                f"  collection {coll!r}, measure {meas!r}: {n_t} topics x {n_s} systems"
                + (f", {gaps} missing cells" if gaps else "")
            )
        if self.roles is not None:
            lines.append(f"  {self.roles.describe()}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (
            f"ScoreTable(source={self.source!r}, collections={len(self.collections)}, "
            f"measures={len(self.measures)}, systems={self.data['system'].nunique()}, "
            f"topics={self.data['topic'].nunique()}, roles={'set' if self.roles else 'none'})"
        )


# ---------------------------------------------------------------------- helpers
_ALIASES = {
    "query_id": "topic",
    "topic_id": "topic",
    "qid": "topic",
    "query": "topic",
    "sample": "topic",
    "run": "system",
    "run_id": "system",
    "model": "system",
    "value": "score",
    "metric": "measure",
    "task": "collection",
    "dataset": "collection",
}


def _normalise_columns(frame: pd.DataFrame, *, source: str) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ScoreTableError(
            f"expected a pandas DataFrame, got {type(frame).__name__}", source=source
        )
    df = frame  # renamed below into a new frame: columns are replaced, never written into
    renamed = {}
    for col in df.columns:
        key = str(col).strip().lower()
        renamed[col] = _ALIASES.get(key, key)
    df = df.rename(columns=renamed)
    if df.columns.duplicated().any():
        dup = df.columns[df.columns.duplicated()][0]
        raise ScoreTableError(
            f"column {dup!r} appears twice (after matching aliases)", source=source
        )
    needed = {"system", "topic", "score"}
    if not needed <= set(df.columns):
        raise ScoreTableError(
            f"missing column(s) {sorted(needed - set(df.columns))}; a tidy table needs "
            f"system, topic, score (and optionally collection, measure); got {list(frame.columns)}",
            source=source,
        )
    return df


@dataclass(frozen=True)
class _Where:
    """Locate row ``i`` of a frame for an error: the file line, or the row number."""

    source: str
    has_lines: bool

    def __call__(self, df: pd.DataFrame, i: int) -> dict:
        line = int(df["_line"].iat[i])
        if self.has_lines:
            return {"source": self.source, "line": line}
        return {"source": f"{self.source} row {line}"}


#: The label columns of the table (strings); ``score`` is the only number.
_LABELS = ("collection", "measure", "system", "topic")


def _labels(df: pd.DataFrame, col: str, *, where: _Where) -> pd.Categorical:
    """Column ``col`` as stripped strings, a categorical with sorted categories.

    Only the distinct values are turned into text and stripped (no per-row Python), so
    that millions of rows cost a hash table, not millions of string operations.

    Raises
    ------
    ScoreTableError
        At the first row whose name is missing or blank.
    """
    values = df[col]
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes, uniques = values.cat.codes.to_numpy(), values.cat.categories
    else:
        codes, uniques = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=True)
    text = pd.Index(uniques, dtype=object).astype(str).str.strip()
    blank = np.append(np.asarray(text == ""), True)  # the last slot: code -1, a missing name
    empty = blank[np.where(codes < 0, len(text), codes)]
    if empty.any():
        raise ScoreTableError(f"empty {col} name", **where(df, int(np.flatnonzero(empty)[0])))
    return _recode(codes, text)


def _recode(codes: np.ndarray, names: pd.Index) -> pd.Categorical:
    """Categorical of ``names[codes]``, equal names merged, categories in sorted order."""
    merged, categories = pd.factorize(np.asarray(names, dtype=object), sort=True)
    return pd.Categorical.from_codes(merged[codes], categories=pd.Index(categories, dtype=object))


def _is_complete(df: pd.DataFrame) -> bool:
    """Tell whether every (collection, measure) block has every topic x system.

    ``df`` is sorted by its categorical labels, so each block is one slice of rows.
    """
    coll, meas, system, topic = (df[col].cat.codes.to_numpy() for col in _LABELS)
    cuts = np.flatnonzero((coll[1:] != coll[:-1]) | (meas[1:] != meas[:-1])) + 1
    for start, stop in zip(np.r_[0, cuts], np.r_[cuts, len(df)], strict=True):
        n_systems = 1 + int(np.count_nonzero(system[start + 1 : stop] != system[start : stop - 1]))
        n_topics = int(np.count_nonzero(np.bincount(topic[start:stop])))
        if stop - start != n_systems * n_topics:
            return False
    return True


def _as_str(values: pd.Series) -> pd.Series:
    """Return a categorical column in the dtype ``astype(str)`` gives (no per-row Python).

    With pandas' Arrow-backed strings, the names are gathered by Arrow's ``take``; else
    through an object array of the (shared) category strings.
    """
    cat = values.array
    names = np.asarray(cat.categories, dtype=object)
    target = pd.Series(["x"], dtype=object).astype(str).dtype
    try:
        import pyarrow as pa

        out = pa.array(names, type=pa.string()).take(pa.array(cat.codes)).to_pandas()
    except ImportError:
        out = None
    if out is None or out.dtype != target:
        out = pd.Series(names[cat.codes], dtype=object).astype(str)
    return out.set_axis(values.index).rename(values.name)


def _canonical_measures(measures: pd.Series) -> tuple[pd.Categorical, list[str]]:
    """Measure names in their canonical spelling, and a note per name that was respelled.

    ``P_10`` becomes ``P@10`` (see :func:`bayes_ir.measures.canonical_measure`), so
    that range checks, labels and selections see one name per measure.
    """
    given = measures.cat.categories
    names = pd.Index([canonical_measure(m) for m in given], dtype=object)
    notes = [f"measure {g!r} is read as {n!r}" for g, n in zip(given, names, strict=True) if g != n]
    if not notes:
        return measures.array, []
    return _recode(measures.cat.codes.to_numpy(), names), notes


def _numeric_scores(df: pd.DataFrame, *, where: _Where) -> pd.Series:
    raw = df["score"]
    if pd.api.types.is_bool_dtype(raw):
        raw = raw.astype(float)
    if pd.api.types.is_float_dtype(raw) or pd.api.types.is_integer_dtype(raw):
        scores = raw.astype(float)
    else:
        numbers = raw if pd.api.types.is_complex_dtype(raw) else pd.to_numeric(raw, errors="coerce")
        if pd.api.types.is_complex_dtype(numbers):  # float() would drop the imaginary part
            i = int(np.argmax(np.imag(numbers.to_numpy()) != 0))  # the first complex score
            raise ScoreTableError(
                f"score {raw.iloc[i]!r} of system {df['system'].iloc[i]!r}, topic "
                f"{df['topic'].iloc[i]!r} is a complex number, not a real score",
                **where(df, i),
            )
        scores = numbers.astype(float)
        if scores.isna().any():
            text = raw.astype(str).str.strip().str.lower()
            bad = scores.isna() & ~(raw.isna() | text.isin(["nan", "-nan", "+nan"]))
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                shown = "" if raw.iloc[i] == "" else f" {raw.iloc[i]!r}"
                raise ScoreTableError(
                    f"score{shown} of system {df['system'].iloc[i]!r}, topic "
                    f"{df['topic'].iloc[i]!r} is not a number"
                    + (" (empty cell)" if not shown else ""),
                    **where(df, i),
                )
    nonfinite = ~np.isfinite(scores.to_numpy())
    if nonfinite.any():
        i = int(np.flatnonzero(nonfinite)[0])
        raise ScoreTableError(
            f"score {str(raw.iloc[i])!r} of system {df['system'].iloc[i]!r}, topic "
            f"{df['topic'].iloc[i]!r} is NaN or infinite; remove the row (and use "
            "missing='keep' or 'intersect' if the system then lacks the topic)",
            **where(df, i),
        )
    return scores


def _check_duplicates(df: pd.DataFrame, *, where: _Where) -> np.ndarray:
    """Raise on a repeated (collection, measure, system, topic); return the sorting order.

    The labels are categoricals with sorted categories, so sorting their codes (stable)
    sorts the rows by name and puts repeated keys next to each other.
    """
    codes = [df[col].cat.codes.to_numpy() for col in _LABELS]
    order = np.lexsort(codes[::-1])
    same = np.ones(max(len(order) - 1, 0), dtype=bool)
    for c in codes:
        ranked = c[order]
        same &= ranked[1:] == ranked[:-1]
    if not same.any():
        return order
    pairs = np.flatnonzero(same)  # sorted position p repeats position p + 1
    starts = pairs[(pairs == 0) | ~same[np.maximum(pairs - 1, 0)]]
    j = int(np.argmin(order[starts]))
    i, other = int(order[starts[j]]), int(order[starts[j] + 1])
    first = df.iloc[i]
    raise ScoreTableError(
        f"duplicate score for system {first['system']!r}, topic {first['topic']!r} "
        f"(collection {first['collection']!r}, measure {first['measure']!r}); "
        f"it appears again at {'line' if where.has_lines else 'row'} {int(df['_line'].iat[other])}",
        **where(df, i),
    )


def _check_range(df: pd.DataFrame, *, given: pd.Series, where: _Where) -> None:
    """Raise at the first score outside its measure's range (``given``: names as written)."""
    for meas in df["measure"].unique():
        lo, hi = measure_range(meas)
        if math.isinf(lo) and math.isinf(hi):
            continue
        in_block = (df["measure"] == meas).to_numpy()
        score = df["score"].to_numpy()
        bad = in_block & ((score < lo - RANGE_TOLERANCE) | (score > hi + RANGE_TOLERANCE))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            written = "" if given.iat[i] == meas else f" (written {given.iat[i]!r})"
            raise ScoreTableError(
                f"score {float(score[i])!r} of system {df['system'].iat[i]!r}, topic "
                f"{df['topic'].iat[i]!r} is outside the range [{lo:g}, {hi:g}] of measure "
                f"{meas!r}{written} (pass check_range=False if the scores are rescaled on "
                "purpose)",
                **where(df, i),
            )


def _handle_missing(
    df: pd.DataFrame, *, missing: Missing, source: str
) -> tuple[pd.DataFrame, list[str]]:
    """Apply the ``missing`` policy to each (collection, measure) block (no duplicates here)."""
    notes: list[str] = []
    counts = df.groupby(["collection", "measure"], sort=False).agg(
        n_rows=("topic", "size"), n_topics=("topic", "nunique"), n_systems=("system", "nunique")
    )
    complete = counts["n_rows"] == counts["n_topics"] * counts["n_systems"]
    if complete.all():
        return df, notes
    keep = []
    for (coll, meas), block in df.groupby(["collection", "measure"], sort=False):
        if complete[(coll, meas)]:
            keep.append(block)
            continue
        n_topics = counts.loc[(coll, meas), "n_topics"]
        per_system = block.groupby("system", sort=False)["topic"].size()
        lacking = per_system[per_system < n_topics]
        system = str(lacking.index[0])
        have = set(block.loc[block["system"] == system, "topic"])
        gaps = [t for t in block["topic"].unique() if t not in have]
        example = ", ".join(_natural_sorted(gaps)[:5])
        if missing == "error":
            raise ScoreTableError(
                f"system {system!r} has no score for {len(gaps)} topic(s) of collection {coll!r}, "
                f"measure {meas!r} (e.g. {example}); {len(lacking)} system(s) are incomplete. "
                "Use missing='intersect' to keep the common topics or missing='keep' to keep gaps",
                source=source,
            )
        if missing == "intersect":
            per_topic = block.groupby("topic", sort=False)["system"].size()
            n_systems = counts.loc[(coll, meas), "n_systems"]
            common = set(per_topic.index[per_topic == n_systems])
            dropped = [t for t in per_topic.index if t not in common]
            if not common:
                raise ScoreTableError(
                    f"collection {coll!r}, measure {meas!r}: no topic is shared by all systems",
                    source=source,
                )
            msg = (
                f"collection {coll!r}, measure {meas!r}: dropped {len(dropped)} topic(s) not "
                f"scored for every system ({', '.join(_natural_sorted(dropped)[:10])}"
                f"{', ...' if len(dropped) > 10 else ''})"
            )
            notes.append(msg)
            warnings.warn(msg, DataWarning, stacklevel=4)
            keep.append(block[block["topic"].isin(common)])
        else:
            n_gap = int(n_topics * len(per_system) - len(block))
            notes.append(f"collection {coll!r}, measure {meas!r}: {n_gap} missing cell(s) kept")
            keep.append(block)
    return pd.concat(keep, ignore_index=True), notes


def _natural_key(value: str) -> tuple:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def _natural_sorted(values: Iterable[str]) -> list[str]:
    return sorted((str(v) for v in values), key=_natural_key)


def concat(tables: Sequence[ScoreTable], *, source: str | None = None) -> ScoreTable:
    """Stack several tables (e.g. one per collection) into one, validating the result."""
    if not tables:
        raise InsufficientDataError("concat needs at least one table")
    frame = pd.concat([t.data for t in tables], ignore_index=True)
    return ScoreTable.from_frame(
        frame,
        source=source or " + ".join(t.source for t in tables),
        missing=tables[0].missing,
        notes=[n for t in tables for n in t.notes],
    )
