"""Compare link functions over measures x collections: the paper's Tables 1 and 2.

:func:`compare_links` fits every link to every (collection, measure) block of a
score table, runs the topic-blocked Tukey HSD on each fit, and collects the
goodness of fit (deviance, AIC, BIC, log-likelihood, iterations, convergence) and
the number of significantly different system pairs. :class:`LinkComparison` lays
them out as Faggioli, Ferro and Fuhr (2022) do: one row per link, one column per
collection and measure, with the best link of each column highlighted.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir import defaults, validate
from bayes_ir.errors import BayesIRError, ConvergenceError
from bayes_ir.frequentist.glm.fit import GLMFitResult, _fit_matrix, _matrix
from bayes_ir.frequentist.glm.links import get_link, link_names
from bayes_ir.frequentist.glm.tukey import TukeyHSDResult, _tukey_from_fit
from bayes_ir.sweep import sweep
from bayes_ir.table import ScoreTable

__all__ = ["STATISTICS", "LinkComparison", "compare_links"]

#: Statistics of the comparison and whether larger is better.
STATISTICS: dict[str, bool] = {
    "deviance": False,
    "aic": False,
    "bic": False,
    "llf": True,
    "n_significant": True,
}

#: Columns of :meth:`LinkComparison.to_frame`.
COLUMNS = (
    "collection", "measure", "link", "deviance", "null_deviance", "scale", "llf", "aic", "bic",
    "iterations", "converged", "n_topics", "n_systems", "n_clipped", "n_dropped", "n_pairs",
    "n_significant", "alpha", "message",
)  # fmt: skip


@dataclass(frozen=True, eq=False)  # array fields: compare explicitly
class LinkComparison:
    """Goodness of fit and significant pairs of every link on every block.

    Attributes
    ----------
    frame
        Tidy table, one row per (collection, measure, link), columns :data:`COLUMNS`.
        A link that failed has NaN statistics, ``converged`` False and the reason in
        ``message``.
    links
        Links compared, in table order.
    alpha
        Family-wise error rate of the Tukey HSD.
    boundary
        Boundary handling of the fits (see :func:`~.fit.fit_glm`).
    fits
        The :class:`GLMFitResult` of each row (``None`` where the fit failed).
    tukeys
        The :class:`TukeyHSDResult` of each row (``None`` where the fit failed).
    notes
        What the loader changed or left out in the table (the table's ``notes``).
    """

    frame: pd.DataFrame
    links: tuple[str, ...]
    alpha: float
    boundary: str
    fits: tuple[GLMFitResult | None, ...] = field(repr=False)
    tukeys: tuple[TukeyHSDResult | None, ...] = field(repr=False)
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """Return the tidy table (a copy), columns :data:`COLUMNS`."""
        return self.frame.copy()

    def table(self, stat: str = "deviance") -> pd.DataFrame:
        """Wide table of one statistic: rows links, columns ``"collection measure"``.

        ``stat="deviance"`` is the layout of the paper's Table 1, ``"n_significant"``
        of its Table 2; ``"aic"``, ``"bic"`` and ``"llf"`` also work.
        """
        _check_stat(stat)
        frame = self.frame.assign(column=self.frame["collection"] + " " + self.frame["measure"])
        wide = frame.pivot(index="link", columns="column", values=stat)
        columns = list(dict.fromkeys(frame["column"]))
        return wide.reindex(index=list(self.links), columns=columns).rename_axis(
            index="link", columns=None
        )

    def best(self, stat: str = "deviance") -> pd.Series:
        """Best converged link of each column (lowest deviance/AIC/BIC, most pairs/llf).

        Ties keep every best link, joined by ``", "``.
        """
        _check_stat(stat)
        wide = self.table(stat)
        ok = self.table_converged()
        out = {}
        for col in wide.columns:
            values = wide[col].where(ok[col].astype(bool))
            if values.notna().sum() == 0:
                out[col] = ""
                continue
            target = values.max() if STATISTICS[stat] else values.min()
            out[col] = ", ".join(values.index[np.isclose(values, target, rtol=1e-12, atol=0)])
        return pd.Series(out, name=f"best {stat}")

    def table_converged(self) -> pd.DataFrame:
        """Wide table of the ``converged`` flags, same layout as :meth:`table`."""
        frame = self.frame.assign(column=self.frame["collection"] + " " + self.frame["measure"])
        wide = frame.pivot(index="link", columns="column", values="converged")
        columns = list(dict.fromkeys(frame["column"]))
        return wide.reindex(index=list(self.links), columns=columns).fillna(False)

    def to_markdown(self, stat: str = "deviance", *, float_format: str = "%.4f") -> str:
        """Markdown table of ``stat`` with the best link of each column in bold.

        Non-converged fits are marked with ``*`` (:func:`bayes_ir.report.glm.link_markdown`).
        """
        from bayes_ir.report.glm import link_markdown

        return link_markdown(self, stat, float_format=float_format)

    def to_latex(self, stat: str = "deviance", **options: Any) -> str:
        """LaTeX table of ``stat`` in the package's style, the best link of each column bold.

        ``options``: ``caption``, ``label``, ``digits`` of
        :func:`bayes_ir.report.glm.link_latex`.
        """
        from bayes_ir.report.glm import link_latex

        return link_latex(self, stat, **options)

    def get_fit(
        self, link: str, *, collection: str | None = None, measure: str | None = None
    ) -> GLMFitResult:
        """Return the fit of one link (and block, when the comparison has several)."""
        return self._get(self.fits, link, collection, measure)

    def get_tukey(
        self, link: str, *, collection: str | None = None, measure: str | None = None
    ) -> TukeyHSDResult:
        """Return the Tukey HSD of one link (and block, when the comparison has several)."""
        return self._get(self.tukeys, link, collection, measure)

    def _get(self, items, link, collection, measure):
        name = get_link(link).name
        mask = self.frame["link"] == name
        for col, value in (("collection", collection), ("measure", measure)):
            if value is not None:
                mask &= self.frame[col] == value
        rows = np.flatnonzero(mask.to_numpy())
        if len(rows) != 1:
            raise BayesIRError(
                f"{len(rows)} rows match link {name!r}"
                + (f", collection {collection!r}" if collection else "")
                + (f", measure {measure!r}" if measure else "")
                + ": pass collection= and measure= to pick one block"
            )
        item = items[rows[0]]
        if item is None:
            raise ConvergenceError(f"the {name} fit failed: {self.frame['message'].iat[rows[0]]}")
        return item

    def summary(self) -> str:
        """Both tables (deviance; significant pairs) as Markdown, plus failures."""
        from bayes_ir.report.glm import link_summary

        return link_summary(self)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.table("deviance").to_html() + self.table("n_significant").to_html()

    def plot(self, **kwargs):
        """Deviance and significant pairs per link (see :func:`bayes_ir.plots.glm.plot_links`)."""
        from bayes_ir.plots.glm import plot_links

        return plot_links(self, **kwargs)


def _check_stat(stat: str) -> None:
    if stat not in STATISTICS:
        raise BayesIRError(f"unknown statistic {stat!r}; choose from {', '.join(STATISTICS)}")


def compare_links(
    table: ScoreTable,
    *,
    links: Sequence[str] | None = None,
    alpha: float | None = None,
    boundary: str = "clip",
    epsilon: float | None = None,
    min_mean: float | None = None,
    collections: Iterable[str] | None = None,
    measures: Iterable[str] | None = None,
    executor: Executor | None = None,
) -> LinkComparison:
    """Fit every link to every (collection, measure) block and run the blocked Tukey HSD.

    Parameters
    ----------
    table
        Complete scores; every (collection, measure) block is analysed (restrict with
        ``collections=`` and ``measures=``).
    links
        Link names (default: all eight, in the paper's order); a link named twice is
        fitted once.
    alpha
        Family-wise error rate of the Tukey HSD (default
        :data:`bayes_ir.defaults.GLM_ALPHA`).
    boundary, epsilon, min_mean
        Boundary handling, as in :func:`~.fit.fit_glm`; the same for every link.
    collections, measures
        Subsets of the blocks to analyse.
    executor
        Runs the blocks through :func:`bayes_ir.sweep.sweep` (default: local processes
        when there are several blocks; the links of a block run in one task).

    Returns
    -------
    LinkComparison

    Notes
    -----
    The deviance of a Gaussian GLM is its residual sum of squares, so deviances of
    different links on the same block are directly comparable (same response, same
    number of parameters: AIC and BIC rank the links as the deviance does). Clipping
    moves a few scores by ``epsilon`` for the links with finite mean bounds, which
    changes a deviance by at most ``epsilon * (2 + epsilon)`` per clipped score.
    A failed fit does not stop the comparison: its row reports why.

    References
    ----------
    Faggioli, G., Ferro, N., and Fuhr, N. (2022). Detecting significant differences
    between information retrieval systems via generalized linear models. *CIKM '22*,
    446-456 (Tables 1 and 2). https://doi.org/10.1145/3511808.3557286
    """
    names = tuple(dict.fromkeys(get_link(name).name for name in (links or link_names())))
    if not names:
        raise BayesIRError("links is empty: name at least one link")
    alpha = validate.probability("alpha", defaults.GLM_ALPHA if alpha is None else alpha)
    wanted_c = set(collections) if collections is not None else None
    wanted_m = set(measures) if measures is not None else None
    items = []
    for coll, meas in table.blocks():
        if (wanted_c is None or coll in wanted_c) and (wanted_m is None or meas in wanted_m):
            items.append(_matrix(table, collection=coll, measure=meas))
    if not items:
        raise BayesIRError("no (collection, measure) block matches collections= and measures=")
    task = functools.partial(
        _compare_block,
        links=names,
        alpha=alpha,
        boundary=boundary,
        epsilon=epsilon,
        min_mean=min_mean,
    )
    blocks = sweep(task, items, executor=executor, label="GLM fits")
    rows, fits, tukeys = [], [], []
    for block in blocks:
        for row, fit, tukey in block:
            rows.append(row)
            fits.append(fit)
            tukeys.append(tukey)
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return LinkComparison(
        frame=frame,
        links=names,
        alpha=alpha,
        boundary=boundary,
        fits=tuple(fits),
        tukeys=tuple(tukeys),
        notes=tuple(table.notes),
    )


def _compare_block(
    item: tuple[np.ndarray, list[str], list[str], str, str],
    *,
    links: tuple[str, ...],
    alpha: float,
    boundary: str,
    epsilon: float | None,
    min_mean: float | None,
) -> list[tuple[dict, GLMFitResult | None, TukeyHSDResult | None]]:
    """Fit all links to one block (the unit of work of the sweep)."""
    import warnings

    from bayes_ir.errors import ConvergenceWarning

    raw, systems, topics, coll, meas = item
    out: list[tuple[dict[str, Any], GLMFitResult | None, TukeyHSDResult | None]] = []
    for name in links:
        base = {
            "collection": coll,
            "measure": meas,
            "link": name,
            "n_topics": len(topics),
            "alpha": alpha,
        }
        try:
            with warnings.catch_warnings():
                # non-convergence is reported in the row (converged, message)
                warnings.simplefilter("ignore", ConvergenceWarning)
                fit = _fit_matrix(
                    raw,
                    list(systems),
                    list(topics),
                    coll,
                    meas,
                    get_link(name),
                    boundary=boundary,
                    epsilon=epsilon,
                    min_mean=min_mean,
                    tol=None,
                    maxiter=None,
                    method="irls",
                )
            tukey = _tukey_from_fit(fit, alpha)
        except (ConvergenceError, np.linalg.LinAlgError, FloatingPointError) as exc:
            row = {col: np.nan for col in COLUMNS} | base
            row.update(converged=False, message=f"fit failed: {exc}", n_systems=len(systems))
            out.append((row, None, None))
            continue
        stats = fit.fit_statistics()
        row = base | {
            "deviance": stats["deviance"],
            "null_deviance": stats["null_deviance"],
            "scale": stats["scale"],
            "llf": stats["llf"],
            "aic": stats["aic"],
            "bic": stats["bic"],
            "iterations": stats["iterations"],
            "converged": stats["converged"],
            "n_systems": len(fit.systems),
            "n_clipped": stats["n_clipped"],
            "n_dropped": stats["n_dropped"],
            "n_pairs": tukey.n_pairs,
            "n_significant": tukey.n_significant,
            "message": fit.message,
        }
        out.append((row, fit, tukey))
    return out
