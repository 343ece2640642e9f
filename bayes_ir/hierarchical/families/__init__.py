"""Likelihood families of the hierarchical model: one module each, one registry.

A family is the distribution of a score given the crossed predictor
``b0 + topic_effect[t] + system_effect[s]`` (see :mod:`.base`): ``gaussian`` and
``skew_normal`` (continuous, :mod:`.gaussian`), ``bernoulli`` (0/1 per item) and
``binomial`` (k of n, e.g. P@10; :mod:`.binomial`), ``zoib`` (Beta with exact 0s and
1s, for AP, nDCG, RR; :mod:`.zoib`). Name one in ``fit(table, likelihood=...)``, with
options where it has some: ``"binomial(trials=10)"``, ``"zoib(inflation=system)"``.

Everything that reads a fit (contrasts, decisions, rankings, the review) reads the
family's score-scale means (:meth:`Family.system_means`) and never asks which family
it was; the model check, PSIS-LOO and the predictive intervals read its cells
(:meth:`Family.cells`). A new family is one module here and one line in
:data:`FAMILIES`.

>>> from bayes_ir.hierarchical.families import get_family
>>> get_family("binomial(trials=10)").outcome_space
'counts'
"""

from bayes_ir.hierarchical.families.base import (
    OUTCOME_SPACES,
    QUADRATURE_RANGE,
    Cells,
    Family,
    comparable,
    parse_spec,
    population_intercept,
    population_mean,
)
from bayes_ir.hierarchical.families.binomial import Bernoulli, Binomial
from bayes_ir.hierarchical.families.gaussian import Gaussian, SkewNormal
from bayes_ir.hierarchical.families.zoib import ZOIB

__all__ = [
    "FAMILIES",
    "OUTCOME_SPACES",
    "QUADRATURE_RANGE",
    "Bernoulli",
    "Binomial",
    "Cells",
    "Family",
    "Gaussian",
    "SkewNormal",
    "ZOIB",
    "comparable",
    "family_of",
    "get_family",
    "population_intercept",
    "population_mean",
]

#: Every family, by name.
FAMILIES: dict[str, type[Family]] = {
    cls.name: cls for cls in (Gaussian, SkewNormal, Bernoulli, Binomial, ZOIB)
}
_ALIASES = {
    "normal": "gaussian",
    "skewnormal": "skew_normal",
    "zero_one_inflated_beta": "zoib",
}


def get_family(spec: str | Family) -> Family:
    """Return the family named by ``spec`` (``"binomial(trials=10)"``) or ``spec`` itself.

    Raises
    ------
    OptionError
        An unknown name or option (one line naming it and the choices).
    """
    from bayes_ir import validate

    if isinstance(spec, Family):
        return spec
    name, options = parse_spec(spec)
    name = _ALIASES.get(name, name)
    if name not in FAMILIES:
        validate.choice("likelihood", name, (*FAMILIES, "auto"))
    return FAMILIES[name](**options)


def family_of(fit) -> Family:
    """Return the family of a fit (its ``likelihood`` with the options in its provenance)."""
    prov = getattr(fit, "provenance", None) or {}
    return get_family(prov.get("family") or getattr(fit, "likelihood", None) or "gaussian")
