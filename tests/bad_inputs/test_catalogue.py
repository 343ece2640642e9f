"""Run every case of the bad-input catalogue (issue 20) and hold it to its expected outcome.

Fails on a traceback (or any exception that is not a ``BayesIRError``), a hang, a wrong
exit status, a missing or extra ``error:`` line, an input file changed, or a partial
output left behind. Cases that fail today are ``xfail(strict=True)``: see
``tests/bad_inputs/cases.py`` and ``python tests/bad_inputs/list_cases.py``.
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
from bad_inputs.cases import CASES
from bad_inputs.catalogue import FIFO, Case, Link, Sparse

from bayes_ir.cli import main
from bayes_ir.errors import BayesIRError

ROOT = Path(__file__).resolve().parents[2]
#: Names a writer leaves behind when it is interrupted or writes in place.
PARTIAL = re.compile(r"(^\.|\.tmp$|~$|\.part$|^tmp|\.partial$|\.swp$)", re.IGNORECASE)
#: Memory allowed to subprocess cases that could allocate without bound (bytes).
MEMORY_LIMIT = 6 * 1024**3


class Hang(Exception):
    """Raised by SIGALRM when an in-process case runs past its timeout."""


@dataclass
class Context:
    """What a case's callable and answer check see."""

    tmp: Path
    d: Path
    out: Path
    data: Path
    stdout: str = ""
    stderr: str = ""
    code: int | None = None

    def table(self):
        """A small valid table with roles (base vs chal_*), for API cases."""
        from bad_inputs.catalogue import SYSTEMS, scores, topics

        from bayes_ir import ScoreTable

        table = ScoreTable.from_matrix(
            scores(), systems=list(SYSTEMS), topics=topics(), measure="AP", collection="c"
        )
        return table.with_roles(champion="base", challengers="chal_*")

    def fit(self):
        """A tiny hierarchical fit, made once per session."""
        global _FIT
        if _FIT is None:
            import bayes_ir

            _FIT = bayes_ir.fit(self.table(), draws=200, chains=1, seed=1)
        return _FIT


_FIT = None


def _params():
    for case in CASES:
        marks = []
        if case.slow:
            marks.append(pytest.mark.slow)
        if case.xfail:
            marks.append(pytest.mark.xfail(strict=True, reason=case.xfail))
        yield pytest.param(case, id=case.id, marks=marks)


def _write_inputs(case: Case, ctx: Context) -> None:
    for name, content in case.files.items():
        base = ctx.out if name.startswith("out/") else ctx.d
        path = base / name.removeprefix("out/")
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is FIFO:
            os.mkfifo(path)
        elif isinstance(content, Sparse):
            with open(path, "wb") as handle:
                handle.truncate(content.size)
        elif isinstance(content, Link):
            path.symlink_to(content.target.format(d=ctx.d))
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


