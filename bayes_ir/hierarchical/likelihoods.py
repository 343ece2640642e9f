r"""Which likelihood describes the scores? PSIS-LOO for the hierarchical fit.

:func:`loo` estimates the expected log pointwise predictive density (ELPD) of a
:class:`~bayes_ir.hierarchical.HierarchicalFit` by Pareto-smoothed importance sampling
leave-one-out cross-validation (ArviZ's :func:`arviz_stats.loo`), one observation per
(topic, system) cell. :func:`compare_likelihoods` fits the candidate models
(:data:`CANDIDATES`: Gaussian, skew-normal, Gaussian with one residual SD per system)
and picks one by ELPD with a stated rule; ``fit(table, likelihood="auto")`` returns
its choice. :func:`mean_difference_check` is the posterior predictive check of the
reported contrast against the observed difference of mean scores.

The pointwise log-likelihood is computed on demand from a seeded subset of
:data:`bayes_ir.defaults.LOO_DRAWS` (4,000) posterior draws, not stored in the fit:
for the exact sampler's 40,000 draws of rb04 (2,250 cells) the full array would take
720 MB, the subset 72 MB and only while :func:`loo` runs. The subset's Monte Carlo
error is small next to the ELPD's standard error: on rb04, five seeds of the subset
gave ELPDs with an SD of 0.21 (Gaussian), 0.30 (skew-normal) and 0.24 (per-system SD)
against SEs of 50.5, 52.7 and 50.6 (0.4-0.6 %), and against SEs of the differences
between models of 5-11; all 40,000 draws of the Gaussian gave 1849.75, the 4,000
subsets 1849.25-1849.78.

Pareto :math:`\hat k`: PSIS is reliable for a cell when :math:`\hat k \le 0.7`
(``good_k`` of ArviZ, :math:`\min(1 - 1/\log_{10} S, 0.7)` for :math:`S` draws).
A larger :math:`\hat k` means that leaving that cell out changes the posterior so
much that the full-data draws cannot stand in for the leave-one-out posterior: the
cell is highly influential, usually an outlier the model does not expect. The ELPD
of a model with such cells is then over-optimistic and comparisons with it are
unreliable (refit without the cell, i.e. K-fold, or use a model that expects such
scores). :func:`compare_likelihoods` counts them per candidate and warns.

References
----------
Vehtari, A., Gelman, A., Gabry, J. (2017). Practical Bayesian model evaluation using
leave-one-out cross-validation and WAIC. *Statistics and Computing* 27(5),
1413-1432. doi:10.1007/s11222-016-9696-4

Vehtari, A., Simpson, D., Gelman, A., Yao, Y., Gabry, J. (2024). Pareto smoothed
importance sampling. *JMLR* 25(72), 1-58.

Gelman, A., Meng, X.-L., Stern, H. (1996). Posterior predictive assessment of model
fitness via realized discrepancies. *Statistica Sinica* 6(4), 733-760.
"""

from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import BayesIRError, DataWarning, ModelCheckWarning
from bayes_ir.hierarchical.adequacy import CHECKS
from bayes_ir.hierarchical.families.base import OUTCOME_SPACES
from bayes_ir.hierarchical.model import design_of
from bayes_ir.table import ScoreTable

__all__ = [
    "CANDIDATES",
    "LikelihoodComparison",
    "MeanDifferenceCheck",
    "arviz_data",
    "choose_across_spaces",
    "compare_likelihoods",
    "default_candidates",
    "loo",
    "mean_difference_check",
    "model_name",
]

#: Candidate models, simplest first (fewest parameters) within each outcome space, as
#: (likelihood, sigma).
MODELS: dict[str, tuple[str, str]] = {
    "gaussian": ("gaussian", "pooled"),
    "skew_normal": ("skew_normal", "pooled"),
    "gaussian_sigma_by_system": ("gaussian", "system"),
    "skew_normal_sigma_by_system": ("skew_normal", "system"),
    "zoib": ("zoib", "pooled"),
    "zoib_phi_by_system": ("zoib", "system"),
    "zoib_inflation_by_system": ("zoib(inflation=system)", "pooled"),
    "zoib_inflation_by_system_phi_by_system": ("zoib(inflation=system)", "system"),
    "binomial": ("binomial", "pooled"),
    "bernoulli": ("bernoulli", "pooled"),
}
#: Candidates of ``likelihood="auto"`` for scores that are neither in [0, 1] nor 0/1 (the
#: other models of :data:`MODELS` may be asked for); see :func:`default_candidates`.
CANDIDATES: tuple[str, ...] = ("gaussian", "skew_normal", "gaussian_sigma_by_system")
#: Order in which outcome spaces win ties of the checks across spaces.
_SPACE_ORDER = ("continuous", "unit_inflated", "counts", "binary")
#: The zoib models by what is per system, (inflation, precision): see :func:`richer_zoib`.
_ZOIB_STRUCTURES: dict[tuple[bool, bool], str] = {
    (False, False): "zoib",
    (True, False): "zoib_inflation_by_system",
    (False, True): "zoib_phi_by_system",
    (True, True): "zoib_inflation_by_system_phi_by_system",
}
#: Checks of the model check that a per-system inflation addresses (the point masses) and
#: that a per-system precision addresses (the spread of a system's scores about its mean).
_MASS_CHECKS = frozenset({"zeros", "ones"})
_SPREAD_CHECKS = frozenset({"sd", "coverage_95", "coverage_50", "skewness"})


def model_name(fit: Any) -> str:
    """Name of a fit's model in :data:`MODELS` (family, dispersion and inflation structure)."""
    from bayes_ir.hierarchical.families import family_of

    family = family_of(fit)
    name = family.name
    if "inflation" in family.per_system:
        name += "_inflation_by_system"
    if "phi" in family.per_system:
        return name + "_phi_by_system"
    if fit.provenance.get("sigma", "pooled") == "system":
        name += "_sigma_by_system"
    return name


def default_candidates(table: ScoreTable) -> tuple[str, ...]:
    """Return the candidates of ``likelihood="auto"`` for this table's scores.

    0/1 scores: ``bernoulli`` only (no other family describes them). Scores of a measure
    whose range is [0, 1] (AP, nDCG, RR, P@k, accuracy; :func:`bayes_ir.measures.measure_range`):
    :data:`CANDIDATES` and ``zoib``, plus ``binomial`` when every score is a whole number of
    successes out of the measure's cutoff (``P@10``). Other scores: :data:`CANDIDATES`.
    """
    from bayes_ir.hierarchical.families import get_family
    from bayes_ir.measures import measure_range

    design = design_of(table)
    y = design.score
    if np.isin(y, (0.0, 1.0)).all():
        return ("bernoulli",)
    if measure_range(design.measure) != (0.0, 1.0):
        return CANDIDATES
    out = (*CANDIDATES, "zoib")
    try:
        get_family("binomial").resolved(design).check_scores(design)
    except BayesIRError:
        return out
    return (*out, "binomial")


