"""The ``bayes-ir`` command line: one sub-command per analysis, all sharing one input vocabulary.

Every command reads scores with the same options (``--input-format``, ``--measure``,
``--collection``, roles) and writes its result table with ``--output FILE`` as CSV,
JSON, Markdown or LaTeX by the extension. Errors in the input print one line,
``error: ...``, and exit with status 2.
"""

from __future__ import annotations

import gc
import signal
import sys
import threading
import warnings

from rich.markup import escape
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

from bayes_ir.cli import decide as _decide  # noqa: F401  (registers the command)
from bayes_ir.cli import fit as _fit  # noqa: F401  (registers the command)
from bayes_ir.cli import glm as _glm  # noqa: F401  (registers the command)
from bayes_ir.cli import inspect as _inspect  # noqa: F401  (registers the command)
from bayes_ir.cli import meta as _meta  # noqa: F401  (registers the command)
from bayes_ir.cli import rank as _rank  # noqa: F401  (registers the command)
from bayes_ir.cli import reliability as _reliability  # noqa: F401  (registers the command)
from bayes_ir.cli import review as _review  # noqa: F401  (registers the command)
from bayes_ir.cli import risk as _risk  # noqa: F401  (registers the command)
from bayes_ir.cli import test as _test  # noqa: F401  (registers the command)
from bayes_ir.cli._app import app, cli_wording, console_err, forget_shown, warn
from bayes_ir.errors import BayesIRError, BayesIRWarning
from bayes_ir.files import reset_inputs


def _error(message: str) -> None:
    text = " ".join(cli_wording(message).split())  # one line, whatever the message held
    console_err.print(f"[bold red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)
    sys.exit(2)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Print the package's own warnings as one ``warning: ...`` line; others as Python does."""
    if issubclass(category, BayesIRWarning):
        warn(str(message))
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


_python_showwarning = warnings.showwarning


class _Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM: unwinds like Ctrl-C (temporary files are removed on the way)."""


#: The first stop signal received by :func:`main` (0: none).
_signal_received = 0


def _stop(signum: int, frame) -> None:
    """Signal handler: raise :class:`_Stopped` once; later signals only wait for the unwinding."""
    global _signal_received
    if not _signal_received:
        _signal_received = signum
        raise _Stopped(signum)


def _stop_signals(handler) -> dict:
    """Install ``handler`` for SIGINT and SIGTERM; return the previous handlers.

    Only in the main thread (Python's rule), and not for a signal the parent told us to
    ignore (a background job or ``nohup`` keeps ignoring Ctrl-C, as Python itself does).
    """
    if threading.current_thread() is not threading.main_thread():
        return {}
    wanted = [s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) != signal.SIG_IGN]
    return {sig: signal.signal(sig, handler) for sig in wanted}


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; exit 2 with a one-line message on bad input, never a traceback.

    Usage errors (unknown option, missing argument, a value of the wrong type) are
    reported the same way, ``error: ...`` on one line, with the command's ``--help``.
    SIGINT (Ctrl-C) and SIGTERM end the run with one line, ``interrupted`` or
    ``terminated``, and exit status 130 or 143 (128 + the signal number); files being
    written are left as they were (:mod:`bayes_ir.files`) and sweep workers are stopped.
    """
    global _signal_received
    _escape_unencodable()
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"pytensor(\.|$)")
    warnings.showwarning = _show_warning
    _signal_received = 0
    previous = _stop_signals(_stop)
    try:
        code = _run(argv)
    finally:
        for sig, handler in previous.items():  # after a stop, later signals are ignored
            signal.signal(sig, signal.SIG_IGN if _signal_received else handler)
    if argv is None:  # the console script: the process ends here
        # its objects need no collection; the interpreter's last collections over them
        # (numba, pandas, the fit) took 0.5-0.8 s after the output was complete
        gc.freeze()
    sys.exit(code)


def _escape_unencodable() -> None:
    r"""Let a terminal whose encoding is not Unicode show any name, as an escape.

    With ``PYTHONIOENCODING=ascii`` (or a Latin-1 locale) a name such as ``système`` or a
    table mark could not be written; such characters are printed as ``\xe8`` escapes
    instead of stopping the run (rich draws its tables with ASCII there already).
    """
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "utf-8"
        try:
            "\u00e8\u25c0\U0001f680".encode(encoding)
        except (UnicodeEncodeError, LookupError):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                try:
                    reconfigure(errors="backslashreplace")
                except (ValueError, OSError):  # a stream that cannot change: leave it
                    pass


def _run(argv: list[str] | None) -> int:
    """Run the app; return its exit status (exit 2 on bad input, 128 + N on signal N)."""
    reset_inputs()
    forget_shown()
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
    except OSError as exc:  # the file system refused (name too long, no space, ...): say where
        where = f"{exc.filename}: " if exc.filename else ""
        _error(f"{where}{exc.strerror or exc}")
    except KeyboardInterrupt:
        return _interrupted(_signal_received or signal.SIGINT)
    if _signal_received:  # a library caught the interrupt and carried on: still report it
        return _interrupted(_signal_received)
    return code if isinstance(code, int) else 0


def _interrupted(signum: int) -> int:
    """Say how the run ended (one line on stderr) and return 128 + ``signum``."""
    word = "terminated" if signum == signal.SIGTERM else "interrupted"
    console_err.print(word, highlight=False, markup=False)
    return 128 + signum


__all__ = ["app", "cli_wording", "main"]
