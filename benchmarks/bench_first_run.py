"""A fresh machine's first commands: compiling the numba kernels, against a warm cache.

The kernels are compiled once per machine and cached on disk (numba's ``cache=True``), so
the first fit after an install pays for their compilation. Each command runs twice in a
fresh process with ``NUMBA_CACHE_DIR`` pointing at a new empty folder, the first run
(cold: compiles and fills the cache), then the second (warm: loads the cache, the
reference), and the script prints both wall times and their difference, the compilation.

Commands: the README's main job without figures (exact sampler and diagnostics), a
skew-normal fit of rb04 and a zoib fit of rb04 (NUTS on the package's kernels; 500 draws
and 300 warm-up draws per chain, so that the sampling does not hide the compilation).

Run: ``python benchmarks/bench_first_run.py`` (``../shared/data`` or ``BAYES_IR_DATA`` for
rb04). Figures are for whatever machine runs it; the load average is printed first.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("BAYES_IR_DATA", ROOT.parent / "shared" / "data"))
RB04 = str(DATA / "bayesian_risk" / "rb04_data.csv")
FIT = [sys.executable, "-m", "bayes_ir", "fit"]
SHORT = ["--draws", "500", "--tune", "300", "-c", "Champion", "-C", "Chal. 1"]
COMMANDS = {
    "README main job (no figures)": [*FIT, str(ROOT / "data" / "example_scores.csv"),
                                     "--champion", "bm25", "--challengers", "chal_*"],
    "rb04 skew-normal, 4 x 500": [*FIT, RB04, "--likelihood", "skew_normal", *SHORT],
    "rb04 zoib, 4 x 500": [*FIT, RB04, "--likelihood", "zoib", *SHORT],
}  # fmt: skip


def _wall(command: list[str], cache: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT, env=env)
    return time.perf_counter() - start


def main() -> None:
    """Print one row per command: cold, warm (reference) and the compilation."""
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'command':<32} {'cold s':>7} {'warm s':>7} {'compile s':>10}")
    for label, command in COMMANDS.items():
        with tempfile.TemporaryDirectory() as cache:
            cold = _wall(command, cache)
            warm = _wall(command, cache)
        print(f"{label:<32} {cold:>7.1f} {warm:>7.1f} {cold - warm:>10.1f}", flush=True)


if __name__ == "__main__":
    main()