# ---------------------------------------------------------------------- PSIS-LOO
def _thin(post: xr.Dataset, draws: int, seed: int) -> xr.Dataset:
    """Return a seeded subset of about ``draws`` draws (the same draw indices per chain)."""
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    if n_chain * n_draw <= draws:
        return post
    per_chain = max(1, math.ceil(draws / n_chain))
    rng = np.random.default_rng([int(seed), 0x100])
    keep = np.sort(rng.choice(n_draw, size=per_chain, replace=False))
    return post.isel(draw=keep)


def _loo_draws(fit: Any, draws: int | None, seed: int | None) -> tuple[xr.Dataset, Any, np.ndarray]:
    """Return the seeded subset of draws of :func:`loo`, the design and its observed cells."""
    n = defaults.LOO_DRAWS if draws is None else int(draws)
    if n < 100:
        raise BayesIRError(f"loo needs at least 100 draws, got draws={n}")
    seed = defaults.SEED if seed is None else int(seed)
    design = design_of(fit.table)
    cells = np.flatnonzero(np.isfinite(design.matrix).ravel())
    return _thin(fit.draws, n, seed), design, cells


def _family_spec(fit: Any) -> str:
    """Return the family of ``fit`` with its options (``"binomial(trials=10)"``), as recorded."""
    return str(fit.provenance.get("family", fit.likelihood))


def loo_data(fit: Any, *, draws: int | None = None, seed: int | None = None) -> xr.DataTree:
    """DataTree with a thinned ``posterior`` and its ``log_likelihood`` (one cell per ``obs``).

    The input of :func:`arviz_stats.loo`; ``draws`` and ``seed`` as in :func:`loo`.
    Missing cells are left out; ``obs`` carries ``topic`` and ``system`` coordinates.
    """
    from bayes_ir.hierarchical.fit import log_likelihood_draws

    post, design, cells = _loo_draws(fit, draws, seed)
    ll = log_likelihood_draws(post, design, _family_spec(fit))
    ll = ll.stack(obs=("topic", "system")).reset_index("obs")
    ll = ll.isel(obs=cells)
    post = post.drop_vars([c for c in post.coords if c not in ("chain", "draw", *post.dims)])
    return xr.DataTree.from_dict(
        {"/posterior": post, "/log_likelihood": ll.drop_vars("obs", errors="ignore").to_dataset()}
    )


def arviz_data(fit: Any, *, draws: int | None = None, seed: int | None = None) -> xr.DataTree:
    r"""Every group ArviZ reads, on a seeded subset of the draws (``HierarchicalFit.to_arviz``).

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit`.
    draws, seed
        Size and seed of the subset of draws, as in :func:`loo` (the same subset, so
        ``arviz_stats.loo(fit.to_arviz())`` equals :func:`loo`).

    Returns
    -------
    xarray.DataTree
        ``posterior`` and ``sample_stats`` (NUTS fits) on the subset; ``observed_data``,
        ``log_likelihood`` and ``posterior_predictive`` with one ``score`` per observed
        cell along dim ``obs`` (coordinates ``topic`` and ``system``; missing cells left
        out), one predictive replicate per draw. Works with ``arviz_stats.loo``,
        ``compare``, ``summary``, ``ess``, ``rhat`` and arviz-plots' ``plot_ppc_dist``,
        ``plot_trace``, ``plot_forest``.

    Notes
    -----
    The replicate of cell :math:`(t, s)` in draw :math:`i` is
    :math:`\tilde y^{(i)}_{ts} \sim p(y \mid b_0^{(i)} + a_t^{(i)} + c_s^{(i)},
    \sigma_s^{(i)}[, \alpha^{(i)}])`, as in
    :func:`~bayes_ir.hierarchical.posterior_predictive`.
    """
    from bayes_ir.hierarchical.families import family_of

    tree = loo_data(fit, draws=draws, seed=seed)
    post = tree["posterior"].to_dataset()
    ll = tree["log_likelihood"].to_dataset()["score"]
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    design = design_of(fit.table)
    cells = np.flatnonzero(np.isfinite(design.matrix).ravel())
    validate.memory(
        "the posterior predictive draws", {"draws": n_chain * n_draw, "cells": cells.size}
    )

    family = family_of(fit)
    params = family.parameters(post)
    rng = np.random.default_rng([defaults.SEED if seed is None else int(seed), 0x99C])
    rep = np.stack(
        [family.cells(params, np.array([j])).rvs(rng)[:, 0] for j in range(post.sizes["system"])],
        axis=-1,
    )  # (draws, T, S)
    rep = rep.reshape(n_chain, n_draw, -1)[..., cells]
    coords = {k: ("obs", ll[k].values) for k in ("topic", "system")}
    groups = {
        "posterior": post,
        "observed_data": xr.Dataset(
            {"score": ("obs", design.matrix.ravel()[cells])}, coords=coords
        ),
        "log_likelihood": ll.to_dataset(),
        "posterior_predictive": xr.Dataset(
            {"score": (("chain", "draw", "obs"), rep)},
            coords={"chain": post["chain"].values, "draw": post["draw"].values, **coords},
        ),
    }
    if "sample_stats" in fit.posterior.children:
        stats = fit.posterior["sample_stats"].to_dataset()
        groups["sample_stats"] = stats.sel(draw=post["draw"].values)
    return xr.DataTree.from_dict({f"/{k}": v for k, v in groups.items()})


