"""save() / load() / load_fit(path, table): compressed netCDF, provenance, identical round trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bayes_ir.errors import BayesIRError
from bayes_ir.hierarchical import HierarchicalFit, fit, load_fit
from bayes_ir.table import ScoreTable


@pytest.fixture(scope="module")
def small_fit() -> HierarchicalFit:
    rng = np.random.default_rng(3)
    y = np.clip(0.4 + rng.normal(0, 0.1, (10, 1)) + rng.normal(0, 0.05, (10, 5)), 0, 1)
    table = ScoreTable.from_matrix(
        y,
        systems=["Champion", "Chal. 1", "Chal. 2", "input.a", "input.b"],
        topics=[f"t_{i}" for i in range(10)],
        measure="AP",
        collection="mini",
    ).with_roles(champion="Champion", challengers="Chal.*")
    return fit(table, chains=2, draws=1000, seed=9)


def test_round_trip_is_identical(small_fit, tmp_path):
    path = small_fit.save(tmp_path / "fit.nc")
    back = HierarchicalFit.load(path)
    assert back.posterior.identical(small_fit.posterior)
    assert back.table.data.equals(small_fit.table.data)
    assert back.table.roles == small_fit.table.roles
    assert back.provenance == small_fit.provenance
    assert back.priors == small_fit.priors
    assert (back.likelihood, back.method) == (small_fit.likelihood, small_fit.method)
    assert back.diagnostics.table.equals(small_fit.diagnostics.table)
    assert back.summary() == small_fit.summary()
    assert back.to_frame().equals(small_fit.to_frame())


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_skew_normal_round_trip(small_fit, tmp_path):
    """A skew-normal fit (nutpie on the kernel) keeps its shape draws and provenance."""
    import xarray as xr

    skew = fit(
        small_fit.table,
        likelihood="skew_normal",
        chains=2,
        draws=300,
        tune=300,
        seed=2,
        log_likelihood=True,
    )
    # NUTS draws are kept at float32 precision by fit, so float32 storage loses nothing;
    # b0 (which carries the scores' offset) stays at full precision
    for name, x in skew.posterior["posterior"].data_vars.items():
        exact32 = np.array_equal(x.values.astype(np.float32), x.values)
        assert x.dtype == np.float64 and exact32 == (name != "b0"), name
    path = skew.save(tmp_path / "skew.nc")
    with xr.open_datatree(path, engine="h5netcdf", decode_cf=False) as raw:
        assert raw["posterior"]["topic_effect"].dtype == np.float32
        assert "log_likelihood" not in raw.children  # recomputed on load
    back = HierarchicalFit.load(path)
    assert back.posterior.identical(skew.posterior)
    assert back.diagnostics.table.equals(skew.diagnostics.table)
    assert back.likelihood == "skew_normal"
    assert back.provenance["sampler"] == "nutpie+skewnormal_kernel"
    assert back.summary() == skew.summary() and "skew-normal shape" in back.summary()


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")  # pooled: sigma_system
@pytest.mark.parametrize("pooling", ["all", "none"])
def test_family_fit_without_artifacts_round_trip(tmp_path, pooling):
    """A Bernoulli fit of two systems (no artifact run; unpooled or pooled) loads back whole.

    The next steps ``fit --save`` prints (``decide --fit PATH``) read it.
    """
    rng = np.random.default_rng(4)
    y = (rng.random((30, 2)) < [0.6, 0.75]).astype(float)
    table = ScoreTable.from_matrix(y, systems=["base", "new"], measure="accuracy")
    table = table.with_roles(champion="base", challengers=["new"])
    ours = fit(table, likelihood="bernoulli", chains=2, draws=1000, seed=5,
               pooling=pooling)  # fmt: skip
    back = HierarchicalFit.load(ours.save(tmp_path / "bernoulli.nc"))
    assert back.posterior.identical(ours.posterior)
    assert back.table.roles == ours.table.roles and back.pooling == pooling
    assert back.summary() == ours.summary()
    assert ("sigma_system" in back.draws) == (pooling == "all")


def test_default_path_under_models(small_fit, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = small_fit.save()
    assert path.parent.name == "models" and path.suffix == ".nc"
    assert path.name.startswith("mini_AP_gaussian_exact_")
    import xarray as xr

    with xr.open_datatree(tmp_path / path, engine="h5netcdf") as tree:
        assert "data_hash" in tree.attrs["provenance"]


def test_load_rejects_other_files(tmp_path):
    with pytest.raises(BayesIRError, match=r"missing\.nc: saved fit not found"):
        HierarchicalFit.load(tmp_path / "missing.nc")
    import xarray as xr

    xr.DataTree.from_dict({"/a": xr.Dataset({"x": ("i", [1.0])})}).to_netcdf(
        tmp_path / "other.nc", engine="h5netcdf"
    )
    with pytest.raises(BayesIRError, match="not a saved"):
        HierarchicalFit.load(tmp_path / "other.nc")


def _damaged(good: bytes, kind: str) -> bytes:
    return {
        "garbage": b"this is not netCDF\n" * 50,
        "empty": b"",
        "truncated": good[: len(good) // 2],
        "hdf5_header_only": good[:512],
    }[kind]


@pytest.mark.parametrize("kind", ["garbage", "empty", "truncated", "hdf5_header_only"])
def test_load_damaged_file_is_one_clear_error(small_fit, tmp_path, kind):
    good = small_fit.save(tmp_path / "good.nc").read_bytes()
    bad = tmp_path / f"{kind}.nc"
    bad.write_bytes(_damaged(good, kind))
    with pytest.raises(BayesIRError, match=str(bad).replace(".", r"\.")) as info:
        HierarchicalFit.load(bad)
    assert "\n" not in str(info.value)


def test_load_folder_and_tampered_fit(small_fit, tmp_path):
    folder = tmp_path / "fit.nc"
    folder.mkdir()
    with pytest.raises(BayesIRError, match="is a folder"):
        HierarchicalFit.load(folder)

    tree = small_fit.posterior.copy()
    tree.attrs = {"bayes_ir_format": "bayes_ir.HierarchicalFit/1"}  # the tag, nothing else
    tree.to_netcdf(tmp_path / "tampered.nc", engine="h5netcdf")
    with pytest.raises(BayesIRError, match=r"tampered\.nc is a damaged saved fit \(KeyError"):
        HierarchicalFit.load(tmp_path / "tampered.nc")


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")
def test_save_refuses_the_input_file(tmp_path):
    """A fit of a file saved over that same file (or a link to it) is refused, file intact."""
    from bayes_ir.errors import OptionError
    from bayes_ir.readers import read_scores

    data = tmp_path / "scores.csv"
    rng = np.random.default_rng(0)
    rows = [f"{s},t{t},{rng.uniform():.4f}" for s in ("a", "b") for t in range(6)]
    data.write_text("system,topic,score\n" + "\n".join(rows) + "\n")
    before = data.read_bytes()
    result = fit(read_scores(data, measure="AP").with_roles(champion="a"), draws=200, seed=1)
    link = tmp_path / "link.nc"
    link.symlink_to(data)
    for target in (data, link):
        with pytest.raises(OptionError, match="is the input file"):
            result.save(target)
    assert data.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.nc", "scores.csv"]


def test_interrupted_save_leaves_the_old_file_and_no_temp(small_fit, tmp_path, monkeypatch):
    """Ctrl-C in the middle of writing the netCDF: the previous fit stays, whole."""
    import xarray as xr

    path = small_fit.save(tmp_path / "fit.nc")
    before = path.read_bytes()

    def write_half_then_interrupt(self, target, **kwargs):
        Path(target).write_bytes(before[: len(before) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(xr.DataTree, "to_netcdf", write_half_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        small_fit.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["fit.nc"]


def test_concurrent_saves_in_threads_leave_one_whole_fit(small_fit, tmp_path):
    """Two fits saved to one path from two threads, repeatedly: the file is one of them."""
    import threading

    other = fit(small_fit.table, chains=2, draws=1000, seed=10)
    path = tmp_path / "fit.nc"
    barrier = threading.Barrier(2)

    def work(result):
        barrier.wait()
        for _ in range(4):
            result.save(path)

    threads = [threading.Thread(target=work, args=(r,)) for r in (small_fit, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    back = HierarchicalFit.load(path)
    assert any(back.posterior.identical(r.posterior) for r in (small_fit, other))
    assert [p.name for p in tmp_path.iterdir()] == ["fit.nc"]


# ---------------------------------------------------------------------- format 2: compact
def test_saved_example_fit_is_small_and_identical(example_table, tmp_path):
    """A 50 x 45 exact fit (4 x 10,000 draws, 32 MB before) under 5 MB, read back bit for bit.

    Only the scales are stored; b0 and the effects are regenerated from them and the seed.
    """
    import xarray as xr

    full = fit(example_table, seed=4, model_check=False)
    path = full.save(tmp_path / "example.nc")
    assert path.stat().st_size < 5_000_000
    with xr.open_datatree(path, engine="h5netcdf") as raw:
        assert sorted(raw["posterior"].data_vars) == ["sigma", "sigma_system", "sigma_topic"]
        assert set(raw.children) == {"posterior", "observed_data"}
        assert "role" not in raw["posterior"].coords
    back = load_fit(path)
    assert back.posterior.identical(full.posterior)
    assert back.summary() == full.summary()


def test_format_1_files_still_load(small_fit, tmp_path):
    """A fit saved by the previous version (uncompressed, roles on the posterior) loads."""
    import json

    tree = small_fit.posterior.copy()
    roles = ("system", list(small_fit.table.matrix()["role"].values))
    tree["posterior"] = tree["posterior"].to_dataset().assign_coords(role=roles)
    tree.attrs = {
        "bayes_ir_format": "bayes_ir.HierarchicalFit/1",
        "likelihood": small_fit.likelihood,
        "method": small_fit.method,
        "provenance": json.dumps(small_fit.provenance),
        "priors": json.dumps(small_fit.priors.to_dict()),
        "thresholds": json.dumps(small_fit.diagnostics.thresholds.__dict__),
        "source": small_fit.table.source,
    }
    tree.to_netcdf(tmp_path / "old.nc", engine="h5netcdf")
    back = HierarchicalFit.load(tmp_path / "old.nc")
    assert back.posterior.identical(small_fit.posterior)


def test_regenerated_draws_are_checked(small_fit, tmp_path):
    import json

    import xarray as xr

    path = small_fit.save(tmp_path / "fit.nc")
    with xr.open_datatree(path, engine="h5netcdf") as raw:
        tree = raw.load()
    check = json.loads(tree.attrs["regenerated"])
    check["system_effect"][0] *= 1.001
    tree.attrs["regenerated"] = json.dumps(check)
    tree.to_netcdf(tmp_path / "other_stream.nc", engine="h5netcdf")
    with pytest.raises(BayesIRError, match=r"other_stream\.nc: the draws of system_effect") as e:
        HierarchicalFit.load(tmp_path / "other_stream.nc")
    assert "\n" not in str(e.value)


# ---------------------------------------------------------------------- load_fit(path, table)
def test_load_fit_with_its_table_gives_the_fresh_results(small_fit, tmp_path):
    from bayes_ir.decision import decide
    from bayes_ir.hierarchical import compare

    path = small_fit.save(tmp_path / "fit.nc")
    back = load_fit(path, small_fit.table)
    assert back.table is small_fit.table
    assert back.posterior.identical(small_fit.posterior)
    assert compare(back).to_frame().equals(compare(small_fit).to_frame())
    assert back.to_frame().equals(small_fit.to_frame())
    assert decide(back, margin=0.01).to_frame().equals(decide(small_fit, margin=0.01).to_frame())


def _other_table(table, change: str):
    data = table.data.copy()
    roles = {"champion": "Champion", "challengers": "Chal.*"}
    if change == "score":
        data.loc[(data["system"] == "Chal. 2") & (data["topic"] == "t_3"), "score"] += 0.01
    elif change == "system":
        data = data[data["system"] != "input.b"]
    elif change == "topic":
        data = data[data["topic"] != "t_9"]
    elif change == "measure":
        data["measure"] = "nDCG@10"
    elif change == "champion":
        roles = {"champion": "Chal. 1", "challengers": ["Champion", "Chal. 2"]}
    elif change == "challengers":
        roles = {"champion": "Champion", "challengers": ["Chal. 1"]}
    other = ScoreTable.from_frame(data, source="other.csv")
    return other.with_roles(**roles)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("score", r"1 of 50 scores differ \(first: topic 't_3', system 'Chal\. 2'"),
        ("system", r"systems differ \(5 in the fit, 4 in the table; in the fit only: 'input\.b'"),
        ("topic", r"topics differ \(10 in the fit, 9 in the table; in the fit only: 't_9'"),
        ("measure", r"it was fitted on measure 'AP', the table has 'nDCG@10'"),
        ("champion", r"roles differ: champions 'Champion' in the fit, 'Chal\. 1' in the table"),
        ("challengers", r"roles differ: challengers 'Chal\. 1', 'Chal\. 2' in the fit, 'Chal\. 1'"),
    ],
)
def test_load_fit_refuses_another_table_in_one_line(small_fit, tmp_path, change, message):
    path = small_fit.save(tmp_path / "fit.nc")
    with pytest.raises(BayesIRError, match=r"fit\.nc is not a fit of other\.csv: " + message) as e:
        load_fit(path, _other_table(small_fit.table, change))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("kind", ["other_netcdf", "truncated"])
def test_load_fit_with_a_table_refuses_bad_files_in_one_line(small_fit, tmp_path, kind):
    import xarray as xr

    bad = tmp_path / f"{kind}.nc"
    if kind == "other_netcdf":
        xr.Dataset({"x": ("i", [1.0, 2.0])}).to_netcdf(bad, engine="h5netcdf")
        expected = r"other_netcdf\.nc is not a saved bayes_ir HierarchicalFit"
    else:
        good = small_fit.save(tmp_path / "good.nc").read_bytes()
        bad.write_bytes(good[: len(good) // 2])
        expected = r"truncated\.nc is not a readable netCDF file"
    with pytest.raises(BayesIRError, match=expected) as e:
        load_fit(bad, small_fit.table)
    assert "\n" not in str(e.value)


def test_fits_saved_before_float32_effects_still_load(small_fit, tmp_path):
    """Files saved when the effects were float64 have a float64 fingerprint, which differs
    from the float32 draws' by float32 rounding only: they load, with float32 effects."""
    import json

    import xarray as xr

    path = small_fit.save(tmp_path / "fit.nc")
    with xr.open_datatree(path, engine="h5netcdf") as raw:
        tree = raw.load()
    check = json.loads(tree.attrs["regenerated"])
    rounding = float(np.finfo(np.float32).eps) / 2
    tree.attrs["regenerated"] = json.dumps(
        {k: [v * (1 + rounding) for v in values] for k, values in check.items()}
    )
    tree.to_netcdf(tmp_path / "float64.nc", engine="h5netcdf")
    back = HierarchicalFit.load(tmp_path / "float64.nc")
    assert back.posterior["posterior"]["topic_effect"].dtype == np.float32
    assert back.posterior.identical(small_fit.posterior)


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (
            {"bayes_ir_format": "bayes_ir.HierarchicalFit/9"},
            r"was saved by a newer bayes_ir \(saved-fit format 9",
        ),
        ({"likelihood": "student_t"}, r"holds a fit with likelihood 'student_t'"),
        ({"method": "advi"}, r"holds a fit with method 'advi'"),
    ],
)
def test_fits_of_a_newer_version_are_refused_not_misread(small_fit, tmp_path, attrs, message):
    import h5py

    path = small_fit.save(tmp_path / "newer.nc")
    with h5py.File(path, "r+") as handle:
        for key, value in attrs.items():
            handle.attrs[key] = value
    with pytest.raises(BayesIRError, match=rf"newer\.nc {message}"):
        HierarchicalFit.load(path)


def test_a_fifo_is_not_opened_as_a_saved_fit(tmp_path):
    import os

    os.mkfifo(tmp_path / "fit.nc")
    with pytest.raises(BayesIRError, match=r"fit\.nc: is a FIFO"):
        HierarchicalFit.load(tmp_path / "fit.nc")
