"""The blocked Gibbs sampler of any crossed design, and its PyMC twin.

References: the exact collapsed sampler and the two-way Gibbs sampler on two-way
designs (the special case), an independent numpy/scipy log density for the PyMC twin,
and NUTS on the twin for designs across collections (slow).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from agreement import agree
from fixed_priors import PRIORS
from kernel_checks import REFERENCE_MODE
from scipy import stats

from bayes_ir.hierarchical.design import (
    DesignPriors,
    collections_design,
    design_priors,
    segments_design,
    two_way_design,
)
from bayes_ir.hierarchical.exact import sample_exact
from bayes_ir.hierarchical.gibbs import sample_gibbs
from bayes_ir.hierarchical.samplers.blocked_gibbs import GibbsLayout, sample_design_gibbs
from bayes_ir.hierarchical.samplers.pymc_design import build_design_model, sample_design_nuts
from bayes_ir.table import ScoreTable

SCALES = ("sigma", "sigma_topic", "sigma_system")


def _two_way(n_t, n_s, *, missing=0.0, seed=3):
    rng = np.random.default_rng(seed)
    y = 0.3 + rng.normal(0, 0.15, (n_t, 1)) + rng.normal(0, 0.03, (1, n_s))
    y = y + rng.normal(0, 0.1, (n_t, n_s))
    if missing:
        drop = rng.uniform(size=y.shape) < missing
        drop[np.arange(n_t), np.arange(n_t) % n_s] = False
        drop[np.arange(n_s) % n_t, np.arange(n_s)] = False
        y[drop] = np.nan
    systems = [f"s{i:02d}" for i in range(n_s)]
    topics = [f"t{i:03d}" for i in range(n_t)]
    table = ScoreTable.from_matrix(y, systems=systems, topics=topics, missing="keep")
    return y, table.with_roles(champion="s00", challengers=["s01"], artifacts=systems[2:])


def _in_matrix_order(post, design, y_shape):
    """The design sampler's draws relabelled as the two-way samplers' (matrix order)."""
    topics = [int(lab[1:]) for lab in design.term("topic").levels]
    systems = [int(lab[1:]) for lab in design.term("system").levels]
    out = {"b0": post["b0"][..., 0], "sigma": post["sigma"][..., 0]}
    out["sigma_topic"] = post["sigma_topic"][..., 0]
    out["sigma_system"] = post["sigma_system"][..., 0]
    t_eff = np.empty(post["topic"].shape[:2] + (y_shape[0],))
    t_eff[..., topics] = post["topic"]
    s_eff = np.empty(post["system"].shape[:2] + (y_shape[1],))
    s_eff[..., systems] = post["system"]
    out["topic_effect"], out["system_effect"] = t_eff, s_eff
    return out


def test_two_way_complete_agrees_with_the_exact_sampler():
    y, table = _two_way(30, 8)
    d = two_way_design(table)
    g, info = sample_design_gibbs(
        d, DesignPriors.from_priors(d, PRIORS), chains=4, draws=4000, tune=200, seed=1
    )
    e, _, _ = sample_exact(y, PRIORS, chains=4, draws=4000, seed=2)
    names = ("b0", *SCALES, "topic_effect", "system_effect")
    agree(_in_matrix_order(g, d, y.shape), e, names=names)
    assert all(0.5 < rate <= 1 for rate in info.values())


def test_two_way_with_gaps_and_more_systems_agrees_with_the_two_way_gibbs_sampler():
    y, table = _two_way(8, 20, missing=0.2)
    d = two_way_design(table)
    layout = GibbsLayout.of(d, design_priors(d))
    assert d.terms[layout.rows].name == "system"  # the larger term is the rows
    g, _ = sample_design_gibbs(
        d, DesignPriors.from_priors(d, PRIORS), chains=4, draws=4000, tune=200, seed=1
    )
    t, s = np.nonzero(np.isfinite(y))
    ref, _ = sample_gibbs(
        t, s, y[t, s], y.shape, PRIORS.resolve(y), chains=4, draws=4000, tune=200, seed=2
    )
    agree(
        _in_matrix_order(g, d, y.shape), ref, names=("b0", *SCALES, "topic_effect", "system_effect")
    )


def _collections(*, measures=("AP", "AP", "AP", "AP"), missing=0.1, seed=3):
    rng = np.random.default_rng(seed)
    rows = []
    beta = rng.normal(0, 0.03, 4)
    for c, (n_t, sig) in enumerate(zip((15, 25, 40, 20), (0.1, 0.15, 0.08, 0.2), strict=True)):
        a = rng.normal(0, 0.12, n_t)
        g = rng.normal(0, 0.02, 4)
        for t in range(n_t):
            for s in range(4):
                if s > 1 and rng.uniform() < missing:
                    continue
                score = 0.4 + a[t] + beta[s] + g[s] + rng.normal(0, sig)
                rows.append((f"c{c}", measures[c], f"s{s}", f"t{t}", score))
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    table = ScoreTable.from_frame(frame, missing="keep", check_range=False)
    return table.with_roles(champion="s0", challengers=["s1"])


@pytest.mark.parametrize("missing", [0.1, 0.0])  # the per-cell loop, the pattern loop
@pytest.mark.parametrize("scale", ["measure", "sd"])
def test_zero_sum_sets_hold_exactly_and_seeds_reproduce(scale, missing):
    d = collections_design(_collections(missing=missing), scale=scale)
    assert (GibbsLayout.of(d, design_priors(d)).pattern is None) == (missing > 0)
    pri = design_priors(d)
    a, _ = sample_design_gibbs(d, pri, chains=2, draws=200, tune=20, seed=5)
    b, _ = sample_design_gibbs(d, pri, chains=2, draws=200, tune=20, seed=5)
    c, _ = sample_design_gibbs(d, pri, chains=2, draws=200, tune=20, seed=6)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert not np.allclose(a["b0"], c["b0"])
    for term in d.terms[1:]:
        for s in np.unique(term.zero_sum):
            total = a[term.name][..., term.zero_sum == s].sum(axis=-1)
            np.testing.assert_allclose(total, 0, atol=1e-9, err_msg=term.name)
    assert a["topic"].shape == (2, 200, d.term("topic").n_levels)
    assert a["sigma"].shape == (2, 200, 4) and a["sigma_system"].shape == (2, 200, 1)


def _complete_designs():
    """Designs whose row groups each share one pattern of columns."""
    full = _collections(missing=0.0)
    frame = full.data
    absent = frame[(frame["collection"] != "c1") | (frame["system"] != "s3")]
    absent = ScoreTable.from_frame(absent, check_range=False).with_roles(champion="s0")
    _, two_way = _two_way(40, 5)
    segments = {t: "a" if i < 12 else "b" if i < 30 else "c" for i, t in enumerate(two_way.topics)}
    return {
        "measure": collections_design(full, scale="measure"),
        "sd": collections_design(full, scale="sd"),
        "a system absent from one collection": collections_design(absent),
        "segments": segments_design(two_way, segments),
    }


@pytest.mark.parametrize("name", list(_complete_designs()))
def test_the_pattern_loop_follows_the_per_cell_loops_posterior(name, monkeypatch):
    """Where every row group shares its columns, the loop that reads the groups' statistics
    (drawing the rows' noise as three statistics, or row by row to keep the rows) has the
    posterior of the per-cell loop (forced here by withholding the patterns)."""
    from bayes_ir.hierarchical.samplers import blocked_gibbs

    d = _complete_designs()[name]
    pri = design_priors(d)
    rows = d.terms[GibbsLayout.of(d, pri).rows].name
    assert GibbsLayout.of(d, pri).pattern is not None
    run = {"chains": 4, "draws": 10_000, "tune": 200, "seed": 11}
    stats, _ = sample_design_gibbs(d, pri, keep_rows=False, **run)
    kept, _ = sample_design_gibbs(d, pri, keep_rows=True, **run)
    monkeypatch.setattr(blocked_gibbs, "row_patterns", lambda *args: None)
    assert GibbsLayout.of(d, pri).pattern is None
    cells, _ = sample_design_gibbs(d, pri, keep_rows=True, **run)
    agree(cells, stats, names=[k for k in cells if k != rows], sd_tol=0.04)
    agree(cells, kept, names=list(cells), sd_tol=0.04)


def test_row_patterns_and_their_statistics():
    """Each group's pattern cells, their mean scores and the two sums of squares, against
    pandas; no patterns when a gap is not shared by every row of its group."""
    d = collections_design(_collections(missing=0.0))
    pattern = GibbsLayout.of(d, design_priors(d)).pattern
    cells = d.cells.assign(score=d.y)
    n_sys = cells["system"].nunique()
    for g, (coll, part) in enumerate(cells.groupby("collection", sort=True)):
        span = slice(pattern["pat_ptr"][g], pattern["pat_ptr"][g + 1])
        means = part.groupby("system")["score"].mean().sort_values().to_numpy()
        np.testing.assert_allclose(np.sort(pattern["pat_mean"][span]), means, err_msg=coll)
        sums = part.groupby("topic")["score"].sum()
        assert pattern["grp_syy"][g] == pytest.approx(((sums - sums.mean()) ** 2).sum())
        fit = (part["system"].map(part.groupby("system")["score"].mean())
               + part["topic"].map((sums - sums.mean()) / n_sys))  # fmt: skip
        assert pattern["grp_ess"][g] == pytest.approx(((part["score"] - fit) ** 2).sum())
    gaps = collections_design(_collections(missing=0.1))
    assert GibbsLayout.of(gaps, design_priors(gaps)).pattern is None


def test_a_pilot_sets_the_draws_for_the_ess_asked(monkeypatch):
    """Draws from the pilot's ESS per draw of the scales and column effects (not topics)."""
    import math

    from bayes_ir.hierarchical.diagnostics import draw_diagnostics
    from bayes_ir.hierarchical.samplers import blocked_gibbs
    from bayes_ir.hierarchical.samplers.chains import PILOT_DRAWS

    d = collections_design(_collections())
    pri = design_priors(d)
    post, info = sample_design_gibbs(d, pri, chains=4, draws=20_000, tune=100, seed=5, ess=6000)
    n = post["b0"].shape[1]
    assert n == math.ceil(6000 / (4 * info["pilot_ess_per_draw"]))
    assert PILOT_DRAWS < n < 20_000
    names = [t.name for t in d.terms if t.name != "topic"] + ["sigma", "sigma_system"]
    scalars = np.concatenate([post[k].astype(float) for k in names], -1)
    assert draw_diagnostics(scalars)[["ess_bulk", "ess_tail"]].min().min() > 0.8 * 6000
    assert post["topic"].shape[1] == n  # the rows are kept for the draws chosen
    # the same seed, the same draws; the pilot's first draws are those without a pilot
    again, _ = sample_design_gibbs(d, pri, chains=4, draws=20_000, tune=100, seed=5, ess=6000)
    np.testing.assert_array_equal(again["system"], post["system"])
    plain, _ = sample_design_gibbs(d, pri, chains=4, draws=PILOT_DRAWS, tune=100, seed=5)
    np.testing.assert_array_equal(plain["b0"], post["b0"][:, :PILOT_DRAWS])
    # rows that fit for the pilot but not for the draws chosen are dropped, not kept partly
    monkeypatch.setattr(blocked_gibbs, "ROWS_KEPT_LIMIT", 4 * PILOT_DRAWS * 100 + 1)
    no_rows, _ = sample_design_gibbs(d, pri, chains=4, draws=20_000, tune=100, seed=5, ess=6000)
    assert "topic" not in no_rows
    np.testing.assert_array_equal(no_rows["system"], post["system"])


def test_what_the_results_read_gets_its_ess_and_the_rest_the_gates():
    """``ess`` for the effects and the scales of new groups, ``ess_rest`` for the others.

    The draws are those the binding quantity needs, and every quantity reaches its own
    target (80% of it: the pilot's ESS per draw is an estimate).
    """
    import math

    from bayes_ir.hierarchical.design import replicates_design
    from bayes_ir.hierarchical.diagnostics import draw_diagnostics
    from bayes_ir.hierarchical.samplers.blocked_gibbs import read_by_results
    from bayes_ir.hierarchical.samplers.chains import ess_per_draw

    d = collections_design(_collections())
    layout = GibbsLayout.of(d, design_priors(d))
    read = read_by_results(d, layout)
    labels = []
    for j, _ in layout.columns:
        labels += [d.terms[j].name] * d.terms[j].n_levels
    for name, sl in layout.scale_slices.items():
        labels += [name] * (sl.stop - sl.start)
    read_names = {lab for lab, r in zip(labels, read, strict=True) if r}
    assert read_names == {"system", "system:collection", "sigma_system_collection"}
    assert set(labels) - read_names == {"b0", "sigma", "sigma_topic", "sigma_system"}
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        [("c", "AP", s, f"q{t}", f"seed{r}", 0.3 + rng.normal(0, 0.1))
         for s in ("a", "b", "c") for t in range(6) for r in range(3)],
        columns=["collection", "measure", "system", "topic", "replicate", "score"],
    )  # fmt: skip
    rep = replicates_design(ScoreTable(data=frame).with_roles(champion="a"))
    rep_layout = GibbsLayout.of(rep, design_priors(rep))
    rep_read = read_by_results(rep, rep_layout)
    scale_read = {
        name: bool(rep_read[rep_layout.n_cols + sl.start])
        for name, sl in rep_layout.scale_slices.items()
    }
    assert scale_read == {
        "sigma": False,
        "sigma_topic": False,
        "sigma_system": False,
        "sigma_topic_system": True,
        "sigma_replicate": True,
    }

    pri = design_priors(d)
    for ess, rest in ((8000, 800), (800, 8000)):
        post, info = sample_design_gibbs(
            d, pri, chains=4, draws=40_000, tune=100, seed=7, ess=ess, ess_rest=rest
        )
        draws = np.concatenate(
            [post[d.terms[j].name] for j, _ in layout.columns]
            + [post[name] for name in layout.scale_slices],
            axis=-1,
        )
        got = draw_diagnostics(draws)[["ess_bulk", "ess_tail"]].min(axis=1).to_numpy()
        assert (got[read] > 0.8 * ess).all() and (got[~read] > 0.8 * rest).all()
        # the draws are those of the quantity that needs the most
        target = np.where(read, ess, rest)
        per = ess_per_draw(draws[:, :500])  # the pilot's draws
        k = int(np.argmax(target / per))
        assert info["pilot_ess_per_draw"] == pytest.approx(per[k])
        assert post["b0"].shape[1] == math.ceil(target[k] / (4 * per[k]))


