"""The deployment review over several measures: one document, one decision for all of them.

:func:`review_measures` runs :func:`bayes_ir.report.review.review` once per measure and
returns a :class:`MultiReview`, whose :meth:`MultiReview.to_html` writes one HTML file:
the decision for every challenger and measure first, then one section per measure
(decision, risk, model check, diagnostics), the provenance once.

The measures are combined conservatively: a challenger is deployed only when every
measure's review says deploy (:data:`RULE`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pandas as pd

from bayes_ir.errors import OptionError
from bayes_ir.report.decision import format_probability
from bayes_ir.report.review import Review, review
from bayes_ir.table import ScoreTable

__all__ = ["RULE", "MultiReview", "combine_actions", "review_measures"]

#: How the measures' actions combine, as the report states it.
RULE = (
    "A challenger is deployed only when every measure's review says deploy; it is kept "
    "out (keep champion) as soon as one measure says keep the champion; it is unreliable "
    "when one measure's review of it is unreliable; otherwise (some measure undecided, "
    "none against) collect more data. The review says deploy when some challenger is "
    "deployed under this rule. Each measure's own rule is stated in its section."
)


def combine_actions(actions: list[str]) -> str:
    """Return the action of one challenger over several measures (:data:`RULE`).

    ``unreliable`` if any measure says so; else ``deploy`` if every measure says
    deploy; else ``keep champion`` if any measure says so; else ``collect more data``.
    """
    if "unreliable" in actions:
        return "unreliable"
    if all(a == "deploy" for a in actions):
        return "deploy"
    if "keep champion" in actions:
        return "keep champion"
    return "collect more data"


@dataclass(frozen=True)
class MultiReview:
    """Deployment reviews of the same systems on several measures, decided together.

    Attributes
    ----------
    reviews
        One :class:`~bayes_ir.report.review.Review` per measure, in the order asked for.
    """

    reviews: dict[str, Review]

    @property
    def measures(self) -> list[str]:
        """The measures, in the order of the review."""
        return list(self.reviews)

    @property
    def champion(self) -> str:
        """The champion (the same for every measure)."""
        return next(iter(self.reviews.values())).decision.champion

    @property
    def provenance(self) -> dict[str, Any]:
        """The provenance of the first measure's review, with every measure listed."""
        first = next(iter(self.reviews.values())).provenance
        return first | {"measures": self.measures}

    def to_frame(self) -> pd.DataFrame:
        """Return one row per challenger x measure: the measure's decision and comparison.

        Columns ``challenger, measure, action, mean, ci_lower, ci_upper, p_better,
        p_gain``, challengers in the order of the first measure's review.
        """
        rows = []
        for measure, rv in self.reviews.items():
            comp = rv.comparison.to_frame().set_index("challenger")
            for name, action in rv.decision.actions.items():
                c = comp.loc[name]
                rows.append({"challenger": name, "measure": measure, "action": action,
                             "mean": float(c["mean"]), "ci_lower": float(c["ci_lower"]),
                             "ci_upper": float(c["ci_upper"]), "p_better": float(c["p_better"]),
                             "p_gain": float(c["p_gain"])})  # fmt: skip
        frame = pd.DataFrame(rows)
        order = {name: i for i, name in enumerate(dict.fromkeys(frame["challenger"]))}
        return frame.sort_values("challenger", key=lambda s: s.map(order), kind="stable")

    def combined(self) -> pd.DataFrame:
        """Return one row per challenger: its action over all measures (:data:`RULE`).

        Columns ``challenger, action, min_p_gain`` (the smallest P(gain) over the
        measures) and ``reason`` (each measure's action).
        """
        rows = []
        for name, group in self.to_frame().groupby("challenger", sort=False):
            rows.append(
                {
                    "challenger": name,
                    "action": combine_actions(list(group["action"])),
                    "min_p_gain": float(group["p_gain"].min()),
                    "reason": "; ".join(f"{m}: {a}" for m, a in
                                        zip(group["measure"], group["action"], strict=True)),
                }
            )  # fmt: skip
        return pd.DataFrame(rows)

    @property
    def overall(self) -> str:
        """Return one action for the release.

        ``deploy`` if some challenger is deployed by :data:`RULE`; else ``unreliable``
        if some is unreliable; else ``collect more data`` if some is undecided; else
        ``keep champion``.
        """
        acts = set(self.combined()["action"])
        for action in ("deploy", "unreliable", "collect more data"):
            if action in acts:
                return action
        return "keep champion"

    @property
    def unreliable_measures(self) -> list[str]:
        """Measures whose review as a whole cannot be trusted (failed diagnostics...)."""
        return [m for m, rv in self.reviews.items() if not rv.reliable]

    def headline(self) -> str:
        """Return the decision over all measures in one sentence."""
        measures = ", ".join(self.measures)
        combined = self.combined()
        overall = self.overall
        if overall == "deploy":
            ok = combined[combined["action"] == "deploy"].sort_values(
                "min_p_gain", ascending=False, kind="stable"
            )
            best = ok.iloc[0]
            others = [c for c in ok["challenger"] if c != best["challenger"]]
            tail = f" (also deployable: {', '.join(others)})" if others else ""
            return (
                f"Deploy {best['challenger']}: every measure ({measures}) says deploy; it "
                f"beats {self.champion} by more than the margin on each, with probability "
                f"{format_probability(best['min_p_gain'])} on the least sure one{tail}."
            )
        if overall == "unreliable":
            bad = combined.loc[combined["action"] == "unreliable", "challenger"]
            return (
                f"UNRELIABLE: no challenger can be deployed on every measure ({measures}), "
                f"and the review of {', '.join(bad)} cannot be trusted; keep {self.champion}."
            )
        if overall == "collect more data":
            undecided = combined.loc[combined["action"] == "collect more data", "challenger"]
            return (
                f"Collect more data: no challenger is worth deploying on every measure "
                f"({measures}) yet ({', '.join(undecided)} undecided); keep {self.champion} "
                f"meanwhile."
            )
        return (
            f"Keep the champion {self.champion}: for every challenger some measure "
            f"({measures}) says keep the champion."
        )

    def summary(self) -> str:
        """Return the headline, the rule and each measure's review as text (never prints)."""
        parts = [self.headline(), f"Rule over measures: {RULE}"]
        for measure, rv in self.reviews.items():
            parts.append(f"== measure {measure} ==\n{rv.summary()}")
        return "\n\n".join(parts)

    def __str__(self) -> str:
        return self.summary()

    def to_html(self, path: str | Path | None = None) -> str | Path:
        """Render every measure's review as one self-contained HTML page.

        Parameters
        ----------
        path
            Where to write it (atomically); ``None`` returns the HTML text instead.
        """
        from bayes_ir.report.html import html_output, render_reviews

        return html_output(render_reviews(self), path)


