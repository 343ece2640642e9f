"""Simulation-based calibration of the models of crossed designs (collections, segments, runs).

Draw every parameter of a design's model from its priors, simulate scores on the
design's cells, sample the posterior with the blocked Gibbs sampler (a logit family's:
NUTS on the PyMC twin, compiled once with the scores as data containers) and record, for
every parameter and for the quantities reported (each challenger's contrast; across
groups also the between-group SD of the contrast and each group's contrast), the rank
of the truth
among ``n_ranks`` posterior draws and whether the central interval covers it (Talts
et al. 2018; :class:`~bayes_ir.hierarchical.CalibrationResult`).

References
----------
Talts, S., Betancourt, M., Simpson, D., Vehtari, A., Gelman, A. (2018). Validating
Bayesian inference algorithms with simulation-based calibration. arXiv:1804.06788.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Executor
from functools import partial
from typing import Any

import numpy as np

from bayes_ir.errors import OptionError
from bayes_ir.hierarchical.calibration import CalibrationResult
from bayes_ir.hierarchical.design import CrossedDesign, DesignPriors
from bayes_ir.hierarchical.design.simulate import draw_parameters, simulate_scores
from bayes_ir.hierarchical.group_effects import family_contrast_draws, group_contrast_draws
from bayes_ir.sweep import sweep

__all__ = ["calibrate_design", "design_calibration_trial", "design_parameter_names"]


def _own(family: Any) -> tuple[str, ...]:
    return ("sigma",) if family is None or family.name == "gaussian" else family.design_own


def _quantities(
    values: dict[str, np.ndarray],
    design: CrossedDesign,
    priors: DesignPriors,
    seed: int,
    family: Any = None,
) -> list[tuple[str, np.ndarray]]:
    """Every checked quantity as (name, array (n, k)) from draws or the truth (n = 1).

    A logit family's contrasts are on the score scale (the reported ones); ``seed``
    seeds their draws of the population's intercepts (the truth's and the posterior's
    differ).
    """
    out = [("b0", values["b0"]), *((k, values[k]) for k in _own(family))]
    for t in design.terms[1:]:
        out.append((t.scale_name, values[t.scale_name]))
        out.append((f"{t.dim}_effect", values[t.name]))
    if design.by is None:  # one group: the contrasts of the system effects
        beta = np.asarray(values["system"])
        h = design.systems.index(design.champion)
        idx = [design.systems.index(c) for c in design.challengers]
        out.append(("contrast", beta[..., idx] - beta[..., h : h + 1]))
        return out
    if _own(family) == ("sigma",):
        overall, groups, _ = group_contrast_draws(values, design)
    else:
        overall, groups, _, _ = family_contrast_draws(values, design, family, priors, seed=seed)
    omega = values[f"sigma_system_{design.by}"]
    out.append(("contrast", overall))
    out.append(("between_sd", np.sqrt(2.0) * omega))
    out.append(("group_contrast", groups.reshape(*groups.shape[:-2], -1)))
    return out


def design_parameter_names(design: CrossedDesign, family: Any = None) -> list[str]:
    """Names of the checked quantities, in the order of a trial's output."""
    names = [f"b0[{c}]" for c in design.terms[0].levels]
    names += [f"{k}[{c}]" for k in _own(family) for c in design.residual.levels]
    for t in design.terms[1:]:
        names += [f"{t.scale_name}[{g}]" for g in t.scale_names]
        names += [f"{t.dim}_effect[{lev}]" for lev in t.levels]
    names += [f"{c} - {design.champion}" for c in design.challengers]
    if design.by is None:
        return names
    names.append(f"between-{design.by} SD")
    names += [f"{c} - {design.champion} [{g}]" for c in design.challengers for g in design.groups]
    return names


