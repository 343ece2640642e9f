"""MCMC diagnostic plots of a hierarchical fit: trace and rank plots (arviz-plots)."""

from __future__ import annotations

from typing import Any

__all__ = ["plot_trace", "plot_rank"]

DEFAULT_VARS = ("b0", "sigma", "sigma_topic", "sigma_system", "alpha")


def _var_names(fit: Any, var_names: list[str] | None) -> list[str]:
    post = fit.posterior["posterior"]
    names = list(var_names) if var_names is not None else list(DEFAULT_VARS)
    return [n for n in names if n in post.data_vars]


def plot_trace(fit: Any, *, var_names: list[str] | None = None, **kwargs: Any) -> Any:
    """Trace plot (draws against iteration, one line per chain) of a HierarchicalFit.

    Parameters
    ----------
    fit
        A :class:`~bayes_ir.hierarchical.HierarchicalFit`.
    var_names
        Posterior variables; default the hyperparameters (``b0``, the three scales
        and ``alpha`` when present). ``system_effect`` draws one panel per system.
    **kwargs
        Passed to :func:`arviz_plots.plot_trace`.

    Returns
    -------
    arviz_plots.PlotCollection
        With the matplotlib backend; ``.viz`` holds the figure.
    """
    import arviz_plots as azp

    kwargs.setdefault("backend", "matplotlib")
    return azp.plot_trace(fit.posterior, var_names=_var_names(fit, var_names), **kwargs)


def plot_rank(fit: Any, *, var_names: list[str] | None = None, **kwargs: Any) -> Any:
    """Rank plot (fractional rank ECDF per chain, Vehtari et al. 2021) of a fit.

    Uniform ranks in every chain mean the chains explore the same distribution.
    Arguments as :func:`plot_trace`; ``**kwargs`` go to :func:`arviz_plots.plot_rank`.
    """
    import arviz_plots as azp

    kwargs.setdefault("backend", "matplotlib")
    return azp.plot_rank(fit.posterior, var_names=_var_names(fit, var_names), **kwargs)
