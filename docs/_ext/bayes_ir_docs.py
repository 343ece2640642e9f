"""Sphinx extension of the bayes_ir site: generated API index pages and the CLI reference.

* On ``config-inited`` it writes ``docs/api/<package>.rst`` for ``bayes_ir`` and each
  public subpackage, one autosummary entry per public name (the package's ``__all__``, or
  for a package without one, the public functions and classes its modules define), so a
  name added to the package gets its page without editing the docs.
* MathJax is copied from Debian's ``libjs-mathjax`` (the parts the ``TeX-AMS_CHTML``
  configuration loads) into ``_static/mathjax``, so the formulas render offline.
* The ``bayes-ir-cli`` directive renders every command of the typer app (walked with
  :func:`typer.main.get_command`): its usage, description and a table of its arguments and
  options with their defaults, as ``bayes-ir COMMAND --help`` prints them.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import shutil
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The packages that get an API page, with the sentence that introduces each.
PACKAGES = {
    "bayes_ir": "The names most analyses need, re-exported at the top level.",
    "bayes_ir.hierarchical": "The Bayesian hierarchical model: fit, diagnostics, contrasts.",
    "bayes_ir.hierarchical.families": "Likelihood families: gaussian, skew-normal, bernoulli, "
    "binomial, zero-one-inflated beta.",
    "bayes_ir.hierarchical.design": "Designs of crossed terms that every sampler reads.",
    "bayes_ir.decision": "The decision rule: deploy, keep the champion, or collect more data.",
    "bayes_ir.risk": "Risk measures: URisk, TRisk, ZRisk, BCa, the one-to-one model, BRisk.",
    "bayes_ir.frequentist": "Meta-analysis, GLMs and paired tests.",
    "bayes_ir.reliability": "Ranking reliability: expected correlation with the true ranking.",
    "bayes_ir.readers": "Readers of runs, qrels and score files; register_reader adds a format.",
    "bayes_ir.report": "Tables in CSV, JSON, Markdown and LaTeX; the deployment review.",
    "bayes_ir.plots": "Figures: each function draws one result object with matplotlib.",
}


#: Where Debian's ``libjs-mathjax`` (with ``fonts-mathjax``) installs MathJax 2.
MATHJAX_DIR = Path("/usr/share/javascript/mathjax")

#: The parts of MathJax that ``MathJax.js?config=TeX-AMS_CHTML`` loads (about 1.5 MB of 54).
MATHJAX_PARTS = [
    "MathJax.js",
    "config/TeX-AMS_CHTML.js",
    "extensions",
    "jax/element",
    "jax/input/TeX",
    "jax/output/CommonHTML",
    "fonts/HTML-CSS/TeX/woff",
    "localization/en",
]


def check_mathjax(app) -> None:
    """Stop the build early, saying what to install, when the local MathJax is missing."""
    if app.builder.format == "html" and not (MATHJAX_DIR / "MathJax.js").exists():
        raise ExtensionError(
            f"MathJax not found in {MATHJAX_DIR}: install Debian's libjs-mathjax "
            "(apt-get install libjs-mathjax), which the site's formulas use offline"
        )


def copy_mathjax(app, exception) -> None:
    """Copy the MathJax parts the pages load into ``_static/mathjax`` of the HTML build."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        source, target = MATHJAX_DIR / part, out / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)  # follows Debian's font links
        else:
            shutil.copyfile(source, target)


#: Public packages documented elsewhere than on an API page: the CLI has its reference page.
NOT_API = {"bayes_ir.cli"}


def public_names(package: str) -> list[str]:
    """Return the documented names of ``package``: its ``__all__``, else what it defines."""
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)

    def defined(mod, prefix: str) -> list[str]:
        return [
            f"{prefix}{name}"
            for name, value in vars(mod).items()
            if not name.startswith("_")
            and (inspect.isfunction(value) or inspect.isclass(value))
            and value.__module__.startswith(mod.__name__)
        ]

    # a package that re-exports its names documents those; otherwise its modules' own names
    found = defined(module, "")
    if not found and hasattr(module, "__path__"):
        for info in pkgutil.iter_modules(module.__path__):
            if not info.name.startswith("_"):
                sub = importlib.import_module(f"{package}.{info.name}")
                found += defined(sub, f"{info.name}.")
    return sorted(set(found))


def _same_object(package: str, name: str, top: object) -> bool:
    """Whether ``package.name`` is the object ``bayes_ir`` re-exports under that name."""
    return "." not in name and getattr(top, name, None) is _value(package, name)


def _value(package: str, name: str):
    """Return the object ``package.name`` (``name`` may be dotted)."""
    value = importlib.import_module(package)
    for part in name.split("."):
        value = getattr(value, part)
    return value


