"""The floors of the package hold: imports only go down, and rooms meet through public names.

Every module of ``bayes_ir`` is parsed with :mod:`ast` (nothing is imported), and each
import statement is classified by the room and floor it comes from and goes to:

- ground: errors, defaults, validate, files, provenance, progress, measures, table, table_checks,
  roles, readers/, datasets, simulate, sweep;
- methods: hierarchical/, decision/, risk/, frequentist/, reliability/;
- presentation: plots/, report/, cli/.

A room is a top-level subpackage or ground module. The rules (DEVELOPING.md,
ARCHITECTURE.md):

(a) no import goes up a floor at module level; inside a function (or under
    ``TYPE_CHECKING``) only methods may reach presentation, for the ``.plot()``,
    ``.summary()`` and ``.to_latex()`` conveniences;
(b) no method module imports matplotlib at module level;
(c) no room imports a ``_private`` name, or from a ``_private`` module, of another room;
(d) a method room reads another method room only through its public names: the names
    its ``__init__`` exports, or a module's ``__all__``.

The checker is tested on small hand-written modules, so a rule that cannot fire is
caught, and then run on the package, where it must find nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bayes_ir"

GROUND = frozenset(
    {
        "errors",
        "defaults",
        "validate",
        "files",
        "provenance",
        "progress",
        "measures",
        "table",
        "table_checks",
        "roles",
        "readers",
        "datasets",
        "simulate",
        "sweep",
    }
)
METHODS = frozenset({"hierarchical", "decision", "risk", "frequentist", "reliability"})
PRESENTATION = frozenset({"plots", "report", "cli"})
FLOOR = {
    **dict.fromkeys(GROUND, 1),
    **dict.fromkeys(METHODS, 2),
    **dict.fromkeys(PRESENTATION, 3),
}


@dataclass(frozen=True)
class Import:
    """One imported name: ``module`` is absolute, ``name`` is None for ``import module``."""

    source: str  # the importing module, dotted
    line: int
    module: str
    name: str | None
    deferred: bool  # inside a function or under ``if TYPE_CHECKING:``


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at ``path`` in the package rooted at ``root``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(source: str, module: str, *, is_package: bool) -> list[Import]:
    """Every import in ``source`` (the text of ``module``), relative imports resolved."""
    found: list[Import] = []
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(module, child.lineno, alias.name, None, deferred))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for alias in child.names:
                    found.append(Import(module, child.lineno, target, alias.name, deferred))
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                visit(child, True)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), True)
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), deferred)
            else:
                visit(child, deferred)

    visit(ast.parse(source), False)
    return found


def room_of(module: str) -> str | None:
    """The room of a ``bayes_ir`` module (``bayes_ir.risk.urisk`` -> ``risk``), else None."""
    parts = module.split(".")
    if parts[0] != "bayes_ir" or len(parts) < 2:
        return None
    return parts[1]


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


@dataclass(frozen=True)
class Package:
    """The parsed package: its imports and the public names of every module."""

    imports: list[Import]
    public: dict[str, frozenset[str] | None]  # module -> its ``__all__`` (None: none)
    modules: frozenset[str]


def _all_of(tree: ast.Module) -> frozenset[str] | None:
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value
            if isinstance(value, ast.List | ast.Tuple):
                return frozenset(
                    elt.value
                    for elt in value.elts
                    if isinstance(elt, ast.Constant) and isinstance(elt.value, str)
                )
    return None


def parse_package(root: Path) -> Package:
    """Parse every module under ``root`` (a package directory)."""
    imports: list[Import] = []
    public: dict[str, frozenset[str] | None] = {}
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        source = path.read_text(encoding="utf-8")
        imports += imports_of(source, name, is_package=path.name == "__init__.py")
        public[name] = _all_of(ast.parse(source))
    return Package(imports, public, frozenset(public))


def upward_arrows(package: Package) -> list[str]:
    """Rule (a): imports that go up a floor (deferred ones only from methods to presentation)."""
    bad = []
    for imp in package.imports:
        here, there = room_of(imp.source), room_of(imp.module)
        if here not in FLOOR or there not in FLOOR or FLOOR[there] <= FLOOR[here]:
            continue
        if imp.deferred and FLOOR[here] == 2 and FLOOR[there] == 3:
            continue
        where = "in a function" if imp.deferred else "at module level"
        bad.append(f"{imp.source}:{imp.line} imports {imp.module} {where}")
    return bad


def matplotlib_in_methods(package: Package) -> list[str]:
    """Rule (b): a method module importing matplotlib at module level."""
    return [
        f"{imp.source}:{imp.line} imports {imp.module}"
        for imp in package.imports
        if room_of(imp.source) in METHODS
        and not imp.deferred
        and imp.module.split(".")[0] == "matplotlib"
    ]


def _target(imp: Import, package: Package) -> tuple[str, str | None]:
    """(module, name) imported: ``from pkg import mod`` names the module ``pkg.mod``."""
    if imp.name is not None and f"{imp.module}.{imp.name}" in package.modules:
        return f"{imp.module}.{imp.name}", None
    return imp.module, imp.name


def private_cross_imports(package: Package) -> list[str]:
    """Rule (c): a ``_private`` name or module of another room."""
    bad = []
    for imp in package.imports:
        here, there = room_of(imp.source), room_of(imp.module)
        if there is None or here == there:
            continue
        module, name = _target(imp, package)
        parts = module.split(".")[1:] + ([name] if name else [])
        if any(_private(part) for part in parts):
            bad.append(f"{imp.source}:{imp.line} imports {module}{'.' + name if name else ''}")
    return bad


def non_public_method_imports(package: Package) -> list[str]:
    """Rule (d): a method room importing another method room's non-public name."""
    bad = []
    for imp in package.imports:
        here, there = room_of(imp.source), room_of(imp.module)
        if here not in METHODS or there not in METHODS or here == there:
            continue
        module, name = _target(imp, package)
        room_exports = package.public.get(f"bayes_ir.{there}") or frozenset()
        if name is None:
            # a whole module: public if the room exports it or it declares __all__
            if module != f"bayes_ir.{there}" and package.public.get(module) is None:
                bad.append(f"{imp.source}:{imp.line} imports module {module} (no __all__)")
            continue
        module_all = package.public.get(module)
        if name in room_exports or (module_all is not None and name in module_all):
            continue
        bad.append(f"{imp.source}:{imp.line} imports {module}.{name}")
    return bad


