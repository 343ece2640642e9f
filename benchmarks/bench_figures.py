"""``bayes-ir fit --figures`` against ``bayes-ir fit`` on Robust04 AP (249 topics x 110 runs).

The figures draw the champion and three challengers; the posterior predictive is
simulated for the systems drawn only (it was simulated for all 110, and ``--figures``
took 95 s against 13 s for the fit alone). Target: ``fit --figures`` within 2x of
``fit``. Both commands run ``--repeat`` times (default 3) in fresh processes, in turns;
the script prints the median wall and CPU seconds (user + sys of the child process, from
``os.wait4``) of each, their ratios, and the load average before and after (the wall
time means little on a loaded machine; the CPU time does).

Run: python benchmarks/bench_figures.py [--repeat N] [--data PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BAYES_IR_DATA", ROOT.parent / "shared" / "data"))
ROBUST = DATA / "robust2004" / "robust2004_ap.csv"
ROLES = ["-c", "sys1", "-C", "sys2", "-C", "sys3", "-C", "sys4"]


def _run(argv: list[str]) -> tuple[float, float]:
    """Run ``argv`` in a child process; return its wall and CPU (user + sys) seconds."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=ROBUST)
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (set BAYES_IR_DATA or pass --data)")
    fit = [sys.executable, "-m", "bayes_ir", "fit", str(args.data), *ROLES, "--quiet"]
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    times: dict[str, list[tuple[float, float]]] = {"fit": [], "fit --figures": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeat):  # in turns, so that a change of load hits both
            times["fit"].append(_run(fit))
            times["fit --figures"].append(_run([*fit, "--figures", folder]))
    print(f"{'command':16s} {'wall s':>8s} {'CPU s':>8s}  (median of {args.repeat})")
    medians = {}
    for name, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        medians[name] = (wall, cpu)
        print(f"{name:16s} {wall:8.1f} {cpu:8.1f}")
    (w0, c0), (w1, c1) = medians["fit"], medians["fit --figures"]
    print(f"ratio --figures / fit: wall {w1 / w0:.2f}, CPU {c1 / c0:.2f} (target: within 2)")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
