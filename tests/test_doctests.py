"""The examples in the package's docstrings run, as doctests, in the test suite."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import bayes_ir

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(bayes_ir.__path__, "bayes_ir.")
    if not info.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, monkeypatch):
    monkeypatch.chdir(bayes_ir.__path__[0] + "/..")  # examples name data/ as in the README
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failed, _ = doctest.testmod(module, optionflags=flags, verbose=False, report=True)
    assert failed == 0, f"{failed} docstring example(s) of {name} failed (printed above)"


def test_some_examples_are_checked():
    """The doctest collection finds the package's examples (a wrong path would find none)."""
    finder = doctest.DocTestFinder()
    examples = sum(
        len(test.examples)
        for name in MODULES
        for test in finder.find(importlib.import_module(name))
    )
    assert examples >= 20
