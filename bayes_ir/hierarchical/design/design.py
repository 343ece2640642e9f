r"""A crossed design: the scores, an intercept per collection, and a list of terms.

.. math::

    y_i = b_{0,c(i)} + \sum_{j \ge 1} f_{j,i}\,\theta^{(j)}_{\ell_j(i)} + e_i,
    \qquad e_i \sim N(0, \sigma^2_{c(i)}),

(see :mod:`bayes_ir.hierarchical.design.terms` for a term). The builders make the
designs the package fits:

* :func:`two_way_design`: one collection, ``b0 + topic + system`` (the model of
  :func:`bayes_ir.hierarchical.fit`, Benham et al. 2020);
* :func:`collections_design`: several collections,
  :math:`y_{cts} = b_{0c} + a_{ct} + \beta_s + \gamma_{sc} + e_{cts}`, topics within
  collections with one topic SD and one residual SD per collection, one system SD
  and one system x collection SD (Corani et al. 2017's hierarchy of per-data-set
  differences, with topics crossed with systems inside each collection);
* :func:`segments_design`: one collection whose topics fall in segments,
  :math:`y_{ts} = b_{0g} + a_t + \beta_s + \gamma_{sg} + e_{ts}` with :math:`g = g(t)`
  (an intercept per segment, topics within segments);
* :func:`replicates_design`: one collection with several runs (seeds, folds, samples)
  per system, :math:`y_{tsr} = b_0 + a_t + \beta_s + (a\beta)_{ts} + \rho_{sr} + e_{tsr}`.

The system x collection (segment) effects sum to zero over the systems within each
collection, as the topic effects within a collection and the system effects do:
an i.i.d. normal effect conditioned on its sum, whose contrasts between systems have
exactly the distribution of the i.i.d. effect's (the sum moves into the intercept),
so a contrast's between-collection SD is :math:`\sqrt2\,\omega` either way.

References
----------
Benham, R., Carterette, B., Culpepper, J. S., Moffat, A. (2020). Bayesian inferential
risk evaluation on multiple IR systems. *SIGIR 2020*, 339-348.

Corani, G., Benavoli, A., Demsar, J., Mangili, F., Zaffalon, M. (2017). Statistical
comparison of classifiers through Bayesian hierarchical modelling. *Machine Learning*
106(11), 1817-1837.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.errors import InsufficientDataError, ScoreTableError
from bayes_ir.hierarchical.design.terms import Term, intercept_term, random_term
from bayes_ir.table import ScoreTable
from bayes_ir.table_checks import natural_sorted

if TYPE_CHECKING:
    from bayes_ir.hierarchical.model import Design

__all__ = [
    "SCALES",
    "SIGMAS",
    "CrossedDesign",
    "REPLICATE_SIGMAS",
    "collections_design",
    "replicates_design",
    "segments_design",
    "two_way_design",
]

#: Common scales of the system effects across collections: the measure itself, or each
#: collection's residual SD.
SCALES: tuple[str, ...] = ("auto", "measure", "sd")
#: Residual and topic SDs: one per collection, or one for all.
SIGMAS: tuple[str, ...] = ("collection", "pooled")
#: Run-to-run (replicate) SD: one for all systems, or one per system.
REPLICATE_SIGMAS: tuple[str, ...] = ("pooled", "system")


@dataclass(frozen=True, eq=False)
class CrossedDesign:
    """The observed cells of a crossed design and the terms every sampler reads.

    Attributes
    ----------
    y
        Score of every observed cell, shape (n,).
    terms
        The intercept ``b0`` first, then the random terms.
    residual
        The grouping of the residual SD: a term (kind ``"intercept"``) whose levels
        are the residual groups (one per collection, or one).
    cells
        Labels of every cell: ``collection, measure, topic, system`` (+ ``segment``).
    systems, roles
        Systems in role order and the role of each.
    by
        ``"collection"``, ``"segment"`` or ``None`` (the two-way design): the factor
        the system effects vary over.
    groups
        The levels of ``by`` in order (empty for the two-way design).
    scale
        ``"measure"`` (effects in the measure's units) or ``"sd"`` (system effects in
        units of each collection's residual SD).
    source
        Where the scores come from.
    """

    y: np.ndarray
    terms: tuple[Term, ...]
    residual: Term
    cells: pd.DataFrame
    systems: tuple[str, ...]
    roles: tuple[str, ...]
    by: str | None
    groups: tuple[str, ...]
    scale: str
    source: str

    @property
    def n_cells(self) -> int:
        """Number of observed cells."""
        return int(self.y.size)

    def term(self, name: str) -> Term:
        """Return the term called ``name``."""
        for t in self.terms:
            if t.name == name:
                return t
        raise KeyError(name)

    @property
    def champion(self) -> str:
        """The champion."""
        return self.systems[self.roles.index("champion")]

    @property
    def challengers(self) -> tuple[str, ...]:
        """The challengers, in order."""
        return tuple(s for s, r in zip(self.systems, self.roles, strict=True) if r == "challenger")

    @property
    def measures(self) -> dict[str, str]:
        """Measure of every collection."""
        first = self.cells.drop_duplicates("collection")
        return dict(zip(first["collection"], first["measure"], strict=True))

    def block(self, k: int) -> Design:
        """Return the two-way design of the cells of intercept level ``k``.

        A collection (or a segment) as :func:`~bayes_ir.hierarchical.model.design_of`
        lays one collection out: topics in sorted order, every system of the design as a
        column (NaN where it has no score there). For designs with one score per topic
        and system in each level (across collections or segments).
        """
        from bayes_ir.hierarchical.model import Design

        b0 = self.terms[0]
        mask = b0.index == k
        part = self.cells[mask]
        topics = tuple(sorted(pd.unique(part["topic"])))
        t = pd.Index(topics).get_indexer(part["topic"])
        s = pd.Index(self.systems).get_indexer(part["system"])
        matrix = np.full((len(topics), len(self.systems)), np.nan)
        matrix[t, s] = self.y[mask]
        t_idx, s_idx = np.nonzero(np.isfinite(matrix))
        return Design(
            topics=topics,
            systems=self.systems,
            roles=self.roles,
            topic_idx=t_idx.astype(np.int64),
            system_idx=s_idx.astype(np.int64),
            score=matrix[t_idx, s_idx],
            matrix=matrix,
            collection=str(part["collection"].iat[0]),
            measure=str(part["measure"].iat[0]),
            source=f"{self.source} ({b0.levels[k]})",
        )

    def data_hash(self) -> str:
        """SHA-256 of the cells' labels, the scores and the terms' names (provenance)."""
        h = hashlib.sha256()
        for col in self.cells.columns:
            h.update("\x1f".join(map(str, self.cells[col])).encode())
            h.update(b"\x1e")
        h.update(np.ascontiguousarray(self.y).tobytes())
        h.update("|".join(t.name for t in self.terms).encode())
        h.update(self.scale.encode())
        return h.hexdigest()

    def describe(self) -> str:
        """One line per term: name, levels, scales, constraint, units."""
        lines = []
        for t in (*self.terms, self.residual):
            name = "residual" if t is self.residual else t.name
            scales = f"{t.n_scales} scale{'s' if t.n_scales > 1 else ''}"
            if t.scale_dim:
                scales += f" (one per {t.scale_dim})"
            extra = ", zero-sum" if (t.zero_sum >= 0).any() else ""
            extra += ", in residual-SD units" if t.standardized else ""
            what = "fixed prior per level" if t.kind == "intercept" else scales
            if t is self.residual:
                what = scales
            lines.append(f"  {name:<18} {t.n_levels:>6} levels; {what}{extra}")
        return "\n".join(lines)


def _long(
    table: ScoreTable,
    measure: str | Mapping[str, str] | None,
    *,
    what: str,
    replicates: bool = False,
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """One measure per collection: the long frame, the systems and their roles.

    ``replicates``: the table must have a ``replicate`` column (several runs per cell);
    otherwise it must not.
    """
    validate.instance("table", table, ScoreTable)
    if table.roles is None:
        raise ScoreTableError(
            f"{what} needs roles: call table.with_roles(champion=..., challengers=...) first",
            source=table.source,
        )
    if not replicates:
        table.require_one_per_cell(what)
    df = table.data
    parts = []
    for coll in table.collections:
        block = df[df["collection"] == coll]
        have = list(block["measure"].unique())
        if isinstance(measure, Mapping):
            want = measure.get(coll)
            if want is None:
                raise ScoreTableError(
                    f"measure= names no measure for collection {coll!r}", source=table.source
                )
        elif measure is not None:
            want = measure
        elif len(have) == 1:
            want = have[0]
        else:
            raise ScoreTableError(
                f"collection {coll!r} holds several measures ({', '.join(have)}): "
                "pass measure=... to choose one",
                source=table.source,
            )
        picked = block[block["measure"] == want]
        if picked.empty:
            sub = table.select(collection=coll, measure=want)  # raises naming the spelling
            picked = sub.data
        parts.append(picked)
    long = pd.concat(parts, ignore_index=True)
    present = set(long["system"].unique())
    systems = [s for s in table.systems if s in present]
    roles = [table.roles.role_of(s) for s in systems]
    if len(systems) < 2:
        raise InsufficientDataError(f"{what} needs at least 2 systems; {table.source} has 1")
    if "champion" not in roles:
        raise ScoreTableError(f"the champion has no score in {what}", source=table.source)
    for coll, block in long.groupby("collection", sort=False):
        validate.require_topics(
            block["topic"].nunique(),
            defaults.MIN_TOPICS_HIERARCHICAL,
            method=what,
            where=f"collection {coll!r} in {table.source}",
        )
    order = {"system": systems, "collection": list(table.collections)}
    long = long.assign(
        _c=long["collection"].map({c: i for i, c in enumerate(order["collection"])}),
        _s=long["system"].map({s: i for i, s in enumerate(systems)}),
    )
    topic_rank = {t: i for i, t in enumerate(natural_sorted(long["topic"].unique()))}
    long = long.assign(_t=long["topic"].map(topic_rank))
    keys = ["_c", "_t", "_s"]
    if replicates:
        if "replicate" not in long.columns:
            raise ScoreTableError(
                f"{what} needs several runs per system: a 'replicate' (or 'seed', 'fold') column",
                source=table.source,
            )
        rank = {r: i for i, r in enumerate(natural_sorted(long["replicate"].unique()))}
        long = long.assign(_r=long["replicate"].map(rank))
        keys.append("_r")
    long = long.sort_values(keys).drop(columns=keys)
    return long.reset_index(drop=True), systems, roles


def _scale(long: pd.DataFrame, scale: str, *, source: str) -> str:
    """Resolve ``scale``: ``"auto"`` is ``"measure"`` when one measure is shared, else ``"sd"``."""
    validate.choice("scale", scale, SCALES)
    measures = sorted(long["measure"].unique())
    if scale == "auto":
        return "measure" if len(measures) == 1 else "sd"
    if scale == "measure" and len(measures) > 1:
        raise ScoreTableError(
            f"scale='measure' needs one measure in every collection, but these use "
            f"{', '.join(measures)}: use scale='sd' (effects in units of each "
            "collection's residual SD)",
            source=source,
        )
    return scale


def _crossed(
    long: pd.DataFrame, cells: pd.DataFrame, terms: tuple[Term, ...], roles: tuple, **fields: Any
) -> CrossedDesign:
    """Return the design of ``long``'s scores with ``terms``; ``roles`` = (systems, roles)."""
    residual = fields.pop("residual", None)
    return CrossedDesign(
        y=long["score"].to_numpy(dtype=float),
        terms=terms,
        residual=intercept_term(cells["collection"]) if residual is None else residual,
        cells=cells,
        systems=tuple(roles[0]),
        roles=tuple(roles[1]),
        **fields,
    )


def two_way_design(table: ScoreTable, *, measure: str | None = None) -> CrossedDesign:
    r"""Build the one-collection design :math:`y_{ts} = b_0 + a_t + c_s + e_{ts}`.

    The special case of :func:`collections_design` with one collection and no system x
    collection term: the model of :func:`bayes_ir.hierarchical.fit` (Gaussian, one
    residual SD), zero-sum topic and system effects.
    """
    long, systems, roles = _long(table, measure, what="the hierarchical model")
    if long["collection"].nunique() > 1:
        raise ScoreTableError(
            "the two-way design fits one collection: use collections_design",
            source=table.source,
        )
    cells = long[["collection", "measure", "topic", "system"]].reset_index(drop=True)
    order = {"system": systems}
    terms = (
        intercept_term(cells["collection"]),
        random_term("topic", cells, zero_sum_by=True),
        random_term("system", cells, zero_sum_by=True, order=order),
    )
    return _crossed(long, cells, terms, (systems, roles), by=None, groups=(), scale="measure",
                    source=str(table.source))  # fmt: skip


def collections_design(
    table: ScoreTable,
    *,
    measure: str | Mapping[str, str] | None = None,
    scale: str = "auto",
    sigma: str = "collection",
) -> CrossedDesign:
    r"""Build the design of systems compared across collections (tasks, collections, years).

    .. math::

        y_{cts} = b_{0c} + a_{ct} + u_c\,(\beta_s + \gamma_{sc}) + e_{cts}, \qquad
        e_{cts} \sim N(0, \sigma_c^2),\ a_{c\cdot} \sim \mathrm{ZSN}(\tau_c),\
        \beta \sim \mathrm{ZSN}(\chi),\ \gamma_{\cdot c} \sim \mathrm{ZSN}(\omega),

    with :math:`u_c = 1` (``scale="measure"``) or :math:`u_c = \sigma_c`
    (``scale="sd"``: system effects in units of collection :math:`c`'s residual SD).

    Parameters
    ----------
    table
        Scores with roles and a ``collection`` column (at least 2 collections).
    measure
        The measure of every collection: ``None`` (each collection's only one), a
        name, or ``{collection: measure}``.
    scale
        ``"auto"`` (default): ``"measure"`` when every collection uses the same
        measure, else ``"sd"``; ``"measure"``; or ``"sd"``.
    sigma
        ``"collection"`` (default): a residual SD and a topic SD per collection;
        ``"pooled"``: one of each for all collections (lme4's ``lmer`` model).

    Returns
    -------
    CrossedDesign
    """
    long, systems, roles = _long(table, measure, what="the model across collections")
    colls = list(long["collection"].unique())
    if len(colls) < 2:
        raise InsufficientDataError(
            f"the model across collections needs at least 2 collections; {table.source} "
            f"has {len(colls)} ({', '.join(colls)})"
        )
    resolved = _scale(long, scale, source=str(table.source))
    validate.choice("sigma", sigma, SIGMAS)
    per = "collection" if sigma == "collection" else None
    std = resolved == "sd"
    cells = long[["collection", "measure", "topic", "system"]].reset_index(drop=True)
    order = {"system": systems, "collection": colls}
    terms = (
        intercept_term(cells["collection"]),
        random_term(
            "topic",
            cells,
            factors=("collection", "topic"),
            scale_by=per,
            zero_sum_by="collection",
        ),
        random_term("system", cells, zero_sum_by=True, standardized=std, order=order),
        random_term(
            "system:collection", cells, zero_sum_by="collection", standardized=std, order=order
        ),
    )
    residual = intercept_term(cells["collection"] if per else np.full(len(cells), "all"))
    return _crossed(long, cells, terms, (systems, roles), residual=residual, by="collection",
                    groups=tuple(colls), scale=resolved, source=str(table.source))  # fmt: skip


def segments_design(
    table: ScoreTable,
    segments: Mapping[str, str],
    *,
    measure: str | None = None,
) -> CrossedDesign:
    r"""Build the design of systems compared across segments of one collection's topics.

    .. math::

        y_{ts} = b_{0g} + a_t + \beta_s + \gamma_{sg} + e_{ts}, \qquad g = g(t),\quad
        a_{\cdot} \sim \mathrm{ZSN}(\tau) \text{ within each segment},\quad
        \gamma_{\cdot g} \sim \mathrm{ZSN}(\omega),

    with :math:`g(t)` the segment of topic :math:`t` (navigational or informational,
    short or long, a conversation, a language): an intercept per segment (segments differ
    in difficulty), one topic SD and one residual SD. As across collections, the
    zero-sum system x segment effects have the contrasts of i.i.d. ones (each segment's
    sum moves into its intercept: brms's and lme4's ``(1 | system:segment)``).

    Parameters
    ----------
    table
        Scores of one collection with roles.
    segments
        ``{topic: segment}`` for every topic of the table (see
        :func:`bayes_ir.readers.read_segments`).
    measure
        The measure, when the table holds several.

    Returns
    -------
    CrossedDesign
    """
    long, systems, roles = _long(table, measure, what="the model across segments")
    if long["collection"].nunique() > 1:
        raise ScoreTableError(
            "segments are compared within one collection: use table.select(collection=...) first",
            source=table.source,
        )
    seg = {str(k): str(v) for k, v in dict(segments).items()}
    topics = long["topic"].unique()
    lacking = [t for t in topics if t not in seg]
    if lacking:
        shown = ", ".join(map(repr, lacking[:5])) + (" ..." if len(lacking) > 5 else "")
        raise ScoreTableError(
            f"{len(lacking)} topic(s) have no segment: {shown}", source=table.source
        )
    cells = long[["collection", "measure", "topic", "system"]].reset_index(drop=True)
    cells["segment"] = cells["topic"].map(seg)
    groups = list(natural_sorted(cells["segment"].unique()))
    if len(groups) < 2:
        raise InsufficientDataError(
            f"the model across segments needs at least 2 segments; {table.source} has {len(groups)}"
        )
    order = {"system": systems, "segment": groups}
    rank = {g: i for i, g in enumerate(groups)}
    sort = np.argsort(cells["segment"].map(rank).to_numpy(), kind="stable")
    long, cells = long.iloc[sort].reset_index(drop=True), cells.iloc[sort].reset_index(drop=True)
    terms = (
        intercept_term(cells["segment"], factor="segment"),
        random_term("topic", cells, zero_sum_by="segment"),
        random_term("system", cells, zero_sum_by=True, order=order),
        random_term("system:segment", cells, zero_sum_by="segment", order=order),
    )
    residual = intercept_term(cells["collection"])
    return _crossed(long, cells, terms, (systems, roles), residual=residual, by="segment",
                    groups=tuple(groups), scale="measure", source=str(table.source))  # fmt: skip


def replicates_design(
    table: ScoreTable,
    *,
    sigma_replicate: str = "pooled",
    measure: str | None = None,
) -> CrossedDesign:
    r"""Build the design of systems with several runs each (seeds, folds, samples).

    .. math::

        y_{tsr} = b_0 + a_t + \beta_s + (a\beta)_{ts} + \rho_{sr} + e_{tsr}, \qquad
        a \sim \mathrm{ZSN}(\tau),\ \beta \sim \mathrm{ZSN}(\chi),\
        (a\beta)_{ts} \sim N(0, \psi^2),\ \rho_{sr} \sim N(0, \kappa_s^2),\
        e_{tsr} \sim N(0, \sigma^2),

    with :math:`r` the replicate (seed) of system :math:`s`: :math:`\rho_{sr}` shifts
    every topic of that run (a lucky seed), :math:`(a\beta)_{ts}` is the topic x system
    interaction (identifiable once a cell has two runs), and :math:`\kappa_s = \kappa`
    (``sigma_replicate="pooled"``) or one run-to-run SD per system (``"system"``). The
    interaction and the replicate effects are i.i.d. (not zero-sum): :math:`\beta_s`
    is the system's expected score over the population of seeds and topics, and a
    new run of system :math:`s` has effect :math:`\beta_s + \rho_{s,\text{new}}`
    (lme4's ``score ~ system + (1|topic) + (1|topic:system) + (1|system:replicate)``).

    Parameters
    ----------
    table
        Scores of one collection and measure with a ``replicate`` column and roles.
    sigma_replicate
        ``"pooled"`` (default): one run-to-run SD; ``"system"``: one per system (each
        system needs at least 2 runs).
    measure
        The measure, when the table holds several.

    Returns
    -------
    CrossedDesign
    """
    validate.choice("sigma_replicate", sigma_replicate, REPLICATE_SIGMAS)
    long, systems, roles = _long(table, measure, what="the replicate model", replicates=True)
    if long["collection"].nunique() > 1:
        raise ScoreTableError(
            "replicates are compared within one collection: use table.select(collection=...) first",
            source=table.source,
        )
    runs = long.groupby("system", sort=False)["replicate"].nunique()
    if int(runs.max()) < 2:
        raise InsufficientDataError(
            f"the replicate model needs a system with 2 or more runs; every system of "
            f"{table.source} has one"
        )
    if sigma_replicate == "system" and int(runs.min()) < 2:
        single = [s for s in systems if runs[s] < 2]
        raise InsufficientDataError(
            f"sigma_replicate='system' needs 2 or more runs of every system; "
            f"{', '.join(map(repr, single[:5]))} {'has' if len(single) == 1 else 'have'} one: "
            "use sigma_replicate='pooled'"
        )
    cells = long[["collection", "measure", "topic", "system", "replicate"]].reset_index(drop=True)
    order = {"system": systems}
    terms = (
        intercept_term(cells["collection"]),
        random_term("topic", cells, zero_sum_by=True),
        random_term("system", cells, zero_sum_by=True, order=order),
        random_term("topic:system", cells, order=order),
        random_term(
            "replicate",
            cells,
            factors=("system", "replicate"),
            scale_by="system" if sigma_replicate == "system" else None,
            order=order,
        ),
    )
    return _crossed(long, cells, terms, (systems, roles), by=None, groups=(), scale="measure",
                    source=str(table.source))  # fmt: skip
