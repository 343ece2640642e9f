"""The deployment review: every analysis a decision needs, in one self-contained HTML file.

:func:`review` runs the methods through their public API (the hierarchical fit, the
comparison, the decision with its more-topics analysis, the risk review, BRisk over
several loss weights, posterior predictive intervals) and returns a :class:`Review`;
:meth:`Review.to_html` renders it with the Jinja2 template ``templates/review.html.j2``
into one file with its figures inline (SVG), no script and no network request, that
prints cleanly and reads at phone and laptop widths.

Re-running the same command on the same files gives the same file byte for byte except
the date line: seeds fix every draw, the SVG figures carry no date and fixed ids, and
nothing else in the page depends on the clock.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.errors import ConvergenceWarning, OptionError
from bayes_ir.provenance import input_hashes, package_versions
from bayes_ir.report.decision import format_probability
from bayes_ir.report.marks import model_description
from bayes_ir.table import ScoreTable

if TYPE_CHECKING:
    from bayes_ir.report.review_runs import RunsReview

__all__ = ["Review", "review"]

#: Packages whose versions the provenance lists.
_PACKAGES = ("bayes_ir", "pymc", "arviz", "numpy", "scipy", "pandas", "xarray", "matplotlib",
             "statsmodels", "ir-measures", "jinja2")  # fmt: skip
#: Topics listed per challenger among those it loses most on.
WORST_TOPICS = 5


@dataclass(frozen=True)
class Review:
    """A deployment review: the decision, the risk, the model check, the diagnostics.

    Build it with :func:`review`. The attributes are the result objects of the
    methods, so every number in the report can be traced to a public call.

    Attributes
    ----------
    table
        The scores with roles.
    fit
        The :class:`~bayes_ir.hierarchical.HierarchicalFit`.
    comparison
        :func:`bayes_ir.compare` of the fit (``min_gain`` = the margin).
    decision
        :func:`bayes_ir.decide` of the fit.
    risk
        :func:`bayes_ir.risk_review` at the loss weight ``r``.
    brisk
        :func:`bayes_ir.brisk_sweep` over ``r_levels``.
    predictive
        :func:`bayes_ir.posterior_predictive` of the fit, for the systems its figure draws
        (:func:`bayes_ir.plots.hierarchical.predictive_systems`).
    worst_topics
        Per challenger, the topics it loses most on: ``challenger, topic, champion,
        score, difference``, largest loss first.
    provenance
        Inputs and their SHA-256, roles, versions, seed, command, date.
    """

    table: ScoreTable
    fit: Any
    comparison: Any
    decision: Any
    risk: Any
    brisk: Any
    predictive: Any
    worst_topics: pd.DataFrame
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the loader changed or left out in the table (shown in the review)."""
        return self.table.notes

    @property
    def reliable(self) -> bool:
        """True when every decision could be taken (diagnostics passed, model describes it)."""
        return self.decision.overall != "unreliable"

    def headline(self) -> str:
        """Return the decision in one sentence."""
        d = self.decision
        frame = d.to_frame()
        if d.overall == "unreliable":
            return (
                "UNRELIABLE: no decision can be taken from this posterior "
                + ("(its diagnostics failed)." if not d.diagnostics_passed else
                   f"(the model does not describe {', '.join(d.misfit)}).")
            )  # fmt: skip
        if d.overall == "deploy":
            deployable = frame[frame["action"] == "deploy"].sort_values("p_best", ascending=False)
            best = deployable.iloc[0]
            others = [c for c in deployable["challenger"] if c != best["challenger"]]
            tail = f" (also deployable: {', '.join(others)})" if others else ""
            return (
                f"Deploy {best['challenger']}: it beats {d.champion} by more than the margin "
                f"{d.margin:g} with probability {format_probability(best['p_better'])}{tail}."
            )
        if d.overall == "collect more data":
            undecided = frame.loc[frame["action"] == "collect more data", "challenger"]
            return (
                f"Collect more data: no challenger is clearly worth deploying yet "
                f"({', '.join(undecided)} undecided); keep {d.champion} meanwhile."
            )
        return f"Keep the champion {d.champion}: no challenger beats it by the margin {d.margin:g}."

    def summary(self) -> str:
        """Return the headline, the decision and the risk review as text (never prints)."""
        return "\n\n".join([self.headline(), self.decision.summary(), self.risk.summary()])

    def __str__(self) -> str:
        return self.summary()

    def to_html(self, path: str | Path | None = None) -> str | Path:
        """Render the review as one self-contained HTML page.

        Parameters
        ----------
        path
            Where to write it (atomically); ``None`` returns the HTML text instead.
        """
        from bayes_ir.report.html import html_output, render_review

        return html_output(render_review(self), path)


