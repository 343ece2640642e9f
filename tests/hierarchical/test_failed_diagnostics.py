"""A fit that fails its diagnostics says so on every summary (and only then).

The failure is forced with an ESS bar no posterior can reach (``ess_bulk_min=1e9``); the
same fit with the default bar passes, so each summary is checked both ways. The
independent reference is the fit's own per-quantity table: its smallest bulk ESS is a
finite number far below 1e9.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from bayes_ir.hierarchical import fit
from bayes_ir.hierarchical.artifact_sweep import artifact_sweep
from bayes_ir.hierarchical.contrasts import (
    compare,
    many_vs_one,
    pairwise_probabilities,
    rank_probabilities,
)
from bayes_ir.hierarchical.predictive import posterior_predictive
from bayes_ir.risk.brisk import brisk, brisk_sweep
from bayes_ir.risk.review import risk_review

BANNER = "DIAGNOSTICS FAILED"
IMPOSSIBLE = {"ess_bulk_min": 1e9}


def _summaries(table, thresholds) -> dict[str, str]:
    """Summary text of every result built on a fit (or fits) with these thresholds."""
    options = {"draws": 1000, "chains": 2, "seed": 4, "thresholds": thresholds}
    inline = ThreadPoolExecutor(max_workers=1)  # the sweeps' refits, in this process
    with inline, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit(table, **options)
        return {
            "fit": result.summary(),
            "compare": compare(result).summary(),
            "many_vs_one": many_vs_one(
                result, challenger="chal_dense", champions=["bm25", "trec_run31"]
            ).summary(),
            "pairwise": pairwise_probabilities(result).summary(),
            "rank": rank_probabilities(result).summary(),
            "predictive": posterior_predictive(result, seed=1).summary(),
            "artifact_sweep": artifact_sweep(
                table, m_values=[2, 4], executor=inline, **options
            ).summary(),  # fmt: skip
            "brisk": brisk(table, **options).summary(),
            "brisk_sweep": brisk_sweep(
                table, r_levels=[1, 2], executor=inline, **options
            ).summary(),  # fmt: skip
            "risk_review": risk_review(table, n_resamples=200, **options).summary(),
        }


@pytest.fixture(scope="module")
def small_table(example_table):
    """Champion, challengers and the 6 best artifacts: quick fits."""
    return example_table.with_roles(champion="bm25", challengers="chal_*", top_m=6)


def test_every_summary_of_a_failed_fit_has_the_banner(small_table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed = fit(small_table, draws=1000, chains=2, seed=4, thresholds=IMPOSSIBLE)
    ess = failed.diagnostics.table["ess_bulk"].to_numpy(dtype=float)
    assert np.isfinite(ess).all() and ess.min() < 1e9 and not failed.diagnostics.passed
    missing = [k for k, text in _summaries(small_table, IMPOSSIBLE).items() if BANNER not in text]
    assert missing == []


def test_no_banner_when_the_fit_passes(small_table):
    shown = [k for k, text in _summaries(small_table, None).items() if BANNER in text]
    assert shown == []
