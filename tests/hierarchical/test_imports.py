"""``bayes_ir.hierarchical`` loads what every fit needs and nothing more (issue 33).

PyMC and PyTensor load only when a model is built with PyMC (NUTS on the PyMC model),
numba only when a compiled sampler or the diagnostics run, scipy.stats and arviz_stats
only where a function needs them: the exact and Gibbs paths need none of them to start.
"""

from __future__ import annotations

import subprocess
import sys

LATER = ("pymc", "pytensor", "nutpie", "numba", "scipy.stats", "arviz_stats", "matplotlib",
         "statsmodels")  # fmt: skip


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint('LOADED:', *(m for m in {LATER!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    line = [x for x in done.stdout.splitlines() if x.startswith("LOADED:")][-1]
    return set(line.split()[1:])


def test_importing_the_methods_loads_no_sampler_library():
    assert _loaded_after("import bayes_ir.hierarchical, bayes_ir.decision") == set()


def test_an_exact_fit_needs_neither_pymc_nor_scipy_stats():
    code = (
        "import numpy as np\nfrom bayes_ir.table import ScoreTable\n"
        "from bayes_ir.hierarchical import fit\n"
        "rng = np.random.default_rng(0)\n"
        "y = 0.4 + rng.normal(0, 0.1, (8, 1)) + rng.normal(0, 0.05, (8, 5))\n"
        "t = ScoreTable.from_matrix(y, systems=list('abcde'), measure='sim')\n"
        "f = fit(t.with_roles(champion='a', challengers=['b']), draws=200, seed=1)\n"
        "print(f.summary())"
    )
    assert _loaded_after(code) == {"numba"}  # the diagnostics' compiled loop