def _worst_topics(table: ScoreTable, champion: str, challengers: Sequence[str]) -> pd.DataFrame:
    matrix: pd.DataFrame = table.matrix().to_pandas()
    rows = []
    for name in challengers:
        diff = (matrix[name] - matrix[champion]).dropna().sort_values(kind="stable")
        for topic, value in diff.head(WORST_TOPICS).items():
            if value >= 0:
                break
            rows.append(
                {
                    "challenger": name,
                    "topic": str(topic),
                    "champion": float(matrix.at[topic, champion]),
                    "score": float(matrix.at[topic, name]),
                    "difference": float(value),
                }
            )
    return pd.DataFrame(rows, columns=["challenger", "topic", "champion", "score", "difference"])


def _review_runs(table: ScoreTable, *, fit: Any, likelihood: str, pooling: str, sigma: str,
                 r: float, r_levels: Sequence[float], topics: Sequence[int] | None,
                 draws: int | None, tune: int | None, chains: int,
                 **options: Any) -> RunsReview:  # fmt: skip
    """Review a table of several runs per system; refuse the options of one score per cell."""
    from bayes_ir.report.review_runs import review_runs

    wrong = {"likelihood": likelihood != "gaussian", "pooling": pooling != "all",
             "sigma": sigma != "pooled", "r": r != defaults.RISK_R,
             "r_levels": tuple(r_levels) != tuple(defaults.RISK_LEVELS),
             "topics": topics is not None}  # fmt: skip
    said = [name for name, differs in wrong.items() if differs]
    if said:
        raise OptionError(f"{', '.join(said)}: with several runs per system the review fits "
                          "the Gaussian model of runs, without the risk review or the "
                          "more-topics table (the plan of more topics or seeds replaces "
                          "it)")  # fmt: skip
    sampler: dict[str, Any] = {"chains": chains, "draws": draws, "tune": tune}
    given = {k: v for k, v in sampler.items() if v is not None}
    return review_runs(table, fit=fit, **given, **options)


