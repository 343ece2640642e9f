"""Provenance of a result: file checksums and package versions, computed one way everywhere."""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["package_versions", "sha256_file"]


def sha256_file(path: str | Path) -> str:
    """Return the SHA-256 of a file's bytes as hex, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def package_versions(packages: Iterable[str]) -> dict[str, str]:
    """Return ``{"python": ..., package: version}``; ``"not installed"`` for a missing one."""
    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out
