from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from results.reliability import PAPER_ERROR
from scipy import stats

from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.readers import read_scores
from bayes_ir.reliability import fit_simulator, simulation_study
from bayes_ir.table import ScoreTable


@pytest.fixture
def small():
    rng = np.random.default_rng(0)
    x = np.clip(rng.beta(2, 5, (25, 8)) + np.linspace(0.15, 0, 8), 0, 1)
    return ScoreTable.from_matrix(x, systems=[f"s{k}" for k in range(8)], collection="toy")


def test_simulator_draws_realistic_topic_sets(small):
    sim = fit_simulator(small)
    assert len(sim.systems) == 6  # bottom 25% of 8 systems dropped
    y = sim.sample_matrix(4000, np.random.default_rng(1))
    assert y.shape == (4000, 6) and y.min() >= 0 and y.max() <= 1
    # the population's means are close to the original means (the truth of the study)
    assert np.abs(y.mean(axis=0) - sim.truth).max() < 0.03
    assert stats.kendalltau(y.mean(axis=0), sim.truth).statistic > 0.7
    table = sim.sample(10, seed=3)
    assert table.matrix().shape == (10, 6)
    assert np.array_equal(table.matrix().to_numpy(), sim.sample(10, seed=3).matrix().to_numpy())
    pop = sim.population_means(4000, seed=1)
    assert pop == pytest.approx(y.mean(axis=0))  # same seed, same draws
    with pytest.raises(InsufficientDataError):
        fit_simulator(ScoreTable.from_matrix(np.random.default_rng(0).random((2, 4))))


def test_truth_options(small):
    kwargs = dict(sizes=(6,), trials=2, estimators=["ML"], executor=ThreadPoolExecutor(1))
    original = simulation_study(small, truth="original", **kwargs)
    population = simulation_study(small, **kwargs)
    assert original.truth == "original" and population.truth == "population"
    # same topic sets and estimates; only the actual correlations can differ
    assert original.records["estimate"].equals(population.records["estimate"])
    with pytest.raises(ValueError, match="truth"):
        simulation_study(small, truth="bogus", **kwargs)


def test_study_is_reproducible_whatever_the_executor(small):
    kwargs = dict(sizes=(5, 10), trials=4, estimators=["ML", "RES(T=100)", "SHwo"], seed=5)
    serial = simulation_study(small, executor=ThreadPoolExecutor(1), trials_per_task=1, **kwargs)
    pooled = simulation_study(small, executor=ThreadPoolExecutor(2), trials_per_task=3, **kwargs)
    assert serial.records.equals(pooled.records)
    assert len(serial.records) == 2 * 4 * 3 * 2
    frame = serial.to_frame()
    assert list(frame.columns) == [
        "collection",
        "coefficient",
        "estimator",
        "n_topics",
        "error",
        "bias",
        "rmse",
        "n_trials",
    ]
    rec = serial.records
    cell = rec[(rec.estimator == "ML") & (rec.coefficient == "tau") & (rec.n_topics == 5)]
    row = frame[(frame.estimator == "ML") & (frame.coefficient == "tau") & (frame.n_topics == 5)]
    diff = cell["estimate"] - cell["actual"]
    assert row["error"].item() == pytest.approx(np.abs(diff).mean())
    assert row["bias"].item() == pytest.approx(diff.mean())
    assert "SH(w/o)" in serial.summary()


def test_subsampling_truth_is_the_full_set(small):
    study = simulation_study(
        small, method="subsample", sizes=(24,), trials=2, estimators=["ML"],
        drop_bottom=0.0, executor=ThreadPoolExecutor(1),
    )  # fmt: skip
    # 24 of 25 topics: the ranking is nearly the full-set one
    assert study.records["actual"].min() > 0.6
    with pytest.raises(InsufficientDataError, match="larger collection"):
        simulation_study(small, method="subsample", sizes=(25,), trials=1, estimators=["ML"])
    with pytest.raises(InsufficientDataError, match="at least 4"):
        simulation_study(small, sizes=(3,), trials=1, estimators=["SHw"])
    with pytest.raises(ValueError, match="method"):
        simulation_study(small, method="bogus")


@pytest.mark.shared_data
def test_scaled_down_paper_finding(shared_data):
    """Urbano & Marrero (2016) Fig. 1, scaled down: adhoc6, 30 trials, sizes 10 and 50."""
    table = read_scores(shared_data / "trec_adhoc" / "adhoc6_ap.csv")
    study = simulation_study(
        {"adhoc6": table}, sizes=(10, 50), trials=30,
        estimators=["ML", "MSQD", "SHw", "SHwo"], seed=1, executor=ThreadPoolExecutor(2),
    )  # fmt: skip
    err = study.error_table(coefficient="tau")
    # error drops from about 0.065 at 10 topics to about 0.035 at 50
    assert PAPER_ERROR[10] - 0.025 < err.loc["MSQD", 10] < PAPER_ERROR[10] + 0.045
    assert PAPER_ERROR[50] - 0.015 < err.loc["MSQD", 50] < PAPER_ERROR[50] + 0.015
    assert err.loc["MSQD", 10] > 1.5 * err.loc["MSQD", 50]
    # the split-half baselines are worse (averaged over sizes and both coefficients)
    both = study.to_frame(pooled=True).groupby("estimator")["error"].mean()
    for baseline in ("SH(w)", "SH(w/o)"):
        assert both[baseline] > both["MSQD"]
        assert both[baseline] > both["ML"]


@pytest.mark.shared_data
def test_subsampling_robust04(shared_data):
    table = read_scores(shared_data / "robust2004" / "robust2004_ap.csv")
    study = simulation_study(
        {"robust04": table}, method="subsample", sizes=(10, 50), trials=10,
        estimators=["MSQD"], seed=2, executor=ThreadPoolExecutor(2),
    )  # fmt: skip
    err = study.error_table(coefficient="tau")
    assert err.loc["MSQD", 10] > err.loc["MSQD", 50]
    # the 50-topic sets share a fifth of the topics with the truth: actual tau is higher
    rec = study.records
    assert rec[rec.n_topics == 50]["actual"].mean() > rec[rec.n_topics == 10]["actual"].mean()


@pytest.mark.parametrize(
    ("option", "value"),
    [("trials", 0), ("trials", 1.5), ("trials", True), ("seed", -3), ("seed", 1.7),
     ("seed", 1 + 2j), ("sizes", (1,)), ("sizes", (2.5,)), ("truth", "pop"),
     ("method", "simulated")],
)  # fmt: skip
def test_bad_options_name_the_argument(small, option, value):
    with pytest.raises(OptionError, match=f"^{option} must"):
        simulation_study(small, estimators=["ML"], **{"trials": 1, "sizes": (5,), option: value})
