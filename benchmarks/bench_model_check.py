"""Cost of the model check's second pass (issue 27): champions and challengers near a cut-off.

For each table, one exact Gaussian fit (default draws), then ``check_model`` as ``fit()``
runs it, against the same check with the second pass switched off (``RECHECK_Z = 0``: the
first pass only, as before issue 27) as the reference in the same run. CPU seconds
(user + system of this process) beside wall seconds, and the load average.

Tables: the README's example (``data/example_scores.csv``, drop_bottom 0.25: ``chal_fusion``
is near the cut-off and is checked again on all 40,000 draws) and, with ``../shared/data``,
Robust04 AP (249 topics x 110 systems; champion sys1, challengers sys2-sys4).

Run: ``python benchmarks/bench_model_check.py``.
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BAYES_IR_DATA", ROOT.parent / "shared" / "data"))


def _tables():
    import pandas as pd

    import bayes_ir

    yield (
        "README example",
        bayes_ir.read_scores(ROOT / "data" / "example_scores.csv").with_roles(
            champion="bm25", challengers="chal_*", drop_bottom=0.25
        ),
    )
    path = DATA / "robust2004" / "robust2004_ap.csv"
    if path.exists():
        wide = pd.read_csv(path)
        long = wide.melt(id_vars="topic", var_name="system", value_name="score")
        table = bayes_ir.ScoreTable.from_frame(long, collection="robust04", measure="AP")
        yield "Robust04 AP", table.with_roles(champion="sys1", challengers=["sys2", "sys3", "sys4"])


def _timed(func, *args, **kwargs):
    t0, c0 = time.perf_counter(), os.times()
    result = func(*args, **kwargs)
    c1 = os.times()
    return result, time.perf_counter() - t0, (c1.user - c0.user) + (c1.system - c0.system)


def main() -> None:
    import bayes_ir
    from bayes_ir.hierarchical import adequacy

    warnings.simplefilter("ignore")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'table':<16} {'check':<22} {'CPU s':>7} {'wall s':>7}  rechecked  flagged/borderline")
    for name, table in _tables():
        fit = bayes_ir.fit(table, seed=7, model_check=False)
        adequacy.check_model(fit, seed=7)  # warm caches
        runs = (("first pass only (ref)", 0.0), ("with second pass", adequacy.RECHECK_Z))
        for label, recheck in runs:
            saved, adequacy.RECHECK_Z = adequacy.RECHECK_Z, recheck
            try:
                check, wall, cpu = _timed(adequacy.check_model, fit, seed=7)
            finally:
                adequacy.RECHECK_Z = saved
            again = int((check.frame["n_draws"] > check.n_draws).sum())
            marks = f"{len(check.flagged)}/{len(check.borderline)}"
            print(f"{name:<16} {label:<22} {cpu:7.2f} {wall:7.2f}  {again:9d}  {marks}")


if __name__ == "__main__":
    main()
