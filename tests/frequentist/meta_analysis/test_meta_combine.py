"""Pooling against metafor's rma() (numbers and R calls in tests/results/meta_analysis.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from results import meta_analysis as ref

from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.frequentist import meta_analysis

EFFECTS = pd.DataFrame({"label": list("abcde"), "yi": ref.YI, "vi": ref.VI})


def check(res, expected: dict, rtol: float = 1e-7) -> None:
    ci = res.conf_int()
    got = {
        "estimate": res.estimate,
        "se": res.se,
        "statistic": res.statistic,
        "p_value": res.p_value,
        "ci_lower": ci.ci_lower,
        "ci_upper": ci.ci_upper,
    }
    if "tau2" in expected:
        got |= {"tau2": res.tau2, "se_tau2": res.se_tau2}
    if "i2" in expected:
        got |= {"i2": res.i2, "h2": res.h2}
    if "pi_lower" in expected:
        pi = res.prediction_interval()
        got |= {"pi_lower": pi.pi_lower, "pi_upper": pi.pi_upper}
    if "weights" in expected:
        np.testing.assert_allclose(100 * res.weights, expected["weights"], rtol=1e-8)
    for key, value in got.items():
        assert value == pytest.approx(expected[key], rel=rtol, abs=1e-12), key


@pytest.mark.parametrize(
    ("method", "hk", "expected"),
    [
        ("FE", False, ref.FE),
        ("DL", False, ref.DL),
        ("REML", False, ref.REML),
        ("PM", False, ref.PM),
        ("DL", True, ref.DL_KH),
        ("REML", True, ref.REML_KH),
        ("PM", True, ref.PM_KH),
    ],
)
def test_matches_metafor(method, hk, expected):
    res = meta_analysis(EFFECTS, method=method, hk=hk)
    check(res, expected)
    het = res.heterogeneity()
    assert het.q == pytest.approx(ref.Q, rel=1e-10)
    assert het.q_pvalue == pytest.approx(ref.Q_PVALUE, rel=1e-9)
    assert het.q_df == 4
    if method != "FE":
        assert het.tau == pytest.approx(np.sqrt(res.tau2))


def test_issue_numbers_rounded():
    res = meta_analysis(EFFECTS, method="DL")
    assert round(res.estimate, 8) == 0.01885597
    assert round(res.se, 9) == 0.007646797
    assert round(res.tau2, 10) == 0.0001261544
    assert round(res.q, 4) == 7.2108
    assert round(res.i2, 2) == 44.53
    pi = res.prediction_interval()
    assert (round(pi.pi_lower, 4), round(pi.pi_upper, 4)) == (-0.0078, 0.0455)
    assert meta_analysis(EFFECTS, method="REML").tau2 == pytest.approx(1.0792e-4, abs=1e-8)


def test_reml_is_not_metafors_early_stop():
    tau2 = meta_analysis(EFFECTS, method="REML").tau2
    assert abs(tau2 - ref.REML_DEFAULT_THRESHOLD_TAU2) > 4e-6


def test_other_ci_prob():
    res = meta_analysis(EFFECTS, method="DL", ci_prob=0.90)
    ci, pi = res.conf_int(), res.prediction_interval()
    assert ci.ci_lower == pytest.approx(ref.DL_90["ci_lower"], rel=1e-8)
    assert ci.ci_upper == pytest.approx(ref.DL_90["ci_upper"], rel=1e-8)
    assert pi.pi_lower == pytest.approx(ref.DL_90["pi_lower"], rel=1e-8)
    assert pi.pi_upper == pytest.approx(ref.DL_90["pi_upper"], rel=1e-8)
    # asking the 95% result for 90% gives the same
    assert meta_analysis(EFFECTS, method="DL").conf_int(0.9) == pytest.approx(tuple(ci))


@pytest.mark.parametrize(("method", "expected"), [("DL", ref.LOO_DL), ("REML", ref.LOO_REML)])
def test_leave_one_out(method, expected):
    loo = meta_analysis(EFFECTS, method=method).leave_one_out()
    assert list(loo["omitted"]) == list("abcde")
    for key, values in expected.items():
        np.testing.assert_allclose(loo[key], values, rtol=5e-6, atol=1e-8, err_msg=key)


@pytest.mark.parametrize("method", ["DL", "REML", "PM"])
def test_low_heterogeneity_truncates_tau2(method):
    effects = pd.DataFrame({"yi": ref.YI_LOWQ, "vi": ref.VI_LOWQ})
    res = meta_analysis(effects, method=method)
    assert res.tau2 == 0.0
    assert (res.i2, res.h2) == (0.0, 1.0)
    assert res.estimate == pytest.approx(ref.LOWQ["estimate"], rel=1e-10)
    assert res.se == pytest.approx(ref.LOWQ["se"], rel=1e-10)
    assert res.q_pvalue == pytest.approx(ref.LOWQ["q_pvalue"], rel=1e-9)
    assert res.se_tau2 == pytest.approx(ref.LOWQ[f"se_tau2_{method.lower()}"], rel=1e-8)


def test_ranger_mode_does_not_truncate():
    effects = pd.DataFrame({"yi": ref.YI_NEG, "vi": ref.VI_LOWQ})
    res = meta_analysis(effects, ranger_compatible=True)
    exp = ref.DL_NEGATIVE
    assert res.tau2 == pytest.approx(exp["tau2"], rel=1e-9)
    assert res.tau2 < 0 and np.isnan(res.tau)
    for key in ("estimate", "se", "ci_lower", "ci_upper"):
        got = (
            res.estimate
            if key == "estimate"
            else res.se
            if key == "se"
            else getattr(res.conf_int(), key)
        )
        assert got == pytest.approx(exp[key], rel=1e-9), key
    assert meta_analysis(effects, method="DL").tau2 == 0.0


def test_against_statsmodels_combine_effects():
    from statsmodels.stats.meta_analysis import combine_effects

    y, v = np.asarray(ref.YI), np.asarray(ref.VI)
    for sm_method, ours in (("dl", "DL"), ("pm", "PM")):
        # statsmodels' PM resets tau2 to 0 when the estimating equation dips below 0 by
        # rounding, which happens with atol=1e-12: 1e-8 is tight enough
        sm = combine_effects(y, v, method_re=sm_method, atol=1e-8, maxiter=200)
        res = meta_analysis(EFFECTS, method=ours)
        assert res.tau2 == pytest.approx(sm.tau2, rel=1e-8)
        assert res.estimate == pytest.approx(sm.mean_effect_re, rel=1e-10)
        assert res.se == pytest.approx(sm.sd_eff_w_re, rel=1e-10)
        assert res.estimate_fixed == pytest.approx(sm.mean_effect_fe, rel=1e-12)
        hk = meta_analysis(EFFECTS, method=ours, hk=True)
        assert hk.se == pytest.approx(np.sqrt(sm.var_hksj_re), rel=1e-8)


def test_summary_blocks_in_metafor_order():
    text = meta_analysis(EFFECTS, method="REML", hk=True).summary()
    blocks = [
        "Random-Effects Model (k = 5 collections; tau^2 estimator: REML)",
        "tau^2 (estimated amount of total heterogeneity): 0.0001079 (SE = 0.0001897)",
        "tau (square root of estimated tau^2 value):      0.0104",
        "I^2 (total heterogeneity / total variability):   40.71%",
        "H^2 (total variability / sampling variability):  1.69",
        "Test for Heterogeneity:",
        "Q(df = 4) = 7.2108, p-val = 0.1252",
        "Model Results:",
    ]
    pos = [text.index(b) for b in blocks]
    assert pos == sorted(pos)
    header, values = text.split("Model Results:\n\n")[1].splitlines()[:2]
    assert header.split() == ["estimate", "se", "tval", "df", "pval", "ci.lb", "ci.ub"]
    # metafor prints: 0.0187  0.0081  2.2994   4  0.0830  -0.0039  0.0412
    assert values.split() == ["0.0187", "0.0081", "2.2994", "4", "0.0830", "-0.0039", "0.0412"]
    assert "zval" in meta_analysis(EFFECTS, method="DL").summary()
    fe = meta_analysis(EFFECTS, method="FE").summary()
    assert fe.startswith("Fixed-Effects Model (k = 5 collections)") and "tau^2" not in fe
    assert str(meta_analysis(EFFECTS)) == meta_analysis(EFFECTS).summary()


def test_to_frame_columns_and_rows():
    res = meta_analysis(EFFECTS, method="DL")
    frame = res.to_frame()
    assert list(frame.columns[:13]) == [
        "label", "kind", "estimate", "se", "ci_lower", "ci_upper", "p_value", "weight",
        "pi_lower", "pi_upper", "n", "mean_control", "mean_treatment",
    ]  # fmt: skip
    assert list(frame["kind"]) == ["study"] * 5 + ["fixed", "random"]
    study = frame[frame.kind == "study"]
    assert study["weight"].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(
        study["ci_lower"], np.array(ref.YI) - 1.959963984540054 * np.sqrt(ref.VI)
    )
    random = frame.iloc[-1]
    assert random["estimate"] == pytest.approx(ref.DL["estimate"])
    assert random["pi_upper"] == pytest.approx(ref.DL["pi_upper"])
    fixed = frame.iloc[-2]
    assert fixed["estimate"] == pytest.approx(ref.FE["estimate"])
    assert fixed["ci_upper"] == pytest.approx(ref.FE["ci_upper"])


def test_corr_pooled_on_z_and_back_transformed():
    ri, ni = np.asarray(ref.CORR_RI), np.asarray(ref.CORR_NI)
    effects = pd.DataFrame({"yi": np.arctanh(ri), "vi": 1 / (ni - 3)})
    from bayes_ir.frequentist.meta_analysis import EffectSizes

    res = meta_analysis(EffectSizes.from_frame(effects, measure="CORR"), method="REML")
    exp = ref.CORR_REML
    assert res.estimate == pytest.approx(exp["estimate"], rel=1e-8)
    assert res.se == pytest.approx(exp["se"], rel=1e-8)
    assert res.tau2 == pytest.approx(exp["tau2"], rel=1e-7)
    row = res.to_frame().iloc[-1]
    assert row["estimate"] == pytest.approx(exp["r"], rel=1e-8)
    assert row["ci_lower"] == pytest.approx(exp["r_lower"], rel=1e-8)
    assert row["ci_upper"] == pytest.approx(exp["r_upper"], rel=1e-8)
    assert row["pi_lower"] == pytest.approx(exp["r_pi_lower"], rel=1e-7)
    assert row["pi_upper"] == pytest.approx(exp["r_pi_upper"], rel=1e-7)
    assert "Back-transformed to r: 0.5350 [0.4310, 0.6249]" in res.summary()


def test_bad_input():
    with pytest.raises(InsufficientDataError, match="at least 2 collections"):
        meta_analysis(EFFECTS.iloc[:1])
    with pytest.raises(InsufficientDataError, match="variance positive"):
        meta_analysis(pd.DataFrame({"yi": [0.1, 0.2], "vi": [0.01, 0.0]}))
    with pytest.raises(OptionError, match="^method must be one of 'FE', 'DL', 'REML', 'PM'"):
        meta_analysis(EFFECTS, method="HS")
    with pytest.raises(ValueError, match="ranger_compatible"):
        meta_analysis(EFFECTS, method="REML", ranger_compatible=True)
    with pytest.raises(InsufficientDataError, match="leave-one-out"):
        meta_analysis(EFFECTS.iloc[:2]).leave_one_out()


@pytest.mark.parametrize(
    ("option", "value"),
    [("hk", "false"), ("hk", 1), ("ranger_compatible", "yes"), ("ci_prob", float("nan")),
     ("ci_prob", 95), ("method", 3), ("method", "REM")],
)  # fmt: skip
def test_bad_options_name_the_argument(option, value):
    # hk='false' (a string) turned Knapp-Hartung on
    with pytest.raises(OptionError, match=f"^{option} must"):
        meta_analysis(EFFECTS, **{option: value})


def test_small_p_printed_like_metafor():
    effects = pd.DataFrame({"yi": [0.0, 0.3, -0.2, 0.5], "vi": [1e-3] * 4})
    text = meta_analysis(effects, method="DL").summary()
    assert "Q(df = 3) = " in text and "p-val < .0001" in text


def test_ranger_mode_warns_about_ddof1_effects():
    from bayes_ir.errors import DataWarning
    from bayes_ir.frequentist.meta_analysis import EffectSizes

    frame = EFFECTS.assign(n=10)
    eff = EffectSizes(measure="MD", frame=EffectSizes.from_frame(frame).frame, control="a",
                      treatment="b")  # fmt: skip
    with pytest.warns(DataWarning, match="ddof=1"):
        meta_analysis(eff, ranger_compatible=True)
    with pytest.raises(OptionError, match="EffectSizes or a DataFrame"):
        meta_analysis([0.1, 0.2])
    from bayes_ir.errors import ScoreTableError

    with pytest.raises(ScoreTableError, match="needs columns"):
        meta_analysis(pd.DataFrame({"effect": [0.1, 0.2], "vi": [0.1, 0.1]}))
