"""Each compiled function is compiled for one signature on a fresh machine.

A call from compiled code with a constant integer argument (``f(x, -2)``, ``f(x, N)`` for a
global int ``N``) types it ``Literal[int]``, and numba compiles the callee for that literal
beside its ``int64`` version: seconds of a fresh machine's first fit for nothing (the
kernels are compiled once per machine and cached on disk, so a warm cache hides it). The
test compiles the diagnostics, the skew-normal kernel and the families' kernels with an empty
cache in a child process and lists every function of the package numba compiled more
than once. Slow: the cold compilation takes about a minute.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

#: Compiled for several signatures on purpose: the degree of a table is a literal, so each
#: table's Horner loop is unrolled (``families._kernel.pieces_pair``); the draws of a block
#: are a C-contiguous array or a strided slice of one (``diagnostics_kernel.split_keys``).
ON_PURPOSE = {"_kernel.pieces_pair", "diagnostics_kernel.split_keys"}

CHILD = r"""
import json, collections
import numpy as np
from numba.core import event
record = event.RecordingListener()
event.register("numba:compile", record)
from bayes_ir.hierarchical.diagnostics import draw_diagnostics
from bayes_ir.hierarchical import skewnormal_kernel as skew
from bayes_ir.hierarchical.families import binomial_kernel, gaussian_kernel, zoib_kernel  # noqa
draw_diagnostics(np.random.default_rng(0).standard_normal((4, 300, 3)))
y = np.random.default_rng(1).uniform(0.1, 0.9, (6, 4))
data = skew.pack(y, (0.5, 1.0, 1.0, 1.0, 1.0, 0.99, 1.0))
skew.logp_and_grad(np.zeros(skew.N_HYPER + 6 - 1 + 4 - 1), data)
signatures = collections.defaultdict(set)
for _, e in record.buffer:
    d = e.data.get("dispatcher")
    if e.is_start and d is not None and d.py_func.__module__.startswith("bayes_ir"):
        name = d.py_func.__module__.rsplit(".", 1)[-1] + "." + d.py_func.__qualname__
        signatures[name].add(str(e.data.get("args")))
print(json.dumps({k: sorted(v) for k, v in signatures.items()}))
"""


def test_no_function_is_compiled_twice(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    )
    signatures = json.loads(out.stdout.strip().splitlines()[-1])
    expected = {"diagnostics_kernel._lag_sums", "skewnormal_kernel._logp_grad",
                "skewnormal_kernel._sign_loglik", "_kernel._effect_prior",
                "gaussian_kernel._cells", "_kernel.exponential_log"}  # fmt: skip
    assert expected <= set(signatures), sorted(signatures)
    twice = {k: v for k, v in signatures.items() if len(v) > 1 and k not in ON_PURPOSE}
    assert not twice, twice