def _snapshot(folder: Path) -> dict[str, str]:
    """Hash of every regular file under ``folder`` (FIFOs and folders listed, not read)."""
    state = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            state[key] = f"link to {os.readlink(path)}"
        elif path.is_fifo():
            state[key] = "fifo"
        elif path.is_dir():
            state[key + "/"] = "dir"
        elif path.stat().st_size > 1 << 24:  # a sparse file: its size and its first bytes
            with open(path, "rb") as handle:
                state[key] = (
                    f"{path.stat().st_size} {hashlib.sha256(handle.read(1 << 16)).hexdigest()}"
                )
        else:
            state[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def _format(arg: str, ctx: Context) -> str:
    return arg.format(d=ctx.d, o=ctx.out, data=ctx.data)


def _alarm(seconds: float):
    def handler(signum, frame):
        raise Hang(f"no answer after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    return old


def _disarm(old) -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, old)


def _run_in_process(argv: list[str], ctx: Context, capsys, timeout: float) -> None:
    capsys.readouterr()
    old = _alarm(timeout)
    try:
        main(argv)
    except SystemExit as exc:
        ctx.code = 0 if exc.code is None else exc.code
    except Hang as exc:
        pytest.fail(f"hang: {exc}")
    except Exception:  # main() must turn every failure into one line
        out, err = capsys.readouterr()
        pytest.fail(f"traceback:\n{traceback.format_exc()}\n{err}")
    finally:
        _disarm(old)
    ctx.stdout, ctx.stderr = capsys.readouterr()


def _limit_memory() -> None:
    os.setsid()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("COLUMNS", "120")
    env["PYTHONUNBUFFERED"] = "1"  # lines reach the pipe as printed (see _send_signal)
    return env


def _run_subprocess(case: Case, argv: list[str], ctx: Context) -> None:
    command = [sys.executable, "-m", "bayes_ir", *argv]
    proc = subprocess.Popen(
        command,
        cwd=ctx.tmp,
        env={**_env(), **case.env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        preexec_fn=_limit_memory if case.memory_limit else os.setsid,
    )
    streams = {"out": [], "err": []}
    started = threading.Event()
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, streams["out"], started), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, streams["err"], None), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        if case.signal is not None:
            _send_signal(proc, case, started)
        proc.wait(timeout=case.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        pytest.fail(f"hang: no answer after {case.timeout:g} s")
    for reader in readers:
        reader.join(timeout=10)
    ctx.code = proc.returncode
    ctx.stdout, ctx.stderr = "".join(streams["out"]), "".join(streams["err"])


#: A line ``fit`` prints once the table is loaded, just before sampling starts.
READY = "artifact run(s)"
#: Seconds between that line and the signal: the sampler is running by then.
SIGNAL_DELAY = 3.0


def _drain(stream, lines: list[str], ready: threading.Event | None) -> None:
    for line in stream:
        lines.append(line)
        if ready is not None and READY in line:
            ready.set()


def _send_signal(proc: subprocess.Popen, case: Case, ready: threading.Event) -> None:
    """Wait until the command is sampling, then send ``case.signal`` to it."""
    if not ready.wait(timeout=case.timeout):
        pytest.fail(f"the command never reached sampling ({READY!r} not printed)")
    time.sleep(SIGNAL_DELAY)
    if proc.poll() is not None:
        pytest.fail("the command ended before it could be interrupted")
    os.kill(proc.pid, case.signal)


def _run_api(case: Case, ctx: Context):
    old = _alarm(case.timeout)
    try:
        return case.call(ctx), None
    except Hang as exc:
        pytest.fail(f"hang: {exc}")
    except Exception as exc:
        return None, exc
    finally:
        _disarm(old)


def _check_cli_outcome(case: Case, ctx: Context) -> None:
    text = ctx.stdout + ctx.stderr
    assert "Traceback" not in text, f"traceback in the output:\n{text}"
    errors = [line for line in ctx.stderr.splitlines() if line.startswith("error:")]
    warns = [line for line in ctx.stderr.splitlines() if line.startswith("warning:")]
    shown = f"exit {ctx.code}\nstdout:\n{ctx.stdout[-3000:]}\nstderr:\n{ctx.stderr[-3000:]}"
    if case.expect == "error":
        assert ctx.code == 2, f"expected exit 2\n{shown}"
        assert len(errors) == 1, f"expected exactly one 'error:' line\n{shown}"
        assert re.search(case.match, errors[0], re.IGNORECASE), (
            f"the error line does not name {case.match!r}:\n{errors[0]}"
        )
    elif case.expect in ("ok", "warning"):
        assert ctx.code == 0, f"expected exit 0\n{shown}"
        assert not errors, shown
        if case.expect == "warning":
            assert any(re.search(case.match, w, re.IGNORECASE) for w in warns), (
                f"expected a 'warning:' line naming {case.match!r}\n{shown}"
            )
        if case.check is not None:
            case.check(ctx)
    elif case.expect == "exit":
        assert ctx.code == case.status, f"expected exit {case.status}\n{shown}"
        lines = [line for line in ctx.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, f"expected one line on stderr\n{shown}"
        if case.match:
            assert re.search(case.match, lines[0], re.IGNORECASE), shown


def _check_api_outcome(case: Case, ctx: Context, value, exc) -> None:
    if case.expect == "raises":
        if exc is None:
            pytest.fail(f"no exception; returned {value!r:.300}")
        detail = "".join(traceback.format_exception(exc))
        assert isinstance(exc, BayesIRError), f"not a BayesIRError:\n{detail}"
        assert isinstance(exc, case.exc), (
            f"expected {case.exc.__name__}, got {type(exc).__name__}: {exc}\n{detail}"
        )
        assert re.search(case.match, str(exc), re.IGNORECASE), (
            f"the message does not name {case.match!r}: {exc}"
        )
    else:
        if exc is not None:
            pytest.fail("".join(traceback.format_exception(exc)))
        if case.check is not None:
            case.check(value)


def test_catalogue_is_complete() -> None:
    """At least 150 cases, unique ids, every failing case owned, every class represented."""
    assert len(CASES) >= 150
    assert len({case.id for case in CASES}) == len(CASES)
    assert {case.kind for case in CASES} == {"file", "cli", "api", "signal"}
    assert all(case.owner for case in CASES if case.xfail)


@pytest.mark.parametrize("case", list(_params()))
def test_bad_input(case: Case, tmp_path: Path, capsys) -> None:
    ctx = Context(tmp=tmp_path, d=tmp_path / "in", out=tmp_path / "out", data=ROOT / "data")
    ctx.d.mkdir()
    ctx.out.mkdir()
    _write_inputs(case, ctx)
    inputs_before = _snapshot(ctx.d)
    outputs_before = _snapshot(ctx.out)
    data_before = _snapshot(ctx.data) if any("{data}" in a for a in case.argv) else None

    if case.kind == "api":
        value, exc = _run_api(case, ctx)
    else:
        argv = [_format(a, ctx) for a in case.argv]
        if case.subprocess or case.kind == "signal":
            _run_subprocess(case, argv, ctx)
        else:
            _run_in_process(argv, ctx, capsys, case.timeout)
    # a damaged input is the worst outcome: said before what the command printed
    assert _snapshot(ctx.d) == inputs_before, "an input file or the input folder was changed"
    if data_before is not None:
        assert _snapshot(ctx.data) == data_before, "a file of data/ was changed"
    if case.kind == "api":
        _check_api_outcome(case, ctx, value, exc)
    else:
        _check_cli_outcome(case, ctx)
    after = _snapshot(ctx.out)
    leftovers = [name for name in after if PARTIAL.search(Path(name.rstrip("/")).name)]
    assert not leftovers, f"partial or temporary files left behind: {leftovers}"
    if ctx.code not in (0, None):
        assert after == outputs_before, (
            f"a failed run left output behind: {sorted(set(after) - set(outputs_before))}"
        )
