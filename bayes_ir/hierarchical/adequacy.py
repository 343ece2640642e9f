r"""Model adequacy: posterior predictive checks of every system of a hierarchical fit.

R-hat and ESS say whether the sampler converged, not whether the model describes the
data. :func:`check_model` asks the second question, per system, by comparing the
observed per-topic scores with scores replicated from the posterior (Gelman, Meng and
Stern 1996; Gabry et al. 2019), and :func:`bayes_ir.hierarchical.fit` runs it on every
fit (``fit.model_check``).

Checks per system :math:`s` (over its observed topics):

* ``coverage_50``, ``coverage_95``: share of its scores inside the central 50% and 95%
  posterior predictive intervals of their cells;
* ``ppp_mean``: posterior predictive p-value :math:`P(T(\tilde y_s) \ge T(y_s) \mid
  y)` of the mean of the system's scores across topics;
* ``ppp_sd``, ``ppp_skewness``: the same for the SD and the skewness of the system's
  *residuals* :math:`y_{ts} - \mu_{ts}` (realised discrepancies, Gelman, Meng and Stern
  1996: the topic effects cancel, so a system whose errors are wider or more skewed
  than the model's stands out);
* ``ppp_lost``: the same for the share of topics on which the system scores below the
  champion (``NaN`` for the champion itself).

Flagging rule (``flagged``, ``failed_checks``). A check fails when its tail
probability is below :data:`ALPHA_PPP` = :data:`ALPHA_COVERAGE` = ``1e-4``:

* ``coverage_95`` (``coverage_50``): the binomial tail :math:`P(X \ge k)` of the
  number :math:`k` of scores *outside* the interval, :math:`X \sim \mathrm{Bin}(n,
  0.05)` (:math:`\mathrm{Bin}(n, 0.5)`);
* ``sd``: ``ppp_sd`` (the system's errors are wider than modelled);
* ``lost``: ``ppp_lost`` (it loses to the champion more often than modelled);
* ``mean``, ``skewness``: ``ppp_mean`` or ``ppp_skewness`` below the threshold or
  above one minus it (two-sided).

Spread and losses are checked one-sided: a system with *less* spread than the model
assumes gets intervals that are too wide, which makes its decisions conservative, not
misleading; and in a small table one very wide system inflates the shared residual SD,
so a two-sided rule would flag the well-behaved systems beside it.

Measured rates (:data:`MEASURED_RATES`; ``tests/hierarchical/test_adequacy.py``
re-measures them). Gaussian model sampled exactly (2 x 500 draws), data simulated
from the model with rb04-like scales (topic SD 0.19, system SD 0.02, residual SD
0.10); "2x", "3x": one challenger's residual SD is 2 or 3 times the others'.

=====================  ===============  ==============  ===========  ===========
topics x systems       false alarms     tables with a   2x system    3x system
                       per system       false alarm     flagged      flagged
=====================  ===============  ==============  ===========  ===========
50 x 45 (rb04's size)  2 / 9,000        2 / 200 (1%)    60 / 60      40 / 40
25 x 10                0 / 2,000        0 / 200         54 / 100     99 / 100
50 x 5                 0 / 1,000        0 / 200         10 / 100     98 / 100
=====================  ===============  ==============  ===========  ===========

Among the other systems of the tables with a 2x or 3x system, 1 of 7,000 was
flagged. So about 2 in 10,000 systems (1 in 100 tables of 45 systems) are flagged
when the model holds; a system whose residual SD is 3x the others' is flagged in
98-100% of the tables, one at 2x in all tables of 50 topics x 45 systems but in
only about half of the 25 x 10 tables and 10% of the 50 x 5 tables.

Posterior predictive p-values are conservative under the model (more concentrated
around 0.5 than uniform: the data were used to fit the replicates), and the
threshold was set by this simulation, not read as a test level. A 2x system is
hard to see with few topics or few systems (a wide system inflates the shared
residual SD of a small table); a 3x system is found in most tables.

The replicates use a seeded subset of at most :data:`N_DRAWS` posterior draws (fewer,
but at least :data:`MIN_DRAWS`, when draws x observed cells would exceed
:data:`MAX_REPLICATES`: tables above 100,000 cells; the rates above were measured with
1,000 draws); above :data:`MAX_REPLICATES` / :data:`MIN_DRAWS` = 1,000,000 cells the
champion, the challengers and a seeded subset of the artifact runs are checked (5,000
topics x 1,000 systems: 100 draws, about 200 systems)
(processed in blocks of systems, so memory stays bounded); the intervals are those
of the predictive mixture over the same draws, computed exactly from its CDF; the
p-values use a normal approximation of the replicated statistics (see
:func:`check_model`), which resolves tails far below ``1 / N_DRAWS``.

Monte Carlo error and the borderline band. Each p-value is an estimate from a finite
number of draws, so a system whose p-value lies near the cut-off would be flagged with
one seed and not with another (issue 27: ``chal_fusion`` of the README's example has a
skewness p-value of about 1.1e-4 against the cut-off 1e-4). Every check therefore
carries its Monte Carlo error (:func:`check_model`, Notes): the SE of the p-value
(columns ``ppp_*_mcse``) and, for the coverage checks, the cells whose interval
membership the draws do not settle. A champion or challenger with a check within
:data:`RECHECK_Z` Monte Carlo SEs of its cut-off is checked again on as many draws as
:data:`RECHECK_REPLICATES` allows for it (every draw of a default fit of up to about 200
topics; artifact runs, from which no decision is read, keep the first pass). A check fails
when its p-value lies below the cut-off by more than :data:`BORDERLINE_Z` Monte Carlo SEs;
it is *borderline* when that band straddles the cut-off. A borderline system is not
flagged (``borderline``, ``borderline_checks``): the data do not say which side of the
cut-off it is on, and a flag that a seed can flip would flip the decision with it
(:func:`bayes_ir.decide` acts on the numbers and says so).

References
----------
Gelman, A., Meng, X.-L., and Stern, H. (1996). Posterior predictive assessment of
model fitness via realized discrepancies. *Statistica Sinica* 6(4), 733-760.

Gabry, J., Simpson, D., Vehtari, A., Betancourt, M., and Gelman, A. (2019).
Visualization in Bayesian workflow. *Journal of the Royal Statistical Society A*
182(2), 389-402. doi:10.1111/rssa.12378

Benham, R., Carterette, B., Culpepper, J. S., and Moffat, A. (2020). Bayesian
inferential risk evaluation on multiple IR systems. SIGIR '20, 339-348.
doi:10.1145/3397271.3401033
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special

from bayes_ir import defaults
from bayes_ir.errors import ModelCheckWarning
from bayes_ir.hierarchical.diagnostics import draw_diagnostics
from bayes_ir.hierarchical.families import family_of, get_family

__all__ = [
    "ALPHA_COVERAGE",
    "ALPHA_PPP",
    "BORDERLINE_Z",
    "CHECKS",
    "MEASURED_RATES",
    "MODEL_CHECK_COLUMNS",
    "MAX_REPLICATES",
    "MIN_DRAWS",
    "N_DRAWS",
    "RECHECK_REPLICATES",
    "RECHECK_Z",
    "ModelCheck",
    "check_model",
]

#: Posterior draws used by the check (a seeded random subset when the fit has more).
N_DRAWS: int = 1000
#: Largest number of replicated values (draws x observed cells) of a check by default:
#: the check of a larger table uses fewer draws (its cost is about 40 ns per value), then,
#: at :data:`MIN_DRAWS`, a seeded subset of the artifact runs (the champion and the
#: challengers are always checked).
MAX_REPLICATES: int = 100_000_000
#: Fewest draws of a check by default, whatever the size of the table.
MIN_DRAWS: int = 100
#: A posterior predictive p-value below this (or, two-sided, above 1 minus it) fails.
ALPHA_PPP: float = 1e-4
#: A binomial tail probability of the scores outside an interval below this fails.
ALPHA_COVERAGE: float = 1e-4
#: Names of the checks, in the order ``failed_checks`` lists them.
CHECKS: tuple[str, ...] = (
    "coverage_95", "coverage_50", "sd", "lost", "mean", "skewness", "zeros", "ones"
)  # fmt: skip
#: Half-width of the borderline band, in Monte Carlo SEs of a check's z-score (99.7%): a
#: check fails only when its p-value is below the cut-off by more than this.
BORDERLINE_Z: float = 3.0
#: Champions and challengers with a check within this many Monte Carlo SEs of its cut-off
#: are checked again on more draws.
RECHECK_Z: float = 6.0
#: Largest number of replicated values (draws x observed cells) of that second pass: about
#: 4 CPU seconds; every draw of a 40,000-draw fit for 4 systems of 250 topics.
RECHECK_REPLICATES: int = 40_000_000
#: The calibration study of the rule (module docstring): (events, trials) per rate.
MEASURED_RATES: dict[str, tuple[int, int]] = {
    "false_alarm_system_T50_S45": (2, 9000),
    "false_alarm_table_T50_S45": (2, 200),
    "false_alarm_system_T25_S10": (0, 2000),
    "false_alarm_table_T25_S10": (0, 200),
    "false_alarm_system_T50_S5": (0, 1000),
    "false_alarm_table_T50_S5": (0, 200),
    "detect_2x_T50_S45": (60, 60),
    "detect_3x_T50_S45": (40, 40),
    "detect_2x_T25_S10": (54, 100),
    "detect_3x_T25_S10": (99, 100),
    "detect_2x_T50_S5": (10, 100),
    "detect_3x_T50_S5": (98, 100),
}
#: Columns of :meth:`ModelCheck.to_frame`.
MODEL_CHECK_COLUMNS = (
    "system",
    "role",
    "n_topics",
    "n_draws",
    "coverage_50",
    "coverage_95",
    "p_coverage_50",
    "p_coverage_95",
    "ppp_mean",
    "ppp_sd",
    "ppp_skewness",
    "ppp_lost",
    "ppp_mean_mcse",
    "ppp_sd_mcse",
    "ppp_skewness_mcse",
    "ppp_lost_mcse",
    "flagged",
    "failed_checks",
    "borderline",
    "borderline_checks",
    "share_zeros",
    "pred_zeros",
    "ppp_zeros",
    "share_ones",
    "pred_ones",
    "ppp_ones",
)
#: Names of the point masses a family may declare (their checks and columns).
_MASSES: dict[float, str] = {0.0: "zeros", 1.0: "ones"}
#: The p-value column of each check, as compared with the cut-off (two-sided for ``mean``
#: and ``skewness``: the nearer tail).
_P_COLUMN = {
    "coverage_95": "p_coverage_95",
    "coverage_50": "p_coverage_50",
    "sd": "ppp_sd",
    "lost": "ppp_lost",
    "mean": "ppp_mean",
    "skewness": "ppp_skewness",
    "zeros": "ppp_zeros",
    "ones": "ppp_ones",
}
_TWO_SIDED = ("mean", "skewness", "zeros", "ones")
#: Elements of one block of replicates (draws x topics x systems), to bound memory.
_BLOCK: int = 2_000_000
#: Fewest blocks of systems (beside the champion's) when there are systems enough.
_MIN_BLOCKS: int = 8
_SAMPLE = ("chain", "draw")


@dataclass(frozen=True)
class ModelCheck:
    """Posterior predictive checks of each system of a fit: build with :func:`check_model`.

    Attributes
    ----------
    frame
        One row per system, columns :data:`MODEL_CHECK_COLUMNS` (see :meth:`to_frame`).
    likelihood
        The fit's likelihood (``"gaussian"`` or ``"skew_normal"``).
    n_draws
        Posterior draws of the first pass (systems near a cut-off are checked again on
        more: the ``n_draws`` column).
    seed
        Seed of the draw subset and of the replicates.
    alpha_ppp, alpha_coverage
        The thresholds of the flagging rule (module docstring).
    collection, measure
        The data of the fit (empty when unknown).
    n_unchecked
        Artifact runs left out of the check (a seeded subset was checked: see
        :func:`check_model`); 0 when every system was checked.
    borderline_z
        Half-width of the borderline band in Monte Carlo SEs (:data:`BORDERLINE_Z`).
    """

    frame: pd.DataFrame
    likelihood: str
    n_draws: int
    seed: int
    alpha_ppp: float = ALPHA_PPP
    alpha_coverage: float = ALPHA_COVERAGE
    collection: str = ""
    measure: str = ""
    n_unchecked: int = 0
    borderline_z: float = BORDERLINE_Z

    @property
    def flagged(self) -> tuple[str, ...]:
        """Systems the model does not describe (at least one failed check), in fit order."""
        return tuple(self.frame.loc[self.frame["flagged"], "system"])

    @property
    def passed(self) -> bool:
        """True when no system is flagged."""
        return not self.flagged

    @property
    def borderline(self) -> tuple[str, ...]:
        """Systems not flagged with a check in the borderline band (module docstring)."""
        rows = self.frame["borderline"] & ~self.frame["flagged"]
        return tuple(self.frame.loc[rows, "system"])

    def failed(self, system: str) -> tuple[str, ...]:
        """Names of the checks ``system`` failed (empty when it passed)."""
        return self._listed(system, "failed_checks")

    def borderline_of(self, system: str) -> tuple[str, ...]:
        """Names of the checks of ``system`` in the borderline band (neither failed nor passed)."""
        return self._listed(system, "borderline_checks")

    def _listed(self, system: str, column: str) -> tuple[str, ...]:
        row = self.frame.loc[self.frame["system"] == system, column]
        text = str(row.iloc[0]) if len(row) else ""
        return tuple(t for t in text.split(", ") if t)

    def cut_off(self, check: str) -> float:
        """Return the cut-off of ``check``: ``alpha_coverage`` or ``alpha_ppp``."""
        return self.alpha_coverage if check.startswith("coverage") else self.alpha_ppp

    def p_value(self, system: str, check: str) -> str:
        """Say a check's p-value as it is compared: ``p = 9.9e-05 (cut-off 1e-04; ...)``.

        Two-sided checks (``mean``, ``skewness``) show the nearer tail; the ppp-values
        add their Monte Carlo SE.
        """
        row = self.frame.set_index("system").loc[system]
        p = float(row[_P_COLUMN[check]])
        p = min(p, 1.0 - p) if check in _TWO_SIDED else p
        text = f"p = {_p_text(p)} (cut-off {self.cut_off(check):.0e}"
        if f"{_P_COLUMN[check]}_mcse" in row.index:
            text += f"; Monte Carlo SE {_p_text(float(row[_P_COLUMN[check] + '_mcse']))}"
        return text + ")"

    def to_frame(self) -> pd.DataFrame:
        r"""One row per system (a copy).

        Returns
        -------
        pandas.DataFrame
            With these columns:

            system, role
                The system and its role.
            n_topics
                Topics on which it was observed.
            coverage_50, coverage_95
                Share of its scores inside the central 50% / 95% posterior predictive
                intervals (about 0.5 / 0.95, or a little more, when the model fits).
            ppp_mean, ppp_sd, ppp_skewness
                Posterior predictive p-values :math:`P(T(\tilde y) \ge T(y))` of the
                mean of the system's scores across topics, and of the SD and skewness of
                its residuals (near 0: the observed statistic is larger than the model
                reproduces).
            ppp_lost
                The same for the share of topics lost to the champion (NaN for it).
            n_draws
                Posterior draws the system was checked on (more than the first pass's
                when a check was near its cut-off).
            p_coverage_50, p_coverage_95
                Binomial tail probability of the number of its scores outside the
                interval (compared with ``alpha_coverage``).
            ppp_mean_mcse, ppp_sd_mcse, ppp_skewness_mcse, ppp_lost_mcse
                Monte Carlo SE of each ppp-value (:func:`check_model`, Notes).
            flagged
                True when a check failed.
            failed_checks
                The failed checks, comma-separated, among :data:`CHECKS` ("" when none).
            borderline
                True when a check is in the borderline band: its p-value's Monte Carlo
                interval (:data:`BORDERLINE_Z` SEs either side) straddles the cut-off.
            borderline_checks
                Those checks, comma-separated ("" when none).
        """
        return self.frame.copy()

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def warnings(self) -> list[str]:
        """One sentence per flagged system (what failed, what to try), then per borderline one."""
        return [self._message(s) for s in self.flagged] + [
            self.borderline_message(s) for s in self.borderline
        ]

    def warn(self, *, stacklevel: int = 1) -> None:
        """Emit one :class:`~bayes_ir.errors.ModelCheckWarning` per flagged or borderline system.

        Flagged artifact runs are listed by :meth:`summary` only: no decision is read
        from them. A fit without roles (a leaderboard) gets one warning naming every
        flagged system. ``stacklevel=1`` attributes the warnings to the caller of ``warn``.
        """
        roles = self.frame["role"].to_numpy()
        if "champion" not in roles and self.flagged:
            names = ", ".join(self.flagged[:8])
            more = f" and {len(self.flagged) - 8} more" if len(self.flagged) > 8 else ""
            warnings.warn(
                f"the {self.likelihood} model does not describe {len(self.flagged)} of "
                f"{len(roles)} systems ({names}{more}): their places are marked misfit; "
                "see the model check",
                ModelCheckWarning,
                stacklevel=stacklevel + 1,
            )
            return
        for system, role in zip(self.frame["system"], roles, strict=True):
            if role == "artifact":
                continue
            if system in self.flagged:
                message = self._message(system)
            elif system in self.borderline:
                message = self.borderline_message(system)
            else:
                continue
            warnings.warn(message, ModelCheckWarning, stacklevel=stacklevel + 1)

    def _facts(self, system: str, checks: tuple[str, ...]) -> str:
        row = self.frame.set_index("system").loc[system]
        facts = []
        for check in checks:
            if check.startswith("coverage"):
                pct = check.split("_")[1]
                facts.append(
                    f"{row[check]:.0%} of its scores inside the {pct}% predictive interval, "
                    f"expected about {pct}%: {self.p_value(system, check)}"
                )
            else:
                word = "too high" if row[_P_COLUMN[check]] <= 0.5 else "too low"
                facts.append(f"{check} {word}: {self.p_value(system, check)}")
        return "; ".join(facts)

    def _message(self, system: str) -> str:
        hint = "likelihood='auto'"
        if self.likelihood == "gaussian":
            hint = "likelihood='skew_normal' or " + hint
        if "system" in get_family(self.likelihood).dispersions:
            hint += (
                ", or a per-system residual SD"
                if self.likelihood != "zoib"
                else ", or a per-system precision (sigma='system')"
            )
        return (
            f"the {self.likelihood} model does not describe {system} "
            f"({self._facts(system, self.failed(system))}): do not act on its results; "
            f"try {hint}"
        )

    def borderline_message(self, system: str) -> str:
        """Say that a check of ``system`` is borderline, with its p-value and cut-off."""
        return (
            f"the model check of {system} is borderline "
            f"({self._facts(system, self.borderline_of(system))}): within "
            f"{self.borderline_z:g} Monte Carlo SEs of the cut-off, so it is not flagged and "
            "its decision stands; look at its residuals before acting"
        )

    def summary(self) -> str:
        """MODEL CHECK block: the rule, one line per champion/challenger and per flag.

        p-values below 0.001 are written with two significant digits (``9.9e-05``), so
        that they can be read against the cut-off printed last.
        """
        frame = self.frame
        shown = frame[(frame["role"] != "artifact") | frame["flagged"]]
        width = max([len(s) for s in shown["system"]] + [6])
        state = (
            "PASS, no system flagged"
            if self.passed
            else f"{len(self.flagged)} system(s) flagged: {', '.join(self.flagged)}"
        )
        if self.borderline:
            state += f"; borderline (not flagged): {', '.join(self.borderline)}"
        lines = [
            f"MODEL CHECK (posterior predictive; {self.likelihood}; {self.n_draws:,} draws, "
            f"more near a cut-off): {state}",
            f"  {'system':<{width}}  {'cov50':>6} {'cov95':>6} {'p_mean':>7} {'p_sd':>7} "
            f"{'p_skew':>7} {'p_lost':>7}  fit",
        ]
        masses = [m for m in _MASSES.values() if frame[f"ppp_{m}"].notna().any()]
        if masses:  # exact 0s / 1s: observed share, predicted share
            lines[-1] = lines[-1].replace("  fit", "".join(
                f" {m + ' obs/pred':>15}" for m in masses) + "  fit")  # fmt: skip
        for r in shown.itertuples(index=False):
            status = "ok"
            if r.flagged:
                status = f"MISFIT: {r.failed_checks}"
            elif r.borderline:
                status = f"borderline: {r.borderline_checks}"
            cells = " ".join(f"{_p_text(v):>7}" for v in (r.ppp_mean, r.ppp_sd, r.ppp_skewness))
            shares = "".join(
                f" {getattr(r, f'share_{m}'):7.3f}/{getattr(r, f'pred_{m}'):.3f}" for m in masses
            )
            lines.append(
                f"  {r.system:<{width}}  {r.coverage_50:6.2f} {r.coverage_95:6.2f} {cells} "
                f"{_p_text(r.ppp_lost):>7}{shares}  {status}"
            )
        n_art = int((frame["role"] == "artifact").sum())
        if n_art:
            lines.append(f"  (artifact runs not flagged are not shown: {n_art} checked)")
        if self.n_unchecked:
            lines.append(
                f"  ({self.n_unchecked:,} artifact runs not checked: a seeded subset was, "
                f"within {MAX_REPLICATES:,} replicated scores)"
            )
        lines.append(
            f"  flagged: scores outside an interval with binomial tail < {self.alpha_coverage:.0e},"
            f" p_sd or p_lost < {self.alpha_ppp:.0e}, p_mean or p_skew beyond {self.alpha_ppp:.0e}"
            f" from 0 or 1, by more than {self.borderline_z:g} Monte Carlo SEs (within them: "
            "borderline)"
            + (
                f"; a count of exact {' and '.join(masses)} with predictive tail < "
                f"{self.alpha_ppp:.0e} (PIT randomised at point masses)"
                if masses
                else ""
            )
        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.frame.to_html(index=False, float_format=lambda x: f"{x:.3f}")

    def plot(self, **kwargs: Any) -> Any:
        """Coverage per system (:func:`bayes_ir.plots.adequacy.plot_model_check`)."""
        from bayes_ir.plots.adequacy import plot_model_check

        return plot_model_check(self, **kwargs)


def _p_text(p: float) -> str:
    """Write a p-value with the digits it needs: ``0.032``, ``9.9e-05``, ``1-2.0e-05``, or ""."""
    if not np.isfinite(p):
        return ""
    if p > 0.999:  # the upper tail of a two-sided check, as compared with the cut-off
        return f"1-{1.0 - p:.1e}"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


# ---------------------------------------------------------------------- kernels
def _moments(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted mean, SD (ddof 1) and skewness (g1) over the last axis (topics).

    ``x`` has shape (..., B, T) and is 0 in missing cells; ``w`` (B, T) is 1 for
    observed cells.
    """
    m = w.sum(axis=-1)
    mean = x.sum(axis=-1) / m
    d = x - mean[..., None]
    d *= w
    d2 = d * d
    m2 = d2.sum(axis=-1)
    d2 *= d
    m3 = d2.sum(axis=-1)
    sd = np.sqrt(m2 / np.maximum(m - 1, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        skew = (m3 / m) / (m2 / m) ** 1.5
    return mean, sd, skew


def _skewness_z(g1: np.ndarray, n: np.ndarray) -> np.ndarray:
    """D'Agostino's transformation of the sample skewness to an approximate N(0, 1) score.

    The transformation of :func:`scipy.stats.skewtest` (D'Agostino, Belanger and
    D'Agostino 1990), applied to every draw so that the normal approximation of
    :func:`_ppp` holds in the tails (the sample skewness itself has heavy tails);
    systems with fewer than 8 topics keep the untransformed skewness.
    """
    n = np.asarray(n, dtype=float)
    big = n >= 8
    m = np.where(big, n, 8.0)
    y = g1 * np.sqrt((m + 1) * (m + 3) / (6.0 * (m - 2)))
    beta2 = 3.0 * (m**2 + 27 * m - 70) * (m + 1) * (m + 3) / ((m - 2) * (m + 5) * (m + 7) * (m + 9))
    w2 = -1.0 + np.sqrt(2.0 * (beta2 - 1.0))
    delta = 1.0 / np.sqrt(0.5 * np.log(w2))
    alpha = np.sqrt(2.0 / (w2 - 1.0))
    z = delta * np.arcsinh(y / alpha)
    return np.where(big, z, g1)


def _ppp(rep: np.ndarray, obs: np.ndarray, n_eff: float) -> tuple[np.ndarray, np.ndarray]:
    r"""z-score of the posterior predictive p-value and its Monte Carlo SE.

    The p-value :math:`P(T(\tilde y, \theta) \ge T(y, \theta))` is :math:`\Phi(z)`, the
    normal approximation over the draws of :math:`D = T(\tilde y, \theta) - T(y,
    \theta)` with :math:`z = \bar D / s_D`, which resolves tails far below ``1 /
    n_draws``. Its Monte Carlo SE is that of a ratio of sample moments (delta method):
    the SD of the influence values :math:`u_i - \tfrac{z}{2}(u_i^2 - 1)`, :math:`u_i =
    (D_i - \bar D)/s_D`, over :math:`\sqrt{n_{eff}}` (for normal :math:`D`,
    :math:`\sqrt{(1 + z^2/2)/n_{eff}}`). ``obs`` is (B,) or, for a realised discrepancy,
    (n, B) like ``rep``; both outputs are (B,), NaN when ``T`` is undefined.
    """
    d = rep - obs
    with np.errstate(invalid="ignore", divide="ignore"):
        mean, sd = d.mean(axis=0), d.std(axis=0, ddof=1)
        z = mean / sd
        u = (d - mean) / sd
        se = (u - 0.5 * z * (u * u - 1.0)).std(axis=0, ddof=1) / np.sqrt(n_eff)
    ok = np.isfinite(obs) if np.ndim(obs) == 1 else np.isfinite(obs).all(axis=0)
    return np.where(ok, z, np.nan), np.where(ok, se, np.nan)


def _cdf(y, mu, sigma, alpha) -> np.ndarray:
    """Predictive CDF of each draw at the observed scores (Gaussian or skew-normal)."""
    if alpha is None:
        return special.ndtr((y - mu) / sigma)
    from bayes_ir.hierarchical.skewnormal import skewnormal_location_scale

    xi, omega = skewnormal_location_scale(mu, sigma, alpha)
    z = (y - xi) / omega
    return special.ndtr(z) - 2.0 * special.owens_t(z, alpha)


def _residuals(mu, sigma, alpha, rng: np.random.Generator) -> np.ndarray:
    """One replicated error (mean 0) per draw and cell; skew-normal by Azzalini's representation."""
    if alpha is None:
        return sigma * rng.standard_normal(mu.shape)
    from bayes_ir.hierarchical.skewnormal import skewnormal_location_scale

    xi, omega = skewnormal_location_scale(0.0, sigma, alpha)
    delta = alpha / np.sqrt(1.0 + alpha**2)
    u0 = np.abs(rng.standard_normal(mu.shape))
    u1 = rng.standard_normal(mu.shape)
    return xi + omega * (delta * u0 + np.sqrt(1.0 - delta**2) * u1)


def _binom_tail(outside: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """P(X >= outside) for X ~ Bin(n, p) (scipy.stats.binom.sf(outside - 1, n, p))."""
    return np.where(outside <= 0, 1.0, special.bdtrc(np.maximum(outside - 1, 0), n, p))


def _count_tails(prob: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Posterior predictive tails of a count of cells: :math:`P(X \le k)`, :math:`P(X \ge k)`.

    ``prob`` (n, B, T): the probability that each cell takes the value counted, per draw
    (0 for missing cells); ``k`` (B,): the observed counts. Given a draw the count is a
    sum of independent Bernoulli variables (Poisson-binomial); its distribution up to
    :math:`\max k` is built by the exact recursion over the cells, and the tails are
    averaged over the draws (:func:`~bayes_ir.hierarchical.adequacy_kernel.poisson_binomial_tails`).
    A count above half its cells is handled as the count of the other cells (fewer
    states).
    """
    from bayes_ir.hierarchical.adequacy_kernel import poisson_binomial_tails

    t = prob.shape[-1]
    flip = k > t / 2
    q = np.where(flip[None, :, None], 1.0 - prob, prob)
    j = np.where(flip, t - k, k).astype(np.int64)
    le, lt = poisson_binomial_tails(np.ascontiguousarray(q), j)
    below, above = le, 1.0 - lt  # P(X' <= j), P(X' >= j)
    return np.where(flip, above, below), np.where(flip, below, above)


def _check_arrays(
    y: np.ndarray,
    cells_of: Any,
    n_draws: int,
    champion: int | None,
    rng: np.random.Generator,
    n_eff: float,
    point_masses: tuple[float, ...] = (),
) -> dict[str, np.ndarray]:
    """Coverage and ppp-values per system; ``cells_of(idx)`` gives a block's :class:`Cells`.

    ``y`` is the topic x system matrix with NaN for missing cells; ``n_eff`` the
    effective number of the ``n_draws`` draws (:func:`_effective_draws`). Returns, per
    system, ``z_<stat>`` and ``se_<stat>`` (:func:`_ppp`) for the statistics
    :data:`_STATS`, the coverages ``c50``, ``c95`` and, per system and topic (S, T), the
    predictive CDF at the score ``pit`` and its Monte Carlo SE ``pit_se`` (NaN where
    missing); for each of ``point_masses``, the observed and predicted shares and the
    two tails of the count (:func:`_count_tails`). The PIT of a score with a point mass
    is randomised, :math:`F(y^-) + V (F(y) - F(y^-))`, V ~ U(0, 1) (Dunn and Smyth
    1996), uniform when the model holds.
    """
    n_t, n_s = y.shape
    obs = np.isfinite(y).T  # (S, T): the layout of every block below
    y0 = np.where(obs, y.T, 0.0)
    w = obs.astype(float)
    keys: tuple[str, ...] = ("c50", "c95", *(f"{k}_{s}" for k in ("z", "se") for s in _STATS))
    keys += tuple(
        f"{k}_{_MASSES[v]}" for v in point_masses for k in ("share", "pred", "low", "high")
    )
    out = {k: np.full(n_s, np.nan) for k in keys}
    out["pit"], out["pit_se"] = np.full((n_s, n_t), np.nan), np.full((n_s, n_t), np.nan)
    out["n"] = obs.sum(axis=1)
    # blocks within the memory bound, and at least _MIN_BLOCKS to share among threads
    # (fixed, so that the blocks and their generators do not depend on the threads)
    size = max(1, min(_BLOCK // max(n_draws * n_t, 1), -(-(n_s - 1) // _MIN_BLOCKS)))
    order = list(range(n_s))
    if champion is not None:  # the champion first: its replicate is kept for "lost"
        order.remove(champion)
        order.insert(0, champion)
    blocks = [order[:1], *(order[i : i + size] for i in range(1, n_s, size))]

    def check(block: list[int], gen: np.random.Generator, champ_rep: Any) -> None:
        """Fill ``out`` for one block; the champion's block keeps its replicate in ``champ``."""
        idx = np.asarray(block)
        wb, yb = w[idx], y0[idx]
        cells = cells_of(idx)
        mu = cells.mean  # (n, B, T)
        below, cdf = cells.cdf(yb[None])
        pit = cdf.mean(axis=0)
        if below is not cdf:  # point masses: randomised PIT
            low = below.mean(axis=0)
            pit = low + gen.uniform(size=pit.shape) * (pit - low)
        out["pit"][idx] = np.where(wb > 0, pit, np.nan)
        out["pit_se"][idx] = np.where(wb > 0, cdf.std(axis=0) / np.sqrt(n_eff), np.nan)
        del cdf, below
        m = wb.sum(axis=1)
        out["c50"][idx] = (((pit >= 0.25) & (pit <= 0.75)) * wb).sum(axis=1) / m
        out["c95"][idx] = (((pit >= 0.025) & (pit <= 0.975)) * wb).sum(axis=1) / m
        rep = cells.rvs(gen)
        eps = rep - mu
        rep *= wb
        _store(out, "mean", idx, _ppp(rep.sum(axis=-1) / m, yb.sum(axis=-1) / m, n_eff))
        eps *= wb  # realised discrepancies: the replicated and the observed residuals
        _, sd_rep, skew_rep = _moments(eps, wb)
        _, sd_obs, skew_obs = _moments((yb - mu) * wb, wb)
        _store(out, "sd", idx, _ppp(sd_rep, sd_obs, n_eff))
        skew = _ppp(_skewness_z(skew_rep, m), _skewness_z(skew_obs, m), n_eff)
        _store(out, "skewness", idx, skew)
        for v in point_masses:
            name = _MASSES[v]
            lo_v, at_v = cells.cdf(np.full_like(yb[None], v))
            prob = (at_v - lo_v) * wb  # P(score == v) per draw and cell
            k = np.rint(((yb == v) * wb).sum(axis=1))
            out[f"share_{name}"][idx] = k / m
            out[f"pred_{name}"][idx] = prob.sum(axis=-1).mean(axis=0) / m
            out[f"low_{name}"][idx], out[f"high_{name}"][idx] = _count_tails(prob, k)
        if champ_rep is not None:
            both = wb * w[champion]
            k = both.sum(axis=1)
            lost_rep = ((rep < champ_rep[:, None, :]) * both).sum(axis=-1) / k
            lost_obs = ((yb < y0[champion]) * both).sum(axis=-1) / k
            _store(out, "lost", idx, _ppp(lost_rep, lost_obs, n_eff))
        elif champion is not None and champion in block:
            champ["rep"] = rep[:, block.index(champion), :]

    # the first block (the champion's) alone: its replicate is the others' "lost"; then
    # the rest in threads (numpy and scipy's special functions release the GIL), each
    # with its own generator spawned from ``rng``, so the result does not depend on them
    gens = rng.spawn(len(blocks))
    champ: dict[str, np.ndarray] = {}
    check(blocks[0], gens[0], None)
    rest = [(b, g, champ.get("rep")) for b, g in zip(blocks[1:], gens[1:], strict=True)]
    if len(rest) > 1 and defaults.COMPUTE_THREADS > 1:
        with ThreadPoolExecutor(defaults.COMPUTE_THREADS) as pool:
            list(pool.map(lambda a: check(*a), rest))  # each block's replicates end with it
    else:
        for a in rest:
            check(*a)
    return out


#: The statistics of the ppp-values, in :data:`CHECKS`' names.
_STATS = ("mean", "sd", "skewness", "lost")


def _store(out: dict[str, np.ndarray], stat: str, idx: np.ndarray, value: tuple) -> None:
    """Write a block's ``(z, se)`` of ``stat`` (:func:`_ppp`) into ``out``."""
    out[f"z_{stat}"][idx], out[f"se_{stat}"][idx] = value


def _coverage_tails(res: dict[str, np.ndarray], q: float, band: float) -> tuple[np.ndarray, ...]:
    """Binomial tails of the scores outside the central ``q`` interval: estimate, low, high.

    A cell is outside when its PIT is below :math:`(1-q)/2` or above :math:`(1+q)/2`; the
    cells within ``band`` Monte Carlo SEs of a limit may fall either way, so the count
    ranges from the certain ones to all of them, and the tail from ``low`` to ``high``.
    """
    lo, hi = (1 - q) / 2, (1 + q) / 2
    pit, se = res["pit"], band * res["pit_se"]
    with np.errstate(invalid="ignore"):
        outside = ((pit < lo) | (pit > hi)).sum(axis=1)
        surely = ((pit < lo - se) | (pit > hi + se)).sum(axis=1)
        maybe = ((pit < lo + se) | (pit > hi - se)).sum(axis=1)
    p_out = 1 - q
    tail = _binom_tail(outside, res["n"], p_out)
    return tail, _binom_tail(maybe, res["n"], p_out), _binom_tail(surely, res["n"], p_out)


def _classify(
    res: dict[str, np.ndarray], alpha_ppp: float, alpha_coverage: float, band: float
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """Failed and borderline checks of each system (names from :data:`CHECKS`).

    A check fails when its p-value is below its cut-off even at the upper end of its
    Monte Carlo interval (``band`` SEs of the z-score, or the coverage cells that may
    fall either way), and is borderline when the interval straddles the cut-off.
    """
    z_cut = float(special.ndtri(alpha_ppp))
    fail: dict[str, np.ndarray] = {}
    near: dict[str, np.ndarray] = {}
    for q, check in ((0.95, "coverage_95"), (0.5, "coverage_50")):
        _, low, high = _coverage_tails(res, q, band)
        fail[check] = high < alpha_coverage
        near[check] = (low < alpha_coverage) & ~fail[check]
    for stat in _STATS:
        z, se = res[f"z_{stat}"], res[f"se_{stat}"]
        tail = -np.abs(z) if stat in _TWO_SIDED else z  # the nearer tail of two-sided checks
        tail = np.nan_to_num(tail, nan=0.0)  # undefined (the champion's "lost"): passes
        se = np.nan_to_num(se, nan=0.0)
        fail[stat] = tail + band * se < z_cut
        near[stat] = (tail - band * se < z_cut) & ~fail[stat]
    n_s = len(res["n"])
    for name in _MASSES.values():  # exact 0s and 1s, two-sided (families with point masses)
        below, above = res.get(f"low_{name}"), res.get(f"high_{name}")
        if below is None or above is None:
            fail[name] = near[name] = np.zeros(n_s, bool)
            continue
        tail = np.minimum(np.nan_to_num(below, nan=1.0), np.nan_to_num(above, nan=1.0))
        fail[name], near[name] = tail < alpha_ppp, np.zeros(n_s, bool)
    failed = [tuple(c for c in CHECKS if fail[c][j]) for j in range(n_s)]
    borderline = [tuple(c for c in CHECKS if near[c][j]) for j in range(n_s)]
    return failed, borderline


def _mid_p(res: dict[str, np.ndarray], name: str, n_systems: int) -> np.ndarray:
    """Mid-p value of a count of exact values: P(X > k) + P(X = k) / 2 (NaN when unchecked)."""
    low, high = res.get(f"low_{name}"), res.get(f"high_{name}")
    if low is None or high is None:
        return np.full(n_systems, np.nan)
    return 0.5 * (1.0 + high - low)


def _effective_draws(post: xr.Dataset, n: int) -> float:
    r"""Effective number of ``n`` draws picked at random from the fit's draws.

    :math:`1 / ((1 - n/N)/n + 1/\mathrm{ESS})`, with :math:`N` the fit's draws and ESS
    the smallest bulk ESS of its scalar hyperparameters (capped at :math:`N`; :math:`N`
    when undefined, e.g. draws that do not vary): the variance of a mean over the subset
    is that of subsampling plus that of the fit's own draws. Equal to ``n`` for
    independent draws (the exact sampler).
    """
    total = post.sizes["chain"] * post.sizes["draw"]
    names = [v for v in ("b0", "sigma", "sigma_topic", "sigma_system") if v in post]
    scalars = [post[v] for v in names if post[v].dims == ("chain", "draw")]
    ess = float(total)
    if scalars and post.sizes["draw"] >= 4:
        stacked = np.stack([np.asarray(v.values, dtype=float) for v in scalars], axis=-1)
        values = draw_diagnostics(stacked)["ess_bulk"].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        ess = min(float(total), float(values.min())) if values.size else float(total)
    return 1.0 / ((1.0 - n / total) / n + 1.0 / ess)


def check_model(
    fit: Any,
    *,
    n_draws: int | None = None,
    seed: int | None = None,
    alpha_ppp: float = ALPHA_PPP,
    alpha_coverage: float = ALPHA_COVERAGE,
    systems: list[str] | None = None,
) -> ModelCheck:
    r"""Posterior predictive checks of every system of a hierarchical fit.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit`, or its ``DataTree`` (groups
        ``posterior`` and ``observed_data``; without the latter, ``fit.table`` is read).
    n_draws
        Posterior draws to replicate from in the first pass (default :data:`N_DRAWS`, or
        :data:`MAX_REPLICATES` / observed cells when that is smaller, but at least
        :data:`MIN_DRAWS`; all when the fit has fewer); a seeded random subset. The
        champion and challengers with a check within :data:`RECHECK_Z` Monte Carlo SEs of
        its cut-off are checked again on up to :data:`RECHECK_REPLICATES` / their cells
        draws.
    seed
        Seed of the subsets and the replicates (default :data:`bayes_ir.defaults.SEED`).
    alpha_ppp, alpha_coverage
        Thresholds of the flagging rule (module docstring); the defaults are calibrated.
    systems
        Systems to check (default: all, unless draws x observed cells exceed
        :data:`MAX_REPLICATES` at :data:`MIN_DRAWS` draws: then the champion, the
        challengers and a seeded random subset of the artifact runs that fits). Each
        system's checks use its own scores and replicates (and the champion's, for
        ``lost``), so a subset flags what the full check flags on those systems.

    Returns
    -------
    ModelCheck

    Notes
    -----
    For a draw :math:`i` the cell mean is :math:`\mu^{(i)}_{ts} = b^{(i)}_0 + a^{(i)}_t
    + c^{(i)}_s` and the residual distribution :math:`F^{(i)}_{ts}` is normal with SD
    :math:`\sigma^{(i)}` (or :math:`\sigma^{(i)}_s` when the fit has a per-system
    ``sigma``), or skew-normal with that mean, SD and shape :math:`\alpha^{(i)}`. The
    predictive CDF at the observed score is
    :math:`\mathrm{PIT}_{ts} = \frac1n \sum_i F^{(i)}_{ts}(y_{ts})`; a score is inside
    the central :math:`q` interval when :math:`(1-q)/2 \le \mathrm{PIT}_{ts} \le
    (1+q)/2`. One replicate :math:`\tilde y^{(i)}_{ts} = \mu^{(i)}_{ts} + \tilde
    e^{(i)}_{ts}` per draw gives the statistics :math:`T` below; the p-value of each is
    :math:`P(T(\tilde y, \theta) \ge T(y, \theta))`, the probability that
    :math:`D^{(i)} = T(\tilde y^{(i)}, \theta^{(i)}) - T(y, \theta^{(i)})` is positive,
    computed as :math:`\Phi(z)`, :math:`z = \bar D / s_D` (normal approximation over
    the draws, so that tails below ``1 / n_draws`` are resolved). :math:`T`: the mean
    of the system's scores; the SD and the skewness :math:`g_1 = m_3 / m_2^{3/2}` of its
    residuals :math:`y_{ts} - \mu^{(i)}_{ts}` (replicated: :math:`\tilde e^{(i)}_{ts}`);
    the share of topics with :math:`y_{ts} < y_{t,\text{champion}}` (replicated jointly
    with the champion). Missing cells are left out of every statistic.

    Monte Carlo error. The draws are a random subset of the fit's, so their effective
    number is :math:`n_{eff} = 1/((1 - n/N)/n + 1/\mathrm{ESS})` (:math:`N` draws of
    ESS :math:`\mathrm{ESS}`; :math:`n` for the exact sampler). The SE of :math:`z` is
    the delta-method SE of a ratio of moments, :math:`\mathrm{sd}(u_i - \tfrac{z}{2}
    (u_i^2 - 1))/\sqrt{n_{eff}}` with :math:`u_i = (D^{(i)} - \bar D)/s_D` (Casella
    and Berger 2002, section 5.5.4), and that of the p-value :math:`\varphi(z)` times it
    (``ppp_*_mcse``). A PIT's SE is the SD of :math:`F^{(i)}_{ts}(y_{ts})` over
    :math:`\sqrt{n_{eff}}`. A check fails when the p-value at :math:`z` plus
    :data:`BORDERLINE_Z` SEs (for a coverage check: counting only the cells outside their
    interval by more than that many SEs of their PIT) is still below the cut-off, and is
    borderline when the p-value at :math:`z` minus that many SEs is below it.

    References
    ----------
    Gelman, A., Meng, X.-L., and Stern, H. (1996). Posterior predictive assessment of
    model fitness via realized discrepancies. *Statistica Sinica* 6(4), 733-760.

    Casella, G., and Berger, R. L. (2002). *Statistical Inference*, 2nd ed. Duxbury,
    section 5.5.4 (the delta method).
    """
    from bayes_ir.hierarchical.contrasts import _data_names, _posterior, _tree

    seed = defaults.SEED if seed is None else int(seed)
    post = _posterior(fit)
    tree = _tree(fit)
    if "observed_data" in tree.children:
        observed = tree["observed_data"].to_dataset()["score"]
    elif getattr(fit, "table", None) is not None:
        observed = fit.table.matrix()
    else:
        raise TypeError("check_model needs the observed scores (an 'observed_data' group)")
    observed = observed.transpose("topic", "system").sel(topic=post["topic"].values)
    total = post.sizes["chain"] * post.sizes["draw"]
    if n_draws is None:
        n_draws = _draws_for(int(np.isfinite(observed.values).sum()))
    n = min(total, int(n_draws))
    n_all = observed.sizes["system"]
    if systems is None:
        systems = _default_subset(observed, n, seed)
    observed = observed.sel(system=list(systems))
    y = np.asarray(observed.values, dtype=float)
    per_system = np.isfinite(y).sum(axis=0)
    systems = [str(s) for s in observed["system"].values]
    roles = [str(r) for r in observed["role"].values] if "role" in observed.coords else []
    roles = roles or [""] * len(systems)
    likelihood = str(
        getattr(fit, "likelihood", "") or ("skew_normal" if "alpha" in post else "gaussian")
    )
    champion = roles.index("champion") if "champion" in roles else None
    family = family_of(fit) if hasattr(fit, "provenance") else get_family(likelihood)
    positions = {str(s): j for j, s in enumerate(post["system"].values)}
    args = (post, family, [positions[s] for s in systems], y)
    res = _replicate(*args, np.arange(len(systems)), champion, n, total, [seed, 0xADE])
    used = np.full(len(systems), n)
    _, near = _classify(res, alpha_ppp, alpha_coverage, RECHECK_Z)
    again = [j for j in range(len(systems)) if near[j] and roles[j] != "artifact"]
    if again:  # near a cut-off: more draws for these systems (the champion first, for "lost")
        idx = np.array(([] if champion is None or champion in again else [champion]) + again)
        more = min(total, max(n, RECHECK_REPLICATES // max(int(per_system[idx].sum()), 1)))
        if more > n:
            chosen = idx.tolist().index(champion) if champion is not None else None
            sub = _replicate(*args, idx, chosen, more, total, [seed, 0xADE, 1])
            for key, value in res.items():
                value[idx] = sub[key]
            used[idx] = more
    return ModelCheck(
        frame=_check_frame(res, systems, roles, used, alpha_ppp, alpha_coverage),
        likelihood=likelihood,
        n_draws=n,
        seed=seed,
        alpha_ppp=float(alpha_ppp),
        alpha_coverage=float(alpha_coverage),
        collection=_data_names(fit)["collection"],
        measure=_data_names(fit)["measure"],
        n_unchecked=n_all - len(systems),
    )


def _check_frame(
    res: dict[str, np.ndarray],
    systems: list[str],
    roles: list[str],
    used: np.ndarray,
    alpha_ppp: float,
    alpha_coverage: float,
) -> pd.DataFrame:
    """Return the rows of a :class:`ModelCheck` from the arrays of :func:`_check_arrays`.

    ``used`` is the number of draws each system was checked on; the flagging rule is
    :func:`_classify`'s with :data:`BORDERLINE_Z`.
    """
    failed, borderline = _classify(res, alpha_ppp, alpha_coverage, BORDERLINE_Z)
    frame = pd.DataFrame(
        {
            "system": systems,
            "role": roles,
            "n_topics": res["n"].astype(int),
            "n_draws": used,
            "coverage_50": res["c50"],
            "coverage_95": res["c95"],
            "p_coverage_50": _coverage_tails(res, 0.5, 0.0)[0],
            "p_coverage_95": _coverage_tails(res, 0.95, 0.0)[0],
            **{f"ppp_{s}": special.ndtr(res[f"z_{s}"]) for s in _STATS},
            **{f"ppp_{s}_mcse": _p_mcse(res[f"z_{s}"], res[f"se_{s}"]) for s in _STATS},
            "flagged": [bool(f) for f in failed],
            "failed_checks": [", ".join(f) for f in failed],
            "borderline": [bool(b) for b in borderline],
            "borderline_checks": [", ".join(b) for b in borderline],
            **{
                f"{kind}_{name}": res.get(f"{kind}_{name}", np.full(len(systems), np.nan))
                for name in _MASSES.values()
                for kind in ("share", "pred")
            },
            **{f"ppp_{name}": _mid_p(res, name, len(systems)) for name in _MASSES.values()},
        }
    )
    return frame[list(MODEL_CHECK_COLUMNS)]


def _draws_for(cells: int) -> int:
    """Draws of the first pass: :data:`MAX_REPLICATES` / cells, from MIN_DRAWS to N_DRAWS."""
    return max(MIN_DRAWS, min(N_DRAWS, MAX_REPLICATES // max(cells, 1)))


def _p_mcse(z: np.ndarray, se: np.ndarray) -> np.ndarray:
    r"""Monte Carlo SE of :math:`\Phi(z)` from that of ``z`` (delta method): phi(z) se."""
    return np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi) * se


def _replicate(
    post: xr.Dataset,
    family: Any,
    positions: list[int],
    y: np.ndarray,
    idx: np.ndarray,
    champion: int | None,
    n: int,
    total: int,
    seed: list[int],
) -> dict[str, np.ndarray]:
    """:func:`_check_arrays` for the systems ``idx`` on a seeded subset of ``n`` draws.

    ``positions`` maps the checked systems to their index in the posterior; ``family``
    gives the cells (:meth:`~bayes_ir.hierarchical.families.Family.cells`); ``champion``
    is the champion's position in ``idx`` (``None``: not among them).
    """
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.choice(total, size=n, replace=False))
    params = family.parameters(post, keep)
    where = np.asarray(positions)[np.asarray(idx)]
    return _check_arrays(
        y[:, idx],
        lambda block: family.cells(params, where[block]),
        n,
        champion,
        rng,
        _effective_draws(post, n),
        family.point_masses,
    )


def _default_subset(observed: xr.DataArray, n_draws: int, seed: int) -> list[str]:
    """Every system, or the champion, the challengers and the artifacts that fit the budget.

    Artifacts are taken in a seeded random order until ``n_draws`` x their observed
    cells would pass :data:`MAX_REPLICATES`; the result keeps the table's order.
    """
    names = [str(s) for s in observed["system"].values]
    cells = np.isfinite(observed.values).sum(axis=0)
    if n_draws * int(cells.sum()) <= MAX_REPLICATES or "role" not in observed.coords:
        return names
    roles = [str(r) for r in observed["role"].values]
    keep = {j for j, r in enumerate(roles) if r != "artifact"}
    budget = MAX_REPLICATES // max(n_draws, 1) - int(cells[sorted(keep)].sum())
    order = np.random.default_rng([seed, 0x5B5]).permutation(len(names))
    for j in order:
        if j not in keep and cells[j] <= budget:
            keep.add(int(j))
            budget -= int(cells[j])
    return [names[j] for j in sorted(keep)]