def loo(fit: Any, *, draws: int | None = None, seed: int | None = None) -> Any:
    r"""PSIS-LOO estimate of the ELPD of a hierarchical fit, one observation per cell.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` (any likelihood and
        residual-SD structure).
    draws
        Number of posterior draws used (default :data:`bayes_ir.defaults.LOO_DRAWS`):
        a seeded random subset, the same draw indices in every chain; all draws when
        the fit has fewer.
    seed
        Seed of the subset (default :data:`bayes_ir.defaults.SEED`).

    Warns
    -----
    DataWarning
        When cells have Pareto :math:`\hat k` above ``good_k`` (see the module docstring).

    Returns
    -------
    arviz_stats.utils.ELPDDataLOO
        ``elpd``, ``se``, ``p`` (effective number of parameters), ``pareto_k`` and
        ``elpd_i`` (dim ``obs``, with ``topic`` and ``system`` coordinates), ``good_k``.

    Notes
    -----
    :math:`\widehat{\mathrm{elpd}}_{loo} = \sum_i \log\big(\sum_s w_i^{(s)}
    p(y_i \mid \theta^{(s)}) / \sum_s w_i^{(s)}\big)` with Pareto-smoothed weights
    :math:`w_i^{(s)} \propto 1/p(y_i \mid \theta^{(s)})`; the pointwise
    log-likelihood is that of :func:`~bayes_ir.hierarchical.fit.log_likelihood_draws`
    (Gaussian, or brms' mean/SD skew-normal; per-system residual SD when the fit has
    one). See the module docstring for :math:`\hat k`.

    References
    ----------
    Vehtari, A., Gelman, A., Gabry, J. (2017). Practical Bayesian model evaluation
    using leave-one-out cross-validation and WAIC. *Statistics and Computing* 27(5),
    1413-1432.
    """
    res = _loo_blockwise(fit, draws=draws, seed=seed)
    n_high = int((res.pareto_k.values > res.good_k).sum())
    if n_high:
        warnings.warn(
            f"PSIS-LOO of the {model_name(fit)} model: {n_high} of {res.n_data_points} cells "
            f"have Pareto k > {res.good_k:.2f}, so its ELPD is unreliable (optimistic) there: "
            "these cells are influential, often scores the model does not expect",
            DataWarning,
            stacklevel=2,
        )
    return res


#: Log-likelihood values (draws x cells) per block of :func:`loo`: the pointwise
#: log-likelihood is never held whole (4,000 draws x 27,390 cells of Robust04 AP would
#: take 880 MB, and ArviZ's PSIS copies it several times).
LOO_BLOCK: int = 2_000_000


def _relative_ess(post: xr.Dataset) -> float:
    """ArviZ's ``r_eff`` of :func:`arviz_stats.loo`: mean ESS of the mean per draw.

    The mean over every element of every posterior variable of
    ``ess(method="mean")``, divided by the number of draws (1 with one chain).
    """
    from bayes_ir.hierarchical.diagnostics import draw_diagnostics

    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    if n_chain == 1:
        return 1.0
    ess = [
        draw_diagnostics(post[v].transpose("chain", "draw", ...))["ess_mean"].to_numpy()
        for v in post.data_vars
    ]
    return float(np.concatenate(ess).mean() / (n_chain * n_draw))


