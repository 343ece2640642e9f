"""Progress of long steps: silent by default, told to the installed reporter, thread-safe."""

from __future__ import annotations

import math
import threading

import pytest

from bayes_ir import progress
from bayes_ir.sweep import sweep


class Recorder:
    """A reporter that keeps every call."""

    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()

    def start(self, label, total):
        with self.lock:
            self.calls.append(("start", label, total))
            return len(self.calls)

    def update(self, handle, completed, total=None):
        with self.lock:
            self.calls.append(("update", handle, completed, total))

    def finish(self, handle):
        with self.lock:
            self.calls.append(("finish", handle))


def test_no_reporter_no_output(capsys):
    with progress.task("quiet", total=2) as step:
        step.advance()
        step.advance()
    assert step.completed == 2
    assert capsys.readouterr() == ("", "")


def test_sweep_counts_every_item_once():
    recorder = Recorder()
    with progress.reporting(recorder):
        assert sweep(math.factorial, [5, 3, 4], max_workers=1, label="factorials") == [120, 6, 24]
    assert recorder.calls[0] == ("start", "factorials", 3)
    counts = [c[2] for c in recorder.calls if c[0] == "update"]
    assert counts == [1.0, 2.0, 3.0]
    assert recorder.calls[-1] == ("finish", 1)


def test_sweep_in_processes_counts_every_item():
    recorder = Recorder()
    with progress.reporting(recorder):
        sweep(math.factorial, list(range(6)), max_workers=2, label="pool")
    counts = [c[2] for c in recorder.calls if c[0] == "update"]
    assert sorted(counts) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_reporter_is_scoped_to_the_block():
    recorder = Recorder()
    with progress.reporting(recorder):
        with progress.task("inside"):
            pass
    with progress.task("outside"):
        pass
    assert [c[1] for c in recorder.calls if c[0] == "start"] == ["inside"]


def test_a_failed_step_is_finished():
    recorder = Recorder()
    with progress.reporting(recorder), pytest.raises(ValueError):
        with progress.task("boom", total=1):
            raise ValueError("x")
    assert recorder.calls[-1][0] == "finish"


@pytest.mark.filterwarnings("ignore::bayes_ir.errors.ConvergenceWarning")  # 200 draws
def test_nutpie_sampling_reports_its_draws():
    """The draws counted by nutpie's callback reach chains x (tune + draws)."""
    import bayes_ir

    table = bayes_ir.read_scores("data/example_scores.csv").with_roles(
        champion="bm25", challengers="chal_*"
    )
    table = table.select(systems=["bm25", "chal_dense", "chal_fusion", "trec_run01"])
    recorder = Recorder()
    with progress.reporting(recorder):
        bayes_ir.fit(table, likelihood="skew_normal", chains=2, draws=200, tune=200, seed=3)
    starts = [c for c in recorder.calls if c[0] == "start"]
    assert starts[0][1] == "sampling the skew-normal model (NUTS)"
    last = [c for c in recorder.calls if c[0] == "update"][-1]
    assert last[2] == last[3] == 2 * (200 + 200)