def data_home(package: str, name: str) -> str | None:
    """Return the module of ``package`` whose ``#:`` comment documents the constant ``name``.

    A constant has no ``__module__``: autodoc would read the docstring of its type (a
    tuple's) on a re-exporting package, so its page is made under the module defining it.
    """
    from sphinx.pycode import ModuleAnalyzer

    value = _value(package, name)
    root = package.split(".")[0]
    top = importlib.import_module(root)
    homes = [root, *(m.name for m in pkgutil.walk_packages(top.__path__, f"{root}."))]
    homes.sort(key=lambda home: not home.startswith(package))  # the package's own first
    for home in homes:
        if getattr(importlib.import_module(home), name, None) is not value:
            continue
        if ("", name) in ModuleAnalyzer.for_module(home).find_attr_docs():
            return home
    return None


def _home(package: str, name: str) -> str:
    """Return the module a public name is documented under: a constant's own module."""
    if _is_code(_value(package, name)):
        return package
    return data_home(package, name) or package


def missing_docstring(package: str, name: str) -> bool:
    """Whether the public name ``package.name`` lacks a docstring of its own.

    A dataclass or named tuple without one gets its signature as ``__doc__``
    (``Decision(challenger, ...)``), which does not count; a constant needs a ``#:``
    comment in the module that defines it.
    """
    value = _value(package, name)
    if not _is_code(value):
        return data_home(package, name) is None
    doc = (value.__doc__ if not inspect.isclass(value) else vars(value).get("__doc__")) or ""
    return not doc.strip() or doc.startswith(f"{value.__name__}(")


def check_public_names(app, config=None) -> None:
    """Warn (an error under ``-W``) for a public package without an API page.

    And for a name in a documented ``__all__`` without a docstring (see also
    :func:`check_pages`).
    """
    top = importlib.import_module("bayes_ir")
    for info in pkgutil.iter_modules(top.__path__):
        package = f"bayes_ir.{info.name}"
        if info.ispkg and not info.name.startswith("_") and package not in PACKAGES:
            if package not in NOT_API:
                logger.warning(f"public package {package} has no API page: add it to PACKAGES")
    for package in PACKAGES:
        for name in public_names(package):
            if missing_docstring(package, name):
                logger.warning(f"{package}.{name} is public but has no docstring")


def check_pages(app, env) -> None:
    """Warn for a public name that did not get an API page (its object is not documented)."""
    domain = env.get_domain("py")
    documented = {id(_import(name)) for name in domain.objects if _is_code(_import(name))}
    for package in PACKAGES:
        for name in public_names(package):
            value = _value(package, name)
            if _is_code(value):
                found = id(value) in documented
            else:
                home = data_home(package, name) or package
                found = f"{home}.{name}" in domain.objects
            if not found:
                logger.warning(f"{package}.{name} is public but has no API page")


def _api_page(package: str, intro: str) -> str:
    """Return the rst of one package's page; a name ``bayes_ir`` re-exports has one page."""
    top = importlib.import_module("bayes_ir")
    names = public_names(package)
    shared = [] if package == "bayes_ir" else [n for n in names if _same_object(package, n, top)]
    title = package
    lines = [title, "=" * len(title), "", f".. currentmodule:: {package}", "", intro, ""]
    homes: dict[str, list[str]] = {}
    for name in names:
        if name not in shared:
            homes.setdefault(_home(package, name), []).append(name)
    for home, here in sorted(homes.items(), key=lambda item: item[0] != package):
        if home != package:  # a constant, on the page of the module whose comment documents it
            lines += ["", f".. currentmodule:: {home}", ""]
        lines += [".. autosummary::", "   :toctree: generated/", ""]
        lines += [f"   {name}" for name in here]
    if shared:
        lines += ["", "Also re-exported as ``bayes_ir.NAME`` (documented there):", ""]
        lines += [".. currentmodule:: bayes_ir", "", ".. autosummary::", ""]
        lines += [f"   {name}" for name in shared]
    return "\n".join(lines) + "\n"


def write_api_pages(app, config=None) -> None:
    """Write one autosummary page per package into ``docs/api/`` (only when changed)."""
    out = Path(app.srcdir) / "api"
    out.mkdir(exist_ok=True)
    top = importlib.import_module("bayes_ir")
    pages = set()
    for package, intro in PACKAGES.items():
        path = out / f"{package}.rst"
        text = _api_page(package, intro)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        for name in public_names(package):
            shared = package != "bayes_ir" and _same_object(package, name, top)
            pages.add(f"bayes_ir.{name}" if shared else f"{_home(package, name)}.{name}")
    # the page of a name no longer public would be an orphan (a warning): it goes
    for page in (out / "generated").glob("*.rst"):
        if page.stem not in pages:
            page.unlink()


