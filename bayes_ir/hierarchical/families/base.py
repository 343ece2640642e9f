r"""What a likelihood family is: its outcome space, its cells, its score-scale means.

A *family* (brms' word: ``family = bernoulli()``) is the distribution of one score
given the crossed linear predictor :math:`\eta_{ts} = b_0 + a_t + c_s` of the
hierarchical model (:mod:`bayes_ir.hierarchical.model`). Each family is one module of
:mod:`bayes_ir.hierarchical.families` and declares

* its name, options (``"binomial(trials=10)"``) and *outcome space*
  (:data:`OUTCOME_SPACES`): the set its scores live in, which decides what PSIS-LOO
  may compare (:func:`comparable`);
* its link, its parameters and the residual-dispersion structures it supports;
* the check of the scores it can describe (:meth:`Family.check_scores`);
* its priors, stated on the link scale (:meth:`Family.resolve_priors`);
* its sampler (the families of this package: NUTS on a numba kernel,
  :meth:`Family.sample`; the Gaussian and skew-normal keep the samplers of
  :mod:`bayes_ir.hierarchical.fit`);
* its *score-scale means* (:meth:`Family.system_means`): what contrasts, decisions,
  rankings and the review read, whatever the family;
* the distribution of every cell for a set of posterior draws (:class:`Cells`): its
  mean, CDF, log density and replicates, which the model check, PSIS-LOO and the
  posterior predictive intervals read.

Score-scale means of a logit family (issue 28). A system's mean is its expected score
over the *population of topics*, not at the average topic:

.. math::

    m_s = E_{a \sim N(0,\, \tau^2)}\big[\mathrm{logit}^{-1}(\beta + a + c_s)\big],

brms' :math:`E[\mathrm{logit}^{-1}(\beta + c_s + N(0, \tau^2))]`, computed by the
trapezoidal rule on equally spaced nodes (:func:`population_mean`). :math:`\beta` is the
intercept of the topic population; the reported :math:`b_0 = \beta + \bar a` also holds
the mean effect of the :math:`T` fitted topics, and :func:`population_intercept` draws
:math:`\beta` given it, so the posterior of :math:`m_s` carries the uncertainty of where
the topic population lies (on two systems and 50 items the fits equal the exact posterior
by quadrature, ``tests/hierarchical/families/test_binary_exact.py``). Averaging over the
fitted topics instead, :math:`\frac1T\sum_t \mathrm{logit}^{-1}(b_0 + a_t + c_s)`,
would answer "what would the systems score on *these* topics", with narrower
intervals that ignore how topics vary; a decision to deploy is about the topics to
come. A contrast is the difference of two systems' means, in the measure's units
(accuracy, P@10, AP), never a logit coefficient. With the identity link the mean is
:math:`b_0 + c_s` (the same at every topic), as before.

References
----------
Buerkner, P.-C. (2017). brms: An R package for Bayesian multilevel models using Stan.
*Journal of Statistical Software* 80(1), 1-28. doi:10.18637/jss.v080.i01

Vehtari, A., Gelman, A., Gabry, J. (2017). Practical Bayesian model evaluation using
leave-one-out cross-validation and WAIC. *Statistics and Computing* 27(5), 1413-1432.
"""

from __future__ import annotations

import abc
import re
from typing import Any, ClassVar

import numpy as np
import xarray as xr

from bayes_ir import defaults
from bayes_ir.errors import BayesIRError, OptionError

__all__ = [
    "OUTCOME_SPACES",
    "QUADRATURE_RANGE",
    "Cells",
    "Family",
    "comparable",
    "population_intercept",
    "population_mean",
    "population_nodes",
]

