"""The validation layer: the checkers themselves, then every public entry point (API and CLI).

Each case asserts the exact error class and that the message names the argument and
the value; the CLI cases assert one ``error:`` line and exit status 2.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayes_ir
from bayes_ir import defaults, validate
from bayes_ir.cli import main
from bayes_ir.errors import InsufficientDataError, OptionError
from bayes_ir.hierarchical import artifact_sweep, compare, many_vs_one, posterior_predictive
from bayes_ir.risk import bca_urisk, brisk, one_to_one, risk_review, trisk, urisk, zrisk
from bayes_ir.simulate import simulate_scores
from bayes_ir.table import ScoreTable

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example_scores.csv"
NAN, INF = float("nan"), float("inf")


# ---------------------------------------------------------------------- the checkers
@pytest.mark.parametrize("value", [1, 7, np.int64(3), np.int32(64), np.uint8(2)])
def test_positive_int_accepts_python_and_numpy_integers(value):
    out = validate.positive_int("draws", value)
    assert out == int(value) and type(out) is int


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "draws must be at least 1, got 0"),
        (-5, "draws must be at least 1, got -5"),
        (1.7, "draws must be an integer, got 1.7 (float)"),
        (1e9, "draws must be an integer, got 1000000000.0 (float)"),
        (True, "draws must be an integer, got True (bool)"),
        ("100", "draws must be an integer, got '100' (str)"),
        (2j, "draws must be an integer, got 2j (complex)"),
        (None, "draws must be an integer, got None (NoneType)"),
        (np.float64(3.0), "draws must be an integer, got np.float64(3.0) (float64)"),
    ],
)
def test_positive_int_refuses(value, message):
    with pytest.raises(OptionError) as info:
        validate.positive_int("draws", value)
    assert str(info.value) == message


def test_integer_bounds():
    assert validate.integer("top_m", 0, minimum=0) == 0
    with pytest.raises(OptionError, match=r"^chains must be at most 64, got 1,000,000,000$"):
        validate.positive_int("chains", 10**9, maximum=64)


@pytest.mark.parametrize("value", [0, 5, 2**40, np.int64(9)])
def test_seed_accepts_non_negative_integers(value):
    assert validate.seed(value) == int(value)


def test_seed_none_is_the_default():
    assert validate.seed(None) == defaults.SEED


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-3, "seed must be at least 0, got -3"),
        (1.7, "seed must be an integer, got 1.7 (float)"),
        (True, "seed must be an integer, got True (bool)"),
        (1 + 2j, "seed must be an integer, got (1+2j) (complex)"),
        ("7", "seed must be an integer, got '7' (str)"),
    ],
)
def test_seed_refuses(value, message):
    with pytest.raises(OptionError) as info:
        validate.seed(value)
    assert str(info.value) == message


@pytest.mark.parametrize("value", [0.5, np.float32(0.25), 1e-9, 1 - 1e-9])
def test_probability_open(value):
    assert validate.probability("ci_prob", value) == pytest.approx(float(value))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0.0, "ci_prob must lie strictly between 0 and 1, got 0"),
        (1.0, "ci_prob must lie strictly between 0 and 1, got 1"),
        (95, "ci_prob must lie strictly between 0 and 1, got 95"),
        (NAN, "ci_prob must be a finite number, got nan"),
        (INF, "ci_prob must be a finite number, got inf"),
        (0.9 + 0j, "ci_prob must be a real number, got (0.9+0j) (complex)"),
        ("0.9", "ci_prob must be a real number, got '0.9' (str)"),
        (True, "ci_prob must be a real number, got True (bool)"),
    ],
)
def test_probability_refuses(value, message):
    with pytest.raises(OptionError) as info:
        validate.probability("ci_prob", value)
    assert str(info.value) == message


def test_probability_closed_accepts_the_ends():
    assert validate.probability("loss_prob", 0, open=False) == 0.0
    assert validate.probability("loss_prob", 1, open=False) == 1.0
    with pytest.raises(OptionError, match=r"^loss_prob must lie between 0 and 1, got 1.5$"):
        validate.probability("loss_prob", 1.5, open=False)


def test_finite_float_bounds():
    assert validate.finite_float("min_gain", -0.01) == -0.01
    assert validate.finite_float("epsilon", 0, minimum=0) == 0.0
    with pytest.raises(OptionError, match=r"^epsilon must be less than 0.5, got 0.5$"):
        validate.finite_float("epsilon", 0.5, maximum=0.5, open_maximum=True)
    with pytest.raises(OptionError, match=r"^tol must be greater than 0, got 0$"):
        validate.finite_float("tol", 0.0, minimum=0, open_minimum=True)
    with pytest.raises(OptionError, match=r"^r must be at least 1, got 0.5$"):
        validate.finite_float("r", 0.5, minimum=1)
    for bad in (NAN, -INF, 1j, "0.1", None):
        with pytest.raises(OptionError, match="^min_gain must be a"):
            validate.finite_float("min_gain", bad)


def test_choice_names_close_matches():
    assert validate.choice("method", "nuts", ("auto", "exact", "nuts")) == "nuts"
    with pytest.raises(OptionError) as info:
        validate.choice("method", "nut", ("auto", "exact", "nuts"))
    assert str(info.value) == (
        "method must be one of 'auto', 'exact', 'nuts', got 'nut' (did you mean 'nuts'?)"
    )
    with pytest.raises(OptionError, match=r"^method must be one of .*, got 3$"):
        validate.choice("method", 3, ("auto", "exact", "nuts"))


def test_flag_and_instance():
    assert validate.flag("hk", np.bool_(True)) is True
    for bad in ("false", 0, None):
        with pytest.raises(OptionError, match="^hk must be True or False"):
            validate.flag("hk", bad)
    with pytest.raises(OptionError, match="^table must be a ScoreTable, got NoneType$"):
        validate.instance("table", None, ScoreTable)


def test_memory_estimate_and_limit(monkeypatch):
    monkeypatch.setattr(defaults, "MEMORY_LIMIT", 10_000)
    shape = {"chains": 2, "draws": 100, "values per draw": 5}
    assert validate.memory("the draws", shape) == 2 * 100 * 5 * 8  # 8000 bytes
    with pytest.raises(OptionError) as info:
        validate.memory("the draws", {**shape, "values per draw": 7})  # 11,200 bytes
    assert str(info.value).startswith(
        "the draws would need about 11.2 kB (2 chains x 100 draws x 7 values per draw x "
        "8 bytes), above the limit of 10.0 kB"
    )


def test_memory_limit_default_and_overrides(monkeypatch):
    import os

    monkeypatch.delenv("BAYES_IR_MEMORY_LIMIT", raising=False)
    ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert defaults.memory_limit() == pytest.approx(defaults.MEMORY_FRACTION * ram)
    monkeypatch.setenv("BAYES_IR_MEMORY_LIMIT", "2e9")
    assert defaults.memory_limit() == 2e9
    monkeypatch.setattr(defaults, "MEMORY_LIMIT", 5e8)
    assert defaults.memory_limit() == 5e8


# ---------------------------------------------------------------------- bayes_ir.fit
@pytest.fixture(scope="module")
def small():
    return simulate_scores(n_topics=8, n_artifacts=3, seed=2).with_roles(
        champion="bm25", challengers="chal_*"
    )


@pytest.fixture(scope="module")
def small_fit(small):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bayes_ir.fit(small, chains=2, draws=300, tune=100, seed=1)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("draws", 0, "draws must be at least 1, got 0"),
        ("draws", -5, "draws must be at least 1, got -5"),
        ("draws", 1e9, "draws must be an integer, got 1000000000.0 (float)"),
        ("tune", -1, "tune must be at least 0, got -1"),
        ("chains", 0, "chains must be at least 1, got 0"),
        ("chains", 10**9, "chains must be at most 64, got 1,000,000,000"),
        ("chains", 2.0, "chains must be an integer, got 2.0 (float)"),
        ("seed", -3, "seed must be at least 0, got -3"),
        ("seed", 1.7, "seed must be an integer, got 1.7 (float)"),
        ("seed", 1 + 2j, "seed must be an integer, got (1+2j) (complex)"),
        ("target_accept", NAN, "target_accept must be a finite number, got nan"),
        ("target_accept", 1.0, "target_accept must lie strictly between 0 and 1, got 1"),
        ("likelihood", "gausian", "likelihood must be one of 'gaussian', 'skew_normal'"),
        ("method", "nut", "method must be one of 'auto', 'exact', 'gibbs', 'nuts', got 'nut'"),
        ("sampler", "stan", "sampler must be one of 'nutpie', 'pymc', got 'stan'"),
        ("strict", "false", "strict must be True or False, got 'false' (str)"),
        ("log_likelihood", 1, "log_likelihood must be True or False, got 1 (int)"),
    ],
)
def test_fit_refuses_bad_options(small, option, value, message):
    with pytest.raises(OptionError) as info:
        bayes_ir.fit(small, **{option: value})
    assert str(info.value).startswith(message)


def test_fit_refuses_draws_above_the_memory_limit(small):
    # 8 topics + 8 systems + 4 hyperparameters (Gaussian) = 20 values per draw (closed form)
    with pytest.raises(OptionError) as info:
        bayes_ir.fit(small, draws=10**9)
    need = 4 * 10**9 * 20 * 8
    assert f"about {need / 1e9:.1f} GB" in str(info.value)  # 640.0 GB
    assert "4 chains x 1,000,000,000 draws x 20 values per draw" in str(info.value)
    with pytest.raises(OptionError, match="values per draw"):  # + 8 x 8 cells with LOO
        bayes_ir.fit(small, draws=10**8, log_likelihood=True)


def test_fit_refuses_a_non_table():
    with pytest.raises(OptionError, match="^table must be a ScoreTable, got NoneType$"):
        bayes_ir.fit(None)


def test_fit_refuses_constant_scores():
    table = ScoreTable.from_matrix(np.full((6, 4), 0.25), systems=list("abcd"), measure="AP")
    with pytest.raises(InsufficientDataError, match="every score is 0.25: with no variance"):
        bayes_ir.fit(table.with_roles(champion="a", challengers="b"))


# ---------------------------------------------------------------------- summaries of a fit
@pytest.mark.parametrize(
    ("value", "message"),
    [(NAN, "min_gain must be a finite number, got nan"),
     (INF, "min_gain must be a finite number, got inf"),
     (0.01j, "min_gain must be a real number, got 0.01j (complex)"),
     ("0.01", "min_gain must be a real number, got '0.01' (str)")],
)  # fmt: skip
def test_compare_min_gain(small_fit, value, message):
    with pytest.raises(OptionError) as info:
        compare(small_fit, min_gain=value)
    assert str(info.value) == message


@pytest.mark.parametrize("value", [NAN, 0.0, 1.0, 95, 1j, "0.9"])
def test_ci_prob_everywhere(small_fit, value):
    calls = [
        lambda: compare(small_fit, ci_prob=value),
        lambda: many_vs_one(small_fit, challenger="chal_dense", champions="bm25", ci_prob=value),
        lambda: posterior_predictive(small_fit, ci_prob=value),
    ]
    for call in calls:
        with pytest.raises(OptionError, match="^ci_prob must"):
            call()


@pytest.mark.parametrize("value", [-3, 1.7, True, 2j])
def test_posterior_predictive_seed(small_fit, value):
    with pytest.raises(OptionError, match="^seed must"):
        posterior_predictive(small_fit, seed=value)


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [("seed", -3, "^seed must be at least 0"), ("m_values", [1.5], "^m_values must be an integer"),
     ("m_values", [-1], "^m_values must be at least 0"), ("ci_prob", NAN, "^ci_prob must")],
)  # fmt: skip
def test_artifact_sweep_checks_before_fitting(small, option, value, match):
    with pytest.raises(OptionError, match=match):
        artifact_sweep(small, **{"m_values": [1], option: value})


# ---------------------------------------------------------------------- risk
@pytest.mark.parametrize("func", [urisk, trisk, bca_urisk, zrisk, risk_review])
@pytest.mark.parametrize("r", [NAN, 0.5, 1j, "5"])
def test_risk_r(small, func, r):
    with pytest.raises(OptionError, match=r"^the loss weight r \(= 1 \+ alpha\) must"):
        func(small, r=r)


@pytest.mark.parametrize("func", [bca_urisk, risk_review])
@pytest.mark.parametrize("seed", [-3, 1.7, 2j])
def test_risk_seed(small, func, seed):
    with pytest.raises(OptionError, match="^seed must"):
        func(small, seed=seed)


@pytest.mark.parametrize("func", [bca_urisk, risk_review])
def test_risk_ci_prob(small, func):
    with pytest.raises(OptionError, match="^ci_prob must be a finite number, got nan"):
        func(small, ci_prob=NAN)


def test_bayesian_risk_checks_before_fitting(small):
    with pytest.raises(OptionError, match="^seed must be at least 0, got -3"):
        brisk(small, seed=-3)
    with pytest.raises(OptionError, match="^seed must be an integer"):
        one_to_one(small, challenger="chal_dense", seed=1.7)


# ---------------------------------------------------------------------- readers
_EXPECTED = (
    "expected a file, a folder, a list of files, a DataFrame or an evaluation "
    "result (see docs/inputs.md), got "
)


@pytest.mark.parametrize(
    ("paths", "message"),
    [(None, _EXPECTED + "NoneType"),
     (3, _EXPECTED + "int"),
     (b"x.csv", _EXPECTED + "bytes"),
     ([None], "expected a file name, got NoneType")],
)  # fmt: skip
def test_read_scores_wrong_types(paths, message):
    with pytest.raises(OptionError) as info:
        bayes_ir.read_scores(paths)
    assert str(info.value) == message


# ---------------------------------------------------------------------- CLI
def run(argv: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code, capsys.readouterr().err


FIT = ["fit", str(EXAMPLE), "-c", "bm25", "-C", "chal_*"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--draws", "1e9"], "Invalid value for '--draws'"),
        (["--chains", "1e9"], "Invalid value for '--chains'"),
        (["--seed", "1.7"], "Invalid value for '--seed'"),
        (["--draws", "0"], "Invalid value for '--draws'"),
        (["--draws", "-5"], "Invalid value for '--draws'"),
        (["--seed", "-3"], "Invalid value for '--seed'"),
        (["--chains", "1000000000"], "--chains must be at most 64, got 1,000,000,000"),
        (["--chains", "0"], "--chains must be at least 1, got 0"),
        (["--draws", "1000000000"], "x 1,000,000,000 draws x 99 values per draw"),
        (["--min-gain", "nan"], "--min-gain must be a finite number, got nan"),
        (["--ci-prob", "nan"], "--ci-prob must be a finite number, got nan"),
        (["--target-accept", "inf"], "--target-accept must be a finite number, got inf"),
    ],
)
def test_cli_fit_bad_numbers_one_error_line(capsys, extra, message):
    if not EXAMPLE.exists():
        pytest.skip("data/example_scores.csv not generated yet")
    code, err = run(FIT + extra, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("error: ") and message in lines[0], err


def test_cli_memory_message_in_cli_words(capsys):
    if not EXAMPLE.exists():
        pytest.skip("data/example_scores.csv not generated yet")
    _, err = run([*FIT, "--draws", "1000000000"], capsys)
    assert "lower --draws or --chains (or set BAYES_IR_MEMORY_LIMIT (bytes))" in err
    assert math.isclose(
        float(err.split("about ")[1].split(" TB")[0]), 4 * 1e9 * 101 * 8 / 1e12, rel_tol=0.05
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--r", "nan"], "--r must be a finite number, got nan"),
        (["--r", "0.5"], "--r must be at least 1, got 0.5"),
        (["--r", "1e308"], "--r must be at most 1000, got 1e+308"),
        (["--seed", "-3"], "Invalid value for '--seed'"),
        (["--ci-prob", "1"], "--ci-prob must lie strictly between 0 and 1, got 1"),
    ],
)
def test_cli_risk_bad_numbers_one_error_line(capsys, extra, message):
    if not EXAMPLE.exists():
        pytest.skip("data/example_scores.csv not generated yet")
    code, err = run(["risk", str(EXAMPLE), "-c", "bm25", "--no-bayes", *extra], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0], err


# ---------------------------------------------------------------------- predictive memory
def test_prior_predictive_checks(small):
    from bayes_ir.hierarchical import prior_predictive

    with pytest.raises(OptionError, match="^draws must be at least 1, got 0$"):
        prior_predictive(small, draws=0)
    with pytest.raises(OptionError, match="^seed must be at least 0, got -3$"):
        prior_predictive(small, seed=-3)
    with pytest.raises(OptionError) as info:  # 10**9 draws x 64 cells x 4 arrays x 8 bytes
        prior_predictive(small, draws=10**9)
    assert "about 2.0 TB (1,000,000,000 draws x 64 cells x 4 arrays at once" in str(info.value)


def test_posterior_predictive_memory(small_fit, monkeypatch):
    need = 2 * 300 * 8 * 4 * 8  # chains x draws x topics x arrays x bytes = 153,600
    monkeypatch.setattr(defaults, "MEMORY_LIMIT", need - 1)
    with pytest.raises(
        OptionError, match=r"^the posterior predictive draws would need about 153.6"
    ):
        posterior_predictive(small_fit)
    monkeypatch.setattr(defaults, "MEMORY_LIMIT", need)
    assert len(posterior_predictive(small_fit).to_frame()) == 8 * 8


def test_cli_exact_name_with_pattern_characters(tmp_path, capsys):
    rng = np.random.default_rng(4)
    rows = ["system,topic,score"]
    for system in ("base", "re:x", "x", "xx"):
        rows += [f"{system},q{t},{rng.uniform(0.1, 0.9):.4f}" for t in range(8)]
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "risk.csv"
    with pytest.raises(SystemExit) as info:
        main(["risk", str(path), "-c", "base", "-C", "re:x", "--no-bayes", "-o", str(out)])
    assert info.value.code in (0, None), capsys.readouterr().err

    frame = pd.read_csv(out)
    assert list(frame["system"]) == ["base", "re:x"]  # as a regex it picked x and xx too
    assert list(frame["role"]) == ["champion", "challenger"]


# ---------------------------------------------------------------------- any value at all
_ANYTHING = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(), st.text(max_size=5), st.binary(max_size=5),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers()),
    st.integers(-(2**63), 2**63 - 1).map(np.int64), st.floats(width=32).map(np.float32),
)  # fmt: skip


@given(value=_ANYTHING)
@settings(max_examples=200, deadline=None)
def test_checkers_return_or_raise_option_error_only(value):
    checks = [
        lambda: validate.positive_int("n", value, maximum=100),
        lambda: validate.seed(value),
        lambda: validate.probability("p", value),
        lambda: validate.probability("p", value, open=False),
        lambda: validate.finite_float("x", value, minimum=-1, maximum=1),
        lambda: validate.choice("c", value, ("a", "b")),
        lambda: validate.flag("f", value),
    ]
    for check in checks:
        try:
            out = check()
        except OptionError as exc:
            assert str(exc).split(" ")[0] in ("n", "seed", "p", "x", "c", "f")
        else:  # what passes is what the checker promises
            assert out is not None
            if isinstance(out, float):
                assert math.isfinite(out)


def test_cli_meta_config_with_a_quoted_boolean(tmp_path, capsys):
    config = tmp_path / "meta.yaml"
    config.write_text(
        f"control: bm25\ntreatment: dense\nscores: {EXAMPLE.parent / 'example_collections.csv'}\n"
        "hk: 'false'\n",
        encoding="utf-8",
    )
    code, err = run(["meta", str(config)], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: {config}:4: hk must be true or false, got 'false' (a string); "
        "write hk: true or hk: false, without quotes"
    ]


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [("draws", 0, "^draws must be at least 1"), ("chains", 65, "^chains must be at most 64"),
     ("tune", -1, "^tune must be at least 0"), ("target_accept", NAN, "^target_accept must"),
     ("strict", "no", "^strict must be True or False"),
     ("draws", 10**10, "^the one-to-one posterior draws would need about")],
)  # fmt: skip
def test_one_to_one_checks_before_fitting(small, option, value, match):
    with pytest.raises(OptionError, match=match):
        one_to_one(small, challenger="chal_dense", **{option: value})


# ---------------------------------------------------------------------- one topic
ONE_TOPIC = {
    "fit": (lambda t: bayes_ir.fit(t), "needs at least 2 topics"),
    "urisk": (lambda t: urisk(t), "URisk needs at least 3 topics"),
    "trisk": (lambda t: trisk(t), "TRisk needs at least 3 topics"),
    "bca": (lambda t: bca_urisk(t), "needs at least 3 topics"),
    "zrisk": (lambda t: zrisk(t), "ZRisk needs at least 3 topics"),
    "glm": (lambda t: bayes_ir.fit_glm(t), "needs at least 3 topics"),
    "expected": (lambda t: bayes_ir.expected_correlation(t), "at least 2 topics"),
}


@pytest.mark.parametrize("name", list(ONE_TOPIC))
def test_a_single_topic_is_insufficient(name):
    table = ScoreTable.from_matrix(
        np.array([[0.2, 0.5, 0.4, 0.3]]), systems=list("abcd"), measure="AP"
    ).with_roles(champion="a", challengers="b")
    call, message = ONE_TOPIC[name]
    with pytest.raises(InsufficientDataError, match=message):
        call(table)


# ---------------------------------------------------------------------- topic minimums
def test_require_topics_boundary_and_message():
    validate.require_topics(3, 3, method="URisk", where="s.csv")  # exactly the minimum
    with pytest.raises(InsufficientDataError) as info:
        validate.require_topics(2, 3, method="URisk", where="s.csv")
    assert str(info.value) == "URisk needs at least 3 topics; s.csv has 2"
    with pytest.raises(InsufficientDataError) as info:
        validate.require_topics(1, 2, method="MD", where="'c1'", paired=True)
    assert str(info.value) == "MD needs at least 2 paired topics; 'c1' has 1"


def _effect(measure):
    from bayes_ir.frequentist.meta_analysis import effect_size

    return lambda t: effect_size(t, measure=measure)


# method -> (call on a table, the minimum from defaults, the method's name in the message)
MINIMUM = {
    "model": (
        lambda t: bayes_ir.hierarchical.build_model(t),
        defaults.MIN_TOPICS_HIERARCHICAL,
        "the hierarchical model",
    ),
    "urisk": (urisk, defaults.MIN_TOPICS_RISK, "URisk"),
    "trisk": (trisk, defaults.MIN_TOPICS_RISK, "TRisk"),
    "zrisk": (zrisk, defaults.MIN_TOPICS_RISK, "ZRisk"),
    "bca": (
        lambda t: bca_urisk(t, n_resamples=100),
        defaults.MIN_TOPICS_RISK,
        "BCa bootstrap of URisk",
    ),
    "glm": (bayes_ir.fit_glm, defaults.MIN_TOPICS_GLM, "the GLM comparison"),
    "paired": (bayes_ir.paired_tests, defaults.MIN_TOPICS_PAIRED, "a paired test"),
    "MD": (_effect("MD"), defaults.MIN_TOPICS_EFFECT_SIZE["MD"], "MD"),
    "SMD": (_effect("SMD"), defaults.MIN_TOPICS_EFFECT_SIZE["SMD"], "SMD"),
    "CORR": (_effect("CORR"), defaults.MIN_TOPICS_EFFECT_SIZE["CORR"], "CORR"),
    "expected": (
        bayes_ir.expected_correlation,
        defaults.MIN_TOPICS_RELIABILITY,
        "ranking reliability",
    ),
    "split-half": (
        lambda t: bayes_ir.expected_correlation(t, estimator="SHw", seed=1),
        defaults.MIN_TOPICS_SPLIT_HALF,
        "SHw",
    ),
    "simulator": (
        lambda t: bayes_ir.reliability.fit_simulator(t),
        defaults.MIN_TOPICS_SIMULATOR,
        "the simulator",
    ),
}


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.DataWarning")  # few topics, on purpose
@pytest.mark.parametrize("name", list(MINIMUM))
def test_each_method_accepts_its_minimum_and_names_itself_below(name):
    call, minimum, method = MINIMUM[name]
    rng = np.random.default_rng(7)

    def table(n):
        return ScoreTable.from_matrix(
            rng.uniform(0.1, 0.9, size=(n, 4)), systems=list("abcd"), measure="AP"
        ).with_roles(champion="a", challengers="b")

    call(table(minimum))  # no InsufficientDataError at the minimum
    with pytest.raises(InsufficientDataError) as info:
        call(table(minimum - 1))
    message = str(info.value)
    assert message.startswith(f"{method} needs at least {minimum} ")
    assert message.endswith(f" has {minimum - 1}")


def test_split_half_minimum_on_arrays_and_topic_set_sizes():
    from bayes_ir.reliability.split_half import split_half_fit

    x = np.random.default_rng(3).uniform(size=(defaults.MIN_TOPICS_SPLIT_HALF - 1, 4))
    with pytest.raises(InsufficientDataError, match="needs at least 4 topics; the score matrix"):
        split_half_fit(x, replacement=False, seed=1)
    small = ScoreTable.from_matrix(np.random.default_rng(4).uniform(size=(8, 4)), measure="AP")
    with pytest.raises(InsufficientDataError, match="SHw needs at least 4 topics; the smallest"):
        bayes_ir.reliability.simulation_study(small, estimators=("SHw",), sizes=(3,), trials=1)
