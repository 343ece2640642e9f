"""Agreement with brms: ``zero_one_inflated_beta`` on rb04 and ``bernoulli`` on GLUE RTE.

brms (Buerkner 2017; stored runs of ``BRMS_R_SCRIPT`` in ``tests/results/families.py``)
fits the same crossed models with the same priors; every system's score-scale contrast
with the champion (the expected score over the topic population, computed in R from
brms' draws) must agree with ours: the posterior means within ``BRMS_N_MCSE`` combined
Monte Carlo SEs, the posterior SDs within ``BRMS_SD_REL``. With 44 contrasts on rb04 a
few beyond 2 SEs are expected by chance, so the test allows the binomial 99% quantile of
exceedances at 2 SEs and none beyond 4. The live test re-runs the R script where R and
brms are installed (slow: two Stan compilations, 4 x 3,000 iterations each).
"""

from __future__ import annotations

import csv
import subprocess
import warnings

import numpy as np
import pytest
from results.families import (
    BRMS_BERNOULLI_RTE,
    BRMS_N_MCSE,
    BRMS_R_SCRIPT,
    BRMS_SD_REL,
    BRMS_ZOIB_RB04,
)
from scipy import stats

from bayes_ir.hierarchical import fit
from bayes_ir.hierarchical.diagnostics import draw_diagnostics
from bayes_ir.readers import read_scores

#: Stored brms results and how to build our fit of the same data.
CASES = {
    "zoib_rb04": (BRMS_ZOIB_RB04, "zoib", "Champion"),
    "bernoulli_rte": (BRMS_BERNOULLI_RTE, "bernoulli", "bert-base-cased"),
}


def _table(name: str, data):
    if name == "zoib_rb04":
        return read_scores(data / "bayesian_risk" / "rb04_data.csv", measure="AP")
    return read_scores(data / "ranger" / "glue_persample_tidy.csv.gz").select(collection="rte")


def our_contrasts(name: str, data) -> dict[str, tuple[float, float, float]]:
    """Every system minus the champion: (posterior mean, SD, Monte Carlo SE of the mean)."""
    _, likelihood, champion = CASES[name]
    table = _table(name, data)
    others = [s for s in table.systems if s != champion]
    table = table.with_roles(champion=champion, challengers=others)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit(table, likelihood=likelihood, seed=2028, pooling="all")  # brms' (1 | system)
    assert res.diagnostics.passed
    means = res.system_mean_draws()
    diff = (means.sel(system=others) - means.sel(system=champion)).drop_vars(
        "role", errors="ignore"
    )
    diag = draw_diagnostics(diff.transpose("chain", "draw", "system"))
    return {s: (diag.loc[s, "mean"], diag.loc[s, "sd"], diag.loc[s, "mcse_mean"]) for s in others}


def agreement(ours: dict, brms: dict) -> tuple[np.ndarray, np.ndarray]:
    """z-scores of the mean differences (combined MCSE) and the SD ratios, per system."""
    systems = sorted(brms)
    assert sorted(ours) == systems
    z = np.array([(ours[s][0] - brms[s][0]) / np.hypot(ours[s][2], brms[s][2]) for s in systems])
    ratio = np.array([ours[s][1] / brms[s][1] for s in systems])
    return z, ratio


def _check(z: np.ndarray, ratio: np.ndarray) -> None:
    p_out = 2 * stats.norm.sf(BRMS_N_MCSE)
    allowed = stats.binom.ppf(0.99, z.size, p_out)
    assert (np.abs(z) > BRMS_N_MCSE).sum() <= allowed, np.round(z, 2)
    assert np.abs(z).max() <= 4.0, np.round(z, 2)
    assert np.abs(ratio - 1).max() <= BRMS_SD_REL, np.round(ratio, 3)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_score_scale_contrasts_agree_with_stored_brms(name, shared_data):
    brms = CASES[name][0]["contrast"]
    _check(*agreement(our_contrasts(name, shared_data), brms))


def test_the_rule_fails_on_a_shifted_contrast():
    """The agreement rule rejects one contrast moved by 5 combined MCSEs or an SD off by 15%."""
    brms = BRMS_ZOIB_RB04["contrast"]
    fake = {s: (m + 0.3 * mc, sd, mc) for s, (m, sd, mc) in brms.items()}
    z, ratio = agreement(fake, brms)
    _check(z, ratio)
    first = sorted(brms)[0]
    m, sd, mc = brms[first]
    shifted = {**fake, first: (m + 5 * np.hypot(mc, mc), sd, mc)}
    with pytest.raises(AssertionError):
        _check(*agreement(shifted, brms))
    wide = {**fake, first: (m, 1.15 * sd, mc)}
    with pytest.raises(AssertionError):
        _check(*agreement(wide, brms))


@pytest.mark.slow
def test_live_brms_agrees(brms_rscript, shared_data, tmp_path):
    """Re-run the R script and check its contrasts against ours (``BAYES_IR_LIVE_BRMS=1``)."""
    script = tmp_path / "brms_families.R"
    script.write_text(BRMS_R_SCRIPT)
    done = subprocess.run([brms_rscript, str(script), str(shared_data), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=7200)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    for name in CASES:
        with open(tmp_path / f"out_{name}.csv", newline="") as handle:
            rows = [r for r in csv.DictReader(handle) if r["kind"] == "contrast"]
        live = {
            r["system"]: (float(r["mean"]), float(r["sd"]), float(r["mcse_mean"])) for r in rows
        }
        stored = CASES[name][0]["contrast"]
        _check(*agreement(live, stored))  # the stored run, same seed
        _check(*agreement(our_contrasts(name, shared_data), live))
