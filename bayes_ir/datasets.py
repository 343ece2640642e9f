# ruff: noqa: E501  (the checksum table has long lines)
"""Public per-topic score datasets: downloaded from their original source, verified, cached.

Each dataset is a set of files published by its authors in a public repository. A file
is looked for, in order:

1. under ``$BAYES_IR_DATA`` (a local copy with the layout ``<dataset>/<file>``, e.g.
   ``bayesian_risk/rb04_data.csv``; CI points it at ``../shared/data``);
2. in the cache, ``$BAYES_IR_CACHE`` or ``~/.cache/bayes_ir`` (same layout);
3. downloaded from the original URL (pinned to a commit) into the cache.

Every file is checked against its SHA-256 checksum before it is used; a mismatch, a
failed download or no network with no local copy raises :class:`DatasetError` saying
what to set.

Datasets (see :func:`list_datasets`):

``bayesian_risk``
    Benham et al. (SIGIR 2020): AP of a BM25 champion, four challengers and 40 TREC
    runs on TREC 2004 Robust (``rb04``), 2017 and 2018 Common Core (``trec17``, ``trec18``).
``trec_adhoc``
    Urbano et al. (SIGIR 2019): TREC-5..8 ad hoc, AP, P@10 and RR matrices (CC BY-SA 4.0).
``robust2004``
    Urbano & Nagler (SIGIR 2018): TREC 2004 Robust, AP and P@10 matrices (CC BY-SA 4.0).
``ranger_glue``
    Sertkan et al. (2023): per-example GLUE correctness of BERT vs DistilBERT (Apache-2.0).
"""

from __future__ import annotations

import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from bayes_ir.errors import DatasetError
from bayes_ir.files import atomic_path
from bayes_ir.provenance import sha256_file
from bayes_ir.table import ScoreTable, concat

__all__ = [
    "DATASETS",
    "Dataset",
    "RemoteFile",
    "cache_dir",
    "fetch",
    "list_datasets",
    "load_dataset",
]

#: Environment variable naming a local copy of the data (layout ``<dataset>/<file>``).
DATA_ENV = "BAYES_IR_DATA"
#: Environment variable naming the download cache.
CACHE_ENV = "BAYES_IR_CACHE"
_TIMEOUT = 60.0


@dataclass(frozen=True)
class RemoteFile:
    """One published file: where it lives locally (``path``), its source URL and checksum."""

    path: str
    url: str
    sha256: str


@dataclass(frozen=True)
class Dataset:
    """A public dataset: its files and how to read them into a :class:`ScoreTable`."""

    name: str
    description: str
    source: str
    license: str
    citation: str
    files: tuple[RemoteFile, ...]
    format: str
    #: Per-file reader options keyed by file stem (e.g. ``{"rb04_data": {...}}``).
    options: dict[str, dict] = field(default_factory=dict)

    def file(self, key: str) -> RemoteFile:
        """Return the file whose name or stem is ``key`` (``"rb04_data"``, ``"adhoc6_ap.csv"``)."""
        for f in self.files:
            name = f.path.rsplit("/", 1)[-1]
            if key in (name, name.split(".")[0], f.path):
                return f
        keys = ", ".join(_key(f) for f in self.files)
        raise DatasetError(f"dataset {self.name!r} has no file {key!r}; files: {keys}")


def _key(f: RemoteFile) -> str:
    name = f.path.rsplit("/", 1)[-1]
    return name.split(".")[0] if not f.path.startswith("ranger/") else f.path


