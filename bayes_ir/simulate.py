r"""Seeded simulation of realistic TREC-like per-topic scores, for examples and tests.

The simulator draws every score on the logit scale and maps it into [0, 1]:

.. math::

    \eta_{cts} = \mu_c + u_{ct} + b_s + \delta_{cs} + g_{ts} + \varepsilon_{cts},
    \qquad y_{cts} = \operatorname{expit}(\eta_{cts}),

with collection level :math:`\mu_c`, topic difficulty :math:`u_{ct} \sim N(0,
\sigma_u^2)`, system effect :math:`b_s` (the champion has :math:`b = 0`), an optional
per-collection deviation of each system's effect :math:`\delta_{cs} \sim N(0,
\sigma_c^2)` (heterogeneity across collections, for meta-analysis), a system x topic
interaction :math:`g_{ts}` (``spread`` and, for "risky" systems, a loss on a random set
of failure topics) and a right-skewed residual :math:`\varepsilon` (standardised
skew-normal). Optionally hard cells are set to exactly 0 (zero inflation, common for
``nDCG@10`` on sparse judgments) and the scores are rounded like ``trec_eval`` output.

The logistic link makes the scores bounded, skewed near 0 for hard topics and
compressed near 1, with a topic x system variance that depends on the mean as in
real TREC data (compare ``../shared/data/bayesian_risk/rb04_data.csv``: mean AP 0.31,
topic-mean SD 0.19, system-mean SD 0.02).

The defaults reproduce the example data of the project (``data/example_scores.csv``):
champion ``bm25``, challengers ``chal_dense`` (about equal), ``chal_rerank`` (a little
better), ``chal_fusion`` (clearly better), ``chal_risky`` (better on average, losing
badly on some topics) and 40 artifact runs ``trec_run01`` .. ``trec_run40``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from bayes_ir import validate
from bayes_ir.errors import OptionError
from bayes_ir.table import ScoreTable

__all__ = [
    "DEFAULT_CHALLENGERS",
    "SystemSpec",
    "simulate_judged",
    "simulate_scores",
]


@dataclass(frozen=True)
class SystemSpec:
    """Designed behaviour of a simulated system, relative to the champion, on the logit scale.

    Parameters
    ----------
    effect
        Mean shift of the system's logit scores from the champion's (0: equal).
    spread
        SD of a system x topic interaction: how much the gain varies from topic to topic
        beyond the shared residual noise.
    loss_prob
        Probability that a topic is a "failure" topic for this system.
    loss
        Logit shift added on failure topics (negative: the system loses badly there).
    """

    effect: float = 0.0
    spread: float = 0.0
    loss_prob: float = 0.0
    loss: float = 0.0

    def __post_init__(self) -> None:
        validate.finite_float("effect", self.effect)
        validate.finite_float("spread", self.spread, minimum=0.0)
        validate.probability("loss_prob", self.loss_prob, open=False)
        validate.finite_float("loss", self.loss)


#: Challengers of the example data: names and designed behaviours.
DEFAULT_CHALLENGERS: Mapping[str, SystemSpec] = {
    "chal_dense": SystemSpec(effect=0.0, spread=0.35),
    "chal_rerank": SystemSpec(effect=0.15, spread=0.15),
    "chal_fusion": SystemSpec(effect=0.4, spread=0.1),
    "chal_risky": SystemSpec(effect=0.75, spread=0.2, loss_prob=0.2, loss=-2.0),
}


def _logit(p: float) -> float:
    p = validate.probability("baseline", p)
    return math.log(p / (1.0 - p))


def _skew_normal(rng: np.random.Generator, size: tuple[int, ...], alpha: float) -> np.ndarray:
    """Standardised (mean 0, SD 1) skew-normal draws with shape ``alpha`` (Azzalini 1985)."""
    delta = alpha / math.sqrt(1.0 + alpha * alpha)
    z0 = np.abs(rng.standard_normal(size))
    z1 = rng.standard_normal(size)
    x = delta * z0 + math.sqrt(1.0 - delta * delta) * z1
    mean = delta * math.sqrt(2.0 / math.pi)
    sd = math.sqrt(1.0 - 2.0 * delta * delta / math.pi)
    return (x - mean) / sd


def simulate_scores(
    *,
    champion: str = "bm25",
    challengers: Mapping[str, SystemSpec] | None = None,
    n_artifacts: int = 40,
    artifact_prefix: str = "trec_run",
    n_topics: int | Sequence[int] = 50,
    collections: Sequence[str] | None = None,
    first_topic: int = 1,
    measure: str = "AP",
    baseline: float = 0.3,
    collection_level_sd: float = 0.4,
    topic_sd: float = 1.2,
    artifact_mean: float = 0.05,
    artifact_sd: float = 0.15,
    noise_sd: float = 0.3,
    skew: float = 3.0,
    collection_sd: float = 0.0,
    zero_inflation: float = 0.0,
    decimals: int | None = 4,
    seed: int = 0,
) -> ScoreTable:
    r"""Simulate per-topic scores in [0, 1] of a champion, challengers and artifact runs.

    Parameters
    ----------
    champion
        Name of the champion (the reference system, logit effect 0).
    challengers
        Name -> :class:`SystemSpec` of each challenger; ``None`` uses
        :data:`DEFAULT_CHALLENGERS`, ``{}`` simulates none.
    n_artifacts
        Number of artifact runs, named ``f"{artifact_prefix}{i:02d}"`` from 1. Their
        effects are drawn from :math:`N(\text{artifact\_mean}, \text{artifact\_sd}^2)`.
    artifact_prefix
        Prefix of the artifact names.
    n_topics
        Topics per collection: one number for all, or one per collection.
    collections
        Collection names; ``None`` gives one collection named ``"example"``.
    first_topic
        Topic ids are consecutive integers (as strings) starting here, per collection.
    measure
        Name recorded in the ``measure`` column (e.g. ``"AP"``, ``"nDCG@10"``).
    baseline
        Typical champion score: ``expit`` of the mean logit level of the collections.
    collection_level_sd
        SD of the collection levels :math:`\mu_c` around ``logit(baseline)`` (with one
        collection, its level is exactly ``logit(baseline)``).
    topic_sd
        SD :math:`\sigma_u` of the topic difficulties (logit scale).
    artifact_mean, artifact_sd
        Mean and SD of the artifact runs' effects (logit scale).
    noise_sd
        SD of the residual, per (topic, system) cell (logit scale).
    skew
        Skew-normal shape :math:`\alpha` of the residual (0: normal; > 0 right-skewed).
    collection_sd
        SD :math:`\sigma_c` of each system's effect across collections.
    zero_inflation
        Probability scale of exact zeros: a cell with score :math:`y` is set to 0 with
        probability ``zero_inflation * (1 - y) ** 4`` (only hard cells become 0).
    decimals
        Round the scores to this many decimals (``trec_eval`` prints 4); ``None`` keeps
        full precision.
    seed
        Seed of :func:`numpy.random.default_rng`; the same arguments and seed give the
        same table.

    Returns
    -------
    ScoreTable
        Complete long table, columns ``collection, measure, system, topic, score``,
        scores in [0, 1]; systems ordered champion, challengers, artifacts.

    Notes
    -----
    The score of system :math:`s` on topic :math:`t` of collection :math:`c` is
    :math:`y = \operatorname{expit}(\mu_c + u_{ct} + b_s + \delta_{cs} + g_{ts} +
    \varepsilon_{cts})`, where for a challenger :math:`b_s` is ``effect`` and
    :math:`g_{ts} = \text{spread}\, z_{ts} + \text{loss}\, F_{ts}` with
    :math:`z_{ts} \sim N(0,1)` and :math:`F_{ts} \sim \text{Bernoulli}(\text{loss\_prob})`;
    the residual :math:`\varepsilon` is a standardised skew-normal scaled by ``noise_sd``.
    A logit-normal model of this kind is the generative counterpart of the logistic
    and beta GLMs fitted to per-topic scores by Parapar et al. (2019) and of the
    hierarchical models of Benham et al. (2020).

    References
    ----------
    Azzalini, A. (1985). A class of distributions which includes the normal ones.
    *Scandinavian Journal of Statistics* 12(2), 171-178.

    Benham, R., Carterette, B., Culpepper, J. S., & Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *SIGIR 2020*, 339-348.

    Parapar, J., Losada, D. E., Presedo-Quindimil, M. A., & Barreiro, A. (2019).
    Using score distributions to compare statistical significance tests for
    information retrieval evaluation. *JASIST* 71(1), 98-113.

    Examples
    --------
    >>> table = simulate_scores(seed=1)
    >>> table.data["system"].nunique(), table.data["topic"].nunique()
    (45, 50)
    """
    challengers = dict(DEFAULT_CHALLENGERS if challengers is None else challengers)
    n_artifacts = validate.integer("n_artifacts", n_artifacts, minimum=0)
    validate.probability("zero_inflation", zero_inflation, open=False)
    for name, value in (
        ("topic_sd", topic_sd),
        ("artifact_sd", artifact_sd),
        ("noise_sd", noise_sd),
        ("collection_sd", collection_sd),
        ("collection_level_sd", collection_level_sd),
    ):
        validate.finite_float(name, value, minimum=0.0)
    for name, value in (("artifact_mean", artifact_mean), ("skew", skew)):
        validate.finite_float(name, value)
    first_topic = validate.integer("first_topic", first_topic)
    if decimals is not None:
        decimals = validate.integer("decimals", decimals, minimum=0)
    seed = validate.seed(seed)
    colls = ["example"] if collections is None else [str(c) for c in collections]
    if not colls or len(set(colls)) != len(colls):
        raise OptionError(f"collections must be distinct names, got {colls}")
    sizes = (
        [n_topics] * len(colls) if np.ndim(n_topics) == 0 else list(cast(Sequence[int], n_topics))
    )
    sizes = [validate.positive_int("n_topics", n) for n in sizes]
    if len(sizes) != len(colls):
        raise OptionError(f"n_topics has {len(sizes)} entries for {len(colls)} collections")
    artifacts = [
        f"{artifact_prefix}{i:0{max(2, len(str(n_artifacts)))}d}" for i in range(1, n_artifacts + 1)
    ]
    names = [champion, *challengers, *artifacts]
    if len(set(names)) != len(names):
        raise OptionError("system names must be distinct (champion, challengers, artifacts)")

    rng = np.random.default_rng(seed)
    n_sys = len(names)
    specs = [SystemSpec(), *challengers.values()]
    # System effects b_s: champion 0, challengers by design, artifacts drawn.
    base_effect = np.concatenate(
        [
            [s.effect for s in specs],
            rng.normal(artifact_mean, artifact_sd, size=n_artifacts),
        ]
    )
    level0 = _logit(baseline)
    levels = (
        np.array([level0])
        if len(colls) == 1
        else level0 + rng.normal(0.0, collection_level_sd, size=len(colls))
    )
    frames = []
    for c, (coll, n_t) in enumerate(zip(colls, sizes, strict=True)):
        u = rng.normal(0.0, topic_sd, size=(n_t, 1))
        delta = rng.normal(0.0, collection_sd, size=n_sys)
        delta[0] = 0.0  # the champion is the reference in every collection
        effect = base_effect + delta
        inter = np.zeros((n_t, n_sys))
        for j, spec in enumerate(specs):
            if spec.spread > 0:
                inter[:, j] += spec.spread * rng.standard_normal(n_t)
            if spec.loss_prob > 0:
                inter[:, j] += spec.loss * (rng.random(n_t) < spec.loss_prob)
        eps = noise_sd * _skew_normal(rng, (n_t, n_sys), skew)
        eta = levels[c] + u + effect[None, :] + inter + eps
        y = 1.0 / (1.0 + np.exp(-eta))
        if zero_inflation > 0:
            y = np.where(rng.random(y.shape) < zero_inflation * (1.0 - y) ** 4, 0.0, y)
        if decimals is not None:
            y = np.round(y, decimals)
        topics = [str(first_topic + i) for i in range(n_t)]
        frame = pd.DataFrame(y, index=topics, columns=names)
        long = frame.rename_axis(index="topic", columns="system").stack().rename("score")
        long = long.reset_index()
        long.insert(0, "collection", coll)
        long.insert(1, "measure", measure)
        frames.append(long)
    table = ScoreTable.from_frame(
        pd.concat(frames, ignore_index=True),
        source=f"simulate_scores(seed={seed})",
        notes=("synthetic scores from bayes_ir.simulate.simulate_scores",),
    )
    return table


def simulate_judged(
    table: ScoreTable,
    *,
    depth: int = 10,
    rates: Mapping[str, float],
    rate_sd: float = 0.5,
    seed: int = 0,
) -> ScoreTable:
    r"""Simulate ``Judged@depth``: the judged fraction of the top ``depth`` of every cell.

    Parameters
    ----------
    table
        A simulated (or real) score table; one ``Judged@depth`` row is made per cell.
    depth
        Cut-off: the scores are multiples of ``1/depth``.
    rates
        System -> typical probability that a retrieved document is judged (for example
        high for the system the pools were built from, lower for a new dense model).
        Systems not listed get the mean of the given rates.
    rate_sd
        SD of the per-(collection, system) judged rate on the logit scale.
    seed
        Seed of the random generator.

    Returns
    -------
    ScoreTable
        Same collections, systems and topics, measure ``f"Judged@{depth}"``.

    Notes
    -----
    For collection :math:`c` and system :math:`s` the rate is
    :math:`p_{cs} = \operatorname{expit}(\operatorname{logit}(r_s) + N(0, \text{rate\_sd}^2))`;
    for each topic, :math:`\text{Judged@}k = \text{Binomial}(k, p_{cs}) / k`.
    """
    depth = validate.positive_int("depth", depth)
    table.require_one_per_cell("simulate_judged")
    validate.finite_float("rate_sd", rate_sd, minimum=0.0)
    seed = validate.seed(seed)
    if not rates:
        raise OptionError("rates must name at least one system")
    for system, rate in rates.items():
        validate.probability(f"rates[{system!r}]", rate)
    rng = np.random.default_rng(seed)
    default = float(np.mean(list(rates.values())))
    df = table.data
    cells = df[["collection", "system"]].drop_duplicates()
    p = {}
    for coll, system in cells.itertuples(index=False, name=None):
        r = rates.get(system, default)
        p[(coll, system)] = 1.0 / (1.0 + math.exp(-(_logit(r) + rng.normal(0.0, rate_sd))))
    prob = np.array([p[(c, s)] for c, s in zip(df["collection"], df["system"], strict=True)])
    judged = rng.binomial(depth, prob) / depth
    out = df[["collection", "system", "topic"]].copy()
    out["measure"] = f"Judged@{depth}"
    out["score"] = judged
    return ScoreTable.from_frame(
        out,
        source=f"simulate_judged(seed={seed})",
        notes=("synthetic Judged@k from bayes_ir.simulate.simulate_judged",),
    )