def _mentions_topics(node: ast.Raise) -> bool:
    call = node.exc
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", "") == "InsufficientDataError"):
        return False
    text = " ".join(
        c.value
        for arg in call.args
        for c in ast.walk(arg)
        if isinstance(c, ast.Constant) and isinstance(c.value, str)
    )
    return "topic" in text


def hand_written_topic_checks(root: Path) -> list[str]:
    """``if <count> < <minimum>: raise InsufficientDataError("... topics ...")`` outside validate.

    Topic-count minimums have one home, :func:`bayes_ir.validate.require_topics` (and
    :meth:`bayes_ir.table.ScoreTable.require_topics`, which calls it).
    """
    bad = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "validate.py" and path.parent == root:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare | ast.BoolOp)):
                continue
            compares = [c for c in ast.walk(node.test) if isinstance(c, ast.Compare)]
            if not any(isinstance(op, ast.Lt | ast.LtE) for c in compares for op in c.ops):
                continue
            if any(isinstance(r, ast.Raise) and _mentions_topics(r) for r in node.body):
                bad.append(f"{module_name(path, root)}:{node.lineno}")
    return bad


# ---------------------------------------------------------------- the checker itself


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / "bayes_ir" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "bayes_ir"


def test_checker_finds_each_kind_of_violation(tmp_path):
    root = _write(
        tmp_path,
        {
            "__init__.py": "",
            "table.py": "from bayes_ir.risk import urisk\n",  # ground -> methods
            "hierarchical/__init__.py": "from .fit import fit\n__all__ = ['fit']\n",
            "hierarchical/fit.py": "def fit(): ...\ndef helper(): ...\n",
            "hierarchical/_kernel.py": "",
            "hierarchical/stats.py": "__all__ = ['mean']\ndef mean(): ...\ndef other(): ...\n",
            "risk/__init__.py": "",
            "risk/urisk.py": (
                "import matplotlib.pyplot as plt\n"  # (b)
                "from bayes_ir.report import escape\n"  # (a) module level
                "from ..hierarchical.fit import fit, helper\n"  # fit ok, helper (d)
                "from bayes_ir.hierarchical import _kernel\n"  # (c) and (d)
                "from bayes_ir.hierarchical.stats import mean, other\n"  # other: (d)
                "from bayes_ir.risk._own import x\n"  # own room: fine
                "def plot():\n"
                "    from bayes_ir.plots import draw\n"  # deferred methods -> plots: fine
                "    import matplotlib\n"  # deferred: fine
            ),
            "plots/__init__.py": "from bayes_ir.readers._io import read\n",  # (c)
            "report/__init__.py": "",
            "readers/__init__.py": "def f():\n    from bayes_ir.report import x\n",  # (a)
        },
    )
    package = parse_package(root)
    assert upward_arrows(package) == [
        "bayes_ir.readers:2 imports bayes_ir.report in a function",
        "bayes_ir.risk.urisk:2 imports bayes_ir.report at module level",
        "bayes_ir.table:1 imports bayes_ir.risk at module level",
    ]
    assert matplotlib_in_methods(package) == ["bayes_ir.risk.urisk:1 imports matplotlib.pyplot"]
    assert private_cross_imports(package) == [
        "bayes_ir.plots:1 imports bayes_ir.readers._io.read",
        "bayes_ir.risk.urisk:4 imports bayes_ir.hierarchical._kernel",
    ]
    assert non_public_method_imports(package) == [
        "bayes_ir.risk.urisk:3 imports bayes_ir.hierarchical.fit.helper",
        "bayes_ir.risk.urisk:4 imports module bayes_ir.hierarchical._kernel (no __all__)",
        "bayes_ir.risk.urisk:5 imports bayes_ir.hierarchical.stats.other",
    ]


