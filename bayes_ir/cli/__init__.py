"""The ``bayes-ir`` command line: one sub-command per analysis, all sharing one input vocabulary.

Every command reads scores with the same options (``--input-format``, ``--measure``,
``--collection``, roles) and writes its result table with ``--output FILE`` as CSV,
JSON, Markdown or LaTeX by the extension. Errors in the input print one line,
``error: ...``, and exit with status 2.
"""

from __future__ import annotations

import sys

from rich.markup import escape

from bayes_ir.cli import fit as _fit  # noqa: F401  (registers the command)
from bayes_ir.cli import glm as _glm  # noqa: F401  (registers the command)
from bayes_ir.cli import inspect as _inspect  # noqa: F401  (registers the command)
from bayes_ir.cli import meta as _meta  # noqa: F401  (registers the command)
from bayes_ir.cli import reliability as _reliability  # noqa: F401  (registers the command)
from bayes_ir.cli import risk as _risk  # noqa: F401  (registers the command)
from bayes_ir.cli._app import app, console_err
from bayes_ir.errors import BayesIRError


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; exit 2 with a one-line message on bad input, never a traceback."""
    try:
        app(args=argv, prog_name="bayes-ir")
    except BayesIRError as exc:
        console_err.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        sys.exit(2)
    except FileNotFoundError as exc:
        console_err.print(f"[bold red]error:[/] {exc.filename}: file not found", highlight=False)
        sys.exit(2)


__all__ = ["app", "main"]
