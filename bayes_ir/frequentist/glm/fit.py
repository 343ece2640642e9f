r"""Gaussian GLM of per-topic scores, ``score ~ topic + system``, under one link function.

The model of Faggioli, Ferro and Fuhr (2022) for a complete topic x system matrix
:math:`y_{ij}` (topic :math:`i = 1..T`, system :math:`j = 1..S`) is

.. math:: y_{ij} \sim \mathcal N(\mu_{ij}, \phi), \qquad
          g(\mu_{ij}) = \eta_{ij} = \beta_0 + \tau_i + \beta_j,

with treatment coding (:math:`\tau_1 = \beta_1 = 0`, R's default for
``glm(score ~ system + topic, family = gaussian(link = g))``), so the fit has
:math:`p = 1 + (S - 1) + (T - 1)` coefficients and :math:`n - p = (T-1)(S-1)` residual
degrees of freedom. With the identity link it is the two-way ANOVA (randomised
complete block design) used for IR significance testing.

The fit is R's ``glm.fit`` algorithm (iteratively reweighted least squares, Fisher
scoring) written for the two-way dummy design: each iteration solves the
:math:`p \times p` normal equations assembled in :math:`O(TS + p^2)` from the
weight matrix (the blocks are ``diag`` of row and column sums plus the weight matrix
itself) instead of a dense :math:`n \times p` least-squares solve, then a Cholesky
factorisation. ``method="statsmodels"`` runs ``statsmodels.api.GLM`` on the dense
design instead (slow on large tables; used to cross-check the fast path).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np
import pandas as pd
import scipy.linalg
from scipy import stats

from bayes_ir import defaults, validate
from bayes_ir.errors import (
    ConvergenceError,
    ConvergenceWarning,
    InsufficientDataError,
    ScoreTableError,
)
from bayes_ir.frequentist.glm.links import LinkSpec, get_link
from bayes_ir.table import ScoreTable

__all__ = ["GLMFitResult", "fit_glm"]

Boundary = Literal["clip", "drop_systems", "none"]
Method = Literal["irls", "statsmodels"]

#: Margin that keeps the warm-start means inside the link's mean range.
_START_MARGIN = 0.01
_TINY = np.finfo(float).eps


@dataclass(frozen=True, eq=False)  # array fields: compare explicitly
class GLMFitResult:
    r"""A Gaussian GLM ``score ~ topic + system`` fitted under one link.

    Attributes
    ----------
    link
        Name of the link (see :data:`~bayes_ir.frequentist.glm.links.LINKS`).
    collection, measure
        The block of the score table that was fitted.
    systems, topics
        Factor levels in model order; the first of each is the reference level.
    params
        Coefficients in R's order: ``(Intercept)``, ``system[2..S]``, ``topic[2..T]``.
    param_names
        Labels of ``params`` (``"(Intercept)"``, ``"system[sys2]"``, ``"topic[302]"``, ...).
    cov
        Covariance matrix of ``params``: :math:`\hat\phi (X^\top W X)^{-1}`.
    deviance
        Residual deviance :math:`D = \sum_{ij} (y_{ij} - \hat\mu_{ij})^2`.
    null_deviance
        Deviance of the intercept-only model, :math:`\sum (y_{ij} - \bar y)^2`.
    scale
        Dispersion :math:`\hat\phi = D / (n - p)` (R's ``summary.glm``; for the
        Gaussian family the Pearson and deviance estimates coincide).
    llf
        Log-likelihood at the ML dispersion :math:`D/n` (R's ``logLik.glm``).
    aic, bic
        :math:`-2\ell + 2(p+1)` and :math:`-2\ell + \log(n)(p+1)`; the dispersion counts
        as a parameter, as in R.
    nobs, df_resid
        Number of scores :math:`n = TS` (after dropped systems) and :math:`n - p`.
    iterations
        IRLS iterations until the relative deviance change fell below ``tol``.
    converged
        False when ``maxiter`` was reached first (a :class:`ConvergenceWarning` is emitted).
    message
        What happened: convergence, clipping, dropped systems.
    boundary, epsilon, min_mean
        The boundary handling asked for (see :func:`fit_glm`).
    n_clipped
        Number of scores moved to the link's mean range by clipping.
    dropped_systems
        Systems removed by ``boundary="drop_systems"`` (mean below ``min_mean``).
    response
        The ``(T, S)`` matrix that was fitted (after clipping and dropping).
    fitted
        Fitted means :math:`\hat\mu_{ij}`, same shape.
    method
        ``"irls"`` (structured IRLS) or ``"statsmodels"`` (dense ``statsmodels.api.GLM``).
    """

    link: str
    collection: str
    measure: str
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    params: np.ndarray = field(repr=False)
    param_names: tuple[str, ...] = field(repr=False)
    cov: np.ndarray = field(repr=False)
    deviance: float
    null_deviance: float
    scale: float
    llf: float
    aic: float
    bic: float
    nobs: int
    df_resid: int
    iterations: int
    converged: bool
    message: str
    boundary: str
    epsilon: float
    min_mean: float
    n_clipped: int
    dropped_systems: tuple[str, ...]
    response: np.ndarray = field(repr=False)
    fitted: np.ndarray = field(repr=False)
    method: str = "irls"

    # ---------------------------------------------------------------- derived numbers
    @property
    def n_params(self) -> int:
        """Number of coefficients :math:`p`."""
        return len(self.params)

    @property
    def bse(self) -> np.ndarray:
        """Standard errors of ``params``."""
        return np.sqrt(np.diag(self.cov))

    @property
    def tvalues(self) -> np.ndarray:
        """Wald t statistics ``params / bse``."""
        return self.params / self.bse

    @property
    def pvalues(self) -> np.ndarray:
        """Two-sided p-values of the t statistics on ``df_resid`` degrees of freedom (as R)."""
        return 2.0 * stats.t.sf(np.abs(self.tvalues), self.df_resid)

    @property
    def system_effects(self) -> np.ndarray:
        r"""System coefficients :math:`\beta_1 = 0, \beta_2, \dots, \beta_S` (link scale)."""
        s = len(self.systems)
        return np.concatenate([[0.0], self.params[1:s]])

    def system_cov(self) -> np.ndarray:
        """Covariance of :attr:`system_effects` (zero row and column for the reference)."""
        s = len(self.systems)
        out = np.zeros((s, s))
        out[1:, 1:] = self.cov[1:s, 1:s]
        return out

    def fit_statistics(self) -> dict[str, float | int | bool | str]:
        """Goodness of fit in one dict (the row this link contributes to the comparison)."""
        return {
            "link": self.link,
            "deviance": self.deviance,
            "null_deviance": self.null_deviance,
            "scale": self.scale,
            "llf": self.llf,
            "aic": self.aic,
            "bic": self.bic,
            "nobs": self.nobs,
            "n_params": self.n_params,
            "df_resid": self.df_resid,
            "iterations": self.iterations,
            "converged": self.converged,
            "n_clipped": self.n_clipped,
            "n_dropped": len(self.dropped_systems),
        }

    # ---------------------------------------------------------------- frames
    def to_frame(self) -> pd.DataFrame:
        """Coefficient table with columns ``term, estimate, std_err, t_value, p_value``."""
        return pd.DataFrame(
            {
                "term": list(self.param_names),
                "estimate": self.params,
                "std_err": self.bse,
                "t_value": self.tvalues,
                "p_value": self.pvalues,
            }
        )

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def conf_int(self, *, ci_prob: float | None = None) -> pd.DataFrame:
        r"""Wald intervals :math:`\hat\beta \pm t_{n-p,(1+c)/2}\,\mathrm{se}` of the coefficients.

        Returns
        -------
        pandas.DataFrame
            Columns ``term, estimate, ci_lower, ci_upper`` (link scale).
        """
        prob = defaults.ci_prob(ci_prob)
        half = stats.t.ppf(0.5 + prob / 2.0, self.df_resid) * self.bse
        return pd.DataFrame(
            {
                "term": list(self.param_names),
                "estimate": self.params,
                "ci_lower": self.params - half,
                "ci_upper": self.params + half,
            }
        )

    def cov_params(self) -> pd.DataFrame:
        """Covariance matrix of the coefficients, labelled."""
        return pd.DataFrame(self.cov, index=list(self.param_names), columns=list(self.param_names))

    def tukey(self, *, alpha: float | None = None):
        """Topic-blocked Tukey HSD on this fit's system contrasts (see :func:`.tukey.tukey_hsd`)."""
        from bayes_ir.frequentist.glm.tukey import tukey_hsd

        return tukey_hsd(self, alpha=alpha)

    # ---------------------------------------------------------------- display
    def summary(self) -> str:
        """Printable summary: model, fit statistics, boundary handling, system coefficients."""
        n_t, n_s = len(self.topics), len(self.systems)
        lines = [
            f"Gaussian GLM, link {self.link}: score ~ topic + system "
            f"(collection {self.collection!r}, measure {self.measure!r})",
            f"  {n_t} topics x {n_s} systems = {self.nobs} scores; {self.n_params} coefficients; "
            f"df_resid = {self.df_resid}; fitted by {self.method}",
            f"  Deviance = {self.deviance:.6g} (null {self.null_deviance:.6g}); "
            f"dispersion = {self.scale:.6g}",
            f"  logLik = {self.llf:.6g}; AIC = {self.aic:.6g}; BIC = {self.bic:.6g}",
            f"  IRLS: {self.iterations} iterations, "
            + ("converged" if self.converged else "DID NOT CONVERGE"),
            f"  Boundary: {self.message}",
            "",
            f"System effects (link scale, reference {self.systems[0]!r}):",
        ]
        frame = self.to_frame().iloc[:n_s]
        lines.append(frame.to_string(index=False, float_format=lambda x: f"{x:.6g}", max_rows=40))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.to_frame().iloc[: len(self.systems)].to_html(index=False)

    def plot(self, **kwargs):
        """Observed against fitted scores (see :func:`bayes_ir.plots.glm.plot_glm_fit`)."""
        from bayes_ir.plots.glm import plot_glm_fit

        return plot_glm_fit(self, **kwargs)


# ====================================================================== public entry point
def fit_glm(
    table: ScoreTable,
    *,
    link: str = "logit",
    collection: str | None = None,
    measure: str | None = None,
    boundary: Boundary = "clip",
    epsilon: float | None = None,
    min_mean: float | None = None,
    tol: float | None = None,
    maxiter: int | None = None,
    method: Method = "irls",
) -> GLMFitResult:
    r"""Fit the Gaussian GLM ``score ~ topic + system`` with link ``link``.

    Parameters
    ----------
    table
        Complete scores (every system on every topic) of one collection and measure,
        or pass ``collection=`` and ``measure=`` to pick the block.
    link
        ``"identity"``, ``"log"``, ``"exp"``, ``"tanh"``, ``"logit"``, ``"probit"``,
        ``"cauchit"`` or ``"cloglog"`` (the paper's), or ``"atanh"`` (see
        :mod:`~bayes_ir.frequentist.glm.links`).
    collection, measure
        Block of the table to fit.
    boundary
        What to do with scores on the edge of the link's mean range (0 for log-type
        links, 0 and 1 for logit, probit, cauchit and cloglog, 1 for atanh), which
        make :math:`g(y)` infinite and, when a whole system or topic sits there, push
        its coefficient to :math:`\pm\infty`:

        - ``"clip"`` (default): move those scores to :math:`[lo + \epsilon, hi - \epsilon]`
          of the link's range (identity and exp have no finite ends: untouched). The
          deviance changes by at most :math:`\epsilon (2 + \epsilon)` per clipped score
          of a [0, 1] measure.
        - ``"drop_systems"``: first drop the systems whose mean score is below
          ``min_mean`` (the "without outliers" variant of the paper's Core 18
          analysis), then clip as above. The same systems are dropped for every link.
        - ``"none"``: fit the scores as they are (the warm start keeps IRLS inside
          the link's range, and a Gaussian response may equal a bound). A topic or
          system whose scores *all* sit on a bound has no finite MLE: its coefficient
          diverges while the deviance criterion is still met, so the fit is marked
          ``converged=False`` with the names in ``message`` (reported, not hidden).
    epsilon
        Clipping distance (default :data:`bayes_ir.defaults.GLM_EPSILON`).
    min_mean
        Mean score under which ``"drop_systems"`` drops a system
        (default :data:`bayes_ir.defaults.GLM_MIN_MEAN`).
    tol
        Convergence tolerance on the relative deviance change
        :math:`|D^{(t)} - D^{(t-1)}| / (|D^{(t)}| + 0.1)` (R's ``glm.control`` criterion;
        default :data:`bayes_ir.defaults.GLM_TOL`).
    maxiter
        Iteration cap (default :data:`bayes_ir.defaults.GLM_MAXITER`).
    method
        ``"irls"`` (structured, fast) or ``"statsmodels"`` (dense ``statsmodels.api.GLM``
        with ``Gaussian(link, check_link=False)``, for cross-checks).

    Returns
    -------
    GLMFitResult

    Raises
    ------
    UnknownLinkError
        For an unknown link name.
    ScoreTableError
        For an incomplete matrix (load with ``missing="intersect"``) or several blocks.
    InsufficientDataError
        For fewer than 2 systems or 3 topics (also after dropping systems).

    Warns
    -----
    ConvergenceWarning
        When IRLS reaches ``maxiter`` before converging (``converged`` is then False).

    Notes
    -----
    IRLS for a Gaussian response with link :math:`g` (unit variance function): with
    :math:`d_{ij} = d\mu/d\eta` at the current :math:`\eta`, weights
    :math:`w_{ij} = d_{ij}^2` and working response :math:`z_{ij} = \eta_{ij} +
    (y_{ij} - \mu_{ij}) / d_{ij}`, each step solves :math:`(X^\top W X)\beta =
    X^\top W z`. For the two-way dummy design the normal matrix has the blocks
    :math:`\sum w`, the column sums :math:`w_{\cdot j}` (systems), the row sums
    :math:`w_{i\cdot}` (topics, both diagonal) and :math:`w_{ij}` itself (system-topic
    cross block), so it is assembled without forming :math:`X`. Steps that leave the
    link's domain (``exp`` needs :math:`\eta > 0`, ``tanh`` :math:`|\eta| < 1`) or
    increase the deviance are halved (as R's ``glm.fit`` and ``glm2`` do). The start
    is the identity fit (row mean + column mean - grand mean) moved 0.01 inside the
    link's mean range, projected on the additive model; iteration counts therefore
    differ from R's (which starts from :math:`\mu = y`), the optimum does not. At convergence
    :math:`\operatorname{Cov}(\hat\beta) = \hat\phi (X^\top W X)^{-1}` with
    :math:`\hat\phi = D / (n - p)`, and

    .. math:: \ell = -\tfrac n2\left(\log(2\pi D/n) + 1\right),\quad
              \mathrm{AIC} = -2\ell + 2(p+1),\quad \mathrm{BIC} = -2\ell + \log(n)(p+1),

    which are R's ``logLik``, ``AIC`` and ``BIC`` of a Gaussian ``glm``. (statsmodels'
    ``GLMResults.llf`` uses :math:`\hat\phi` instead of :math:`D/n` for non-identity
    links, so its AIC differs from R's by a constant; bayes_ir follows R.)

    References
    ----------
    Faggioli, G., Ferro, N., and Fuhr, N. (2022). Detecting significant differences
    between information retrieval systems via generalized linear models. In
    *Proceedings of the 31st ACM International Conference on Information & Knowledge
    Management (CIKM '22)*, 446-456. https://doi.org/10.1145/3511808.3557286

    McCullagh, P., and Nelder, J. A. (1989). *Generalized Linear Models* (2nd ed.).
    Chapman and Hall, section 2.5 (IRLS).

    Examples
    --------
    >>> import numpy as np
    >>> from bayes_ir import ScoreTable
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.uniform(0.1, 0.9, size=(8, 4))
    >>> table = ScoreTable.from_matrix(scores, systems=list("abcd"))
    >>> fit = fit_glm(table, link="logit")
    >>> fit.converged, fit.df_resid
    (True, 21)
    """
    spec = get_link(link)
    raw, systems, topics, coll, meas = _matrix(table, collection=collection, measure=measure)
    return _fit_matrix(
        raw,
        systems,
        topics,
        coll,
        meas,
        spec,
        boundary=boundary,
        epsilon=epsilon,
        min_mean=min_mean,
        tol=tol,
        maxiter=maxiter,
        method=method,
    )


def _fit_matrix(
    raw: np.ndarray,
    systems: list[str],
    topics: list[str],
    coll: str,
    meas: str,
    spec: LinkSpec,
    *,
    boundary: str,
    epsilon: float | None,
    min_mean: float | None,
    tol: float | None,
    maxiter: int | None,
    method: str,
) -> GLMFitResult:
    """Fit one link to a validated (T, S) matrix (shared by ``fit_glm`` and the comparison)."""
    eps = defaults.GLM_EPSILON if epsilon is None else epsilon
    eps = validate.finite_float("epsilon", eps, minimum=0.0, maximum=0.5, open_maximum=True)
    floor = defaults.GLM_MIN_MEAN if min_mean is None else min_mean
    floor = validate.finite_float("min_mean", floor, minimum=0.0)
    tol = defaults.GLM_TOL if tol is None else tol
    tol = validate.finite_float("tol", tol, minimum=0.0, open_minimum=True)
    maxiter = defaults.GLM_MAXITER if maxiter is None else maxiter
    maxiter = validate.positive_int("maxiter", maxiter)
    validate.choice("boundary", boundary, ("clip", "drop_systems", "none"))
    validate.choice("method", method, ("irls", "statsmodels"))
    y, systems, dropped, n_clipped, note = _apply_boundary(
        raw, systems, spec, boundary=boundary, epsilon=eps, min_mean=floor, where=(coll, meas)
    )
    if method == "irls":
        core = _irls(y, spec, tol=tol, maxiter=maxiter)
    else:
        core = _statsmodels_fit(y, spec, tol=tol, maxiter=maxiter)
    params, cov_unscaled, fitted, iterations, converged, detail = core
    diverged = _on_boundary(y, spec, systems, topics)
    if diverged:
        converged, detail = False, diverged
    t_n, s_n = y.shape
    n = y.size
    p = len(params)
    df_resid = n - p
    deviance = float(np.sum((y - fitted) ** 2))
    null_dev = float(np.sum((y - y.mean()) ** 2))
    scale = deviance / df_resid
    llf = -0.5 * n * (math.log(2.0 * math.pi * deviance / n) + 1.0) if deviance > 0 else math.inf
    aic = -2.0 * llf + 2.0 * (p + 1)
    bic = -2.0 * llf + math.log(n) * (p + 1)
    names = (
        ["(Intercept)"]
        + [f"system[{s}]" for s in systems[1:]]
        + [f"topic[{t}]" for t in topics[1:]]
    )
    status = (
        f"converged in {iterations} iterations"
        if converged
        else f"did not converge in {iterations} iterations ({detail})"
    )
    if not converged:
        warnings.warn(
            f"GLM with the {spec.name} link on collection {coll!r}, measure {meas!r} {status}; "
            "fitted means may sit on the link's boundary: try boundary='clip' or "
            "boundary='drop_systems', or a larger maxiter",
            ConvergenceWarning,
            stacklevel=3,
        )
    return GLMFitResult(
        link=spec.name,
        collection=coll,
        measure=meas,
        systems=tuple(systems),
        topics=tuple(topics),
        params=params,
        param_names=tuple(names),
        cov=scale * cov_unscaled,
        deviance=deviance,
        null_deviance=null_dev,
        scale=scale,
        llf=llf,
        aic=aic,
        bic=bic,
        nobs=n,
        df_resid=df_resid,
        iterations=iterations,
        converged=converged,
        message=f"{note}; {status}",
        boundary=boundary,
        epsilon=eps,
        min_mean=floor,
        n_clipped=n_clipped,
        dropped_systems=tuple(dropped),
        response=y,
        fitted=fitted,
        method=method,
    )


# ====================================================================== data preparation
def _matrix(
    table: ScoreTable, *, collection: str | None, measure: str | None
) -> tuple[np.ndarray, list[str], list[str], str, str]:
    if not isinstance(table, ScoreTable):
        raise ScoreTableError(
            f"fit_glm needs a ScoreTable, got {type(table).__name__} "
            "(build one with bayes_ir.read_scores or ScoreTable.from_frame)"
        )
    da = table.matrix(collection=collection, measure=measure)
    values = np.asarray(da.to_numpy(), dtype=float)
    coll, meas = str(da.attrs["collection"]), str(da.attrs["measure"])
    if np.isnan(values).any():
        i, j = np.argwhere(np.isnan(values))[0]
        raise ScoreTableError(
            f"the GLM needs every system scored on every topic; system {da.system.values[j]!r} "
            f"has no score for topic {da.topic.values[i]!r} (collection {coll!r}, measure "
            f"{meas!r}); load the scores with missing='intersect'",
            source=table.source,
        )
    systems = [str(s) for s in da.system.values]
    topics = [str(t) for t in da.topic.values]
    _check_size(len(systems), len(topics), coll, meas)
    if np.ptp(values) <= 1e-12 * np.abs(values).max():
        raise InsufficientDataError(
            f"every score is {values.flat[0]:g} (collection {coll!r}, measure {meas!r}): "
            "with no variance the GLM has nothing to explain and no pair of systems can differ"
        )
    return values, systems, topics, coll, meas


def _check_size(n_systems: int, n_topics: int, coll: str, meas: str) -> None:
    if n_systems < 2:
        raise InsufficientDataError(
            f"the GLM comparison needs at least 2 systems; collection {coll!r}, measure "
            f"{meas!r} has {n_systems}"
        )
    validate.require_topics(
        n_topics,
        defaults.MIN_TOPICS_GLM,
        method="the GLM comparison",
        where=f"collection {coll!r}, measure {meas!r}",
    )


def _apply_boundary(
    raw: np.ndarray,
    systems: list[str],
    spec: LinkSpec,
    *,
    boundary: str,
    epsilon: float,
    min_mean: float,
    where: tuple[str, str],
) -> tuple[np.ndarray, list[str], list[str], int, str]:
    y = raw
    dropped: list[str] = []
    notes = []
    if boundary == "drop_systems":
        means = raw.mean(axis=0)
        keep = means >= min_mean
        dropped = [s for s, k in zip(systems, keep, strict=True) if not k]
        y = raw[:, keep]
        systems = [s for s, k in zip(systems, keep, strict=True) if k]
        _check_size(len(systems), raw.shape[0], *where)
        notes.append(
            f"dropped {len(dropped)} system(s) with mean < {min_mean:g}"
            + (
                f" ({', '.join(dropped[:8])}{', ...' if len(dropped) > 8 else ''})"
                if dropped
                else ""
            )
        )
    n_clipped = 0
    if boundary in ("clip", "drop_systems"):
        lo, hi = spec.mean_range
        lo_c = lo + epsilon if np.isfinite(lo) else -np.inf
        hi_c = hi - epsilon if np.isfinite(hi) else np.inf
        clipped = np.clip(y, lo_c, hi_c)
        n_clipped = int(np.count_nonzero(clipped != y))
        y = clipped
        if np.isfinite(lo) or np.isfinite(hi):
            notes.append(
                f"clipped {n_clipped} score(s) into [{lo_c:g}, {hi_c:g}] (epsilon {epsilon:g})"
            )
        else:
            notes.append(f"no clipping needed (the {spec.name} link has no finite mean bound)")
    else:
        notes.append("scores fitted as they are (boundary='none')")
    return np.ascontiguousarray(y, dtype=float), systems, dropped, n_clipped, "; ".join(notes)


# ====================================================================== numeric kernels
def _additive(theta: np.ndarray, n_topics: int, n_systems: int) -> np.ndarray:
    """Linear predictor matrix of treatment-coded coefficients."""
    sys_eff = np.concatenate([[0.0], theta[1:n_systems]])
    top_eff = np.concatenate([[0.0], theta[n_systems:]])
    return theta[0] + top_eff[:, None] + sys_eff[None, :]


@overload
def _reduced_solve(
    w: np.ndarray, wz: np.ndarray, *, inverse: Literal[False] = False
) -> tuple[np.ndarray, None]: ...
@overload
def _reduced_solve(
    w: np.ndarray, wz: np.ndarray, *, inverse: Literal[True]
) -> tuple[np.ndarray, np.ndarray]: ...
def _reduced_solve(
    w: np.ndarray, wz: np.ndarray, *, inverse: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """Solve the weighted normal equations of the two-way treatment-coded design.

    ``w`` and ``wz`` are (T, S) arrays of weights and weighted working responses. The
    normal matrix has a diagonal block for the levels of one factor; that factor (the
    one with more levels) is eliminated by its Schur complement, so the dense solve
    is only ``min(S, T) x min(S, T)``. Returns the coefficients in R's order
    (intercept, systems 2..S, topics 2..T) and, if asked, the inverse normal matrix.
    """
    t_n, s_n = w.shape
    swap = s_n > t_n  # eliminate the factor with more levels
    if swap:
        w, wz = w.T, wz.T
    e_n, k_n = w.shape  # eliminated factor along rows, kept factor along columns
    col, row = w.sum(axis=0), w.sum(axis=1)
    zcol, zrow = wz.sum(axis=0), wz.sum(axis=1)
    # kept block u = [intercept, kept[2..K]], eliminated block e = eliminated[2..E]
    a_uu = np.diag(np.concatenate([[col.sum()], col[1:]]))
    a_uu[0, 1:] = col[1:]
    a_uu[1:, 0] = col[1:]
    b = np.vstack([row[1:], w[1:, 1:].T])  # (K, E-1)
    d = row[1:]
    bd = b / d
    m = a_uu - bd @ b.T
    rhs = np.concatenate([[zcol.sum()], zcol[1:]]) - bd @ zrow[1:]
    factor = scipy.linalg.cho_factor(m, check_finite=True)
    u = scipy.linalg.cho_solve(factor, rhs)
    e = (zrow[1:] - b.T @ u) / d
    if swap:  # kept = [intercept, topics], eliminated = systems
        theta = np.concatenate([[u[0]], e, u[1:]])
    else:
        theta = np.concatenate([u, e])
    if not inverse:
        return theta, None
    inv_uu = scipy.linalg.cho_solve(factor, np.eye(k_n))
    inv_ue = -inv_uu @ bd
    inv_ee = np.diag(1.0 / d) + bd.T @ inv_uu @ bd
    p = k_n + e_n - 1
    full = np.empty((p, p))
    if swap:
        order = np.concatenate([[0], np.arange(e_n, p), np.arange(1, e_n)])
    else:
        order = np.arange(p)
    blocks = np.block([[inv_uu, inv_ue], [inv_ue.T, inv_ee]])
    full[np.ix_(order, order)] = blocks
    return theta, full


def _project(eta: np.ndarray) -> np.ndarray:
    """Least-squares projection of a (T, S) matrix on the additive model, as coefficients."""
    # fitted_ij = row_i + col_j - mean; re-expressed with the first levels as reference
    row, col, mean = eta.mean(axis=1), eta.mean(axis=0), eta.mean()
    return np.concatenate([[row[0] + col[0] - mean], col[1:] - col[0], row[1:] - row[0]])


def _on_boundary(y: np.ndarray, spec: LinkSpec, systems: list[str], topics: list[str]) -> str:
    r"""Name the systems/topics whose scores all sit on or beyond a bound of the link's range.

    For such a system (or topic) the score equation :math:`\sum_i (y_{ij} - \mu_{ij})
    \partial\mu_{ij}/\partial\eta_{ij} = 0` has no finite root (every residual has the
    same sign for every interior mean), so its coefficient diverges. IRLS still meets
    the relative deviance criterion, because the deviance contribution of means that
    approach the bound vanishes: the fit must be flagged from the data.
    """
    lo, hi = spec.mean_range
    out = np.zeros(y.shape, dtype=bool)
    if np.isfinite(lo):
        out |= y <= lo
    if np.isfinite(hi):
        out_hi = y >= hi
    else:
        out_hi = np.zeros(y.shape, dtype=bool)
    where = []
    for mask, bound in ((out, lo), (out_hi, hi)):
        cols = [s for s, flag in zip(systems, mask.all(axis=0), strict=True) if flag]
        rows = [t for t, flag in zip(topics, mask.all(axis=1), strict=True) if flag]
        if cols:
            where.append(f"system(s) {', '.join(cols[:5])} (every score at {bound:g})")
        if rows:
            where.append(f"topic(s) {', '.join(rows[:5])} (every score at {bound:g})")
    if not where:
        return ""
    return (
        f"no finite MLE under the {spec.name} link for {' and '.join(where)}: "
        "their coefficients diverge; use boundary='clip' or 'drop_systems'"
    )


def _start(y: np.ndarray, spec: LinkSpec) -> np.ndarray:
    """Coefficients of the warm start: identity fit, moved inside the mean range, projected."""
    link = spec.make()
    mu0 = y.mean(axis=1, keepdims=True) + y.mean(axis=0, keepdims=True) - y.mean()
    lo, hi = spec.mean_range
    if np.isfinite(lo) or np.isfinite(hi):
        width = (hi - lo) if np.isfinite(hi - lo) else 1.0
        margin = _START_MARGIN * min(width, 1.0)
        mu0 = np.clip(mu0, lo + margin if np.isfinite(lo) else -np.inf,
                      hi - margin if np.isfinite(hi) else np.inf)  # fmt: skip
    with np.errstate(all="ignore"):
        theta = _project(np.asarray(link(mu0), dtype=float))
    eta = _additive(theta, *y.shape)
    if not spec.valid_eta(eta):
        # the projection left the domain (possible for exp): start from the grand mean
        with np.errstate(all="ignore"):
            const = float(link(np.clip(np.mean(mu0), lo + _START_MARGIN, hi - _START_MARGIN)))
        theta = np.zeros_like(theta)
        theta[0] = const
    return theta


def _irls(
    y: np.ndarray, spec: LinkSpec, *, tol: float, maxiter: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool, str]:
    """Run the structured IRLS; return params, unscaled cov, fitted, iterations, flags."""
    link = spec.make()
    t_n, s_n = y.shape
    theta = _start(y, spec)
    eta = _additive(theta, t_n, s_n)
    with np.errstate(all="ignore"):
        mu = link.inverse(eta)
    dev_old = float(np.sum((y - mu) ** 2))
    converged = False
    change = math.inf
    iterations = 0
    detail = ""
    for iterations in range(1, maxiter + 1):  # noqa: B007  (used after the loop)
        with np.errstate(all="ignore"):
            d = np.asarray(link.inverse_deriv(eta), dtype=float)
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        w = d * d
        z = eta + (y - mu) / d
        try:
            new, _ = _reduced_solve(w, w * z)
        except (np.linalg.LinAlgError, ValueError):
            detail = "singular normal equations: the IRLS weights vanished at the boundary"
            break
        dev = math.inf
        for _ in range(40):  # step halving: leave no domain, never increase the deviance
            eta_new = _additive(new, t_n, s_n)
            if spec.valid_eta(eta_new):
                with np.errstate(all="ignore"):
                    mu_new = link.inverse(eta_new)
                dev = float(np.sum((y - mu_new) ** 2))
                if np.isfinite(dev) and dev <= dev_old * (1.0 + 1e-12):
                    break
            new = (new + theta) / 2.0
        else:
            detail = "step halving could not decrease the deviance"
            break
        theta, eta, mu = new, eta_new, mu_new
        change = abs(dev - dev_old) / (abs(dev) + 0.1)
        dev_old = dev
        if change < tol:
            converged = True
            break
    if not converged and not detail:
        detail = f"relative deviance change {change:.2g} > tol {tol:g}"
    with np.errstate(all="ignore"):
        d = np.asarray(link.inverse_deriv(eta), dtype=float)
    d = np.where(np.abs(d) < _TINY, _TINY, d)
    try:
        _, cov = _reduced_solve(d * d, d * d, inverse=True)
    except (np.linalg.LinAlgError, ValueError):
        cov = np.full((len(theta), len(theta)), np.nan)
        converged = False
        detail = detail or "singular information matrix at the solution"
    return theta, cov, mu, iterations, converged, detail


def _design(t_n: int, s_n: int) -> np.ndarray:
    """Dense treatment-coded design, rows in C order of the (T, S) matrix."""
    topic = np.repeat(np.arange(t_n), s_n)
    system = np.tile(np.arange(s_n), t_n)
    x = np.zeros((t_n * s_n, s_n + t_n - 1))
    x[:, 0] = 1.0
    rows = np.arange(t_n * s_n)
    mask = system > 0
    x[rows[mask], system[mask]] = 1.0
    mask = topic > 0
    x[rows[mask], s_n - 1 + topic[mask]] = 1.0
    return x


def _statsmodels_fit(
    y: np.ndarray, spec: LinkSpec, *, tol: float, maxiter: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool, str]:
    """Dense ``statsmodels.api.GLM`` fit of the same model (cross-check of :func:`_irls`)."""
    import statsmodels.api as sm

    t_n, s_n = y.shape
    family = sm.families.Gaussian(link=spec.make(), check_link=False)
    start = _start(y, spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.GLM(y.ravel(), _design(t_n, s_n), family=family).fit(
            start_params=start, tol=tol, maxiter=maxiter
        )
    converged = bool(res.converged)
    detail = "" if converged else "statsmodels reports no convergence"
    cov = np.asarray(res.cov_params()) / res.scale
    iterations = int(res.fit_history["iteration"])
    fitted = np.asarray(res.fittedvalues).reshape(t_n, s_n)
    if not spec.valid_eta(_additive(np.asarray(res.params), t_n, s_n)):
        raise ConvergenceError(f"statsmodels left the domain of the {spec.name} link")
    return np.asarray(res.params), cov, fitted, iterations, converged, detail