def review_measures(
    table: ScoreTable | Mapping[str, ScoreTable],
    measures: list[str] | None = None,
    **options: Any,
) -> MultiReview:
    """Review a champion and its challengers on several measures at once.

    Parameters
    ----------
    table
        Scores with roles on one collection and several measures, or a mapping
        measure -> table (each with its roles), as the command line reads them.
    measures
        The measures to review, in this order (default: every measure of ``table``).
    **options
        Passed to :func:`bayes_ir.report.review.review` for every measure (margin,
        loss weights, sampler settings, seed, inputs, command, ...).

    Returns
    -------
    MultiReview
        Its :attr:`~MultiReview.overall` is ``deploy`` only when some challenger is
        deployed by every measure's review (:data:`RULE`).
    """
    if isinstance(table, Mapping):
        tables = dict(table)
        if measures is not None:
            missing = [m for m in measures if m not in tables]
            if missing:
                raise OptionError(f"measures {', '.join(missing)} are not in the tables given")
            tables = {m: tables[m] for m in measures}
    else:
        names = list(measures) if measures is not None else list(table.measures)
        tables = {m: table.select(measure=m) for m in names}
    if not tables:
        raise OptionError("review_measures needs at least one measure")
    for sub in tables.values():  # several runs per system: one measure at a time
        sub.require_one_per_cell("a review of several measures")
    done = {}
    for sub in tables.values():
        rv = cast(Review, review(sub, **options))  # one score per cell: a Review
        done[rv.provenance["measure"]] = rv
    return MultiReview(reviews=done)
