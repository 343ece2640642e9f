from concurrent.futures import ThreadPoolExecutor

import matplotlib
import numpy as np
import pytest

from bayes_ir.reliability import bootstrap_interval, expected_correlation, simulation_study

matplotlib.use("Agg")


@pytest.fixture
def table(toy_table):
    return toy_table


def test_plots_draw_what_the_results_hold(table):
    import matplotlib.pyplot as plt

    res = expected_correlation(table, estimator="ML")
    fig = res.plot()
    image = fig.axes[0].images[0].get_array()
    assert np.allclose(np.ma.filled(image, np.nan)[0, 1:], res.p_swap[0, 1:])
    interval = bootstrap_interval(table, n_boot=100, seed=1)
    fig2 = interval.plot()
    assert len(fig2.axes) == 2
    study = simulation_study(
        table, sizes=(5, 10), trials=2, estimators=["ML", "SHwo"],
        executor=ThreadPoolExecutor(1),
    )  # fmt: skip
    fig3 = study.plot()
    assert len(fig3.axes) == 4  # error and bias x tau and tau_ap
    line = fig3.axes[0].lines[0]
    frame = study.to_frame(pooled=True)
    want = frame[(frame.coefficient == "tau") & (frame.estimator == "ML")].sort_values("n_topics")
    assert np.allclose(line.get_ydata(), want["error"])
    sh = expected_correlation(table, estimator="SHwo")
    with pytest.raises(ValueError, match="pairwise"):
        sh.plot()
    plt.close("all")