def _github(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_BR_REPO, _BR_COMMIT = "rmit-ir/bayesian-risk", "f852e02d39b84120dad5b898f7c0dd28f0099c68"
_ST_REPO, _ST_COMMIT = (
    "julian-urbano/sigir2019-statistical",
    "ae8f0bfcb9cd30b28433d69801e9e32e360a8c7c",
)
_SIM_REPO, _SIM_COMMIT = (
    "julian-urbano/sigir2018-simulation",
    "14c0b481d44d1236732a2dcbff3bc3f37a4a45a0",
)
_RG_REPO, _RG_COMMIT = "MeteSertkan/ranger", "171134191cfa76255492893508ae7c089dc3d448"

# SHA-256 of the published files. Computed from copies whose size and content matched the
# files stored at the commits above (checked through a code index, since this project's
# machines have no network): see data/README.md.
_SHA256 = {
    "bayesian_risk/rb04_data.csv": "efb4daf89898e6cda0da8586f43ff6bef04ce56a0044b0961782195037d3d9c2",
    "bayesian_risk/trec17_data.csv": "05a38d8eaff55433f782ee03496a17c63cbb4a5acf45822649b0d64a3a27a410",
    "bayesian_risk/trec18_data.csv": "e1f7ad1b27da00f33cd0b2e5a7a6b588fff80fb3af00861eeb9d12eb86add0b9",
    "trec_adhoc/adhoc5_ap.csv": "4eb3eeca31e4de2fe091c97d0a0b37a89fb2650199882562f49b5acf52cecf63",
    "trec_adhoc/adhoc5_p10.csv": "7387d6f6a0ce3b7f2cf63151e8c25e8a032b9e299d7dd179f4610d142eb5c7f8",
    "trec_adhoc/adhoc5_rr.csv": "9cff14185e0a22b808e25000a35219215db47737e40a3ec080b2cb69a8e7f297",
    "trec_adhoc/adhoc6_ap.csv": "f36f78a6d247f938d951af12ec43ddcffb7dedb0f805d167accd69d3c1b55659",
    "trec_adhoc/adhoc6_p10.csv": "d8674049574b08f4b3bbdf9763590bbd6f6907f67236671500150a37126da7cd",
    "trec_adhoc/adhoc6_rr.csv": "71730f2fd256cf87b9fcd398712b09331f5e25f6bc4b4c887038607f85b79c78",
    "trec_adhoc/adhoc7_ap.csv": "0cf98aa943f9b5e695a04df51233f4d2d9f51b0d57a7c6e090b55c73df3e9610",
    "trec_adhoc/adhoc7_p10.csv": "99342d024979f37afc64e47cff1a40ffca55e81f6b5a11b6eab0edcddebb789f",
    "trec_adhoc/adhoc7_rr.csv": "69d873dcff2276fc9b7a53dd1b76c1380437224593f4b5aa23ef42ee7de0e047",
    "trec_adhoc/adhoc8_ap.csv": "1462159b10ec9631b8cdce8a6a38f1563def528921b5fa5799b78490fea51d7e",
    "trec_adhoc/adhoc8_p10.csv": "ada066e56f5c06cf3cab3915d7854b1df67a38d0229d183120fe9d15dd3e14e6",
    "trec_adhoc/adhoc8_rr.csv": "8e28b9de69d77360642a400a5377141a009ec35198a3dabbab8c3cd1335c9860",
    "robust2004/robust2004_ap.csv": "303105d5eede2769c1755d1d058b3833fc68257c50eaf052268b9459ed69ee2f",
    "robust2004/robust2004_p10.csv": "c6a45467462a7508cc57991c3c40e258ea98ab3f5ccac0b32fb4b9aae99a61e7",
    "ranger/glue/bert-base-cased/mnli/eval_results_mnli_accuracy.txt": "50efa56f6da7408d6d0f8084336c726b5fab35df97a32f52b480df74c981efea",
    "ranger/glue/bert-base-cased/mrpc/eval_results_mrpc_accuracy.txt": "298879ee7f4ed1de48d52e7f2214110eaf1b6f46121e58f78faa93ff240fadad",
    "ranger/glue/bert-base-cased/qnli/eval_results_qnli_accuracy.txt": "bb87c51accc435d05ffec14d06943eeda71532ee4f867fa8b5c474b32c6e6676",
    "ranger/glue/bert-base-cased/qqp/eval_results_qqp_accuracy.txt": "7b499e74a7354c7fca91b25d2581c27f45394b868806686738c527bbaee37a64",
    "ranger/glue/bert-base-cased/rte/eval_results_rte_accuracy.txt": "4d61282e0b4d14fe66c22d8e076c90e47281e1a806d798f101c5ccc985a1c2ef",
    "ranger/glue/bert-base-cased/sst2/eval_results_sst2_accuracy.txt": "23f629b0aafd3898e60f5fc579b74fabe7945b233e893e189872d19e30eef1a3",
    "ranger/glue/bert-base-cased/wnli/eval_results_wnli_accuracy.txt": "c070543d35e0a926104fa694404086a5c06bb4fc76c478ed882d94d5a806017c",
    "ranger/glue/distilbert-base-cased/mnli/eval_results_mnli_accuracy.txt": "9914b5ec41ae01324106499d2c20d29fe71ef6fb0fe1d00c871fa0c34abbe3c8",
    "ranger/glue/distilbert-base-cased/mrpc/eval_results_mrpc_accuracy.txt": "710a3258b00199e3896bcc195df492ea99eb5427122e9f1f550e567c45b82d8f",
    "ranger/glue/distilbert-base-cased/qnli/eval_results_qnli_accuracy.txt": "3c06d2dba3a7eb2a921b6e1a3730e9980853e11700fc11bf0708e8378fd62525",
    "ranger/glue/distilbert-base-cased/qqp/eval_results_qqp_accuracy.txt": "0274705d3eedbd986ce200b066d1ff55afcf7d6a59c09b353af267d935985f5e",
    "ranger/glue/distilbert-base-cased/rte/eval_results_rte_accuracy.txt": "b147bec4b8441d5ce49069fb6892f730c05908a4d06850d628ef6a43bb2ea0d6",
    "ranger/glue/distilbert-base-cased/sst2/eval_results_sst2_accuracy.txt": "a1e2e81ad74789de304b73a4ed9b3e63ad967ac6cf356b903ea6474d9cae6e34",
    "ranger/glue/distilbert-base-cased/wnli/eval_results_wnli_accuracy.txt": "d4aebb1a648b8c747f9f3dcaecc0a1c0b51081a2fd4aa8ded3d2ea59addd0dc6",
}  # fmt: skip


def _files(prefix: str, repo: str, commit: str, upstream_dir: str) -> tuple[RemoteFile, ...]:
    out = []
    for path, digest in _SHA256.items():
        if path.startswith(prefix + "/"):
            rel = path[len(prefix) + 1 :]
            out.append(RemoteFile(path, _github(repo, commit, f"{upstream_dir}/{rel}"), digest))
    return tuple(out)


_GLUE_TASKS = ("mnli", "mrpc", "qnli", "qqp", "rte", "sst2", "wnli")

DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            name="bayesian_risk",
            description="AP of a BM25 champion, 4 challengers and 40 TREC runs (artifacts), "
            "50 topics each, on TREC 2004 Robust and TREC 2017/2018 Common Core",
            source=f"https://github.com/{_BR_REPO}",
            license="no license stated by the authors (use for research and validation)",
            citation="Benham, R., Carterette, B., Culpepper, J. S., & Moffat, A. (2020). "
            "Bayesian inferential risk evaluation on multiple IR systems. SIGIR 2020, 339-348.",
            files=_files("bayesian_risk", _BR_REPO, _BR_COMMIT, "data"),
            format="tidy",
            options={
                "rb04_data": {"measure": "AP", "collection": "rb04"},
                "trec17_data": {"measure": "AP", "collection": "trec17"},
                "trec18_data": {"measure": "AP", "collection": "trec18"},
            },
        ),
        Dataset(
            name="trec_adhoc",
            description="TREC-5..8 ad hoc: AP, P@10 and RR, 50 topics x 61/74/103/129 runs "
            "(wide, anonymised runs, no topic column)",
            source=f"https://github.com/{_ST_REPO}",
            license="CC BY-SA 4.0",
            citation="Urbano, J., Lima, H., & Hanjalic, A. (2019). Statistical significance "
            "testing in information retrieval: an empirical analysis of type I, type II and "
            "type III errors. SIGIR 2019, 505-514.",
            files=_files("trec_adhoc", _ST_REPO, _ST_COMMIT, "data"),
            format="wide",
        ),
        Dataset(
            name="robust2004",
            description="TREC 2004 Robust: AP and P@10, 249 topics x 110 runs (wide, topic column)",
            source=f"https://github.com/{_SIM_REPO}",
            license="CC BY-SA 4.0",
            citation="Urbano, J., & Nagler, T. (2018). Stochastic simulation of test collections: "
            "evaluation scores. SIGIR 2018, 695-704.",
            files=_files("robust2004", _SIM_REPO, _SIM_COMMIT, "data"),
            format="wide",
        ),
        Dataset(
            name="ranger_glue",
            description="GLUE dev sets: per-example 0/1 correctness of bert-base-cased and "
            "distilbert-base-cased on 7 tasks (one score per line)",
            source=f"https://github.com/{_RG_REPO}",
            license="Apache-2.0",
            citation="Sertkan, M., Althammer, S., & Hofstaetter, S. (2023). Ranger: a toolkit "
            "for effect-size based multi-task evaluation. ACL 2023 (demo), arXiv:2305.15048.",
            files=_files("ranger/glue", _RG_REPO, _RG_COMMIT, "examples/classification-glue-data"),
            format="lines",
        ),
    )
}


