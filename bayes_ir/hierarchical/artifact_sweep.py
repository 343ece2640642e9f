r"""How much do artifact runs sharpen the comparison? Refit with the top m artifacts.

Artifact runs (for example past TREC submissions) carry no decision of their own:
they inform the population distribution of systems, which shrinks the system
effects and narrows the intervals of the champion and the challengers. The paper's
Figure 5 shows the intervals as the number of artifacts grows; this module refits
the model with the best ``m`` artifacts (by mean score) for each ``m`` and reports
every challenger-minus-champion interval and the gap between the intervals of the
two systems' means.

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
from typing import Any

import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import DataWarning, InsufficientDataError
from bayes_ir.hierarchical.contrasts import (
    SAMPLE_DIMS,
    _draw_diagnostics,
    _gate,
    _Gated,
    _interval_stats,
    _text_table,
    system_mean_draws,
)
from bayes_ir.hierarchical.diagnostics import GateStatus
from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

__all__ = ["SWEEP_COLUMNS", "ArtifactSweep", "artifact_sweep"]

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


@dataclass(frozen=True)
class _Point:
    """What one refit contributes: draws of the differences and of the system means."""

    m: int
    differences: xr.DataArray  # (chain, draw, challenger)
    means: xr.DataArray  # (chain, draw, system), champion and challengers
    gate: GateStatus


def _fit_point(m: int, *, table: ScoreTable, fit_options: dict[str, Any]) -> _Point:
    """Fit with the best ``m`` artifacts and keep only the draws the sweep reports."""
    from bayes_ir.hierarchical import fit as hierarchical_fit

    keep = [table.champion, *table.challengers, *table.artifacts[:m]]
    sub = table.select(systems=keep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the gate below records failures per m
        result = hierarchical_fit(sub, **fit_options)
    means = system_mean_draws(result).sel(system=[table.champion, *table.challengers])
    diff = means.sel(system=list(table.challengers)) - means.sel(system=table.champion)
    diff = diff.drop_vars("role", errors="ignore").rename(system="challenger")
    gate = _gate(result, _draw_diagnostics(diff, "challenger"), "challenger - champion")
    return _Point(m, diff, means, gate)


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
    """

    m_values: tuple[int, ...]
    champion: str
    challengers: tuple[str, ...]
    points: tuple[_Point, ...]
    ci_prob: float
    gate: GateStatus
    header: str

    def system_frame(self, ci_prob: float | None = None) -> pd.DataFrame:
        """Intervals of the champion's and challengers' means per m: :data:`SYSTEM_COLUMNS`."""
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        rows = []
        for point in self.points:
            stats = _interval_stats(point.means, "system", p, False)
            stats = stats.rename_axis("system").reset_index()
            stats["role"] = [str(r) for r in point.means["role"].values]
            stats["m"] = point.m
            rows.append(stats)
        return pd.concat(rows, ignore_index=True)[list(SYSTEM_COLUMNS)]

    def to_frame(self, ci_prob: float | None = None) -> pd.DataFrame:
        """One row per (m, challenger).

        Columns
        -------
        m
            Number of artifact runs in the fit.
        challenger, champion
            The contrast ``challenger - champion``.
        mean, ci_lower, ci_upper, width
            Posterior mean, equal-tailed interval and its width.
        p_better
            P(challenger > champion).
        gap
            Lower limit of the challenger's mean minus the upper limit of the champion's
            mean: positive when the two intervals do not overlap (the paper's criterion).
        diagnostics_passed
            Whether that refit passed the diagnostics gate.
        """
        p = defaults.ci_prob(ci_prob if ci_prob is not None else self.ci_prob)
        systems = self.system_frame(p).set_index(["m", "system"])
        rows = []
        for point in self.points:
            stats = _interval_stats(point.differences, "challenger", p, False)
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
        """Intervals against m (the paper's Figure 5)."""
        from bayes_ir.plots.hierarchical import plot_artifact_sweep

        return plot_artifact_sweep(self, **kwargs)


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
    options["seed"] = validate.seed(seed)
    points = sweep(
        partial(_fit_point, table=table, fit_options=options),
        capped,
        executor=executor,
        max_workers=max_workers,
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
    )
