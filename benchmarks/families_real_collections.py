"""Which family describes real collections? Systems flagged by the model check, per family.

For each collection of ../shared/data (Robust04 AP and P@10, TREC-5 to 8 AP, P@10 and RR,
the SIGIR 2020 risk paper's rb04, trec17 and trec18) and each family (gaussian, skew_normal,
zoib, zoib with one inflation per system, zoib with one inflation and one precision per
system, and binomial for P@10), fit with the default
settings and print one line: the systems the posterior predictive check flags (of all
systems), the observed and predicted shares of exact 0s and 1s, and the diagnostics. Then
the family ``compare_likelihoods``' rule across outcome spaces would choose from these fits
(adequate shares of exact 0s and 1s within 2 points, then the fewest flagged systems).

Run from the repository root (reads ../shared/data; takes an hour or more on 2 cores):

    .venv/bin/python benchmarks/families_real_collections.py [--only NAME ...] [--out FILE]

``--out`` writes the table as CSV (through ``bayes_ir.files``).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FAMILIES = (
    "gaussian",
    "skew_normal",
    "zoib",
    "zoib(inflation=system)",
    "zoib(inflation=system,phi=system)",
    "binomial",
)


def collections() -> dict[str, tuple[Path, str, str | None, str | None]]:
    """Name -> (file, measure, champion, challengers glob) of every collection of the study."""
    out: dict[str, tuple[Path, str, str | None, str | None]] = {
        "robust04 AP": (DATA / "robust2004" / "robust2004_ap.csv", "AP", None, None),
        "robust04 P@10": (DATA / "robust2004" / "robust2004_p10.csv", "P@10", None, None),
    }
    for n in (5, 6, 7, 8):
        for m, measure in (("ap", "AP"), ("p10", "P@10"), ("rr", "RR")):
            out[f"trec{n} {measure}"] = (
                DATA / "trec_adhoc" / f"adhoc{n}_{m}.csv",
                measure,
                None,
                None,
            )
    for name in ("rb04", "trec17", "trec18"):
        path = DATA / "bayesian_risk" / f"{name}_data.csv"
        out[f"{name} AP"] = (path, "AP", "Champion", "Chal.*")
    return out


def table_of(path: Path, measure: str, champion: str | None, challengers: str | None):
    """The collection's table with roles (the first system as champion when none is known)."""
    from bayes_ir.readers import read_scores

    table = read_scores(path, measure=measure)
    if champion is None:
        systems = list(table.systems)
        return table.with_roles(champion=systems[0], challengers=systems[1:5])
    return table.with_roles(champion=champion, challengers=challengers)


def one(name: str, family: str) -> dict:
    """Fit one family to one collection; return its row of the table."""
    from bayes_ir.hierarchical import fit

    table = table_of(*collections()[name])
    y = table.matrix().values
    y = y[np.isfinite(y)]
    row = {"collection": name, "family": family, "systems": len(table.systems),
           "zeros_obs": float(np.mean(y == 0)), "ones_obs": float(np.mean(y == 1))}  # fmt: skip
    t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = fit(table, likelihood=family, seed=1)
    except Exception as exc:  # a family that cannot describe these scores: say why
        return {**row, "flagged": np.nan, "error": str(exc).splitlines()[0]}
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    check = f.model_check.frame
    n = check["n_topics"].to_numpy(dtype=float)
    pred = {m: float(np.nansum(check[f"pred_{m}"] * n) / n.sum()) for m in ("zeros", "ones")}
    return {
        **row,
        "flagged": len(f.model_check.flagged),
        "zeros_pred": pred["zeros"] if check["pred_zeros"].notna().any() else 0.0,
        "ones_pred": pred["ones"] if check["pred_ones"].notna().any() else 0.0,
        "diagnostics": "PASS" if f.diagnostics.passed else "FAIL",
        "failed_checks": "; ".join(
            f"{s}: {c}" for s, c in zip(check["system"], check["failed_checks"], strict=True) if c
        ),
        "wall_s": time.perf_counter() - t0,
        "cpu_s": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime,
    }


def choose(frame: pd.DataFrame) -> pd.Series:
    """The family the rule across outcome spaces picks per collection (from these fits)."""
    ok = frame.dropna(subset=["flagged"]).copy()
    adequate = ((ok["zeros_pred"] - ok["zeros_obs"]).abs() <= 0.02) & (
        (ok["ones_pred"] - ok["ones_obs"]).abs() <= 0.02
    )
    ok["adequate"] = adequate
    picks = {}
    for name, rows in ok.groupby("collection", sort=False):
        pool = rows[rows["adequate"]] if rows["adequate"].any() else rows
        picks[name] = pool.sort_values("flagged", kind="stable").iloc[0]["family"]
    return pd.Series(picks, name="chosen")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="collection names (default: all)")
    parser.add_argument("--families", nargs="*", default=list(FAMILIES))
    parser.add_argument("--out", type=Path, help="write the table as CSV")
    args = parser.parse_args(argv)
    if not DATA.exists():
        sys.exit(f"error: {DATA} not found (this study reads ../shared/data)")
    rows = []
    for name in args.only or list(collections()):
        for family in args.families:
            if family == "binomial" and "P@10" not in name:
                continue  # k of n: P@10 only
            row = one(name, family)
            rows.append(row)
            shown = {k: v for k, v in row.items() if k != "failed_checks"}
            text = " | ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in shown.items()
            )
            print(text, flush=True)
    frame = pd.DataFrame(rows)
    wide = frame.pivot(index="collection", columns="family", values="flagged")
    wide["systems"] = frame.groupby("collection")["systems"].first()
    wide["chosen"] = choose(frame)
    print(wide.to_string(), flush=True)
    if args.out is not None:
        from bayes_ir.files import write_text

        write_text(args.out, frame.to_csv(index=False))


if __name__ == "__main__":
    main()
