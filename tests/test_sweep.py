"""sweep(): default processes, any Executor, objects with get_executor(); order preserved."""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor

from bayes_ir.sweep import sweep


def _square(x: int) -> int:
    return x * x


def test_default_process_pool_preserves_order():
    # Worker processes (forkserver) import the function by name: use an importable one.
    items = list(range(12))[::-1]
    assert sweep(math.factorial, items, max_workers=2) == [math.factorial(x) for x in items]


def test_single_item_and_one_worker_run_inline():
    seen = []

    def record(x):  # a closure: not picklable, so it must run in this process
        seen.append(threading.get_ident())
        return x + 1

    assert sweep(record, [1]) == [2]
    assert sweep(record, [1, 2, 3], max_workers=1) == [2, 3, 4]
    assert set(seen) == {threading.get_ident()}
    assert sweep(record, []) == []


def test_thread_pool_executor():
    with ThreadPoolExecutor(max_workers=3) as pool:
        assert sweep(_square, range(20), executor=pool) == [x * x for x in range(20)]


class _ClientLike:
    """Mimics dask.distributed.Client: get_executor() returns an Executor."""

    def __init__(self):
        self.calls = 0
        self.pool = ThreadPoolExecutor(max_workers=2)

    def get_executor(self, **kwargs):
        self.calls += 1
        return self.pool


def test_object_with_get_executor():
    client = _ClientLike()
    try:
        assert sweep(_square, [3, 1, 2], executor=client) == [9, 1, 4]
        assert client.calls == 1
    finally:
        client.pool.shutdown()


def _wait_or_fail(item: tuple[int, str]) -> int:
    """Item 0 fails once the others have started; the others would run for ten minutes."""
    import os
    import time
    from pathlib import Path

    index, folder = item
    if index:
        Path(folder, f"{os.getpid()}.pid").write_text("")
        time.sleep(600)
        return index
    while len(list(Path(folder).glob("*.pid"))) < 2:
        time.sleep(0.05)
    raise RuntimeError("item 0 failed")


def _alive(pid: int) -> bool:
    """A running (not zombie) process."""
    from pathlib import Path

    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def test_failure_stops_the_workers(tmp_path):
    """An exception (as Ctrl-C or SIGTERM would be) cancels the sweep and ends its workers."""
    import sys
    import time

    import pytest

    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc")
    items = [(i, str(tmp_path)) for i in range(3)]
    with pytest.raises(RuntimeError, match="item 0 failed"):
        sweep(_wait_or_fail, items, max_workers=3)  # returns without the 600 s sleeps
    pids = [int(p.stem) for p in tmp_path.glob("*.pid")]
    assert len(pids) == 2
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in pids)
