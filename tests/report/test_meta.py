"""The plain-language conclusion of a meta-analysis says what its numbers say."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayes_ir.frequentist import meta_analysis
from bayes_ir.report.meta import meta_conclusion


def _pooled(yi, vi, **options):
    return meta_analysis(pd.DataFrame({"yi": yi, "vi": vi}), **options)


def test_equal_effects_beat_the_control_and_agree():
    """Five collections with the same effect 0.1 and variance 1e-4: the pooled effect is
    0.1 with SE sqrt(1e-4 / 5) (inverse-variance weights, tau^2 = 0), I^2 = 0."""
    text = meta_conclusion(_pooled([0.1] * 5, [1e-4] * 5))
    half = stats.norm.ppf(0.975) * np.sqrt(1e-4 / 5)
    ci = f"[{0.1 - half:+.4f}, {0.1 + half:+.4f}]"
    assert text.startswith("Conclusion: the treatment beats the control over 5 collections: ")
    assert f"pooled mean difference +0.1000 (95% CI {ci}, p < 0.001)" in text
    assert "mostly agree (I^2 = 0%)" in text and f"expected within {ci}" in text
    assert "either way" not in text


@pytest.mark.parametrize(
    ("yi", "said"),
    [
        ([-0.10, -0.12, -0.09], "the treatment does worse than the control over 3"),
        ([0.30, -0.30, 0.25, -0.20], "the treatment is not shown to differ from the control"),
    ],
)
def test_the_verdict_follows_the_interval(yi, said):
    result = _pooled(yi, [1e-3] * len(yi))
    text = meta_conclusion(result)
    assert said in text
    lo, hi = result.conf_int().ci_lower, result.conf_int().ci_upper
    assert (lo > 0 or hi < 0) == ("not shown" not in text)


def test_collections_that_disagree_may_go_either_way():
    """Pooled effect above 0 but a wide spread between collections: the prediction interval
    of a new collection holds 0, and the conclusion says so."""
    result = _pooled([0.05, 0.15, 0.02, 0.2, 0.08, 0.12], [4e-4] * 6)
    pi = result.prediction_interval()
    assert result.conf_int().ci_lower > 0 > pi.pi_lower and result.i2 >= 50
    text = meta_conclusion(result)
    assert "beats the control" in text and "so it may go either way" in text
    assert f"[{pi.pi_lower:+.4f}, {pi.pi_upper:+.4f}] (95% prediction interval)" in text


def test_a_fixed_effect_model_says_what_it_assumes():
    text = meta_conclusion(_pooled([0.1, 0.2], [1e-3, 1e-3], method="FE"))
    assert "A fixed-effect model assumes one true effect" in text and "I^2" not in text
