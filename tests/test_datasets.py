"""Public dataset loader: local copy, cache, download from a local HTTP server, checksums."""

from __future__ import annotations

import hashlib
import shutil
import socket
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bayes_ir import datasets
from bayes_ir.datasets import DATASETS, Dataset, RemoteFile, fetch, list_datasets, load_dataset
from bayes_ir.errors import DatasetError


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture
def server(tmp_path) -> Iterator[tuple[str, Path, list[str]]]:
    """An HTTP server on 127.0.0.1 serving a temporary folder; yields (url, folder, requests)."""
    root = tmp_path / "served"
    root.mkdir()
    requests: list[str] = []

    class Handler(_Quiet):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root, requests
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def toy_dataset(monkeypatch) -> tuple[Dataset, bytes]:
    content = b"system,topic,score\na,1,0.25\na,2,0.5\nb,1,0.75\nb,2,1.0\n"
    remote = RemoteFile(
        "toy/toy_scores.csv",
        "https://example.invalid/toy_scores.csv",
        hashlib.sha256(content).hexdigest(),
    )
    toy = Dataset(
        "toy",
        "a toy",
        "nowhere",
        "CC0",
        "none",
        (remote,),
        "tidy",
        {"toy_scores": {"measure": "AP", "collection": "toy"}},
    )
    monkeypatch.setitem(DATASETS, "toy", toy)
    monkeypatch.delenv("BAYES_IR_DATA", raising=False)
    return toy, content


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_download_verify_and_reuse_cache(server, toy_dataset, tmp_path):
    url, root, requests = server
    toy, content = toy_dataset
    (root / "toy").mkdir()
    (root / "toy" / "toy_scores.csv").write_bytes(content)
    cache = tmp_path / "cache"
    table = load_dataset("toy", cache=cache, mirror=url)
    assert table.collections == ("toy",) and table.measures == ("AP",)
    assert (cache / "toy" / "toy_scores.csv").read_bytes() == content
    assert requests == ["/toy/toy_scores.csv"]
    fetch("toy", cache=cache, mirror=url)  # cached: no second request
    assert len(requests) == 1
    assert not list((cache / "toy").glob(".part-*"))


def test_checksum_mismatch_on_download_leaves_nothing(server, toy_dataset, tmp_path):
    url, root, _ = server
    (root / "toy").mkdir()
    (root / "toy" / "toy_scores.csv").write_bytes(b"system,topic,score\na,1,0.9\n")
    cache = tmp_path / "cache"
    with pytest.raises(DatasetError, match="checksum mismatch .* expected"):
        fetch("toy", cache=cache, mirror=url)
    assert not any(p.is_file() for p in cache.rglob("*"))


def test_http_error_and_offline(server, toy_dataset, tmp_path):
    url, _, _ = server
    with pytest.raises(DatasetError, match="cannot download .*HTTP 404.*BAYES_IR_DATA"):
        fetch("toy", cache=tmp_path / "c1", mirror=url)  # 404: nothing served
    offline = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(
        DatasetError, match="Offline\\? Set BAYES_IR_DATA to a folder holding toy/toy_scores.csv"
    ):
        fetch("toy", cache=tmp_path / "c2", mirror=offline)


def test_corrupt_cache_and_local_copy(toy_dataset, tmp_path, monkeypatch):
    _, content = toy_dataset
    cache = tmp_path / "cache"
    (cache / "toy").mkdir(parents=True)
    (cache / "toy" / "toy_scores.csv").write_bytes(content + b"b,3,0.1\n")
    with pytest.raises(DatasetError, match="checksum mismatch for the cached file"):
        fetch("toy", cache=cache)
    local = tmp_path / "local"
    (local / "toy").mkdir(parents=True)
    (local / "toy" / "toy_scores.csv").write_bytes(content)
    monkeypatch.setenv("BAYES_IR_DATA", str(local))
    assert fetch("toy", cache=cache) == [local / "toy" / "toy_scores.csv"]
    monkeypatch.setenv("BAYES_IR_CACHE", str(cache))
    assert datasets.cache_dir() == cache


def test_unknown_names():
    with pytest.raises(DatasetError, match="unknown dataset 'nope'; known: bayesian_risk"):
        fetch("nope")
    with pytest.raises(DatasetError, match="has no file 'adhoc9_ap'"):
        fetch("trec_adhoc", files="adhoc9_ap")


def test_registry_points_at_original_sources():
    frame = list_datasets()
    assert list(frame.columns) == ["name", "n_files", "format", "license", "source", "description"]
    assert {"bayesian_risk", "trec_adhoc", "robust2004", "ranger_glue"} <= set(frame["name"])
    br = DATASETS["bayesian_risk"].file("rb04_data")
    assert br.url.startswith("https://raw.githubusercontent.com/rmit-ir/bayesian-risk/")
    assert br.url.endswith("/data/rb04_data.csv")
    assert (
        DATASETS["trec_adhoc"]
        .file("adhoc6_ap")
        .url.startswith("https://raw.githubusercontent.com/julian-urbano/")
    )
    for d in DATASETS.values():
        for f in d.files:
            assert len(f.sha256) == 64 and f.url.startswith("https://")


@pytest.mark.shared_data
def test_real_files_match_checksums_and_download_path(shared_data, server, tmp_path, monkeypatch):
    """Every registered file in ../shared/data passes its checksum; a served copy downloads."""
    monkeypatch.delenv("BAYES_IR_DATA", raising=False)
    for d in DATASETS.values():
        paths = fetch(d.name, data_dir=shared_data, cache=tmp_path / "unused")
        assert all(p.is_relative_to(shared_data) for p in paths)
    assert not (tmp_path / "unused").exists()
    url, root, _ = server
    (root / "bayesian_risk").mkdir()
    shutil.copy(shared_data / "bayesian_risk" / "rb04_data.csv", root / "bayesian_risk")
    table = load_dataset("bayesian_risk", files="rb04_data", cache=tmp_path / "c", mirror=url)
    assert table.collections == ("rb04",) and table.wide().shape == (50, 45)


@pytest.mark.shared_data
def test_load_every_dataset_from_local_copy(shared_data, monkeypatch):
    monkeypatch.setenv("BAYES_IR_DATA", str(shared_data))
    adhoc = load_dataset("trec_adhoc", files=["adhoc6_ap", "adhoc6_p10"])
    assert adhoc.blocks() == [("adhoc6", "AP"), ("adhoc6", "P@10")]
    robust = load_dataset("robust2004", files="robust2004_ap")
    assert robust.wide().shape == (249, 110)
    risk = load_dataset("bayesian_risk")
    assert risk.collections == ("rb04", "trec17", "trec18")
