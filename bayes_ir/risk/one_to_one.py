r"""One-to-one Bayesian risk: Gaussian and skew-normal models of risk-adjusted differences.

One challenger against the champion: the per-topic risk-adjusted differences
:math:`\delta^{(r)}_t` are modelled as draws from a Gaussian or a skew-normal
distribution whose *mean* is the Bayesian counterpart of URisk. Losses weighted by
:math:`r > 1` make the differences left-skewed, which the Gaussian cannot follow;
the skew-normal can (Benham et al. 2020, Section 3 and Figure 6).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import ConvergenceError, ConvergenceWarning, MeasureError
from bayes_ir.risk.adjusted import check_r, resolve_pair
from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

__all__ = ["OneToOneResult", "build_one_to_one_model", "one_to_one"]

LIKELIHOODS = ("gaussian", "skew_normal")
PARAMETERS = ("mu", "sigma", "alpha")
#: Columns of :meth:`OneToOneResult.to_frame`.
COLUMNS = (
    "challenger",
    "champion",
    "likelihood",
    "r",
    "parameter",
    "mean",
    "sd",
    "ci_lower",
    "ci_upper",
    "p_negative",
    "rhat",
    "ess_bulk",
    "ess_tail",
    "passed",
)


def _check_likelihoods(likelihood: str | Iterable[str]) -> tuple[str, ...]:
    names = (likelihood,) if isinstance(likelihood, str) else tuple(likelihood)
    out = []
    for name in names:
        key = str(name).lower().replace("-", "_").replace("skewnormal", "skew_normal")
        key = "gaussian" if key == "normal" else key
        if key not in LIKELIHOODS:
            raise MeasureError(f"unknown likelihood {name!r}: choose gaussian or skew_normal")
        out.append(key)
    if not out:
        raise MeasureError("give at least one likelihood")
    return tuple(dict.fromkeys(out))


def _prior_scale(d: np.ndarray) -> float:
    """Scale of the weakly informative priors: 2.5 SD of the data (rstanarm's autoscale)."""
    s = float(np.std(d, ddof=1))
    return 2.5 * (s if s > 0 else 1.0)


def build_one_to_one_model(differences: np.ndarray, *, likelihood: str = "gaussian") -> Any:
    r"""PyMC model of per-topic risk-adjusted differences (one challenger vs the champion).

    Parameters
    ----------
    differences
        The :math:`n` risk-adjusted differences :math:`\delta^{(r)}_t`.
    likelihood
        ``"gaussian"`` or ``"skew_normal"``.

    Returns
    -------
    pymc.Model
        Variables ``mu`` (mean), ``sigma`` (SD), ``alpha`` (skew-normal shape) and,
        for the skew-normal, the deterministic location ``xi`` and scale ``omega``;
        the data containers ``d`` (the differences), ``d_median`` and ``prior_scale``
        (swapped together by ``compiled.with_data`` between loss weights).

    Notes
    -----
    With :math:`s_d` the SD of the differences and :math:`m_d` their median,

    .. math::

        \mu \sim t_3(m_d, 2.5 s_d), \quad \sigma \sim t^+_3(0, 2.5 s_d), \quad
        \alpha \sim N(0, 4),

        \delta^{(r)}_t \sim N(\mu, \sigma) \quad\text{or}\quad
        \delta^{(r)}_t \sim SN(\xi, \omega, \alpha),\ (\xi, \omega) =
        \mathrm{loc\_scale}(\mu, \sigma, \alpha),

    the skew-normal in brms' mean/SD parameterisation
    (:func:`~bayes_ir.hierarchical.skewnormal.skewnormal_location_scale`), so ``mu`` is the
    mean under both likelihoods; the priors follow brms' defaults (Student t with 3 df, and
    :math:`N(0, 4)` on the shape) with rstanarm-style scaling.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033

    Buerkner, P.-C. (2017). brms: An R package for Bayesian multilevel models using
    Stan. *Journal of Statistical Software* 80(1), 1-28. doi:10.18637/jss.v080.i01
    """
    import pymc as pm

    from bayes_ir.hierarchical.skewnormal import skewnormal_location_scale

    (likelihood,) = _check_likelihoods(likelihood)
    d = np.asarray(differences, dtype=float)
    with pm.Model(coords={"topic": np.arange(d.size)}) as model:
        data = pm.Data("d", d, dims="topic")
        loc = pm.Data("d_median", float(np.median(d)))
        scale = pm.Data("prior_scale", _prior_scale(d))
        mu = pm.StudentT("mu", nu=3, mu=loc, sigma=scale)
        sigma = pm.HalfStudentT("sigma", nu=3, sigma=scale)
        if likelihood == "gaussian":
            pm.Normal("obs", mu=mu, sigma=sigma, observed=data, dims="topic")
        else:
            alpha = pm.Normal("alpha", mu=0.0, sigma=4.0)
            xi, omega = skewnormal_location_scale(mu, sigma, alpha)
            pm.Deterministic("xi", xi)
            pm.Deterministic("omega", omega)
            pm.SkewNormal("obs", mu=xi, sigma=omega, alpha=alpha, observed=data, dims="topic")
    return model


def _data_of(d: np.ndarray) -> dict[str, Any]:
    """Values of the model's data containers for one vector of differences."""
    return {"d": d, "d_median": float(np.median(d)), "prior_scale": _prior_scale(d)}


def _fit_likelihood(
    likelihood: str,
    *,
    differences: dict[float, np.ndarray],
    chains: int,
    draws: int,
    tune: int,
    seed: int,
    target_accept: float,
) -> list[xr.Dataset]:
    """Sample one likelihood for every r (one sweep item).

    The model is compiled once; only its data containers change between loss weights.
    """
    levels = list(differences)
    model = build_one_to_one_model(differences[levels[0]], likelihood=likelihood)
    offset = LIKELIHOODS.index(likelihood) * 1000
    out = []
    try:
        import nutpie
    except ImportError:  # pragma: no cover - nutpie is installed with PyMC here
        nutpie = None
    compiled = nutpie.compile_pymc_model(model) if nutpie is not None else None
    # NUTS settings shared by nutpie and the PyMC fallback (one core per fit)
    settings = dict(draws=draws, tune=tune, chains=chains, cores=1, target_accept=target_accept)
    for k, r in enumerate(levels):
        run_seed = seed + offset + k
        if compiled is not None:
            trace = nutpie.sample(
                compiled.with_data(**_data_of(differences[r])),
                seed=run_seed,
                progress_bar=False,
                **settings,
            )
        else:  # pragma: no cover
            import pymc as pm

            with model:
                pm.set_data(_data_of(differences[r]))
                trace = pm.sample(
                    random_seed=run_seed,
                    progressbar=False,
                    quiet=True,
                    compute_convergence_checks=False,
                    **settings,
                )
        post = trace["posterior"].to_dataset()
        keep = [v for v in PARAMETERS if v in post]
        ds = post[keep].load()
        ds.attrs = {}
        out.append(ds)
    return out


def _diagnose(post: xr.Dataset) -> pd.DataFrame:
    from bayes_ir.hierarchical import draw_diagnostics

    rows = {}
    for name in post.data_vars:
        stats = draw_diagnostics(post[name].transpose("chain", "draw", ...)).iloc[0]
        rows[name] = {k: float(stats[k]) for k in ("rhat", "ess_bulk", "ess_tail")}
    out = pd.DataFrame.from_dict(rows, orient="index")
    rhat_ok = out["rhat"].isna() | (out["rhat"] <= defaults.RHAT_MAX)
    out["passed"] = rhat_ok & (out[["ess_bulk", "ess_tail"]].min(axis=1) >= defaults.ESS_MIN)
    return out


@dataclass(frozen=True)
class OneToOneResult:
    """Posteriors of the one-to-one risk models, one per (likelihood, r).

    Attributes
    ----------
    champion, challenger
        The pair compared.
    r_levels
        Loss weights fitted.
    likelihoods
        ``"gaussian"`` and/or ``"skew_normal"``.
    differences
        Observed risk-adjusted differences, dims ``("r", "topic")``.
    posterior
        Draws of ``mu``, ``sigma``, ``alpha`` (NaN for the Gaussian), dims
        ``("likelihood", "r", "chain", "draw")``.
    diagnostics
        R-hat, bulk and tail ESS and pass/fail per (likelihood, r, parameter).
    ci_prob
        Default interval probability of :meth:`conf_int` and :meth:`to_frame`.
    collection, measure
        The block the scores came from.
    """

    champion: str
    challenger: str
    r_levels: tuple[float, ...]
    likelihoods: tuple[str, ...]
    differences: xr.DataArray
    posterior: xr.Dataset
    diagnostics: pd.DataFrame
    ci_prob: float = defaults.CI_PROB
    collection: str = ""
    measure: str = ""
    seed: int = defaults.SEED
    notes: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        """Whether every fitted model passed R-hat and ESS checks."""
        return bool(self.diagnostics["passed"].all())

    def draws(self, likelihood: str, r: float, parameter: str = "mu") -> np.ndarray:
        """Flattened posterior draws of one parameter."""
        da = self.posterior[parameter].sel(likelihood=likelihood, r=float(r))
        return da.to_numpy().ravel()

    def to_frame(self, ci_prob: float | None = None) -> pd.DataFrame:
        """One row per (likelihood, r, parameter); columns :data:`COLUMNS`.

        ``p_negative`` is the posterior probability that the parameter is below 0
        (for ``mu``: that the challenger loses to the champion after risk adjustment).
        """
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        q = [(1 - p) / 2, (1 + p) / 2]
        rows = []
        for lik in self.likelihoods:
            for r in self.r_levels:
                for par in PARAMETERS:
                    if par == "alpha" and lik == "gaussian":
                        continue
                    x = self.draws(lik, r, par)
                    lo, hi = np.quantile(x, q)
                    diag = self.diagnostics.loc[(lik, r, par)]
                    rows.append(
                        (self.challenger, self.champion, lik, r, par, x.mean(), x.std(ddof=1),
                         lo, hi, float((x < 0).mean()), diag["rhat"], diag["ess_bulk"],
                         diag["ess_tail"], bool(diag["passed"]))
                    )  # fmt: skip
        return pd.DataFrame(rows, columns=list(COLUMNS))

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def conf_int(self, ci_prob: float | None = None, *, parameter: str = "mu") -> pd.DataFrame:
        """Equal-tailed credible intervals of one parameter.

        Columns ``likelihood, r, mean, ci_lower, ci_upper``.
        """
        frame = self.to_frame(ci_prob)
        frame = frame[frame["parameter"] == parameter]
        return frame[["likelihood", "r", "mean", "ci_lower", "ci_upper"]].reset_index(drop=True)

    def summary(self) -> str:
        """Header, diagnostics verdict and the posterior of the mean per (likelihood, r)."""
        n = self.differences.sizes["topic"]
        lines = [
            f"One-to-one Bayesian risk: {self.challenger!r} vs champion {self.champion!r}; "
            f"{n} topics; collection {self.collection!r}, measure {self.measure!r}",
            f"mu = posterior mean of the risk-adjusted difference (URisk's Bayesian "
            f"counterpart; positive = challenger better); {self.ci_prob:.0%} intervals",
        ]
        if self.passed:
            lines.append(
                f"Diagnostics: PASS (R-hat <= {defaults.RHAT_MAX:g}, ESS >= {defaults.ESS_MIN:g})"
            )
        else:
            bad = self.diagnostics[~self.diagnostics["passed"]]
            lines.append(
                "!! DIAGNOSTICS FAILED for "
                + ", ".join(map(str, bad.index))
                + ": refit with more draws"
            )
        lines.append(
            f"{'likelihood':<12} {'r':>4} {'mean':>9} {'lower':>9} {'upper':>9} {'P(<0)':>7}"
        )
        frame = self.to_frame()
        for row in frame[frame["parameter"] == "mu"].itertuples():
            lines.append(
                f"{row.likelihood:<12} {row.r:>4g} {row.mean:>9.4f} {row.ci_lower:>9.4f} "
                f"{row.ci_upper:>9.4f} {row.p_negative:>7.3f}"
            )
        if "skew_normal" in self.likelihoods:
            alpha = frame[frame["parameter"] == "alpha"]
            lines.append(
                "skew-normal shape alpha (posterior mean): "
                + ", ".join(f"r={a.r:g}: {a.mean:.2f}" for a in alpha.itertuples())
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def plot(self, **kwargs: Any) -> Any:
        """Posterior densities of the mean per r, likelihoods side by side (Figure 6)."""
        from bayes_ir.plots.risk import plot_one_to_one

        return plot_one_to_one(self, **kwargs)


def one_to_one(
    table: ScoreTable,
    *,
    challenger: str,
    champion: str | None = None,
    r_levels: Sequence[float] = defaults.RISK_LEVELS,
    likelihood: str | Iterable[str] = LIKELIHOODS,
    ci_prob: float | None = None,
    chains: int = 2,
    draws: int = 1000,
    tune: int = 1000,
    target_accept: float = defaults.TARGET_ACCEPT,
    seed: int | None = None,
    strict: bool = False,
    executor: Any = None,
    collection: str | None = None,
    measure: str | None = None,
) -> OneToOneResult:
    r"""Fit the one-to-one risk models of one challenger for several loss weights.

    Parameters
    ----------
    table
        Complete per-topic scores.
    challenger
        The system compared with the champion.
    champion
        Baseline; default: the table's champion.
    r_levels
        Loss weights (default :data:`bayes_ir.defaults.RISK_LEVELS`, 1, 2, 5, 10).
    likelihood
        ``"gaussian"``, ``"skew_normal"`` or both (default).
    ci_prob
        Interval probability of the summaries.
    chains, draws, tune, target_accept
        NUTS settings (PyMC's sampler, one core per fit).
    seed
        Seed; each (likelihood, r) fit gets its own derived seed.
    strict
        Raise :class:`ConvergenceError` instead of warning when diagnostics fail.
    executor
        Passed to :func:`bayes_ir.sweep.sweep`; the sweep items are the likelihoods,
        each compiled once and sampled for every r (only the data change).
    collection, measure
        The block to use when the table holds several.

    Returns
    -------
    OneToOneResult

    Notes
    -----
    See :func:`build_one_to_one_model` for the model. Sampled with nutpie's NUTS.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *Proceedings of SIGIR 2020*,
    339-348. doi:10.1145/3397271.3401033
    """
    likelihoods = _check_likelihoods(likelihood)
    levels = tuple(dict.fromkeys(check_r(r) for r in r_levels))
    if not levels:
        raise MeasureError("give at least one loss weight r")
    p = defaults.ci_prob(ci_prob)
    seed = validate.seed(seed)
    chains = validate.positive_int("chains", chains, maximum=defaults.MAX_CHAINS)
    draws = validate.positive_int("draws", draws)
    tune = validate.positive_int("tune", tune, minimum=0)
    target_accept = validate.probability("target_accept", target_accept)
    strict = validate.flag("strict", strict)
    pair = resolve_pair(
        table,
        champion=champion,
        challengers=[challenger],
        collection=collection,
        measure=measure,
        method="one-to-one risk",
    )
    # mu, sigma (and alpha) per likelihood and r; all are kept until the result is built
    validate.memory(
        "the one-to-one posterior draws",
        {"chains": chains, "draws": draws, "parameters": 3 * len(levels) * len(likelihoods)},
    )
    diffs = {r: pair.adjusted(r)[:, 0] for r in levels}
    func = functools.partial(
        _fit_likelihood,
        differences=diffs,
        chains=chains,
        draws=draws,
        tune=tune,
        seed=seed,
        target_accept=target_accept,
    )
    per_lik = sweep(func, likelihoods, executor=executor, label="one-to-one risk fits")
    posts, diag_rows = [], []
    for lik, fits in zip(likelihoods, per_lik, strict=True):
        for r, post in zip(levels, fits, strict=True):
            if "alpha" not in post:
                post = post.assign(alpha=xr.full_like(post["mu"], np.nan))
            posts.append(post.expand_dims(likelihood=[lik], r=[r]))
            diag = _diagnose(post.drop_vars("alpha") if lik == "gaussian" else post)
            diag.index = pd.MultiIndex.from_tuples([(lik, r, v) for v in diag.index])
            diag_rows.append(diag)
    # Datasets in, so a Dataset out (xarray types the result as Dataset | DataArray)
    posterior = cast(xr.Dataset, xr.combine_by_coords(posts, combine_attrs="drop"))
    diagnostics = pd.concat(diag_rows)
    diagnostics.index.names = ["likelihood", "r", "parameter"]
    topics = pair.matrix["topic"].to_numpy()
    result = OneToOneResult(
        champion=pair.champion,
        challenger=challenger,
        r_levels=levels,
        likelihoods=likelihoods,
        differences=xr.DataArray(
            np.stack([diffs[r] for r in levels]),
            dims=("r", "topic"),
            coords={"r": list(levels), "topic": topics},
            name="adjusted_difference",
        ),
        posterior=posterior,
        diagnostics=diagnostics,
        ci_prob=p,
        collection=pair.collection,
        measure=pair.measure,
        seed=seed,
    )
    if not result.passed:
        bad = ", ".join(map(str, diagnostics.index[~diagnostics["passed"]]))
        msg = (
            f"one-to-one risk models of {challenger!r} failed R-hat/ESS checks for {bad}; "
            "refit with more draws (draws=..., tune=...)"
        )
        if strict:
            raise ConvergenceError(msg)
        warnings.warn(msg, ConvergenceWarning, stacklevel=2)
    return result