def design_calibration_trial(
    seed: int,
    *,
    design: CrossedDesign,
    priors: DesignPriors,
    ci_prob: float,
    n_ranks: int = 99,
    chains: int = 2,
    draws: int = 500,
    tune: int = 100,
    family: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One calibration dataset: the truth's rank and interval coverage per quantity.

    Parameters
    ----------
    seed
        Seed of the truth, the scores and the sampler.
    design
        The cells to simulate on (every system observed in every group).
    priors
        The priors the truth is drawn from and the model is fitted with.
    ci_prob, n_ranks, chains, draws, tune
        Central interval probability; number of draws the truth is ranked among (evenly
        spaced over all draws); sampler settings.
    family
        ``None`` (the Gaussian model, blocked Gibbs) or a logit family (NUTS, target
        acceptance :data:`~bayes_ir.hierarchical.across.FAMILY_TARGET_ACCEPT`).

    Returns
    -------
    ranks, covered
        Arrays over :func:`design_parameter_names`.
    """
    from bayes_ir.hierarchical.samplers.blocked_gibbs import sample_design_gibbs

    if chains * draws < n_ranks:
        raise OptionError(f"n_ranks={n_ranks} needs at least as many draws, got {chains * draws}")
    rng = np.random.default_rng([seed, 0x5BC])
    truth = draw_parameters(design, priors, rng, family)
    data = simulate_scores(design, truth, rng, family)
    if _own(family) == ("sigma",):
        post, _ = sample_design_gibbs(
            data, priors, chains=chains, draws=draws, tune=tune, seed=seed, keep_rows=True
        )
    else:
        from bayes_ir.hierarchical.across import FAMILY_TARGET_ACCEPT
        from bayes_ir.hierarchical.samplers.pymc_design import sample_design_nuts

        post, _ = sample_design_nuts(data, priors, chains=chains, draws=draws, tune=tune,
                                     seed=seed, target_accept=FAMILY_TARGET_ACCEPT,
                                     family=family, data=True)  # fmt: skip
    one = {k: np.atleast_1d(v)[None] for k, v in truth.items()}
    truth_vec = np.concatenate([v.ravel() for _, v in _quantities(one, data, priors, seed, family)])
    flat = {k: v.reshape(chains * draws, -1) for k, v in post.items()}
    x = np.concatenate(
        [
            v.reshape(chains * draws, -1)
            for _, v in _quantities(flat, data, priors, seed + 1, family)
        ],
        axis=1,
    )
    keep = np.linspace(0, x.shape[0] - 1, n_ranks).round().astype(int)
    ranks = (x[keep] < truth_vec).sum(axis=0)
    lo, hi = np.quantile(x, [(1 - ci_prob) / 2, (1 + ci_prob) / 2], axis=0)
    return ranks, (lo <= truth_vec) & (truth_vec <= hi)


def calibrate_design(
    design: CrossedDesign,
    priors: DesignPriors,
    *,
    n_datasets: int = 100,
    ci_prob: float = 0.9,
    n_ranks: int = 99,
    chains: int = 2,
    draws: int = 500,
    tune: int = 100,
    seed: int = 0,
    executor: Executor | None = None,
    max_workers: int | None = None,
    family: Any = None,
) -> CalibrationResult:
    """Check the calibration of the model of ``design`` (across groups, or of runs).

    Parameters
    ----------
    design
        The cells of the simulated datasets (its scores are not used).
    priors
        Fully specified priors: the truth is drawn from them and each dataset fitted
        with them.
    n_datasets, ci_prob, n_ranks, chains, draws, tune
        Number of datasets; interval probability; draws each truth is ranked among;
        sampler settings per dataset.
    seed
        Dataset ``i`` uses seed ``seed + i``.
    executor, max_workers
        Passed to :func:`bayes_ir.sweep.sweep`.
    family
        ``None`` (Gaussian) or a logit family with data containers (bernoulli,
        binomial; see :func:`design_calibration_trial`).

    Returns
    -------
    CalibrationResult
        Over :func:`design_parameter_names`: every intercept, scale and effect, each
        challenger's contrast and, across groups, the between-group SD and each group's
        contrast.
    """
    func = partial(
        design_calibration_trial,
        design=design,
        priors=priors,
        ci_prob=ci_prob,
        n_ranks=n_ranks,
        chains=chains,
        draws=draws,
        tune=tune,
        family=family,
    )
    items: Iterable[int] = range(seed, seed + n_datasets)
    results = sweep(func, items, executor=executor, max_workers=max_workers,
                    label="simulation-based calibration")  # fmt: skip
    return CalibrationResult(
        parameters=tuple(design_parameter_names(design, family)),
        ranks=np.array([r[0] for r in results]),
        covered=np.array([r[1] for r in results]),
        n_ranks=n_ranks,
        ci_prob=ci_prob,
    )
