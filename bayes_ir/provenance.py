"""Provenance of a result: file checksums and package versions, computed one way everywhere."""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["input_hashes", "package_versions", "sha256_file"]


def sha256_file(path: str | Path) -> str:
    """Return the SHA-256 of a file's bytes as hex, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def input_hashes(paths: Iterable[str | Path]) -> list[dict[str, str]]:
    """Return ``{"name", "sha256"}`` of every input file: scores, qrels, selector lists, fits.

    A folder stands for the regular files in it (a folder of runs); a path named twice
    (or through a link) is listed once; paths that are not regular files (``None``,
    ``"<DataFrame>"``, a FIFO) are skipped, never opened.
    """
    out: list[dict[str, str]] = []
    seen: set[tuple[int, int]] = set()
    for item in paths:
        if item is None:
            continue
        path = Path(item)
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        for file in files:
            if not file.is_file():
                continue
            info = file.stat()
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            out.append({"name": str(file), "sha256": sha256_file(file)})
    return out


def package_versions(packages: Iterable[str]) -> dict[str, str]:
    """Return ``{"python": ..., package: version}``; ``"not installed"`` for a missing one."""
    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out
