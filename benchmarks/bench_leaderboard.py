"""Speed of a leaderboard end to end (issue 31): ``bayes-ir rank`` in a fresh process.

Workloads (targets of the issue, on 2 cores):

* 200 systems x 500 binary items (0/1 scores, simulated: item difficulty N(0, 1), system
  logits spread over [-1, 2]), the board with its tie groups and the Friedman companion:
  60 s at most;
* a TREC-shaped board, 60 runs x 50 topics (the first 60 runs of TREC-5 ad hoc AP from
  ``../shared/data`` when present, else simulated): 15 s at most.

Each is run as ``bayes-ir rank FILE -q`` (reading, the exact Gaussian fit with its
diagnostics and model check, the leaderboard, printing), and, as the reference in the same
run, a fresh process that only reads the file and fits the model: the difference is what
the leaderboard adds. Wall and CPU seconds (user + sys of the child, from ``os.wait4``) are
printed with the load average; on a shared machine trust the CPU seconds.

Run: ``python benchmarks/bench_leaderboard.py [--repeat 1] [--html]`` (``--html`` also
writes the page, figures included).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BAYES_IR_DATA", ROOT.parent / "shared" / "data"))
BIN = Path(sys.executable).parent / "bayes-ir"
TARGETS = {"binary 200 x 500": 60.0, "TREC 60 x 50": 15.0}

FIT_ONLY = """
import sys, warnings
warnings.simplefilter("ignore")
from bayes_ir.readers import read_scores
from bayes_ir.hierarchical import fit
fit(read_scores(sys.argv[1]), seed=1)
"""


def binary_board(path: Path) -> Path:
    """Write 200 systems x 500 items of 0/1 scores as a tidy CSV."""
    rng = np.random.default_rng(31)
    skill = np.linspace(-1.0, 2.0, 200)
    logit = skill[None, :] + rng.normal(0.0, 1.0, (500, 1))
    y = (rng.random((500, 200)) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    frame = pd.DataFrame(
        {
            "system": np.repeat([f"model{i:03d}" for i in range(200)], 500),
            "topic": np.tile([f"item{j:03d}" for j in range(500)], 200),
            "score": y.T.ravel(),
            "measure": "accuracy",
        }
    )
    frame.to_csv(path, index=False)
    return path


def trec_board(path: Path) -> Path:
    """Write 60 runs x 50 topics: TREC-5 ad hoc AP's first 60 runs, else simulated."""
    source = DATA / "trec_adhoc" / "adhoc5_ap.csv"
    if source.exists():
        wide = pd.read_csv(source).iloc[:, :60]
    else:
        rng = np.random.default_rng(5)
        y = 0.25 + rng.normal(0, 0.03, 60)[None, :] + rng.normal(0, 0.15, (50, 1))
        wide = pd.DataFrame(np.clip(y + rng.normal(0, 0.1, (50, 60)), 0, 1),
                            columns=[f"run{i}" for i in range(60)])  # fmt: skip
    long = wide.rename_axis("topic").reset_index().melt("topic", var_name="system",
                                                        value_name="score")  # fmt: skip
    long["measure"] = "AP"
    long.to_csv(path, index=False)
    return path


def timed_child(args: list[str]) -> tuple[float, float, str]:
    """Run ``args``; return wall seconds, the child's CPU seconds (``os.wait4``) and stdout."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(args)} failed (exit {os.waitstatus_to_exitcode(status)})")
    return wall, usage.ru_utime + usage.ru_stime, text


def main() -> None:
    """Print wall and CPU seconds of each workload, the fit alone beside it."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--html", action="store_true", help="also write the HTML page")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"{'workload':<18} {'step':<26} {'wall s':>7} {'CPU s':>7} {'target':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        boards = {
            "binary 200 x 500": binary_board(Path(tmp) / "binary.csv"),
            "TREC 60 x 50": trec_board(Path(tmp) / "trec.csv"),
        }
        for name, path in boards.items():
            for _ in range(args.repeat):
                rank = [str(BIN), "rank", str(path), "-q"]
                if args.html:
                    rank += ["-o", str(Path(tmp) / f"{path.stem}.html")]
                wall, cpu, out = timed_child(rank)
                print(f"{name:<18} {'bayes-ir rank (end to end)':<26} {wall:7.1f} {cpu:7.1f} "
                      f"{TARGETS[name]:7.0f}")  # fmt: skip
                groups = [ln for ln in out.splitlines() if ln.startswith("Tie groups")]
                print(f"{'':<18} {groups[0] if groups else ''}")
                f_wall, f_cpu, _ = timed_child([sys.executable, "-c", FIT_ONLY, str(path)])
                print(f"{'':<18} {'reference: read + fit':<26} {f_wall:7.1f} {f_cpu:7.1f}")
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
