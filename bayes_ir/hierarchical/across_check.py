r"""Posterior predictive checks of every system in every group of a fit across groups.

The checks of :func:`bayes_ir.hierarchical.check_model` (coverage of the 50% and 95%
predictive intervals, and the posterior predictive p-values of a system's mean, the SD
and skewness of its residuals and its share of topics lost to the champion, with the
same calibrated cut-offs and Monte Carlo borderline band), run on each group (each
collection, or each segment) of an :class:`~bayes_ir.hierarchical.AcrossFit`: within a
group :math:`g` (with its own intercept: a collection, or a segment) the model across
groups is the two-way model

.. math::

    y_{ts} = b_{0g} + a_t + u_g\,(\beta_s + \gamma_{sg}) + e_{ts},\qquad
    e_{ts} \sim N(0, \sigma_g^2),

so a system's cell means in group :math:`g` are :math:`b_{0g} + u_g(\beta_s +
\gamma_{sg})` plus the topic effects. The fit keeps no topic effects (GLUE's 57,000
examples would take gigabytes of draws), so for each checked draw they are drawn from
their full conditional given the other parameters: with the residuals
:math:`r_{ts}` of the rest of the model and :math:`n_t` the topic's observed systems,

.. math::

    x_t \sim N\Big(\frac{\sum_s r_{ts}/\sigma_c^2}{D_t},\ D_t^{-1}\Big),\quad
    D_t = \frac{n_t}{\sigma_c^2} + \frac1{\tau_c^2},\qquad
    a_t = x_t - D_t^{-1}\,\frac{\sum_u x_u}{\sum_u D_u^{-1}}

(the last step conditions the independent normals on the zero sum of the topic effects
of the group, Rue and Held 2005, section 2.3.3): together with the draw of the
other parameters, a draw from the joint posterior. A logit family's fit (NUTS) keeps its
topic effects, and its cells are the family's
(:meth:`~bayes_ir.hierarchical.families.Family.cells`: randomised PIT, and the shares of
exact 0s and 1s among the checks). A system is flagged when a check fails in any group,
and each failed check is named with its group.

References
----------
Gelman, A., Meng, X.-L., and Stern, H. (1996). Posterior predictive assessment of model
fitness via realized discrepancies. *Statistica Sinica* 6(4), 733-760.

Rue, H., Held, L. (2005). *Gaussian Markov Random Fields: Theory and Applications*.
Chapman & Hall, section 2.3.3.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults
from bayes_ir.errors import ModelCheckWarning
from bayes_ir.hierarchical.adequacy import (
    ALPHA_COVERAGE,
    ALPHA_PPP,
    MIN_DRAWS,
    MODEL_CHECK_COLUMNS,
    ModelCheck,
    _check_arrays,
    _check_frame,
    _draws_for,
    _effective_draws,
)

__all__ = ["AcrossModelCheck", "check_across"]

#: Largest draws x topics x systems of one collection held at once: a larger collection
#: is checked on fewer draws (at least ``MIN_DRAWS``).
_ELEMENTS: int = 10_000_000


@dataclass(frozen=True)
class AcrossModelCheck:
    """The model check of every group of a fit across groups: build with :func:`check_across`.

    Attributes
    ----------
    by
        ``"collection"`` or ``"segment"``.
    groups
        ``{group: ModelCheck}`` (:class:`~bayes_ir.hierarchical.ModelCheck`, one row per
        system with scores in the group).
    systems, roles
        The systems of the fit, in order, and their roles.
    likelihood
        The model's family, as the warnings name it.
    """

    by: str
    groups: dict[str, ModelCheck]
    systems: tuple[str, ...]
    roles: tuple[str, ...]
    likelihood: str = "Gaussian"

    @property
    def flagged(self) -> tuple[str, ...]:
        """Systems with a failed check in at least one group, in the fit's order."""
        bad = {s for check in self.groups.values() for s in check.flagged}
        return tuple(s for s in self.systems if s in bad)

    @property
    def passed(self) -> bool:
        """True when no system is flagged in any group."""
        return not self.flagged

    @property
    def borderline(self) -> tuple[str, ...]:
        """Systems not flagged with a check in the borderline band in some group."""
        near = {s for check in self.groups.values() for s in check.borderline}
        return tuple(s for s in self.systems if s in near and s not in self.flagged)

    def failed(self, system: str) -> tuple[str, ...]:
        """Return the checks ``system`` failed, each with its group (``"sd in trec-covid"``)."""
        return tuple(
            f"{c} in {g}" for g, check in self.groups.items() for c in check.failed(system)
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per group and system: ``<by>`` then :data:`MODEL_CHECK_COLUMNS`."""
        frames = [check.to_frame().assign(**{self.by: g}) for g, check in self.groups.items()]
        return pd.concat(frames, ignore_index=True)[[self.by, *MODEL_CHECK_COLUMNS]]

    def to_latex(self, **options: Any) -> str:
        """Return :meth:`to_frame` as LaTeX (see :func:`bayes_ir.report.result_to_latex`)."""
        from bayes_ir.report.latex import result_to_latex

        return result_to_latex(self, **options)

    def summary(self) -> str:
        """One line: every system described, or the failed checks of each flagged one."""
        n = len(self.groups)
        if self.passed:
            return f"Model check ({n} {self.by}s): every system described in every {self.by}"
        lines = [f"Model check ({n} {self.by}s): the model does not describe"]
        lines += [f"  {s}: {', '.join(self.failed(s))}" for s in self.flagged]
        return "\n".join(lines)

    def warn(self, *, stacklevel: int = 1) -> None:
        """Emit a :class:`~bayes_ir.errors.ModelCheckWarning` per flagged champion or challenger."""
        for system, role in zip(self.systems, self.roles, strict=True):
            if role != "artifact" and system in self.flagged:
                warnings.warn(
                    f"the {self.likelihood} model across {self.by}s does not describe {system} "
                    f"({', '.join(self.failed(system))}): do not act on its numbers",
                    ModelCheckWarning,
                    stacklevel=stacklevel + 1,
                )

    def __str__(self) -> str:
        return self.summary()


def _topic_draws(
    resid: np.ndarray, sigma: np.ndarray, tau: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Topic effects (n, T) from their full conditional, zero-sum (module docstring).

    ``resid`` (n, T, S): scores less the rest of the model, NaN where not observed.
    """
    seen = np.isfinite(resid)
    count = seen.sum(axis=2)
    precision = count / sigma[:, None] ** 2 + 1.0 / tau[:, None] ** 2
    mean = np.where(seen, resid, 0.0).sum(axis=2) / sigma[:, None] ** 2 / precision
    x = mean + rng.standard_normal(mean.shape) / np.sqrt(precision)
    var = 1.0 / precision
    return x - var * (x.sum(axis=1) / var.sum(axis=1))[:, None]


def check_across(
    fit: Any,
    *,
    n_draws: int | None = None,
    seed: int | None = None,
    alpha_ppp: float = ALPHA_PPP,
    alpha_coverage: float = ALPHA_COVERAGE,
) -> AcrossModelCheck:
    """Posterior predictive checks of every system in every group of an across fit.

    Parameters
    ----------
    fit
        An :class:`~bayes_ir.hierarchical.AcrossFit`.
    n_draws
        Posterior draws to replicate from (a seeded subset; default as
        :func:`~bayes_ir.hierarchical.check_model` chooses for the fit's cells).
    seed
        Seed of the subset, the topic effects and the replicates.
    alpha_ppp, alpha_coverage
        Cut-offs of the flagging rule (those of ``check_model``, calibrated there).

    Returns
    -------
    AcrossModelCheck
    """
    design = fit.design
    family = fit.family
    gaussian = family.name == "gaussian"
    seed = defaults.SEED if seed is None else int(seed)
    rng = np.random.default_rng([seed, 0xAC5])
    total = fit.n_draws
    n = min(total, int(n_draws) if n_draws is not None else _draws_for(design.n_cells))
    post = fit.posterior["posterior"].to_dataset()
    inter = design.term(f"system:{design.by}")
    own = ("sigma",) if gaussian else family.design_own
    names = ("b0", "sigma_topic", "system", inter.name, *own)
    every = {k: fit.term_draws(k) for k in names}
    b0t, topic_term = design.terms[0], design.term("topic")
    systems = list(design.systems)
    level = {
        (s, g): k
        for k, (s, g) in enumerate(
            zip(inter.components["system"], inter.components[design.by], strict=True)
        )
    }
    cells = design.cells.assign(score=design.y, _b0=b0t.index, _res=design.residual.index,
                                _tau=topic_term.scale_group[topic_term.index])  # fmt: skip
    checks: dict[str, ModelCheck] = {}
    kept_topics = np.empty((0, 0)) if gaussian else fit.term_draws("topic")
    # one block per intercept (a collection, or a segment): its topics sum to zero there
    for c in range(b0t.n_levels):
        part = cells[cells["_b0"] == c]
        group = str(part[design.by].iat[0])  # the block's collection or segment
        block = design.block(c)
        y = block.matrix  # (T, S)
        n_c = min(n, max(MIN_DRAWS, _ELEMENTS // y.size))
        keep = np.sort(rng.choice(total, size=n_c, replace=False))
        n_eff = _effective_draws(post, n_c)
        b0, tau, beta, gamma = (every[k][keep] for k in names[:4])
        res_group = int(part["_res"].iat[0])
        mine = {k: every[k][keep][:, res_group] for k in own}
        unit = mine["sigma"] if inter.standardized else np.ones(n_c)
        eff = np.zeros((n_c, len(systems)))  # 0 where a system has no score in the block
        for j, s in enumerate(systems):
            if (s, group) in level:
                eff[:, j] = unit * (beta[:, j] + gamma[:, level[(s, group)]])
        present = np.flatnonzero(np.isfinite(y).any(axis=0))
        if gaussian:
            fixed = b0[:, c, None, None] + eff[:, None, :]  # (n, T, S)
            sig = mine["sigma"]
            topic = _topic_draws(y[None] - fixed, sig, tau[:, int(part["_tau"].iat[0])], rng)
            cells_of = _gaussian_cells(b0[:, c], topic, eff[:, present], sig)
        else:  # the topic effects are kept by NUTS
            where = dict(zip(part["topic"], topic_term.index[part.index], strict=True))
            topic = kept_topics[np.ix_(keep, [where[t] for t in block.topics])]
            params = {"b0": b0[:, c], "topic": topic, "system": eff[:, present], **mine}

            def cells_of(idx: np.ndarray, params: dict = params) -> Any:
                return family.cells(params, idx)

        labels = [systems[j] for j in present]
        champ = labels.index(design.champion) if design.champion in labels else None
        res = _check_arrays(y[:, present], cells_of, n_c, champ, rng, n_eff,
                            family.point_masses)  # fmt: skip
        roles = [design.roles[j] for j in present]
        frame = _check_frame(res, labels, roles, np.full(len(labels), n_c), alpha_ppp,
                             alpha_coverage)  # fmt: skip
        checks[group] = ModelCheck(
            frame=frame,
            likelihood=family.name,
            n_draws=n_c,
            seed=seed,
            alpha_ppp=float(alpha_ppp),
            alpha_coverage=float(alpha_coverage),
            collection=group,
            measure=design.measures[str(part["collection"].iat[0])],
        )
    return AcrossModelCheck(by=str(design.by), groups=checks, systems=tuple(systems),
                            roles=tuple(design.roles),
                            likelihood="Gaussian" if gaussian else family.name)  # fmt: skip


def _gaussian_cells(b0: np.ndarray, topic: np.ndarray, eff: np.ndarray, sigma: np.ndarray) -> Any:
    """``cells_of(block)`` of the model check: the Gaussian cells of a block of systems.

    ``b0`` and ``sigma`` have shape (n,), ``topic`` (n, T) and ``eff`` (n, S); a block's
    cells have mean ``b0 + topic + effect`` and shape (n, B, T).
    """
    from bayes_ir.hierarchical.families.gaussian import GaussianCells

    def cells_of(block: np.ndarray) -> Any:
        mu = b0[:, None, None] + eff[:, block, None] + topic[:, None, :]
        return GaussianCells(mu, np.broadcast_to(sigma[:, None, None], mu.shape), None)

    return cells_of
