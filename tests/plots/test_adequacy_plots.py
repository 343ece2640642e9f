"""The model-check figure draws the coverage numbers of the ModelCheck it is given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from bayes_ir.errors import OptionError  # noqa: E402
from bayes_ir.hierarchical.adequacy import MODEL_CHECK_COLUMNS, ModelCheck  # noqa: E402


def _check() -> ModelCheck:
    frame = pd.DataFrame(
        {
            "system": ["bm25", "chal_a", "chal_b", "run1", "run2"],
            "role": ["champion", "challenger", "challenger", "artifact", "artifact"],
            "n_topics": 50,
            "n_draws": 1000,
            "coverage_50": [0.52, 0.20, 0.50, 0.48, 0.56],
            "coverage_95": [0.96, 0.60, 0.94, 0.96, 0.70],
            "p_coverage_50": [0.5, 1e-5, 0.5, 0.5, 0.5],
            "p_coverage_95": [0.5, 1e-9, 0.5, 0.5, 1e-5],
            "ppp_mean": 0.5,
            "ppp_sd": [0.5, 1e-9, 0.5, 0.5, 1e-6],
            "ppp_skewness": 0.5,
            "ppp_lost": [np.nan, 0.4, 0.5, 0.5, 0.5],
            **{f"ppp_{s}_mcse": 0.01 for s in ("mean", "sd", "skewness", "lost")},
            "flagged": [False, True, False, False, True],
            "failed_checks": ["", "coverage_95, sd", "", "", "sd"],
            "borderline": False,
            "borderline_checks": "",
            **{f"{k}_{m}": np.nan for m in ("zeros", "ones") for k in ("share", "pred", "ppp")},
        }
    )[list(MODEL_CHECK_COLUMNS)]
    return ModelCheck(frame=frame, likelihood="gaussian", n_draws=1000, seed=1)


def test_plot_draws_the_coverage_of_the_shown_systems():
    check = _check()
    fig = check.plot()
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["bm25", "chal_a", "chal_b", "run2"]  # artifacts only when flagged
    shown = check.to_frame().set_index("system").loc[labels]
    c95, c50 = (c.get_offsets()[:, 0] for c in ax.collections[:2])
    assert np.allclose(c95, shown["coverage_95"]) and np.allclose(c50, shown["coverage_50"])
    texts = [t.get_text().strip() for t in ax.texts]
    assert texts == ["coverage_95, sd", "sd"]
    plt.close(fig)
    with pytest.raises(OptionError, match="nope"):
        check.plot(systems=["nope"])
