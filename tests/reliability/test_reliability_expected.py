import numpy as np
import pandas as pd
import pytest
from results.reliability import ADHOC6, ADHOC6_TOL

from bayes_ir.errors import InsufficientDataError
from bayes_ir.reliability import expected_correlation
from bayes_ir.table import ScoreTable


@pytest.mark.shared_data
@pytest.mark.parametrize("estimator", list(ADHOC6))
def test_adhoc6_matches_urbano_marrero(adhoc6, estimator):
    res = expected_correlation(adhoc6, estimator=estimator)
    assert res.n_topics == 50 and res.n_systems == 74
    assert res.tau == pytest.approx(ADHOC6[estimator][0], abs=ADHOC6_TOL)
    assert res.tau_ap == pytest.approx(ADHOC6[estimator][1], abs=ADHOC6_TOL)


@pytest.mark.shared_data
def test_adhoc6_stochastic_estimators_agree_with_msqd(adhoc6):
    # The paper's Fig. 1: at 50 topics all four estimators are within ~0.01 of each other.
    msqd = expected_correlation(adhoc6, estimator="MSQD")
    for est in ("RES", "KD"):
        res = expected_correlation(adhoc6, estimator=est, seed=1)
        assert abs(res.tau - msqd.tau) < 0.01
        assert abs(res.tau_ap - msqd.tau_ap) < 0.015


def _table(x, systems=None):
    return ScoreTable.from_matrix(x, systems=systems or [f"s{k}" for k in range(x.shape[1])])


def test_result_object():
    rng = np.random.default_rng(0)
    x = np.clip(rng.normal(0.3, 0.1, (20, 5)) + np.linspace(0.1, 0, 5), 0, 1)
    res = expected_correlation(_table(x), estimator="ML")
    assert res.systems[0] == f"s{int(np.argmax(x.mean(axis=0)))}"  # best mean first
    assert list(res.means) == sorted(res.means, reverse=True)
    frame = res.to_frame()
    assert list(frame.columns) == [
        "collection",
        "measure",
        "estimator",
        "coefficient",
        "estimate",
        "n_topics",
        "n_systems",
    ]
    assert frame["estimate"].tolist() == [res.tau, res.tau_ap]
    pairs = res.pairs_frame()
    assert len(pairs) == 10
    # E[tau] from the pair table, by the formula of the issue
    assert 1 - 4 / (5 * 4) * pairs["p_swap"].sum() == pytest.approx(res.tau)
    assert (pairs["mean_diff"] >= 0).all()
    text = res.summary()
    assert f"{res.tau:.4f}" in text and f"{res.tau_ap:.4f}" in text and "ML" in text
    likely = int((pairs["p_swap"] > 0.25).sum())
    assert f"(p_ij > 0.25): {likely} of 10; expected number of swapped pairs: " in text
    assert f"swapped pairs: {pairs['p_swap'].sum():.1f}" in text
    assert str(res) == text
    assert res.seed is None  # ML is deterministic
    assert "<table" in res._repr_html_()


def test_identical_systems_are_reported():
    rng = np.random.default_rng(1)
    x = rng.random((15, 4))
    x[:, 3] = x[:, 1]
    res = expected_correlation(_table(x, ["a", "b", "c", "b_copy"]), estimator="MSQD")
    assert len(res.undefined) == 1 and set(res.undefined[0]) == {"b", "b_copy"}
    assert any("identical scores" in n for n in res.notes)
    assert "identical scores" in res.summary()
    pairs = res.pairs_frame()
    assert pairs.loc[pairs["undefined"], "p_swap"].tolist() == [0.0]


def test_seed_and_split_half():
    rng = np.random.default_rng(2)
    x = rng.random((12, 6))
    t = _table(x)
    a = expected_correlation(t, estimator="RES(T=200)", seed=3)
    b = expected_correlation(t, estimator="RES(T=200)", seed=3)
    assert a.tau == b.tau and a.seed == 3 and a.estimator == "RES(T=200)"
    sh = expected_correlation(t, estimator="SH(w/o)", seed=3)
    assert sh.p_swap is None and sh.estimator == "SHwo"
    with pytest.raises(ValueError, match="pairwise"):
        sh.pairs_frame()


def test_bad_input():
    rng = np.random.default_rng(3)
    with pytest.raises(InsufficientDataError, match="2 systems"):
        expected_correlation(_table(rng.random((10, 1))))
    with pytest.raises(InsufficientDataError, match="at least 4 topics"):
        expected_correlation(_table(rng.random((3, 4))), estimator="SHw")
    with pytest.raises(ValueError, match="correlation coefficient"):
        expected_correlation(_table(rng.random((10, 3))), estimator="tau_ap")
    gappy = pd.DataFrame(
        {"system": ["a", "a", "b"], "topic": ["1", "2", "1"], "score": [0.1, 0.2, 0.3]}
    )
    table = ScoreTable.from_frame(gappy, missing="keep")
    with pytest.raises(InsufficientDataError, match="missing"):
        expected_correlation(table)


def test_few_topics_warn():
    import numpy as np
    import pytest

    from bayes_ir.errors import DataWarning
    from bayes_ir.reliability import expected_correlation
    from bayes_ir.table import ScoreTable

    x = np.random.default_rng(0).uniform(size=(5, 4))
    with pytest.warns(DataWarning, match="only 5 topics"):
        expected_correlation(ScoreTable.from_matrix(x), estimator="ML")
