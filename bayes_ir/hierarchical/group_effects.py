r"""Contrasts across collections or segments: overall, per group, between-group SD, new group.

For challenger :math:`s` and champion :math:`h`, from the draws of an
:class:`~bayes_ir.hierarchical.across.AcrossFit`:

* the **overall contrast** :math:`\delta = \beta_s - \beta_h`: the mean contrast over
  the population of collections (the random-effects mean :math:`\mu` of a
  meta-analysis);
* each group's **shrunken contrast** :math:`\delta_c = \delta + \gamma_{sc} -
  \gamma_{hc}`, beside its **raw** one, the mean of the paired per-topic differences
  of the two systems in that group (divided by the posterior mean of
  :math:`\sigma_c` on the residual-SD scale);
* the **between-group SD** of the contrast, :math:`\sqrt2\,\omega` (the :math:`\tau`
  of a meta-analysis of the contrast);
* the **contrast on a new group** :math:`\delta_{new} \sim N(\delta, 2\omega^2)` and
  :math:`P(\delta_{new} > m) = E[\Phi((\delta - m)/(\sqrt2\,\omega))]` (a
  Rao-Blackwellised average over the draws);
* **wins on k of n**: the posterior distribution of the number of the :math:`n`
  groups where :math:`\delta_c > m`.

References
----------
Gelman, A., Carlin, J. B., Stern, H. S., Dunson, D. B., Vehtari, A., Rubin, D. B.
(2013). *Bayesian Data Analysis*, 3rd ed. CRC Press, section 5.5.

Higgins, J. P. T., Thompson, S. G., Spiegelhalter, D. J. (2009). A re-evaluation of
random-effects meta-analysis. *JRSS A* 172(1), 137-159 (predictive distribution of a
new study's effect).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from bayes_ir import defaults
from bayes_ir.errors import UnknownSystemError
from bayes_ir.hierarchical.design import CrossedDesign
from bayes_ir.hierarchical.diagnostics import GateStatus

__all__ = [
    "ACROSS_COLUMNS",
    "AcrossContrasts",
    "contrasts_across",
    "family_contrast_draws",
    "group_contrast_draws",
    "population_intercepts",
]

#: Columns of :meth:`AcrossContrasts.to_frame`.
ACROSS_COLUMNS: tuple[str, ...] = (
    "challenger",
    "champion",
    "kind",
    "level",
    "mean",
    "sd",
    "ci_lower",
    "ci_upper",
    "p_better",
    "observed",
    "observed_se",
    "n_topics",
)


def _interaction(design: CrossedDesign):
    """Return the system x group term of ``design``."""
    return design.term(f"system:{design.by}")


def group_contrast_draws(
    post: dict[str, np.ndarray],
    design: CrossedDesign,
    *,
    champion: str | None = None,
    challengers: Iterable[str] | None = None,
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Draws of the overall and per-group contrasts of each challenger with the champion.

    Parameters
    ----------
    post
        ``{"system": (..., S), "system:<by>": (..., L)}`` draws (any leading shape).
    design
        The design the draws belong to.
    champion, challengers
        Default: the design's roles.

    Returns
    -------
    overall : ndarray (..., J)
    groups : ndarray (..., J, G)
        NaN where the challenger or the champion has no score in a group.
    labels : tuple of str
        The groups.
    """
    systems = list(design.term("system").levels)
    champ = design.champion if champion is None else champion
    chals = list(design.challengers if challengers is None else challengers)
    beta = post["system"]
    overall = np.stack(
        [beta[..., systems.index(c)] - beta[..., systems.index(champ)] for c in chals], axis=-1
    )
    term = _interaction(design)
    gamma = post[term.name]
    pos = {
        (s, g): k
        for k, (s, g) in enumerate(
            zip(term.components["system"], term.components[design.by], strict=True)
        )
    }
    groups = np.full(overall.shape + (len(design.groups),), np.nan)
    for j, c in enumerate(chals):
        for k, g in enumerate(design.groups):
            if (c, g) in pos and (champ, g) in pos:
                groups[..., j, k] = (
                    overall[..., j] + gamma[..., pos[(c, g)]] - gamma[..., pos[(champ, g)]]
                )
    return overall, groups, tuple(design.groups)


