"""Exact coverage of Gaussian posterior predictive intervals, to check Monte Carlo ones.

Given posterior draws d = 1..S, the predictive distribution of cell (t, s) is the mixture
F(y) = mean_d Phi((y - mu_d) / sigma_d), mu_d = b0 + topic_effect_t + system_effect_s.
The observed score is inside the central interval of probability p exactly when its PIT
F(y_obs) lies in [q_lo, q_hi] = [(1 - p) / 2, (1 + p) / 2]: no simulation needed.

``posterior_predictive`` instead simulates one score per draw and takes empirical
quantiles. For S independent simulated scores the empirical q-quantile sits at F-level
q + e, e ~ N(0, q (1 - q) / S) (order statistics of a uniform sample; mean q up to
O(1/S)). A cell is classified differently when its PIT lies between q and q + e, with
probability Phi(-|PIT - q| / sd(e)); cells are independent given the draws (each has its
own simulated scores), so the Monte Carlo coverage minus the exact one has mean O(1/S)
and variance sum_i f_i (1 - f_i) / N^2 over the N cells' flip probabilities f_i, and a
cell with a negligible f_i must be classified exactly as its PIT says.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats


def exact_pit(fit, observed: pd.DataFrame, ci_prob: float) -> pd.DataFrame:
    """Per cell: ``topic, system, pit, inside`` (exact) and ``flip`` (its probability).

    ``observed``: topics x systems (the cells checked); ``fit``: a Gaussian fit.
    """
    post = fit.draws.stack(sample=("chain", "draw"))
    b0 = post["b0"].values
    topics = [str(t) for t in observed.index]
    topic = post["topic_effect"].sel(topic=topics).transpose("sample", ...).values
    bounds = ((1 - ci_prob) / 2, (1 + ci_prob) / 2)
    rows = []
    for system in observed.columns:
        sigma = post["sigma"]
        sigma = sigma.sel(system=system) if "system" in sigma.dims else sigma
        mu = b0[:, None] + topic + post["system_effect"].sel(system=system).values[:, None]
        y = observed[system].to_numpy(dtype=float)
        pit = stats.norm.cdf((y[None, :] - mu) / sigma.values[:, None]).mean(axis=0)
        flip = sum(
            stats.norm.cdf(-np.abs(pit - q) / np.sqrt(q * (1 - q) / b0.size)) for q in bounds
        )
        inside = (pit >= bounds[0]) & (pit <= bounds[1])
        rows.append(
            pd.DataFrame(
                {"topic": topics, "system": system, "pit": pit, "inside": inside, "flip": flip}
            )
        )
    return pd.concat(rows, ignore_index=True)


def check_coverage(frame: pd.DataFrame, reference: pd.DataFrame, n_draws: int) -> None:
    """Assert simulated intervals (``topic, system, covered``) agree with the exact ones.

    Every cell whose flip probability is below 1e-9 is classified as the exact PIT says;
    the coverage is within 5 Monte Carlo SDs (plus 1 / S for the quantiles' bias).
    """
    ref = reference.set_index(["topic", "system"])
    got = frame.set_index(["topic", "system"])["covered"].reindex(ref.index)
    sure = ref["flip"] < 1e-9
    assert (got[sure] == ref["inside"][sure]).all(), ref[sure & (got != ref["inside"])]
    f = np.minimum(ref["flip"].to_numpy(), 1.0)
    sd = np.sqrt((f * (1 - f)).sum()) / len(f)
    gap = abs(got.mean() - ref["inside"].mean())
    assert gap < 5 * sd + 1 / n_draws, (got.mean(), ref["inside"].mean(), sd)