#: Outcome spaces: the set each family's scores live in. PSIS-LOO compares only
#: families of the same space: a density and a probability mass are not on one scale.
OUTCOME_SPACES: dict[str, str] = {
    "continuous": "real line, a density (gaussian, skew_normal)",
    "unit_inflated": "[0, 1]: a density on (0, 1) and masses at 0 and 1 (zoib)",
    "binary": "{0, 1}, a probability mass (bernoulli)",
    "counts": "{0, 1/n, ..., 1}: k of n trials, a probability mass (binomial)",
}
#: Half-width, in SDs, of the range of :func:`population_mean`'s nodes (the normal density
#: beyond it is below 1e-16 of its peak).
QUADRATURE_RANGE: float = 8.5


def comparable(a: Family, b: Family) -> bool:
    """Return True when PSIS-LOO may compare the two families (same outcome space)."""
    return a.outcome_space == b.outcome_space


def _expit(x: np.ndarray) -> np.ndarray:
    from scipy import special

    return special.expit(x)


def population_intercept(
    b0: np.ndarray,
    sigma_topic: np.ndarray,
    n_topics: int,
    prior: tuple[float, float],
    rng: np.random.Generator,
    *,
    prior_on_sum: bool = False,
) -> np.ndarray:
    r"""Draws of the intercept of the topic population, :math:`\beta = b_0 - \bar a`.

    The reported ``b0`` is the intercept plus the mean :math:`\bar a` of the :math:`T`
    fitted topics' effects (the levels form of :mod:`~._kernel`: :math:`\beta \sim
    N(\mu_0, s_0^2)`, :math:`a_t \sim N(0, \tau^2)` independent). The likelihood
    depends on :math:`\beta` and :math:`\bar a` only through their sum, so given ``b0``
    and :math:`\tau` the split follows from the priors alone: :math:`\bar a \sim
    N(0, \tau^2/T)` and the normal-normal update give

    .. math::

        \bar a \mid b_0, \tau \sim N\big(k\,(b_0 - \mu_0),\; k\,s_\beta^2\big), \qquad
        k = \frac{\tau^2/T}{s_\beta^2 + \tau^2/T},

    with :math:`s_\beta = s_0`, one draw per posterior draw, so that :math:`(\beta, \tau,
    c)` are draws of their joint posterior. A mean over the topic population,
    :math:`E_{a \sim N(0, \tau^2)}[\mathrm{logit}^{-1}(\beta + a + c_s)]` (brms'
    :math:`E[\mathrm{logit}^{-1}(\beta + c_s + N(0, \tau^2))]`), then carries the
    uncertainty of where that population lies; integrating :math:`\bar a` inside each
    draw instead (:math:`b_0 + N(0, \tau^2(1 + 1/T))`) gives the same posterior mean but
    too narrow intervals (on 50 items, two systems, a 95% interval of the difference of
    the accuracies 4% narrower than the exact posterior's).

    With ``prior_on_sum`` the prior :math:`N(\mu_0, s_0^2)` is on ``b0`` itself (the
    zero-sum intercept of the models across collections,
    :mod:`bayes_ir.hierarchical.design.priors`). That is the levels form with
    :math:`\beta \sim N(\mu_0, s_\beta^2)`, :math:`s_\beta^2 = s_0^2 - \tau^2/T`,
    independent of :math:`\bar a`, so the same update holds with that :math:`s_\beta`:
    :math:`k = \tau^2/(T s_0^2)`. (When :math:`\tau^2/T \ge s_0^2` no such
    :math:`\beta` exists and :math:`k = 1`: the prior's centre is the intercept.)

    Parameters
    ----------
    b0, sigma_topic
        Posterior draws of the reported intercept and the SD of the topic effects
        (broadcastable arrays).
    n_topics
        :math:`T`, the topics the effects were fitted on.
    prior
        :math:`(\mu_0, s_0)`, the mean and SD of the intercept's normal prior.
    rng
        Generator of the draws of :math:`\bar a`.
    prior_on_sum
        Whether the prior is on ``b0`` (True) or on :math:`\beta` (False).
    """
    b0 = np.asarray(b0, dtype=float)
    v = np.asarray(sigma_topic, dtype=float) ** 2 / max(int(n_topics), 1)
    mu0, s0 = float(prior[0]), float(prior[1])
    s2 = np.maximum(s0 * s0 - v, 0.0) if prior_on_sum else s0 * s0
    k = v / (s2 + v)
    shape = np.broadcast_shapes(b0.shape, v.shape)
    abar = k * (b0 - mu0) + np.sqrt(k * s2) * rng.standard_normal(shape)
    return b0 - abar


