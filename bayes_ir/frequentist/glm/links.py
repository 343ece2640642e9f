r"""Link functions of the GLM comparison: statsmodels links plus ``exp`` and ``tanh``.

statsmodels ships identity, log, logit, probit, cauchit (``Cauchy``) and cloglog.
The two links it lacks are written here as :class:`statsmodels.genmod.families.links.Link`
subclasses with analytic first and second derivatives, so that they work inside
``statsmodels.api.GLM`` as well as in the structured IRLS of :mod:`.fit`.

Which tanh?
-----------
Two "tanh links" appear in the literature. This module's ``tanh`` is the hyperbolic
tangent as the *inverse link*,

.. math:: \mu = \tanh(\eta), \qquad g(\mu) = \operatorname{artanh}(\mu)
          = \tfrac12 \log\frac{1 + \mu}{1 - \mu},

whose mean range is :math:`(-1, 1)`; scores in :math:`[0, 1]` use its upper half,
so a score of 1 is a boundary value (see ``boundary=`` in :func:`~.fit.fit_glm`)
and 0 is not. The other candidate, :math:`\mu = (\tanh(\eta) + 1)/2`, maps onto
:math:`(0, 1)` but is *the logit link in disguise*: :math:`(\tanh(\eta)+1)/2 =
1/(1 + e^{-2\eta})`, so :math:`g(\mu) = \operatorname{logit}(\mu)/2`. A GLM with it
has exactly the logit fit (same deviance, same fitted means, coefficients halved,
same Tukey decisions), so it cannot be a separate row of the comparison; the
distinct link is the one above.

``exp`` is the inverse of the log link: :math:`g(\mu) = e^{\mu}`, :math:`\mu =
\log\eta`, defined for :math:`\eta > 0` only (the IRLS halves steps that leave that
domain, as R's ``glm.fit`` does with ``valideta``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from statsmodels.genmod.families import links as sm_links

from bayes_ir.errors import BayesIRError

__all__ = ["LINKS", "Exp", "LinkSpec", "Tanh", "UnknownLinkError", "get_link", "link_names"]


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
    r"""The tanh link :math:`g(\mu) = \operatorname{artanh}\mu`, inverse :math:`\mu = \tanh\eta`.

    Notes
    -----
    .. math:: g(\mu) = \operatorname{artanh}\mu,\quad g'(\mu) = \frac{1}{1-\mu^2},\quad
              g''(\mu) = \frac{2\mu}{(1-\mu^2)^2},

    .. math:: g^{-1}(\eta) = \tanh\eta,\quad (g^{-1})'(\eta) = 1 - \tanh^2\eta,\quad
              (g^{-1})''(\eta) = -2\tanh\eta\,(1 - \tanh^2\eta).

    Means lie in :math:`(-1, 1)`; see the module notes for why this, and not
    :math:`(\tanh\eta + 1)/2` (which equals logit), is the tanh of the comparison.
    """

    def _clean(self, p):
        bound = 1.0 - np.finfo(float).eps
        return np.clip(p, -bound, bound)

    def __call__(self, p):
        r"""Return :math:`\operatorname{artanh}(p)`, with p kept inside (-1, 1)."""
        return np.arctanh(self._clean(p))

    def inverse(self, z):
        r"""Return :math:`\tanh z`."""
        return np.tanh(z)

    def deriv(self, p):
        """Return :math:`1/(1 - p^2)`."""
        p = self._clean(p)
        return 1.0 / (1.0 - p**2)

    def deriv2(self, p):
        """Return :math:`2p/(1 - p^2)^2`."""
        p = self._clean(p)
        return 2.0 * p / (1.0 - p**2) ** 2

    def inverse_deriv(self, z):
        r"""Return :math:`1 - \tanh^2 z`."""
        return 1.0 - np.tanh(z) ** 2

    def inverse_deriv2(self, z):
        r"""Return :math:`-2 \tanh z (1 - \tanh^2 z)`."""
        t = np.tanh(z)
        return -2.0 * t * (1.0 - t**2)


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
        custom ``link-glm`` object (``exp``, ``tanh``).
    positive_eta
        True when the linear predictor must stay positive (``exp``).
    """

    name: str
    factory: type
    mean_range: tuple[float, float]
    r_name: str | None
    positive_eta: bool = False

    def make(self) -> sm_links.Link:
        """Return a statsmodels link instance."""
        return self.factory()


#: The links of Faggioli, Ferro and Fuhr (2022), in the order of their tables.
LINKS: dict[str, LinkSpec] = {
    spec.name: spec
    for spec in (
        LinkSpec("identity", sm_links.Identity, (-np.inf, np.inf), "identity"),
        LinkSpec("log", sm_links.Log, (0.0, np.inf), "log"),
        LinkSpec("exp", Exp, (-np.inf, np.inf), None, positive_eta=True),
        LinkSpec("tanh", Tanh, (-1.0, 1.0), None),
        LinkSpec("logit", sm_links.Logit, (0.0, 1.0), "logit"),
        LinkSpec("probit", sm_links.Probit, (0.0, 1.0), "probit"),
        LinkSpec("cauchit", sm_links.Cauchy, (0.0, 1.0), "cauchit"),
        LinkSpec("cloglog", sm_links.CLogLog, (0.0, 1.0), "cloglog"),
    )
}

_ALIASES = {"cauchy": "cauchit", "atanh": "tanh", "linear": "identity"}


def link_names() -> tuple[str, ...]:
    """Names of the available links, in table order."""
    return tuple(LINKS)


def get_link(name: str) -> LinkSpec:
    """Return the :class:`LinkSpec` called ``name`` (case-insensitive; ``cauchy`` = ``cauchit``).

    Raises
    ------
    UnknownLinkError
        For an unknown name; the message lists the known links.
    """
    if isinstance(name, LinkSpec):
        return name
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in LINKS:
        raise UnknownLinkError(f"unknown link {name!r}; choose from {', '.join(LINKS)}")
    return LINKS[key]
