"""Topics sampled as levels (centred on the intercept) or not, by what the data say.

The density of the levels form equals PyMC's in ``test_binomial_kernel.py`` and
``test_zoib_kernel.py``; here, the reason for it: items no system solved leave their
effects bounded on one side, and in zero-sum coordinates ``b0`` then mixed badly. With the
levels form the posterior passes its diagnostics on such tables, and the reported ``b0``
and topic effects are the zero-sum ones.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import special

from bayes_ir.hierarchical import fit
from bayes_ir.hierarchical.families import get_family
from bayes_ir.hierarchical.families.binomial import centred_effects
from bayes_ir.hierarchical.model import design_of
from bayes_ir.table import ScoreTable


def _unsolved_table(seed: int = 2) -> ScoreTable:
    """120 items x 8 systems, k of 10, a quarter of the items solved by no system."""
    rng = np.random.default_rng(seed)
    eta = rng.normal(-1.0, 2.0, (120, 1)) + np.linspace(-1.0, 1.0, 8)[None, :]
    y = rng.binomial(10, special.expit(eta)) / 10
    y[:30] = 0.0
    return ScoreTable.from_matrix(y, systems=[f"m{i}" for i in range(8)], measure="pass@1")


def test_items_no_system_solved_are_not_centred():
    design = design_of(_unsolved_table())
    family = get_family("binomial(trials=10)").resolved(design)
    topics, _ = centred_effects(*family.counts(design))
    k, _ = family.counts(design)
    assert not topics[:30].any()
    assert topics[30:][np.nansum(k[30:], axis=1) > 0].mean() > 0.5


def test_a_table_with_unsolved_items_passes_its_diagnostics_and_reports_zero_sum_effects():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model check is not what this test is about
        result = fit(_unsolved_table(), likelihood="binomial(trials=10)", seed=3)
    assert result.diagnostics.passed, result.diagnostics.summary()
    topic = result.posterior["posterior"]["topic_effect"]
    scale = float(abs(topic).max())  # stored in float32: 120 effects sum to 0 within 1e-6
    np.testing.assert_allclose(topic.sum("topic"), 0.0, atol=1e-6 * scale)


@pytest.mark.slow
@pytest.mark.shared_data
def test_livecodebench_pass_at_1_passes_its_diagnostics(shared_data):
    """400 problems x 45 models, 108 problems solved by none: b0's bulk ESS was 392 of
    11,108 draws in zero-sum coordinates (diagnostics failed)."""
    import bayes_ir

    path = shared_data / "llm_eval" / "livecodebench_codegen_perproblem.csv.gz"
    table = bayes_ir.read_scores(path, measure="pass@1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit(table, likelihood="binomial(trials=10)", seed=1)
    assert result.diagnostics.passed, result.diagnostics.summary()
    ess = result.diagnostics.to_frame().set_index("parameter")["ess_bulk"]
    assert ess["b0"] > 4000
