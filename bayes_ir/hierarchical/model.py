r"""The crossed topic x system model of Benham et al. (2020), built in PyMC.

.. math::

    y_{ts} = b_0 + a_t + c_s + e_{ts}, \quad
    a \sim \mathrm{ZeroSumNormal}(\tau), \quad
    c \sim \mathrm{ZeroSumNormal}(\chi), \quad
    e_{ts} \sim N(0, \sigma^2) \text{ or skew-normal with mean 0, SD } \sigma,
    \text{ shape } \alpha,

with one residual SD :math:`\sigma` (``sigma="pooled"``) or one per system,
:math:`\sigma_s` with :math:`\log\sigma_s = \log\sigma_{typ} + \lambda z_s`,
:math:`z` a standard ZeroSumNormal (``sigma="system"``).

With ``pooling="artifacts"`` only the artifact runs :math:`A` are pooled: the means
:math:`\mu_s` of the champion and the challengers have flat priors (unpooled, fixed
effects), :math:`\mu_s = m + c_s` for :math:`s \in A` with a flat centre :math:`m` and
:math:`c_A \sim \mathrm{ZeroSumNormal}(\chi)`; :math:`b_0` is the mean of all
:math:`\mu_s` and :math:`c_s = \mu_s - b_0` (see :func:`build_model`).

``topic_effect`` (:math:`a`, dim ``topic``) and ``system_effect`` (:math:`c`, dim
``system``) are zero-sum effects: a system effect
is the deviation of a system's mean from the *average of the systems in the model*
(champion, challengers and artifacts), and :math:`b_0` is that average. Contrasts
between systems (challenger minus champion) do not depend on this choice; the
zero-sum form removes the ridge between :math:`b_0` and the mean of the effects that
kills the effective sample size of the centred and non-centred forms.

For a complete matrix with the Gaussian likelihood the log-likelihood is written in
terms of sufficient statistics (grand total, topic sums, system sums, sum of
squares); it equals the observation-wise likelihood exactly (value and gradient),
costs O(T + S) per evaluation instead of O(TS), and is what NUTS samples.

Skew-normal likelihood (issue 8). Three choices make it sample well:

* The shape is sampled as the *magnitude* of the skewness, ``abs_skewness``
  :math:`m = |\gamma_1|`, and its sign :math:`s` is summed out exactly:
  :math:`p(\theta, m \mid y) \propto p(\theta)\,\tfrac12[L(\theta, +m) +
  L(\theta, -m)]`. The prior is unchanged (Uniform(-g, g) on the skewness is the
  same as Uniform(0, g) on :math:`m` with a fair sign). After sampling,
  :func:`draw_skewness_sign` draws :math:`s` from its exact conditional
  :math:`P(s=+1 \mid \theta, m, y) = L_+/(L_+ + L_-)` (the deterministic
  ``skew_sign_logodds`` holds :math:`\log L_+ - \log L_-` per draw), so the
  reported ``skewness`` and ``alpha`` are draws of the same joint posterior. Why: on
  rb04 the likelihood has a local *minimum* at :math:`\alpha = 0` and the posterior
  of the skewness is bimodal (modes near -0.15 and +0.09, with a cusp at 0), which
  NUTS crosses rarely; folding the sign raised the ESS of ``alpha`` per draw 2.5-3x.
  Folding does not merge the two signs' modes in the other parameters: with many
  cells each sign has a sharp mode of its own (on Robust04 AP at skewness +0.17 and
  -0.13, 46 nats apart) and a chain started in the basin of the lesser one stays
  there, so the sampler starts its chains at the higher
  (:func:`~bayes_ir.hierarchical.skewnormal_kernel.sign_modes`). When the higher mode
  is 30 nats or more above the other (:data:`~bayes_ir.hierarchical.sampling.SIGN_SETTLED`),
  the other sign's term is below :math:`e^{-30}` of the sum wherever the chains go, and
  the sampler evaluates the higher sign's term only, at half the cost; the sign
  log-odds of every draw is checked, and a run where it fell below 30 is redone with
  both signs. Below 30 nats the kernel's sampler evaluates each sign's term at a point
  of its own, the sampler's coordinates shifted by half the modes' difference one way
  for + and the other for - (a translation per sign, so the same joint posterior;
  :func:`~bayes_ir.hierarchical.skewnormal_kernel.mode_shift`): the two modes coincide
  and the sign is drawn afresh at every draw (on rb04 the ESS of the skewness tripled).
* With a complete matrix the likelihood is evaluated on the topic x system matrix by
  broadcasting (``score_matrix``), not through index vectors, and both signs in one
  fused loop; :math:`\log\Phi` uses one ``erfc`` per cell
  (:func:`~bayes_ir.hierarchical.skewnormal.log_ndtr`).
* The system effects are non-centred (``system_effect = sigma_system * system_z``,
  ``system_z`` a standard ZeroSumNormal) when the data leave them uncertain relative
  to their spread: with small :math:`\chi` the centred form has a funnel; on rb04
  this raised the bulk (tail) ESS of ``sigma_system`` 1.2x (1.8x). When every system
  is measured on many topics (Robust04: 249) the data pin each effect down and the
  non-centred form turns into a curved ridge between ``sigma_system`` and
  ``system_z``, so they are centred there (:func:`centred_systems`). The Gaussian
  model is untouched (centred; it is usually sampled exactly anyway).

What the system effects mean (issue 14). In both likelihoods :math:`b_0 + a_t + c_s`
is the *mean* of score :math:`y_{ts}` (brms' mean/SD parameterisation; the
skew-normal's location :math:`\xi` is derived from it, see
:func:`~bayes_ir.hierarchical.skewnormal.skewnormal_location_scale`), so a contrast
:math:`c_s - c_0` is a difference of the model's predictive means, never of location
parameters; the summed-out sign changes nothing here (one global sign, drawn after
sampling). But the model has *one* shape and *one* residual SD for all systems, and
the mean it estimates for a system is the mean of that shared distribution fitted to
the system's scores, which equals the system's observed mean only when the shape
fits. On the example data (``data/example_scores.csv``) the errors of most systems
skew right (posterior skewness +0.59) while ``chal_risky``'s skew left (sample
skewness -1.08) with 2.3x the residual SD: a right-skewed density with the pooled SD
has a thin left tail (it decays like :math:`e^{-(1+\alpha^2) z^2/2}`), so the
likelihood pulls ``chal_risky``'s mean down to cover its large losses. Its contrast
falls from +0.066 (Gaussian) to -0.006 (skew-normal) against +0.072 observed; the
profile maximum of its effect with the other parameters at their posterior means
lies at the same place (-0.019 against -0.017), while fitting that system's own SD
and shape gives +0.052 (observed mean minus :math:`b_0`: +0.055). This is model
misfit, not a coding defect: :func:`~bayes_ir.hierarchical.mean_difference_check`
detects it (p < 0.001 for ``chal_risky`` under the skew-normal, 0.74 under the
Gaussian), and ``likelihood="auto"`` does not choose a candidate that fails it.
``sigma="system"`` (one residual SD per system, brms ``sigma ~ system``) removes the
pull of the wide system on the others.

This PyMC model is the definition of the skew-normal model and what ``sampler="pymc"``
samples; nutpie samples the same log density through the hand-written numba kernel of
:mod:`bayes_ir.hierarchical.skewnormal_kernel`, whose value and gradient are tested
against this model's (it compiles once per machine instead of once per process).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr

from bayes_ir import defaults, validate
from bayes_ir.errors import BayesIRError, InsufficientDataError, ScoreTableError
from bayes_ir.hierarchical.priors import Priors, autoscale_priors
from bayes_ir.hierarchical.skewnormal import skewness_to_alpha, skewnormal_logpdf
from bayes_ir.table import ScoreTable

__all__ = [
    "Design",
    "build_model",
    "centred_systems",
    "check_pooling",
    "resolve_pooling",
    "check_sigma",
    "design_of",
    "draw_skewness_sign",
    "posterior_with_roles",
    "LIKELIHOODS",
    "NO_ROLE",
    "MIN_POOLED",
    "POOLINGS",
    "POOLINGS_BY_LINK",
    "SIGN_LOGODDS",
    "SIGMAS",
]

Likelihood = Literal["gaussian", "skew_normal"]
LIKELIHOODS: tuple[str, ...] = ("gaussian", "skew_normal")
#: Residual-scale structures: one ``sigma`` for all systems, or one per system.
SIGMAS: tuple[str, ...] = ("pooled", "system")
#: Which system effects share the prior :math:`N(0, \sigma_{system}^2)`: every system
#: (``"all"``, the model of Benham et al. 2020), the artifact runs only (``"artifacts"``:
#: the champion and the challengers are unpooled, fixed effects with flat priors), or none
#: (``"none"``: every system unpooled, with a fixed weak prior; the logit families);
#: ``"auto"`` chooses (:func:`resolve_pooling`).
POOLINGS: tuple[str, ...] = ("auto", "all", "artifacts", "none")
#: Fewest systems whose effects inform ``sigma_system`` under ``pooling="artifacts"``.
MIN_POOLED: int = 2
#: The poolings the families of each link offer.
POOLINGS_BY_LINK: dict[str, tuple[str, ...]] = {
    "identity": ("all", "artifacts"),
    "logit": ("all", "none"),
}
_POOLING_PHRASE = {
    "all": "every system (pooling='all')",
    "artifacts": "the artifact runs only (pooling='artifacts')",
    "none": "no system (pooling='none')",
}
_LIKELIHOOD_ALIASES = {
    "gaussian": "gaussian",
    "normal": "gaussian",
    "skew_normal": "skew_normal",
    "skewnormal": "skew_normal",
    "skew-normal": "skew_normal",
}
#: Names of the data containers whose values are swapped between datasets.
PRIOR_DATA = (
    "b0_mu",
    "b0_sd",
    "sigma_rate",
    "sigma_topic_rate",
    "sigma_system_rate",
    "skewness_max",
    "sigma_log_sd_rate",
)
#: Deterministic of the skew-normal model: log L(+|alpha|) - log L(-|alpha|).
SIGN_LOGODDS = "skew_sign_logodds"


def check_likelihood(likelihood: str) -> str:
    """Return the canonical likelihood name or raise a clear error.

    Names of the families of :mod:`bayes_ir.hierarchical.families` (``"bernoulli"``,
    ``"binomial(trials=10)"``, ...) give the family's name.
    """
    key = likelihood.lower() if isinstance(likelihood, str) else likelihood
    if key not in _LIKELIHOOD_ALIASES:
        from bayes_ir.hierarchical.families import get_family

        if not isinstance(likelihood, str):
            validate.choice("likelihood", likelihood, LIKELIHOODS)
        return get_family(likelihood).name
    return _LIKELIHOOD_ALIASES[key]


def check_sigma(sigma: str) -> str:
    """Return ``"pooled"`` or ``"system"`` or raise a clear error."""
    key = str(sigma).lower()
    if key not in SIGMAS:
        raise BayesIRError(f"unknown sigma {sigma!r}: choose one of {', '.join(SIGMAS)}")
    return key


def check_pooling(pooling: str) -> str:
    """Return one of :data:`POOLINGS` or raise one :class:`~bayes_ir.errors.OptionError`."""
    return validate.choice("pooling", pooling, POOLINGS)


def resolve_pooling(family, design: Design, pooling: str) -> str:
    """Return the pooling a fit of ``design`` by ``family`` uses.

    ``"auto"``: ``"all"`` (the seed's model), except for a family with a logit link when
    the table has fewer than :data:`MIN_POOLED` artifact runs: then ``"none"``. There
    ``sigma_system`` would be learnt from the champion and challengers alone (two systems:
    one degree of freedom), and it pulls a real difference in accuracy towards 0 by 20-50%
    with 50-200 items, enough for the 95% intervals to miss the truth more than 5% of the
    time (``benchmarks/study_binary_coverage.py``); unpooled, they do not. The Gaussian
    model keeps ``"all"``: its intervals cover there. Any other value is returned when the
    family offers it (:data:`POOLINGS_BY_LINK`).

    Raises
    ------
    OptionError
        A pooling the family does not offer, naming those it does.
    """
    from bayes_ir.errors import OptionError

    if check_pooling(pooling) == "auto":
        artifacts = sum(role == "artifact" for role in design.roles)
        return "none" if family.link == "logit" and artifacts < MIN_POOLED else "all"
    offered = POOLINGS_BY_LINK[family.link]
    if pooling not in offered:
        pools = " or ".join(_POOLING_PHRASE[p] for p in offered)
        raise OptionError(
            f"pooling={pooling!r} does not apply to the {family.name} likelihood, which "
            f"pools {pools}"
        )
    return pooling


@dataclass(frozen=True)
class Design:
    """The observed cells of one collection and measure, as index vectors.

    Attributes
    ----------
    topics, systems, roles
        Labels (systems in role order) and the role of each system.
    topic_idx, system_idx, score
        One entry per observed cell.
    matrix
        Topic x system array with NaN for missing cells.
    collection, measure, source
        Where the scores come from.
    """

    topics: tuple[str, ...]
    systems: tuple[str, ...]
    roles: tuple[str, ...]
    topic_idx: np.ndarray
    system_idx: np.ndarray
    score: np.ndarray
    matrix: np.ndarray
    collection: str
    measure: str
    source: str

    @property
    def complete(self) -> bool:
        """True when every topic x system cell is observed."""
        return bool(np.isfinite(self.matrix).all())

    @property
    def shape(self) -> tuple[int, int]:
        """(number of topics, number of systems)."""
        return self.matrix.shape

    def pooled(self, pooling: str = "all") -> np.ndarray:
        """Mask of the systems whose effects share ``sigma_system`` under ``pooling``.

        Every system for ``"all"``, none for ``"none"``; the artifact runs for
        ``"artifacts"``, of which there must be at least :data:`MIN_POOLED` (they alone
        inform ``sigma_system``).

        Raises
        ------
        InsufficientDataError
            ``pooling="artifacts"`` with fewer than :data:`MIN_POOLED` artifact runs.
        """
        if check_pooling(pooling) != "artifacts":
            return np.full(len(self.systems), pooling == "all", dtype=bool)
        mask = np.array([role == "artifact" for role in self.roles], dtype=bool)
        if mask.sum() < MIN_POOLED:
            raise InsufficientDataError(
                f"pooling='artifacts' needs at least {MIN_POOLED} artifact runs (they alone "
                f"inform sigma_system); {self.source} has {int(mask.sum())}: add artifact runs "
                "or use pooling='all'"
            )
        return mask

    def data_hash(self) -> str:
        """SHA-256 of labels and scores (provenance: identifies the data exactly)."""
        h = hashlib.sha256()
        h.update("\x1f".join(self.topics).encode())
        h.update(b"\x1e")
        h.update("\x1f".join(self.systems).encode())
        h.update(b"\x1e")
        h.update("\x1f".join(self.roles).encode())
        h.update(b"\x1e")
        h.update(np.ascontiguousarray(np.nan_to_num(self.matrix, nan=-1e300)).tobytes())
        return h.hexdigest()


#: Role of every system of a table fitted without roles (a leaderboard: no champion,
#: every system on an equal footing; there are no challenger - champion contrasts).
NO_ROLE: str = ""


def design_of(table: ScoreTable) -> Design:
    """Extract the design of a table of one collection and measure.

    A table with roles gives each system its role (champion, challenger, artifact); a
    table without roles gives every system the role :data:`NO_ROLE` (a leaderboard:
    the model is the same, and no system is singled out).

    Raises
    ------
    ScoreTableError
        Several collections or measures in the table.
    InsufficientDataError
        Fewer than 2 topics or 2 systems.
    """
    validate.instance("table", table, ScoreTable)
    for col, name in (("collection", "collections"), ("measure", "measures")):
        values = table.data[col].unique()
        if len(values) > 1:
            raise ScoreTableError(
                f"the hierarchical model fits one collection and one measure, but the table "
                f"holds several {name} ({', '.join(map(str, values))}): "
                f"use table.select({col}=...) first",
                source=table.source,
            )
    da = table.matrix()
    mat = np.asarray(da.values, dtype=float)
    n_t, n_s = mat.shape
    validate.require_topics(
        n_t, defaults.MIN_TOPICS_HIERARCHICAL, method="the hierarchical model", where=table.source
    )
    if n_s < 2:
        raise InsufficientDataError(
            f"the hierarchical model needs at least 2 systems; {table.source} has {n_s}"
        )
    obs = np.isfinite(mat)
    if (obs.sum(axis=0) == 0).any() or (obs.sum(axis=1) == 0).any():
        raise ScoreTableError("a topic or a system has no observed score", source=table.source)
    t_idx, s_idx = np.nonzero(obs)
    return Design(
        topics=tuple(map(str, da["topic"].values)),
        systems=tuple(map(str, da["system"].values)),
        roles=(
            tuple(map(str, da["role"].values))
            if "role" in da.coords
            else (NO_ROLE,) * len(da["system"])
        ),
        topic_idx=t_idx.astype(np.int64),
        system_idx=s_idx.astype(np.int64),
        score=mat[t_idx, s_idx],
        matrix=mat,
        collection=str(da.attrs["collection"]),
        measure=str(da.attrs["measure"]),
        source=str(table.source),
    )


#: Largest ratio of the squared standard error of a system effect to the variance of the
#: system effects for which the skew-normal model centres them (:func:`centred_systems`).
CENTRED_RATIO: float = 0.25


def centred_systems(matrix: np.ndarray) -> bool:
    r"""Whether the skew-normal model's system effects are centred for these scores.

    Parameters
    ----------
    matrix
        Topic x system scores (NaN for missing cells).

    Returns
    -------
    bool
        True when :math:`\hat\sigma^2/\bar n < r\,\hat\chi^2`, with
        :math:`r` = :data:`CENTRED_RATIO`.

    Notes
    -----
    Moment estimates of the additive model: residuals
    :math:`e_{ts} = y_{ts} - \bar y_{t\cdot} - \bar y_{\cdot s} + \bar y` give
    :math:`\hat\sigma^2` (their variance), :math:`\bar n` is the mean number of
    topics per system, and :math:`\hat\chi^2` is the variance of the system means of
    :math:`y_{ts} - \bar y_{t\cdot}` less :math:`\hat\sigma^2/\bar n`. A system
    effect known to within a small fraction of the spread of the effects samples
    better centred; a weakly identified one non-centred (Papaspiliopoulos et al. 2007;
    Betancourt and Girolami 2015).

    References
    ----------
    Papaspiliopoulos, O., Roberts, G. O., Skold, M. (2007). A general framework for the
    parametrization of hierarchical models. *Statistical Science* 22(1), 59-73.

    Betancourt, M., Girolami, M. (2015). Hamiltonian Monte Carlo for hierarchical
    models. In *Current Trends in Bayesian Methodology with Applications*, CRC Press.
    """
    y = np.asarray(matrix, dtype=float)
    row = np.nanmean(y, axis=1, keepdims=True)
    centred_rows = y - row
    col = np.nanmean(centred_rows, axis=0)
    resid = centred_rows - col[None, :]
    sigma2 = float(np.nanvar(resid))
    per_system = float(np.isfinite(y).sum(axis=0).mean())
    chi2 = float(np.var(col)) - sigma2 / per_system
    return bool(sigma2 / per_system < CENTRED_RATIO * chi2)


def sufficient_statistics(matrix: np.ndarray) -> dict[str, np.ndarray]:
    """Topic sums, system sums, grand total and sum of squares of a complete matrix."""
    y = np.asarray(matrix, dtype=float)
    return {
        "topic_sum": y.sum(axis=1),
        "system_sum": y.sum(axis=0),
        "score_sum": np.array(y.sum()),
        "score_ss": np.array((y**2).sum()),
    }


def build_model(
    table: ScoreTable | Design,
    *,
    likelihood: str = "gaussian",
    priors: Priors | None = None,
    loglik: Literal["auto", "sufficient", "full"] = "auto",
    sigma: str = "pooled",
    pooling: str = "all",
):
    r"""Build (do not sample) the PyMC model of the crossed topic x system design.

    Parameters
    ----------
    table
        A :class:`~bayes_ir.table.ScoreTable` with roles and one collection and measure.
    likelihood
        ``"gaussian"`` or ``"skew_normal"`` (mean/SD parameterisation, as brms), or a
        family of :mod:`bayes_ir.hierarchical.families` (``"bernoulli"``,
        ``"binomial(trials=10)"``, ...), whose own PyMC model is returned (the
        definition its kernel is tested against; ``loglik`` and ``sigma`` do not apply).
    priors
        :class:`~bayes_ir.hierarchical.Priors`; ``None`` fields are autoscaled.
    loglik
        ``"sufficient"``: the exact sufficient-statistics Gaussian likelihood (complete
        matrices only); ``"full"``: one Normal/SkewNormal term per observed cell;
        ``"auto"``: sufficient when possible.
    sigma
        ``"pooled"`` (default): one residual SD ``sigma`` for every system;
        ``"system"``: one residual SD per system (brms ``sigma ~ system`` with a
        hierarchical prior): ``sigma`` becomes a deterministic with dim ``system``,
        :math:`\log\sigma_s = \log\sigma_{typ} + \lambda z_s`, free ``sigma_typical``
        (:math:`\sigma_{typ}`, the geometric mean of the :math:`\sigma_s`, with the
        prior of the pooled ``sigma``), ``sigma_log_sd`` (:math:`\lambda`) and
        ``sigma_z`` (:math:`z`, a standard ZeroSumNormal). The sufficient-statistics
        likelihood does not apply (cells are evaluated one by one).
    pooling
        ``"all"`` (default): ``system_effect`` is a ZeroSumNormal with scale
        ``sigma_system`` and ``b0`` has its Normal prior, as above. ``"artifacts"``: the
        champion's and challengers' means are free (``system_unpooled``, flat priors)
        and only the artifact runs are pooled: their means are ``artifact_centre``
        (flat) plus a ZeroSumNormal ``artifact_effect`` with scale ``sigma_system``;
        ``b0`` (the mean of all system means) and ``system_effect`` (each mean minus
        ``b0``) are deterministics, so the posterior has the same variables and meaning
        either way (see :func:`~bayes_ir.hierarchical.fit`). ``"none"`` (the logit
        families): no ``sigma_system``; every system effect has a fixed weak prior
        (:func:`~bayes_ir.hierarchical.families.logit.pymc_crossed_effects`).

    Returns
    -------
    pymc.Model
        Coords ``topic``, ``system`` (and ``obs``); free variables ``b0``,
        ``sigma_topic``, ``sigma_system``, ``sigma``, ``topic_effect`` (dim ``topic``),
        ``system_effect`` (dim ``system``). For the skew-normal, ``system_effect`` is
        a deterministic of the free ``system_z``, the shape enters as the free
        ``abs_skewness`` and the deterministic ``skew_sign_logodds``, and the
        likelihood is the potential ``y`` (the sign-marginal, see the module
        docstring); signed ``skewness`` and ``alpha`` are added to the posterior by
        :func:`draw_skewness_sign`. (PyMC and xarray
        forbid a variable named like its own dimension, hence the ``_effect`` suffix.)
        Data containers: ``topic_idx``, ``system_idx``, ``score`` (``score_matrix``
        for a complete skew-normal design) and the prior
        hyperparameters (so that a compiled model can be reused with new data).
        The role of each system is in ``model.role`` (a tuple) since PyMC coords
        hold no secondary labels; :func:`bayes_ir.hierarchical.fit` adds it to the
        posterior.

    Notes
    -----
    Full likelihood: :math:`\log p(y) = \sum_{ts} \log N(y_{ts} \mid b_0 + a_t + c_s,
    \sigma)`. Sufficient-statistics form, with :math:`m_{ts} = b_0 + a_t + c_s`,
    topic sums :math:`R_t`, system sums :math:`C_s`, grand total :math:`G` and
    :math:`Q = \sum y^2`:

    .. math::

        \sum_{ts} (y_{ts} - m_{ts})^2 = Q - 2\Big(b_0 G + \sum_t a_t R_t
        + \sum_s c_s C_s\Big) + TS b_0^2 + S\sum a_t^2 + T \sum c_s^2
        + 2 b_0 \Big(S \sum a_t + T \sum c_s\Big) + 2 \sum a_t \sum c_s,

    an identity for any vectors, so value and gradient match the full likelihood.

    Skew-normal, with :math:`\alpha(m)` the shape of skewness :math:`m`
    (:func:`~bayes_ir.hierarchical.skewnormal.skewness_to_alpha`) and
    :math:`L_\pm = \prod_{ts} SN(y_{ts} \mid m_{ts}, \sigma, \pm\alpha(m))` in brms'
    mean/SD form: :math:`\log p(y \mid \theta, m) = \log\tfrac12(L_+ + L_-)`.

    References
    ----------
    Benham, R., Carterette, B., Culpepper, J. S., Moffat, A. (2020). Bayesian
    inferential risk evaluation on multiple IR systems. *SIGIR 2020*, 339-348.
    doi:10.1145/3397271.3401033
    """
    import pymc as pm
    import pytensor.tensor as pt

    design = table if isinstance(table, Design) else design_of(table)
    from bayes_ir.hierarchical.families import get_family

    family = get_family(likelihood).resolved(design)
    pooling = resolve_pooling(family, design, pooling)
    if family.kernel:  # a family of bayes_ir.hierarchical.families: its own PyMC model
        return family.build_pymc_model(design, family.resolve_priors(design, priors), pooling)
    likelihood = check_likelihood(likelihood)
    pri = autoscale_priors(design.score, priors)
    validate.choice("loglik", loglik, ("auto", "sufficient", "full"))
    sigma_mode = check_sigma(sigma)
    pooled = design.pooled(pooling)
    by_system = sigma_mode == "system"
    use_suff = likelihood == "gaussian" and design.complete and loglik != "full" and not by_system
    if loglik == "sufficient" and not use_suff:
        raise BayesIRError(
            "the sufficient-statistics likelihood needs a complete matrix, the "
            "Gaussian likelihood and sigma='pooled'"
        )
    n_t, n_s = design.shape
    coords = {
        "topic": list(design.topics),
        "system": list(design.systems),
        "obs": np.arange(design.score.size),
    }
    with pm.Model(coords=coords) as model:
        topic_idx = pm.Data("topic_idx", design.topic_idx, dims="obs")
        system_idx = pm.Data("system_idx", design.system_idx, dims="obs")
        score = pm.Data("score", design.score, dims="obs")
        hyper = {name: pm.Data(f"prior_{name}", float(getattr(pri, name))) for name in PRIOR_DATA}

        sigma_topic = pm.Exponential("sigma_topic", lam=hyper["sigma_topic_rate"])
        sigma_system = pm.Exponential("sigma_system", lam=hyper["sigma_system_rate"])
        if by_system:
            # non-centred on the log scale; zero-sum z: sigma_typical is the geometric mean
            typical = pm.Exponential("sigma_typical", lam=hyper["sigma_rate"])
            log_sd = pm.Exponential("sigma_log_sd", lam=hyper["sigma_log_sd_rate"])
            sigma_z = pm.ZeroSumNormal("sigma_z", sigma=1.0, dims="system")
            resid_sd = pm.Deterministic("sigma", typical * pt.exp(log_sd * sigma_z), dims="system")
        else:
            resid_sd = pm.Exponential("sigma", lam=hyper["sigma_rate"])
        topic = pm.ZeroSumNormal("topic_effect", sigma=sigma_topic, dims="topic")
        non_centred = likelihood == "skew_normal" and not centred_systems(design.matrix)
        if pooled.all():
            b0 = pm.Normal("b0", mu=hyper["b0_mu"], sigma=hyper["b0_sd"])
            if non_centred:
                # non-centred: on rb04 it raised the ESS of sigma_system 1.2x (bulk), 1.8x (tail)
                system_z = pm.ZeroSumNormal("system_z", sigma=1.0, dims="system")
                system = pm.Deterministic("system_effect", sigma_system * system_z, dims="system")
            else:
                system = pm.ZeroSumNormal("system_effect", sigma=sigma_system, dims="system")
        else:
            # the artifacts' effects: non-centred when weakly identified, for both likelihoods
            centred = centred_systems(design.matrix[:, pooled])
            b0, system = _unpooled_systems(model, design, pooled, sigma_system, not centred)

        if use_suff:
            stats = sufficient_statistics(design.matrix)
            r = pm.Data("topic_sum", stats["topic_sum"], dims="topic")
            c = pm.Data("system_sum", stats["system_sum"], dims="system")
            g = pm.Data("score_sum", stats["score_sum"])
            q = pm.Data("score_ss", stats["score_ss"])
            n = n_t * n_s
            sa, sc = topic.sum(), system.sum()
            sq = (
                q
                - 2.0 * (b0 * g + pt.dot(topic, r) + pt.dot(system, c))
                + n * b0**2
                + n_s * pt.sum(topic**2)
                + n_t * pt.sum(system**2)
                + 2.0 * b0 * (n_s * sa + n_t * sc)
                + 2.0 * sa * sc
            )
            pm.Potential(
                "y_sufficient",
                -0.5 * n * math.log(2 * math.pi) - n * pt.log(resid_sd) - sq / (2.0 * resid_sd**2),
            )
        else:
            mu = b0 + topic[topic_idx] + system[system_idx]
            if likelihood == "gaussian":
                sd = resid_sd[system_idx] if by_system else resid_sd
                pm.Normal("y", mu=mu, sigma=sd, observed=score, dims="obs")
        if likelihood == "skew_normal":
            if design.complete:
                # whole matrix, broadcast: no gather through index vectors
                y_obs = pm.Data("score_matrix", design.matrix, dims=("topic", "system"))
                mu = b0 + topic[:, None] + system[None, :]
                sd = resid_sd[None, :] if by_system else resid_sd
            else:
                y_obs = score
                sd = resid_sd[system_idx] if by_system else resid_sd
            # |skewness| is sampled, its sign is summed out (see _skewnormal_both_signs)
            abs_skew = pm.Uniform("abs_skewness", lower=0.0, upper=hyper["skewness_max"])
            both = _skewnormal_both_signs(y_obs, mu, sd, skewness_to_alpha(abs_skew))
            pm.Potential("y", pt.logsumexp(both) - math.log(2.0))
            pm.Deterministic(SIGN_LOGODDS, both[0] - both[1])
    model.role = tuple(design.roles)
    model.priors = pri
    return model


def _unpooled_systems(model, design: Design, pooled: np.ndarray, sigma_system, non_centred: bool):
    """``b0`` and ``system_effect`` of ``pooling="artifacts"`` (see :func:`build_model`).

    Called inside the model's context; adds the coords ``unpooled`` and ``artifact``.
    The artifacts' effects are non-centred (``artifact_z``) when ``non_centred``, as
    :func:`centred_systems` decides on the artifacts' scores: on rb04 their spread
    (``sigma_system`` about 0.008) is below the standard error of one system's mean
    (0.015), and the centred form had a funnel (BFMI 0.15, ESS 242 of 4,000 draws).
    """
    import pymc as pm
    import pytensor.tensor as pt

    free, shared = np.flatnonzero(~pooled), np.flatnonzero(pooled)
    model.add_coord("unpooled", [design.systems[i] for i in free])
    model.add_coord("artifact", [design.systems[i] for i in shared])
    unpooled = pm.Flat("system_unpooled", dims="unpooled")
    centre = pm.Flat("artifact_centre")
    if non_centred:
        z = pm.ZeroSumNormal("artifact_z", sigma=1.0, dims="artifact")
        deviation = pm.Deterministic("artifact_effect", sigma_system * z, dims="artifact")
    else:
        deviation = pm.ZeroSumNormal("artifact_effect", sigma=sigma_system, dims="artifact")
    means = pt.zeros(len(design.systems))
    means = pt.set_subtensor(means[free], unpooled)
    means = pt.set_subtensor(means[shared], centre + deviation)
    b0 = pm.Deterministic("b0", means.mean())
    return b0, pm.Deterministic("system_effect", means - b0, dims="system")


def _skewnormal_both_signs(y, mu, sigma, alpha_abs):
    r"""Total skew-normal log-likelihood for shape :math:`+|\alpha|` and :math:`-|\alpha|`.

    Returns a PyTensor vector of length 2. Both signs are computed in one broadcast
    elementwise pass (a leading axis of length 2), which numba fuses into a single
    loop over the cells.
    """
    import pytensor.tensor as pt

    alpha = pt.stack([alpha_abs, -alpha_abs])
    shape = (2,) + (1,) * y.ndim
    dens = skewnormal_logpdf(y[None], mu[None], sigma, alpha.reshape(shape))
    return dens.reshape((2, -1)).sum(axis=1)


def draw_skewness_sign(
    abs_skewness: np.ndarray, sign_logodds: np.ndarray, *, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    r"""Draw the sign of the skewness given the other parameters; return skewness, alpha.

    Parameters
    ----------
    abs_skewness, sign_logodds
        Draws of ``abs_skewness`` and of the deterministic ``skew_sign_logodds``
        (same shape, e.g. chain x draw).
    seed
        Seed of the sign draws (the same seed gives the same signs).

    Returns
    -------
    skewness, alpha
        Signed skewness and the matching shape :math:`\alpha`.

    Notes
    -----
    :math:`P(s = +1 \mid \theta, |\gamma_1|, y) = L_+/(L_+ + L_-)
    = \mathrm{logistic}(\log L_+ - \log L_-)`, exactly the conditional of the sign
    under the symmetric prior, so (draw, sign) is a draw of the joint posterior.
    """
    from scipy.special import expit

    lo = np.asarray(sign_logodds, dtype=float)
    rng = np.random.default_rng([int(seed), 0x5E9])
    sign = np.where(rng.random(lo.shape) < expit(lo), 1.0, -1.0)
    skew = sign * np.asarray(abs_skewness, dtype=float)
    return skew, skewness_to_alpha(skew)


def data_updates(design: Design, priors: Priors, *, sufficient: bool) -> dict[str, np.ndarray]:
    """Values of every data container of :func:`build_model` for a new dataset."""
    out: dict[str, np.ndarray] = {
        "topic_idx": design.topic_idx,
        "system_idx": design.system_idx,
        "score": design.score,
    }
    if design.complete:
        out["score_matrix"] = design.matrix
    out.update({f"prior_{n}": np.asarray(float(getattr(priors, n))) for n in PRIOR_DATA})
    if sufficient:
        out.update(sufficient_statistics(design.matrix))
    return out


def posterior_with_roles(tree: xr.DataTree) -> xr.Dataset:
    """Return a fit's ``posterior`` group with ``role`` as a coordinate of ``system``.

    A fit's DataTree carries the roles once, as the ``role`` coordinate of the
    ``observed_data`` group: a non-index coordinate on the ``posterior`` group, whose
    variables do not all have the ``system`` dim, breaks ArviZ (``summary`` stacks the
    variables with xarray's ``to_stacked_array``, which refuses a coordinate that is
    not on every variable). The package reads the roles from the Dataset returned
    here; a posterior that has its own ``role`` coordinate keeps it.
    """
    post = tree["posterior"].to_dataset()
    if "role" in post.coords or "system" not in post.dims or "observed_data" not in tree.children:
        return post
    observed = tree["observed_data"].to_dataset()
    if "role" not in observed.coords or "system" not in observed.dims:
        return post
    roles = observed["role"].sel(system=post["system"].values).values
    return post.assign_coords(role=("system", [str(r) for r in roles]))


def table_from_observed(
    topics: list[str],
    systems: list[str],
    roles: list[str],
    matrix: np.ndarray,
    *,
    collection: str,
    measure: str,
    source: str,
) -> ScoreTable:
    """Rebuild a ScoreTable with its roles from a stored matrix (used by ``load``).

    Systems stored with :data:`NO_ROLE` (a fit of a table without roles) give a table
    without roles.
    """
    wide = pd.DataFrame(matrix, index=topics, columns=systems)
    long = wide.rename_axis(index="topic", columns="system").stack(future_stack=True)
    long = long.rename("score").reset_index().dropna(subset=["score"])
    table = ScoreTable.from_frame(
        long,
        collection=collection,
        measure=measure,
        source=source,
        missing="keep",
    )
    if all(r == NO_ROLE for r in roles):
        return table
    champion = [s for s, r in zip(systems, roles, strict=True) if r == "champion"][0]
    challengers = [s for s, r in zip(systems, roles, strict=True) if r == "challenger"]
    artifacts = [s for s, r in zip(systems, roles, strict=True) if r == "artifact"]
    # no artifact runs: the default selection (every other system) selects none
    return table.with_roles(
        champion=champion, challengers=challengers, artifacts=artifacts if artifacts else None
    )
