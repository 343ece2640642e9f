"""From a long DataFrame to the data of a :class:`~bayes_ir.table.ScoreTable`, checked once.

:func:`check_frame` is what :meth:`ScoreTable.from_frame <bayes_ir.table.ScoreTable.from_frame>`
runs: it matches the column names (:func:`column_name`), turns the labels into stripped
strings, canonicalises measure names, parses the scores, and refuses duplicated cells and
scores outside the measure's range, naming the file and line; then it handles the
missing (topic, system) cells as ``missing`` says. The readers share the column names
(:func:`normalise_columns`) and the order of names (:func:`natural_sorted`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from bayes_ir.defaults import RANGE_TOLERANCE
from bayes_ir.errors import DataWarning, OptionError, ScoreTableError
from bayes_ir.measures import canonical_measure, measure_range

__all__ = [
    "COLUMNS",
    "COLUMN_ALIASES",
    "DEFAULT_COLLECTION",
    "DEFAULT_MEASURE",
    "Missing",
    "REPLICATE",
    "check_frame",
    "column_name",
    "natural_sorted",
    "normalise_columns",
]

COLUMNS: tuple[str, ...] = ("collection", "measure", "system", "topic", "score")
#: The optional column of replicate labels (seeds, folds, samples), placed before ``score``.
REPLICATE = "replicate"
#: Default collection and measure names when the input does not say.
DEFAULT_COLLECTION = "default"
DEFAULT_MEASURE = "score"

Missing = Literal["error", "intersect", "keep"]


def check_frame(
    frame: pd.DataFrame,
    *,
    collection: str | None,
    measure: str | None,
    missing: Missing,
    source: str,
    check_range: bool,
    lines: Sequence[int] | np.ndarray | None,
    sources: Sequence[str] | np.ndarray | None = None,
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Validate a long DataFrame of scores (see :meth:`bayes_ir.table.ScoreTable.from_frame`).

    Parameters
    ----------
    frame, collection, measure, missing, source, check_range, lines, sources
        As in :meth:`bayes_ir.table.ScoreTable.from_frame`.

    Returns
    -------
    data : pandas.DataFrame
        The columns :data:`COLUMNS` (strings and float), sorted by collection, measure,
        system and topic, one row per observed cell. When the frame has a
        :data:`REPLICATE` column (or an alias such as ``seed``) and some system has
        several replicate labels, that column comes before ``score``, the rows are sorted
        by replicate (natural order) last, and a row is one replicate of a cell; with one
        label per system the column is dropped (a note says so).
    notes : tuple of str
        What was changed: measure names respelled, topics dropped or gaps kept.

    Raises
    ------
    ScoreTableError
        Naming the file and line (or row) of the first bad name, score, duplicate or
        out-of-range value; or a missing cell with ``missing="error"``.
    OptionError
        ``lines`` or ``sources`` does not have one entry per row.
    """
    df = normalise_columns(frame, source=source)
    if lines is not None:
        if len(lines) != len(df):
            raise OptionError(f"lines has {len(lines)} entries for {len(df)} rows")
        df["_line"] = np.asarray(lines, dtype=np.int64)
    else:
        df["_line"] = np.arange(1, len(df) + 1, dtype=np.int64)
    kept = ["_line"]
    if sources is not None:
        if len(sources) != len(df):
            raise OptionError(f"sources has {len(sources)} entries for {len(df)} rows")
        df["_source"] = np.asarray(sources, dtype=object)
        kept.append("_source")
    where = _Where(source=source, has_lines=lines is not None, per_row=sources is not None)
    for col, value in (
        ("collection", collection or DEFAULT_COLLECTION),
        ("measure", measure or DEFAULT_MEASURE),
    ):
        if col not in df:  # one name for every row: a categorical, no per-row strings
            df[col] = pd.Categorical.from_codes(np.zeros(len(df), dtype=np.int8), [str(value)])
    if missing not in ("error", "intersect", "keep"):
        raise ScoreTableError(
            f"missing must be 'error', 'intersect' or 'keep', got {missing!r}", source=source
        )
    labels = [*_LABELS, REPLICATE] if REPLICATE in df else list(_LABELS)
    df = df[[*labels, "score", *kept]].reset_index(drop=True)
    if df.empty:
        raise ScoreTableError("no scores found (the input is empty)", source=source)
    for col in labels:
        df[col] = _labels(df, col, where=where)
    if REPLICATE in df:
        df[REPLICATE] = _natural_order(df[REPLICATE])
    given = df["measure"]
    df["measure"], spelled = _canonical_measures(given)
    df["score"] = _numeric_scores(df, where=where)
    order = _check_duplicates(df, labels, where=where)
    if check_range:
        _check_range(df, given=given, where=where)
    df = df.take(order).drop(columns=kept)  # sorted by collection, measure, system, topic
    complete = _is_complete(df)
    for col in labels:
        df[col] = _as_str(df[col])
    df = df.reset_index(drop=True)
    more_notes: list[str] = []
    if not complete:
        df, more_notes = _handle_missing(df, missing=missing, source=source)
    df, single = drop_single_replicates(df)
    return df.reset_index(drop=True), (*spelled, *more_notes, *single)