def review(
    table: ScoreTable,
    *,
    margin: float | None = None,
    r: float = defaults.RISK_R,
    r_levels: Sequence[float] = defaults.RISK_LEVELS,
    likelihood: str = "gaussian",
    pooling: str = "all",
    sigma: str = "pooled",
    ci_prob: float | None = None,
    seed: int | None = None,
    draws: int | None = None,
    tune: int | None = None,
    target_accept: float | None = None,
    chains: int = defaults.CHAINS,
    n_resamples: int = defaults.BCA_RESAMPLES,
    topics: Sequence[int] | None = None,
    executor: Any = None,
    inputs: Iterable[str | Path] = (),
    command: str | None = None,
    fit: Any = None,
    sigma_replicate: str = "pooled",
    cost_topic: float = 1.0,
    cost_run: float = 1.0,
) -> Review | RunsReview:
    """Run every analysis of a deployment review and collect the results.

    Parameters
    ----------
    table
        Scores with roles (a champion and at least one challenger), one collection
        and one measure.
    margin
        The minimal worthwhile gain, in the measure's units (default
        :data:`bayes_ir.defaults.DECISION_MARGIN`): the decision's margin and the
        comparison's ``min_gain``.
    r
        Loss weight of the risk review table (URisk, TRisk, BCa, ZRisk, GeoRisk, BRisk).
    r_levels
        Loss weights of the BRisk sweep.
    likelihood
        Likelihood of the hierarchical model.
    pooling
        Which system effects share ``sigma_system`` in every fit (``"all"`` or
        ``"artifacts"``, see :func:`bayes_ir.hierarchical.fit`).
    sigma
        One residual SD for every system (``"pooled"``) or one per system (``"system"``)
        in every fit, the BRisk fits included (see :func:`bayes_ir.hierarchical.fit`).
    ci_prob
        Interval probability.
    seed
        Seed of every stochastic step (default :data:`bayes_ir.defaults.SEED`).
    draws, tune, target_accept, chains
        Sampler settings of every fit (see :func:`bayes_ir.hierarchical.fit`).
    n_resamples
        Bootstrap resamples of the BCa intervals.
    topics
        Grid of the more-topics analysis.
    executor
        Executor of the BRisk sweep (see :func:`bayes_ir.sweep`).
    inputs
        The input files (scores, qrels, selector lists, a saved fit; a folder stands for
        its files), hashed into the provenance.
    command
        The command line that made the review, for the provenance.
    fit
        An existing :class:`~bayes_ir.hierarchical.HierarchicalFit` of ``table`` (e.g.
        read with :func:`bayes_ir.hierarchical.load_fit`), used instead of fitting;
        checked with :func:`bayes_ir.hierarchical.check_fit` (one line when it was made
        on other data or roles). The BRisk fits are still made.
    sigma_replicate, cost_topic, cost_run
        With several runs per system only: one run-to-run SD (``"pooled"``) or one per
        system (``"system"``); the costs of one more topic and of one more run, for the
        plan of more topics or seeds.

    Notes
    -----
    BRisk is fitted once per loss weight: the risk table at ``r`` reuses the sweep's
    result when ``r`` is in ``r_levels``.

    A table with several runs per system (a ``replicate`` column: seeds, folds) is
    reviewed by :func:`~bayes_ir.report.review_runs.review_runs` (the model of runs:
    decisions in expectation over seeds and on one run of each, the plan of more topics
    or seeds, the paired t-test on per-topic means over seeds as the cross-check); its
    options are ``margin``, ``ci_prob``, ``seed``, ``draws``, ``tune``, ``chains``,
    ``sigma_replicate``, ``cost_topic``, ``cost_run``, ``inputs`` and ``command``.

    Returns
    -------
    Review or RunsReview
        :class:`~bayes_ir.report.review_runs.RunsReview` for a table of several runs per
        system.
    """
    from bayes_ir.decision import check_options, decide
    from bayes_ir.hierarchical import check_fit, compare, posterior_predictive
    from bayes_ir.hierarchical import fit as hierarchical_fit
    from bayes_ir.risk import brisk_sweep, risk_review
    from bayes_ir.risk.adjusted import check_r

    validate.instance("table", table, ScoreTable)
    if table.has_replicates:
        return _review_runs(table, fit=fit, likelihood=likelihood, pooling=pooling, sigma=sigma,
                            r=r,
                            r_levels=r_levels, topics=topics, margin=margin, ci_prob=ci_prob,
                            seed=seed, draws=draws, tune=tune, chains=chains,
                            sigma_replicate=sigma_replicate, cost_topic=cost_topic,
                            cost_run=cost_run, inputs=inputs, command=command)  # fmt: skip
    if (sigma_replicate, cost_topic, cost_run) != ("pooled", 1.0, 1.0):
        raise OptionError("sigma_replicate, cost_topic and cost_run apply to several runs per "
                          "system (a table with a replicate column)")  # fmt: skip
    if table.champion is None or not table.challengers:
        raise OptionError("review needs a champion and at least one challenger (with_roles)")
    seed = validate.seed(seed)
    p = defaults.ci_prob(ci_prob)
    # every option is checked before the first fit (a bad one fails at once, not after it)
    measure = table.measures[0] if len(table.measures) == 1 else None
    margin, _, _ = check_options(margin=margin, mode="superiority", r=1.0, threshold=None,
                                 p_min=None, measure=measure)  # fmt: skip
    r = check_r(r)
    r_levels = [check_r(level) for level in r_levels]
    n_resamples = validate.resamples("n_resamples", n_resamples, minimum=100)
    given = {"draws": draws, "tune": tune, "target_accept": target_accept}
    sampler: dict[str, Any] = {"chains": chains} | {k: v for k, v in given.items() if v is not None}
    if pooling != "all":  # the BRisk fits pool as the decision's fit does
        sampler["pooling"] = pooling
    if sigma != "pooled":  # and have the decision's fit's residual SDs
        sampler["sigma"] = sigma
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the review says UNRELIABLE
        if fit is None:
            result = hierarchical_fit(table, likelihood=likelihood, seed=seed, **sampler)
        else:
            check_fit(fit, table)
            result = fit
        comparison = compare(result, ci_prob=p, min_gain=margin)
        decision = decide(result, margin=margin, ci_prob=p, topics=topics, seed=seed)
        # risk-adjusted scores leave [0, 1]: a bounded or discrete family's BRisk is Gaussian
        continuous = result.likelihood in ("gaussian", "skew_normal")
        risk_likelihood = result.likelihood if continuous else "gaussian"
        brisk = brisk_sweep(table, r_levels=r_levels, executor=executor,
                            likelihood=risk_likelihood, ci_prob=p, seed=seed,
                            **sampler)  # fmt: skip
        at_r = {res.r: res for res in brisk.results}.get(float(r))
        risk = risk_review(table, r=r, ci_prob=p, likelihood=risk_likelihood, seed=seed,
                           n_resamples=n_resamples, brisk_result=at_r, **sampler)  # fmt: skip
    from bayes_ir.plots.hierarchical import predictive_systems

    predictive = posterior_predictive(result, ci_prob=p, seed=seed,
                                      systems=predictive_systems(result))  # fmt: skip
    provenance = {
        "inputs": input_hashes(inputs),
        "notes": list(table.notes),
        "collection": table.collections[0],
        "measure": table.measures[0],
        "champion": table.champion,
        "challengers": list(table.challengers),
        "artifacts": len(table.artifacts),
        "topics": len(table.topics),
        "likelihood": likelihood if fit is None else result.likelihood,
        "pooling": result.pooling,
        "model": model_description(result)
        + ("" if continuous else "; BRisk: gaussian model of the risk-adjusted scores"),
        "seed": seed,
        "margin": margin,
        "r": float(r),
        "r_levels": [float(v) for v in r_levels],
        "ci_prob": p,
        "command": command or "bayes_ir.review(...)",
        "versions": package_versions(_PACKAGES),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    return Review(
        table=table,
        fit=result,
        comparison=comparison,
        decision=decision,
        risk=risk,
        brisk=brisk,
        predictive=predictive,
        worst_topics=_worst_topics(table, table.champion, list(table.challengers)),
        provenance=provenance,
    )
