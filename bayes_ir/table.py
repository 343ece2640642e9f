"""The score table: per-topic effectiveness scores of many systems, validated once.

Every method in bayes_ir reads a :class:`ScoreTable`. It is a long table with the
columns ``collection, measure, system, topic, score`` (one row per cell), plus the
roles of the systems (champion, challengers, artifacts) once they are assigned
with :meth:`ScoreTable.with_roles`. The topic x system matrix of one collection
and measure is available as an :class:`xarray.DataArray` through
:meth:`ScoreTable.matrix`.

Several runs of a system (seeds, cross-validation folds, samples of an LLM) are
replicates: the table then has a ``replicate`` column before ``score`` and one row per
replicate of a cell. Methods that need one score per cell refuse such a table
(:meth:`ScoreTable.require_one_per_cell`); :meth:`ScoreTable.mean_over_replicates` and
:meth:`ScoreTable.one_replicate` turn it into one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import validate
from bayes_ir.errors import InsufficientDataError, OptionError, ScoreTableError
from bayes_ir.measures import canonical_measure
from bayes_ir.roles import Roles, assign_roles, check_known
from bayes_ir.table_checks import (
    COLUMNS,
    DEFAULT_COLLECTION,
    DEFAULT_MEASURE,
    REPLICATE,
    Missing,
    check_frame,
    drop_single_replicates,
    natural_sorted,
)

#: Public names; the load-time checks (column names, natural order of names) live in
#: :mod:`bayes_ir.table_checks`.
__all__ = [
    "COLUMNS",
    "DEFAULT_COLLECTION",
    "DEFAULT_MEASURE",
    "REPLICATE",
    "Missing",
    "ScoreTable",
    "concat",
]


@dataclass(frozen=True)
class ScoreTable:
    """Validated per-topic scores of several systems.

    Build it with :func:`bayes_ir.read_scores` (files) or :meth:`ScoreTable.from_frame`
    (a pandas DataFrame); the constructor itself does not validate.

    Attributes
    ----------
    data
        Long DataFrame with the columns ``collection, measure, system, topic, score``
        (strings and float), sorted, one row per observed cell. A table with replicates
        has the column ``replicate`` (string labels) before ``score``, and one row per
        replicate of a cell, sorted by replicate (natural order) last.
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
        sources: Sequence[str] | np.ndarray | None = None,
    ) -> ScoreTable:
        """Validate a long DataFrame of scores and build a table.

        Parameters
        ----------
        frame
            Columns ``system``, ``topic``, ``score`` and optionally ``collection`` and
            ``measure`` (the column names are matched case-insensitively; ``query_id``,
            ``qid`` and ``query`` are accepted for ``topic``, ``run`` for ``system``,
            ``value`` for ``score``), and optionally ``replicate`` (or one of ``seed``,
            ``fold``, ``repeat``, ``epoch``, ``trial``, ``run_seed``): the label of each
            run of a system, one score per (collection, measure, system, topic, replicate).
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
        sources
            The file each row of ``frame`` was read from (readers of several files pass
            it so that errors name the file, and with ``lines`` its line, instead of a row
            of ``source``).

        Returns
        -------
        ScoreTable
        """
        df, more = check_frame(
            frame,
            collection=collection,
            measure=measure,
            missing=missing,
            source=source,
            check_range=check_range,
            lines=lines,
            sources=sources,
        )
        return cls(data=df, source=source, missing=missing, notes=(*notes, *more))

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
        """Build a table from a topic x system matrix (rows topics, columns systems).

        A NaN cell is a missing cell (the system has no score for the topic): it is
        refused unless ``missing`` is ``"keep"`` or ``"intersect"``, like a gap in a
        tidy table. Infinite scores are refused.
        """
        if np.ndim(matrix) != 2:
            raise OptionError(
                f"from_matrix needs a 2-D topic x system matrix, got shape {np.shape(matrix)}"
            )
        wide = pd.DataFrame(matrix)
        names = {
            "topic": list(wide.index) if topics is None else list(topics),
            "system": list(wide.columns) if systems is None else list(systems),
        }
        for axis, n in (("topic", wide.shape[0]), ("system", wide.shape[1])):
            if len(names[axis]) != n:
                raise OptionError(f"{len(names[axis])} {axis} names for {n} {axis}s of the matrix")
        # one row per cell, topic by topic; the labels as categoricals of the distinct
        # names (equal names merge, so a repeated name is a duplicate cell downstream; a
        # missing name, None or NaN, is an empty one, refused by the check)
        topic = pd.Categorical(["" if _is_missing(t) else str(t) for t in names["topic"]])
        system = pd.Categorical(["" if _is_missing(s) else str(s) for s in names["system"]])
        n_t, n_s = wide.shape
        score = wide.to_numpy().ravel()
        kept = np.flatnonzero(~pd.isna(score))
        if score.size and not kept.size:
            raise ScoreTableError("no scores found: every cell of the matrix is NaN", source=source)
        long = pd.DataFrame(
            {
                "topic": pd.Categorical.from_codes(
                    topic.codes[kept // n_s], categories=topic.categories
                ),
                "system": pd.Categorical.from_codes(
                    system.codes[kept % n_s], categories=system.categories
                ),
                "score": score[kept],
            }
        )
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
        return tuple(natural_sorted(self.data["topic"].unique()))

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
        for _, block in self._cells().groupby(["collection", "measure"], sort=False):
            if len(block) != block["topic"].nunique() * block["system"].nunique():
                return False
        return True

    # ------------------------------------------------------------------ replicates
    @property
    def has_replicates(self) -> bool:
        """True when the table holds several runs (replicates) of some system."""
        return REPLICATE in self.data

    def replicates(self, system: str | None = None) -> tuple[str, ...]:
        """Replicate labels in natural order: of the whole table, or of one ``system``.

        A table without replicates has none (an empty tuple).
        """
        if not self.has_replicates:
            return ()
        labels = self.data[REPLICATE]
        if system is not None:
            check_known([system], self.data["system"].unique())
            labels = labels[self.data["system"] == system]
        return tuple(natural_sorted(labels.unique()))

    def require_one_per_cell(self, what: str) -> None:
        """Raise :class:`ScoreTableError` when the table has replicates.

        Parameters
        ----------
        what
            The method that needs one score per (topic, system) cell, named in the message.

        Raises
        ------
        ScoreTableError
            One line naming the source and the number of replicates per system, and the
            two ways on: a model of replicates, or their average.
        """
        if not self.has_replicates:
            return
        counts = self.data.groupby("system", sort=False)[REPLICATE].nunique()
        low, high = int(counts.min()), int(counts.max())
        n = str(high) if low == high else f"{low} to {high}"
        raise ScoreTableError(
            f"{n} replicates per system (runs such as seeds or folds), but {what} needs one "
            "score per cell: fit them with fit_replicates (bayes-ir fit, decide and review "
            "do), or average them with table.mean_over_replicates()",
            source=self.source,
        )

    def mean_over_replicates(self) -> ScoreTable:
        """Return the table with each cell's score averaged over its replicates.

        Returns
        -------
        ScoreTable
            No ``replicate`` column, one row per (collection, measure, system, topic);
            roles kept; a note says how many replicates were averaged. A table without
            replicates is returned as it is.
        """
        if not self.has_replicates:
            return self
        counts = self.data.groupby("system", sort=False)[REPLICATE].nunique()
        note = f"scores averaged over {int(counts.max())} replicate(s) per system"
        if counts.min() != counts.max():
            note = f"scores averaged over {int(counts.min())} to {int(counts.max())} replicates"
            note += " per system"
        return replace(self, data=self._cells(), notes=(*self.notes, note))

    def one_replicate(self, replicate: str | int) -> ScoreTable:
        """Return each system's run of one replicate (one score per cell).

        Parameters
        ----------
        replicate
            A label (every system must have it), or an index ``k``: each system's ``k``-th
            replicate in natural order (0 is the first), so that systems with different
            labels can be compared run by run.

        Returns
        -------
        ScoreTable
            No ``replicate`` column; roles kept; a note names the replicate.

        Raises
        ------
        ScoreTableError
            A table without replicates, or a system without that label or index.
        """
        if not self.has_replicates:
            raise ScoreTableError("the table has no replicates to choose from", source=self.source)
        index = (
            None
            if isinstance(replicate, str)
            else validate.integer("replicate", replicate, minimum=0)
        )
        which = f"{replicate!r}" if index is None else f"number {index} (counted from 0)"
        df = self.data
        keep = np.zeros(len(df), dtype=bool)
        for system in df["system"].unique():
            own = self.replicates(system)
            label = replicate if index is None else own[index] if index < len(own) else None
            if label not in own:
                raise ScoreTableError(
                    f"system {system!r} has no replicate {which} (its replicates: "
                    f"{', '.join(own)})",
                    source=self.source,
                )
            keep |= ((df["system"] == system) & (df[REPLICATE] == label)).to_numpy()
        data = df[keep].drop(columns=REPLICATE).reset_index(drop=True)
        return replace(
            self, data=data, notes=(*self.notes, f"replicate {which} of each system only")
        )

    def _cells(self) -> pd.DataFrame:
        """Return the data with one row per cell: the mean over replicates, if any."""
        if not self.has_replicates:
            return self.data
        keys = ["collection", "measure", "system", "topic"]
        return self.data.groupby(keys, sort=False, observed=True)["score"].mean().reset_index()

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
        sub, single = drop_single_replicates(sub)
        return replace(self, data=sub, roles=roles, notes=(*self.notes, *single))

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
        table = (
            self
            if collection is None and measure is None
            else self.select(collection=collection, measure=measure)
        )
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
        self.require_one_per_cell("a topic x system matrix")
        block, coll, meas = self._single_block(collection, measure)
        topic_codes, topic_names = pd.factorize(block["topic"])
        system_codes, system_names = pd.factorize(block["system"])
        present = set(system_names)
        systems = [s for s in self.systems if s in present]
        topics = natural_sorted(topic_names)
        values = np.full((len(topics), len(systems)), np.nan)
        rows = _positions(topic_codes, topic_names, topics)
        cols = _positions(system_codes, system_names, systems)
        kept = cols >= 0  # a system outside self.systems has no column (as a reindex drops it)
        values[rows[kept], cols[kept]] = block["score"].to_numpy(dtype=float)[kept]
        da = xr.DataArray(
            values,
            dims=("topic", "system"),
            coords={"topic": list(topics), "system": systems},
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
            validate.require_topics(
                block["topic"].nunique(),
                n_min,
                method=method,
                where=f"collection {coll!r}, measure {meas!r} in {self.source}",
            )

    def to_frame(self) -> pd.DataFrame:
        """Return the long table (a copy) with a ``role`` column when roles are set."""
        df = self.data.copy()
        if self.roles is not None:
            df["role"] = df["system"].map(self.roles.role_of)
        return df

    def system_means(self) -> pd.DataFrame:
        """Mean, SD and number of topics per (collection, measure, system).

        With replicates, each cell is first averaged over its replicates.
        """
        g = self._cells().groupby(["collection", "measure", "system"], sort=False)["score"]
        out = g.agg(mean="mean", sd="std", n_topics="count").reset_index()
        if self.roles is not None:
            out["role"] = out["system"].map(self.roles.role_of)
        return out

    def summary(self, *, notes: bool = True) -> str:
        """Human-readable description: sizes, roles, missing cells and (``notes``) loader notes."""
        lines = [f"ScoreTable from {self.source}"]
        sizes = (
            self._cells()
            .groupby(["collection", "measure"], sort=False)
            .agg(n_t=("topic", "nunique"), n_s=("system", "nunique"), n=("topic", "size"))
        )
        for (coll, meas), n_t, n_s, n in sizes.itertuples(name=None):
            gaps = n_t * n_s - n
            lines.append(
                f"  collection {coll!r}, measure {meas!r}: {n_t} topics x {n_s} systems"
                + (f", {gaps} missing cells" if gaps else "")
            )
        if self.has_replicates:
            counts = self.data.groupby("system", sort=False)[REPLICATE].nunique()
            shown = ", ".join(f"{s} {n}" for s, n in counts.items())
            lines.append(f"  replicates per system: {shown}")
        if self.roles is not None:
            lines.append(f"  {self.roles.describe()}")
        if notes:
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


def concat(tables: Sequence[ScoreTable], *, source: str | None = None) -> ScoreTable:
    """Stack several tables (e.g. one per collection) into one, validating the result.

    When some tables have replicates, the rows of those without are replicate ``"1"``.
    """
    if not tables:
        raise InsufficientDataError("concat needs at least one table")
    frame = pd.concat([t.data for t in tables], ignore_index=True)
    notes = [n for t in tables for n in t.notes]
    single = [t.source for t in tables if not t.has_replicates]
    if REPLICATE in frame and single:
        frame[REPLICATE] = frame[REPLICATE].fillna("1")
        notes.append(f"{', '.join(single)}: one run per system, read as replicate '1'")
    return ScoreTable.from_frame(
        frame,
        source=source or " + ".join(t.source for t in tables),
        missing=tables[0].missing,
        notes=notes,
    )


def _is_missing(label: Any) -> bool:
    """Tell whether a name is a scalar missing value (None, NaN, pd.NA)."""
    return label is None or (np.ndim(label) == 0 and bool(pd.isna(label)))


def _positions(codes: np.ndarray, uniques: Sequence[str], order: Sequence[str]) -> np.ndarray:
    """Position in ``order`` of each label ``uniques[codes]`` (``pd.factorize``), -1 if absent."""
    return pd.Index(list(order)).get_indexer(uniques)[codes]