def population_intercepts(
    post: dict[str, np.ndarray], design: CrossedDesign, priors: Any, seed: int | None
) -> tuple[np.ndarray, np.ndarray]:
    r"""Each intercept level's topic population: intercept and SD, two (N, levels) arrays.

    ``b0`` of a level is its zero-sum intercept, :math:`\beta + \bar a` with
    :math:`\bar a` the mean effect of the :math:`T` topics of the level's zero-sum set;
    :math:`\beta` is drawn given it from the prior on ``b0``
    (:func:`~bayes_ir.hierarchical.families.base.population_intercept` with
    ``prior_on_sum``). A level whose topics are not zero-sum has ``b0`` = :math:`\beta`.
    """
    from bayes_ir.hierarchical.families import population_intercept

    b0t, topic = design.terms[0], design.term("topic")
    rng = np.random.default_rng([defaults.SEED if seed is None else int(seed), 0x2A])
    beta = np.empty_like(np.asarray(post["b0"], dtype=float))
    tau = np.empty_like(beta)
    for k in range(b0t.n_levels):
        level = int(topic.index[np.flatnonzero(b0t.index == k)[0]])
        zs = int(topic.zero_sum[level])
        n_t = int((topic.zero_sum == zs).sum()) if zs >= 0 else 0
        tau[:, k] = post["sigma_topic"][:, int(topic.scale_group[level])]
        prior = (float(priors.intercept_mu[k]), float(priors.intercept_sd[k]))
        beta[:, k] = (
            population_intercept(post["b0"][:, k], tau[:, k], n_t, prior, rng, prior_on_sum=True)
            if n_t
            else post["b0"][:, k]
        )
    return beta, tau