def drop_single_replicates(data: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Drop the :data:`REPLICATE` column when every system has one label; say so in a note.

    Parameters
    ----------
    data
        A table's data (see :func:`check_frame`), with or without the column.

    Returns
    -------
    data : pandas.DataFrame
        ``data`` itself, or without the column when no system has two labels.
    notes : list of str
        One note when the column was dropped.
    """
    if REPLICATE not in data or data.groupby("system", sort=False)[REPLICATE].nunique().max() > 1:
        return data, []
    shown = ", ".join(natural_sorted(data[REPLICATE].unique())[:5])
    note = (
        f"every system has one replicate (label {shown}): one score per cell, "
        "the replicate column is dropped"
    )
    return data.drop(columns=REPLICATE), [note]


# ---------------------------------------------------------------------- helpers
#: Column names a tidy table may use for the five columns (``qid`` is ``topic``, ...) and for
#: :data:`REPLICATE` (``seed``, ``fold``, ...; not ``sample``, which names an item).
COLUMN_ALIASES = {
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
    "seed": REPLICATE,
    "fold": REPLICATE,
    "repeat": REPLICATE,
    "epoch": REPLICATE,
    "trial": REPLICATE,
    "run_seed": REPLICATE,
}


def column_name(name: object) -> str:
    """Return a column's name as the table reads it (``value`` is ``score``, ``qid`` ``topic``).

    Parameters
    ----------
    name
        A column label of a tidy table; compared stripped and case-insensitively.

    Returns
    -------
    str
        One of :data:`COLUMNS` when ``name`` is one of them or an alias in
        :data:`COLUMN_ALIASES`, else the lower-cased name.
    """
    key = str(name).strip().lower()
    return COLUMN_ALIASES.get(key, key)


def normalise_columns(frame: pd.DataFrame, *, source: str) -> pd.DataFrame:
    """Rename the columns of a tidy table to :data:`COLUMNS`, checking the needed ones.

    Parameters
    ----------
    frame
        A tidy table with at least ``system``, ``topic`` and ``score`` columns (or their
        aliases, see :func:`column_name`).
    source
        Where the frame came from, named in errors.

    Returns
    -------
    pandas.DataFrame
        A new frame with renamed columns (``frame`` is not changed).

    Raises
    ------
    ScoreTableError
        ``frame`` is not a DataFrame, a column appears twice after renaming, or a needed
        column is missing.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ScoreTableError(
            f"expected a pandas DataFrame, got {type(frame).__name__}", source=source
        )
    df = frame  # renamed below into a new frame: columns are replaced, never written into
    renamed = {}
    for col in df.columns:
        renamed[col] = column_name(col)
    df = df.rename(columns=renamed)
    if df.columns.duplicated().any():
        dup = df.columns[df.columns.duplicated()][0]
        both = " and ".join(repr(str(c)) for c in frame.columns if renamed[c] == dup)
        raise ScoreTableError(
            f"columns {both} both name the {dup} column (after matching aliases): keep one",
            source=source,
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
    """Locate row ``i`` of a frame for an error: the file and line, or the row number.

    ``per_row``: each row names its own file (column ``_source``; a reader of several
    files), else every row is of :attr:`source`.
    """

    source: str
    has_lines: bool
    per_row: bool = False

    def __call__(self, df: pd.DataFrame, i: int) -> dict:
        line = int(df["_line"].iat[i])
        source = str(df["_source"].iat[i]) if self.per_row else self.source
        if self.has_lines:
            return {"source": source, "line": line}
        if self.per_row:
            return {"source": source}
        return {"source": f"{source} row {line}"}

    def again(self, df: pd.DataFrame, i: int, *, first: int) -> str:
        """Say where row ``i`` is, after row ``first`` was named (``at line 9``, ``in b.json``)."""
        line = int(df["_line"].iat[i])
        if self.per_row and df["_source"].iat[i] != df["_source"].iat[first]:
            source = str(df["_source"].iat[i])
            return f"at {source}:{line}" if self.has_lines else f"in {source}"
        if self.per_row and not self.has_lines:
            return "in the same file"
        return f"at {'line' if self.has_lines else 'row'} {line}"


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


def _natural_order(values: pd.Series) -> pd.Categorical:
    """Return a categorical column with its categories in natural order (``2`` before ``10``)."""
    cat = values.array
    return cat.reorder_categories(natural_sorted(cat.categories))


def _recode(codes: np.ndarray, names: pd.Index) -> pd.Categorical:
    """Categorical of ``names[codes]``, equal names merged, categories in sorted order."""
    merged, categories = pd.factorize(np.asarray(names, dtype=object), sort=True)
    return pd.Categorical.from_codes(merged[codes], categories=pd.Index(categories, dtype=object))


def _is_complete(df: pd.DataFrame) -> bool:
    """Tell whether every (collection, measure) block has every topic x run.

    A run is a system, or one replicate of a system when the table has replicates.
    ``df`` is sorted by its categorical labels, so each block is one slice of rows.
    """
    coll, meas, system, topic = (df[col].cat.codes.to_numpy() for col in _LABELS)
    replicates = REPLICATE in df
    if replicates:  # one code per (system, replicate); the rows are not grouped by it
        system = system * len(df[REPLICATE].cat.categories) + df[REPLICATE].cat.codes.to_numpy()
    cuts = np.flatnonzero((coll[1:] != coll[:-1]) | (meas[1:] != meas[:-1])) + 1
    for start, stop in zip(np.r_[0, cuts], np.r_[cuts, len(df)], strict=True):
        run = np.sort(system[start:stop]) if replicates else system[start:stop]
        n_systems = 1 + int(np.count_nonzero(run[1:] != run[:-1]))
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


def _check_duplicates(df: pd.DataFrame, labels: Sequence[str], *, where: _Where) -> np.ndarray:
    """Raise on a repeated (collection, measure, system, topic[, replicate]); return the order.

    The labels are categoricals with sorted categories, so sorting their codes (stable)
    sorts the rows by name and puts repeated keys next to each other.
    """
    codes = [df[col].cat.codes.to_numpy() for col in labels]
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
    replicate = f", replicate {first[REPLICATE]!r}" if REPLICATE in labels else ""
    raise ScoreTableError(
        f"duplicate score for system {first['system']!r}, topic {first['topic']!r}{replicate} "
        f"(collection {first['collection']!r}, measure {first['measure']!r}); "
        f"it appears again {where.again(df, other, first=i)}",
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
    """Apply the ``missing`` policy to each (collection, measure) block (no duplicates here).

    The unit that must have every topic is a run: a system, or each replicate of a system.
    """
    notes: list[str] = []
    replicates = REPLICATE in df
    run = df["system"] + "\x00" + df[REPLICATE] if replicates else df["system"]
    df = df.assign(_run=run)
    counts = df.groupby(["collection", "measure"], sort=False).agg(
        n_rows=("topic", "size"), n_topics=("topic", "nunique"), n_runs=("_run", "nunique")
    )
    complete = counts["n_rows"] == counts["n_topics"] * counts["n_runs"]
    if complete.all():
        return df.drop(columns="_run"), notes
    keep = []
    what = "system/replicate run" if replicates else "system"
    for (coll, meas), block in df.groupby(["collection", "measure"], sort=False):
        if complete[(coll, meas)]:
            keep.append(block)
            continue
        n_topics = counts.loc[(coll, meas), "n_topics"]
        per_run = block.groupby("_run", sort=False)["topic"].size()
        lacking = per_run[per_run < n_topics]
        first = str(lacking.index[0])
        have = set(block.loc[block["_run"] == first, "topic"])
        gaps = [t for t in block["topic"].unique() if t not in have]
        example = ", ".join(natural_sorted(gaps)[:5])
        system, _, replicate = first.partition("\x00")
        named = f"system {system!r}" + (f", replicate {replicate!r}," if replicates else "")
        if missing == "error":
            raise ScoreTableError(
                f"{named} has no score for {len(gaps)} topic(s) of collection {coll!r}, "
                f"measure {meas!r} (e.g. {example}); {len(lacking)} {what}(s) are incomplete. "
                "Use missing='intersect' to keep the common topics or missing='keep' to keep gaps",
                source=source,
            )
        if missing == "intersect":
            per_topic = block.groupby("topic", sort=False)["_run"].size()
            common = set(per_topic.index[per_topic == counts.loc[(coll, meas), "n_runs"]])
            dropped = [t for t in per_topic.index if t not in common]
            if not common:
                raise ScoreTableError(
                    f"collection {coll!r}, measure {meas!r}: no topic is shared by all {what}s",
                    source=source,
                )
            msg = (
                f"collection {coll!r}, measure {meas!r}: dropped {len(dropped)} topic(s) not "
                f"scored for every {what} ({', '.join(natural_sorted(dropped)[:10])}"
                f"{', ...' if len(dropped) > 10 else ''})"
            )
            notes.append(msg)
            warnings.warn(msg, DataWarning, stacklevel=5)
            keep.append(block[block["topic"].isin(common)])
        else:
            n_gap = int(n_topics * len(per_run) - len(block))
            notes.append(f"collection {coll!r}, measure {meas!r}: {n_gap} missing cell(s) kept")
            keep.append(block)
    return pd.concat(keep, ignore_index=True).drop(columns="_run"), notes


def _natural_key(value: str) -> tuple:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def natural_sorted(values: Iterable[str]) -> list[str]:
    """Sort names as a reader counts: numbers by value first (``2`` before ``10``), then text.

    Parameters
    ----------
    values
        Topic or system names (converted with ``str``).

    Returns
    -------
    list of str
        The names, numeric ones in increasing value, then the others alphabetically.
    """
    return sorted((str(v) for v in values), key=_natural_key)
