r"""Effect sizes per collection from paired per-topic scores (metafor's ``escalc`` for IR).

One effect size per collection (or task) compares a treatment system with a control
system on the same topics (queries, samples). Pairs are aligned by topic id, never
by position; ids scored for only one of the two systems are excluded and reported.

References
----------
Borenstein, M., Hedges, L. V., Higgins, J. P. T., & Rothstein, H. R. (2009).
*Introduction to Meta-Analysis*. Chichester: Wiley. (Chapters 4 and 6.)

Sertkan, M., Althammer, S., & Hofstaetter, S. (2023). Ranger: A toolkit for effect-size
based multi-task evaluation. *Proceedings of ACL 2023 (System Demonstrations)*.
arXiv:2305.15048.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.defaults import META_EFFECT
from bayes_ir.errors import (
    DataWarning,
    InsufficientDataError,
    MeasureError,
    ScoreTableError,
    UnknownSystemError,
)
from bayes_ir.table import ScoreTable

EffectMeasure = Literal["MD", "SMD", "CORR"]
#: Effect-size codes (metafor's escalc names) and what they mean.
EFFECT_MEASURES: dict[str, str] = {
    "MD": "mean difference of paired scores",
    "SMD": "standardised mean difference of paired scores (Hedges' g)",
    "CORR": "correlation of control and treatment scores (Fisher z)",
}
#: Columns of :meth:`EffectSizes.to_frame`, in order (extra-measure columns follow).
EFFECT_COLUMNS: tuple[str, ...] = (
    "label",
    "collection",
    "yi",
    "vi",
    "n",
    "mean_control",
    "mean_treatment",
    "r",
)


@dataclass(frozen=True, eq=False)
class EffectSizes:
    """Effect sizes ``yi`` and sampling variances ``vi``, one row per collection.

    Attributes
    ----------
    measure
        ``"MD"``, ``"SMD"`` or ``"CORR"`` (``CORR`` rows hold Fisher's z).
    frame
        Columns :data:`EFFECT_COLUMNS`: display ``label``, ``collection``, effect ``yi``,
        variance ``vi``, number of paired topics ``n``, raw means of control and
        treatment, Pearson ``r`` between them; then ``<measure>_control`` and
        ``<measure>_treatment`` means of each extra measure (e.g. ``Judged@10``).
    control, treatment
        System names.
    score_measure
        The per-topic measure compared (e.g. ``"nDCG@10"``).
    unpaired
        Topics scored for only one system: columns ``collection, topic, system``.
    ranger_compatible
        Whether Ranger's population SD (``ddof=0``) was used.
    """

    measure: str
    frame: pd.DataFrame
    control: str | None = None
    treatment: str | None = None
    score_measure: str | None = None
    unpaired: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["collection", "topic", "system"])
    )
    ranger_compatible: bool = False

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        measure: str = "MD",
        label: str = "label",
        yi: str = "yi",
        vi: str = "vi",
    ) -> EffectSizes:
        """Wrap precomputed effects and variances (columns ``yi``, ``vi``, optional ``label``).

        Raises
        ------
        InsufficientDataError
            If a variance is not positive or an effect is not finite.
        """
        for col in (yi, vi):
            if col not in frame:
                raise ScoreTableError(
                    f"the effects table needs columns {yi!r} and {vi!r}; got {list(frame.columns)}"
                )
        df = frame.rename(columns={yi: "yi", vi: "vi", label: "label"}).copy()
        if "label" not in df:
            df["label"] = [str(i + 1) for i in range(len(df))]
        df["label"] = df["label"].astype(str)
        if "collection" not in df:
            df["collection"] = df["label"]
        for col in EFFECT_COLUMNS:
            if col not in df:
                df[col] = np.nan
        y = df["yi"].to_numpy(float)
        v = df["vi"].to_numpy(float)
        if not np.all(np.isfinite(y)) or not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise InsufficientDataError(
                "every effect must be finite and every variance positive; check rows "
                + ", ".join(df["label"][~(np.isfinite(y) & np.isfinite(v) & (v > 0))])
            )
        rest = [c for c in df.columns if c not in EFFECT_COLUMNS]
        return cls(measure=_check_measure(measure), frame=df[list(EFFECT_COLUMNS) + rest])

    @property
    def labels(self) -> tuple[str, ...]:
        """Display labels of the collections."""
        return tuple(self.frame["label"])

    @property
    def yi(self) -> np.ndarray:
        """Effect sizes (Fisher z for ``CORR``)."""
        return self.frame["yi"].to_numpy(float)

    @property
    def vi(self) -> np.ndarray:
        """Sampling variances of the effect sizes."""
        return self.frame["vi"].to_numpy(float)

    def __len__(self) -> int:
        return len(self.frame)

    def to_frame(self) -> pd.DataFrame:
        """Return the per-collection table (a copy), columns as documented in :attr:`frame`."""
        return self.frame.copy()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Plain-text table of the effects, with the unpaired topics noted."""
        head = f"Effect sizes ({self.measure}: {EFFECT_MEASURES[self.measure]})"
        if self.control is not None:
            head += f", {self.treatment} vs {self.control}"
        if self.score_measure:
            head += f" on {self.score_measure}"
        lines = [head, self.frame.to_string(index=False, float_format=lambda x: f"{x:.6g}")]
        if len(self.unpaired):
            counts = self.unpaired.groupby("collection").size()
            lines.append(
                "unpaired topics excluded: " + ", ".join(f"{c}: {n}" for c, n in counts.items())
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _check_measure(measure: str) -> str:
    code = str(measure).upper()
    if code in ("ZCOR", "COR"):
        code = "CORR"
    if code not in EFFECT_MEASURES:
        raise MeasureError(f"unknown effect measure {measure!r}; choose one of MD, SMD, CORR")
    return code


def _paired_effect(
    c: np.ndarray, t: np.ndarray, measure: str, *, ddof: int, label: str
) -> tuple[float, float, float]:
    r"""Return ``(yi, vi, r)`` of one collection from paired control/treatment scores.

    Notes
    -----
    With :math:`d_j = t_j - c_j`, :math:`n` pairs, :math:`S_{\mathrm{diff}}` the SD of
    :math:`d` (``ddof``) and :math:`r` Pearson's correlation of :math:`c` and :math:`t`:

    * MD: :math:`y = \bar d`, :math:`v = S_{\mathrm{diff}}^2 / n`;
    * SMD: :math:`S_w = S_{\mathrm{diff}}/\sqrt{2(1-r)}`, :math:`d = \bar d / S_w`,
      :math:`V_d = (1/n + d^2/(2n))\,2(1-r)`, :math:`J = 1 - 3/(4(n-1) - 1)`,
      :math:`y = J d`, :math:`v = J^2 V_d` (Borenstein et al. 2009, eqs. 4.27-4.28, 4.22-4.24);
    * CORR: :math:`y = \operatorname{atanh} r`, :math:`v = 1/(n-3)`.
    """
    n = len(c)
    diff = t - c
    constant = n > 0 and np.ptp(diff) <= 1e-12 * max(1.0, float(np.abs(diff).max()))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = float(np.corrcoef(c, t)[0, 1]) if n > 1 else np.nan
    validate.require_topics(
        n, defaults.MIN_TOPICS_EFFECT_SIZE[measure], method=measure, where=repr(label), paired=True
    )
    if measure == "MD":
        s = float(np.std(diff, ddof=ddof))
        if constant:
            raise InsufficientDataError(
                f"collection {label!r}: the paired differences are all equal, so the "
                "variance of MD is 0 and the collection cannot be weighted"
            )
        return float(diff.mean()), s**2 / n, r
    if measure == "SMD":
        s = float(np.std(diff, ddof=ddof))
        if constant or not np.isfinite(r):
            raise InsufficientDataError(
                f"collection {label!r}: SMD is undefined because the scores of one system or "
                "their paired differences are constant"
            )
        s_within = s / np.sqrt(2.0 * (1.0 - r))
        d = diff.mean() / s_within
        v_d = (1.0 / n + d**2 / (2.0 * n)) * 2.0 * (1.0 - r)
        j = 1.0 - 3.0 / (4.0 * (n - 1) - 1.0)
        return float(j * d), float(j**2 * v_d), r
    if not np.isfinite(r) or abs(r) >= 1:
        raise InsufficientDataError(
            f"collection {label!r}: the correlation is {r} (constant scores or a perfect "
            "correlation), so Fisher's z is not finite"
        )
    return float(np.arctanh(r)), 1.0 / (n - 3), r


def effect_size(
    table: ScoreTable,
    *,
    measure: str = META_EFFECT,
    control: str | None = None,
    treatment: str | None = None,
    score_measure: str | None = None,
    extra_measures: Sequence[str] = (),
    collections: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    ranger_compatible: bool = False,
) -> EffectSizes:
    r"""Compute one effect size per collection from paired per-topic scores.

    Parameters
    ----------
    table
        Scores of (at least) the two systems on every collection; a ``collection``
        column separates the collections. Build it with ``missing="keep"`` to let
        this function report the topics scored for one system only.
    measure
        Effect-size code as in metafor's ``escalc``: ``"MD"`` (mean difference),
        ``"SMD"`` (standardised mean difference, Hedges' g) or ``"CORR"`` (Pearson
        correlation, analysed as Fisher's z; ``"ZCOR"`` is accepted).
    control, treatment
        System names. Default: the table's champion and its single challenger (when
        roles are set), otherwise the two systems of the table in order.
    score_measure
        The per-topic measure to compare (e.g. ``"nDCG@10"``); needed when the table
        holds several measures.
    extra_measures
        Other measures of the table whose per-collection means of both systems are
        carried along (e.g. ``["Judged@10"]``, shown by the forest plot).
    collections
        Collections to use, in this order (default: all, in the table's sorted order).
    labels
        Display names of the collections (``{"trec-covid": "TREC-COVID"}``).
    ranger_compatible
        Use the population SD (``ddof=0``) of the paired differences as Ranger does
        (Sertkan et al. 2023); by default the sample SD (``ddof=1``).

    Returns
    -------
    EffectSizes
        ``yi``, ``vi``, ``label`` and raw means per collection; ``unpaired`` lists the
        excluded topics.

    Raises
    ------
    UnknownSystemError
        If ``control`` or ``treatment`` is not in the table.
    InsufficientDataError
        If a collection has too few paired topics (MD 2, SMD 3, CORR 4) or a
        degenerate variance or correlation.

    Warns
    -----
    DataWarning
        When topics scored for only one of the two systems are excluded.

    Notes
    -----
    With :math:`d_j = t_j - c_j` over the :math:`n` paired topics, :math:`S_{\mathrm{diff}}`
    their SD and :math:`r` the treatment-control correlation:

    .. math::

        \mathrm{MD} = \bar d,\quad V = S_{\mathrm{diff}}^2/n;\qquad
        d = \bar d \big/ \tfrac{S_{\mathrm{diff}}}{\sqrt{2(1-r)}},\quad
        V_d = \left(\tfrac1n + \tfrac{d^2}{2n}\right) 2(1-r),\quad
        g = J d,\ V_g = J^2 V_d,\ J = 1 - \tfrac{3}{4(n-1)-1};

    :math:`z = \operatorname{atanh} r`, :math:`V_z = 1/(n-3)` (Borenstein et al. 2009,
    ch. 4 and 6).

    References
    ----------
    Borenstein, M., Hedges, L. V., Higgins, J. P. T., & Rothstein, H. R. (2009).
    *Introduction to Meta-Analysis*. Wiley.

    Sertkan, M., Althammer, S., & Hofstaetter, S. (2023). Ranger: A toolkit for
    effect-size based multi-task evaluation. ACL 2023 System Demonstrations.

    Examples
    --------
    >>> import bayes_ir
    >>> from bayes_ir.frequentist import effect_size
    >>> table = bayes_ir.read_scores("data/example_collections.csv")  # doctest: +SKIP
    >>> effect_size(table, measure="SMD", control="bm25", treatment="dense",
    ...             score_measure="nDCG@10").to_frame()  # doctest: +SKIP
    """
    validate.instance("table", table, ScoreTable)
    ranger_compatible = validate.flag("ranger_compatible", ranger_compatible)
    code = _check_measure(measure)
    table.require_one_per_cell("effect_size")
    control, treatment = _pick_systems(table, control, treatment)
    if score_measure is None:
        main = [m for m in table.measures if m not in set(extra_measures)]
        if len(main) != 1:
            raise ScoreTableError(
                f"the table holds several measures ({', '.join(table.measures)}): "
                "pass score_measure=... to choose one",
                source=table.source,
            )
        score_measure = main[0]
    data = table.data
    rows: list[dict[str, Any]] = []
    unpaired: list[tuple[str, str, str]] = []
    if collections is None:
        collections = table.collections
    for coll in collections:
        if coll not in table.collections:
            raise ScoreTableError(
                f"collection {coll!r} is not in the data (have: {', '.join(table.collections)})",
                source=table.source,
            )
        block = data[(data["collection"] == coll) & (data["measure"] == score_measure)]
        if block.empty:
            raise ScoreTableError(
                f"collection {coll!r} has no scores for measure {score_measure!r}",
                source=table.source,
            )
        wide = block.pivot(index="topic", columns="system", values="score")
        for system in (control, treatment):
            if system not in wide.columns:
                raise ScoreTableError(
                    f"collection {coll!r} has no scores of system {system!r}", source=table.source
                )
        pair = wide[[control, treatment]]
        has_c, has_t = pair[control].notna(), pair[treatment].notna()
        for system, only in ((control, has_c & ~has_t), (treatment, has_t & ~has_c)):
            unpaired.extend((coll, topic, system) for topic in pair.index[only])
        pair = pair[has_c & has_t]
        c = pair[control].to_numpy(float)
        t = pair[treatment].to_numpy(float)
        label = (labels or {}).get(coll, coll)
        yi, vi, r = _paired_effect(c, t, code, ddof=0 if ranger_compatible else 1, label=str(coll))
        row = {
            "label": label,
            "collection": coll,
            "yi": yi,
            "vi": vi,
            "n": len(c),
            "mean_control": c.mean(),
            "mean_treatment": t.mean(),
            "r": r,
        }
        for extra in extra_measures:
            eb = data[(data["collection"] == coll) & (data["measure"] == extra)]
            eb = eb[eb["topic"].isin(pair.index)]
            means = eb.groupby("system")["score"].mean()
            row[f"{extra}_control"] = means.get(control, np.nan)
            row[f"{extra}_treatment"] = means.get(treatment, np.nan)
        rows.append(row)
    unpaired_df = pd.DataFrame(unpaired, columns=["collection", "topic", "system"])
    if len(unpaired_df):
        counts = unpaired_df.groupby("collection").size()
        warnings.warn(
            "topics scored for only one system were excluded: "
            + ", ".join(f"{c}: {n}" for c, n in counts.items()),
            DataWarning,
            stacklevel=2,
        )
    return EffectSizes(
        measure=code,
        frame=pd.DataFrame(rows),
        control=control,
        treatment=treatment,
        score_measure=score_measure,
        unpaired=unpaired_df,
        ranger_compatible=ranger_compatible,
    )


def _pick_systems(table: ScoreTable, control: str | None, treatment: str | None) -> tuple[str, str]:
    systems = list(table.data["system"].unique())
    if control is None and table.roles is not None:
        control = table.champion
    if treatment is None and table.roles is not None and len(table.challengers) == 1:
        treatment = table.challengers[0]
    if control is None or treatment is None:
        if len(systems) != 2:
            raise ScoreTableError(
                f"the table holds {len(systems)} systems ({', '.join(systems)}): "
                "pass control=... and treatment=...",
                source=table.source,
            )
        control = control or next(s for s in systems if s != treatment)
        treatment = treatment or next(s for s in systems if s != control)
    for name, role in ((control, "control"), (treatment, "treatment")):
        if name not in systems:
            raise UnknownSystemError(name, systems, role=role)
    if control == treatment:
        raise ScoreTableError(f"control and treatment are the same system {control!r}")
    return control, treatment
