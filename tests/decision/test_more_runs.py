"""More topics or more runs: the variance of the contrast estimate and the pre-posterior grid."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from bayes_ir.decision import MORE_RUNS_COLUMNS, mean_difference_variance, more_runs
from bayes_ir.errors import OptionError
from bayes_ir.hierarchical import fit_replicates

N_DATASETS = 4000


def _simulate_means(rng, n, topics, runs_c, runs_h, *, sigma, psi, kappa_c, kappa_h, delta=0.02):
    """Mean scores of a challenger and a champion in ``n`` datasets drawn from the model.

    Returns a function of (topics used, runs of c, runs of h) giving the difference of
    the means over the first topics and runs: one draw of the data serves the old
    (a subset) and the new (every cell) estimates.
    """
    a = rng.normal(0, 0.15, (n, topics, 1))  # cancels in the difference
    ab = rng.normal(0, psi, (n, topics, 2))
    beta = np.array([delta, 0.0])
    rho_c = rng.normal(0, kappa_c, (n, runs_c))
    rho_h = rng.normal(0, kappa_h, (n, runs_h))
    y_c = (
        0.4
        + a
        + beta[0]
        + ab[..., :1]
        + rho_c[:, None, :]
        + rng.normal(0, sigma, (n, topics, runs_c))
    )
    y_h = (
        0.4
        + a
        + beta[1]
        + ab[..., 1:]
        + rho_h[:, None, :]
        + rng.normal(0, sigma, (n, topics, runs_h))
    )

    def diff(t, rc, rh):
        return y_c[:, :t, :rc].mean(axis=(1, 2)) - y_h[:, :t, :rh].mean(axis=(1, 2))

    return diff


def _variance_interval(var_hat, n, level=1e-4):
    """The true variances the sample variance of ``n`` normals is consistent with."""
    lo, hi = stats.chi2.ppf([1 - level / 2, level / 2], n - 1)
    return var_hat * (n - 1) / lo, var_hat * (n - 1) / hi


# each part of the variance dominates once: topic x system, runs, residual
PARTS = {
    "topic x system": {"sigma": 0.02, "psi": 0.08, "kappa_c": 0.005, "kappa_h": 0.002},
    "runs": {"sigma": 0.02, "psi": 0.01, "kappa_c": 0.06, "kappa_h": 0.03},
    "residual": {"sigma": 0.2, "psi": 0.0, "kappa_c": 0.0, "kappa_h": 0.0},
}


@pytest.mark.parametrize("part", list(PARTS))
def test_variance_formula_equals_simulated_datasets(part):
    p = PARTS[part]
    rng = np.random.default_rng(list(PARTS).index(part))
    t, k, rc, rh, m = 20, 10, 2, 4, 3
    diff = _simulate_means(rng, N_DATASETS, t + k, rc + m, rh + m, **p)
    kw = {"sigma": p["sigma"], "psi": p["psi"], "kappa_challenger": p["kappa_c"],
          "kappa_champion": p["kappa_h"]}  # fmt: skip
    for cells in ((t, rc, rh), (t + k, rc + m, rh + m), (t + k, rc, rh), (t, rc + m, rh + m)):
        d = diff(*cells)
        formula = float(mean_difference_variance(*cells, **kw))
        lo, hi = _variance_interval(d.var(ddof=1), N_DATASETS)
        assert lo < formula < hi, (part, cells, d.var(ddof=1), formula)
        assert abs(d.mean() - 0.02) < 5 * np.sqrt(formula / N_DATASETS)
    # a formula without the part that dominates is refuted by the same data
    d = diff(t, rc, rh)
    lo, hi = _variance_interval(d.var(ddof=1), N_DATASETS)
    if part == "runs":
        wrong = mean_difference_variance(t, rc, rh, **(kw | {"kappa_challenger": 0.0}))
    elif part == "topic x system":
        wrong = mean_difference_variance(t, rc, rh, **(kw | {"psi": p["psi"] / np.sqrt(2)}))
    else:
        wrong = mean_difference_variance(t, rc, rh, **(kw | {"sigma": p["sigma"] * np.sqrt(2)}))
    assert not lo < float(wrong) < hi


def test_new_data_carry_one_independent_observation_of_the_contrast():
    """x = w (d_new / V_new - d_old / V_old) ~ N(delta, w), independent of d_old."""
    p = PARTS["runs"] | {"psi": 0.05}
    rng = np.random.default_rng(11)
    t, k, rc, rh, m = 20, 10, 2, 4, 3
    diff = _simulate_means(rng, N_DATASETS, t + k, rc + m, rh + m, **p)
    kw = {"sigma": p["sigma"], "psi": p["psi"], "kappa_challenger": p["kappa_c"],
          "kappa_champion": p["kappa_h"]}  # fmt: skip
    v_old = float(mean_difference_variance(t, rc, rh, **kw))
    v_new = float(mean_difference_variance(t + k, rc + m, rh + m, **kw))
    w = 1 / (1 / v_new - 1 / v_old)
    old, new = diff(t, rc, rh), diff(t + k, rc + m, rh + m)
    x = w * (new / v_new - old / v_old)
    lo, hi = _variance_interval(x.var(ddof=1), N_DATASETS)
    assert lo < w < hi
    assert abs(np.corrcoef(x, old)[0, 1]) < 4 / np.sqrt(N_DATASETS)
    assert np.cov(old, new)[0, 1] == pytest.approx(v_new, rel=0.1)


def _fit(runs_table, *args, **kwargs):
    table, _ = runs_table(*args, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_replicates(table, draws=1000, seed=1)


@pytest.fixture(scope="module")
def run_noise(runs_table):
    """Undecided because of the runs: run-to-run SD 0.04, 3 runs each."""
    return _fit(runs_table, 30, 4, 3, seed=1, system=[0, 0.08, 0, 0], sd_run=0.04,
                sd_topic_system=0.02, sd=0.03)  # fmt: skip


@pytest.fixture(scope="module")
def topic_noise(runs_table):
    """Undecided because of the topics: topic x system SD 0.08, run-to-run SD 0.002."""
    return _fit(runs_table, 30, 4, 4, seed=1, system=[0, 0.06, 0, 0], sd_run=0.002,
                sd_topic_system=0.08, sd=0.03)  # fmt: skip


def _axes_monotone(res):
    g = res.to_frame().set_index(["topics_added", "runs_added"])
    p = np.array([[g.loc[(k, m), "p_decided"] for m in res.runs] for k in res.topics])
    se = np.array([[g.loc[(k, m), "mc_se"] for m in res.runs] for k in res.topics])
    slack = 3 * np.sqrt(se[1:] ** 2 + se[:-1] ** 2)
    assert (np.diff(p, axis=0) >= -slack).all()
    slack = 3 * np.sqrt(se[:, 1:] ** 2 + se[:, :-1] ** 2)
    assert (np.diff(p, axis=1) >= -slack).all()
    return p


def test_runs_settle_run_noise_and_topics_settle_topic_noise(run_noise, topic_noise):
    opts = {"margin": 0.02, "threshold": 0.005, "n_sim": 2000, "target": 0.6}
    runs = more_runs(run_noise, "s1", **opts)
    topics = more_runs(topic_noise, "s1", **opts)
    assert runs.current["action"] == topics.current["action"] == "collect more data"
    p_runs, p_topics = _axes_monotone(runs), _axes_monotone(topics)
    # along its own axis each grid climbs; along the other it barely moves
    assert p_runs[0, -1] - p_runs[0, 0] > 0.5 and p_runs[-1, 0] - p_runs[0, 0] < 0.05
    assert p_topics[-1, 0] - p_topics[0, 0] > 0.5 and p_topics[0, -1] - p_topics[0, 0] < 0.05
    assert runs.sooner == "runs" and runs.cheapest is not None and runs.cheapest[0] == 0
    assert topics.sooner == "topics" and topics.cheapest is not None and topics.cheapest[1] == 0
    assert "More runs (seeds) settle it sooner" in runs.summary()
    assert "More topics settle it sooner" in topics.summary()


def test_cost_arithmetic_and_the_cheapest_cell(run_noise):
    grid = {"topics": (0, 10, 40), "runs": (0, 3, 6), "cost_topic": 2.0, "cost_run": 5.0}
    res = more_runs(run_noise, "s1", margin=0.02, threshold=0.005, n_sim=1000, target=0.5, **grid)
    g = res.to_frame()
    assert list(g.columns) == list(MORE_RUNS_COLUMNS) and len(g) == 9
    assert g["cost"].to_numpy() == pytest.approx(
        2.0 * g["topics_added"].to_numpy() + 2 * 5.0 * g["runs_added"].to_numpy()
    )
    assert g[["p_deploy", "p_keep", "p_undecided"]].sum(axis=1).to_numpy() == pytest.approx(1)
    assert (g["p_decided"] == g["p_deploy"] + g["p_keep"]).all()
    ok = g[g["p_decided"] >= 0.5]
    assert len(ok)
    best = ok.sort_values(["cost", "p_decided"], ascending=[True, False]).iloc[0]
    assert res.cheapest == (best["topics_added"], best["runs_added"])
    text = res.summary()
    assert "Cheapest cell reaching P(decided) >= 0.5" in text and "Assumptions:" in text
    assert "]*" in text  # the cheapest cell is starred in the grid
    assert "runs\\_added" in res.to_latex() or "runs_added" in res.to_latex()
    # the SD after never falls below the run-to-run floor of the expectation contrast
    kap = run_noise.replicate_sd_draws()
    floor = np.sqrt(np.mean(kap[:, 1] ** 2) / (3 + g["runs_added"]) * 2)
    assert (g["sd_after"].to_numpy() > 0.95 * floor.to_numpy()).all()


def test_single_run_is_bounded_by_the_run_noise(run_noise):
    e = more_runs(run_noise, "s1", margin=0.02, threshold=0.005, n_sim=1000)
    s = more_runs(run_noise, "s1", margin=0.02, threshold=0.005, n_sim=1000, over="single_run")
    assert (s.to_frame()["sd_after"] > e.to_frame()["sd_after"]).all()
    assert s.to_frame()["p_decided"].max() < e.to_frame()["p_decided"].max()


def test_a_seed_makes_it_reproducible(run_noise):
    a = more_runs(run_noise, "s1", seed=5, n_sim=500, margin=0.02, threshold=0.005)
    b = more_runs(run_noise, "s1", seed=5, n_sim=500, margin=0.02, threshold=0.005)
    c = more_runs(run_noise, "s1", seed=6, n_sim=500, margin=0.02, threshold=0.005)
    assert a.to_frame().equals(b.to_frame())
    assert not a.to_frame().equals(c.to_frame())


def test_bad_options(run_noise):
    with pytest.raises(OptionError, match="over must be one of 'expectation', 'single_run'"):
        more_runs(run_noise, over="average")
    with pytest.raises(OptionError, match="topics"):
        more_runs(run_noise, topics=(0, -5))
    with pytest.raises(OptionError, match="runs"):
        more_runs(run_noise, runs=())
    with pytest.raises(OptionError, match="cost_run"):
        more_runs(run_noise, cost_run=-1.0)
    with pytest.raises(OptionError, match="target"):
        more_runs(run_noise, target=1.5)


def test_plot_marks_the_cheapest_cell(run_noise):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    res = more_runs(run_noise, "s1", margin=0.02, threshold=0.005, n_sim=500, target=0.5)
    fig = res.plot()
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert res.cheapest is not None and len(boxes) == 1
    i, j = res.topics.index(res.cheapest[0]), res.runs.index(res.cheapest[1])
    assert boxes[0].get_xy() == (j - 0.5, i - 0.5)
    assert len(ax.texts) == len(res.topics) * len(res.runs)
    plt.close(fig)
