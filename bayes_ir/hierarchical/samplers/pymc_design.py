r"""The PyMC twin of a crossed design's Gaussian model, sampled by NUTS (nutpie or PyMC).

The same model as :mod:`bayes_ir.hierarchical.samplers.blocked_gibbs` samples:

.. math::

    y_i \sim N\Big(b_{0,c(i)} + \sum_j f_{j,i}\,\theta^{(j)}_{\ell_j(i)},\
    \sigma^2_{c(i)}\Big),\quad b_{0c} \sim N(m_c, v_c^2),\quad
    \theta^{(j)} \sim \mathrm{ZSN}(s^{(j)}_{h}) \text{ within each zero-sum set},

with Exponential priors on every scale (:mod:`bayes_ir.hierarchical.design.priors`).
A zero-sum set's effects are written :math:`\theta = s\,(z - \bar z_{\text{set}})`
(non-centred, :math:`z \sim N(0, 1)`) or :math:`\theta = x - \bar x_{\text{set}}`,
:math:`x \sim N(0, s^2)` (centred): an i.i.d. normal minus its mean has the
covariance :math:`s^2 (I - \tfrac1n 11^\top)` of ``ZeroSumNormal(s)``, and the mean
left out is a free direction the likelihood does not see (given a prior of its own,
:func:`_free_means`). A term is centred when its
effects are well identified by the data (:func:`centred_terms`; Papaspiliopoulos et
al. 2007).

It is the reference the blocked Gibbs sampler is tested against, and the peer it is
benchmarked against (nutpie, ``benchmarks/bench_collections.py``).

References
----------
Papaspiliopoulos, O., Roberts, G. O., Skold, M. (2007). A general framework for the
parametrization of hierarchical models. *Statistical Science* 22(1), 59-73.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import xarray as xr

from bayes_ir import validate
from bayes_ir.hierarchical.design import CrossedDesign, DesignPriors, Term
from bayes_ir.hierarchical.model import CENTRED_RATIO
from bayes_ir.hierarchical.sampling import cached_compile, nutpie_sample, pymc_nuts

__all__ = ["build_design_model", "centred_terms", "sample_design_nuts"]


def centred_terms(design: CrossedDesign, family: Any = None) -> dict[str, bool]:
    r"""Whether each random term is centred in the PyMC twin (see the module docstring).

    Centred when a level's noise variance :math:`v/n` (``n`` its mean number of cells) is
    below :data:`bayes_ir.hierarchical.model.CENTRED_RATIO` times the variance of the
    effects, both from moment estimates (the spread of the level means, less their noise,
    for the effects). :math:`v` is the mean residual variance of the moment estimates for
    the Gaussian model; for another family it is :math:`\bar y(1 - \bar y)`, the largest
    variance a score in [0, 1] with the mean score :math:`\bar y` can have (Bhatia and
    Davis 2000), that of a 0/1 outcome: with two systems the moment residuals of 0/1
    items, left after each item's mean, understate it by half or more, and items' effects
    that two outcomes barely inform would be centred into a funnel.

    References
    ----------
    Bhatia, R., Davis, C. (2000). A better bound on the variance. *The American
    Mathematical Monthly* 107(4), 353-357.
    """
    from bayes_ir.hierarchical.samplers.blocked_gibbs import moment_scales

    scales = moment_scales(design)
    n_e = design.residual.n_levels
    noise = float(np.mean(scales[:n_e] ** 2))
    if not _gaussian(family):
        mean = float(np.mean(design.y))
        noise = max(noise, mean * (1.0 - mean))
    unit = float(np.exp(np.mean(np.log(scales[:n_e]))))
    out = {}
    p = n_e
    for t in design.terms:
        if t.kind != "random":
            continue
        s = scales[p : p + t.n_scales] * (unit if t.standardized else 1.0)
        p += t.n_scales
        per_level = noise / t.cells_per_level().mean()
        out[t.name] = bool(per_level < CENTRED_RATIO * (float(np.mean(s**2)) - per_level))
    return out


def _set_means(x, term: Term):
    """Return each zero-sum set's mean of ``x``, every level's set and the sets' sizes.

    The means have one more entry than the sets, 0, the set of unconstrained levels.
    """
    import pytensor.tensor as pt

    sets = term.zero_sum
    n_sets = int(sets.max() + 1) if (sets >= 0).any() else 0
    idx = np.where(sets >= 0, sets, n_sets)
    sizes = np.bincount(idx, minlength=n_sets + 1).astype(float)
    means = pt.inc_subtensor(pt.zeros(n_sets + 1)[idx], x) / sizes
    return pt.set_subtensor(means[n_sets], 0.0), idx, sizes


def _zero_sum(x, term: Term):
    """``x`` less its mean over each zero-sum set of ``term`` (unconstrained levels kept)."""
    if not (term.zero_sum >= 0).any():
        return x
    means, idx, _ = _set_means(x, term)
    return x - means[idx]


def _free_means(raw, scale, term: Term) -> None:
    r"""Give the free mean of each zero-sum set of a centred term a prior without its scale.

    With :math:`x \sim N(0, s^2 I_n)`, :math:`x = e + \bar x 1` splits into the effects
    :math:`e \sim \mathrm{ZSN}(s)` and their set's mean :math:`\bar x \sim N(0, s^2/n)`,
    independent, and the likelihood sees :math:`e` only. Left so, :math:`\bar x` and
    :math:`s` form a funnel (a scale of two systems has one degree of freedom, and NUTS
    diverges in its neck). The potential
    :math:`\log N(\bar x; 0, 1/n) - \log N(\bar x; 0, s^2/n) = -\tfrac{n}{2}\bar x^2
    (1 - s^{-2}) + \log s` swaps that prior for :math:`N(0, 1/n)`: the model of
    :math:`(e, s)` is unchanged, and :math:`\bar x` no longer moves with :math:`s`. Sets
    whose levels have several scales are left as they are.
    """
    import pymc as pm
    import pytensor.tensor as pt

    sets = term.zero_sum
    n_sets = int(sets.max() + 1) if (sets >= 0).any() else 0
    group = np.full(n_sets, -1)
    for k in range(n_sets):
        g = np.unique(term.scale_group[sets == k])
        group[k] = g[0] if g.size == 1 else -1
    ok = np.flatnonzero(group >= 0)
    if ok.size == 0:
        return
    means, _, sizes = _set_means(raw, term)
    xbar, s, n = means[ok], scale[group[ok]], sizes[ok]
    pm.Potential(f"{term.dim}_free_mean", pt.sum(-0.5 * n * xbar**2 * (1.0 - s**-2) + pt.log(s)))


def _compile_key(
    design: CrossedDesign,
    priors: DesignPriors,
    centred: dict[str, bool],
    family: Any = None,
    data: bool = False,
) -> tuple:
    """Return everything the compiled graph of :func:`build_design_model` holds (its cache key).

    The scores, every term's cell indices, scale groups and zero-sum sets, the priors and
    the parameterisation are constants of the graph: as data containers (``pm.Data``)
    they made nutpie's compilation three to four times slower (model of runs, 20 topics
    x 3 systems x 3 runs: 45-75 s instead of 12-18 s), so a compiled twin is reused for
    the same design and priors only (a refit with other seeds, draws or chains).
    """
    y = np.zeros(design.y.shape) if data else design.y  # data containers: any scores
    arrays = [y, design.residual.index, priors.intercept_mu, priors.intercept_sd]
    arrays += [priors.residual_rate, *(priors.rates[t.name] for t in design.terms[1:])]
    arrays += [a for t in design.terms for a in (t.index, t.scale_group, t.zero_sum)]
    digest = hashlib.sha256()
    for arr in map(np.ascontiguousarray, arrays):
        digest.update(f"{arr.dtype}{arr.shape}".encode())
        digest.update(arr.tobytes())
    terms = tuple((t.name, t.standardized, centred.get(t.name, False)) for t in design.terms)
    likelihood = (getattr(family, "spec", "gaussian"), tuple(sorted(priors.own.items())))
    return ("design", digest.hexdigest(), terms, likelihood, data)


def _gaussian(family: Any) -> bool:
    return family is None or family.name == "gaussian"


def build_design_model(
    design: CrossedDesign,
    priors: DesignPriors,
    *,
    centred: dict[str, bool] | None = None,
    family: Any = None,
    data: bool = False,
):
    """Build (do not sample) the PyMC model of ``design``.

    Parameters
    ----------
    design, priors
        The design and its resolved priors.
    centred
        ``{term name: centred?}``; default :func:`centred_terms`.
    family
        ``None`` (the Gaussian model) or a family with
        :meth:`~bayes_ir.hierarchical.families.Family.design_likelihood`: the linear
        predictor is then on its link scale and the family declares its own
        parameters (per residual group) and the likelihood.
    data
        A family's scores as data containers
        (:meth:`~bayes_ir.hierarchical.families.Family.design_data`): one compiled model
        refitted to many datasets of the same cells (simulation-based calibration).

    Returns
    -------
    pymc.Model
        Free variables ``b0`` (dim: the intercept's levels; with a logit family and a
        rows term, ``b0_stretched`` and the deterministic ``b0``, :func:`_intercepts`),
        ``sigma`` (residual SDs; a family's own parameters instead), each random term's
        scale ``sigma_<term>`` and its effects through ``<term>_z`` (non-centred) or
        ``<term>_raw`` (centred, with the potential ``<term>_free_mean`` of
        :func:`_free_means`); deterministics ``<term>_effect`` (dim ``<term>``).
    """
    import pymc as pm

    centred = centred_terms(design, family) if centred is None else centred
    b0t = design.terms[0]
    coords: dict[str, Any] = {
        "b0_level": list(b0t.levels),
        "sigma_group": list(design.residual.levels),
    }
    for t in design.terms[1:]:
        coords[t.dim] = list(t.levels)
        coords[f"{t.scale_name}_group"] = list(t.scale_names)
    with pm.Model(coords=coords) as model:
        if _gaussian(family):
            sigma = pm.Exponential("sigma", lam=priors.residual_rate, dims="sigma_group")
        res = design.residual.index
        scales = {}
        mu = 0.0
        for t in design.terms[1:]:
            scale = pm.Exponential(
                t.scale_name, lam=priors.rates[t.name], dims=f"{t.scale_name}_group"
            )
            scales[t.name] = scale
            s = scale[t.scale_group]
            if centred.get(t.name, False):
                raw = pm.Normal(f"{t.dim}_raw", mu=0.0, sigma=s, dims=t.dim)
                effect = _zero_sum(raw, t)
                _free_means(raw, scale, t)
            else:
                z = pm.Normal(f"{t.dim}_z", mu=0.0, sigma=1.0, dims=t.dim)
                effect = s * _zero_sum(z, t)
            effect = pm.Deterministic(f"{t.dim}_effect", effect, dims=t.dim)
            term_mean = effect[t.index]
            mu = mu + (sigma[res] * term_mean if t.standardized else term_mean)
        mu = _intercepts(design, priors, family, scales)[b0t.index] + mu
        if _gaussian(family):
            pm.Normal("y", mu=mu, sigma=sigma[res], observed=design.y)
        else:
            family.design_likelihood(mu, design, dict(priors.own), data=data)
    return model


def _ridge_groups(design: CrossedDesign) -> tuple[str, np.ndarray] | None:
    """Return the rows term and its scale group at every intercept level (:func:`_intercepts`).

    ``None`` when the design has no rows term (:func:`~bayes_ir.hierarchical.samplers.
    blocked_gibbs.rows_term`) or an intercept level's cells span several of its scale groups.
    """
    from bayes_ir.hierarchical.samplers.blocked_gibbs import rows_term

    j = rows_term(design)
    if j is None:
        return None
    b0t, t = design.terms[0], design.terms[j]
    pairs = np.unique(np.c_[b0t.index, t.scale_group[t.index]], axis=0)
    if len(pairs) != b0t.n_levels or len(np.unique(pairs[:, 0])) != b0t.n_levels:
        return None
    group = np.empty(b0t.n_levels, dtype=int)
    group[pairs[:, 0]] = pairs[:, 1]
    return t.name, group


def _intercepts(design: CrossedDesign, priors: DesignPriors, family: Any, scales: dict):
    r"""Return the intercepts ``b0 ~ N(m, v^2)``, along a logit model's ridge if it has one.

    With a logit link and a rows term (topics within collections) of SD :math:`s_c`, the
    mean score of a collection is about :math:`\operatorname{logit}^{-1}(b_{0c}/k_c)`,
    :math:`k_c = \sqrt{1 + \pi s_c^2/8}` (the probit approximation of the logistic-normal
    integral; MacKay 1992), so the data pin :math:`b_{0c}/k_c` and
    leave :math:`b_{0c}` and :math:`s_c` on a curved ridge (two systems: each item's effect
    rests on two outcomes). NUTS crosses it when the model samples
    :math:`a_c = b_{0c}/k_c` instead, from its conditional prior
    :math:`a_c \mid s_c \sim N(m_c/k_c, (v_c/k_c)^2)`: then :math:`b_{0c} = a_c k_c`
    given :math:`s_c` is :math:`N(m_c, v_c^2)`, so the model (and its posterior) is the same,
    only its coordinates change. Other models (identity link, no rows term): ``b0``
    itself.

    References
    ----------
    MacKay, D. J. C. (1992). The evidence framework applied to classification networks.
    *Neural Computation* 4(5), 720-736.
    """
    import pymc as pm

    m, v = priors.intercept_mu, priors.intercept_sd
    ridge = None if getattr(family, "link", "identity") != "logit" else _ridge_groups(design)
    if ridge is None:
        return pm.Normal("b0", mu=m, sigma=v, dims="b0_level")
    import pytensor.tensor as pt

    rows, group = ridge
    k = pt.sqrt(1.0 + (np.pi / 8.0) * pt.sqr(scales[rows][group]))
    a = pm.Normal("b0_stretched", mu=m / k, sigma=v / k, dims="b0_level")
    return pm.Deterministic("b0", a * k, dims="b0_level")


def sample_design_nuts(
    design: CrossedDesign,
    priors: DesignPriors,
    *,
    chains: int,
    draws: int,
    tune: int,
    seed: int,
    target_accept: float = 0.8,
    sampler: str = "nutpie",
    centred: dict[str, bool] | None = None,
    family: Any = None,
    data: bool = False,
) -> tuple[dict[str, np.ndarray], xr.Dataset | None]:
    """Sample the PyMC twin of ``design`` with NUTS.

    Parameters
    ----------
    design, priors
        The design and its resolved priors.
    chains, draws, tune, seed, target_accept
        NUTS settings (the same seed, the same draws).
    sampler
        ``"nutpie"`` (the model compiled with numba) or ``"pymc"``.
    centred, family, data
        See :func:`build_design_model` (``data``: nutpie only; the compiled model is
        kept for the next dataset of the same cells).

    Returns
    -------
    posterior, sample_stats
        Draws in the layout of :func:`~bayes_ir.hierarchical.samplers.blocked_gibbs.
        sample_design_gibbs` (``{term name: (chains, draws, levels)}`` and the
        scales) and NUTS's sample statistics.
    """
    validate.choice("sampler", sampler, ("nutpie", "pymc"))
    centred = centred_terms(design, family) if centred is None else centred
    if sampler == "nutpie":
        compiled, _ = cached_compile(
            _compile_key(design, priors, centred, family, data),
            lambda: build_design_model(design, priors, centred=centred, family=family, data=data),
            family.design_data(design) if data else {},
        )
        trace = nutpie_sample(
            compiled,
            label="sampling (NUTS)",
            draws=draws,
            tune=tune,
            chains=chains,
            seed=seed,
            target_accept=target_accept,
        )
    else:
        model = build_design_model(design, priors, centred=centred, family=family)
        trace = pymc_nuts(model, draws=draws, tune=tune, chains=chains, seed=seed,
                          target_accept=target_accept)  # fmt: skip
    post = trace["posterior"].to_dataset()
    stats = trace["sample_stats"].to_dataset() if "sample_stats" in trace.children else None

    def arr(name: str) -> np.ndarray:
        return np.asarray(post[name].transpose("chain", "draw", ...).values, dtype=float)

    own = ("sigma",) if _gaussian(family) else family.design_own
    out = {"b0": arr("b0"), **{name: arr(name) for name in own}}
    for t in design.terms[1:]:
        out[t.name] = arr(f"{t.dim}_effect")
        out[t.scale_name] = arr(t.scale_name)
    if stats is not None:
        stats.attrs = {}
    return out, stats
