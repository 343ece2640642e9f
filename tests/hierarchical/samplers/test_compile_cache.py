"""The cache of compiled PyMC models keeps the most recently used ones, up to its size."""

from __future__ import annotations

import dataclasses
from typing import Any

import nutpie

from bayes_ir.hierarchical import sampling


@dataclasses.dataclass
class _Compiled:
    """Stands for nutpie's compiled model: the attributes ``cached_compile`` reads."""

    initial_point_func: Any = None
    shared_var_keys: tuple = ()

    def with_data(self, **_: Any) -> _Compiled:
        return self


class _Model:
    named_vars: dict = {}


def test_least_recently_used_model_leaves_first(monkeypatch):
    monkeypatch.setattr(nutpie, "compile_pymc_model", lambda model: _Compiled())
    monkeypatch.setattr(sampling, "_CACHE", {})
    monkeypatch.setattr(sampling, "CACHE_SIZE", 2)
    fresh = [sampling.cached_compile((k,), _Model, {})[1] for k in ("a", "b", "a", "c")]
    assert fresh == [True, True, False, True]
    assert list(sampling._CACHE) == [("a",), ("c",)]  # "b", least recently used, left
    assert sampling.cached_compile(("b",), _Model, {})[1]
