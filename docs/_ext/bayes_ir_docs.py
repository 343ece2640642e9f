"""Sphinx extension of the bayes_ir site: generated API index pages and the CLI reference.

* On ``config-inited`` it writes ``docs/api/<package>.rst`` for ``bayes_ir`` and each
  public subpackage, one autosummary entry per public name (the package's ``__all__``, or
  for a package without one, the public functions and classes its modules define), so a
  name added to the package gets its page without editing the docs.
* The ``bayes-ir-cli`` directive renders ``bayes-ir COMMAND --help`` for every command of
  the typer app, walked with :func:`typer.main.get_command`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

#: The packages that get an API page, with the sentence that introduces each.
PACKAGES = {
    "bayes_ir": "The names most analyses need, re-exported at the top level.",
    "bayes_ir.hierarchical": "The Bayesian hierarchical model: fit, diagnostics, contrasts.",
    "bayes_ir.decision": "The decision rule: deploy, keep the champion, or collect more data.",
    "bayes_ir.risk": "Risk measures: URisk, TRisk, ZRisk, BCa, the one-to-one model, BRisk.",
    "bayes_ir.frequentist": "Meta-analysis, GLMs and paired tests.",
    "bayes_ir.reliability": "Ranking reliability: expected correlation with the true ranking.",
    "bayes_ir.report": "Tables in CSV, JSON, Markdown and LaTeX; the deployment review.",
    "bayes_ir.plots": "Figures: each function draws one result object with matplotlib.",
}


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
    value = importlib.import_module(package)
    for part in name.split("."):
        value = getattr(value, part)
    return "." not in name and getattr(top, name, None) is value


def _api_page(package: str, intro: str) -> str:
    """Return the rst of one package's page; a name ``bayes_ir`` re-exports has one page."""
    top = importlib.import_module("bayes_ir")
    names = public_names(package)
    shared = [] if package == "bayes_ir" else [n for n in names if _same_object(package, n, top)]
    title = f"``{package}``"
    lines = [title, "=" * len(title), "", f".. currentmodule:: {package}", "", intro, ""]
    lines += [".. autosummary::", "   :toctree: generated/", ""]
    lines += [f"   {name}" for name in names if name not in shared]
    if shared:
        lines += ["", "Also re-exported as ``bayes_ir.NAME`` (documented there):", ""]
        lines += [".. currentmodule:: bayes_ir", "", ".. autosummary::", ""]
        lines += [f"   {name}" for name in shared]
    return "\n".join(lines) + "\n"


def write_api_pages(app, config=None) -> None:
    """Write one autosummary page per package into ``docs/api/`` (only when changed)."""
    out = Path(app.srcdir) / "api"
    out.mkdir(exist_ok=True)
    for package, intro in PACKAGES.items():
        path = out / f"{package}.rst"
        text = _api_page(package, intro)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def command_help(args: list[str]) -> str:
    """Return the plain-text ``bayes-ir ARGS`` output, 100 columns wide, no colour."""
    from typer.testing import CliRunner

    from bayes_ir.cli import app

    env = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    result = CliRunner().invoke(app, args, terminal_width=100, env=env)
    return "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())


class CliReference(Directive):
    """``.. bayes-ir-cli::``: a section per command with its ``--help`` output."""

    has_content = False

    def run(self):
        """Render the top-level help, then each command's, in the app's order."""
        import typer

        from bayes_ir.cli import app

        group = typer.main.get_command(app)
        out = [nodes.literal_block(text=command_help(["--help"]), language="text")]
        for name in group.commands:
            section = nodes.section(ids=[f"cli-{name}"], names=[f"cli-{name}"])
            self.state.document.note_explicit_target(section)  # {ref}`cli-NAME` reaches it
            section += nodes.title(text=f"bayes-ir {name}")
            text = command_help([name, "--help"])
            if not re.search(rf"Usage: bayes-ir {name}\b", text):
                raise self.error(f"bayes-ir {name} --help printed no usage line:\n{text}")
            section += nodes.literal_block(text=text, language="text")
            out.append(section)
        return out


def setup(app):
    """Register the API page writer and the CLI directive."""
    app.connect("config-inited", write_api_pages)  # before the sources are listed
    app.add_directive("bayes-ir-cli", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