def rst_text(text: str) -> str:
    """Escape plain help text for reST, keeping its ``...`` literal spans as they are."""
    parts = text.split("``")
    for i in range(0, len(parts), 2):  # even parts lie outside ``...``
        parts[i] = re.sub(r"([\\*`|_\[\]@])", r"\\\1", parts[i])  # @: no mailto link
    return "``".join(parts)


def _default(param) -> str:
    """Return the default an option shows in the table ('' when none is worth showing)."""
    if param.required:
        return "required"
    if param.secondary_opts:  # an on/off flag pair
        return param.opts[0] if param.default else param.secondary_opts[0]
    if param.default is None or param.default is False or param.default == ():
        return ""
    if isinstance(param.default, list | tuple):
        return ", ".join(map(str, param.default))
    return str(param.default)


def command_rst(group, name: str) -> list[str]:
    """Return the reST of one command: usage, description and a table of its parameters."""
    command = group.commands[name]
    parent = group.context_class(group, info_name="bayes-ir")
    ctx = command.context_class(command, info_name=name, parent=parent)
    usage = " ".join(["bayes-ir", name, *command.collect_usage_pieces(ctx)])
    lines = [".. code-block:: text", "", f"   {usage}", ""]
    for paragraph in (command.help or "").split("\n\n"):
        lines += [rst_text(" ".join(paragraph.split())), ""]
    lines += [".. list-table::", "   :header-rows: 1", "   :widths: 30 15 55", ""]
    lines += ["   * - parameter", "     - default", "     - meaning"]
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False) or param.opts == ["--help"]:
            continue
        if param.param_type_name == "argument":
            spelled = f"``{param.name.upper()}``" + ("..." if param.nargs == -1 else "")
        else:
            spelled = ", ".join(f"``{o}``" for o in [*param.opts, *param.secondary_opts])
        default = _default(param)
        lines += [f"   * - {spelled}", f"     - {rst_text(default) if default else ''}"]
        lines += [f"     - {rst_text(' '.join((getattr(param, 'help', None) or '').split()))}"]
    return lines + [""]


class CliReference(Directive):
    """``.. bayes-ir-cli::``: the command list, then a section per command of the app."""

    has_content = False

    def run(self):
        """Render each command of the typer app in the app's order, with a reference label."""
        import typer
        from docutils.statemachine import StringList

        from bayes_ir.cli import app

        group = typer.main.get_command(app)
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 20 80", ""]
        lines += ["   * - command", "     - what it answers"]
        for name, command in group.commands.items():
            summary = (command.help or "").split("\n\n")[0]
            lines += [f"   * - :ref:`bayes-ir {name} <cli-{name}>`"]
            lines += [f"     - {rst_text(' '.join(summary.split()))}"]
        lines.append("")
        for name in group.commands:
            title = f"bayes-ir {name}"
            lines += [f".. _cli-{name}:", "", title, "-" * len(title), ""]
            lines += command_rst(group, name)
        container = nodes.section()
        container.document = self.state.document
        self.state.nested_parse(StringList(lines, source="bayes-ir --help"), 0, container,
                                match_titles=True)  # fmt: skip
        return container.children


MISSING = object()  # what _import returns for a name that names nothing


def _import(dotted: str):
    """Return the object a dotted name points to, or ``MISSING`` when it names nothing.

    Attributes win over submodules (``bayes_ir.hierarchical.fit`` is the function), as in
    Python; the longest importable module is the fallback (``bayes_ir.sweep.sweep``).
    """
    parts = dotted.split(".")
    try:
        value = importlib.import_module(parts[0])
        for i, part in enumerate(parts[1:], start=2):
            value = getattr(value, part, MISSING)
            if value is MISSING:
                value = importlib.import_module(".".join(parts[:i]))
        return value
    except (ImportError, ValueError):
        pass
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except (ImportError, ValueError):
            continue
        try:
            for part in parts[cut:]:
                value = getattr(value, part)
        except AttributeError:
            return MISSING
        return value
    return MISSING


def _is_code(value) -> bool:
    """Whether ``value`` is a function, class, method or module (objects with identity)."""
    return any(check(value) for check in (inspect.isroutine, inspect.isclass, inspect.ismodule))


