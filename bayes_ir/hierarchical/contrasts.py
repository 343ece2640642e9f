r"""Decisions read from a hierarchical fit: contrasts, pairwise and rank probabilities.

Every function here is a pure function of the posterior draws of a
:class:`~bayes_ir.hierarchical.HierarchicalFit` (or of its ``DataTree``), in the
style of ArviZ: the fit comes first, options are keyword-only. A contrast between
two systems is the difference of their system effects, which equals the difference
of their system means :math:`\beta_0 + u_s` (the intercept cancels), computed draw
by draw, so every probability is the fraction of posterior draws in which an event
holds.

The diagnostics gate covers the reported numbers: each result carries the fit's
own diagnostics verdict and the R-hat and effective sample sizes of every reported
contrast; when any of them fails, ``summary()`` says so first and the ``verdict``
column is prefixed with ``UNRELIABLE``.

References
----------
Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
inferential risk evaluation on multiple IR systems. In *Proceedings of the 43rd
International ACM SIGIR Conference on Research and Development in Information
Retrieval* (SIGIR '20), 339-348. doi:10.1145/3397271.3401033
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Self

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.decision.rules import MISFIT_VERDICT, interval_verdict
from bayes_ir.errors import InsufficientDataError, RoleError, UnknownSystemError
from bayes_ir.hierarchical.diagnostics import GateStatus, draw_diagnostics
from bayes_ir.hierarchical.families import family_of
from bayes_ir.hierarchical.families.logit import UNPOOLED_PRIOR
from bayes_ir.hierarchical.intervals import hdi_bounds
from bayes_ir.hierarchical.model import MIN_POOLED, POOLINGS_BY_LINK, posterior_with_roles

__all__ = [
    "Comparison",
    "ManyVsOne",
    "POOLED_SHARE_MCSE",
    "PairwiseProbabilities",
    "Pooling",
    "RankProbabilities",
    "compare",
    "difference_variance_draws",
    "interval_stats",
    "many_vs_one",
    "pairwise_probabilities",
    "pooling_of",
    "rank_probabilities",
    "shrinkage_lines",
    "system_mean_draws",
    "topic_draws",
]

SAMPLE_DIMS = ("chain", "draw")

#: Columns of :meth:`Comparison.to_frame` (``hdi_lower``, ``hdi_upper`` follow ``ci_upper``
#: when the comparison was made with ``hdi=True``).
COMPARISON_COLUMNS = (
    "challenger",
    "champion",
    "observed",
    "mean",
    "pooled_share",
    "median",
    "sd",
    "ci_lower",
    "ci_upper",
    "p_better",
    "min_gain",
    "p_gain",
    "rhat",
    "ess_bulk",
    "ess_tail",
    "fit",
    "verdict",
)
#: Columns of :meth:`ManyVsOne.to_frame`: those of a comparison without gain, fit and verdict.
MANY_VS_ONE_COLUMNS = tuple(
    c for c in COMPARISON_COLUMNS if c not in ("min_gain", "p_gain", "fit", "verdict")
)


# ---------------------------------------------------------------------- posterior access
def _tree(fit: Any) -> xr.DataTree:
    """Return the DataTree of a fit (or the DataTree itself)."""
    if isinstance(fit, xr.DataTree):
        return fit
    tree = getattr(fit, "posterior", None)
    if isinstance(tree, xr.DataTree):
        return tree
    raise TypeError(f"expected a HierarchicalFit or an xarray.DataTree, got {type(fit).__name__}")


def _posterior(fit: Any) -> xr.Dataset:
    """Return the ``posterior`` group as a Dataset."""
    tree = _tree(fit)
    if "posterior" not in tree.children:
        raise TypeError("the DataTree has no 'posterior' group")
    return posterior_with_roles(tree)


def _effect(fit: Any, kind: str) -> xr.DataArray:
    """Draws of the ``system`` or ``topic`` effects, dims ``(chain, draw, kind)``.

    Accepts the effect stored as a data variable named ``kind`` or as a
    same-named non-index coordinate (what xarray makes of a variable named like its
    dimension), and the PyMC-safe spellings ``kind + "_effect"`` / ``"u_" + kind``.
    """
    post = _posterior(fit)
    for name in (kind, f"{kind}_effect", f"{kind}_effects", f"u_{kind}", f"b_{kind}"):
        if name in post.variables and set(SAMPLE_DIMS) <= set(post[name].dims):
            var = post.variables[name]
            other = [d for d in var.dims if d not in SAMPLE_DIMS]
            if len(other) != 1:
                continue
            dim = other[0]
            labels = _labels(fit, kind, dim, post)
            da = xr.DataArray(
                np.asarray(var.transpose("chain", "draw", dim).values, dtype=float),
                dims=("chain", "draw", kind),
                coords={"chain": post["chain"].values, "draw": post["draw"].values, kind: labels},
            )
            if kind == "system":
                da = da.assign_coords(role=(kind, _roles(fit, labels, post, dim)))
            return da
    raise TypeError(f"the posterior has no {kind} effects (expected a variable {kind!r})")


def _labels(fit: Any, kind: str, dim: Hashable, post: xr.Dataset) -> list[str]:
    if dim in post.indexes:
        return [str(v) for v in post.indexes[dim]]
    table = getattr(fit, "table", None)
    if table is not None:
        names = list(table.systems) if kind == "system" else list(table.topics)
        if len(names) == post.sizes[dim]:
            return names
    return [str(i) for i in range(post.sizes[dim])]


def _roles(fit: Any, labels: Sequence[str], post: xr.Dataset, dim: Hashable) -> list[str]:
    if "role" in post.coords and post["role"].dims == (dim,):
        return [str(r) for r in post["role"].values]
    table = getattr(fit, "table", None)
    roles = getattr(table, "roles", None)
    if roles is not None:
        return [roles.role_of(s) if s in roles.ordered else "artifact" for s in labels]
    return ["" for _ in labels]


def system_draws(fit: Any) -> xr.DataArray:
    """Posterior draws of the system effects ``u_s``, dims ``(chain, draw, system)``.

    The ``role`` coordinate (champion, challenger, artifact) labels the systems.
    """
    return _effect(fit, "system")


def _system_draws_named(fit: Any) -> tuple[xr.DataArray, list[str]]:
    """Return the draws of the systems' score-scale means and the system names, in order.

    Every contrast, probability and rank reads these (:func:`system_mean_draws`), so it
    is in the measure's units whatever the likelihood family.
    """
    u = system_mean_draws(fit)
    return u, [str(s) for s in u["system"].values]


def topic_draws(fit: Any) -> xr.DataArray:
    """Posterior draws of the topic effects ``t_j``, dims ``(chain, draw, topic)``."""
    return _effect(fit, "topic")


def system_mean_draws(fit: Any) -> xr.DataArray:
    r"""Posterior draws of each system's mean score, dims (chain, draw, system), ``role`` coord.

    On the measure's scale whatever the likelihood family: :math:`\beta_0 + u_s` for
    the Gaussian and skew-normal (identity link); the posterior's ``system_mean``
    (the expected score over the topic population, see
    :mod:`bayes_ir.hierarchical.families.base`) for a family with another link.
    """
    post = _posterior(fit)
    u = system_draws(fit)
    if "system_mean" in post:
        means = post["system_mean"].transpose("chain", "draw", "system")
        return u.copy(data=np.asarray(means.sel(system=u["system"].values).values, dtype=float))
    return u + xr.DataArray(np.asarray(post["b0"].values, dtype=float), dims=SAMPLE_DIMS)


def difference_variance_draws(fit: Any, champion: str, challengers: Sequence[str]) -> np.ndarray:
    r"""Draws of the variance of each challenger's score minus the champion's on a new topic.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit`.
    champion, challengers
        System names.

    Returns
    -------
    numpy.ndarray
        Shape (chains x draws, challengers): :math:`\sigma_c^2 + \sigma_h^2` for the
        Gaussian and skew-normal models; for another family the variance of
        :math:`y_c - y_h` over its cells' noise and the topic population
        (:meth:`bayes_ir.hierarchical.families.Family.difference_variance`). What the
        more-topics analysis of :func:`bayes_ir.decide` draws new topics' differences from.
    """
    family = family_of(fit)
    post = _posterior(fit)
    systems = [str(s) for s in post["system"].values]
    index = np.array([systems.index(c) for c in challengers])
    return family.difference_variance(family.parameters(post), systems.index(champion), index)


def residual_sd_draws(fit: Any) -> xr.DataArray:
    r"""Posterior draws of each system's residual SD :math:`\sigma_s`, dims (chain, draw, system).

    One value per draw for every system with a pooled ``sigma``; the per-system
    ``sigma`` of a ``sigma="system"`` fit otherwise. ``fit`` may also be the
    ``posterior`` Dataset itself. Code that simulates or scores observations reads
    the residual SD here, so it works for both residual-SD structures.
    """
    post = fit if isinstance(fit, xr.Dataset) else _posterior(fit)
    sig = post["sigma"]
    if "system" in sig.dims:
        return sig.transpose("chain", "draw", "system")
    systems = post["system_effect"]["system"]
    return sig.expand_dims(system=systems).transpose("chain", "draw", "system")


def _check_systems(names: Iterable[str], known: Sequence[str], role: str) -> list[str]:
    names = [names] if isinstance(names, str) else list(names)
    for name in names:
        if name not in known:
            raise UnknownSystemError(name, known, role=role)
    return names


def _default_roles(fit: Any, u: xr.DataArray) -> tuple[str, tuple[str, ...]]:
    roles = u["role"].values
    systems = [str(s) for s in u["system"].values]
    champions = [s for s, r in zip(systems, roles, strict=True) if r == "champion"]
    challengers = tuple(s for s, r in zip(systems, roles, strict=True) if r == "challenger")
    return (champions[0] if champions else ""), challengers


# ---------------------------------------------------------------------- diagnostics
class _Gated:
    """Mixin of the results that carry a :class:`GateStatus` ``gate`` and a ``summary()``."""

    gate: GateStatus
    summary: Callable[[], str]  # each result's own plain-text summary

    @property
    def diagnostics_passed(self) -> bool:
        """True when the posterior behind the result passed the diagnostics gate (``gate``)."""
        return self.gate.passed

    def __str__(self) -> str:
        return self.summary()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)


def _draw_diagnostics(draws: xr.DataArray, dim: str) -> pd.DataFrame:
    """R-hat (rank-normalised) and bulk/tail ESS of each slice of ``draws`` along ``dim``."""
    stats = draw_diagnostics(draws.transpose(*SAMPLE_DIMS, dim))
    return stats[["rhat", "ess_bulk", "ess_tail"]].set_axis([str(v) for v in draws[dim].values])


def _gate(fit: Any, diag: pd.DataFrame | None = None, what: str = "") -> GateStatus:
    """Gate the fit, and with ``diag`` also the R-hat and ESS of the reported ``what``."""
    status = GateStatus.of(fit)
    if diag is None:
        return status
    passed, messages = status.passed, list(status.messages)
    rhat_max, ess_min = status.rhat_max, status.ess_min
    bad_rhat = diag.index[diag["rhat"] > rhat_max].tolist()
    ess = diag[["ess_bulk", "ess_tail"]].min(axis=1)
    bad_ess = diag.index[ess < ess_min].tolist()
    if bad_rhat:
        messages.append(f"R-hat above {rhat_max:g} for {what}: {', '.join(bad_rhat)}")
    if bad_ess:
        messages.append(f"ESS below {ess_min:g} for {what}: {', '.join(bad_ess)}")
    ok = passed and not bad_rhat and not bad_ess
    return replace(status, passed=ok, messages=tuple(messages))  # the refit the fit's gate named


def _data_names(fit: Any) -> dict[str, str]:
    """Return the ``collection`` and ``measure`` of the fit's table (empty when it has none)."""
    table: Any = getattr(fit, "table", None)
    try:
        return {"collection": str(table.collections[0]), "measure": str(table.measures[0])}
    except (IndexError, AttributeError, TypeError):
        return {"collection": "", "measure": ""}


def _scale_note(fit: Any) -> str:
    """How the fit's score-scale system means are computed (its family's note)."""
    return family_of(fit).mean_note() if hasattr(fit, "provenance") else "b0 + effect"


def _header(fit: Any, title: str) -> str:
    post = _posterior(fit)
    parts = [title]
    names = _data_names(fit)
    if names["measure"]:
        parts.append(f"collection {names['collection']!r}, measure {names['measure']!r}")
    likelihood = getattr(fit, "likelihood", None)
    if likelihood:
        by_system = getattr(fit, "provenance", {}).get("sigma") == "system"
        parts.append(f"{likelihood} likelihood" + (", residual SD per system" if by_system else ""))
    parts.append(f"{post.sizes['chain']} chains x {post.sizes['draw']} draws")
    return "; ".join(parts)


# ---------------------------------------------------------------------- what the model did
#: Largest Monte Carlo SE of a ``pooled_share`` that is reported: a share known less
#: precisely (an observed difference near 0, where ``1 - model/observed`` divides by
#: almost nothing) is NaN.
POOLED_SHARE_MCSE: float = 0.05
#: Draws on which :func:`pooling_of` computes the working information of a logit family.
POOLING_DRAWS: int = 200


def _observed_scores(fit: Any) -> pd.DataFrame | None:
    """Return the observed scores, topic x system (NaN where missing); ``None`` when unknown."""
    tree = _tree(fit)
    if "observed_data" in tree.children:
        da = tree["observed_data"].to_dataset()["score"]
    elif getattr(fit, "table", None) is not None:
        da = fit.table.matrix()
    else:
        return None
    da = da.transpose("topic", "system")
    return pd.DataFrame(
        np.asarray(da.values, dtype=float),
        index=[str(t) for t in da["topic"].values],
        columns=[str(s) for s in da["system"].values],
    )


def _observed_differences(fit: Any, pairs: Sequence[tuple[str, str]]) -> tuple[float, ...]:
    """Raw mean of ``a - b`` over the topics both systems have, for each pair ``(a, b)``.

    The paired tests' mean difference (:func:`bayes_ir.paired_tests`); NaN when the fit
    carries no observed scores or the two systems share no topic.
    """
    scores = _observed_scores(fit)
    if scores is None:
        return tuple(np.nan for _ in pairs)
    out = []
    for a, b in pairs:
        d = (scores[a] - scores[b]).to_numpy()
        d = d[np.isfinite(d)]
        out.append(float(d.mean()) if d.size else np.nan)
    return tuple(out)


def _pooled_share(model: np.ndarray, observed: np.ndarray, mcse: np.ndarray) -> np.ndarray:
    r"""``1 - model/observed``, NaN when its Monte Carlo SE exceeds :data:`POOLED_SHARE_MCSE`.

    The Monte Carlo SE of the share is that of the posterior mean, ``mcse``, divided by
    :math:`|\text{observed}|`.
    """
    model, observed = np.asarray(model, dtype=float), np.asarray(observed, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = 1.0 - model / observed
        known = np.asarray(mcse, dtype=float) / np.abs(observed) <= POOLED_SHARE_MCSE
    return np.where(np.isfinite(share) & known, share, np.nan)


def _observed_columns(
    stats: pd.DataFrame, observed: Sequence[float], diagnostics: pd.DataFrame
) -> dict[str, np.ndarray]:
    """``observed``, the interval statistics and ``pooled_share`` of a result's frame."""
    mean = stats["mean"].to_numpy()
    obs = np.asarray(observed, dtype=float) if len(observed) else np.full(mean.shape, np.nan)
    mcse = stats["sd"].to_numpy() / np.sqrt(diagnostics["ess_bulk"].to_numpy())
    share = _pooled_share(mean, obs, mcse)
    return {"observed": obs, **{c: stats[c].to_numpy() for c in stats.columns},
            "pooled_share": share}  # fmt: skip


@dataclass(frozen=True)
class Pooling:
    r"""What partial pooling did to the system effects of a fit: build with :func:`pooling_of`.

    Attributes
    ----------
    pooling
        ``"all"`` (every system effect shares ``sigma_system``, the seed's model),
        ``"artifacts"`` (the artifact runs only; champion and challengers unpooled) or
        ``"none"`` (no system pooled; no ``sigma_system``: its fields are NaN), as in
        :func:`bayes_ir.hierarchical.fit`.
    n_pooled
        Number of systems whose effects share ``sigma_system``.
    n_artifacts
        Number of artifact runs in the fit.
    sigma_system, sigma_system_lower, sigma_system_upper
        Posterior mean and equal-tailed ``ci_prob`` interval of ``sigma_system``, the
        spread of the pooled systems' effects.
    standard_error
        Posterior mean of :math:`\sqrt{\overline{\sigma_s^2 / n_s}}`, the standard error
        of one pooled system's mean (:math:`n_s` topics observed; the mean over the
        pooled systems).
    share
        The share by which pooling pulls a difference between the champion and a
        challenger towards 0: :math:`E[B]` with :math:`B = SE^2/(SE^2 +
        \sigma_{system}^2)` for ``"all"`` (exact for the Gaussian model of a complete
        table, where every contrast's posterior mean is :math:`(1 - E[B])` times the
        observed difference; approximate otherwise), 0 for ``"artifacts"``.
    ci_prob
        Probability of the interval of ``sigma_system``.
    link
        The link of the fit's family: ``"identity"``, or ``"logit"``, where
        ``sigma_system``, the standard error and the share are on the logit scale (the
        working-variance approximation of :func:`pooling_of`).
    """

    pooling: str
    n_pooled: int
    n_artifacts: int
    sigma_system: float
    sigma_system_lower: float
    sigma_system_upper: float
    standard_error: float
    share: float
    ci_prob: float
    link: str = "identity"

    @property
    def artifacts_among(self) -> str:
        """How many of the pooled systems are artifact runs, as a phrase for a sentence."""
        if self.n_artifacts == 0:
            return "no artifact runs among them"
        return f"the {self.n_artifacts} artifact runs included"

    def way_out(self, *, cli: bool = False) -> str:
        """Say how to leave the champion and challengers unpooled, or why that is not offered.

        In the caller's words: ``--pooling none`` on the command line (``cli``), else
        ``fit(..., pooling='none')``. The rule is the one :func:`~bayes_ir.hierarchical.fit`
        applies: the poolings of the link (:data:`~bayes_ir.hierarchical.model.POOLINGS_BY_LINK`),
        and at least :data:`~bayes_ir.hierarchical.model.MIN_POOLED` artifact runs to pool
        for ``"artifacts"``.
        """
        offered = POOLINGS_BY_LINK[self.link]
        unpooled = "none" if "none" in offered else "artifacts"
        option = f"--pooling {unpooled}" if cli else f"fit(..., pooling='{unpooled}')"
        if unpooled == "none":
            return f"{option} leaves every system unpooled"
        if self.n_artifacts < MIN_POOLED:
            return (
                f"{option} needs at least {MIN_POOLED} artifact runs to pool and this fit has "
                f"{self.n_artifacts}: include other runs of the collection as artifacts, or "
                "read the observed difference beside the model's"
            )
        return f"{option} leaves the champion and challengers unpooled"

    def summary(self) -> str:
        """Why the model's differences differ from the observed ones, in one sentence."""
        if self.pooling == "none":  # no sigma_system to report
            return (
                "Pooling 'none': every system effect is unpooled (the fixed prior "
                f"{UNPOOLED_PRIOR} on the {self.link} scale, no sigma_system), so "
                "no spread learnt from the systems pulls differences towards 0."
            )
        spread = (
            f"sigma_system = {self.sigma_system:.3f} [{self.sigma_system_lower:.3f}, "
            f"{self.sigma_system_upper:.3f}]"
        )
        way_out = self.way_out()
        if self.pooling == "artifacts":
            return (
                "Pooling 'artifacts': the champion and challengers are unpooled, so their "
                f"differences are not pulled; the {self.n_artifacts} artifact runs share "
                f"{spread} and inform the topic effects and the residual SD."
            )
        if self.link != "identity":
            return (
                f"Pooling 'all': the {self.n_pooled} system effects, {self.artifacts_among}, "
                f"are pulled towards their mean; on the {self.link} "
                f"scale their spread {spread} against a standard error of "
                f"{self.standard_error:.3f} per system effect pulls each difference about "
                f"{self.share:.0%} of the way to 0 (approximately; pooled_share is measured "
                f"on the score scale); {way_out}."
            )
        return (
            f"Pooling 'all': the {self.n_pooled} system effects, {self.artifacts_among}, "
            f"are pulled towards their mean; their spread {spread} "
            f"against a standard error of {self.standard_error:.3f} per system mean pulls "
            f"each difference about {self.share:.0%} of the way to 0 (pooled_share); "
            f"{way_out}."
        )

    def __str__(self) -> str:
        return self.summary()


def pooling_of(fit: Any, *, ci_prob: float | None = None) -> Pooling:
    r"""How a fit pooled its system effects, and how far that pulls a difference.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` (or its posterior DataTree,
        read as ``pooling="all"``).
    ci_prob
        Probability of the interval of ``sigma_system`` (default
        :data:`bayes_ir.defaults.CI_PROB`).

    Returns
    -------
    Pooling

    Notes
    -----
    For the Gaussian model of a complete table, given the scales, each pooled system's
    effect is its observed deviation from the mean of the pooled systems times
    :math:`1 - B`, :math:`B = (\sigma^2/T)/(\sigma^2/T + \chi^2)` (the precision-weighted
    average of the data and the prior mean 0; see :mod:`bayes_ir.hierarchical.exact`), so
    a difference between two pooled systems has posterior mean :math:`(1 - E[B])` times
    the observed difference. ``share`` is :math:`E[B]` over the draws, with
    :math:`\sigma^2/T` replaced by the mean of :math:`\sigma_s^2/n_s` over the pooled
    systems when topics are missing or the residual SD varies by system.

    For a family with a logit link (bernoulli, binomial, zoib) the same formula is read on
    the link scale with :math:`\sigma_s^2/n_s` replaced by :math:`1/\sum_t w_{ts}`, the
    inverse of the working information :math:`w_{ts} = (dE[y_{ts}]/d\eta_{ts})^2 /
    \mathrm{Var}(y_{ts})` of the cells
    (:attr:`~bayes_ir.hierarchical.families.Cells.information`; :math:`n p(1-p)` for a
    binomial proportion), on up to
    ``POOLING_DRAWS`` (200) draws: the penalised quasi-likelihood approximation of a
    generalised linear mixed model (Breslow and Clayton 1993), so ``share`` is
    approximate there; ``pooled_share`` (the observed against the model's score-scale
    difference) is what the model did.

    References
    ----------
    Gelman, A., Carlin, J. B., Stern, H. S., Dunson, D. B., Vehtari, A., Rubin, D. B.
    (2013). *Bayesian Data Analysis*, 3rd ed. CRC Press, section 5.4 (the shrinkage of
    the normal hierarchical model).

    Breslow, N. E., and Clayton, D. G. (1993). Approximate inference in generalized linear
    mixed models. *Journal of the American Statistical Association* 88(421), 9-25.
    """
    p = defaults.ci_prob(ci_prob)
    post = _posterior(fit)
    u = system_draws(fit)
    roles = [str(r) for r in u["role"].values]
    pooling = str(getattr(fit, "pooling", "all"))
    family = family_of(fit) if hasattr(fit, "provenance") else None
    link = "identity" if family is None else family.link
    if pooling == "none":
        nan = float("nan")
        return Pooling("none", 0, roles.count("artifact"), nan, nan, nan, nan, 0.0, p, link)
    pooled = np.array([pooling == "all" or r == "artifact" for r in roles])
    scores = _observed_scores(fit)
    n_topics = post.sizes["topic"]
    systems = [str(s) for s in u["system"].values]
    per_system = (
        np.full(len(systems), float(n_topics))
        if scores is None
        else np.isfinite(scores[systems].to_numpy()).sum(axis=0).astype(float)
    )
    chi = np.asarray(post["sigma_system"].values, dtype=float).ravel()
    if family is None or family.link == "identity":
        sig2 = residual_sd_draws(post).transpose("chain", "draw", "system").values ** 2
        se2 = (sig2.astype(float)[..., pooled] / per_system[pooled]).mean(axis=-1).ravel()
    else:
        keep = np.random.default_rng(defaults.SEED).choice(
            chi.size, size=min(chi.size, POOLING_DRAWS), replace=False
        )
        chi = chi[np.sort(keep)]
        where = np.array([post["system"].values.tolist().index(s) for s in systems])[pooled]
        info = family.cells(family.parameters(post, np.sort(keep)), where).information
        seen = np.ones(info.shape[1:], bool) if scores is None else np.isfinite(
            scores.loc[[str(t) for t in post["topic"].values], np.array(systems)[pooled]]
            .to_numpy().T
        )  # fmt: skip
        se2 = (1.0 / np.where(seen, info, 0.0).sum(axis=-1)).mean(axis=-1)
    share = float(np.mean(se2 / (se2 + chi**2))) if pooling == "all" else 0.0
    lo, hi = np.quantile(chi, [(1 - p) / 2, (1 + p) / 2])
    return Pooling(
        pooling=pooling,
        n_pooled=int(pooled.sum()),
        n_artifacts=roles.count("artifact"),
        sigma_system=float(chi.mean()),
        sigma_system_lower=float(lo),
        sigma_system_upper=float(hi),
        standard_error=float(np.mean(np.sqrt(se2))),
        share=share,
        ci_prob=p,
        link=link,
    )


def shrinkage_lines(frame: pd.DataFrame, pooling: Pooling | None) -> list[str]:
    """Lines saying what the model did to each difference, for a result's ``summary()``.

    ``frame`` has the columns ``challenger``, ``observed``, ``mean`` and
    ``pooled_share`` (:meth:`Comparison.to_frame`, :meth:`bayes_ir.decision.Decision.to_frame`);
    one line per challenger, then :meth:`Pooling.summary`.
    """
    lines = [
        "Observed (raw mean difference over the topics both systems have, as the paired "
        "tests) beside the model's:"
    ]
    for r in frame.itertuples(index=False):
        share = "" if not np.isfinite(r.pooled_share) else f" (pulled {r.pooled_share:.0%})"
        if not np.isfinite(r.pooled_share) and np.isfinite(r.observed):
            share = " (observed difference near 0: no share)"
        lines.append(f"  {r.challenger}: observed {r.observed:+.4f}, model {r.mean:+.4f}{share}")
    if pooling is not None:
        lines.append(pooling.summary())
    return lines


def interval_stats(
    draws: xr.DataArray, dim: str, ci_prob: float, hdi: bool = False
) -> pd.DataFrame:
    r"""Posterior summary of each slice of ``draws`` along ``dim``.

    Parameters
    ----------
    draws
        Posterior draws with dims ``chain``, ``draw`` and ``dim`` (e.g. the output of
        :func:`system_mean_draws` or :func:`topic_draws`).
    dim
        The labelled dimension: one row per coordinate value.
    ci_prob
        Probability of the intervals, in (0, 1).
    hdi
        Add the highest-density interval (``hdi_lower``, ``hdi_upper``; ArviZ's
        ``hdi``, :func:`~bayes_ir.hierarchical.intervals.hdi_bounds`).

    Returns
    -------
    pandas.DataFrame
        Indexed by the coordinate values (as strings); columns ``mean``, ``median``,
        ``sd`` (ddof = 1), ``ci_lower``, ``ci_upper`` and, with ``hdi``, the HDI bounds.

    Notes
    -----
    The equal-tailed interval is the pair of sample quantiles at
    :math:`(1 - p)/2` and :math:`(1 + p)/2` of the pooled chains' draws.
    """
    flat = draws.stack(sample=SAMPLE_DIMS).transpose(dim, "sample").values
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    out = pd.DataFrame(
        {
            "mean": flat.mean(axis=1),
            "median": np.median(flat, axis=1),
            "sd": flat.std(axis=1, ddof=1),
            "ci_lower": np.quantile(flat, lo, axis=1),
            "ci_upper": np.quantile(flat, hi, axis=1),
        },
        index=[str(v) for v in draws[dim].values],
    )
    if hdi:
        bounds = hdi_bounds(flat, ci_prob)
        out["hdi_lower"] = bounds[:, 0]
        out["hdi_upper"] = bounds[:, 1]
    return out


def _fmt(x: float, digits: int = 4) -> str:
    return "nan" if not np.isfinite(x) else f"{x:.{digits}f}"


def _text_table(frame: pd.DataFrame, floats: dict[str, int]) -> str:
    cols = list(frame.columns)
    rows = [
        [_fmt(v, floats[c]) if c in floats else str(v) for c, v in zip(cols, rec, strict=True)]
        for rec in frame.itertuples(index=False, name=None)
    ]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    left = {c for c in cols if c not in floats}

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.ljust(w) if c in left else v.rjust(w)
            for c, v, w in zip(cols, values, widths, strict=True)
        )

    return "\n".join([line(cols), *(line(r) for r in rows)])


# ---------------------------------------------------------------------- one vs many
@dataclass(frozen=True)
class Comparison(_Gated):
    r"""Each challenger minus the champion: intervals, probabilities and a verdict.

    Build it with :func:`compare`. Attributes hold raw numbers; the methods format.

    Attributes
    ----------
    champion
        The reference system.
    challengers
        The systems compared with it, in order.
    differences
        Posterior draws of :math:`u_c - u_{\text{champion}}`, dims ``(chain, draw, challenger)``:
        the difference of the two systems' *predictive mean* scores. With both
        likelihoods :math:`b_0 + a_t + u_s` is the mean of the distribution of score
        :math:`y_{ts}` (brms' mean/SD parameterisation; for the skew-normal not its
        location :math:`\xi`), so the contrast is a difference of model means, on every
        topic alike. It matches the observed difference of mean scores only as far as
        the model describes both systems: a skew-normal with one shape and one SD forced
        on a system whose errors skew the other way, with a wider spread, moves that
        system's mean (issue 14: ``chal_risky`` of the example, -0.006 against +0.072
        observed). :func:`~bayes_ir.hierarchical.mean_difference_check` tests it.
    ci_prob
        Probability mass of the intervals.
    min_gain
        Minimal worthwhile gain used for ``p_gain`` and the verdict.
    hdi
        Whether ``to_frame()`` adds highest-density intervals.
    gate
        Diagnostics status of the fit and of these contrasts.
    header
        One line naming the data, likelihood and number of draws.
    diagnostics
        R-hat and ESS of each contrast.
    model_check
        The fit's :class:`~bayes_ir.hierarchical.ModelCheck` (``None`` when the fit
        carries none, e.g. a bare DataTree).
    collection, measure
        The data the fit was made on (empty when unknown).
    scale_note
        How the systems' mean scores are computed (``"b0 + effect"`` for the identity
        link; the expected score over the topic population for a logit family, see
        :mod:`bayes_ir.hierarchical.families.base`).
    observed
        Raw mean difference of each challenger minus the champion over the topics both
        have (the paired tests' mean difference; NaN when the fit holds no scores).
    pooling
        How the fit pooled the system effects (:func:`pooling_of`; ``None`` when unknown).
    """

    champion: str
    challengers: tuple[str, ...]
    differences: xr.DataArray
    ci_prob: float
    min_gain: float
    hdi: bool
    gate: GateStatus
    header: str
    diagnostics: pd.DataFrame
    model_check: Any = None
    collection: str = ""
    measure: str = ""
    scale_note: str = "b0 + effect"
    observed: tuple[float, ...] = ()
    pooling: Pooling | None = None

    def fit_status(self) -> list[str]:
        """Return the ``fit`` column: ``ok``, the failed checks, or ``n/a`` without a check.

        A flagged champion is named in every row (``champion NAME: checks``): each
        contrast depends on it. Checks in the borderline band (not flagged; see
        :mod:`bayes_ir.hierarchical.adequacy`) read ``borderline: checks``.
        """
        check = self.model_check
        if check is None:
            return ["n/a"] * len(self.challengers)

        def status(name: str) -> str:
            failed, near = check.failed(name), check.borderline_of(name)
            return ", ".join(failed) if failed else "borderline: " + ", ".join(near) if near else ""

        champ = status(self.champion)
        out = []
        for name in self.challengers:
            parts = [status(name)] if status(name) else []
            parts += [f"champion {self.champion}: {champ}"] if champ else []
            out.append("; ".join(parts) or "ok")
        return out

    def misfit(self) -> list[bool]:
        """Whether the model check flagged each challenger or the champion (its contrast)."""
        check = self.model_check
        if check is None:
            return [False] * len(self.challengers)
        champ = bool(check.failed(self.champion))
        return [champ or bool(check.failed(name)) for name in self.challengers]

    def conf_int(self, ci_prob: float | None = None, *, hdi: bool | None = None) -> pd.DataFrame:
        """Interval of each difference: columns ``challenger, estimate, ci_lower, ci_upper``.

        ``estimate`` is the posterior mean; ``hdi=True`` gives highest-density limits.
        """
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        use_hdi = self.hdi if hdi is None else hdi
        stats = interval_stats(self.differences, "challenger", p, use_hdi)
        lo, hi = ("hdi_lower", "hdi_upper") if use_hdi else ("ci_lower", "ci_upper")
        return pd.DataFrame(
            {
                "challenger": list(self.challengers),
                "estimate": stats["mean"].to_numpy(),
                "ci_lower": stats[lo].to_numpy(),
                "ci_upper": stats[hi].to_numpy(),
            }
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per challenger, in fixed columns.

        Returns
        -------
        pandas.DataFrame
            With these columns:

            challenger, champion
                The systems; each row is ``challenger - champion``.
            observed
                Raw mean difference over the topics both systems have (the paired tests'
                mean difference), NaN when unknown.
            mean
                Posterior mean of the difference of system means.
            pooled_share
                ``1 - mean / observed``: the share of the observed difference the model
                pulled towards 0 (partial pooling, :class:`Pooling`; negative: pushed
                away). NaN when its Monte Carlo SE exceeds :data:`POOLED_SHARE_MCSE` (an
                observed difference near 0).
            median, sd
                Posterior median and SD of the difference.
            ci_lower, ci_upper
                Equal-tailed ``ci_prob`` interval (then ``hdi_lower, hdi_upper`` with ``hdi=True``).
            p_better
                P(challenger > champion).
            min_gain, p_gain
                The minimal worthwhile gain and P(difference > min_gain).
            rhat, ess_bulk, ess_tail
                Convergence of this contrast's draws.
            fit
                Posterior predictive check of the challenger (and of the champion):
                ``ok``, the failed checks (:data:`bayes_ir.hierarchical.adequacy.CHECKS`),
                ``borderline: checks`` (not flagged: within the Monte Carlo band of the
                cut-off), or ``n/a`` when the fit has no model check.
            verdict
                Read from the interval ``[lo, hi]`` and the minimal gain ``g`` by
                :func:`bayes_ir.decision.rules.interval_verdict` (one of its ``VERDICTS``:
                ``worthwhile gain``, ``better``,
                ``better, but by less than min_gain``, ``practically equivalent``,
                ``worse``, ...); ``unreliable: model misfit`` instead when the model does
                not describe the challenger or the champion (``fit`` is not ``ok``: the
                interval is not to be acted on); prefixed by ``UNRELIABLE:`` when the
                diagnostics failed.
        """
        stats = interval_stats(self.differences, "challenger", self.ci_prob, self.hdi)
        flat = self.differences.stack(sample=SAMPLE_DIMS).transpose("challenger", "sample").values
        frame = pd.DataFrame(
            {
                "challenger": list(self.challengers),
                "champion": self.champion,
                **_observed_columns(stats, self.observed, self.diagnostics),
                "p_better": (flat > 0).mean(axis=1),
                "min_gain": self.min_gain,
                "p_gain": (flat > self.min_gain).mean(axis=1),
                "rhat": self.diagnostics["rhat"].to_numpy(),
                "ess_bulk": self.diagnostics["ess_bulk"].to_numpy(),
                "ess_tail": self.diagnostics["ess_tail"].to_numpy(),
            }
        )
        verdicts = [
            interval_verdict(lo, hi, self.min_gain)
            for lo, hi in zip(frame["ci_lower"], frame["ci_upper"], strict=True)
        ]
        fit = self.fit_status()
        verdicts = [
            MISFIT_VERDICT if bad else v for v, bad in zip(verdicts, self.misfit(), strict=True)
        ]
        if not self.gate.passed:  # a misfit verdict already says unreliable
            verdicts = [v if v == MISFIT_VERDICT else f"UNRELIABLE: {v}" for v in verdicts]
        frame["fit"] = fit
        frame["verdict"] = verdicts
        columns = list(COMPARISON_COLUMNS)
        if self.hdi:
            at = columns.index("ci_upper") + 1
            columns[at:at] = ["hdi_lower", "hdi_upper"]
        return frame[columns]

    def summary(self) -> str:
        """Header, diagnostics verdict, then the decision table (text; never prints)."""
        frame = self.to_frame()
        pct = f"{100 * self.ci_prob:g}%"
        shown = frame.drop(columns=["champion", "min_gain", "median", "sd", "ess_tail"])
        text = _text_table(
            shown,
            {c: 4 for c in ("observed", "mean", "ci_lower", "ci_upper", "hdi_lower", "hdi_upper")}
            | {"pooled_share": 2, "p_better": 3, "p_gain": 3, "rhat": 3, "ess_bulk": 0},
        )
        lines = [
            self.header,
            self.gate.banner(),
            "",
            f"Challengers minus champion {self.champion!r} (difference of the model's "
            f"predictive mean scores, {self.scale_note}; "
            f"{pct} equal-tailed intervals; p_gain = P(difference > {self.min_gain:g})):",
            text,
            "observed: raw mean difference over the topics both systems have (the paired "
            "tests'); pooled_share = 1 - mean/observed.",
        ]
        if self.pooling is not None:
            lines.append(self.pooling.summary())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from bayes_ir.report.escape import html_escape

        banner = "" if self.gate.passed else f"<pre><b>{html_escape(self.gate.banner())}</b></pre>"
        return banner + self.to_frame().to_html(index=False, float_format=lambda x: f"{x:.4f}")

    def plot(self, **kwargs: Any) -> Any:
        """Forest plot of the differences (:func:`bayes_ir.plots.hierarchical.plot_contrasts`)."""
        from bayes_ir.plots.hierarchical import plot_contrasts

        return plot_contrasts(self, **kwargs)


def compare(
    fit: Any,
    *,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    ci_prob: float | None = None,
    min_gain: float = 0.0,
    hdi: bool = False,
) -> Comparison:
    r"""One-vs-many: each challenger against the champion.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` (or its posterior DataTree).
    champion, challengers
        Override the roles stored with the fit (names as in the fit).
    ci_prob
        Interval probability (default :data:`bayes_ir.defaults.CI_PROB`).
    min_gain
        Minimal worthwhile gain, in score units (e.g. 0.01 AP); narrower than the
        measure's range (:func:`bayes_ir.validate.measure_margin`).
    hdi
        Add highest-density intervals (ArviZ's ``hdi``) to the table.

    Returns
    -------
    Comparison

    Raises
    ------
    UnknownSystemError
        A champion or challenger that is not in the fit.
    InsufficientDataError
        No challenger to compare.

    Notes
    -----
    With posterior draws :math:`u^{(i)}_s` of the system effects, the difference of
    challenger :math:`c` and champion :math:`h` is :math:`d^{(i)} = u^{(i)}_c - u^{(i)}_h`
    (equal to the difference of system means :math:`\beta_0 + u_s`, the model's
    predictive means: see :attr:`Comparison.differences`). Reported: the mean,
    median and SD of :math:`d`, its :math:`(1-p)/2` and :math:`(1+p)/2` quantiles,
    :math:`P(d > 0) \approx \frac{1}{n}\sum_i 1[d^{(i)} > 0]` and
    :math:`P(d > g) \approx \frac{1}{n}\sum_i 1[d^{(i)} > g]` for the minimal gain
    :math:`g`. The verdict reads the interval (see :meth:`Comparison.to_frame`):
    ``better`` when its lower limit exceeds 0, ``worthwhile gain`` when it exceeds
    :math:`g > 0`, ``worse`` when its upper limit is below 0 (every region:
    :func:`bayes_ir.decision.rules.interval_verdict`). A challenger (or champion)
    flagged by the fit's model check
    (:func:`~bayes_ir.hierarchical.check_model`) gets the verdict ``unreliable: model
    misfit`` instead: the model does not describe its scores, so the interval is not
    to be acted on.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
    """
    p = defaults.ci_prob(ci_prob)
    names = _data_names(fit)
    min_gain = validate.measure_margin("min_gain", min_gain, names["measure"] or None,
                                       what="minimal gain")  # fmt: skip
    u, known = _system_draws_named(fit)
    default_champion, default_challengers = _default_roles(fit, u)
    champion = champion if champion is not None else default_champion
    if not champion:
        raise RoleError("the fit records no champion: pass champion=... to compare()")
    _check_systems([champion], known, "champion")
    chosen = default_challengers if challengers is None else challengers
    chosen = [c for c in _check_systems(chosen, known, "challenger") if c != champion]
    if not chosen:
        raise InsufficientDataError("compare needs at least one challenger besides the champion")
    diff = u.sel(system=chosen) - u.sel(system=champion)
    diff = diff.drop_vars(["role"], errors="ignore").rename(system="challenger")
    diag = _draw_diagnostics(diff, "challenger")
    return Comparison(
        observed=_observed_differences(fit, [(c, champion) for c in chosen]),
        pooling=pooling_of(fit, ci_prob=p),
        champion=champion,
        challengers=tuple(chosen),
        differences=diff,
        ci_prob=p,
        min_gain=min_gain,
        hdi=bool(hdi),
        gate=_gate(fit, diag, "challenger - champion"),
        header=_header(fit, "Bayesian hierarchical comparison (Benham et al. 2020)"),
        diagnostics=diag,
        model_check=getattr(fit, "model_check", None),
        scale_note=_scale_note(fit),
        **names,
    )


# ---------------------------------------------------------------------- many vs one
def _rank_matrix(draws: np.ndarray) -> np.ndarray:
    """P(rank = k) for draws of shape (n_samples, n_systems); rank 1 is the highest value."""
    n, k = draws.shape
    order = np.argsort(-draws, axis=1, kind="stable")
    ranks = np.empty_like(order)
    ranks[np.arange(n)[:, None], order] = np.arange(k)[None, :]
    probs = np.zeros((k, k))
    for j in range(k):
        probs[j] = np.bincount(ranks[:, j], minlength=k) / n
    return probs


@dataclass(frozen=True)
class ManyVsOne(_Gated):
    r"""One challenger against several champions (the academic case).

    Attributes
    ----------
    challenger
        The new system.
    champions
        The systems it must beat.
    differences
        Draws of :math:`u_{\text{challenger}} - u_h`, dims ``(chain, draw, champion)``.
    p_better_than_all
        P(the challenger beats every champion at once).
    p_best
        P(best among the challenger and the champions), indexed by system; sums to 1.
    collection, measure
        The data the fit was made on (empty when unknown).
    observed
        Raw mean difference of the challenger minus each champion over the topics both
        have (NaN when the fit holds no scores).
    pooling
        How the fit pooled the system effects (:func:`pooling_of`).
    """

    challenger: str
    champions: tuple[str, ...]
    differences: xr.DataArray
    p_better_than_all: float
    p_best: pd.Series
    ci_prob: float
    gate: GateStatus
    header: str
    diagnostics: pd.DataFrame
    collection: str = ""
    measure: str = ""
    observed: tuple[float, ...] = ()
    pooling: Pooling | None = None

    def conf_int(self, ci_prob: float | None = None) -> pd.DataFrame:
        """Columns ``champion, estimate, ci_lower, ci_upper`` of each difference."""
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        stats = interval_stats(self.differences, "champion", p, False)
        return pd.DataFrame(
            {
                "champion": list(self.champions),
                "estimate": stats["mean"].to_numpy(),
                "ci_lower": stats["ci_lower"].to_numpy(),
                "ci_upper": stats["ci_upper"].to_numpy(),
            }
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per champion: columns :data:`MANY_VS_ONE_COLUMNS` (``p_better`` = P(d > 0)).

        ``observed`` and ``pooled_share`` as in :meth:`Comparison.to_frame`.
        """
        stats = interval_stats(self.differences, "champion", self.ci_prob, False)
        flat = self.differences.stack(sample=SAMPLE_DIMS).transpose("champion", "sample").values
        frame = pd.DataFrame(
            {
                "challenger": self.challenger,
                "champion": list(self.champions),
                **_observed_columns(stats, self.observed, self.diagnostics),
                "p_better": (flat > 0).mean(axis=1),
                "rhat": self.diagnostics["rhat"].to_numpy(),
                "ess_bulk": self.diagnostics["ess_bulk"].to_numpy(),
                "ess_tail": self.diagnostics["ess_tail"].to_numpy(),
            }
        )
        return frame[list(MANY_VS_ONE_COLUMNS)]

    def summary(self) -> str:
        """Header, diagnostics verdict, differences, P(better than all) and P(best)."""
        frame = self.to_frame().drop(columns=["challenger", "median", "sd", "ess_tail"])
        text = _text_table(
            frame,
            {"observed": 4, "mean": 4, "pooled_share": 2, "ci_lower": 4, "ci_upper": 4,
             "p_better": 3, "rhat": 3, "ess_bulk": 0},
        )  # fmt: skip
        best = ", ".join(f"{s} {v:.3f}" for s, v in self.p_best.items())
        lines = [
            self.header,
            self.gate.banner(),
            "",
            f"{self.challenger!r} minus each champion ({100 * self.ci_prob:g}% intervals; "
            "observed: raw mean difference over shared topics; pooled_share = 1 - "
            "mean/observed):",
            text,
            "",
            f"P({self.challenger} better than all {len(self.champions)}): "
            f"{self.p_better_than_all:.3f}",
            f"P(best among the compared systems): {best}",
        ]
        if self.pooling is not None:
            lines.append(self.pooling.summary())
        return "\n".join(lines)

    def plot(self, **kwargs: Any) -> Any:
        """Forest plot of the differences."""
        from bayes_ir.plots.hierarchical import plot_contrasts

        return plot_contrasts(self, **kwargs)


def many_vs_one(
    fit: Any,
    *,
    challenger: str,
    champions: str | Iterable[str],
    ci_prob: float | None = None,
) -> ManyVsOne:
    r"""One challenger against a set of champions.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` (or its posterior DataTree).
    challenger
        The new system.
    champions
        The established systems it is compared with (at least one).
    ci_prob
        Interval probability (default :data:`bayes_ir.defaults.CI_PROB`).

    Returns
    -------
    ManyVsOne

    Notes
    -----
    With :math:`d^{(i)}_h = u^{(i)}_c - u^{(i)}_h` for each champion :math:`h`:
    :math:`P(\text{better than all}) = \frac{1}{n}\sum_i 1[\min_h d^{(i)}_h > 0]`, and
    :math:`P(\text{best}_s) = \frac{1}{n}\sum_i 1[s = \arg\max_{s'} u^{(i)}_{s'}]` over
    the challenger and the champions, so the latter sums to 1.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
    """
    p = defaults.ci_prob(ci_prob)
    u, known = _system_draws_named(fit)
    _check_systems([challenger], known, "challenger")
    champs = [c for c in _check_systems(champions, known, "champion") if c != challenger]
    if not champs:
        raise InsufficientDataError(
            "many_vs_one needs at least one champion besides the challenger"
        )
    diff = (u.sel(system=challenger) - u.sel(system=champs)).drop_vars("role", errors="ignore")
    diff = diff.rename(system="champion").transpose("chain", "draw", "champion")
    flat = diff.stack(sample=SAMPLE_DIMS).transpose("champion", "sample").values
    group = [challenger, *champs]
    sel = u.sel(system=group).stack(sample=SAMPLE_DIMS).transpose("sample", "system").values
    p_best = pd.Series(_rank_matrix(sel)[:, 0], index=group, name="p_best")
    diag = _draw_diagnostics(diff, "champion")
    return ManyVsOne(
        observed=_observed_differences(fit, [(challenger, h) for h in champs]),
        pooling=pooling_of(fit, ci_prob=p),
        challenger=challenger,
        champions=tuple(champs),
        differences=diff,
        p_better_than_all=float((flat > 0).all(axis=0).mean()),
        p_best=p_best,
        ci_prob=p,
        gate=_gate(fit, diag, "challenger - champion"),
        header=_header(fit, "Bayesian hierarchical comparison, one challenger vs many"),
        diagnostics=diag,
        **_data_names(fit),
    )


# ---------------------------------------------------------------------- pairs and ranks
def _choose_draws(fit: Any, systems: Iterable[str] | None) -> tuple[list[str], np.ndarray]:
    """Systems to compare and their effect draws, shape ``(sample, system)``.

    Default: the champion and challengers, or every system when fewer than two.
    """
    u, known = _system_draws_named(fit)
    if systems is None:
        roles = u["role"].values
        chosen = [s for s, r in zip(known, roles, strict=True) if r != "artifact"]
        chosen = chosen if len(chosen) >= 2 else known
    else:
        chosen = _check_systems(systems, known, "system")
    if len(chosen) < 2:
        raise InsufficientDataError("pairwise and rank probabilities need at least two systems")
    flat = u.sel(system=chosen).stack(sample=SAMPLE_DIMS).transpose("sample", "system").values
    return chosen, flat


@dataclass(frozen=True)
class _SystemMatrix(_Gated):
    """A matrix of probabilities over the systems, with the fit's gate and a header."""

    matrix: pd.DataFrame
    gate: GateStatus
    header: str
    collection: str = ""
    measure: str = ""
    means: pd.Series | None = None

    @classmethod
    def _from_fit(
        cls, fit: Any, matrix: pd.DataFrame, title: str, means: pd.Series | None = None
    ) -> Self:
        return cls(
            matrix=matrix,
            gate=_gate(fit),
            header=_header(fit, title),
            means=means,
            **_data_names(fit),
        )

    def _summary(self, caption: str, shown: pd.DataFrame) -> str:
        return "\n".join([self.header, self.gate.banner(), "", caption, shown.to_string()])


@dataclass(frozen=True)
class PairwiseProbabilities(_SystemMatrix):
    """P(row system > column system) for every pair.

    Attributes
    ----------
    matrix
        Square DataFrame, rows and columns the systems; the diagonal is NaN and
        ``matrix + matrix.T == 1`` off the diagonal.
    gate, header
        Diagnostics status of the fit, and one line naming data and draws.
    collection, measure
        The data the fit was made on (empty when unknown).
    means
        Posterior mean of each system's effect, in the matrix's order.
    """

    def to_frame(self) -> pd.DataFrame:
        """Tidy: columns ``system, other, p_greater`` (P(system > other)), off-diagonal only."""
        long = self.matrix.rename_axis(index="system", columns="other").stack().rename("p_greater")
        return long.dropna().reset_index()[["system", "other", "p_greater"]]

    def summary(self) -> str:
        """Header, diagnostics and the matrix P(row > column)."""
        shown = self.matrix.map(lambda v: "" if not np.isfinite(v) else f"{v:.3f}")
        return self._summary("P(row > column):", shown)

    def plot(self, **kwargs: Any) -> Any:
        """Heat map of the matrix."""
        from bayes_ir.plots.hierarchical import plot_pairwise

        return plot_pairwise(self, **kwargs)


def pairwise_probabilities(
    fit: Any, *, systems: Iterable[str] | None = None
) -> PairwiseProbabilities:
    r"""All-pairs probability matrix :math:`P(u_a > u_b)`.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` (or its posterior DataTree).
    systems
        Systems to include (default: champion and challengers, or all systems when
        the fit has no roles).

    Returns
    -------
    PairwiseProbabilities

    Notes
    -----
    :math:`P(a > b) = \frac{1}{n}\sum_i 1[u^{(i)}_a > u^{(i)}_b]`. Ties have probability
    zero under a continuous posterior, so :math:`P(a > b) + P(b > a) = 1`.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
    """
    chosen, flat = _choose_draws(fit, systems)
    mat = (flat.T[:, None, :] > flat.T[None, :, :]).mean(axis=2)
    np.fill_diagonal(mat, np.nan)
    frame = pd.DataFrame(mat, index=chosen, columns=chosen)
    means = pd.Series(flat.mean(axis=0), index=chosen, name="mean")
    return PairwiseProbabilities._from_fit(
        fit, frame, "Pairwise probabilities of the system effects", means
    )


@dataclass(frozen=True)
class RankProbabilities(_SystemMatrix):
    """P(rank = k) of each system (rank 1 = best).

    Attributes
    ----------
    matrix
        DataFrame, rows the systems, columns the ranks 1..k; rows and columns sum to 1.
    gate, header
        Diagnostics status of the fit, and one line naming data and draws.
    """

    @property
    def p_best(self) -> pd.Series:
        """P(rank = 1) of each system."""
        return self.matrix[1].rename("p_best")

    @property
    def expected_rank(self) -> pd.Series:
        """Posterior mean rank of each system."""
        ranks = np.asarray(self.matrix.columns, dtype=float)
        return pd.Series(self.matrix.to_numpy() @ ranks, index=self.matrix.index, name="rank")

    def to_frame(self) -> pd.DataFrame:
        """Tidy: columns ``system, rank, probability``."""
        long = self.matrix.rename_axis(index="system", columns="rank").stack()
        return long.rename("probability").reset_index()[["system", "rank", "probability"]]

    def summary(self) -> str:
        """Header, diagnostics and the matrix P(rank = k)."""
        shown = self.matrix.map(lambda v: f"{v:.3f}")
        shown["E[rank]"] = self.expected_rank.map(lambda v: f"{v:.2f}")
        return self._summary("P(rank = k), 1 = best:", shown)

    def plot(self, **kwargs: Any) -> Any:
        """Heat map of the rank probabilities."""
        from bayes_ir.plots.hierarchical import plot_ranks

        return plot_ranks(self, **kwargs)


def rank_probabilities(fit: Any, *, systems: Iterable[str] | None = None) -> RankProbabilities:
    r"""Posterior probability that each system has rank :math:`k` (1 = best).

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` (or its posterior DataTree).
    systems
        Systems to rank among (default: champion and challengers, or all systems).

    Returns
    -------
    RankProbabilities

    Notes
    -----
    In each draw the systems are ranked by :math:`u^{(i)}_s` (highest first);
    :math:`P(\text{rank}_s = k) = \frac{1}{n}\sum_i 1[\text{rank}^{(i)}_s = k]`.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
    """
    chosen, flat = _choose_draws(fit, systems)
    frame = pd.DataFrame(_rank_matrix(flat), index=chosen, columns=range(1, len(chosen) + 1))
    return RankProbabilities._from_fit(fit, frame, "Rank probabilities of the system effects")
