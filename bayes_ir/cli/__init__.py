"""The ``bayes-ir`` command line: one sub-command per analysis, all sharing one input vocabulary.

Every command reads scores with the same options (``--input-format``, ``--measure``,
``--collection``, roles) and writes its result table with ``--output FILE`` as CSV,
JSON, Markdown or LaTeX by the extension. Errors in the input print one line,
``error: ...``, and exit with status 2.
"""

from __future__ import annotations

import sys
import warnings

from rich.markup import escape
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

from bayes_ir.cli import decide as _decide  # noqa: F401  (registers the command)
from bayes_ir.cli import fit as _fit  # noqa: F401  (registers the command)
from bayes_ir.cli import glm as _glm  # noqa: F401  (registers the command)
from bayes_ir.cli import inspect as _inspect  # noqa: F401  (registers the command)
from bayes_ir.cli import meta as _meta  # noqa: F401  (registers the command)
from bayes_ir.cli import reliability as _reliability  # noqa: F401  (registers the command)
from bayes_ir.cli import risk as _risk  # noqa: F401  (registers the command)
from bayes_ir.cli._app import app, cli_wording, console_err
from bayes_ir.errors import BayesIRError, BayesIRWarning


def _error(message: str) -> None:
    text = " ".join(cli_wording(message).split())  # one line, whatever the message held
    console_err.print(f"[bold red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)
    sys.exit(2)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Print the package's own warnings as one ``warning: ...`` line; others as Python does."""
    if issubclass(category, BayesIRWarning):
        text = " ".join(cli_wording(str(message)).split())
        console_err.print(f"[yellow]warning:[/] {escape(text)}", highlight=False, soft_wrap=True)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


_python_showwarning = warnings.showwarning


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; exit 2 with a one-line message on bad input, never a traceback.

    Usage errors (unknown option, missing argument, a value of the wrong type) are
    reported the same way, ``error: ...`` on one line, with the command's ``--help``.
    """
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"pytensor(\.|$)")
    warnings.showwarning = _show_warning
    try:
        code = app(args=argv, prog_name="bayes-ir", standalone_mode=False)
    except NoArgsIsHelpError as exc:  # bare ``bayes-ir`` or ``bayes-ir fit``: show the help
        console_err.print(exc.format_message(), highlight=False, markup=False)
        sys.exit(2)
    except UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        _error(exc.format_message() + hint)
    except ClickException as exc:
        _error(exc.format_message())
    except BayesIRError as exc:
        _error(str(exc))
    except FileNotFoundError as exc:
        _error(f"{exc.filename}: file not found")
    except KeyboardInterrupt:
        console_err.print("interrupted", highlight=False)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


__all__ = ["app", "cli_wording", "main"]
