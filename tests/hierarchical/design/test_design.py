"""Designs of crossed terms built from score tables, and their autoscaled priors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import BayesIRError, InsufficientDataError, OptionError, ScoreTableError
from bayes_ir.hierarchical import Priors
from bayes_ir.hierarchical.design import (
    DesignPriors,
    collections_design,
    design_priors,
    random_term,
    segments_design,
    two_way_design,
)
from bayes_ir.table import ScoreTable


def _frame(n_coll=3, n_top=(5, 7, 4), n_sys=3, measures=None, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_coll):
        for t in range(n_top[c]):
            for s in range(n_sys):
                m = measures[c] if measures else "AP"
                rows.append((f"c{c}", m, f"s{s}", f"t{t}", rng.uniform(0.1, 0.9)))
    return pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])


def _table(frame):
    table = ScoreTable.from_frame(frame, missing="keep")
    return table.with_roles(champion="s0", challengers=["s1"])


def test_two_way_design_is_the_fit_model():
    table = _table(_frame(n_coll=1, n_top=(6,)))
    d = two_way_design(table)
    assert [t.name for t in d.terms] == ["b0", "topic", "system"]
    assert d.terms[1].n_levels == 6 and d.terms[2].levels == table.systems
    mat = table.matrix().values
    topics = list(table.matrix()["topic"].values)
    for i in range(d.n_cells):
        t = topics.index(d.cells["topic"][i])
        s = table.systems.index(d.cells["system"][i])
        assert d.y[i] == mat[t, s]
    assert (d.terms[1].zero_sum == 0).all() and (d.terms[2].zero_sum == 0).all()
    assert d.terms[1].free_dims().tolist() == [5]
    assert d.residual.n_levels == 1 and d.by is None


def test_collections_design_terms_and_groups():
    d = collections_design(_table(_frame()))
    names = [t.name for t in d.terms]
    assert names == ["b0", "topic", "system", "system:collection"]
    assert d.groups == ("c0", "c1", "c2") and d.scale == "measure"
    topic = d.term("topic")
    assert topic.n_levels == 16 and topic.n_scales == 3 and topic.scale_dim == "collection"
    # topics of a collection sum to zero among themselves, one SD per collection
    np.testing.assert_array_equal(topic.free_dims(), [4, 6, 3])
    sxc = d.term("system:collection")
    assert sxc.n_levels == 9 and sxc.n_scales == 1
    assert set(sxc.components) == {"system", "collection"}
    np.testing.assert_array_equal(sxc.free_dims(), [6])  # 3 collections x (3 systems - 1)
    # every cell's level of every term names the cell's own labels
    for i in (0, 17, d.n_cells - 1):
        lev = sxc.index[i]
        assert sxc.components["system"][lev] == d.cells["system"][i]
        assert sxc.components["collection"][lev] == d.cells["collection"][i]
        assert topic.levels[topic.index[i]] == f"{d.cells['collection'][i]}|{d.cells['topic'][i]}"
    assert d.residual.levels == d.groups
    assert "residual-SD units" not in d.describe()


def test_the_common_scale_follows_the_measures():
    frame = _frame(measures=["AP", "nDCG@10", "AP"])
    d = collections_design(_table(frame))
    assert d.scale == "sd" and d.term("system").standardized
    assert d.term("system:collection").standardized and not d.term("topic").standardized
    assert d.measures == {"c0": "AP", "c1": "nDCG@10", "c2": "AP"}
    with pytest.raises(ScoreTableError, match="scale='measure' needs one measure.*scale='sd'"):
        collections_design(_table(frame), scale="measure")
    assert collections_design(_table(_frame()), scale="sd").scale == "sd"
    with pytest.raises(OptionError, match="scale"):
        collections_design(_table(_frame()), scale="smd")


def test_several_measures_per_collection_need_a_choice():
    frame = pd.concat([_frame(), _frame().assign(measure="P@10")], ignore_index=True)
    with pytest.raises(ScoreTableError, match="collection 'c0' holds several measures"):
        collections_design(_table(frame))
    d = collections_design(_table(frame), measure="P@10")
    assert set(d.cells["measure"]) == {"P@10"}
    d = collections_design(_table(frame), measure={"c0": "AP", "c1": "P@10", "c2": "AP"})
    assert d.measures == {"c0": "AP", "c1": "P@10", "c2": "AP"} and d.scale == "sd"
    with pytest.raises(ScoreTableError, match="no measure for collection 'c2'"):
        collections_design(_table(frame), measure={"c0": "AP", "c1": "AP"})


def test_bad_tables_say_what_is_wrong():
    with pytest.raises(InsufficientDataError, match="at least 2 collections"):
        collections_design(_table(_frame(n_coll=1, n_top=(5,))))
    bare = ScoreTable.from_frame(_frame())
    with pytest.raises(ScoreTableError, match="needs roles"):
        collections_design(bare)
    with pytest.raises(ScoreTableError, match="fits one collection"):
        two_way_design(_table(_frame()))


def test_a_system_missing_from_a_collection_has_no_interaction_level():
    frame = _frame()
    frame = frame[~((frame["collection"] == "c1") & (frame["system"] == "s2"))]
    d = collections_design(_table(frame))
    assert d.term("system:collection").n_levels == 8
    np.testing.assert_array_equal(d.term("system:collection").free_dims(), [5])


def test_segments_design():
    table = _table(_frame(n_coll=1, n_top=(8,)))
    segments = {f"t{i}": ("short" if i < 3 else "long") for i in range(8)}
    d = segments_design(table, segments)
    assert [t.name for t in d.terms] == ["b0", "topic", "system", "system:segment"]
    assert d.groups == ("long", "short") and d.by == "segment"
    assert (d.cells["segment"] == d.cells["topic"].map(segments)).all()
    # an intercept per segment, topics summing to zero within each, one residual SD
    b0, topic = d.terms[0], d.term("topic")
    assert b0.levels == ("long", "short") and d.residual.n_levels == 1
    assert (np.asarray(b0.levels)[b0.index] == d.cells["segment"].to_numpy()).all()
    sets = topic.zero_sum[topic.index]
    assert all(len(set(d.cells["segment"][sets == k])) == 1 for k in np.unique(sets))
    with pytest.raises(ScoreTableError, match=r"2 topic\(s\) have no segment: 't6', 't7'"):
        segments_design(table, {f"t{i}": "a" for i in range(6)})
    with pytest.raises(InsufficientDataError, match="at least 2 segments"):
        segments_design(table, {f"t{i}": "a" for i in range(8)})


def test_random_term_checks_its_levels():
    cells = {"system": ["a", "b", "a", "c"], "collection": ["x", "x", "y", "y"]}
    t = random_term(
        "system:collection", cells, zero_sum_by="collection", order={"system": ["c", "b", "a"]}
    )
    assert t.levels == ("c|y", "b|x", "a|x", "a|y")
    np.testing.assert_array_equal(t.index, [2, 1, 3, 0])
    with pytest.raises(BayesIRError, match="needs the labels of 'topic'"):
        random_term("topic", cells)
    with pytest.raises(BayesIRError, match="zero-sum set spans several scales"):
        random_term("system", cells, scale_by="collection", zero_sum_by=True)


def test_priors_of_one_collection_are_the_fit_model_priors():
    d = two_way_design(_table(_frame(n_coll=1, n_top=(9,))))
    auto = design_priors(d)
    ref = DesignPriors.from_priors(d, Priors())
    for a, b in (
        (auto.intercept_mu, ref.intercept_mu),
        (auto.intercept_sd, ref.intercept_sd),
        (auto.residual_rate, ref.residual_rate),
        (auto.rates["topic"], ref.rates["topic"]),
        (auto.rates["system"], ref.rates["system"]),
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_priors_across_collections_are_per_collection_and_overridable():
    frame = _frame(measures=["AP", "nDCG@10", "AP"])
    d = collections_design(_table(frame))
    p = design_priors(d)
    for k, c in enumerate(d.groups):
        y = frame.loc[frame["collection"] == c, "score"]
        assert p.intercept_mu[k] == pytest.approx(y.mean())
        assert p.residual_rate[k] == pytest.approx(1 / y.std(ddof=1))
    np.testing.assert_array_equal(p.rates["system"], [1.0])  # residual-SD units
    q = design_priors(d, rates={"sigma_system": 5.0, "sigma": 2.0})
    assert q.rates["system"][0] == 5.0 and (q.residual_rate == 2.0).all()
    with pytest.raises(OptionError, match="unknown prior scale 'sigma_sys'"):
        design_priors(d, rates={"sigma_sys": 1.0})
    assert "sigma_system ~ Exponential(rate=1)  [residual-SD units]" in p.describe(d)
