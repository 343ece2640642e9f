"""Regenerate the synthetic example data in this folder (see README.md).

Run from the project root or from data/:  python data/make_example_data.py
Every file is made from fixed seeds: running it again gives byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd

from bayes_ir.files import write_text
from bayes_ir.report.trec_eval import write_trec_eval
from bayes_ir.simulate import SystemSpec, simulate_judged, simulate_scores
from bayes_ir.table import ScoreTable

HERE = Path(__file__).resolve().parent

#: Seeds of each file (changing one changes that file only).
SEED_SCORES = 20261122
SEED_COLLECTIONS = 7
SEED_JUDGED = 8
SEED_RUNS = 3

#: BEIR-like collections of example_collections.csv and their numbers of topics.
COLLECTIONS = {
    "trec-covid": 50,
    "nfcorpus": 300,
    "scifact": 300,
    "fiqa": 200,
    "arguana": 100,
    "webis-touche2020": 30,
}


def example_scores() -> pd.DataFrame:
    """One TREC-like collection: champion bm25, four challengers, 40 artifact runs (AP)."""
    table = simulate_scores(
        champion="bm25",
        n_artifacts=40,
        artifact_prefix="trec_run",
        n_topics=50,
        first_topic=401,
        collections=["example"],
        measure="AP",
        seed=SEED_SCORES,
    )
    return table.to_frame()


def example_collections() -> pd.DataFrame:
    """Six BEIR-like collections, bm25 (control) vs dense (treatment): nDCG@10 and Judged@10."""
    table = simulate_scores(
        champion="bm25",
        challengers={"dense": SystemSpec(effect=0.15, spread=0.35)},
        n_artifacts=0,
        collections=list(COLLECTIONS),
        n_topics=list(COLLECTIONS.values()),
        first_topic=1,
        measure="nDCG@10",
        baseline=0.4,
        collection_sd=0.3,
        zero_inflation=0.5,
        seed=SEED_COLLECTIONS,
    )
    judged = simulate_judged(
        table, depth=10, rates={"bm25": 0.92, "dense": 0.75}, rate_sd=0.4, seed=SEED_JUDGED
    )
    frame = pd.concat([table.to_frame(), judged.to_frame()], ignore_index=True)
    order = {name: i for i, name in enumerate(COLLECTIONS)}
    frame["_c"] = frame["collection"].map(order)
    frame["_t"] = frame["topic"].astype(int)
    frame["_s"] = frame["system"].map({"bm25": 0, "dense": 1})
    frame["_m"] = frame["measure"].map({"nDCG@10": 0, "Judged@10": 1})
    frame = frame.sort_values(["_c", "_m", "_s", "_t"], kind="stable")
    return frame.drop(columns=["_c", "_t", "_s", "_m"]).reset_index(drop=True)


def example_runs(folder: Path) -> None:
    """Tiny TREC runs (bm25, dense) and graded qrels, with two designed gaps.

    Query 6 has no judgments (readers must report it); run ``dense`` did not retrieve
    query 5 (scored 0 by the trec_eval convention).
    """
    rng = np.random.default_rng(SEED_RUNS)
    folder.mkdir(exist_ok=True)
    docs = [f"d{i:02d}" for i in range(1, 31)]
    qrels_lines = []
    truth: dict[str, dict[str, int]] = {}
    for q in range(1, 6):
        grades = rng.choice([0, 0, 0, 1, 1, 2], size=12)
        judged = rng.choice(docs, size=12, replace=False)
        truth[str(q)] = {d: int(g) for d, g in zip(judged, grades, strict=True)}
        qrels_lines += [f"{q} 0 {d} {g}" for d, g in sorted(truth[str(q)].items())]
    write_text(folder / "qrels.txt", "\n".join(qrels_lines) + "\n")
    for name, signal in (("bm25", 1.0), ("dense", 1.5)):
        lines = []
        for q in range(1, 7):
            if name == "dense" and q == 5:
                continue
            rel = truth.get(str(q), {})
            score = np.array([signal * rel.get(d, 0) for d in docs]) + rng.normal(0, 1, len(docs))
            top = np.argsort(-score, kind="stable")[:10]
            lines += [
                f"{q} Q0 {docs[i]} {r} {score[i] + 10:.4f} {name}" for r, i in enumerate(top, 1)
            ]
        write_text(folder / f"{name}.run", "\n".join(lines) + "\n")


def example_trec_eval(folder: Path, out: Path) -> None:
    """``trec_eval -q``-style output of the tiny runs (AP, P@5, nDCG@10) via ir_measures."""
    qrels = list(ir_measures.read_trec_qrels(str(folder / "qrels.txt")))
    rows = []
    measures = [ir_measures.parse_measure(m) for m in ("AP", "P@5", "nDCG@10")]
    for name in ("bm25", "dense"):
        run = list(ir_measures.read_trec_run(str(folder / f"{name}.run")))
        for metric in ir_measures.iter_calc(measures, qrels, run):
            rows.append((name, str(metric.measure), metric.query_id, metric.value))
    frame = pd.DataFrame(rows, columns=["system", "measure", "topic", "score"])
    frame["score"] = frame["score"].round(4)
    table = ScoreTable.from_frame(frame, collection="example_runs", missing="keep")
    write_trec_eval(table, out)


def main() -> None:
    """Write every example file into this folder."""
    for name, frame in (("example_scores", example_scores()),
                        ("example_collections", example_collections())):  # fmt: skip
        write_text(HERE / f"{name}.csv", frame.to_csv(index=False, float_format="%.4f"))
    example_runs(HERE / "example_runs")
    example_trec_eval(HERE / "example_runs", HERE / "example_trec_eval.txt")


if __name__ == "__main__":
    main()
