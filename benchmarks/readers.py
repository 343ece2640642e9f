"""Reader speed on the real data (../shared/data or $BAYES_IR_DATA) and on simulated tables.

Run: python benchmarks/readers.py   (prints seconds per read; no assertions)
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from pathlib import Path

from bayes_ir.readers import read_scores
from bayes_ir.simulate import simulate_scores

ROOT = Path(__file__).resolve().parents[1]


def timed(label: str, func, repeat: int = 3) -> None:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<55} {best:7.3f} s  ({len(result.data):,} scores)")


def main() -> None:
    warnings.simplefilter("ignore")
    data = Path(os.environ.get("BAYES_IR_DATA", ROOT.parent / "shared" / "data"))
    timed(
        "example_scores.csv (tidy, 45 x 50)", lambda: read_scores(ROOT / "data/example_scores.csv")
    )
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.csv"
        simulate_scores(n_topics=1000, n_artifacts=200, seed=1).to_frame().to_csv(big, index=False)
        timed("simulated tidy CSV (205 systems x 1000 topics)", lambda: read_scores(big))
    if data.is_dir():
        timed(
            "robust2004_ap.csv (wide, 249 x 110)",
            lambda: read_scores(data / "robust2004/robust2004_ap.csv"),
        )
        root = data / "ranger/retrieval"
        runs = sorted(root.glob("*/*_top10.txt.gz"))
        qrels = sorted((root / "qrels").glob("*_qrels.txt.gz"))
        timed(
            "Ranger runs + qrels, nDCG@10 (12 runs, 6 collections)",
            lambda: read_scores(runs, qrels=qrels, measure="nDCG@10"),
        )
        glue = sorted((data / "ranger/glue").glob("*/*/*.txt"))
        timed("Ranger GLUE line files (14 files, 114k lines)", lambda: read_scores(glue))
    else:
        print(f"no real data at {data}: set BAYES_IR_DATA for the real-data timings")


if __name__ == "__main__":
    main()
