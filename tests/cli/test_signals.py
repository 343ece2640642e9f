"""Signals and concurrent saves: a real ``fit --save`` interrupted, or run twice at once.

SIGINT must end the run with one line and status 130, SIGTERM with status 143; the saved
fit is either absent or complete (it loads), and no temporary file is left beside it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bayes_ir.hierarchical import HierarchicalFit

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"

pytestmark = [
    pytest.mark.skipif(not EXAMPLE.exists(), reason="data/example_scores.csv missing"),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


def _start(folder: Path, *extra: str, sigint=signal.SIG_DFL) -> subprocess.Popen:
    """Start ``python -m bayes_ir fit ... --save OUT.nc`` in ``folder``.

    The child starts with SIGINT delivered, as from a terminal (``sigint``), whatever the
    suite inherited: a suite started as a background job (``cmd &``, ``nohup``) has SIGINT
    ignored, and the command line rightly keeps ignoring it then
    (:func:`test_ignored_sigint_stays_ignored`).
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "bayes_ir", "fit", str(EXAMPLE), "--champion", "bm25",
            "--challengers", "chal_*", "--save", "OUT.nc", *extra]  # fmt: skip
    return subprocess.Popen(args, cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, sigint))  # fmt: skip


def _assert_nothing_partial(folder: Path) -> None:
    """OUT.nc is absent or a complete saved fit; no other file was left in the folder."""
    left = sorted(p.name for p in folder.iterdir())
    assert left in ([], ["OUT.nc"]), left
    if left:
        assert HierarchicalFit.load(folder / "OUT.nc").posterior["posterior"].sizes["chain"] > 0


def _interrupt(proc: subprocess.Popen, sig: int) -> tuple[str, str]:
    """Wait until the run is under way (its first stdout line), then send ``sig`` until it ends."""
    first = proc.stdout.readline()  # the table summary, printed before sampling
    assert first, proc.stderr.read()
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:  # pragma: no cover - the test fails below
        proc.kill()
    out, err = proc.communicate()
    return first + out, err


@pytest.mark.parametrize(
    ("sig", "status", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["SIGINT", "SIGTERM"],
)
def test_signal_during_fit_save(tmp_path, sig, status, word):
    # 20,000 draws x 4 chains: sampling and saving take seconds, so the signal lands in them
    proc = _start(tmp_path, "--draws", "20000", "--seed", "1")
    _, err = _interrupt(proc, sig)
    assert proc.returncode == status, err
    assert err.strip() == word, err
    _assert_nothing_partial(tmp_path)


def test_ignored_sigint_stays_ignored(tmp_path):
    """Started with SIGINT ignored (a background job), the run ignores Ctrl-C as Python does."""
    proc = _start(tmp_path, "--seed", "1", sigint=signal.SIG_IGN)
    assert proc.stdout.readline(), proc.stderr.read()  # under way
    for _ in range(5):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.1)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "interrupted" not in err
    assert HierarchicalFit.load(tmp_path / "OUT.nc").posterior["posterior"].sizes["chain"] == 4


@pytest.mark.slow
def test_sigint_stops_nutpie(tmp_path):
    """nutpie returns its partial draws on Ctrl-C; the run must stop instead (exit 130)."""
    proc = _start(tmp_path, "--likelihood", "skew_normal", "--draws", "20000", "--seed", "1")
    _, err = _interrupt(proc, signal.SIGINT)
    assert (proc.returncode, err.strip()) == (130, "interrupted")
    _assert_nothing_partial(tmp_path)


@pytest.mark.slow
def test_two_concurrent_saves_leave_one_complete_fit(tmp_path):
    """Two processes save to one path at once: the file is one of the two fits, whole."""
    procs = [_start(tmp_path, "--draws", "3000", "--seed", str(seed)) for seed in (1, 2)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    _assert_nothing_partial(tmp_path)
    saved = HierarchicalFit.load(tmp_path / "OUT.nc")
    assert saved.provenance["seed"] in (1, 2)
    assert saved.posterior["posterior"].sizes["draw"] == 3000