def cache_dir() -> Path:
    """Return the download cache: ``$BAYES_IR_CACHE`` or ``~/.cache/bayes_ir``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "bayes_ir"


def list_datasets() -> pd.DataFrame:
    """One row per dataset: ``name, n_files, format, license, source, description``."""
    return pd.DataFrame(
        [
            {
                "name": d.name,
                "n_files": len(d.files),
                "format": d.format,
                "license": d.license,
                "source": d.source,
                "description": d.description,
            }
            for d in DATASETS.values()
        ]
    )


def _get(name: str) -> Dataset:
    if name not in DATASETS:
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    return DATASETS[name]


def _verify(path: Path, remote: RemoteFile, *, what: str) -> None:
    got = sha256_file(path)
    if got != remote.sha256:
        raise DatasetError(
            f"checksum mismatch for {what} {path}: SHA-256 {got}, expected {remote.sha256}. "
            "The file is corrupt or not the published version; delete it to download again"
        )


def _download(remote: RemoteFile, target: Path, url: str) -> None:
    try:
        with atomic_path(target, what="dataset file") as tmp:
            with open(tmp, "wb") as out, urllib.request.urlopen(url, timeout=_TIMEOUT) as resp:
                shutil.copyfileobj(resp, out)
            _verify(tmp, remote, what=f"the download of {url} into")
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        if isinstance(exc, urllib.error.HTTPError):
            reason = f"HTTP {exc.code} {exc.reason}"
        else:
            reason = str(getattr(exc, "reason", exc))
        raise DatasetError(
            f"cannot download {url} ({reason}). Offline? Set "
            f"{DATA_ENV} to a folder holding {remote.path} (the layout of the shared data "
            f"folder), or put the file at {target}"
        ) from None


def fetch(
    name: str,
    *,
    files: str | Sequence[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    mirror: str | None = None,
) -> list[Path]:
    """Return local paths of a dataset's files, downloading and verifying them if needed.

    Parameters
    ----------
    name
        Dataset name (see :func:`list_datasets`).
    files
        File names or stems to fetch (``"rb04_data"``); ``None`` fetches all.
    data_dir
        Folder with a local copy (layout ``<dataset folder>/<file>``); default
        ``$BAYES_IR_DATA``. Files found there are used in place (after verification).
    cache
        Download cache; default :func:`cache_dir`.
    mirror
        Base URL of a mirror with the local layout (``{mirror}/{path}``), instead of the
        original source; used by tests against a local server.

    Returns
    -------
    list of pathlib.Path

    Raises
    ------
    DatasetError
        Unknown dataset or file, failed download (for example offline without a local
        copy: the message says to set ``$BAYES_IR_DATA``), or checksum mismatch.
    """
    dataset = _get(name)
    wanted = (
        list(dataset.files)
        if files is None
        else [dataset.file(f) for f in ([files] if isinstance(files, str) else files)]
    )
    local = data_dir if data_dir is not None else os.environ.get(DATA_ENV)
    cache_root = Path(cache).expanduser() if cache is not None else cache_dir()
    out = []
    for remote in wanted:
        if local:
            candidate = Path(local).expanduser() / remote.path
            if candidate.is_file():
                _verify(candidate, remote, what="the local copy")
                out.append(candidate)
                continue
        target = cache_root / remote.path
        if target.is_file():
            _verify(target, remote, what="the cached file")
        else:
            url = remote.url if mirror is None else f"{mirror.rstrip('/')}/{remote.path}"
            _download(remote, target, url)
        out.append(target)
    return out


def load_dataset(
    name: str,
    *,
    files: str | Sequence[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    mirror: str | None = None,
) -> ScoreTable:
    """Fetch a dataset (:func:`~bayes_ir.datasets.fetch`), read it into one :class:`ScoreTable`.

    Examples
    --------
    >>> table = load_dataset("bayesian_risk", files="rb04_data")  # doctest: +SKIP
    >>> table.with_roles(champion="Champion", challengers="Chal.*")  # doctest: +SKIP
    """
    from bayes_ir.readers import read_scores

    dataset = _get(name)
    paths = fetch(name, files=files, data_dir=data_dir, cache=cache, mirror=mirror)
    if dataset.format == "lines":
        return read_scores(paths, format="lines", measure="accuracy")
    tables = []
    for path in paths:
        options = dataset.options.get(path.name.split(".")[0], {})
        tables.append(read_scores(path, format=dataset.format, **options))
    if len(tables) == 1:
        return tables[0]
    return concat(tables, source=f"dataset {name!r}")
