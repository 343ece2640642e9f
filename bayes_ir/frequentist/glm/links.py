r"""Link functions of the GLM comparison: statsmodels links plus ``exp``, ``tanh`` and ``atanh``.

statsmodels ships identity, log, logit, probit, cauchit (``Cauchy``) and cloglog.
The links it lacks are written here as :class:`statsmodels.genmod.families.links.Link`
subclasses with analytic first and second derivatives, so that they work inside
``statsmodels.api.GLM`` as well as in the structured IRLS of :mod:`.fit`.

Which tanh?
-----------
``tanh`` is the paper's link (Faggioli et al. 2022, Section 3): the hyperbolic tangent
*is* the link,

.. math:: g(\mu) = \tanh\mu, \qquad \mu = g^{-1}(\eta) = \operatorname{artanh}\eta,

so every mean is allowed and the linear predictor lives in :math:`(-1, 1)` (the
IRLS halves steps that leave it). With it R's ``glm`` gives the paper's Table 1
deviances on Robust04 (348.91 for AP, 894.19 for P@10; ``tests/results/glm.py``).

``atanh`` is the inverse function used as the link (bayes_ir called it ``tanh``
before it followed the paper),

.. math:: g(\mu) = \operatorname{artanh}\mu
          = \tfrac12 \log\frac{1 + \mu}{1 - \mu}, \qquad \mu = \tanh\eta,

whose mean range is :math:`(-1, 1)`; scores in :math:`[0, 1]` use its upper half,
so a score of 1 is a boundary value (see ``boundary=`` in :func:`~.fit.fit_glm`)
and 0 is not. It is not in the default comparison (:data:`LINKS`) but can be asked
for by name (:data:`EXTRA_LINKS`). The third candidate, :math:`\mu = (\tanh(\eta) +
1)/2`, is *the logit link in disguise*: :math:`(\tanh(\eta)+1)/2 = 1/(1 + e^{-2\eta})`,
so :math:`g(\mu) = \operatorname{logit}(\mu)/2` gives exactly the logit fit (same
deviance, same fitted means, coefficients halved, same Tukey decisions).

``exp`` is the inverse of the log link: :math:`g(\mu) = e^{\mu}`, :math:`\mu =
\log\eta`, defined for :math:`\eta > 0` only (the IRLS halves steps that leave that
domain, as R's ``glm.fit`` does with ``valideta``). On Robust04 it gives R's deviance,
375.19 (AP) and 927.63 (P@10), not the paper's 387.52 and 955.56. No definition of the
link gives those: they are not least-squares fits. They are where IRLS ends when the
derivative :math:`d\mu/d\eta` is taken as :math:`e^{\eta}` (the log link's) instead of
:math:`1/\eta`: that iteration solves :math:`X^\top \operatorname{diag}(e^{\eta})
(y - \mu) = 0` instead of the normal equations and creeps (about 200 iterations from
R's start) to deviance 387.526 (AP) and 955.558 (P@10); R's ``glm`` with such a custom
link follows the same path (``tests/frequentist/glm/test_glm_robust04.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from statsmodels.genmod.families import links as sm_links

from bayes_ir.errors import BayesIRError

__all__ = [
    "EXTRA_LINKS",
    "LINKS",
    "Atanh",
    "Exp",
    "LinkSpec",
    "Tanh",
    "UnknownLinkError",
    "get_link",
    "link_names",
]


class UnknownLinkError(BayesIRError, ValueError):
    """A link name that is not one of :data:`LINKS`."""


class Exp(sm_links.Link):
    r"""The exponential link :math:`g(\mu) = e^{\mu}`, inverse :math:`\mu = \log\eta`.

    Notes
    -----
    .. math:: g(\mu) = e^{\mu},\quad g'(\mu) = g''(\mu) = e^{\mu},\quad
              g^{-1}(\eta) = \log\eta,\quad (g^{-1})'(\eta) = 1/\eta,\quad
              (g^{-1})''(\eta) = -1/\eta^2.

    The linear predictor must stay positive.
    """

    def __call__(self, p):
        """Return :math:`e^{p}`."""
        return np.exp(p)

    def inverse(self, z):
        r"""Return :math:`\log z` (NaN for :math:`z \le 0`)."""
        z = np.asarray(z, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(z > 0, np.log(np.where(z > 0, z, 1.0)), np.nan)

    def deriv(self, p):
        """Return :math:`g'(p) = e^{p}`."""
        return np.exp(p)

    def deriv2(self, p):
        """Return :math:`g''(p) = e^{p}`."""
        return np.exp(p)

    def inverse_deriv(self, z):
        """Return :math:`1/z`."""
        return 1.0 / np.asarray(z, dtype=float)

    def inverse_deriv2(self, z):
        """Return :math:`-1/z^2`."""
        return -1.0 / np.asarray(z, dtype=float) ** 2


class Tanh(sm_links.Link):
    r"""The paper's tanh link :math:`g(\mu) = \tanh\mu`, inverse :math:`\operatorname{artanh}\eta`.

    Notes
    -----
    .. math:: g(\mu) = \tanh\mu,\quad g'(\mu) = 1 - \tanh^2\mu,\quad
              g''(\mu) = -2\tanh\mu\,(1 - \tanh^2\mu),

    .. math:: g^{-1}(\eta) = \operatorname{artanh}\eta,\quad
              (g^{-1})'(\eta) = \frac{1}{1-\eta^2},\quad
              (g^{-1})''(\eta) = \frac{2\eta}{(1-\eta^2)^2}.

    Every mean is allowed; the linear predictor must stay inside :math:`(-1, 1)`.
    """

    def __call__(self, p):
        r"""Return :math:`\tanh p`."""
        return np.tanh(p)

    def inverse(self, z):
        r"""Return :math:`\operatorname{artanh} z` (NaN outside (-1, 1))."""
        z = np.asarray(z, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(np.abs(z) < 1, np.arctanh(np.clip(z, -1, 1)), np.nan)

    def deriv(self, p):
        r"""Return :math:`1 - \tanh^2 p`."""
        return 1.0 - np.tanh(p) ** 2

    def deriv2(self, p):
        r"""Return :math:`-2 \tanh p (1 - \tanh^2 p)`."""
        t = np.tanh(p)
        return -2.0 * t * (1.0 - t**2)

    def inverse_deriv(self, z):
        """Return :math:`1/(1 - z^2)`."""
        return 1.0 / (1.0 - np.asarray(z, dtype=float) ** 2)

    def inverse_deriv2(self, z):
        """Return :math:`2z/(1 - z^2)^2`."""
        z = np.asarray(z, dtype=float)
        return 2.0 * z / (1.0 - z**2) ** 2


class Atanh(sm_links.Link):
    r"""The link :math:`g(\mu) = \operatorname{artanh}\mu`, inverse :math:`\mu = \tanh\eta`.

    The paper's :class:`Tanh` with the roles of link and inverse swapped (its methods
    are :class:`Tanh`'s, exchanged).

    Notes
    -----
    .. math:: g(\mu) = \operatorname{artanh}\mu,\quad g'(\mu) = \frac{1}{1-\mu^2},\quad
              g''(\mu) = \frac{2\mu}{(1-\mu^2)^2},

    .. math:: g^{-1}(\eta) = \tanh\eta,\quad (g^{-1})'(\eta) = 1 - \tanh^2\eta,\quad
              (g^{-1})''(\eta) = -2\tanh\eta\,(1 - \tanh^2\eta).

    Means lie in :math:`(-1, 1)` (kept inside by one ulp). Not one of the paper's links
    (see the module notes).
    """

    _tanh = Tanh()

    def _clean(self, p):
        bound = 1.0 - np.finfo(float).eps
        return np.clip(p, -bound, bound)

    def __call__(self, p):
        r"""Return :math:`\operatorname{artanh}(p)`, with p kept inside (-1, 1)."""
        return self._tanh.inverse(self._clean(p))

    def inverse(self, z):
        r"""Return :math:`\tanh z`."""
        return self._tanh(z)

    def deriv(self, p):
        """Return :math:`1/(1 - p^2)`."""
        return self._tanh.inverse_deriv(self._clean(p))

    def deriv2(self, p):
        """Return :math:`2p/(1 - p^2)^2`."""
        return self._tanh.inverse_deriv2(self._clean(p))

    def inverse_deriv(self, z):
        r"""Return :math:`1 - \tanh^2 z`."""
        return self._tanh.deriv(z)

    def inverse_deriv2(self, z):
        r"""Return :math:`-2 \tanh z (1 - \tanh^2 z)`."""
        return self._tanh.deriv2(z)


@dataclass(frozen=True)
class LinkSpec:
    r"""A named link of the comparison.

    Attributes
    ----------
    name
        Name used by bayes_ir (and in the tables).
    factory
        Callable returning a fresh statsmodels link instance.
    mean_range
        Open interval of valid means :math:`\mu`; scores on or outside its finite
        ends are boundary values (handled by ``boundary=`` in ``fit_glm``).
    r_name
        R's name of the link in ``gaussian(link = ...)``, or ``None`` when R needs a
        custom ``link-glm`` object (``exp``, ``tanh``, ``atanh``).
    eta_range
        Open interval the linear predictor must stay in (``exp``: positive;
        ``tanh``: inside (-1, 1)); the IRLS halves steps that leave it.
    """

    name: str
    factory: type
    mean_range: tuple[float, float]
    r_name: str | None
    eta_range: tuple[float, float] = (-np.inf, np.inf)

    def valid_eta(self, eta: np.ndarray) -> bool:
        """Return True when every linear predictor is finite and inside :attr:`eta_range`."""
        lo, hi = self.eta_range
        return bool(np.all(np.isfinite(eta)) and np.all(eta > lo) and np.all(eta < hi))

    def make(self) -> sm_links.Link:
        """Return a statsmodels link instance."""
        return self.factory()


#: The links of Faggioli, Ferro and Fuhr (2022), in the order of their tables.
LINKS: dict[str, LinkSpec] = {
    spec.name: spec
    for spec in (
        LinkSpec("identity", sm_links.Identity, (-np.inf, np.inf), "identity"),
        LinkSpec("log", sm_links.Log, (0.0, np.inf), "log"),
        LinkSpec("exp", Exp, (-np.inf, np.inf), None, eta_range=(0.0, np.inf)),
        LinkSpec("tanh", Tanh, (-np.inf, np.inf), None, eta_range=(-1.0, 1.0)),
        LinkSpec("logit", sm_links.Logit, (0.0, 1.0), "logit"),
        LinkSpec("probit", sm_links.Probit, (0.0, 1.0), "probit"),
        LinkSpec("cauchit", sm_links.Cauchy, (0.0, 1.0), "cauchit"),
        LinkSpec("cloglog", sm_links.CLogLog, (0.0, 1.0), "cloglog"),
    )
}

#: Links that can be asked for by name but are not in the default comparison.
EXTRA_LINKS: dict[str, LinkSpec] = {
    "atanh": LinkSpec("atanh", Atanh, (-1.0, 1.0), None),
}

_ALIASES = {"cauchy": "cauchit", "linear": "identity", "artanh": "atanh"}


def link_names(*, extra: bool = False) -> tuple[str, ...]:
    """Return the names of the links: the paper's in table order, then :data:`EXTRA_LINKS`.

    The paper's links are the default comparison; ``extra=True`` appends the others.
    """
    return tuple(LINKS) + (tuple(EXTRA_LINKS) if extra else ())


def get_link(name: str) -> LinkSpec:
    """Return the :class:`LinkSpec` called ``name`` (case-insensitive).

    Aliases: ``cauchy`` = ``cauchit``, ``artanh`` = ``atanh``, ``linear`` = ``identity``.

    Raises
    ------
    UnknownLinkError
        For an unknown name; the message lists the known links.
    """
    if isinstance(name, LinkSpec):
        return name
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    spec = LINKS.get(key) or EXTRA_LINKS.get(key)
    if spec is None:
        known = ", ".join(link_names(extra=True))
        raise UnknownLinkError(f"unknown link {name!r}; choose from {known}")
    return spec
