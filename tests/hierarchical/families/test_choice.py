"""Choosing the family: candidates by the scores, PSIS-LOO within an outcome space only.

Known truth: tables simulated from a zoib model with many exact 1s (as reciprocal rank
has), where the Gaussian cannot predict the exact 1s, and 0/1 tables, which only the
Bernoulli family describes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special

from bayes_ir.hierarchical import compare_likelihoods, fit
from bayes_ir.hierarchical.likelihoods import (
    CANDIDATES,
    choose_across_spaces,
    default_candidates,
    model_name,
)
from bayes_ir.table import ScoreTable


def _table(y: np.ndarray, measure: str) -> ScoreTable:
    systems = [f"s{i}" for i in range(y.shape[1])]
    table = ScoreTable.from_matrix(y, systems=systems, measure=measure)
    return table.with_roles(champion="s0", challengers=["s1", "s2"])


def _zeros_by_system(shares: list[float], seed: int) -> np.ndarray:
    """60 topics of beta scores, system j an exact 0 on each topic with ``shares[j]``."""
    rng = np.random.default_rng(seed)
    n_s = len(shares)
    mu = special.expit(rng.normal(-0.5, 0.8, (60, 1)) + np.linspace(-0.3, 0.3, n_s)[None, :])
    y = rng.beta(mu * 6, (1 - mu) * 6)
    y[rng.random((60, n_s)) < np.array(shares)] = 0.0
    return y


def _rr_like(n_t=40, n_s=5, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mu = special.expit(rng.normal(-0.5, 0.8, (n_t, 1)) + np.linspace(-0.3, 0.3, n_s)[None, :])
    y = rng.beta(mu * 6, (1 - mu) * 6)
    y[rng.random((n_t, n_s)) < 0.4] = 1.0
    return y


def test_candidates_follow_the_scores():
    rng = np.random.default_rng(1)
    assert default_candidates(_table(rng.integers(0, 2, (20, 4)).astype(float), "acc")) == (
        "bernoulli",
    )
    p10 = rng.integers(0, 11, (20, 4)) / 10
    assert default_candidates(_table(p10, "P@10")) == (*CANDIDATES, "zoib", "binomial")
    assert default_candidates(_table(_rr_like(), "RR")) == (*CANDIDATES, "zoib")
    # a measure of unknown range gets the continuous families only
    assert default_candidates(_table(_rr_like(), "score")) == CANDIDATES


def test_the_density_and_the_mass_are_not_compared_by_loo_but_by_the_checks():
    table = _table(_rr_like(), "RR")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # 4 x 1,000 draws (the zoib default is 4 x 4,000): the model check replicates 1,000
        # draws either way; the predicted share of exact 1s moves by 5e-4 (0.3764 -> 0.3759,
        # observed 0.38, tolerance 0.02)
        res = compare_likelihoods(
            table, candidates=["gaussian", "zoib"], seed=2, loo_draws=1000, draws=1000
        )
    frame = res.to_frame().set_index("model")
    # one candidate per outcome space: each is its own space's reference
    assert frame.loc["gaussian", "outcome_space"] == "continuous"
    assert frame.loc["zoib", "outcome_space"] == "unit_inflated"
    assert (frame["elpd_diff"] == 0).all() and res.runner_up == ""
    spaces = res.spaces.set_index("outcome_space")
    ones = float(np.mean(table.matrix().values == 1))
    assert spaces.loc["continuous", "ones_observed"] == pytest.approx(ones)
    assert spaces.loc["continuous", "ones_predicted"] == 0.0
    assert not spaces.loc["continuous", "adequate"]
    assert spaces.loc["unit_inflated", "adequate"]
    assert abs(spaces.loc["unit_inflated", "ones_predicted"] - ones) < 0.02
    assert res.chosen == "zoib" and model_name(res.chosen_fit) == "zoib"
    # the champion and challengers flagged by each space's choice, counted by hand
    roles = {table.champion, *table.challengers}
    for space, row in spaces.iterrows():
        flagged = set(res.fits[row["choice"]].model_check.flagged)
        assert row["roles_flagged"] == len(flagged & roles), space
        assert row["n_flagged"] == len(flagged), space
    text = res.summary()
    assert "the only candidate of its outcome space" in text and "inadequate" in text


def _spaces(*rows, passed=None):
    """Rows (choice, adequate, roles flagged, systems flagged); ``passed``: diagnostics."""
    cols = ["choice", "adequate", "roles_flagged", "n_flagged"]
    frame = pd.DataFrame(rows, columns=cols)
    return frame.assign(diagnostics_passed=[True] * len(rows) if passed is None else passed)


def test_across_spaces_the_systems_the_decision_is_about_come_first():
    spaces = _spaces

    # the example data: zoib misfits a challenger, the per-system SD model two artifacts
    assert choose_across_spaces(spaces(
        ("gaussian_sigma_by_system", True, 0, 2), ("zoib", True, 1, 1))
    ) == "gaussian_sigma_by_system"  # fmt: skip
    # equal on the champion and challengers: the fewest flagged; then the first space
    assert choose_across_spaces(spaces(("gaussian", True, 0, 3), ("zoib", True, 0, 1))) == "zoib"
    assert choose_across_spaces(spaces(("gaussian", True, 0, 1), ("zoib", True, 0, 1))) == (
        "gaussian"
    )
    # an inadequate space (its shares of exact 0s and 1s are off) is not chosen ...
    assert choose_across_spaces(spaces(("gaussian", False, 0, 0), ("zoib", True, 2, 9))) == "zoib"
    # ... unless every space is inadequate
    assert choose_across_spaces(spaces(("gaussian", False, 0, 0), ("zoib", False, 1, 0))) == (
        "gaussian"
    )


def test_across_spaces_a_failed_posterior_is_not_chosen_over_one_that_passed():
    """zoib on LiveCodeBench's pass@1: adequate shares of exact 0s and 1s from a posterior
    that failed its diagnostics (BFMI 0.06) does not beat a continuous model that passed."""
    rows = (("gaussian_sigma_by_system", False, 2, 9), ("zoib", True, 2, 9))
    assert choose_across_spaces(_spaces(*rows)) == "zoib"
    assert choose_across_spaces(_spaces(*rows, passed=[True, False])) == (
        "gaussian_sigma_by_system"
    )
    # the adequacy rule holds among the posteriors that passed ...
    rows3 = (*rows, ("binomial", True, 2, 9))
    assert choose_across_spaces(_spaces(*rows3, passed=[True, False, True])) == "binomial"
    # ... and among all when none passed
    assert choose_across_spaces(_spaces(*rows, passed=[False, False])) == "zoib"


def test_a_failed_point_mass_fit_neither_skips_nor_beats_the_continuous_ones(monkeypatch):
    """40% exact 1s, as the test below, but zoib's posterior failed its diagnostics: the
    continuous candidate is fitted, chosen, and the summary says why zoib is not."""
    import dataclasses
    import sys

    from bayes_ir.hierarchical import likelihoods

    fit_module = sys.modules["bayes_ir.hierarchical.fit"]  # the package exports fit()
    real = fit_module.fit

    def fit_with_failed_zoib(table, **options):
        result = real(table, **options)
        if options.get("likelihood") != "zoib":
            return result
        failed = dataclasses.replace(result.diagnostics, divergences=7)
        return dataclasses.replace(result, diagnostics=failed)

    monkeypatch.setattr(fit_module, "fit", fit_with_failed_zoib)
    monkeypatch.setattr(likelihoods, "default_candidates", lambda t: ("gaussian", "zoib"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare_likelihoods(_table(_rr_like(), "RR"), seed=2, loo_draws=1000, draws=1000)
    spaces = res.spaces.set_index("outcome_space")
    assert set(res.fits) == {"gaussian", "zoib"} and res.skipped == ()
    assert spaces.loc["unit_inflated", "adequate"] and not spaces.loc["continuous", "adequate"]
    assert list(spaces["diagnostics_passed"]) == [True, False]
    assert res.chosen == "gaussian"
    text = res.summary()
    assert "inadequate *" in text and "adequate, diagnostics FAILED" in text


def test_auto_fits_the_bernoulli_family_to_binary_items():
    rng = np.random.default_rng(3)
    y = (rng.random((60, 3)) < special.expit(rng.normal(0.8, 1.0, (60, 1)))).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = fit(_table(y, "accuracy"), likelihood="auto", seed=1, draws=1000)
    assert f.likelihood == "bernoulli"
    assert f.likelihood_choice.chosen == "bernoulli"
    assert "the only candidate of its outcome space" in f.summary()


@pytest.fixture
def fitted(monkeypatch) -> list[str]:
    """The models compare_likelihoods evaluates, in order (each one's PSIS-LOO is recorded)."""
    from bayes_ir.hierarchical import likelihoods

    out: list[str] = []
    real = likelihoods.loo
    monkeypatch.setattr(
        likelihoods, "loo", lambda f, **k: out.append(model_name(f)) or real(f, **k)
    )
    return out


def test_default_candidates_skip_the_continuous_ones_when_they_cannot_be_chosen(
    monkeypatch, fitted
):
    """40% exact 1s: a continuous family is inadequate whatever its fit, so once zoib is
    adequate (and reproduces the mean differences) the three are not fitted; the choice is
    that of the comparison that fits them (the test above) and the summary says why."""
    from bayes_ir.hierarchical import likelihoods

    table = _table(_rr_like(), "RR")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare_likelihoods(table, seed=2, loo_draws=1000, draws=1000)
    assert fitted == ["zoib"] and set(res.fits) == {"zoib"} and res.escalated == {}
    assert res.skipped == CANDIDATES and res.chosen == "zoib"
    assert res.spaces["adequate"].all()
    ones = float(np.mean(table.matrix().values == 1))
    assert res.zeros_ones == (0.0, pytest.approx(ones))
    text = " ".join(res.summary().split())
    assert "Likelihood chosen by PSIS-LOO and the checks across spaces: zoib" in text
    assert (
        f"not fitted: {', '.join(CANDIDATES)}: a continuous family predicts no exact 0s or 1s, "
        f"the scores have 0.0% 0s and {ones:.1%} 1s (tolerance 2 percentage points) and zoib "
        "predicts both shares within it"
    ) in text
    # under the tolerance a continuous family may be adequate: every candidate is fitted
    fitted.clear()
    monkeypatch.setattr(likelihoods.defaults, "POINT_MASS_TOLERANCE", 0.5)
    monkeypatch.setattr(likelihoods, "default_candidates", lambda t: ("gaussian", "zoib"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare_likelihoods(table, seed=2, loo_draws=1000, draws=1000)
    assert fitted == ["gaussian", "zoib"] and res.skipped == ()


def test_a_zoib_that_flags_systems_on_their_exact_0s_brings_in_one_inflation_per_system(
    fitted,
):
    """Two of six systems score an exact 0 on 40% of the topics, the others on 3% (known
    truth: zoib with one inflation per system): the pooled zoib, the default candidate,
    flags systems on their share of 0s, so zoib(inflation=system) is fitted too, wins by
    PSIS-LOO, describes every system, and the summary says why it was fitted."""
    y = _zeros_by_system([0.03, 0.03, 0.03, 0.03, 0.4, 0.4], seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare_likelihoods(_table(y, "AP"), seed=2, loo_draws=1000, draws=1000)
    pooled = res.fits["zoib"].model_check
    assert {"s4", "s5"} <= set(pooled.flagged)
    assert all("zeros" in pooled.failed(s) for s in pooled.flagged)
    assert fitted == ["zoib", "zoib_inflation_by_system"]
    assert res.chosen == "zoib_inflation_by_system" and res.runner_up == "zoib"
    assert res.elpd_diff > 2 * res.elpd_diff_se
    assert res.chosen_fit.model_check.passed
    n = len(pooled.flagged)
    why = f"zoib's model check flagged {n} system{'s' if n > 1 else ''} (zeros)"
    assert res.escalated == {"zoib_inflation_by_system": why}
    assert f"also fitted: zoib_inflation_by_system, because {why}" in res.summary()


def test_the_richer_zoib_comes_before_the_continuous_fits_are_decided(fitted):
    """The champion scores an exact 0 on 45% of the topics, its challengers on 3% (TREC-8
    RR's shape): the pooled zoib puts the champion's mean too high, so its contrasts fail
    the mean-difference check. The zoib with one inflation per system passes it, so the
    continuous candidates, which predict no exact 0, are still skipped: they are decided
    after the escalation (before, all three were fitted; on TREC-8 RR the skew-normal ran
    for minutes and diverged)."""
    y = _zeros_by_system([0.45, 0.03, 0.03, 0.03, 0.03, 0.03], seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare_likelihoods(_table(y, "AP"), seed=2, loo_draws=1000, draws=1000)
    frame = res.to_frame().set_index("model")
    assert frame.at["zoib", "mean_check_p"] < 0.01  # the path this test is about
    assert frame.at["zoib_inflation_by_system", "mean_check_p"] >= 0.01
    assert fitted == ["zoib", "zoib_inflation_by_system"]
    assert res.skipped == CANDIDATES
    assert res.chosen == "zoib_inflation_by_system"


@pytest.mark.parametrize(
    ("model", "failed", "expected"),
    [
        ("zoib", ("zeros",), "zoib_inflation_by_system"),
        ("zoib", ("sd",), "zoib_phi_by_system"),
        ("zoib", ("ones", "coverage_95"), "zoib_inflation_by_system_phi_by_system"),
        ("zoib_inflation_by_system", ("skewness",), "zoib_inflation_by_system_phi_by_system"),
        ("zoib_phi_by_system", ("coverage_50",), None),  # what it has per system already
        ("zoib", ("mean",), None),  # neither structure addresses the mean
        ("zoib", (), None),  # nothing flagged
    ],
)
def test_richer_zoib_adds_what_the_flagged_systems_ask_for(model, failed, expected):
    from types import SimpleNamespace

    from bayes_ir.hierarchical.families import get_family
    from bayes_ir.hierarchical.likelihoods import MODELS, richer_zoib

    likelihood, sigma = MODELS[model]
    family = get_family(likelihood)
    family = family.with_dispersion(sigma) if sigma == "system" else family
    check = SimpleNamespace(flagged=("s1",) if failed else (), failed=lambda s: failed)
    fake = SimpleNamespace(model_check=check, provenance={"family": family.spec, "sigma": sigma})
    assert model_name(fake) == model
    got = richer_zoib(fake)
    assert (got and got[0]) == expected
