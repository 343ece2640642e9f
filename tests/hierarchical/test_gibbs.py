"""The blocked Gibbs sampler for tables with missing cells (Gaussian, one residual SD).

Checked against three independent references: the exact collapsed sampler on complete
tables (both orientations), NUTS on the PyMC model on tables with gaps (a pooled design
with disjoint topic sets, two systems, near-identical systems, rb04 with 10% of its
cells removed), and known truth (simulation-based calibration with 30% of the cells
missing, in test_calibration.py style).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from agreement import SCALARS
from agreement import agree as _agree
from agreement import cells as _cells
from agreement import simulated_matrix as _matrix
from agreement import simulated_table as _table
from fixed_priors import PRIORS, SBC_PRIORS, assert_calibrated
from results.hierarchical import SBC_BINS, SBC_LEVEL, SBC_N_DATASETS

import bayes_ir.hierarchical.gibbs as gibbs
from bayes_ir.errors import IgnoredOptionWarning
from bayes_ir.hierarchical import fit, load_fit
from bayes_ir.hierarchical.calibration import simulation_based_calibration
from bayes_ir.hierarchical.exact import sample_exact
from bayes_ir.hierarchical.gibbs import Incidence, sample_gibbs
from bayes_ir.hierarchical.samplers.chains import PILOT_DRAWS
from bayes_ir.table import ScoreTable


@pytest.mark.parametrize("shape", [(40, 12), (8, 30)], ids=["topics>systems", "systems>topics"])
def test_complete_table_agrees_with_the_exact_sampler(shape):
    """On a complete table the Gibbs draws follow the exact sampler's posterior."""
    y = _matrix(*shape, seed=3)
    g, info = sample_gibbs(*_cells(y), PRIORS, chains=4, draws=5000, tune=200, seed=1)
    e, _, _ = sample_exact(y, PRIORS, chains=4, draws=5000, seed=2)
    assert Incidence.of(*_cells(y)).transposed == (shape[1] > shape[0])
    _agree(g, e)
    for name in ("topic_effect", "system_effect"):  # the zero-sum constraints hold exactly
        np.testing.assert_allclose(g[name].sum(axis=-1), 0, atol=1e-10)
    assert all(0.5 < rate <= 1 for rate in info.values())


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_gaps_agree_with_nuts_on_a_pooled_design():
    """Two disjoint topic sets; some systems ran on one set only (like TREC DL 2019 + 2020)."""
    rng = np.random.default_rng(11)
    y = _matrix(30, 10, seed=5, chi=0.05)
    y[:15, 6:8] = np.nan  # systems 6, 7: second year only
    y[15:, 8:] = np.nan  # systems 8, 9: first year only
    y[rng.uniform(size=y.shape) < 0.05] = np.nan
    y[np.arange(30), np.arange(30) % 6] = _matrix(30, 10, seed=5, chi=0.05)[
        np.arange(30), np.arange(30) % 6
    ]
    table = _table(y)
    g = fit(table, seed=1, priors=PRIORS, model_check=False)
    n = fit(table, method="nuts", draws=3000, tune=1000, seed=2, priors=PRIORS, model_check=False)
    assert g.method == "gibbs" and n.method == "nuts"
    assert g.diagnostics.passed and g.diagnostics.min_ess_bulk > 10_000
    post = {k: g.posterior["posterior"][k].values for k in (*SCALARS, "system_effect")}
    ref = {k: n.posterior["posterior"][k].values for k in (*SCALARS, "system_effect")}
    _agree(post, ref, sd_tol=0.07, names=(*SCALARS, "system_effect"))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
@pytest.mark.parametrize(
    ("n_s", "chi"),
    [(2, 0.03), (6, 0.002)],
    ids=["two systems", "near-identical systems"],
)
def test_hard_scales_agree_with_nuts(n_s, chi):
    """A scale the data barely inform (two systems; effects far below the noise)."""
    y = _matrix(25, n_s, seed=9, chi=chi, missing=0.15)
    g = fit(_table(y), draws=4000, seed=1, priors=PRIORS, model_check=False)
    assert g.method == "gibbs" and g.diagnostics.passed
    n = fit(
        _table(y),
        method="nuts",
        draws=3000,
        tune=1000,
        seed=2,
        priors=PRIORS,
        model_check=False,
        target_accept=0.95,
    )
    names = (*SCALARS, "system_effect")
    post = {k: g.posterior["posterior"][k].values for k in names}
    ref = {k: n.posterior["posterior"][k].values for k in names}
    _agree(post, ref, sd_tol=0.08, names=names)


@pytest.mark.slow
def test_simulation_based_calibration_with_missing_cells():
    """Known truth: ranks of the true parameters uniform, 90% intervals cover 90%."""
    res = simulation_based_calibration(
        SBC_PRIORS,
        n_datasets=SBC_N_DATASETS,
        n_topics=10,
        n_systems=5,
        ci_prob=SBC_LEVEL,
        chains=2,
        draws=200,
        seed=5000,
        max_workers=2,
        method="gibbs",
        missing=0.3,
    )
    assert_calibrated(res, SBC_N_DATASETS, 4 + 10 + 5, SBC_BINS)


