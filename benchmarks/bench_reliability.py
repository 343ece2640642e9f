"""Benchmark: Urbano & Marrero's (SIGIR 2016) simulation study of the E[tau] estimators.

Simulates new topic sets from TREC-6/7/8 ad hoc (AP; bottom 25% of runs dropped), for
topic set sizes 10..100, and measures the error (mean |estimate - actual|) and bias
(mean estimate - actual) of ML, MSQD, RES, KD, SH(w) and SH(w/o) for E[tau] and
E[tau_AP]; then the same by subsampling topics from Robust04 (249 topics, truth: the
full-set means). Prints the tables and the time taken; the figure is optional.

    python benchmarks/bench_reliability.py                 # 50 trials per cell
    python benchmarks/bench_reliability.py --trials 200 --figure /tmp/reliability.png

Timings are noisy when other work shares the machine. The paper used 1000 trials.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from bayes_ir.readers import read_scores
from bayes_ir.reliability import simulation_study

DATA = Path(
    os.environ.get("BAYES_IR_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50, help="topic sets per collection and size")
    parser.add_argument("--seed", type=int, default=2016)
    parser.add_argument("--figure", type=Path, default=None, help="save the error/bias figure")
    parser.add_argument("--no-robust", action="store_true", help="skip the Robust04 subsampling")
    args = parser.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"real data not found at {DATA}: set BAYES_IR_DATA")

    tables = {
        name: read_scores(DATA / "trec_adhoc" / f"{name}_ap.csv")
        for name in ("adhoc6", "adhoc7", "adhoc8")
    }
    start = time.perf_counter()
    study = simulation_study(tables, trials=args.trials, seed=args.seed)
    elapsed = time.perf_counter() - start
    cells = len(study.records) // 2
    print(study.summary())
    print(f"\nsimulation: {cells} estimates in {elapsed:.1f} s ({os.cpu_count()} CPUs)")
    print("\nerror of E[tau] by collection (MSQD, SH(w/o)):")
    frame = study.to_frame()
    sub = frame[(frame.coefficient == "tau") & frame.estimator.isin(["MSQD", "SH(w/o)"])]
    print(sub.pivot_table(index=["collection", "estimator"], columns="n_topics", values="error")
          .to_string(float_format=lambda v: f"{v:.4f}"))  # fmt: skip
    if args.figure is not None:
        import matplotlib

        matplotlib.use("Agg")
        study.plot().savefig(args.figure, dpi=120)
        print(f"wrote {args.figure}")

    if not args.no_robust:
        robust = read_scores(DATA / "robust2004" / "robust2004_ap.csv")
        start = time.perf_counter()
        sub_study = simulation_study(
            {"robust04": robust}, method="subsample", trials=args.trials, seed=args.seed
        )
        elapsed = time.perf_counter() - start
        print("\n" + sub_study.summary())
        print(f"\nsubsampling: {len(sub_study.records) // 2} estimates in {elapsed:.1f} s")


if __name__ == "__main__":
    main()
