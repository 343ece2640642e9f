import pytest

from bayes_ir.errors import MeasureError
from bayes_ir.reliability import CORRELATIONS, ESTIMATORS, parse_reliability


@pytest.mark.parametrize("text", ["MSQD", "ML", "KD(T=500)", "RES", "SHw(points=10)", "tau_ap"])
def test_repr_parses_back(text):
    spec = parse_reliability(text)
    assert repr(spec) == text
    assert parse_reliability(repr(spec)) == spec


def test_defaults_and_aliases():
    assert parse_reliability("KD").get("T") == 1000
    assert parse_reliability("KD(T=1000)") == parse_reliability("kd")
    assert repr(parse_reliability("KD(T=1000)")) == "KD"
    assert parse_reliability("SH(w/o)").name == "SHwo"
    assert parse_reliability("SH(w)").label == "SH(w)"
    assert parse_reliability("tauAP").kind == "correlation"
    assert parse_reliability("msqd").kind == "estimator"
    assert parse_reliability("RES").stochastic and not parse_reliability("ML").stochastic
    assert set(ESTIMATORS) == {"ML", "MSQD", "RES", "KD", "SHw", "SHwo"}
    assert set(CORRELATIONS) == {"tau", "tau_ap"}
    assert "Urbano" in parse_reliability("MSQD").reference


@pytest.mark.parametrize(
    "text, match",
    [
        ("XYZ", "unknown reliability spec"),
        ("KD(h=3)", "unknown parameter"),
        ("KD(T=abc)", "integer"),
        ("RES(T=0)", "positive"),
        ("ML(T=5)", "unknown parameter"),
        ("KD(T=1", "cannot parse"),
    ],
)
def test_errors(text, match):
    with pytest.raises(MeasureError, match=match):
        parse_reliability(text)
