"""A NUTS run at the default target acceptance that diverged is redone once, with smaller steps.

References: the calls the sampler receives (a recording fake), and for the model across
collections the draws of NUTS itself (its divergences at the default, none after).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayes_ir.hierarchical.samplers.retry import (
    RETRY_TARGET_ACCEPT,
    default_target_accept,
    describe_rerun,
    refit_settings,
    retry_if_diverged,
)


def _stats(diverging: int) -> xr.Dataset:
    flags = np.zeros((2, 50), dtype=bool)
    flags.flat[:diverging] = True
    return xr.Dataset({"diverging": (("chain", "draw"), flags)})


def _recording(divergences_at: dict[float, int]):
    calls: list[float] = []

    def draw(target_accept: float):
        calls.append(target_accept)
        return "draws", _stats(divergences_at.get(target_accept, 0))

    return draw, calls


@pytest.mark.parametrize(
    ("given", "default", "diverging", "calls", "used", "redone"),
    [
        (None, 0.9, {0.9: 7}, [0.9, RETRY_TARGET_ACCEPT], RETRY_TARGET_ACCEPT, 7),
        (None, 0.95, {}, [0.95], 0.95, 0),
        (0.9, 0.95, {0.9: 7}, [0.9], 0.9, 0),  # the caller's choice is kept
        (None, 0.99, {0.99: 3}, [0.99], 0.99, 0),  # no higher rung to go to
        (None, 0.9, {0.9: 7, RETRY_TARGET_ACCEPT: 2}, [0.9, RETRY_TARGET_ACCEPT], 0.99, 7),
    ],
)
def test_only_a_default_run_that_diverged_is_redone(given, default, diverging, calls, used, redone):
    draw, seen = _recording(diverging)
    (_, stats), target_accept, diverged = retry_if_diverged(
        draw, lambda out: out[1], target_accept=given, default=default
    )
    assert seen == calls and target_accept == used and diverged == redone
    assert int(stats["diverging"].sum()) == diverging.get(used, 0)


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")  # short chains
def test_the_model_across_collections_says_it_reran(monkeypatch):
    """fit_across without target_accept: the rerun's settings reach provenance and summary."""
    from bayes_ir.hierarchical import across, fit_across
    from bayes_ir.hierarchical.samplers import pymc_design
    from bayes_ir.table import ScoreTable

    rng = np.random.default_rng(0)
    rows = [
        (c, "acc", s, f"{c}{t}", float(rng.random() < 0.7))
        for c in ("X", "Y")
        for t in range(20)
        for s in ("a", "b")
    ]
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    table = ScoreTable.from_frame(frame).with_roles(champion="a", challengers=["b"])
    real = pymc_design.sample_design_nuts
    seen: list[float] = []

    def diverging_at_the_default(*args, target_accept, **kwargs):
        seen.append(target_accept)
        post, stats = real(*args, target_accept=target_accept, **kwargs)
        if target_accept == across.FAMILY_TARGET_ACCEPT:  # as if NUTS had diverged 5 times
            flags = np.zeros(stats["diverging"].shape, dtype=bool)
            flags.flat[:5] = True
            stats = stats.assign(diverging=(stats["diverging"].dims, flags))
        return post, stats

    monkeypatch.setattr(pymc_design, "sample_design_nuts", diverging_at_the_default)
    f = fit_across(table, likelihood="bernoulli", draws=300, tune=300, seed=1, model_check=False)
    assert seen == [across.FAMILY_TARGET_ACCEPT, RETRY_TARGET_ACCEPT]
    assert f.provenance["target_accept"] == RETRY_TARGET_ACCEPT
    assert f.provenance["divergences_at_default_target_accept"] == 5
    kept = int(f.posterior["sample_stats"]["diverging"].sum())  # the rerun's, not the 5
    assert f.diagnostics.divergences == kept
    assert (
        f"NUTS rerun at target_accept {RETRY_TARGET_ACCEPT:g} after 5 divergent transitions at the "
        f"default {across.FAMILY_TARGET_ACCEPT:g}"
    ) in f.summary()
    seen.clear()
    g = fit_across(table, likelihood="bernoulli", draws=300, tune=300, seed=1,
                   target_accept=0.9, model_check=False)  # fmt: skip
    assert seen == [0.9] and "divergences_at_default_target_accept" not in g.provenance


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")  # short chains
@pytest.mark.parametrize(
    ("likelihood", "shape", "default"),
    [
        ("gaussian", (30, 4), 0.9),
        ("bernoulli", (30, 4), 0.9),
        ("bernoulli", (20, 10), 0.65),
    ],
)
def test_a_single_table_fit_says_it_reran(monkeypatch, likelihood, shape, default):
    """The Gaussian model under NUTS and a family: one policy, said in the summary, from
    the default of the table's size (a small one's and a large one's; the Gaussian at one
    size only, as each size compiles its PyMC model anew: the sizes' defaults are
    :func:`test_the_default_target_accept_follows_the_table_size`)."""
    import sys

    from bayes_ir.hierarchical import fit
    from bayes_ir.hierarchical.families import get_family
    from bayes_ir.table import ScoreTable

    rng = np.random.default_rng(2)
    scores = (rng.random(shape) < 0.6).astype(float)
    names = ["a", "b", *(f"s{j}" for j in range(shape[1] - 2))]
    table = ScoreTable.from_matrix(scores, systems=names, measure="acc")
    table = table.with_roles(champion="a", challengers=["b"])
    seen: list[float] = []

    def fake_divergences(stats, target_accept):
        seen.append(target_accept)
        if target_accept == RETRY_TARGET_ACCEPT or stats is None:
            return stats
        flags = np.zeros(stats["diverging"].shape, dtype=bool)
        flags.flat[:3] = True
        return stats.assign(diverging=(stats["diverging"].dims, flags))

    if likelihood == "gaussian":
        module = sys.modules["bayes_ir.hierarchical.fit"]
        real = module.sample_nuts

        def sample_nuts(*args, target_accept, **kwargs):
            post, stats = real(*args, target_accept=target_accept, **kwargs)
            return post, fake_divergences(stats, target_accept)

        monkeypatch.setattr(module, "sample_nuts", sample_nuts)
        options = {"method": "nuts"}
    else:
        family = type(get_family(likelihood))
        real_sample = family.sample

        def sample(self, *args, target_accept, **kwargs):
            post, stats, info = real_sample(self, *args, target_accept=target_accept, **kwargs)
            return post, fake_divergences(stats, target_accept), info

        monkeypatch.setattr(family, "sample", sample)
        options = {}
    f = fit(table, likelihood=likelihood, chains=2, draws=200, tune=200, seed=1,
            model_check=False, **options)  # fmt: skip
    assert seen == [default, RETRY_TARGET_ACCEPT]
    assert f.provenance["target_accept"] == RETRY_TARGET_ACCEPT
    assert f.provenance["divergences_at_default_target_accept"] == 3
    assert f.provenance["default_target_accept"] == default
    assert (
        f"; rerun at target_accept {RETRY_TARGET_ACCEPT:g} after 3 divergent transitions at "
        f"the default {default:g}); "
    ) in f.summary()


