"""False deploys over seeds: the model of runs beside averaging the seeds and one seed.

1,000 simulated tables of 50 topics x 5 systems x 5 seeds, every system equal in
expectation (the truth is no difference), seed SD 0.02 to 0.05
(``tests/hierarchical/replicate_truth.py`` describes the simulation). One line per seed
SD and a total: the share of challengers (4 per table) and of tables (any challenger)
that ``decide`` deploys, on the model of runs in expectation over seeds and on one run of
each, on the per-topic mean of the seeds, and on one seed per system; and the share of
90% intervals of the run-to-run SD that cover the truth. The slow test
``tests/hierarchical/test_replicate_truth.py`` checks 120 tables of the model.

Run from the repository root (about 4 s a table on one core):

    .venv/bin/python benchmarks/study_replicates.py [--trials 1000] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "hierarchical")]

from replicate_truth import trial  # noqa: E402

from bayes_ir.sweep import sweep  # noqa: E402

METHODS = ("model", "model_single_run", "mean_of_seeds", "one_seed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000, help="simulated tables")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; {args.trials} tables", flush=True)
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        rows = sweep(trial, range(args.trials), executor=pool, label="tables")
    frame = pd.DataFrame(rows)
    print(f"{'seed SD':>7}  {'tables':>6}  " + "  ".join(f"{m:>22}" for m in METHODS)
          + f"  {'SD covered (90%)':>16}  {'gate':>5}")  # fmt: skip
    for label, part in [*frame.groupby("run_sd"), ("all", frame)]:
        cells = []
        for m in METHODS:
            per = np.array(part[m].tolist())  # tables x challengers
            cells.append(f"{per.mean():6.3f} / {per.any(axis=1).mean():6.3f} (tables)")
        cov = part["kappa_covered"].mean()
        se = np.sqrt(cov * (1 - cov) / len(part))
        print(f"{label!s:>7}  {len(part):>6}  " + "  ".join(f"{c:>22}" for c in cells)
              + f"  {cov:9.3f} ({se:.3f})  {part['passed'].mean():5.3f}")  # fmt: skip
    print("cells: share of challengers deployed / share of tables with any deploy; "
          f"{time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
