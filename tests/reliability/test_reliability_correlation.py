import itertools

import numpy as np
import pytest
from results.reliability import HAND_CASES, THREE_CYCLE_SWAPPED_TAU_AP
from scipy import stats

from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.reliability import kendall_tau, tau_ap
from bayes_ir.reliability.correlation import _tau_ap_batch, _tau_batch


@pytest.mark.parametrize("name", list(HAND_CASES))
def test_hand_cases(name):
    truth, estimate, tau, tap = HAND_CASES[name]
    assert kendall_tau(truth, estimate) == pytest.approx(tau, abs=1e-12)
    assert tau_ap(truth, estimate) == pytest.approx(tap, abs=1e-12)


def test_swap_at_top_costs_more_than_at_bottom():
    _, _, _, top = HAND_CASES["swap_at_top"]
    _, _, _, bottom = HAND_CASES["swap_at_bottom"]
    assert top < bottom


def test_tau_ap_is_asymmetric_truth_first():
    truth, estimate, _, tap = HAND_CASES["three_cycle"]
    assert tau_ap(truth, estimate) == pytest.approx(tap)
    assert tau_ap(estimate, truth) == pytest.approx(THREE_CYCLE_SWAPPED_TAU_AP)


def test_ranks_argument():
    scores = [0.5, 0.3, 0.9, 0.1]
    ranks = stats.rankdata([-s for s in scores])  # 1 = best
    other = [0.4, 0.35, 0.8, 0.2]
    other_ranks = stats.rankdata([-s for s in other])
    assert tau_ap(ranks, other_ranks, ranks=True) == pytest.approx(tau_ap(scores, other))
    assert kendall_tau(ranks, other_ranks, ranks=True) == pytest.approx(kendall_tau(scores, other))


def _tau_b_brute(x, y):
    conc = disc = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        a, b = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if a == 0 and b == 0:
            continue
        if a == 0:
            tx += 1
        elif b == 0:
            ty += 1
        elif a == b:
            conc += 1
        else:
            disc += 1
    return (conc - disc) / np.sqrt((conc + disc + tx) * (conc + disc + ty))


def test_kendall_tau_b_with_ties_matches_brute_force():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, 15).astype(float)
    y = rng.integers(0, 4, 15).astype(float)
    assert kendall_tau(x, y) == pytest.approx(_tau_b_brute(x, y), abs=1e-12)


def _r_tau(mu, mu_hat):  # transcription of src/correlation.R: tau()
    n = len(mu)
    nd = sum(
        np.sign(mu[i] - mu[j]) * np.sign(mu_hat[i] - mu_hat[j]) < 0
        for i, j in itertools.combinations(range(n), 2)
    )
    return 1 - 2 * nd / (n * (n - 1) / 2)


def _r_tau_ap(mu, mu_hat):  # transcription of src/correlation.R: tauAP()
    n = len(mu)
    mu_order = list(np.argsort(-np.asarray(mu), kind="stable"))
    hat_order = list(np.argsort(-np.asarray(mu_hat), kind="stable"))
    p = 0.0
    for i in range(1, n):
        sys_i = hat_order[i]
        hat_above = hat_order[: i + 1]
        mu_above = mu_order[: mu_order.index(sys_i) + 1]
        c = sum(s in mu_above for s in hat_above) - 1
        p += c / i
    return 2 * p / (n - 1) - 1


def test_batched_kernels_match_the_r_code_with_ties():
    rng = np.random.default_rng(11)
    truth = rng.integers(0, 5, (40, 9)).astype(float)  # many ties
    est = rng.integers(0, 5, (40, 9)).astype(float)
    tau = _tau_batch(truth, est)
    tap = _tau_ap_batch(truth, est)
    for b in range(40):
        assert tau[b] == pytest.approx(_r_tau(truth[b], est[b]))
        assert tap[b] == pytest.approx(_r_tau_ap(truth[b], est[b]))


def test_batched_kernels_broadcast_and_chunk(monkeypatch):
    from bayes_ir.reliability import correlation

    monkeypatch.setattr(correlation, "_CHUNK_CELLS", 50)  # force many chunks
    rng = np.random.default_rng(2)
    truth = rng.random(7)
    est = rng.random((13, 7))
    got = _tau_ap_batch(truth, est)
    assert got.shape == (13,)
    assert got == pytest.approx([_r_tau_ap(truth, e) for e in est])
    assert _tau_batch(truth, est) == pytest.approx(
        [stats.kendalltau(truth, e).statistic for e in est]
    )


def test_bad_input():
    with pytest.raises(ValueError, match="differ in length"):
        tau_ap([1, 2, 3], [1, 2])
    with pytest.raises(InsufficientDataError):
        kendall_tau([1.0], [2.0])
    with pytest.raises(ValueError, match="NaN"):
        tau_ap([1, np.nan], [1, 2])
    with pytest.raises(OptionError, match="^variant must be one of .b., .c., got"):
        kendall_tau([1, 2], [1, 2], variant="a")