def population_mean(eta: np.ndarray, sd: np.ndarray) -> np.ndarray:
    r"""Mean of :math:`\mathrm{logit}^{-1}(\eta + \sigma Z)`, :math:`Z \sim N(0, 1)`.

    Parameters
    ----------
    eta, sd
        Broadcastable arrays: the linear predictor without the topic, and the SD of
        the topic effects it is integrated over.

    Returns
    -------
    numpy.ndarray
        :math:`\sum_k w_k\,\mathrm{logit}^{-1}(\eta + \sigma z_k)` on the equally
        spaced nodes :math:`z_k = kh` of :math:`[-L, L]`, :math:`L` =
        :data:`QUADRATURE_RANGE`, with weights :math:`w_k \propto \phi(z_k)` summing to
        1; accumulated one node at a time, so the memory is that of the inputs.

    Notes
    -----
    The trapezoidal rule converges geometrically for an integrand analytic in a strip
    around the real line (Trefethen and Weideman 2014): its error is about
    :math:`e^{-2\pi d/h}`, :math:`d = \pi/\sigma` the distance from the real axis of
    the poles of :math:`\mathrm{logit}^{-1}(\eta + \sigma z)`. The step
    :math:`h = \min(0.3, 0.75/\max\sigma)` keeps it below :math:`10^{-10}` (checked
    against adaptive quadrature in the tests up to :math:`\sigma = 6` on the logit
    scale), where Gauss-Hermite with 48 nodes is off by :math:`6 \times 10^{-4}` at
    :math:`\sigma = 6` (its nodes spread into the tails instead of resolving the step
    of the logistic).

    References
    ----------
    Trefethen, L. N., Weideman, J. A. C. (2014). The exponentially convergent trapezoidal
    rule. *SIAM Review* 56(3), 385-458. doi:10.1137/130932132
    """
    eta = np.asarray(eta, dtype=float)
    sd = np.asarray(sd, dtype=float)
    z, weights = population_nodes(float(np.max(sd)) if sd.size else 0.0)
    out = np.zeros(np.broadcast_shapes(eta.shape, sd.shape))
    for zk, wk in zip(z, weights, strict=True):
        out += wk * _expit(eta + sd * zk)
    return out


