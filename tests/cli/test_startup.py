"""The command line starts without the heavy libraries: they load when a command needs them."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("pymc", "pytensor", "statsmodels", "matplotlib", "scipy", "pandas", "arviz", "jinja2")


def _loaded_after(code: str) -> set[str]:
    probe = (
        f"{code}\nimport sys\n"
        f"print('LOADED:', *(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED:")][-1]
    return set(line.split()[1:])


@pytest.mark.parametrize(
    "code", ["import bayes_ir.cli", "import bayes_ir", "import bayes_ir.__main__"]
)
def test_importing_the_cli_loads_no_heavy_library(code):
    assert _loaded_after(code) == set()


def test_help_runs_without_the_heavy_libraries():
    code = (
        "import sys\nfrom bayes_ir.cli import main\nsys.argv = ['bayes-ir', '--help']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
    )
    assert _loaded_after(code) == set()


def test_the_lazy_names_still_resolve():
    import bayes_ir

    assert bayes_ir.ScoreTable.__name__ == "ScoreTable"
    assert callable(bayes_ir.read_scores) and callable(bayes_ir.sweep)
    assert set(bayes_ir.__all__) <= set(dir(bayes_ir))
    for name in bayes_ir.__all__:
        assert getattr(bayes_ir, name) is not None, name
