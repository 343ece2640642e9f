"""PSIS-LOO of many cells: the vectorised smoothing against ArviZ's loop over cells (issue 33).

``compare_likelihoods`` computes PSIS-LOO for every candidate on 4,000 draws of every cell:
27,390 cells on Robust04 AP. ArviZ (``arviz_stats``) smooths one cell at a time in Python;
``bayes_ir.hierarchical.psis.psis_loo`` smooths a block of cells at once. The log-likelihood
is that of the Gaussian model of Robust04 AP (249 topics x 110 systems; an exact fit with
default options, its 4,000-draw LOO subset), or of a simulated 250 x 110 table when
``../shared/data`` is absent. Printed: seconds and CPU seconds per 1,000 cells for both on
the same cells (ArviZ on the first ``--reference-cells``), the largest relative difference of
their ELPD and Pareto k, and our time for every cell through ``bayes_ir.hierarchical.loo``
(the log-likelihood computed block by block included).

Run: ``python benchmarks/bench_psis.py [--reference-cells N]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BAYES_IR_DATA", ROOT.parent / "shared" / "data"))


def _table():
    import bayes_ir
    from bayes_ir.table import ScoreTable

    path = DATA / "robust2004" / "robust2004_ap.csv"
    if path.exists():
        table, name = bayes_ir.read_scores(path, measure="AP"), "Robust04 AP"
    else:
        rng = np.random.default_rng(1)
        y = 0.3 + rng.normal(0, 0.1, (250, 1)) + rng.normal(0, 0.05, (1, 110))
        y = y + rng.normal(0, 0.1, y.shape)
        systems = [f"s{j}" for j in range(110)]
        table, name = ScoreTable.from_matrix(y, systems=systems, measure="sim"), "simulated"
    return table.with_roles(champion=table.systems[0], challengers=[table.systems[1]]), name


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-cells", type=int, default=2000)
    args = parser.parse_args()
    from arviz_stats.base.array import array_stats

    from bayes_ir.hierarchical import fit, loo
    from bayes_ir.hierarchical.fit import log_likelihood_cells
    from bayes_ir.hierarchical.likelihoods import _family_spec, _loo_draws, _relative_ess
    from bayes_ir.hierarchical.psis import psis_loo

    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    table, name = _table()
    fitted = fit(table, seed=1)
    post, design, cells = _loo_draws(fitted, None, 1)
    n_draws = post.sizes["chain"] * post.sizes["draw"]
    reff = _relative_ess(post)
    some = cells[: args.reference_cells]
    ll = log_likelihood_cells(post, design, _family_spec(fitted), some)
    ll = ll.reshape(n_draws, some.size).T.copy()
    ours, wall, cpu = _timed(lambda: np.column_stack(psis_loo(ll, reff)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref, rwall, rcpu = _timed(
            lambda: np.array([array_stats.loo(row[None, :], r_eff=reff) for row in ll])
        )
    per = 1000 / some.size
    diff = np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-12)
    print(f"{name}: {cells.size} cells x {n_draws} draws, r_eff {reff:.3f}")
    print(f"{'':28s}{'s / 1,000 cells':>18s}{'CPU s / 1,000':>16s}")
    print(f"{'bayes_ir psis_loo':28s}{wall * per:18.3f}{cpu * per:16.3f}")
    print(f"{'ArviZ, cell by cell':28s}{rwall * per:18.3f}{rcpu * per:16.3f}")
    print(f"ratio (ArviZ / ours, wall): {rwall / wall:.1f}x on {some.size} cells")
    print(f"largest relative difference: elpd_i {diff[:, 0].max():.1e}, k {diff[:, 1].max():.1e}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res, wall, cpu = _timed(lambda: loo(fitted, seed=1))
    print(
        f"bayes_ir loo() on all {res.n_data_points} cells (log-likelihood included): "
        f"{wall:.1f} s wall, {cpu:.1f} s CPU; ArviZ's loop would take about "
        f"{rwall / some.size * cells.size:.0f} s for the smoothing alone"
    )


if __name__ == "__main__":
    main()