def population_nodes(sd_max: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes and weights of :func:`population_mean`'s trapezoidal rule for SDs up to ``sd_max``.

    Standard normal nodes :math:`z_k = kh` on :math:`[-L, L]` and weights proportional to
    :math:`\phi(z_k)`, summing to 1; :math:`h = \min(0.3, 0.75/\sigma_{max})`.
    """
    step = min(0.3, 0.75 / sd_max) if sd_max > 0 else 0.3
    z = np.arange(-QUADRATURE_RANGE, QUADRATURE_RANGE + step / 2, step)
    weights = np.exp(-0.5 * z * z)
    return z, weights / weights.sum()


class Cells(abc.ABC):
    """The distribution of the scores of a block of systems, for a set of draws.

    Built by :meth:`Family.cells`. Arrays have shape ``(n, B, T)``: ``n`` posterior
    draws, ``B`` systems of the block, ``T`` topics; observed scores ``y`` have shape
    ``(B, T)`` (missing cells may hold any finite value: callers mask them).
    """

    @property
    @abc.abstractmethod
    def mean(self) -> np.ndarray:
        """Expected score of every cell and draw, on the measure's scale."""

    @property
    @abc.abstractmethod
    def variance(self) -> np.ndarray:
        """Variance of the score of every cell and draw, on the measure's scale."""

    @property
    @abc.abstractmethod
    def slope(self) -> np.ndarray:
        r"""Derivative of the expected score by the linear predictor, :math:`dE[y]/d\eta`."""

    @property
    def information(self) -> np.ndarray:
        r"""Working information of :math:`\eta` per cell: :math:`(dE[y]/d\eta)^2/\mathrm{Var}(y)`.

        The weight of iteratively reweighted least squares (McCullagh and Nelder 1989,
        section 2.5): :math:`1/\sigma^2` for the Gaussian model, :math:`n p(1-p)` for a
        proportion of :math:`n` Bernoulli trials (its Fisher information).
        """
        return self.slope**2 / self.variance

    @abc.abstractmethod
    def cdf(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``P(Y < y)`` and ``P(Y <= y)`` (equal for a continuous family)."""

    @abc.abstractmethod
    def rvs(self, rng: np.random.Generator) -> np.ndarray:
        """One replicated score per cell and draw."""

    @abc.abstractmethod
    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """Log density (continuous), log mass (discrete) or both (zoib) at ``y``."""


_SPEC = re.compile(r"^\s*([A-Za-z_\-]+)\s*(?:\((.*)\))?\s*$")


class Family(abc.ABC):
    """A likelihood family of the crossed model (see the module docstring).

    Subclasses set the class attributes and implement the abstract methods; options
    (``trials``, ``inflation``) are keyword arguments of the constructor and appear
    in :attr:`spec`, which :func:`~bayes_ir.hierarchical.families.get_family` parses back.
    """

    #: Name of the family (``fit(likelihood=...)``).
    name: ClassVar[str]
    #: Key of :data:`OUTCOME_SPACES`.
    outcome_space: ClassVar[str]
    #: ``"identity"`` or ``"logit"``: the scale of ``b0``, the effects and their priors.
    link: ClassVar[str]
    #: Residual-dispersion structures (``fit(sigma=...)``) the family supports.
    dispersions: ClassVar[tuple[str, ...]] = ("pooled",)
    #: Why ``sigma="system"`` does not apply (families with one dispersion structure).
    no_dispersion: ClassVar[str] = ""
    #: Values whose share among the scores the model check tests (point masses).
    point_masses: ClassVar[tuple[float, ...]] = ()
    #: Sampled by this package's NUTS kernel (else by the samplers of ``fit``).
    kernel: ClassVar[bool] = False
    #: Scalar parameters a calibration trial draws and checks (kernel families).
    prior_scalars: ClassVar[tuple[str, ...]] = ()
    #: Options of the spec string and their defaults.
    option_defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, **options: Any) -> None:
        unknown = [k for k in options if k not in self.option_defaults]
        if unknown:
            known = ", ".join(self.option_defaults) or "none"
            raise OptionError(
                f"likelihood {self.name!r} has no option {unknown[0]!r} (options: {known})"
            )
        self.options = {**self.option_defaults, **options}
        self._check_options()

    def _check_options(self) -> None:  # noqa: B027 (a hook: most families have no options)
        """Check the options (subclasses with options override)."""

    @property
    def spec(self) -> str:
        """The family as a string that parses back: ``"binomial(trials=10)"``."""
        given = {k: v for k, v in self.options.items() if v is not None}
        if not given:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in given.items())})"

    def __repr__(self) -> str:
        return self.spec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Family) and other.spec == self.spec

    def __hash__(self) -> int:
        return hash(self.spec)

    def with_dispersion(self, sigma: str) -> Family:
        """Return the family for the residual-dispersion structure ``sigma`` (checked)."""
        self.check_dispersion(sigma)
        return self

    def check_dispersion(self, sigma: str) -> str:
        """Return ``sigma`` when the family supports it, else raise one clear error."""
        if sigma not in self.dispersions:
            why = self.no_dispersion or f"it supports {', '.join(self.dispersions)}"
            raise BayesIRError(f"sigma={sigma!r} does not apply to the {self.name} family: {why}")
        return sigma

    @property
    def per_system(self) -> frozenset[str]:
        """Parts of the likelihood with one value per system besides the system effect.

        Names from ``{"inflation", "phi"}`` (the zoib's structures); empty for a family
        whose other parameters are shared by all systems. The residual SD per system of
        the Gaussian is ``fit(sigma="system")``, recorded in the fit's provenance.
        """
        return frozenset()

    # ------------------------------------------------------------------ data
    def resolved(self, design: Any) -> Family:
        """Return the family with every option the data decide set (e.g. binomial trials)."""
        return self

    def check_scores(self, design: Any) -> None:  # noqa: B027 (continuous: any finite score)
        """Raise :class:`~bayes_ir.errors.ScoreTableError` naming a score it cannot describe."""

    # ------------------------------------------------------------------ posterior
    @property
    def hyperparameters(self) -> tuple[str, ...]:
        """Scalar parameters of the posterior, in reporting order."""
        return ("b0", "sigma_topic", "sigma_system")

    @abc.abstractmethod
    def system_means(self, post: xr.Dataset) -> xr.DataArray:
        """Score-scale mean of every system, dims ``(chain, draw, system)``."""

    def mean_note(self) -> str:
        """How :meth:`system_means` is computed, for summaries (a phrase)."""
        return "b0 + effect"

    #: Glosses of the family's own parameters, for summaries.
    glosses: ClassVar[dict[str, str]] = {}

    def gloss(self, name: str) -> str:
        """Say what parameter ``name`` of this family is, in a few words ("" when not its own)."""
        return self.glosses.get(name, "")

    @abc.abstractmethod
    def parameters(self, post: xr.Dataset, keep: np.ndarray | None = None) -> dict[str, Any]:
        """Flat per-draw arrays of the draws at flat indices ``keep`` (all when None).

        ``b0`` (n,), ``topic`` (n, T), ``system`` (n, S) and the family's own; the
        input of :meth:`cells`.
        """

    @abc.abstractmethod
    def cells(self, params: dict[str, Any], systems: np.ndarray) -> Cells:
        """Return the distribution of the cells of ``systems`` (indices) for draws ``params``."""

    def difference_variance(
        self, params: dict[str, Any], champion: int, challengers: np.ndarray
    ) -> np.ndarray:
        r"""Variance of a challenger's score minus the champion's on a new topic, per draw.

        .. math::

            v = E_a[\mathrm{Var}(y_c \mid a) + \mathrm{Var}(y_h \mid a)]
            + \mathrm{Var}_a[E(y_c \mid a) - E(y_h \mid a)],

        the topic effect :math:`a` integrated over the topic population
        (:math:`N(0, \tau^2(1 + 1/T))`, :func:`population_nodes`) with the family's cells.
        For the Gaussian model the topic cancels and this is
        :math:`\sigma_c^2 + \sigma_h^2`. Returns an array (n draws, challengers).
        """
        n_t = params["topic"].shape[1]
        sd = params["sigma_topic"] * np.sqrt(1.0 + 1.0 / n_t)
        z, w = population_nodes(float(sd.max()))
        nodes = {**params, "topic": sd[:, None] * z[None, :]}  # topics -> population nodes
        cells = self.cells(nodes, np.concatenate([[champion], challengers]))
        mean, var = cells.mean, np.broadcast_to(cells.variance, cells.mean.shape)
        gap = mean[:, 1:, :] - mean[:, :1, :]
        spread = (gap**2 * w).sum(axis=-1) - ((gap * w).sum(axis=-1)) ** 2
        return ((var[:, 1:, :] + var[:, :1, :]) * w).sum(axis=-1) + spread

    # ------------------------------------------------------------------ sampling
    def resolve_priors(self, design: Any, priors: Any) -> Any:
        """Resolve the priors for ``design`` (:class:`~bayes_ir.hierarchical.Priors`)."""
        from bayes_ir.hierarchical.priors import autoscale_priors

        return autoscale_priors(design.score, priors)

    def default_draws(self, n_cells: int) -> tuple[int, int]:
        """Default draws and warm-up iterations per chain for a table of ``n_cells``."""
        return defaults.DRAWS, defaults.TUNE

    def sample(self, design: Any, priors: Any, **options: Any) -> tuple[Any, Any, dict]:
        """Draw the posterior (kernel families); returns posterior, sample stats, info."""
        raise NotImplementedError(f"the {self.name} family is sampled by bayes_ir.fit's samplers")

    def build_pymc_model(self, design: Any, priors: Any, pooling: str = "all") -> Any:
        """Return the family's PyMC model (kernel families: the definition their kernel equals)."""
        raise NotImplementedError(f"the {self.name} model is built by build_model")

    def finish(self, post: xr.Dataset, design: Any, priors: Any, seed: int) -> xr.Dataset:
        """Add derived variables to the draws (e.g. ``system_mean``); default: none.

        ``priors`` are the fit's resolved priors and ``seed`` its seed (for derived draws).
        """
        return post

    # ------------------------------------------------------------------ crossed designs
    #: The family's own parameters in the model of a crossed design
    #: (:func:`~bayes_ir.hierarchical.fit_across`): one per residual group (a collection)
    #: or one for all, as the residual SD of the Gaussian model.
    design_own: ClassVar[tuple[str, ...]] = ()

    def own_priors(self, priors: Any = None) -> dict[str, float]:
        """Hyperparameters of :attr:`design_own`'s priors (``priors``: a user's Priors)."""
        return {}

    def design_likelihood(
        self, eta: Any, design: Any, own_priors: dict[str, float], *, data: bool = False
    ) -> None:
        r"""Declare the likelihood of a crossed design's scores in the current PyMC model.

        ``eta`` is the linear predictor of every cell on the link scale (a PyTensor
        vector), ``design`` the :class:`~bayes_ir.hierarchical.design.CrossedDesign`
        (its ``residual`` groups the family's own parameters) and ``own_priors``
        :meth:`own_priors`. With ``data`` the scores are the data containers of
        :meth:`design_data` (one compiled model refitted to many datasets).
        """
        raise OptionError(
            f"the {self.name} likelihood is not available across collections or segments: "
            "choose gaussian, bernoulli, binomial or zoib"
        )

    def design_data(self, design: Any) -> dict[str, np.ndarray]:
        """Values of :meth:`design_likelihood`'s data containers for ``design``'s scores."""
        raise OptionError(f"the {self.name} model's scores are constants of its graph")

    def design_cells(self, eta: np.ndarray, own: dict[str, np.ndarray]) -> Cells:
        """Return the cells of linear predictor ``eta`` and own parameters ``own``.

        Each of ``own`` broadcastable against ``eta`` (a crossed design's cells).
        """
        raise NotImplementedError(f"the {self.name} family has no cells of a crossed design")


def flat_draws(var: xr.DataArray, keep: np.ndarray | None, *dims: str) -> np.ndarray:
    """Draws of ``var`` as float64 ``(n, ...)``, at flat chain-major indices ``keep``.

    Only the kept draws are copied (a fit's topic effects can take gigabytes).
    """
    var = var.transpose("chain", "draw", *dims)
    if keep is not None:
        chain, draw = np.divmod(np.asarray(keep), var.sizes["draw"])
        picked = var.isel(chain=xr.DataArray(chain, dims="sample"),
                          draw=xr.DataArray(draw, dims="sample"))  # fmt: skip
        return np.asarray(picked.transpose("sample", *dims).values, dtype=float)
    x = np.asarray(var.values, dtype=float)
    return x.reshape(-1, *x.shape[2:])


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name(key=value, ...)"`` into the name and typed options.

    Values are read as integers, then floats, else kept as strings.
    """
    match = _SPEC.match(str(spec))
    if match is None:
        raise OptionError(f"cannot read likelihood {spec!r}: expected name or name(key=value, ...)")
    name, args = match.group(1), match.group(2)
    options: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in (args or "").split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise OptionError(f"cannot read option {part!r} of likelihood {spec!r}: use key=value")
        options[key.strip()] = _typed(value.strip().strip("'\""))
    return name.lower().replace("-", "_"), options


def _typed(value: str) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value