def family_contrast_draws(
    post: dict[str, np.ndarray],
    design: CrossedDesign,
    family: Any,
    priors: Any,
    *,
    champion: str | None = None,
    challengers: Iterable[str] | None = None,
    seed: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    r"""Score-scale contrasts of a logit-link family's fit across groups.

    With :math:`m_g(x) = \mathrm{score\_mean}\big(E_{a \sim N(0, \tau_g^2)}
    [\mathrm{logit}^{-1}(\beta_g + a + x)]\big)` the expected score of a system with
    effect :math:`x` over group :math:`g`'s topic population
    (:func:`~bayes_ir.hierarchical.families.population_mean`, the family's own parameters
    of :math:`g`; :math:`\beta_g` the population's intercept, ``b0`` less the fitted
    topics' mean effect drawn from its conditional, :func:`population_intercepts`):

    * group :math:`g`: :math:`m_g(\beta_s + \gamma_{sg}) - m_g(\beta_h + \gamma_{hg})`;
    * overall: :math:`\frac1G \sum_g [m_g(\beta_s) - m_g(\beta_h)]`, the contrast at a
      typical system x group effect (0), averaged over the groups' baselines;
    * a new group: :math:`m_{g^*}(\beta_s + \gamma'_s) - m_{g^*}(\beta_h + \gamma'_h)`,
      :math:`\gamma' \sim N(0, \omega^2)` independently and the baseline of a group
      :math:`g^*` drawn uniformly from the fitted ones (a new collection is like one of
      these in difficulty; its sign does not depend on that choice, since the link is
      monotone).

    Parameters
    ----------
    post
        Draws ``{"b0", "sigma_topic", "system", "system:<by>", "sigma_system_<by>"`` and
        the family's own parameters``}``, leading shape (N,).
    design, family
        The design and the (resolved) family of the fit.
    priors
        The fit's :class:`~bayes_ir.hierarchical.design.DesignPriors` (the prior of
        ``b0``, which splits it into the population's intercept and the topics' mean).
    champion, challengers
        Default: the design's roles.
    seed
        Seed of the new group's draws and of the intercepts'.

    Returns
    -------
    overall : ndarray (N, J)
    groups : ndarray (N, J, G)
        NaN where the challenger or the champion has no score in a group.
    new : ndarray (N, J)
    labels : tuple of str
    """
    from bayes_ir.hierarchical.families import population_mean

    systems = list(design.term("system").levels)
    champ = design.champion if champion is None else champion
    chals = list(design.challengers if challengers is None else challengers)
    term = _interaction(design)
    beta, gamma = post["system"], post[term.name]
    omega = post[term.scale_name][:, 0]
    n = beta.shape[0]
    intercept, sd = population_intercepts(post, design, priors, seed)
    b0t = design.terms[0]
    res = [
        int(design.residual.index[np.flatnonzero(b0t.index == k)[0]]) for k in range(b0t.n_levels)
    ]

    def mean(k: int, x: np.ndarray, rows: Any = slice(None)) -> np.ndarray:
        own = {name: post[name][rows, res[k]] for name in family.design_own}
        return family.score_mean(own, population_mean(intercept[rows, k] + x, sd[rows, k]))

    pos = {
        (s, g): i
        for i, (s, g) in enumerate(
            zip(term.components["system"], term.components[design.by], strict=True)
        )
    }
    level_of = {str(lev): k for k, lev in enumerate(b0t.levels)}
    rng = np.random.default_rng([defaults.SEED if seed is None else int(seed), 0x29])
    pick = rng.integers(0, b0t.n_levels, size=n)
    h = systems.index(champ)
    overall = np.zeros((n, len(chals)))
    groups = np.full((n, len(chals), len(design.groups)), np.nan)
    new = np.empty((n, len(chals)))
    z_h = rng.standard_normal(n)
    champ_at_zero = [mean(k, beta[:, h]) for k in range(b0t.n_levels)]  # shared by all
    for j, c in enumerate(chals):
        s = systems.index(c)
        z_s = rng.standard_normal(n)
        for k in range(b0t.n_levels):
            overall[:, j] += (mean(k, beta[:, s]) - champ_at_zero[k]) / b0t.n_levels
            at = pick == k
            new[at, j] = mean(k, (beta[:, s] + omega * z_s)[at], at) - mean(
                k, (beta[:, h] + omega * z_h)[at], at
            )
        for g_i, g in enumerate(design.groups):
            if (c, g) in pos and (champ, g) in pos:
                k = level_of[str(g)]
                groups[:, j, g_i] = mean(k, beta[:, s] + gamma[:, pos[(c, g)]]) - mean(
                    k, beta[:, h] + gamma[:, pos[(champ, g)]]
                )
    return overall, groups, new, tuple(design.groups)


def _observed(
    design: CrossedDesign, champion: str, challengers: list[str]
) -> tuple[np.ndarray, ...]:
    """Mean, SE and count of the paired per-topic differences per challenger and group."""
    cells = design.cells.assign(score=design.y)
    wide = cells.pivot_table(
        index=[design.by, "topic"], columns="system", values="score", aggfunc="first"
    )
    shape = (len(challengers), len(design.groups))
    mean, se, n = np.full(shape, np.nan), np.full(shape, np.nan), np.zeros(shape, dtype=int)
    for j, c in enumerate(challengers):
        if c not in wide or champion not in wide:
            continue
        d = (wide[c] - wide[champion]).dropna()
        for k, g in enumerate(design.groups):
            if g not in d.index.get_level_values(0):
                continue
            x = d.xs(g, level=0).to_numpy(dtype=float)
            n[j, k] = x.size
            mean[j, k] = x.mean()
            se[j, k] = x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else np.nan
    return mean, se, n


@dataclass(frozen=True, eq=False)
class AcrossContrasts:
    r"""Every challenger against the champion across groups (collections or segments).

    Build it with :func:`contrasts_across` (or :meth:`AcrossFit.contrasts
    <bayes_ir.hierarchical.across.AcrossFit.contrasts>`). Attributes hold raw numbers.

    Attributes
    ----------
    by
        ``"collection"`` or ``"segment"``.
    groups
        The groups, in order.
    champion, challengers
        The systems compared.
    scale
        ``"measure"`` or ``"sd"`` (contrasts in units of each group's residual SD).
    measures
        The measure of every collection.
    ci_prob, margin
        Interval probability; the margin :math:`m` a win must exceed.
    overall
        Draws (N, J) of the overall contrasts.
    between_sd
        Draws (N,) of the between-group SD of a contrast, :math:`\sqrt2\,\omega`.
    group
        Draws (N, J, G) of the per-group contrasts (NaN where not observed).
    observed, observed_se, n_topics
        The raw per-group mean difference (on the contrasts' scale), its SE and the
        number of paired topics, (J, G).
    observed_measure
        The raw mean difference in each group's measure, (J, G).
    sigma
        Posterior mean residual SD of each group's collection, (G,).
    gate
        The fit's diagnostics gate.
    header
        One line naming the data and the model.
    model_check
        The fit's :class:`~bayes_ir.hierarchical.AcrossModelCheck`
        (``None`` when it was not run).
    misfit
        The champion and challengers the model check flags (marked in every output).
    likelihood
        The fit's family (``"gaussian"``, ``"bernoulli"``, ``"binomial"``, ``"zoib"``).
    new
        Draws (N, J) of the contrast on a new group when it is not normal (a logit
        family's, :func:`family_contrast_draws`); ``None`` for the Gaussian model.
    between_scale
        Where :attr:`between_sd` lives when it is not the contrasts' scale (``"logit"``).
    """

    by: str
    groups: tuple[str, ...]
    champion: str
    challengers: tuple[str, ...]
    scale: str
    measures: dict[str, str]
    ci_prob: float
    margin: float
    overall: np.ndarray
    between_sd: np.ndarray
    group: np.ndarray
    observed: np.ndarray
    observed_se: np.ndarray
    observed_measure: np.ndarray
    n_topics: np.ndarray
    sigma: np.ndarray
    gate: GateStatus
    header: str
    model_check: Any = None
    misfit: tuple[str, ...] = ()
    likelihood: str = "gaussian"
    new: np.ndarray | None = None
    between_scale: str = ""

    @property
    def units(self) -> str:
        """What a contrast is measured in."""
        if self.scale == "sd":
            return "residual SDs of each collection"
        return ", ".join(sorted(set(self.measures.values())))

    def p_new_win(self, margin: float | None = None) -> np.ndarray:
        r"""Return P(the contrast on a new group exceeds ``margin``) per challenger.

        Rao-Blackwellised: the mean over the draws of the normal probability (the
        share of :attr:`new`'s draws above the margin when it is set).
        """
        m = self.margin if margin is None else float(margin)
        if self.new is not None:
            return (self.new > m).mean(axis=0)
        sd = np.maximum(self.between_sd, 1e-300)[:, None]
        return special.ndtr((self.overall - m) / sd).mean(axis=0)

    def predictive_draws(self, *, seed: int | None = None) -> np.ndarray:
        """Draws (N, J) of the contrast on a new group: overall + between-group SD x N(0, 1).

        :attr:`new` when it is set (then ``seed`` has no effect).
        """
        if self.new is not None:
            return self.new
        rng = np.random.default_rng([defaults.SEED if seed is None else int(seed), 0x29])
        z = rng.standard_normal(self.overall.shape)
        return self.overall + self.between_sd[:, None] * z

    def wins(self) -> pd.DataFrame:
        """P(the challenger wins on exactly k of the n groups), k = 0..n.

        Columns ``challenger, n_groups, k, probability``; a win is a group contrast
        above the margin; groups without scores of both systems are left out of n.
        """
        rows = []
        for j, c in enumerate(self.challengers):
            seen = ~np.isnan(self.group[0, j])
            wins = (self.group[:, j, seen] > self.margin).sum(axis=1)
            p = np.bincount(wins, minlength=int(seen.sum()) + 1) / wins.size
            rows += [(c, int(seen.sum()), k, float(pk)) for k, pk in enumerate(p)]
        return pd.DataFrame(rows, columns=["challenger", "n_groups", "k", "probability"])

    def to_frame(self) -> pd.DataFrame:
        """One row per challenger and quantity, columns :data:`ACROSS_COLUMNS`.

        ``kind`` is ``"overall"``, ``"new"`` (the contrast on a new group, its
        ``p_better`` the Rao-Blackwellised P(win on a new group)), ``"between_sd"``
        or the grouping (``"collection"``/``"segment"``, one row per group, with the
        raw ``observed`` difference, its SE and ``n_topics``). ``p_better`` is
        P(contrast > margin).
        """
        lo, hi = (1 - self.ci_prob) / 2, (1 + self.ci_prob) / 2
        pred = self.predictive_draws()
        rows = []

        def row(j, kind, level, x, p, obs=np.nan, se=np.nan, n=np.nan):
            return (self.challengers[j], self.champion, kind, level, float(x.mean()),
                    float(x.std(ddof=1)), float(np.quantile(x, lo)), float(np.quantile(x, hi)),
                    p, obs, se, n)  # fmt: skip

        p_new = self.p_new_win()
        for j in range(len(self.challengers)):
            x = self.overall[:, j]
            rows.append(row(j, "overall", "overall", x, float((x > self.margin).mean())))
            rows.append(row(j, "new", f"new {self.by}", pred[:, j], float(p_new[j])))
            between = f"between-{self.by} SD" + (
                f" ({self.between_scale})" if self.between_scale else ""
            )
            rows.append(row(j, "between_sd", between, self.between_sd, np.nan))
            for k, g in enumerate(self.groups):
                x = self.group[:, j, k]
                if np.isnan(x[0]):
                    continue
                rows.append(
                    row(
                        j,
                        self.by,
                        g,
                        x,
                        float((x > self.margin).mean()),
                        float(self.observed[j, k]),
                        float(self.observed_se[j, k]),
                        int(self.n_topics[j, k]),
                    )  # fmt: skip
                )
        return pd.DataFrame(rows, columns=list(ACROSS_COLUMNS))

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """Header, gate, and per challenger the overall, new-group and per-group contrasts."""
        from bayes_ir.report.across import across_summary

        return across_summary(self)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.to_frame().to_html(index=False)

    def plot(self, **kwargs: Any) -> Any:
        """Forest plot: raw and shrunken group contrasts, overall and new-group intervals.

        See :func:`bayes_ir.plots.across.plot_across`.
        """
        from bayes_ir.plots.across import plot_across

        return plot_across(self, **kwargs)


def contrasts_across(
    fit: Any,
    *,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    ci_prob: float | None = None,
    margin: float = 0.0,
) -> AcrossContrasts:
    """Contrasts of every challenger with the champion from an :class:`AcrossFit`.

    Parameters
    ----------
    fit
        An :class:`~bayes_ir.hierarchical.across.AcrossFit`.
    champion, challengers
        Override the roles of the fit's table.
    ci_prob
        Interval probability (default :data:`bayes_ir.defaults.CI_PROB`).
    margin
        A win is a contrast above ``margin`` (in the contrasts' units; default 0).

    Returns
    -------
    AcrossContrasts
    """
    from bayes_ir import validate

    design = fit.design
    p = defaults.ci_prob(ci_prob)
    margin = validate.finite_float("margin", margin)
    champ = design.champion if champion is None else str(champion)
    if challengers is None:
        chals = list(design.challengers)
    else:
        chals = [challengers] if isinstance(challengers, str) else list(challengers)
    for s in (champ, *chals):
        if s not in design.systems:
            raise UnknownSystemError(s, design.systems)
    term = _interaction(design)
    family = fit.family
    gaussian = family.name == "gaussian"
    post = {"system": fit.term_draws("system"), term.name: fit.term_draws(term.name)}
    omega = fit.term_draws(term.scale_name)[:, 0]
    new = None
    if gaussian:
        overall, group, labels = group_contrast_draws(
            post, design, champion=champ, challengers=chals
        )
        sigma_draws = fit.term_draws("sigma")
        colls = list(design.residual.levels)
        means = sigma_draws.mean(axis=0)
        if design.by == "collection" and len(colls) > 1:
            sigma = means[[colls.index(g) for g in labels]]
        else:  # one residual SD for every group
            sigma = np.repeat(means[0], len(labels))
    else:
        names = ("b0", "sigma_topic", term.scale_name, *family.design_own)
        post |= {k: fit.term_draws(k) for k in names}
        overall, group, new, labels = family_contrast_draws(
            post, design, family, fit.priors, champion=champ, challengers=chals,
            seed=fit.provenance.get("seed"),
        )  # fmt: skip
        sigma = np.full(len(labels), np.nan)  # no residual SD on the logit scale
    obs, se, n = _observed(design, champ, chals)
    unit = sigma[None, :] if design.scale == "sd" else 1.0
    gate = fit.gate()
    n_groups = len(labels)
    header = (
        f"Bayesian hierarchical model across {n_groups} {design.by}s "
        f"({family.spec if not gaussian else 'Gaussian'}; {fit.method}): "
        f"{len(design.systems)} systems\n{fit.describe_draws()}"
    )
    return AcrossContrasts(
        by=str(design.by),
        groups=labels,
        champion=champ,
        challengers=tuple(chals),
        scale=design.scale,
        measures=design.measures,
        ci_prob=p,
        margin=margin,
        overall=overall,
        between_sd=np.sqrt(2.0) * omega,
        group=group,
        observed=obs / unit,
        observed_se=se / unit,
        observed_measure=obs,
        n_topics=n,
        sigma=sigma,
        gate=gate,
        header=header,
        model_check=fit.model_check,
        misfit=tuple(s for s in getattr(fit.model_check, "flagged", ()) if s in (champ, *chals)),
        likelihood=family.name,
        new=new,
        between_scale="" if gaussian else family.link,
    )