def test_same_seed_same_draws_and_the_gram_shortcut_changes_nothing(monkeypatch):
    cells = _cells(_matrix(20, 7, seed=4, missing=0.2))
    a, _ = sample_gibbs(*cells, PRIORS, chains=3, draws=300, tune=50, seed=8)
    b, _ = sample_gibbs(*cells, PRIORS, chains=3, draws=300, tune=50, seed=8)
    c, _ = sample_gibbs(*cells, PRIORS, chains=3, draws=300, tune=50, seed=9)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert not np.allclose(a["b0"], c["b0"])
    assert len({float(x[0]) for x in a["b0"]}) == 3  # chains differ
    # the row-by-row Schur complement (tables too large for the per-count Gram matrices)
    monkeypatch.setattr(gibbs, "_GRAM_LIMIT", 0)
    assert Incidence.of(*cells).gram is None
    d, _ = sample_gibbs(*cells, PRIORS, chains=3, draws=300, tune=50, seed=8)
    for name in a:
        np.testing.assert_allclose(d[name], a[name], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("missing", [0.1, 0.6], ids=["few missing", "most missing"])
def test_sums_over_the_cell_list_equal_the_dense_ones(missing):
    """Row and column sums over the observed cells, through the missing or the observed ones."""
    from bayes_ir.hierarchical.gibbs_kernel import _cell_sums

    inc = Incidence.of(*_cells(_matrix(60, 25, seed=2, missing=missing)))
    assert inc.complete == (missing < 0.5)
    observed = np.zeros((inc.n_rows, inc.n_cols))
    observed[inc.row, inc.col] = 1.0
    rng = np.random.default_rng(0)
    v, u = rng.normal(size=(inc.n_cols, 3)), rng.normal(size=(inc.n_rows, 2))
    rows, cols = np.empty((inc.n_rows, 3)), np.empty((inc.n_cols, 2))
    _cell_sums(inc.list_row, inc.list_col, inc.list_sign, inc.complete, v, rows)
    _cell_sums(inc.list_col, inc.list_row, inc.list_sign, inc.complete, u, cols)
    np.testing.assert_allclose(rows, observed @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cols, observed.T @ u, rtol=1e-12, atol=1e-12)
    resid = inc.y - inc.fit_b0 - inc.fit_row[inc.row] - inc.fit_col[inc.col]
    np.testing.assert_allclose(inc.resid_ss, resid @ resid, rtol=1e-12)


@pytest.mark.parametrize("transposed", [False, True], ids=["topics>systems", "systems>topics"])
def test_the_taylor_series_of_the_gram_terms_equals_their_direct_sum(transposed):
    """Many distinct row counts in a narrow range: the series (fewer terms) is chosen."""
    from bayes_ir.hierarchical.gibbs_kernel import _gram_coefs

    y = _matrix(600, 150, seed=7, missing=0.1)
    y = y.T if transposed else y
    pooled = np.ones(y.shape[1], dtype=bool)
    pooled[:2] = False
    inc = Incidence.of(*_cells(y), pooled=pooled)
    assert inc.centre > 0 and inc.gram.shape[2] < inc.counts.size
    basis = np.zeros((inc.n_rows, inc.n_cols + 1))
    basis[:, 0] = inc.n_row
    basis[inc.row, inc.col + 1] = 1.0
    for rho in (0.0, 0.3, 7.0, 1e4):
        coef = np.empty(inc.gram.shape[2])
        _gram_coefs(rho, inc.centre, inc.n_series, inc.counts, inc.weights, coef)
        direct = basis.T @ (basis / (inc.n_row + inc.w_row * rho)[:, None])
        np.testing.assert_allclose(inc.gram @ coef, direct, rtol=1e-12, atol=1e-12 * direct.max())


def test_a_pilot_sets_the_draws_for_the_ess_asked():
    """Draws from the pilot's ESS per draw, between the pilot's and the most allowed."""
    from bayes_ir.hierarchical.diagnostics import draw_diagnostics

    cells = _cells(_matrix(40, 12, seed=2, missing=0.2))
    post, info = sample_gibbs(*cells, PRIORS, chains=4, draws=20_000, tune=100, seed=3, ess=6000)
    n = post["b0"].shape[1]
    assert n == math.ceil(6000 / (4 * info["pilot_ess_per_draw"]))
    assert PILOT_DRAWS < n < 20_000
    scalars = np.stack([post[k] for k in SCALARS], axis=-1)
    table = draw_diagnostics(scalars)
    assert table[["ess_bulk", "ess_tail"]].min().min() > 0.8 * 6000
    again, _ = sample_gibbs(*cells, PRIORS, chains=4, draws=20_000, tune=100, seed=3, ess=6000)
    np.testing.assert_array_equal(again["system_effect"], post["system_effect"])
    # the pilot's draws are enough; the most allowed bounds the draws
    few, _ = sample_gibbs(*cells, PRIORS, chains=4, draws=20_000, tune=100, seed=3, ess=50)
    many, _ = sample_gibbs(*cells, PRIORS, chains=2, draws=900, tune=100, seed=3, ess=1e9)
    assert few["b0"].shape == (4, PILOT_DRAWS) and many["b0"].shape == (2, 900)
    np.testing.assert_array_equal(few["b0"], post["b0"][:, :PILOT_DRAWS])


def test_draws_a_pilot_chose_are_refused_above_the_memory_limit(monkeypatch):
    """The pilot fits in memory, the draws it asks for do not: one clear line, no draws."""
    from bayes_ir import defaults
    from bayes_ir.errors import OptionError

    table = _table(_matrix(20, 8, seed=4, missing=0.2))
    monkeypatch.setattr(defaults, "MEMORY_LIMIT", 1e6)  # 4 x 500 x 32 x 8 bytes = 0.5 MB
    with pytest.raises(OptionError) as info:
        fit(table, seed=1, model_check=False)
    message = str(info.value)
    draws = int(message.split("4 chains x ")[1].split(" draws")[0].replace(",", ""))
    assert draws > PILOT_DRAWS and "x 32 values per draw" in message
    assert message.startswith("the posterior draws would need about")


def test_small_integer_indices_and_shape_do_not_overflow():
    """Indices from pandas category codes (int8) and a shape of int8 give the same draws."""
    t, s, y, shape = _cells(_matrix(30, 8, seed=4, missing=0.2))
    a, _ = sample_gibbs(t, s, y, shape, PRIORS, chains=2, draws=50, tune=10, seed=1)
    small = (t.astype(np.int8), s.astype(np.int8), y, tuple(np.int8(n) for n in shape))
    b, _ = sample_gibbs(*small, PRIORS, chains=2, draws=50, tune=10, seed=1)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


def test_fit_reports_the_gibbs_sampler_and_its_options(rb04_table, tmp_path):
    data = rb04_table.data
    rng = np.random.default_rng(0)
    gappy = ScoreTable.from_frame(data[rng.uniform(size=len(data)) > 0.1], missing="keep")
    gappy = gappy.with_roles(champion=rb04_table.champion, challengers=rb04_table.challengers)
    with pytest.warns(IgnoredOptionWarning, match="target_accept=0.95 is ignored by the Gibbs"):
        f = fit(gappy, seed=1, draws=2500, target_accept=0.95)
    assert f.method == "gibbs" and f.provenance["sampler"] == "blocked-gibbs"
    assert f.provenance["tune"] == 300 and f.provenance["draws"] == 2500
    assert f.diagnostics.passed
    line = [ln for ln in f.summary().splitlines() if ln.startswith("  Gibbs:")]
    rates = [f.provenance[f"accept_{k}"] for k in ("sigma", "sigma_topic", "sigma_system")]
    assert line and all(f"{r:.0%}" in line[0] for r in rates)
    # draws at float32 precision: a saved fit stores them as float32 and reads back the same
    back = load_fit(f.save(tmp_path / "gibbs.nc"), gappy)
    assert back.method == "gibbs" and back.posterior["posterior"].identical(
        f.posterior["posterior"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", IgnoredOptionWarning)
        fit(gappy, seed=1, draws=200, tune=20, model_check=False)


def test_scores_with_a_large_offset_keep_the_intercept_precise():
    """float32 has 7 digits: b0 of scores 1e6 +- 1e-3 must stay float64 (the effects may not)."""
    y = 1e6 + _matrix(15, 4, seed=2, tau=1e-3, chi=5e-4, sigma=1e-3, missing=0.1) - 0.3
    f = fit(_table(y), seed=1, draws=2000, model_check=False)
    b0 = f.posterior["posterior"]["b0"].values
    assert f.method == "gibbs" and f.diagnostics.passed
    assert len(np.unique(b0)) > 1000  # not quantised to float32's steps of 0.0625
    assert abs(b0.mean() - np.nanmean(y)) < 4 * b0.std()


def test_progress_is_counted_in_iterations_and_an_interrupt_stops_every_chain(monkeypatch):
    from bayes_ir.progress import reporting

    class Record:
        def __init__(self):
            self.updates = []

        def start(self, label, total):
            self.total = total
            return label

        def update(self, handle, completed, total):
            self.updates.append(completed)

        def finish(self, handle):
            pass

    cells = _cells(_matrix(12, 5, seed=6, missing=0.2))
    record = Record()
    with reporting(record):
        sample_gibbs(*cells, PRIORS, chains=3, draws=1200, tune=100, seed=1)
    assert record.total == 3 * 1300 and record.updates[-1] == 3 * 1300
    assert len(record.updates) == 3 * (1 + 3)  # warm-up + 3 stretches of <= 500 per chain

    calls = []
    from bayes_ir.hierarchical import gibbs_kernel

    real = gibbs_kernel.run_chain

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        real(*args)

    monkeypatch.setattr(gibbs_kernel, "run_chain", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sample_gibbs(*cells, PRIORS, chains=2, draws=5000, tune=100, seed=1)
    assert len(calls) < 2 * 11  # the chains stopped at their next stretch, not at the end
