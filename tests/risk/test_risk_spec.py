"""Risk specs as strings (repr parses back) and per-topic values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bayes_ir.errors import MeasureError
from bayes_ir.risk import (
    RiskSpec,
    TopicRisk,
    calc_risk,
    iter_risk,
    parse_risk,
    risk_adjusted_differences,
    trisk,
    urisk,
    zrisk,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("URisk(r=5)", RiskSpec("URisk", 5.0)),
        ("urisk(alpha=4)", RiskSpec("URisk", 5.0)),
        ("URisk", RiskSpec("URisk", 5.0)),
        ("TRisk(r=2, sd=sample)", RiskSpec("TRisk", 2.0, "sample")),
        ("TRisk(alpha=5)", RiskSpec("TRisk", 6.0, "population")),
        ("ZRisk(r=1)", RiskSpec("ZRisk", 1.0)),
        ("georisk(r=10)", RiskSpec("GeoRisk", 10.0)),
    ],
)
def test_parse(text, expected):
    spec = parse_risk(text)
    assert spec == expected
    assert parse_risk(repr(spec)) == spec


@given(
    name=st.sampled_from(["URisk", "TRisk", "ZRisk", "GeoRisk"]),
    r=st.floats(min_value=1, max_value=100, allow_nan=False),
    sd=st.sampled_from(["population", "sample"]),
)
def test_repr_parses_back(name, r, sd):
    spec = RiskSpec(name, r, sd if name == "TRisk" else None)
    again = parse_risk(repr(spec))
    assert again.name == spec.name and again.sd == spec.sd
    assert again.r == pytest.approx(spec.r, rel=1e-5)  # repr uses %g


@pytest.mark.parametrize(
    "bad",
    [
        "XRisk",
        "URisk(q=1)",
        "URisk(r=0.5)",
        "URisk(r=2,alpha=1)",
        "URisk(r=x)",
        "ZRisk(sd=sample)",
        "",
        "URisk(r=1",
    ],
)
def test_bad_specs(bad):
    with pytest.raises(MeasureError):
        parse_risk(bad)


def test_iter_risk_sums_to_the_aggregates(toy):
    rows = list(iter_risk(toy, "URisk(r=5)"))
    assert all(isinstance(r, TopicRisk) for r in rows)
    assert rows[0].risk == "URisk(r=5)"
    n = toy.wide().shape[0]
    assert len(rows) == 3 * n
    d = risk_adjusted_differences(toy, r=5)
    per = {}
    for row in rows:
        per.setdefault(row.system, []).append(row.value)
        assert row.value == pytest.approx(float(d.sel(system=row.system, topic=row.topic)))
    u = urisk(toy, r=5)
    for s, v in zip(u.systems, u.urisk, strict=True):
        assert np.mean(per[s]) == pytest.approx(v)
    # TRisk per topic: mean * sqrt(n) is TRisk (population SD)
    t = trisk(toy, r=5)
    tr = {}
    for row in iter_risk(toy, "TRisk(r=5)"):
        tr.setdefault(row.system, []).append(row.value)
    for s, v in zip(t.systems, t.trisk, strict=True):
        assert np.mean(tr[s]) * np.sqrt(n) == pytest.approx(v)
    # ZRisk per topic sums to ZRisk, champion included
    z = zrisk(toy, r=5).to_frame().set_index("system")["zrisk"]
    zr = {}
    for row in iter_risk(toy, "ZRisk(r=5)"):
        zr[row.system] = zr.get(row.system, 0.0) + row.value
    assert set(zr) == {"base", "good", "risky", "same"}
    for s, v in zr.items():
        assert v == pytest.approx(z[s])


def test_georisk_has_no_per_topic_values(toy):
    with pytest.raises(MeasureError, match="per-topic"):
        next(iter_risk(toy, "GeoRisk"))


def test_calc_risk(toy):
    frame = calc_risk(toy, ["URisk(r=2)", "TRisk(r=2,sd=sample)", "GeoRisk(r=2)"])
    assert list(frame.columns) == ["system", "risk", "value", "value_minus"]
    u = frame[frame["risk"] == "URisk(r=2)"].set_index("system")["value"]
    np.testing.assert_allclose(u.to_numpy(), urisk(toy, r=2).urisk)
    t = frame[frame["risk"] == "TRisk(r=2,sd=sample)"]["value"].to_numpy()
    np.testing.assert_allclose(t, trisk(toy, r=2, sd="sample").trisk)
    g = frame[frame["risk"] == "GeoRisk(r=2)"].set_index("system")["value"]
    ref = zrisk(toy, r=2).to_frame().set_index("system")["georisk"]
    np.testing.assert_allclose(g.to_numpy(), ref.loc[g.index].to_numpy())
    np.testing.assert_allclose(frame["value_minus"], -frame["value"])