@pytest.mark.parametrize(
    ("shape", "expected"),
    [((20, 10), 0.65), ((500, 100), 0.65), ((19, 100), 0.9), ((500, 9), 0.9), ((2, 2), 0.9)],
)
def test_the_default_target_accept_follows_the_table_size(shape, expected):
    """0.65 from 20 topics and 10 systems on (the thresholds of ``bayes_ir.defaults``)."""
    assert default_target_accept(shape) == expected


def test_the_rerun_is_described_from_the_provenance():
    """One sentence for every fit; provenance saved before it recorded the default's value
    (a single-table fit) reads the default given."""
    assert describe_rerun({"target_accept": 0.9}, 0.9) == ""
    assert describe_rerun({"divergences_at_default_target_accept": 0}, 0.9) == ""
    prov = {"target_accept": 0.99, "divergences_at_default_target_accept": 6}
    expected = "rerun at target_accept 0.99 after 6 divergent transitions at the default 0.95"
    assert describe_rerun({**prov, "default_target_accept": 0.95}, 0.9) == expected
    assert describe_rerun(prov, 0.95) == expected


def test_the_refit_settings_are_data_for_every_caller():
    """The remedy of a failed gate as settings and reasons (the command line formats them;
    its cases are in tests/cli/test_failed_diagnostics.py)."""
    from types import SimpleNamespace

    failed = SimpleNamespace(divergences=4, divergences_ok=False, bfmi_ok=True, rhat_ok=True,
                             ess_ok=False, draws=2000)  # fmt: skip
    prov = {"target_accept": 0.95, "tune": 500, "draws": 2000}
    settings, reasons = refit_settings(failed, prov)
    assert settings == {"target_accept": RETRY_TARGET_ACCEPT, "draws": 4000}
    assert reasons == ["target_accept 0.99 (4 divergent transitions)", "more draws"]
    last = refit_settings(failed, {**prov, "target_accept": 0.995})
    assert last == ({"tune": 1000, "draws": 4000}, ["a warm-up of 1,000", "more draws"])
