r"""How much do artifact runs sharpen the comparison? Refit with the top m artifacts.

Artifact runs (for example past TREC submissions) carry no decision of their own:
they inform the population distribution of systems, which shrinks the system
effects and narrows the intervals of the champion and the challengers. The paper's
Figure 5 shows the intervals as the number of artifacts grows; this module refits
the model with the best ``m`` artifacts (by mean score) for each ``m`` and reports
every challenger-minus-champion interval and the gap between the intervals of the
two systems' means (or effects, see below).

Which system effects?
---------------------
The package's model has zero-sum system effects :math:`c_s` (:math:`\sum_s c_s = 0`)
and an intercept :math:`b_0` equal to the average of the systems in the model.
rstanarm's ``stan_glmer(score ~ (1|topic) + (1|system))``, which the paper used, has
i.i.d. effects :math:`b_s \sim N(0, \chi^2)` around an intercept :math:`\alpha`; its
Figure 5 plots the :math:`b_s` (deviations from the intercept, with its uncertainty).
The two models are the same up to the prior of the intercept: writing
:math:`b_s = c_s + \bar b` splits i.i.d. normal effects into a zero-sum vector and an
independent mean :math:`\bar b \sim N(0, \chi^2/S)` (:math:`S` systems in the fit),
and :math:`b_0 = \alpha + \bar a + \bar b`. With a flat prior on :math:`\alpha` the
data say nothing about how :math:`b_0` splits into :math:`\alpha`, :math:`\bar a` and
:math:`\bar b`, so given the rest of the posterior :math:`\bar b` keeps its prior:

.. math:: b_s = c_s + \frac{\chi}{\sqrt S}\, z, \qquad z \sim N(0, 1)
          \text{ independently per draw.}

``effects="intercept_deviation"`` reports these draws (exact for a flat intercept
prior; the package's :math:`N(\bar y, (2.5 s_y)^2)` prior on :math:`b_0` changes them
by a relative :math:`O(\chi^2 / (S\,b_{0,sd}^2))`, about :math:`10^{-5}` on rb04);
``effects="zero_sum"`` the :math:`c_s`; ``effects="mean"`` (default) the system means
:math:`b_0 + c_s`. Differences between systems are the same in all three.

References
----------
Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
doi:10.1145/3397271.3401033
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import DataWarning, InsufficientDataError, OptionError
from bayes_ir.hierarchical.contrasts import (
    SAMPLE_DIMS,
    _draw_diagnostics,
    _gate,
    _Gated,
    _posterior,
    _text_table,
    interval_stats,
    system_draws,
    system_mean_draws,
)
from bayes_ir.hierarchical.diagnostics import GateStatus
from bayes_ir.hierarchical.families import get_family
from bayes_ir.hierarchical.families.logit import UNPOOLED_SD
from bayes_ir.hierarchical.model import design_of, resolve_pooling
from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

__all__ = ["EFFECTS", "SWEEP_COLUMNS", "ArtifactSweep", "artifact_sweep", "system_effect_draws"]

Effects = Literal["mean", "zero_sum", "intercept_deviation"]
#: Parametrisations of the system effects (see the module notes).
EFFECTS: tuple[str, ...] = ("mean", "zero_sum", "intercept_deviation")

#: Default numbers of artifact runs (the paper's Figure 5 uses up to 40).
M_VALUES: tuple[int, ...] = (1, 5, 10, 20, 40)

#: Columns of :meth:`ArtifactSweep.to_frame`.
SWEEP_COLUMNS = (
    "m",
    "challenger",
    "champion",
    "mean",
    "ci_lower",
    "ci_upper",
    "width",
    "p_better",
    "gap",
    "diagnostics_passed",
)
#: Columns of :meth:`ArtifactSweep.system_frame`.
SYSTEM_COLUMNS = ("m", "system", "role", "mean", "ci_lower", "ci_upper")


def _check_effects(effects: str) -> str:
    return validate.choice("effects", effects, EFFECTS)


def _intercept_deviation(
    zero_sum: np.ndarray, sigma_system: np.ndarray, n_systems: int, rng: np.random.Generator
) -> np.ndarray:
    r"""Return rstanarm's effects :math:`b_s = c_s + \chi z/\sqrt S` from zero-sum draws.

    ``zero_sum`` has dims (chain, draw, system), ``sigma_system`` (chain, draw); one
    standard normal :math:`z` per draw, shared by the systems of that draw.
    """
    shift = sigma_system / np.sqrt(n_systems) * rng.standard_normal(sigma_system.shape)
    return zero_sum + shift[..., None]


def _system_scale(fit: Any) -> np.ndarray:
    """Return draws (chain, draw) of the scale of the system effects' prior.

    ``sigma_system``, or the fixed :data:`~bayes_ir.hierarchical.families.logit.UNPOOLED_SD`
    of unpooled systems (``pooling="none"``), whose zero-sum effects are the centred i.i.d.
    N(0, UNPOOLED_SD^2).
    """
    post = _posterior(fit)
    if "sigma_system" in post:
        return np.asarray(post["sigma_system"].values, dtype=float)
    return np.full((post.sizes["chain"], post.sizes["draw"]), UNPOOLED_SD)


def system_effect_draws(
    fit: Any, *, effects: Effects = "zero_sum", seed: int | None = None
) -> xr.DataArray:
    r"""Posterior draws of every system's effect in one of three parametrisations.

    Parameters
    ----------
    fit
        A hierarchical fit (:func:`bayes_ir.hierarchical.fit`).
    effects
        ``"zero_sum"`` (default): the model's :math:`c_s`, summing to zero over the
        systems of the fit; ``"intercept_deviation"``: rstanarm's :math:`b_s`, i.i.d.
        deviations from the intercept (the paper's Figure 5); ``"mean"``: the system
        means :math:`b_0 + c_s`.
    seed
        Seed of the draws of :math:`\bar b` (``"intercept_deviation"`` only; default
        :data:`bayes_ir.defaults.SEED`).

    Returns
    -------
    xarray.DataArray
        Dims ``(chain, draw, system)`` with the ``role`` coordinate.

    Notes
    -----
    .. math:: b_s = c_s + \frac{\chi}{\sqrt S} z,\quad z \sim N(0, 1),

    with :math:`\chi` the posterior draw of ``sigma_system`` (the fixed prior scale of
    unpooled systems, ``pooling="none"``) and :math:`S` the number of systems in the fit
    (see the module notes for why this is rstanarm's posterior).

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348 (Figure 5).
    """
    _check_effects(effects)
    if effects == "mean":
        return system_mean_draws(fit)
    c = system_draws(fit)
    if effects == "zero_sum":
        return c
    sigma = _system_scale(fit)
    rng = np.random.default_rng(defaults.SEED if seed is None else seed)
    values = _intercept_deviation(np.asarray(c.values, dtype=float), sigma, c.sizes["system"], rng)
    return c.copy(data=values)


@dataclass(frozen=True)
class _Point:
    """What one refit contributes: draws of the differences and of the system effects."""

    m: int
    differences: xr.DataArray  # (chain, draw, challenger)
    means: xr.DataArray  # (chain, draw, system), champion and challengers
    gate: GateStatus
    zero_sum: xr.DataArray  # (chain, draw, system): c_s of the champion and challengers
    shift_sd: np.ndarray  # (chain, draw): sigma_system / sqrt(systems in the fit)

    def effect_draws(self, effects: str, seed: int) -> xr.DataArray:
        """Draws of the champion's and challengers' effects (see :func:`system_effect_draws`)."""
        if effects == "mean":
            return self.means
        if effects == "zero_sum":
            return self.zero_sum
        rng = np.random.default_rng([seed, self.m])
        values = _intercept_deviation(np.asarray(self.zero_sum.values), self.shift_sd, 1, rng)
        return self.zero_sum.copy(data=values)


def _fit_point(m: int, *, table: ScoreTable, fit_options: dict[str, Any]) -> _Point:
    """Fit with the best ``m`` artifacts and keep only the draws the sweep reports."""
    from bayes_ir.hierarchical import fit as hierarchical_fit

    keep = [table.champion, *table.challengers, *table.artifacts[:m]]
    sub = table.select(systems=keep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the gate below records failures per m
        result = hierarchical_fit(sub, **fit_options)
    reported = [table.champion, *table.challengers]
    means = system_mean_draws(result).sel(system=reported)
    diff = means.sel(system=list(table.challengers)) - means.sel(system=table.champion)
    diff = diff.drop_vars("role", errors="ignore").rename(system="challenger")
    gate = _gate(result, _draw_diagnostics(diff, "challenger"), "challenger - champion")
    c = system_draws(result)
    sigma = _system_scale(result)
    return _Point(m, diff, means, gate, c.sel(system=reported), sigma / np.sqrt(c.sizes["system"]))


@dataclass(frozen=True)
class ArtifactSweep(_Gated):
    """Challenger-vs-champion intervals as the number of artifact runs grows.

    Attributes
    ----------
    m_values
        Numbers of artifacts actually used (capped at the number available).
    champion, challengers
        The systems compared.
    points
        Draws of each refit (differences and system means), in ``m_values`` order.
    ci_prob
        Interval probability.
    gate
        Passed only when every refit passed its diagnostics.
    header
        First line of the summary.
    seed
        Seed of the refits, also used for the draws of ``effects="intercept_deviation"``.
    collection, measure
        The data of the refits.
    """

    m_values: tuple[int, ...]
    champion: str
    challengers: tuple[str, ...]
    points: tuple[_Point, ...]
    ci_prob: float
    gate: GateStatus
    header: str
    seed: int = defaults.SEED
    collection: str = ""
    measure: str = ""

    def system_frame(
        self, ci_prob: float | None = None, *, effects: Effects = "mean"
    ) -> pd.DataFrame:
        """Intervals of the champion's and challengers' effects per m: :data:`SYSTEM_COLUMNS`.

        ``effects`` picks the parametrisation: ``"mean"`` (default) the system means
        :math:`b_0 + c_s`, ``"zero_sum"`` the model's :math:`c_s`,
        ``"intercept_deviation"`` rstanarm's :math:`b_s` (the paper's Figure 5; see
        the module notes). The columns ``mean, ci_lower, ci_upper`` hold that quantity.
        """
        _check_effects(effects)
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        rows = []
        for point in self.points:
            draws = point.effect_draws(effects, self.seed)
            stats = interval_stats(draws, "system", p, False)
            stats = stats.rename_axis("system").reset_index()
            stats["role"] = [str(r) for r in draws["role"].values]
            stats["m"] = point.m
            rows.append(stats)
        return pd.concat(rows, ignore_index=True)[list(SYSTEM_COLUMNS)]

    def to_frame(self, ci_prob: float | None = None, *, effects: Effects = "mean") -> pd.DataFrame:
        """One row per (m, challenger); ``gap`` on the ``effects`` of :meth:`system_frame`.

        Returns
        -------
        pandas.DataFrame
            With these columns:

            m
                Number of artifact runs in the fit.
            challenger, champion
                The contrast ``challenger - champion``.
            mean, ci_lower, ci_upper, width
                Posterior mean, equal-tailed interval and its width.
            p_better
                P(challenger > champion).
            gap
                Lower limit of the challenger's mean (or effect, per ``effects``) minus the
                upper limit of the champion's: positive when the two intervals do not
                overlap (the paper's criterion, on ``effects="intercept_deviation"``).
            diagnostics_passed
                Whether that refit passed the diagnostics gate.
        """
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        systems = self.system_frame(p, effects=effects).set_index(["m", "system"])
        rows = []
        for point in self.points:
            stats = interval_stats(point.differences, "challenger", p, False)
            flat = point.differences.stack(sample=SAMPLE_DIMS).transpose("challenger", "sample")
            champ_upper = systems.loc[(point.m, self.champion), "ci_upper"]
            frame = pd.DataFrame(
                {
                    "m": point.m,
                    "challenger": list(self.challengers),
                    "champion": self.champion,
                    "mean": stats["mean"].to_numpy(),
                    "ci_lower": stats["ci_lower"].to_numpy(),
                    "ci_upper": stats["ci_upper"].to_numpy(),
                    "width": (stats["ci_upper"] - stats["ci_lower"]).to_numpy(),
                    "p_better": (flat.values > 0).mean(axis=1),
                    "gap": [
                        systems.loc[(point.m, c), "ci_lower"] - champ_upper
                        for c in self.challengers
                    ],
                    "diagnostics_passed": point.gate.passed,
                }
            )
            rows.append(frame)
        return pd.concat(rows, ignore_index=True)[list(SWEEP_COLUMNS)]

    def conf_int(self, ci_prob: float | None = None) -> pd.DataFrame:
        """Columns ``m, challenger, estimate, ci_lower, ci_upper``."""
        frame = self.to_frame(ci_prob)
        out = frame[["m", "challenger", "mean", "ci_lower", "ci_upper"]]
        return out.rename(columns={"mean": "estimate"})

    def summary(self) -> str:
        """Header, diagnostics, then the interval of each contrast for each m."""
        frame = self.to_frame().drop(columns=["champion"])
        frame["diagnostics_passed"] = frame["diagnostics_passed"].map({True: "PASS", False: "FAIL"})
        frame = frame.rename(columns={"diagnostics_passed": "diagnostics"})
        text = _text_table(
            frame,
            {"mean": 4, "ci_lower": 4, "ci_upper": 4, "width": 4, "p_better": 3, "gap": 4},
        )
        return "\n".join(
            [
                self.header,
                self.gate.banner(),
                "",
                f"Challengers minus {self.champion!r} with the top m artifact runs "
                f"({100 * self.ci_prob:g}% intervals; gap > 0: the intervals of the means "
                "do not overlap):",
                text,
            ]
        )

    def plot(self, **kwargs: Any) -> Any:
        """Intervals against m (the paper's Figure 5 with ``effects="intercept_deviation"``)."""
        from bayes_ir.plots.hierarchical import plot_artifact_sweep

        return plot_artifact_sweep(self, **kwargs)


def check_sweep_pooling(m_values: Sequence[int], pooling: str) -> None:
    """Refuse, before any fit, a sweep whose fits ``pooling="artifacts"`` cannot make.

    With ``pooling="artifacts"`` the artifact runs alone inform ``sigma_system``
    (:func:`bayes_ir.hierarchical.fit`), so every fit of the sweep needs at least 2.
    """
    if pooling == "artifacts" and len(m_values) and min(m_values) < 2:
        raise OptionError(
            f"pooling='artifacts' needs at least 2 artifact runs in every fit of the sweep: "
            f"m_values {list(m_values)} include {min(m_values)}; start the sweep at m = 2"
        )


def artifact_sweep(
    table: ScoreTable,
    *,
    m_values: Sequence[int] = M_VALUES,
    ci_prob: float | None = None,
    seed: int | None = None,
    executor: Executor | Any | None = None,
    max_workers: int | None = None,
    **fit_options: Any,
) -> ArtifactSweep:
    r"""Refit the hierarchical model with the best ``m`` artifact runs, for each ``m``.

    Parameters
    ----------
    table
        A score table with roles (champion, challengers, artifacts) and one collection
        and measure; the artifacts are ranked by mean score.
    m_values
        Numbers of artifacts to use (values above the number available are capped, and
        duplicates after capping dropped, with a :class:`~bayes_ir.errors.DataWarning`).
    ci_prob
        Interval probability (default :data:`bayes_ir.defaults.CI_PROB`).
    seed
        Seed passed to every refit (default :data:`bayes_ir.defaults.SEED`).
    executor, max_workers
        Where the refits run (see :func:`bayes_ir.sweep.sweep`).
    **fit_options
        Passed to :func:`bayes_ir.hierarchical.fit` (``likelihood``, ``chains``,
        ``draws``, ``tune``, ...).

    Returns
    -------
    ArtifactSweep

    Raises
    ------
    InsufficientDataError
        No challenger, or an empty ``m_values``.

    Notes
    -----
    For each :math:`m` the model
    :math:`y_{ts} = \beta_0 + a_t + c_s + \varepsilon_{ts}` is fitted on the champion,
    the challengers and the :math:`m` artifacts with the highest mean score, and
    :math:`d_c = c_c - c_{\text{champion}}` is summarised as in
    :func:`~bayes_ir.hierarchical.contrasts.compare`. The gap is
    :math:`q_{(1-p)/2}(\beta_0 + c_c) - q_{(1+p)/2}(\beta_0 + c_{\text{champion}})`.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
    """
    p = defaults.ci_prob(ci_prob)
    if not table.challengers:
        raise InsufficientDataError("artifact_sweep needs at least one challenger")
    available = len(table.artifacts)
    requested = [validate.integer("m_values", m, minimum=0) for m in m_values]
    if not requested:
        raise InsufficientDataError("artifact_sweep needs at least one value of m")
    capped = list(dict.fromkeys(min(m, available) for m in requested))
    if capped != requested:
        warnings.warn(
            f"only {available} artifact runs are available: m_values {requested} become {capped}",
            DataWarning,
            stacklevel=2,
        )
    options = dict(fit_options)
    likelihood = str(options.get("likelihood", "gaussian"))
    if options.get("pooling", "auto") == "auto" and likelihood != "auto":
        # one model for the whole sweep, chosen on the full table: "auto" per fit would
        # switch a logit family from unpooled to pooled where m reaches 2
        design = design_of(table)
        options["pooling"] = resolve_pooling(
            get_family(likelihood).resolved(design), design, "auto"
        )
    check_sweep_pooling(capped, options.get("pooling", "auto"))
    options["seed"] = validate.seed(seed)
    points = sweep(
        partial(_fit_point, table=table, fit_options=options),
        capped,
        executor=executor,
        max_workers=max_workers,
        label="artifact sweep (one fit per m)",
    )
    messages = [f"m = {point.m}: {msg}" for point in points for msg in point.gate.messages]
    first = points[0].gate
    gate = GateStatus(
        all(point.gate.passed for point in points), tuple(messages), first.rhat_max, first.ess_min
    )
    header = (
        f"Artifact sweep; collection {table.collections[0]!r}, measure {table.measures[0]!r}; "
        f"m in {capped} of {available} artifact runs"
    )
    return ArtifactSweep(
        m_values=tuple(capped),
        champion=table.champion,
        challengers=tuple(table.challengers),
        points=tuple(points),
        ci_prob=p,
        gate=gate,
        header=header,
        seed=options["seed"],
        collection=str(table.collections[0]),
        measure=str(table.measures[0]),
    )