@pytest.mark.parametrize("scale", ["measure", "sd"])
def test_the_pymc_twin_has_the_stated_log_density(scale):
    """The twin's log density equals the model's, written with scipy at a random point (a
    centred term's free set means with the prior N(0, 1/n) that frees them from its scale)."""
    d = collections_design(_collections(), scale=scale)
    pri = design_priors(d)
    centred = {"topic": True, "system": False, "system:collection": True}
    model = build_design_model(d, pri, centred=centred)
    rng = np.random.default_rng(0)
    point = {}
    for rv in model.free_RVs:
        value = model.rvs_to_values[rv]
        point[value.name] = rng.normal(
            -1.5 if value.name.endswith("_log__") else 0.0,
            0.3,
            size=model.initial_point()[value.name].shape,
        )
    logp = model.compile_logp(jacobian=False, mode=REFERENCE_MODE)(point)
    b0 = point["b0"]
    sigma = np.exp(point["sigma_log__"])
    ref = stats.norm.logpdf(b0, pri.intercept_mu, pri.intercept_sd).sum()
    ref += stats.expon.logpdf(sigma, scale=1 / pri.residual_rate).sum()
    mu = b0[d.terms[0].index]
    for t in d.terms[1:]:
        s = np.exp(point[f"{t.scale_name}_log__"])
        ref += stats.expon.logpdf(s, scale=1 / pri.rates[t.name]).sum()
        if centred[t.name]:
            x = point[f"{t.dim}_raw"]
            ref += stats.norm.logpdf(x, 0, s[t.scale_group]).sum()
            for k in np.unique(t.zero_sum[t.zero_sum >= 0]):  # each set's free mean: N(0, 1/n)
                members = t.zero_sum == k
                (g,) = np.unique(t.scale_group[members])  # one scale per set here
                n, xbar = members.sum(), x[members].mean()
                ref += stats.norm.logpdf(xbar, 0, 1 / np.sqrt(n))
                ref -= stats.norm.logpdf(xbar, 0, s[g] / np.sqrt(n))
        else:
            z = point[f"{t.dim}_z"]
            ref += stats.norm.logpdf(z, 0, 1).sum()
            x = s[t.scale_group] * z
        effect = x.copy()
        for k in np.unique(t.zero_sum):
            effect[t.zero_sum == k] -= x[t.zero_sum == k].mean()
        part = effect[t.index]
        mu = mu + (sigma[d.residual.index] * part if t.standardized else part)
    ref += stats.norm.logpdf(d.y, mu, sigma[d.residual.index]).sum()
    assert logp == pytest.approx(ref, rel=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("scale", ["measure", "sd"])
def test_across_collections_agrees_with_nuts(scale):
    """Four collections, gaps, one residual and topic SD per collection: Gibbs vs nutpie."""
    d = collections_design(_collections(), scale=scale)
    pri = design_priors(d)
    g, _ = sample_design_gibbs(d, pri, chains=4, draws=5000, tune=300, seed=1)
    n, st = sample_design_nuts(d, pri, chains=4, draws=4000, tune=2000, seed=2, target_accept=0.99)
    assert int(st["diverging"].sum()) <= 10
    names = [k for k in g if k != "topic"]
    agree(g, n, names=names, sd_tol=0.1)


def test_the_draws_line_states_each_target():
    from bayes_ir.hierarchical.samplers.chains import describe_draws

    head = "draws: 4 x 100 = 400"
    assert describe_draws(4, 100, {}) == head
    assert describe_draws(4, 100, {"draws_for_ess": 1e4}) == f"{head} (chosen for ESS >= 10,000)"
    split = {"draws_for_ess": 1e4, "draws_for_ess_rest": 400}
    aim = "ESS >= 10,000 of the effects and of the scales of new groups, 400 of the rest"
    assert describe_draws(4, 100, split) == f"{head} (chosen for {aim})"
    assert describe_draws(4, 100, {**split, "pilot_ess_per_draw": 0.44}) == (
        f"{head} (chosen for {aim}, from a pilot's ESS per draw, 0.44)"
    )
    equal = {"draws_for_ess": 12_000, "draws_for_ess_rest": 12_000, "pilot_ess_per_draw": 0.5}
    assert describe_draws(4, 100, equal) == (
        f"{head} (chosen for ESS >= 12,000 from a pilot's ESS per draw, 0.50)"
    )
