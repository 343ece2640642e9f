"""Coverage of the Bernoulli family's 95% interval of an accuracy difference, whole grid.

For every cell of ``results.families.BINARY_GRID`` (50, 100 and 200 items; accuracy pairs
from (0.5, 0.55) to (0.95, 0.95)), 80 simulated tables with known truth
(``tests/hierarchical/binary_coverage.py`` describes the simulation), one line per cell:
the share of the Bernoulli family's 95% intervals of m_2 - m_1 that cover the truth, its
binomial standard error, the same share for the normal-approximation interval of the paired
differences (the reference the literature uses), the mean width of the Bayesian interval, the
share of Bayesian intervals that lie entirely below the truth (the misses on the low side), and
the mean over the tables of the posterior mean difference and of the observed difference,
beside the truth (a pull towards 0 shows as an estimate below both).
The slow test ``tests/hierarchical/families/test_binary_coverage.py`` checks three of the cells.

``--exact``: instead of simulating tables, the coverage of the model's exact posterior
(``tests/hierarchical/binary_exact.py``: the items integrated out by quadrature, the posterior
on a grid; ``families/test_binary_exact.py`` checks that the fits equal it) summed over every
outcome of the four pattern counts, most probable first, to 99.9% of the probability: no
Monte Carlo error. One line per cell: the coverage, the probability summed and the share of
intervals entirely below the truth.

Run from the repository root (1,200 fits; about an hour on one core):

    .venv/bin/python benchmarks/study_binary_coverage.py [--trials 80] [--workers 2] [--items 50]
    .venv/bin/python benchmarks/study_binary_coverage.py --exact --items 50 [--workers 2]
        [--item-sd 1.0] [--intercept-sd 1.5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "hierarchical")]

from binary_coverage import ITEM_SD, coverage_study  # noqa: E402
from binary_exact import exact_coverage  # noqa: E402
from results.families import BINARY_GRID  # noqa: E402

from bayes_ir.hierarchical.families.logit import INTERCEPT_SD  # noqa: E402


def _exact_cell(cell, item_sd: float, intercept_sd: float) -> tuple[float, float, float]:
    return exact_coverage(cell[0], cell[1], item_sd=item_sd, intercept_sd=intercept_sd)


def exact(grid, workers: int, item_sd: float, intercept_sd: float) -> None:
    """Print the exact posterior's coverage of every cell of ``grid``."""
    print(f"item difficulty SD {item_sd}; intercept prior SD {intercept_sd}", flush=True)
    print(f"{'items':>5}  {'accuracies':<12}  {'exact 95%':>9}  {'summed':>6}  {'low':>5}",
          flush=True)  # fmt: skip
    start = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        for (n, (a1, a2)), (cover, mass, low) in zip(
            grid,
            pool.map(partial(_exact_cell, item_sd=item_sd, intercept_sd=intercept_sd), grid),
            strict=True,
        ):
            print(f"{n:>5}  {a1:.2f}, {a2:.2f}    {cover:>9.4f}  {mass:>6.4f}  {low:>5.3f}",
                  flush=True)  # fmt: skip
    print(f"{time.perf_counter() - start:.0f} s wall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=80, help="tables per cell")
    parser.add_argument("--workers", type=int, default=1, help="processes")
    parser.add_argument("--items", type=int, nargs="*", help="only the cells of these sizes")
    parser.add_argument("--pooling", default="auto", choices=("auto", "all", "none"),
                        help="the fits' pooling of the systems (auto: none)")  # fmt: skip
    parser.add_argument("--cells", type=int, nargs="*", help="only these cells (grid indices)")
    parser.add_argument("--exact", action="store_true", help="the exact posterior's coverage")
    parser.add_argument(
        "--item-sd",
        type=float,
        default=ITEM_SD,
        help="--exact: the simulated items' difficulty SD (logit scale)",
    )
    parser.add_argument("--intercept-sd", type=float, default=INTERCEPT_SD,
                        help="--exact: the SD of the intercept prior")  # fmt: skip
    args = parser.parse_args()
    grid = [
        cell
        for k, cell in enumerate(BINARY_GRID)
        if (not args.items or cell[0] in args.items) and (not args.cells or k in args.cells)
    ]
    if args.exact:
        exact(grid, args.workers, args.item_sd, args.intercept_sd)
        return
    print(f"load average {os.getloadavg()[0]:.2f}; {args.trials} tables per cell; pooling "
          f"{args.pooling!r}", flush=True)  # fmt: skip
    print(f"{'items':>5}  {'accuracies':<12}  {'Bayes 95%':>9}  {'(SE)':>6}  "
          f"{'normal':>6}  {'width':>6}  {'low':>5}  {'estimate':>8}  {'observed':>8}  "
          f"{'truth':>6}", flush=True)  # fmt: skip
    start = time.perf_counter()
    everything = []
    with ProcessPoolExecutor(args.workers) as pool:
        for cell in grid:
            rows = coverage_study([cell], args.trials, pooling=args.pooling, executor=pool)[cell]
            everything.append(rows)
            share = rows[:, 0].mean()
            se = np.sqrt(share * (1 - share) / len(rows))
            n, (a1, a2) = cell
            print(f"{n:>5}  {a1:.2f}, {a2:.2f}    {share:>9.3f}  ({se:.3f})  "
                  f"{rows[:, 1].mean():>6.3f}  {rows[:, 2].mean():>6.3f}  "
                  f"{rows[:, 3].mean():>5.3f}  {rows[:, 4].mean():>8.4f}  "
                  f"{rows[:, 5].mean():>8.4f}  {a2 - a1:>6.3f}", flush=True)  # fmt: skip
    rows = np.concatenate(everything)
    print(f"all {len(rows)} tables: Bayes {rows[:, 0].mean():.3f}, normal {rows[:, 1].mean():.3f}; "
          f"{time.perf_counter() - start:.0f} s wall")  # fmt: skip


if __name__ == "__main__":
    main()