def _scopes(node) -> list[str]:
    """Return the names a short reference in a docstring is looked up in, innermost first.

    As in Python: the class of a method, then the module that defines the object whose
    docstring holds the reference (``bayes_ir.MultiReview.overall`` is defined in
    ``bayes_ir.report.review_measures``), then the packages of the documented name.
    """
    owner = re.search(r"docstring of ([\w.]+)", node.source or "")
    if owner is None:
        return []
    name = owner.group(1)
    scopes = []
    value = _import(name)
    value = getattr(value, "fget", value)  # a property: its getter knows its module
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        parts = qualname.split(".")
        last = len(parts) if inspect.isclass(value) else len(parts) - 1
        scopes += [".".join([module, *parts[:i]]) for i in range(last, -1, -1)]
    parts = name.split(".")
    return scopes + [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


def resolve_alias(app, env, node, contnode):
    """Resolve a Python reference to another spelling of a documented object.

    A name re-exported by ``bayes_ir`` has one page, under ``bayes_ir.NAME``; a docstring
    may spell it ``bayes_ir.hierarchical.fit``, ``bayes_ir.risk.urisk.urisk``, or by its
    short name in its own module (``loo``, ``Comparison.to_frame``). The target is
    imported, and the reference goes to the documented name of the same object.

    A reference to a name of ``bayes_ir`` that exists but has no page of its own (a
    private module, a column-name constant) is shown as code, unlinked. A reference to a
    name that does not exist is left unresolved: a warning, which fails the build.
    """
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    if not hasattr(env, "_bayes_ir_by_id"):
        by_id = {}
        for name in domain.objects:
            value = _import(name)
            if value is not MISSING and _is_code(value):
                by_id.setdefault(id(value), name)
        env._bayes_ir_by_id = by_id
    target = node["reftarget"].lstrip("~.")
    module, cls = node.get("py:module"), node.get("py:class")
    candidates = [target, *(f"{scope}.{target}" for scope in _scopes(node))]
    if module:
        candidates += [f"{module}.{cls}.{target}"] * bool(cls) + [f"{module}.{target}"]
    candidates.append(f"bayes_ir.{target}")
    for candidate in dict.fromkeys(candidates):
        if candidate in domain.objects:  # a constant, documented under its own module
            return domain.resolve_xref(
                env, node["refdoc"], app.builder, "obj", candidate, node, contnode
            )
        value = _import(candidate)
        if value is not MISSING and _is_code(value) and id(value) in env._bayes_ir_by_id:
            name = env._bayes_ir_by_id[id(value)]
            return domain.resolve_xref(
                env, node["refdoc"], app.builder, "obj", name, node, contnode
            )
    return contnode if any(map(_defined_in_package, candidates)) else None


def _defined_in_package(dotted: str) -> bool:
    """Whether ``dotted`` names something ``bayes_ir`` defines (not an imported library's).

    A function, class or module counts when its own module is part of ``bayes_ir``; other
    values (constants) and dataclass fields when the module or class holding them is.
    """
    value = _import(dotted)
    if value is not MISSING and _is_code(value):
        value = getattr(value, "fget", value)
        home = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", "")
        return (home or "").split(".")[0] == "bayes_ir"
    parent_name, _, attr = dotted.rpartition(".")
    try:  # the module, when a function of the same name shadows it (bayes_ir.risk.brisk)
        parent = importlib.import_module(parent_name)
    except (ImportError, ValueError):
        parent = _import(parent_name) if parent_name else MISSING
    if parent is MISSING or not (inspect.ismodule(parent) or inspect.isclass(parent)):
        return False
    fields = getattr(parent, "__dataclass_fields__", {})
    return (value is not MISSING or attr in fields) and _defined_in_package(parent_name)


#: A reference to a default in a docstring: ``:data:`bayes_ir.defaults.CI_PROB```.
_DEFAULT_REF = re.compile(r":data:`~?bayes_ir\.defaults\.([A-Z][A-Z0-9_]*)`")


def defaults_as_values(app, what, name, obj, options, lines) -> None:
    """Show a default in a docstring as its value, linked to its entry in ``bayes_ir.defaults``.

    ``(default :data:`bayes_ir.defaults.DECISION_MARGIN`)`` reads "(default 0.01)" on
    the page, the value linking to the constant's entry. A name that is not a constant
    of :mod:`bayes_ir.defaults` is left as written (the nitpicky build then fails on it),
    and so is a value whose text a role's title cannot hold.
    """
    from bayes_ir import defaults

    def value(match: re.Match) -> str:
        constant = match[1]
        shown = repr(getattr(defaults, constant, None))
        if not hasattr(defaults, constant) or any(c in shown for c in "<>`"):
            return match[0]  # not a constant, or a value a role's title cannot hold
        return f":data:`{shown} <bayes_ir.defaults.{constant}>`"

    lines[:] = [_DEFAULT_REF.sub(value, line) for line in lines]


def setup(app):
    """Register the API page writer, the MathJax copy and the CLI directive."""
    app.connect("autodoc-process-docstring", defaults_as_values)
    app.connect("config-inited", write_api_pages)  # before the sources are listed
    app.connect("config-inited", check_public_names)
    app.connect("env-check-consistency", check_pages)
    app.connect("builder-inited", check_mathjax)
    app.connect("build-finished", copy_mathjax)
    app.add_directive("bayes-ir-cli", CliReference)
    app.connect("missing-reference", resolve_alias)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
