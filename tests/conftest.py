"""Shared fixtures: where the real evaluation data lives, and small synthetic tables."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Byte code is cached for the suite whatever the shell says (PYTHONDONTWRITEBYTECODE=1 is set
# on CI machines): otherwise each test process rewrites the asserts of all test modules again
# (about 8 s of CPU per pytest worker) and each command the tests start compiles bayes_ir from
# source. Set before bayes_ir and the test modules are imported; child processes inherit it.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from bayes_ir.table import ScoreTable  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# Property-based tests draw the same examples on every run and machine (CI included), so a
# failure reproduces; HYPOTHESIS_PROFILE=explore draws new ones, to look for new failures.
settings.register_profile("reproducible", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reproducible"))


def pytest_configure(config):
    """``pytest -n N`` shares the tests out with xdist's ``worksteal`` scheduler, not ``load``.

    ``load`` hands each worker a batch of tests that grows with the tests still unsent, and
    never takes one back: the last batches held up to a minute of fits (the ``risk`` and
    ``report`` modules) on one worker while the other had finished (a 34 s tail of the
    default suite on 2 cores). ``worksteal`` gives each worker a contiguous half (the tests
    of a module stay together, so module fixtures are set up once) and moves the rest of a
    busy worker's queue to an idle one. An explicit ``--dist`` is left as given.
    """
    explicit = any(arg == "-d" or arg.startswith("--dist") for arg in config.invocation_params.args)
    if getattr(config.option, "dist", "no") == "load" and not explicit:
        config.option.dist = "worksteal"
    _preload_the_sweep_workers()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Every test that runs R (it uses the ``rscript`` fixture) belongs to the slow suite.

    These tests re-run R (lme4, metafor, multcomp, brms) to show that the outputs stored in
    ``tests/results`` are current; the default suite checks the package against those
    stored outputs. Starting R and its packages takes 3 to 10 s a test, about half a minute
    of the default suite's five. Runs before the ``-m`` deselection (``tryfirst``).
    """
    for item in items:
        if "rscript" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


#: Modules the forkserver of :func:`bayes_ir.sweep.sweep` imports once per test process.
SWEEP_PRELOAD = ("__main__", "bayes_ir.hierarchical", "bayes_ir.frequentist.glm",
                 "bayes_ir.risk", "bayes_ir.reliability")  # fmt: skip


def _preload_the_sweep_workers():
    """The local process pools of the sweeps fork workers that have the package imported.

    Each worker of a sweep's default pool (forkserver) imported bayes_ir, its NumPy,
    SciPy and pandas stack and statsmodels again when it unpickled its first task: 2 to 4 s
    of CPU per worker, two workers per sweep, in every test of several blocks, r levels or
    artifact counts (``fit --sweep``, ``glm`` and ``review`` of several measures).
    The forkserver imports them once (``__main__`` first, as by default) and each worker
    is a fork of it. Only the start-up changes: the workers still ignore SIGINT and are
    stopped as before (:func:`bayes_ir.sweep.sweep`).
    """
    import multiprocessing

    multiprocessing.set_forkserver_preload(list(SWEEP_PRELOAD))


@pytest.fixture(scope="session", autouse=True)
def _cli_command_built_once():
    """Build the click command of ``bayes_ir.cli.app`` once per test process.

    typer turns the app into a click command tree on every call (``typer.main.get_command``,
    about 40 ms: every command's signature is inspected again), and the in-process CLI
    tests call it about a thousand times. The tree depends on the app alone, which no test
    changes, and click parses each run into a new context; a real ``bayes-ir`` process
    builds it once, as here. Other typer apps are built as before.
    """
    import typer.main
    import typer.testing

    build = typer.main.get_command
    built = {}

    def get_command(typer_instance):
        from bayes_ir.cli._app import app

        if typer_instance is not app:
            return build(typer_instance)
        if "app" not in built:
            built["app"] = build(app)
        return built["app"]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(typer.main, "get_command", get_command)
        patch.setattr(typer.testing, "_get_command", get_command)
        yield


def shared_data_dir() -> Path | None:
    """``$BAYES_IR_DATA`` or ``../shared/data`` next to the project, if it exists."""
    env = os.environ.get("BAYES_IR_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT.parent / "shared" / "data")
    for path in candidates:
        if path.is_dir():
            return path
    return None


@pytest.fixture(scope="session")
def brms_rscript(rscript) -> str:
    """``Rscript`` for re-running brms, which compiles Stan and takes 15 to 60 minutes a case:
    only when asked (``BAYES_IR_LIVE_BRMS=1``) and brms is installed. The stored brms runs
    (``tests/results``) are checked on every run; this re-run refreshes them."""
    import subprocess

    if os.environ.get("BAYES_IR_LIVE_BRMS") != "1":
        pytest.skip("re-running brms takes 15-60 min a case: set BAYES_IR_LIVE_BRMS=1 to run it")
    check = subprocess.run([rscript, "-e", "library(brms)"], capture_output=True, text=True)
    if check.returncode != 0:
        pytest.skip("R package brms is not installed (apt-get install r-cran-brms)")
    return rscript


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of the real data folder; skips the test with the reason when it is absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip(
            "real evaluation data not found: set BAYES_IR_DATA or place shared/data beside the repo"
        )
    return path


@pytest.fixture
def small_table() -> ScoreTable:
    """A complete 12-topic x 5-system table in [0, 1], seeded, with roles."""
    rng = np.random.default_rng(1)
    topic = rng.normal(0, 0.15, size=12)[:, None]
    system = np.array([0.0, 0.03, -0.02, 0.05, -0.04])[None, :]
    scores = np.clip(0.4 + topic + system + rng.normal(0, 0.05, size=(12, 5)), 0, 1)
    table = ScoreTable.from_matrix(
        scores,
        systems=["bm25", "chal_a", "chal_b", "run1", "run2"],
        topics=[str(301 + i) for i in range(12)],
        measure="AP",
        collection="toy",
    )
    return table.with_roles(champion="bm25", challengers="chal_*")


@pytest.fixture(scope="session")
def rscript() -> str:
    """Path of ``Rscript`` for live cross-checks; skips when R is not installed."""
    import shutil

    path = shutil.which("Rscript")
    if path is None:
        pytest.skip("R is not installed (apt-get install r-cran-metafor r-cran-lme4)")
    return path
