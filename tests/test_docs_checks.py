"""The documentation build's own checks (``docs/_ext/bayes_ir_docs.py``) can fail.

The site is built with warnings as errors; these tests show that the checks behind three
of its failures fire on what they are meant to catch, and stay quiet otherwise:

- a public name without a docstring (checked on a small package written here, with a
  documented and an undocumented function, class, dataclass and constant);
- a cross-reference to something that does not exist, or that an imported library (not
  bayes_ir) defines, is not taken for an existing bayes_ir name;
- the constants of bayes_ir's packages are documented under the module whose ``#:``
  comment documents them.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "_ext"))
docs = importlib.import_module("bayes_ir_docs")

PACKAGE = '''
"""A package written by the test."""

from dataclasses import dataclass

from probe_pkg.consts import DOCUMENTED_CONSTANT, UNDOCUMENTED_CONSTANT

__all__ = [
    "Documented", "DocumentedData", "documented", "DOCUMENTED_CONSTANT",
    "Undocumented", "UndocumentedData", "undocumented", "UNDOCUMENTED_CONSTANT",
]


def documented():
    """Return one."""
    return 1


def undocumented():
    return 1


class Documented:
    """A class with a docstring."""


class Undocumented:
    pass


@dataclass
class DocumentedData:
    """A dataclass with a docstring."""

    x: int


@dataclass
class UndocumentedData:
    x: int
'''

CONSTS = """
#: A constant with its doc comment.
DOCUMENTED_CONSTANT = (1, 2)

UNDOCUMENTED_CONSTANT = (3, 4)
"""


@pytest.fixture
def probe_pkg(tmp_path, monkeypatch):
    """A package ``probe_pkg`` on ``sys.path``, removed from ``sys.modules`` afterwards."""
    root = tmp_path / "probe_pkg"
    root.mkdir()
    (root / "__init__.py").write_text(textwrap.dedent(PACKAGE))
    (root / "consts.py").write_text(textwrap.dedent(CONSTS))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "probe_pkg"
    for name in [m for m in sys.modules if m.split(".")[0] == "probe_pkg"]:
        del sys.modules[name]


def test_names_without_a_docstring_are_found(probe_pkg):
    missing = {n for n in docs.public_names(probe_pkg) if docs.missing_docstring(probe_pkg, n)}
    assert missing == {"Undocumented", "UndocumentedData", "undocumented", "UNDOCUMENTED_CONSTANT"}


def test_a_constant_is_documented_under_the_module_of_its_comment(probe_pkg):
    assert docs.data_home(probe_pkg, "DOCUMENTED_CONSTANT") == "probe_pkg.consts"
    assert docs.data_home(probe_pkg, "UNDOCUMENTED_CONSTANT") is None
    assert docs.data_home("bayes_ir.decision", "DECISION_COLUMNS") == "bayes_ir.decision.decide"


def test_every_public_name_of_bayes_ir_has_a_docstring():
    missing = [
        f"{package}.{name}"
        for package in docs.PACKAGES
        for name in docs.public_names(package)
        if docs.missing_docstring(package, name)
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("dotted", "defined"),
    [
        ("bayes_ir.risk.brisk.BRISK_COLUMNS", True),  # a constant (shadowed module name)
        ("bayes_ir.hierarchical.exact", True),  # a module without a page
        ("bayes_ir.hierarchical.contrasts.Comparison.differences", True),  # a dataclass field
        ("bayes_ir.nonexistent", False),
        ("bayes_ir.hierarchical.contrasts.Comparison.no_such_field", False),
        ("bayes_ir.report.escape.html.escape", False),  # the standard library's, imported
    ],
)
def test_only_names_bayes_ir_defines_count_as_existing(dotted, defined):
    assert docs._defined_in_package(dotted) is defined


def test_a_default_in_a_docstring_shows_its_value():
    """The API pages showed "(default bayes_ir.defaults.DECISION_MARGIN)" rather than 0.01."""
    from bayes_ir import defaults

    lines = [
        "margin (default :data:`bayes_ir.defaults.DECISION_MARGIN`); grid",
        ":data:`~bayes_ir.defaults.MORE_TOPICS`, and :data:`bayes_ir.defaults.NO_SUCH_NAME`",
    ]
    docs.defaults_as_values(None, "function", "f", None, {}, lines)
    assert lines == [
        f"margin (default :data:`{defaults.DECISION_MARGIN!r} "
        "<bayes_ir.defaults.DECISION_MARGIN>`); grid",
        f":data:`{defaults.MORE_TOPICS!r} <bayes_ir.defaults.MORE_TOPICS>`, and "
        ":data:`bayes_ir.defaults.NO_SUCH_NAME`",  # not a default: the build says so
    ]
    assert "0.01 <" in lines[0]