def test_checker_finds_a_hand_written_topic_count(tmp_path):
    root = _write(
        tmp_path,
        {
            "__init__.py": "",
            "validate.py": (  # the one home: not reported
                "def require_topics(n, minimum):\n"
                "    if n < minimum:\n"
                "        raise InsufficientDataError(f'needs {minimum} topics')\n"
            ),
            "risk/urisk.py": (
                "if n < 3:\n"
                "    raise InsufficientDataError(f'URisk needs 3 topics, got {n}')\n"
                "if n_t < 2 or n_s < 2:\n"
                "    raise InsufficientDataError('2 topics and 2 systems')\n"
                "if m < 2:\n"
                "    raise InsufficientDataError('2 systems')\n"  # not a topic count
            ),
        },
    )
    assert hand_written_topic_checks(root) == ["bayes_ir.risk.urisk:1", "bayes_ir.risk.urisk:3"]


def test_relative_imports_are_resolved():
    found = imports_of(
        "from ..glm import fit\nfrom . import tau2\n",
        "bayes_ir.frequentist.meta_analysis.combine",
        is_package=False,
    )
    assert [(i.module, i.name) for i in found] == [
        ("bayes_ir.frequentist.glm", "fit"),
        ("bayes_ir.frequentist.meta_analysis", "tau2"),
    ]


# ---------------------------------------------------------------- the package


@pytest.fixture(scope="module")
def package() -> Package:
    return parse_package(PACKAGE)


def test_every_room_has_a_floor(package):
    rooms = {room_of(m) for m in package.modules} - {None, "__main__"}
    assert rooms <= set(FLOOR), sorted(rooms - set(FLOOR))


def test_imports_only_go_down(package):
    assert upward_arrows(package) == []


def test_methods_do_not_import_matplotlib_at_module_level(package):
    assert matplotlib_in_methods(package) == []


def test_no_private_name_crosses_a_room(package):
    assert private_cross_imports(package) == []


def test_method_rooms_meet_through_public_names(package):
    assert non_public_method_imports(package) == []


def test_topic_count_minimums_have_one_home():
    assert hand_written_topic_checks(PACKAGE) == []
