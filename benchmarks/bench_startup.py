"""Start-up time of the command line: ``bayes-ir --help`` and ``bayes-ir inspect``.

Each command runs ``--repeat`` times (default 7) in a fresh Python process; the script
prints the median and the best wall seconds, and, as references measured in the same
run, a bare interpreter (``python -c pass``) and ``python -c "import pandas"`` (what
any command that reads a table must load). Targets (issue: a CLI that feels instant):
``--help`` under 1 s and ``inspect`` of the bundled example under 2 s on 2 cores.

Run: python benchmarks/bench_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example_scores.csv"

COMMANDS = {
    "python -c pass (reference)": [sys.executable, "-c", "pass"],
    "python -c 'import pandas' (reference)": [sys.executable, "-c", "import pandas"],
    "bayes-ir --help": [sys.executable, "-m", "bayes_ir", "--help"],
    "bayes-ir --version": [sys.executable, "-m", "bayes_ir", "--version"],
    "bayes-ir inspect example": [sys.executable, "-m", "bayes_ir", "inspect", str(EXAMPLE)],
}


def _time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"{'command':40s} {'median s':>9s} {'best s':>8s}")
    for name, command in COMMANDS.items():
        _time(command)  # warm the file cache and the bytecode
        times = [_time(command) for _ in range(args.repeat)]
        print(f"{name:40s} {statistics.median(times):9.3f} {min(times):8.3f}")


if __name__ == "__main__":
    main()
