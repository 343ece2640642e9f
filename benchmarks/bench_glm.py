"""Speed of the GLM link comparison on Robust04 AP (249 topics x 110 runs).

All eight links plus the topic-blocked Tukey HSD (27,390 scores, 359 coefficients,
5,995 pairs per link) must take under 30 s on 2 cores. The script times
``compare_links`` from a cold start (studentized-range caches empty), then each
link's fit and Tukey HSD, and, with ``--verify``, checks the structured IRLS against
a dense ``statsmodels.api.GLM`` fit of the same model for two links.

Usage::

    python benchmarks/bench_glm.py [--data ../shared/data] [--verify]

Timings are wall-clock and noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from bayes_ir.frequentist.glm import compare_links, fit_glm, link_names, tukey_hsd
from bayes_ir.readers import read_scores

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("BAYES_IR_DATA", str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--data", default=default, help="folder holding robust2004/")
    parser.add_argument("--verify", action="store_true", help="cross-check with statsmodels")
    args = parser.parse_args()
    path = Path(args.data) / "robust2004" / "robust2004_ap.csv"
    if not path.exists():
        raise SystemExit(f"{path} not found: pass --data or set BAYES_IR_DATA")
    table = read_scores(path)
    print(table.summary())
    print(f"CPUs visible: {os.cpu_count()}; load average: {os.getloadavg()[0]:.1f}")

    start = time.perf_counter()
    result = compare_links(table)
    total = time.perf_counter() - start
    print(f"\ncompare_links, 8 links + Tukey HSD (cold caches): {total:.2f} s (target < 30 s)")
    print(result.to_markdown("deviance"))
    print(result.to_markdown("n_significant"))

    print("\nper link, warm caches (fit / Tukey HSD):")
    for link in link_names():
        t0 = time.perf_counter()
        fit = fit_glm(table, link=link)
        t1 = time.perf_counter()
        tukey = tukey_hsd(fit)
        t2 = time.perf_counter()
        print(
            f"  {link:9s} fit {t1 - t0:6.3f} s ({fit.iterations:2d} iterations)  "
            f"Tukey {t2 - t1:6.3f} s  deviance {fit.deviance:.6f}  "
            f"significant {tukey.n_significant}/{tukey.n_pairs}"
        )

    if args.verify:
        print("\nverification against dense statsmodels.api.GLM (27,390 x 359 design):")
        for link in ("identity", "logit"):
            fast = fit_glm(table, link=link)
            t0 = time.perf_counter()
            dense = fit_glm(table, link=link, method="statsmodels")
            elapsed = time.perf_counter() - t0
            print(
                f"  {link:9s} statsmodels {elapsed:6.2f} s; |deviance diff| "
                f"{abs(fast.deviance - dense.deviance):.2e}; max |coef diff| "
                f"{np.max(np.abs(fast.params - dense.params)):.2e}; max |SE ratio - 1| "
                f"{np.max(np.abs(fast.bse / dense.bse - 1)):.2e}"
            )


if __name__ == "__main__":
    main()
