"""Sweeps from scripts and on a real Dask cluster: same results as the local run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from bayes_ir.sweep import sweep


def _script(tmp_path, body: str) -> subprocess.CompletedProcess:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)  # fmt: skip


def test_an_unguarded_script_runs_the_package_sweeps(tmp_path):
    """No ``if __name__ == "__main__":``: the workers do not run the script again."""
    done = _script(
        tmp_path,
        """
        import math
        import bayes_ir
        print(bayes_ir.sweep(math.factorial, [5, 3, 4], max_workers=2))
    """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[120, 6, 24]"


def test_an_unguarded_script_sweeping_its_own_function_is_told_what_to_do(tmp_path):
    done = _script(
        tmp_path,
        """
        import bayes_ir
        def double(x):
            return 2 * x
        print(bayes_ir.sweep(double, [1, 2, 3], max_workers=2))
    """,
    )
    assert done.returncode != 0
    assert 'if __name__ == "__main__":' in done.stderr


def test_a_guarded_script_sweeping_its_own_function_works(tmp_path):
    done = _script(
        tmp_path,
        """
        import bayes_ir
        def double(x):
            return 2 * x
        if __name__ == "__main__":
            print(bayes_ir.sweep(double, [1, 2, 3], max_workers=2))
    """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[2, 4, 6]"


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as local:  # fmt: skip
        # not the default scheduler: under xdist other modules' tests share this worker
        # while the fixture lives, and xarray's netCDF writer would send them to it
        with distributed.Client(local, set_as_default=False) as client:
            yield client


def test_reliability_simulation_on_a_dask_cluster_equals_the_local_run(cluster):
    import pandas as pd

    import bayes_ir
    from bayes_ir.reliability import simulation_study

    table = bayes_ir.read_scores("data/example_scores.csv")
    options = {"trials": 4, "sizes": (10, 20), "estimators": ("ML",), "seed": 11}
    local = simulation_study(table, **options)
    remote = simulation_study(table, executor=cluster, **options)
    pd.testing.assert_frame_equal(local.records, remote.records)


def test_glm_cli_on_a_dask_cluster_equals_the_local_run(cluster, tmp_path, capsys):
    import pandas as pd

    from bayes_ir.cli import main

    address = cluster.scheduler.address
    args = ["glm", "data/example_scores.csv", "--links", "logit,probit,identity", "-q"]
    for name, extra in (("local", []), ("dask", ["--executor", "dask", "--scheduler", address])):
        with pytest.raises(SystemExit) as stop:
            main([*args, *extra, "-o", str(tmp_path / f"{name}.csv")])
        assert stop.value.code == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "local.csv"),
                                  pd.read_csv(tmp_path / "dask.csv"))  # fmt: skip


def test_dask_without_a_scheduler_is_one_line(monkeypatch, capsys):
    from bayes_ir.cli import main

    monkeypatch.delenv("BAYES_IR_SCHEDULER", raising=False)
    with pytest.raises(SystemExit) as stop:
        main(["glm", "data/example_scores.csv", "--executor", "dask"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "--scheduler" in err and len(err.strip().splitlines()) == 1


def test_local_sweep_unchanged_by_the_executor_path():
    assert sweep(abs, [-2, 3, -1], max_workers=2) == [2, 3, 1]


@pytest.mark.parametrize("address", ["garbage", "tcp://", "udp://127.0.0.1:8786"])
def test_a_scheduler_that_is_not_an_address_is_one_line(address, capsys):
    pytest.importorskip("distributed")
    from bayes_ir.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["glm", "data/example_scores.csv", "--executor", "dask", "--scheduler", address])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"error: --scheduler {address}: cannot connect")
    import dask

    # the client that failed to connect left no default scheduler behind: xarray's netCDF
    # writer, later in the same process, asked dask for it and failed
    assert dask.config.get("scheduler", None) is None
