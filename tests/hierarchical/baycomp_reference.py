"""The cases of the cross-check with baycomp's hierarchical test (two systems, many datasets).

``python tests/hierarchical/baycomp_reference.py PYTHON`` writes the paired scores of every
case and runs ``tests/results/across/baycomp_run.py`` with ``PYTHON`` (an interpreter with
baycomp and pystan), storing ``tests/results/across/baycomp.csv``.

baycomp's test needs the same number of samples in every dataset, so each case is a
rectangle: a simulated one (8 datasets x 50 topics) and Ranger's retrieval runs cut to
the first 50 judged queries of each of the 6 collections (nDCG@10).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from bayes_ir.readers import read_scores
from bayes_ir.table import ScoreTable
from bayes_ir.table_checks import natural_sorted

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "results" / "across" / "baycomp.csv"
#: The region of practical equivalence of every case (in the measure's units).
ROPE = 0.01
CHAMPION, CHALLENGER = "x", "y"


def _simulated() -> pd.DataFrame:
    rng = np.random.default_rng(17)
    rows = []
    for c in range(8):
        sigma = rng.uniform(0.05, 0.12)
        delta = rng.normal(0.02, 0.015)
        for t in range(50):
            a = rng.normal(0.5, 0.15)
            rows.append((f"d{c}", t, a + rng.normal(0, sigma), a + delta + rng.normal(0, sigma)))
    return pd.DataFrame(rows, columns=["dataset", "sample", "x", "y"])


def _ranger(data: Path) -> pd.DataFrame:
    t = read_scores(data / "ranger" / "retrieval_perquery_tidy.csv.gz").select(measure="nDCG@10")
    wide = t.data.pivot_table(index=["collection", "topic"], columns="system", values="score")
    rows = []
    for coll, part in wide.groupby(level=0):
        part = part.droplevel(0)
        first = natural_sorted(part.index)[:50]
        for i, topic in enumerate(first):
            rows.append(
                (coll, i, part.at[topic, "tasb_dim768_hf"], part.at[topic, "colberter_dim1"])
            )
    return pd.DataFrame(rows, columns=["dataset", "sample", "x", "y"])


def cases(data: Path) -> dict[str, pd.DataFrame]:
    """Paired scores of every case: ``dataset, sample, x, y``."""
    return {"simulated": _simulated(), "ranger50": _ranger(data)}


def as_table(pairs: pd.DataFrame) -> ScoreTable:
    """The pairs as a score table across collections (datasets), champion ``x``."""
    long = pairs.melt(id_vars=["dataset", "sample"], value_vars=["x", "y"], var_name="system",
                      value_name="score")  # fmt: skip
    long = long.rename(columns={"dataset": "collection", "sample": "topic"}).assign(measure="score")
    table = ScoreTable.from_frame(long, check_range=False)
    return table.with_roles(champion=CHAMPION, challengers=[CHALLENGER])


def run(python: str, data: Path, out: Path = OUT) -> subprocess.CompletedProcess:
    """Run baycomp on every case with ``python``; store the probabilities in ``out``."""
    with tempfile.TemporaryDirectory() as tmp:
        frames = [f.assign(case=name, rope=ROPE) for name, f in cases(data).items()]
        path = Path(tmp) / "pairs.csv"
        pd.concat(frames)[["case", "rope", "dataset", "sample", "x", "y"]].to_csv(path, index=False)
        script = ROOT / "tests" / "results" / "across" / "baycomp_run.py"
        return subprocess.run([python, str(script), str(path), str(out)], capture_output=True,
                              text=True, timeout=7200, cwd=tmp)  # fmt: skip


if __name__ == "__main__":
    done = run(sys.argv[1], ROOT.parent / "shared" / "data")
    print(done.returncode, done.stdout, done.stderr[-3000:])