def _loo_blockwise(fit: Any, *, draws: int | None, seed: int | None) -> Any:
    r""":func:`arviz_stats.loo` of :func:`loo_data`, computed on blocks of cells.

    PSIS is pointwise: each cell's ELPD, Pareto k and effective parameters depend on its
    own log-likelihood draws and on ``r_eff`` (computed once from the whole posterior),
    so blocks of :data:`LOO_BLOCK` values, smoothed all at once by
    :func:`~bayes_ir.hierarchical.psis.psis_loo` (on
    :data:`~bayes_ir.defaults.COMPUTE_THREADS` threads, a block each), give ArviZ's result;
    the totals are summed and the SE is ArviZ's
    :math:`\sqrt{n\,\mathrm{Var}(\mathrm{elpd}_i)}`.
    """
    from arviz_stats.utils import ELPDDataLOO

    from bayes_ir.hierarchical.fit import log_likelihood_cells
    from bayes_ir.hierarchical.psis import psis_loo

    post, design, cells = _loo_draws(fit, draws, seed)
    n_samples = post.sizes["chain"] * post.sizes["draw"]
    reff = _relative_ess(post)
    width = max(1, LOO_BLOCK // n_samples)

    def block_loo(lo: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        block = cells[lo : lo + width]
        # all draws in one chunk: the block's few topics keep the grid near LOO_BLOCK values,
        # and the parameters are taken out of the posterior once per block, not per chunk
        ll = log_likelihood_cells(post, design, _family_spec(fit), block, chunk=n_samples)
        return psis_loo(ll.reshape(n_samples, block.size).T, reff)

    starts = range(0, cells.size, width)
    threads = defaults.COMPUTE_THREADS
    if len(starts) > 1 and threads > 1:  # numpy's array work releases the GIL
        with ThreadPoolExecutor(threads) as pool:
            parts = list(pool.map(block_loo, starts))
    else:
        parts = [block_loo(lo) for lo in starts]
    elpd_all = np.concatenate([e for e, _, _ in parts])
    k_all = np.concatenate([k for _, k, _ in parts])
    p_loo = float(sum(np.sum(p) for _, _, p in parts))
    topic, system = np.divmod(cells, design.matrix.shape[1])
    obs = {
        "topic": ("obs", np.asarray(design.topics)[topic]),
        "system": ("obs", np.asarray(design.systems)[system]),
    }
    good_k = min(1 - 1 / np.log10(n_samples), 0.7) if n_samples > 1 else 0.7
    n_cells = elpd_all.size
    return ELPDDataLOO(
        elpd=float(np.sum(elpd_all)),
        se=float(np.sqrt(n_cells * np.var(elpd_all, ddof=1))) if n_cells > 1 else 0.0,
        p=p_loo,
        n_samples=n_samples,
        n_data_points=n_cells,
        scale="log",
        warning=bool(np.any(k_all > good_k)),
        good_k=good_k,
        elpd_i=xr.DataArray(elpd_all, dims="obs", coords=obs, name="score"),
        pareto_k=xr.DataArray(k_all, dims="obs", coords=obs, name="score"),
        approx_posterior=False,
        log_weights=None,  # type: ignore[arg-type]  # ArviZ's default, typed DataArray
    )


# ---------------------------------------------------------------------- comparison
def _rule_text(se_rule: float, mean_check_p: float, tolerance: float) -> str:
    return (
        f"within each outcome space, among the candidates whose predicted challenger - "
        f"champion mean differences agree with the observed ones (check p >= "
        f"{mean_check_p:g}), the simplest whose ELPD is within {se_rule:g} standard errors of "
        f"the difference from the best one's (simplest first: {', '.join(MODELS)}; while "
        f"the chosen zoib's model check flags systems, the zoib with one inflation per "
        f"system (for failed shares of exact 0s or 1s) or one precision per system (for a "
        f"failed spread) is fitted and compared too); across "
        f"outcome spaces (PSIS-LOO cannot compare a density with a probability mass), among "
        f"the spaces whose choice passed its diagnostics, the space whose choice predicts the "
        f"observed shares of exact 0s and 1s within "
        f"{tolerance:.0%} and whose model check flags the fewest of the champion and "
        f"challengers, then the fewest systems (ties: {', '.join(_SPACE_ORDER)})"
    )


@dataclass(frozen=True, eq=False)
class LikelihoodComparison:
    r"""PSIS-LOO comparison of candidate likelihoods and the model it chose.

    Attributes
    ----------
    frame
        One row per candidate: :func:`arviz_stats.compare` of the candidates of one
        outcome space with that space's choice as the reference (``elpd_diff`` =
        candidate minus that choice; ``dse`` its SE; ELPDs of different spaces are not
        comparable), plus ``outcome_space``, ``n_high_k`` (cells with Pareto
        :math:`\hat k` above ``good_k``), ``good_k``, ``mean_check_p`` and
        ``n_flagged`` (see :meth:`to_frame`); rows by space, best ELPD first.
    chosen
        Name of the chosen model (a key of :data:`MODELS`).
    rule, se_rule
        The selection rule in words and its multiplier of the SE.
    runner_up
        The best other candidate of the chosen model's outcome space that passed the
        mean-difference check (the best other one if none did; ``""`` when the space
        has no other candidate).
    elpd_diff, elpd_diff_se
        ELPD of the chosen model minus the runner-up's, and its SE (positive: the
        chosen model predicts better; NaN without a runner-up).
    loo_draws, seed
        Draws per model used by PSIS-LOO and the seed of the subset.
    fits, elpd
        The fitted candidates and their ELPD results (keyed by name).
    spaces
        One row per outcome space: ``outcome_space, choice, diagnostics_passed, n_flagged,
        roles_flagged, zeros_observed, zeros_predicted, ones_observed, ones_predicted,
        adequate, chosen`` (the checks across spaces; ``roles_flagged`` counts the champion and
        challengers among the flagged; see :func:`compare_likelihoods`).
    skipped
        Default candidates not fitted because the rule could not choose them: the
        continuous ones, when the scores have more exact 0s or 1s than the tolerance
        and a family with point masses describes them (see :func:`compare_likelihoods`).
    zeros_ones
        Observed shares of exact 0s and of exact 1s.
    escalated
        Richer zoib models fitted beyond the default candidates, each with the reason
        (a simpler zoib's model check flagged systems; :func:`richer_zoib`).
    """

    frame: pd.DataFrame
    chosen: str
    rule: str
    se_rule: float
    runner_up: str
    elpd_diff: float
    elpd_diff_se: float
    loo_draws: int
    seed: int
    fits: dict[str, Any] = field(repr=False)
    elpd: dict[str, Any] = field(repr=False)
    spaces: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    skipped: tuple[str, ...] = ()
    zeros_ones: tuple[float, float] = (math.nan, math.nan)
    escalated: dict[str, str] = field(default_factory=dict)

    @property
    def chosen_fit(self) -> Any:
        """The chosen model's fit, with this comparison as its ``likelihood_choice``."""
        return replace(self.fits[self.chosen], likelihood_choice=self)

    def to_frame(self) -> pd.DataFrame:
        """One row per candidate, by outcome space, best ELPD first.

        Columns ``model, likelihood, sigma, outcome_space, elpd, se, p, elpd_diff, dse,
        weight, n_high_k, good_k, mean_check_p, n_flagged, chosen``; ``elpd_diff``,
        ``dse`` and ``weight`` are relative to the choice of the candidate's outcome
        space; ``mean_check_p`` is the smallest p-value of the candidate's
        :func:`mean_difference_check` over the challengers; ``n_flagged`` the systems its
        model check flags.
        """
        out = self.frame.rename_axis("model").reset_index()
        out.insert(1, "likelihood", [MODELS[m][0] for m in out["model"]])
        out.insert(2, "sigma", [MODELS[m][1] for m in out["model"]])
        out["chosen"] = out["model"] == self.chosen
        cols = ["model", "likelihood", "sigma", "outcome_space", "elpd", "se", "p", "elpd_diff"]
        cols += ["dse", "weight", "n_high_k", "good_k", "mean_check_p", "n_flagged", "chosen"]
        return out[cols]

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    @property
    def chosen_by(self) -> str:
        """``"PSIS-LOO"``, or ``"PSIS-LOO and the checks across spaces"`` when they decided."""
        across = len(self.spaces) > 1 or self.skipped
        return "PSIS-LOO and the checks across spaces" if across else "PSIS-LOO"

    def choice_text(self) -> str:
        """Return the choice, its ELPD difference, the candidates not fitted and the rule."""
        versus = (
            f"(ELPD {self.chosen} - {self.runner_up} = {self.elpd_diff:+.1f}, "
            f"SE {self.elpd_diff_se:.1f})"
            if self.runner_up
            else "(the only candidate of its outcome space)"
        )
        text = f"Likelihood chosen by {self.chosen_by}: {self.chosen} {versus}"
        if self.skipped:
            text += (
                f"\n  not fitted: {', '.join(self.skipped)}: a continuous family predicts no "
                f"exact 0s or 1s, the scores have {self.zeros_ones[0]:.1%} 0s and "
                f"{self.zeros_ones[1]:.1%} 1s (tolerance "
                f"{100 * defaults.POINT_MASS_TOLERANCE:.0f} percentage points) and "
                f"{self.chosen} predicts both shares within it: the rule across spaces could "
                "not choose them (pass candidates=... to fit them anyway)"
            )
        for name, why in self.escalated.items():
            text += f"\n  also fitted: {name}, because {why}"
        return f"{text}\n  rule: {self.rule}"

    def summary(self) -> str:
        """Return the choice, the rule and the table of ELPDs with Pareto-k counts."""
        frame = self.to_frame()
        lines = [
            f"Likelihood comparison by PSIS-LOO ({self.loo_draws} draws per model, "
            f"seed {self.seed}; one observation per topic x system cell)",
            self.choice_text(),
            "",
            f"  {'model':<38} {'elpd':>10} {'se':>7} {'p_loo':>7} {'diff':>9} {'dse':>7} "
            f"{'k>good_k':>8} {'mean p':>7} {'flagged':>7}",
        ]
        for space, rows in frame.groupby("outcome_space", sort=False):
            lines.append(f"  outcome space {space}: {OUTCOME_SPACES[str(space)]}")
            for r in rows.itertuples():
                mark = " *" if r.chosen else ""
                lines.append(
                    f"  {r.model:<38} {r.elpd:10.1f} {r.se:7.1f} {r.p:7.1f} "
                    f"{r.elpd_diff:+9.1f} {r.dse:7.1f} {r.n_high_k:8d} {r.mean_check_p:7.3f} "
                    f"{r.n_flagged:7d}{mark}"
                )
        lines.append(
            "  (diff, dse: ELPD minus that of its outcome space's choice, and its SE; mean p: "
            "smallest p-value of the check of the challengers' mean differences, "
            "mean_difference_check; flagged: systems the model check flags)"
        )
        if len(self.spaces) > 1:
            lines.append("  checks across outcome spaces (share of exact 0s / 1s, observed / "
                         "predicted):")  # fmt: skip
            for r in self.spaces.itertuples():
                lines.append(
                    f"    {r.outcome_space:<14} {r.choice:<38} flagged {r.n_flagged:3d} "
                    f"({r.roles_flagged} champion/challenger)  "
                    f"0s {r.zeros_observed:.3f}/{r.zeros_predicted:.3f}  "
                    f"1s {r.ones_observed:.3f}/{r.ones_predicted:.3f}  "
                    + ("adequate" if r.adequate else "inadequate")
                    + ("" if r.diagnostics_passed else ", diagnostics FAILED")
                    + (" *" if r.chosen else "")
                )
        if (frame["n_high_k"] > 0).any():
            lines.append(
                f"  (k>good_k: cells with Pareto k > {frame['good_k'].min():.2f}, where that "
                "model's ELPD is optimistic: influential cells the model does not expect)"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _choose(ranked: pd.DataFrame, se_rule: float) -> str:
    """Return the simplest candidate within ``se_rule`` SE of the best (``ranked``: az.compare)."""
    within = [
        m for m in ranked.index if ranked.loc[m, "elpd_diff"] >= -se_rule * ranked.loc[m, "dse"]
    ]
    return min(within, key=list(MODELS).index)


def _space_frame(elpd: dict[str, Any], chosen: str) -> pd.DataFrame:
    """:func:`arviz_stats.compare` of one space's candidates, relative to ``chosen``."""
    import arviz_stats as azs

    if len(elpd) > 1:
        return azs.compare(elpd, reference=chosen, round_to="none")
    res = elpd[chosen]  # a space with one candidate: its own row
    return pd.DataFrame(
        {"rank": [0], "elpd": [float(res.elpd)], "p": [float(res.p)], "elpd_diff": [0.0],
         "weight": [1.0], "se": [float(res.se)], "dse": [0.0], "warning": [False]},
        index=pd.Index([chosen]),
    )  # fmt: skip


def _point_mass_shares(fit: Any) -> tuple[float, float]:
    """Return the fit's predictive share of exact 0s and of exact 1s over its cells.

    From its model check (families with point masses); 0 for a continuous family.
    """
    check = fit.model_check
    if check is None or check.frame["pred_zeros"].isna().all():
        return 0.0, 0.0
    weights = check.frame["n_topics"].to_numpy(dtype=float)
    return tuple(  # type: ignore[return-value]
        float(np.nansum(check.frame[f"pred_{m}"].to_numpy() * weights) / weights.sum())
        for m in ("zeros", "ones")
    )


def _adequate(observed: tuple[float, float], fit: Any) -> bool:
    """Whether the fit predicts the observed shares of exact 0s and of exact 1s.

    Each within :data:`bayes_ir.defaults.POINT_MASS_TOLERANCE` (:func:`_point_mass_shares`).
    """
    tol = defaults.POINT_MASS_TOLERANCE
    predicted = _point_mass_shares(fit)
    return all(abs(o - p) <= tol for o, p in zip(observed, predicted, strict=True))


def _n_flagged(fit: Any, among: tuple[str, ...] | None = None) -> int:
    """Return the number of systems the fit's model check flags (0 without a check).

    With ``among``, only those systems are counted.
    """
    check = fit.model_check
    if check is None:
        return 0
    return len(check.flagged if among is None else set(check.flagged) & set(among))


def richer_zoib(fit: Any) -> tuple[str, tuple[str, ...]] | None:
    """Return the zoib model to fit next when a zoib fit's check fails systems, and why.

    A system that fails its check of the share of exact 0s or 1s asks for one inflation
    per system (``zoib(inflation=system)``); one that fails the spread of its scores (SD,
    interval coverage, skewness) for one precision per system (``sigma="system"``). The
    next model keeps what ``fit`` has per system and adds what its flagged systems ask
    for. Returns ``(name, failed checks)``, or ``None`` when nothing is flagged, or the
    flagged systems fail only checks neither structure addresses (the mean, the lost
    scores), or the model is ``fit``'s own.
    """
    from bayes_ir.hierarchical.families import family_of

    check = fit.model_check
    family = family_of(fit)
    if check is None or not check.flagged or family.name != "zoib":
        return None
    failed = {c for s in check.flagged for c in check.failed(s)}
    inflation = "inflation" in family.per_system or bool(failed & _MASS_CHECKS)
    phi = "phi" in family.per_system or bool(failed & _SPREAD_CHECKS)
    name = _ZOIB_STRUCTURES[(inflation, phi)]
    if name == model_name(fit):
        return None
    return name, tuple(c for c in CHECKS if c in failed)


def choose_across_spaces(spaces: pd.DataFrame) -> str:
    """Return the model chosen across outcome spaces from each space's choice and checks.

    ``spaces`` has one row per outcome space (continuous, unit_inflated, counts, binary, in
    that order) with ``choice``, ``diagnostics_passed``, ``adequate``, ``roles_flagged`` and
    ``n_flagged``. Among the rows whose posterior passed its diagnostics (all, if none did),
    the adequate ones (all, if none is); among those, the fewest champion and challengers
    flagged, then the fewest systems flagged, then the first space wins.
    """
    pool = spaces[spaces["diagnostics_passed"]] if spaces["diagnostics_passed"].any() else spaces
    pool = pool[pool["adequate"]] if pool["adequate"].any() else pool
    return str(pool.sort_values(["roles_flagged", "n_flagged"], kind="stable").iloc[0]["choice"])


def compare_likelihoods(
    table: ScoreTable,
    *,
    candidates: tuple[str, ...] | list[str] | None = None,
    loo_draws: int | None = None,
    se_rule: float | None = None,
    mean_check_p: float | None = None,
    seed: int | None = None,
    **fit_options: Any,
) -> LikelihoodComparison:
    r"""Fit candidate likelihoods, compare them by PSIS-LOO and choose one.

    Parameters
    ----------
    table
        A :class:`~bayes_ir.table.ScoreTable` with roles and one collection and measure.
    candidates
        Names from :data:`MODELS` (default :func:`default_candidates`: for scores in
        [0, 1], the Gaussian, skew-normal, Gaussian with one residual SD per system and
        zoib, and binomial for k-of-n scores; ``bernoulli`` alone for 0/1 scores); at
        least two when given.
    loo_draws
        Posterior draws per model used by :func:`loo` (default
        :data:`bayes_ir.defaults.LOO_DRAWS`).
    se_rule
        Multiplier of the SE of the ELPD difference in the rule (default
        :data:`bayes_ir.defaults.ELPD_SE_RULE`, 2).
    mean_check_p
        Candidates whose :func:`mean_difference_check` gives a challenger a p-value
        below this are not chosen (default :data:`bayes_ir.defaults.MEAN_CHECK_P`,
        0.01; 0 switches the check off).
    seed
        Seed of every fit and of the LOO subsets (default :data:`bayes_ir.defaults.SEED`).
    **fit_options
        Passed to :func:`~bayes_ir.hierarchical.fit` (``method``, ``chains``,
        ``draws``, ``tune``, ``priors``, ``strict``, ...), not ``likelihood`` or ``sigma``.

    Returns
    -------
    LikelihoodComparison
        ``chosen_fit`` is the chosen model's fit.

    Warns
    -----
    DataWarning
        Once, naming every candidate that has cells with Pareto :math:`\hat k` above
        ``good_k`` (its ELPD is unreliable there, see the module docstring; :func:`loo`
        alone warns per model); when no candidate passes the mean-difference check.

    Notes
    -----
    Rule, within each outcome space
    (:data:`~bayes_ir.hierarchical.families.base.OUTCOME_SPACES`: PSIS-LOO compares
    only families whose scores live in the same space; a density at an exact 0 and a
    probability mass there are not on one scale). First, a candidate must reproduce
    what the decision is about: its posterior predictive check of every challenger's
    mean difference from the champion (:func:`mean_difference_check`) has :math:`p
    \ge` ``mean_check_p`` (if no candidate passes, all stay eligible and the choice
    warns). ELPD alone does not see this: on the example data the skew-normal's ELPD
    is within 1 SE of the best, yet it puts ``chal_risky``'s mean difference at -0.006
    against +0.072 observed (p < 0.001). Then, among the eligible, with
    :math:`\Delta_m = \mathrm{elpd}_m - \mathrm{elpd}_{best} \le 0` and
    :math:`se(\Delta_m)` the SE of the paired difference
    (:math:`\sqrt{n\,\mathrm{Var}_i(\mathrm{elpd}_{m,i} - \mathrm{elpd}_{best,i})}`,
    as :func:`arviz_stats.compare`), choose the simplest :math:`m` (fewest
    parameters: Gaussian, skew-normal (+1), per-system SD (+S+1)) with
    :math:`\Delta_m \ge -k\,se(\Delta_m)`, :math:`k` = ``se_rule``.

    Across outcome spaces, by the diagnostics and the posterior predictive checks: a
    space's choice whose posterior failed its diagnostics is not chosen while another
    space's passed (its numbers cannot be acted on, whatever its fit); a space's choice is
    *adequate* when its predictive shares of exact 0s and of exact 1s are each within
    :data:`bayes_ir.defaults.POINT_MASS_TOLERANCE` (2 percentage points) of the
    observed shares (a continuous family predicts none); among the adequate (all, if
    none is), the one whose model check (:func:`~bayes_ir.hierarchical.check_model`)
    flags the fewest of the champion and challengers (the systems the decision is
    about), then the fewest systems, is chosen, ties going to the first of continuous,
    unit_inflated, counts, binary.

    The default candidates skip what this rule cannot choose: when the scores have more
    exact 0s or 1s than the tolerance, the candidates with point masses are fitted first,
    with the richer zoib below, and if one of them passed its diagnostics, is adequate and
    passes the mean-difference check, the continuous candidates (inadequate whatever
    their fit: they predict no exact 0 or 1) are not fitted (``skipped``; the summary
    names them). When the default zoib's
    model check flags systems, the richer zoib they ask for (:func:`richer_zoib`: one
    inflation per system for failed shares of exact 0s or 1s, one precision per system
    for a failed spread) is fitted and compared by PSIS-LOO too, and so on while the space's
    choice flags systems and a richer model is left (``escalated``; the summary says why).
    One zoib for every collection would flag the weakest runs of Robust04 AP, whose share
    of exact 0s (5-13%) the pooled inflation puts at 1%. Candidates given by the caller are
    all fitted, and only they. See ``docs/methods.md``.

    References
    ----------
    Vehtari, A., Gelman, A., Gabry, J. (2017). Practical Bayesian model evaluation
    using leave-one-out cross-validation and WAIC. *Statistics and Computing* 27(5),
    1413-1432.

    Sivula, T., Magnusson, M., Matamoros, A. A., Vehtari, A. (2025). Uncertainty in
    Bayesian leave-one-out cross-validation based model comparison. arXiv:2008.10296.

    Gabry, J., Simpson, D., Vehtari, A., Betancourt, M., Gelman, A. (2019).
    Visualization in Bayesian workflow. *JRSS A* 182(2), 389-402.
    """
    import arviz_stats as azs

    from bayes_ir.hierarchical.families import get_family
    from bayes_ir.hierarchical.fit import fit as fit_model

    names = list(default_candidates(table) if candidates is None else candidates)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise BayesIRError(f"unknown candidate {unknown[0]!r}: choose among {', '.join(MODELS)}")
    if candidates is not None and len(set(names)) < 2:
        raise BayesIRError("compare_likelihoods needs at least two different candidates")
    for bad in ("likelihood", "sigma", "log_likelihood"):
        if bad in fit_options:
            raise BayesIRError(f"compare_likelihoods sets {bad!r} itself: do not pass it")
    k = defaults.ELPD_SE_RULE if se_rule is None else float(se_rule)
    if not k >= 0:
        raise BayesIRError(f"se_rule must be non-negative, got {se_rule}")
    p_min = defaults.MEAN_CHECK_P if mean_check_p is None else float(mean_check_p)
    if not 0 <= p_min < 1:
        raise BayesIRError(f"mean_check_p must lie in [0, 1), got {mean_check_p}")
    n_loo = defaults.LOO_DRAWS if loo_draws is None else int(loo_draws)
    seed = defaults.SEED if seed is None else int(seed)
    y = design_of(table).score
    observed = (float(np.mean(y == 0.0)), float(np.mean(y == 1.0)))
    tol = defaults.POINT_MASS_TOLERANCE
    fits, elpd, check_p = {}, {}, {}

    def evaluate(name: str) -> None:
        likelihood, sigma = MODELS[name]
        with warnings.catch_warnings():  # only the chosen model's check speaks (below)
            warnings.simplefilter("ignore", ModelCheckWarning)
            fits[name] = fit_model(table, likelihood=likelihood, sigma=sigma, seed=seed,
                                   **fit_options)  # fmt: skip
        with warnings.catch_warnings():  # said once for every candidate (below)
            warnings.simplefilter("ignore", DataWarning)
            elpd[name] = loo(fits[name], draws=n_loo, seed=seed)
        check_p[name] = (
            float(mean_difference_check(fits[name], draws=n_loo, seed=seed).frame["p_value"].min())
            if table.challengers
            else 1.0  # nothing to check without a challenger
        )

    def eligible_of(members: list[str]) -> list[str]:
        return [m for m in members if check_p[m] >= p_min] or members

    def space_choice(members: list[str]) -> str:
        ok = eligible_of(members)
        return ok[0] if len(ok) == 1 else _choose(azs.compare({m: elpd[m] for m in ok},
                                                              round_to="none"), k)  # fmt: skip

    escalated: dict[str, str] = {}

    def escalate() -> None:
        """Fit the richer zoib the default zoib's flagged systems ask for, while they do."""
        while candidates is None and "zoib" in fits:
            current = space_choice([m for m in fits if MODELS[m][0].startswith("zoib")])
            richer = richer_zoib(fits[current])
            if richer is None or richer[0] in fits:
                return
            n_bad = _n_flagged(fits[current])
            escalated[richer[0]] = (
                f"{current}'s model check flagged {n_bad} system{'s' if n_bad > 1 else ''} "
                f"({', '.join(richer[1])})"
            )
            evaluate(richer[0])

    names = list(dict.fromkeys(names))
    continuous = [m for m in names if get_family(MODELS[m][0]).outcome_space == "continuous"]
    skipped: list[str] = []
    if candidates is None and continuous and max(observed) > tol:
        # A continuous family predicts no exact 0 or 1, so with more of them than the
        # tolerance it is inadequate before it is fitted: once a family with point masses
        # is adequate and reproduces the challengers' mean differences, no continuous
        # candidate can be chosen (the rule across spaces below), and none is fitted. The
        # richer zoib comes first: the pooled one can fail the mean check for a system with
        # a share of exact 0s of its own (TREC-8 RR's champion).
        for name in (m for m in names if m not in continuous):
            evaluate(name)
        escalate()  # a zoib that misdescribes some systems' own 0s may fail the mean check
        if any(
            fits[m].diagnostics.passed and check_p[m] >= p_min and _adequate(observed, fits[m])
            for m in fits
        ):
            skipped = continuous
    for name in names:
        if name not in fits and name not in skipped:
            evaluate(name)
    escalate()
    if not any(check_p[m] >= p_min for m in elpd):
        warnings.warn(
            "no candidate likelihood reproduces every challenger's observed mean difference "
            f"from the champion (check p < {p_min:g} for all): chosen by ELPD alone; "
            "do not trust the contrasts of the challengers that fail mean_difference_check",
            DataWarning,
            stacklevel=2,
        )
    eligible = eligible_of(list(elpd))
    space_of = {m: get_family(MODELS[m][0]).outcome_space for m in elpd}
    spaces = sorted(set(space_of.values()), key=_SPACE_ORDER.index)
    frames, choice = [], {}
    for space in spaces:
        members = [m for m in elpd if space_of[m] == space]
        choice[space] = space_choice(members)
        frame = _space_frame({m: elpd[m] for m in members}, choice[space])
        frames.append(frame.assign(outcome_space=space))
    roles = () if table.roles is None else (table.champion, *table.challengers)
    rows = []
    for space in spaces:
        fitted = fits[choice[space]]
        predicted = _point_mass_shares(fitted)
        rows.append({
            "outcome_space": space, "choice": choice[space],
            "diagnostics_passed": bool(fitted.diagnostics.passed),
            "n_flagged": _n_flagged(fitted), "roles_flagged": _n_flagged(fitted, roles),
            "zeros_observed": observed[0], "zeros_predicted": predicted[0],
            "ones_observed": observed[1], "ones_predicted": predicted[1],
            "adequate": _adequate(observed, fitted),
        })  # fmt: skip
    across = pd.DataFrame(rows)
    chosen = choose_across_spaces(across)
    across["chosen"] = across["choice"] == chosen
    frame = pd.concat(frames)
    frame["mean_check_p"] = [check_p[m] for m in frame.index]
    frame["n_high_k"] = [int((elpd[m].pareto_k.values > elpd[m].good_k).sum()) for m in frame.index]
    frame["good_k"] = [float(elpd[m].good_k) for m in frame.index]
    frame["n_flagged"] = [_n_flagged(fits[m]) for m in frame.index]
    high = frame[frame["n_high_k"] > 0]
    if len(high):
        counts = ", ".join(f"{m} {n}" for m, n in zip(high.index, high["n_high_k"], strict=True))
        warnings.warn(
            f"PSIS-LOO: cells with Pareto k > {high['good_k'].min():.2f} ({counts} of "
            f"{elpd[high.index[0]].n_data_points}) make those models' ELPD optimistic there: "
            "these cells are influential, often scores the model does not expect",
            DataWarning,
            stacklevel=2,
        )
    same = [m for m in frame.index if m != chosen and space_of[m] == space_of[chosen]]
    others = [m for m in same if m in eligible] or same
    runner_up = max(others, key=lambda m: frame.loc[m, "elpd"]) if others else ""
    diff = float(-frame.loc[runner_up, "elpd_diff"]) if runner_up else math.nan
    dse = float(frame.loc[runner_up, "dse"]) if runner_up else math.nan
    check = fits[chosen].model_check
    if check is not None:
        check.warn(stacklevel=2)
    return LikelihoodComparison(
        frame=frame,
        chosen=chosen,
        rule=_rule_text(k, p_min, tol),
        se_rule=k,
        runner_up=runner_up,
        elpd_diff=diff,
        elpd_diff_se=dse,
        loo_draws=n_loo,
        seed=seed,
        fits=fits,
        elpd=elpd,
        spaces=across,
        skipped=tuple(skipped),
        zeros_ones=observed,
        escalated=escalated,
    )


# ---------------------------------------------------------------------- residual SDs
def residual_sd_lines(fit: Any, *, ci_prob: float) -> list[str]:
    """Summary lines of the per-system residual SDs of a ``sigma="system"`` fit."""
    from bayes_ir.hierarchical.contrasts import residual_sd_draws

    sig = residual_sd_draws(fit)
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    flat = sig.stack(sample=("chain", "draw")).transpose("system", "sample").values
    q = np.quantile(flat, [lo, hi], axis=1)
    roles = fit.system_effect_draws()["role"].values
    lines = [f"Residual SD per system ({ci_prob:.0%} equal-tailed interval):"]
    for j, s in enumerate(sig["system"].values):
        if roles[j] == "artifact":
            continue
        lines.append(
            f"  {s:<20} {roles[j]:<10} {flat[j].mean():8.4f} [{q[0, j]:.4f}, {q[1, j]:.4f}]"
        )
    if (roles == "artifact").any():
        lines.append(f"  (+ {(roles == 'artifact').sum()} artifact runs: residual_sd_draws())")
    return lines


# ---------------------------------------------------------------------- contrast check
@dataclass(frozen=True, eq=False)
class MeanDifferenceCheck:
    """Posterior predictive check of each challenger's mean difference from the champion.

    Attributes
    ----------
    frame
        One row per challenger, columns of :meth:`to_frame`.
    ci_prob
        Probability of the predictive intervals.
    model
        The fit's model name (see :func:`model_name`).
    n_draws, seed
        Posterior draws simulated and the seed.
    """

    frame: pd.DataFrame
    ci_prob: float
    model: str
    n_draws: int
    seed: int

    def to_frame(self) -> pd.DataFrame:
        """One row per challenger.

        Columns ``challenger, champion, n_topics, observed, contrast, pred_lower,
        pred_upper, p_value, consistent``.

        ``observed``: mean over the topics both systems scored of challenger minus
        champion; ``contrast``: posterior mean of the model's contrast (the difference
        of the two systems' predictive means); ``pred_lower``, ``pred_upper``: the
        ``ci_prob`` interval of the same mean difference in data replicated from the
        posterior; ``p_value``: two-sided posterior predictive p-value of ``observed``;
        ``consistent``: ``observed`` inside the predictive interval.
        """
        return self.frame.copy()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """One line per challenger: observed and model difference, interval, p-value."""
        lines = [
            f"Posterior predictive check of the mean difference from the champion "
            f"({self.model}; {self.n_draws} replicated datasets, "
            f"{self.ci_prob:.0%} predictive interval):",
            f"  {'challenger':<20} {'observed':>9} {'model':>9} {'lower':>9} {'upper':>9} {'p':>6}",
        ]
        for r in self.frame.itertuples():
            flag = "" if r.consistent else "  <- model contradicts the observed difference"
            lines.append(
                f"  {r.challenger:<20} {r.observed:+9.4f} {r.contrast:+9.4f} "
                f"{r.pred_lower:+9.4f} {r.pred_upper:+9.4f} {r.p_value:6.3f}{flag}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def mean_difference_check(
    fit: Any,
    *,
    draws: int | None = None,
    ci_prob: float | None = None,
    seed: int | None = None,
) -> MeanDifferenceCheck:
    r"""Check the model's challenger - champion contrasts against the observed mean differences.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit` with a champion and challengers.
    draws
        Posterior draws to replicate (a seeded subset; default
        :data:`bayes_ir.defaults.LOO_DRAWS`).
    ci_prob
        Probability of the predictive interval (default :data:`bayes_ir.defaults.CI_PROB`).
    seed
        Seed of the subset and of the replication (default :data:`bayes_ir.defaults.SEED`).

    Returns
    -------
    MeanDifferenceCheck

    Notes
    -----
    The reported contrast of a challenger :math:`c` is :math:`u_c - u_0`, the
    difference of the two systems' *predictive means* (in the mean/SD
    parameterisation of both likelihoods :math:`b_0 + a_t + u_s` is the mean of
    score :math:`y_{ts}`, not a location parameter). For each posterior draw the
    scores of both systems on the observed topics are replicated,
    :math:`\tilde y_{ts} \sim p(y \mid \theta)`, and :math:`T = \overline{\tilde y_{\cdot
    c}} - \overline{\tilde y_{\cdot 0}}`; the p-value is
    :math:`2\min(P(T \ge T_{obs}), P(T \le T_{obs}))`. A model that describes both
    systems puts :math:`T_{obs}` well inside; a small p-value means the model's
    difference of means is not the data's (e.g. a shared skewness forced on a system
    whose errors skew the other way, see :mod:`bayes_ir.hierarchical.model`).

    References
    ----------
    Gelman, A., Meng, X.-L., Stern, H. (1996). Posterior predictive assessment of
    model fitness via realized discrepancies. *Statistica Sinica* 6(4), 733-760.
    """
    from bayes_ir.hierarchical.families import family_of

    p = defaults.ci_prob(ci_prob)
    seed = defaults.SEED if seed is None else int(seed)
    n = defaults.LOO_DRAWS if draws is None else int(draws)
    post = _thin(fit.draws, n, seed)
    roles = post["system_effect"]["role"].values
    systems = [str(s) for s in post["system_effect"]["system"].values]
    champs = [s for s, r in zip(systems, roles, strict=True) if r == "champion"]
    chals = [s for s, r in zip(systems, roles, strict=True) if r == "challenger"]
    if len(champs) != 1 or not chals:
        raise BayesIRError("mean_difference_check needs one champion and at least one challenger")
    champ = champs[0]
    matrix = fit.table.matrix().to_pandas()

    def flat(x: xr.DataArray) -> np.ndarray:
        return np.asarray(x.stack(sample=("chain", "draw")).transpose("sample", ...).values)

    family = family_of(fit)
    params = family.parameters(post)
    index = {s: j for j, s in enumerate(systems)}
    topics = [str(t) for t in post["topic_effect"]["topic"].values]
    u = family.system_means(post)
    rng = np.random.default_rng([seed, 0x3D])
    rows = []
    lo, hi = (1 - p) / 2, (1 + p) / 2
    for chal in chals:
        both = matrix.loc[topics, [champ, chal]].notna().all(axis=1).to_numpy()
        obs = matrix.loc[topics, chal].to_numpy() - matrix.loc[topics, champ].to_numpy()
        t_obs = float(obs[both].mean())
        reps = []
        for s in (chal, champ):
            cells = family.cells(params, np.array([index[s]]))
            reps.append(cells.rvs(rng)[:, 0, both].mean(axis=1))
        t_rep = reps[0] - reps[1]
        contrast = flat(u.sel(system=chal) - u.sel(system=champ))
        q = np.quantile(t_rep, [lo, hi])
        p_val = 2 * min(np.mean(t_rep >= t_obs), np.mean(t_rep <= t_obs))
        rows.append(
            {
                "challenger": chal,
                "champion": champ,
                "n_topics": int(both.sum()),
                "observed": t_obs,
                "contrast": float(contrast.mean()),
                "pred_lower": float(q[0]),
                "pred_upper": float(q[1]),
                "p_value": float(min(1.0, p_val)),
                "consistent": bool(q[0] <= t_obs <= q[1]),
            }
        )
    return MeanDifferenceCheck(
        frame=pd.DataFrame(rows),
        ci_prob=p,
        model=model_name(fit),
        n_draws=int(params["b0"].size),
        seed=seed,
    )
