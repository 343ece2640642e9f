"""What travels with a system's name wherever it is shown: the model-misfit mark, the model.

A system the model check flags (:attr:`bayes_ir.hierarchical.ModelCheck.flagged`) is
marked with :data:`MISFIT_MARK` in every table and figure that shows it (the CLI's
tables, the review, the figures), with one legend line saying what the mark means and
that its numbers are not to be acted on. Headers name the model that was really fitted
(:func:`model_description`): the likelihood and the residual-SD structure, which
``likelihood="auto"`` may have chosen.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "MISFIT_MARK",
    "SCORE_SCALE",
    "choice_line",
    "marked",
    "misfit_caption",
    "misfit_legend",
    "misfit_systems",
    "model_description",
    "sampler_description",
]

#: Mark of a system the model does not describe (tables, figures, the review).
MISFIT_MARK = "\u2020"
#: What a family of another link than the identity reports (headers say it).
SCORE_SCALE = (
    "logit link; differences are of expected scores over the topic population, on the "
    "measure's scale"
)

#: How each sampler is named in a header (the exact and Gibbs samplers have no NUTS step).
_SAMPLERS = {"exact": "exact sampler", "gibbs": "Gibbs sampler", "nuts": "NUTS"}


def _per_system_sd(result: Any) -> bool:
    """Whether a fit (its provenance) or a result (its ``sigma``) has one residual SD per system."""
    sigma = getattr(result, "sigma", None)
    if not isinstance(sigma, str):
        sigma = getattr(result, "provenance", {}).get("sigma", "pooled")
    return sigma == "system"


def model_description(fit: Any) -> str:
    """``"gaussian likelihood, per-system residual SD"``: the model that was fitted.

    Read from the ``likelihood`` of a fit (or of a result such as
    :class:`~bayes_ir.risk.BRiskResult`) and its residual-SD structure (``sigma`` of its
    provenance, or its own: ``"pooled"``, one SD for every system, or ``"system"``).
    """
    likelihood = str(getattr(fit, "likelihood", "") or "gaussian")
    spec = str((getattr(fit, "provenance", None) or {}).get("family") or likelihood)
    if likelihood not in ("gaussian", "skew_normal"):  # a family of another link
        return f"{spec} likelihood ({SCORE_SCALE})"
    sd = "per-system residual SD" if _per_system_sd(fit) else "one residual SD"
    return f"{likelihood} likelihood, {sd}"


def _named_model(name: str) -> str:
    """``"gaussian_sigma_by_system"`` -> ``"gaussian with a per-system residual SD"``.

    The Gaussian and skew-normal models name their residual SD; the other families
    (zoib, binomial, bernoulli and their variants) are named as they are.
    """
    if name.endswith("_sigma_by_system"):
        return f"{name.removesuffix('_sigma_by_system')} with a per-system residual SD"
    if name in ("gaussian", "skew_normal"):
        return f"{name} with one residual SD"
    return name


def choice_line(choice: Any) -> str:
    """One line saying which model ``likelihood="auto"`` chose and by how much it won.

    ``choice`` is a :class:`~bayes_ir.hierarchical.likelihoods.LikelihoodComparison`;
    its ``summary()`` has the table of every candidate and the rule.
    """
    head = f"Model chosen by {choice.chosen_by}: {_named_model(choice.chosen)}"
    if not choice.runner_up:
        return (
            f"{head}, the only candidate of its outcome space fitted (--explain shows every "
            "candidate and the checks)"
        )
    return (
        f"{head}; it predicts the scores better than {_named_model(choice.runner_up)} by "
        f"{choice.elpd_diff:.1f} ELPD (SE {choice.elpd_diff_se:.1f}; --explain shows every "
        "candidate)"
    )


def sampler_description(fit: Any) -> str:
    """``"exact sampler"``, ``"Gibbs sampler"`` or ``"NUTS"``: what drew the posterior."""
    method = str(getattr(fit, "method", "nuts"))
    return _SAMPLERS.get(method, method)


def misfit_systems(fit: Any, systems: Iterable[str] | None = None) -> tuple[str, ...]:
    """Return the systems among ``systems`` (default: all) that the fit's model check flags.

    ``fit`` may also be a result that keeps the flagged systems as ``misfit`` (BRisk).
    Empty when the fit has no model check (``model_check=False``).
    """
    flagged = getattr(fit, "misfit", None)
    if not isinstance(flagged, tuple):
        check = getattr(fit, "model_check", None)
        if check is None:
            return ()
        flagged = tuple(check.flagged)
    return flagged if systems is None else tuple(s for s in systems if s in set(flagged))


def marked(name: str, misfit: Iterable[str], *, text: str | None = None) -> str:
    """``name`` (or ``text``, e.g. ``repr(name)``) with :data:`MISFIT_MARK` when in ``misfit``."""
    shown = name if text is None else text
    return f"{shown} {MISFIT_MARK}" if name in set(misfit) else shown


def misfit_legend(
    fit: Any,
    misfit: Iterable[str],
    *,
    champion: str | None = None,
    consequence: str = "",
    scores: str = "",
) -> str:
    """One line under a table or figure saying what the mark means ("" when nothing is marked).

    ``"† model misfit: the gaussian model does not describe chal_risky (coverage_95,
    sd): do not act on its numbers"``; ``consequence`` replaces "do not act on its
    numbers" when the table says more precisely what is affected; ``scores`` names
    what the model describes when it is not the scores themselves (``" of the
    risk-adjusted scores"``). A misfitting ``champion`` is said first: every contrast
    with it is affected.
    """
    names = list(dict.fromkeys(misfit))
    if not names:
        return ""
    check = getattr(fit, "model_check", None)
    model = str(getattr(fit, "likelihood", "") or "gaussian")
    model += " (per-system residual SD)" if _per_system_sd(fit) else ""

    def said(name: str) -> str:
        failed = ", ".join(check.failed(name)) if check is not None else ""
        role = "the champion " if name == champion else ""
        return f"{role}{name}" + (f" ({failed})" if failed else "")

    names.sort(key=lambda n: n != champion)
    whose = "its" if len(names) == 1 else "their"
    return (
        f"{MISFIT_MARK} model misfit: the {model} model{scores} does not describe "
        f"{', '.join(said(n) for n in names)}: " + (consequence or f"do not act on {whose} numbers")
    )


def misfit_caption(misfit: Iterable[str], *, champion: str | None = None) -> str:
    """Return the short legend of a figure or a caption ("" when nothing is marked).

    ``"† model misfit: the model does not describe chal_risky: do not act on its
    numbers"``.
    """
    names = sorted(dict.fromkeys(misfit), key=lambda n: n != champion)
    if not names:
        return ""
    said = [f"the champion {n}" if n == champion else n for n in names]
    whose = "its" if len(names) == 1 else "their"
    return (
        f"{MISFIT_MARK} model misfit: the model does not describe {', '.join(said)}: "
        f"do not act on {whose} numbers"
    )
