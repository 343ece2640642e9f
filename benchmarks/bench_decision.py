"""Speed of the full decision (issue 18): rb04, champion + 4 challengers, more-topics table.

End to end in a fresh process (imports, reading, the exact Gaussian fit, decide() with the
more-topics analysis over the default grid for every undecided challenger), against the
fit alone in the same run as the reference (what the decision adds to it).

Run: ``python benchmarks/bench_decision.py [--margin 0.03]`` (needs ``../shared/data``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BAYES_IR_DATA", ROOT.parent / "shared" / "data"))
RB04 = DATA / "bayesian_risk" / "rb04_data.csv"

SCRIPT = """
import sys, time
t0 = time.perf_counter()
from bayes_ir.readers import read_scores
from bayes_ir.hierarchical import fit
table = read_scores(sys.argv[1], measure="AP").with_roles(
    champion="Champion", challengers=["Chal. 1", "Chal. 2", "Chal. 3", "Chal. 4"])
f = fit(table, seed=1)
t_fit = time.perf_counter() - t0
if sys.argv[2] == "decide":
    from bayes_ir.decision import decide
    d = decide(f, margin=float(sys.argv[3]))
    print(d.summary())
    undecided = int((d.to_frame()["action"] == "collect more data").sum())
else:
    undecided = -1
print(f"@@ {time.perf_counter() - t0:.2f} {t_fit:.2f} {undecided}")
"""


def run(kind: str, margin: float) -> tuple[float, float, int, str]:
    """Run the script in a fresh process; return wall, fit seconds, undecided count, output."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(RB04), kind, str(margin)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    last = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@")][-1].split()
    return float(last[1]), float(last[2]), int(last[3]), proc.stdout


def main() -> None:
    """Print the decision's wall time beside the fit's."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--margin", type=float, default=0.03)
    args = parser.parse_args()
    if not RB04.exists():
        sys.exit(f"{RB04} not found: set BAYES_IR_DATA")
    fit_wall, _, _, _ = run("fit", args.margin)
    wall, fit_s, undecided, out = run("decide", args.margin)
    print(out.split("@@")[0])
    print(f"{'workload':<58} {'wall s':>7}")
    print(f"{'rb04 fit alone (reference), process start to end':<58} {fit_wall:7.2f}")
    print(f"{'rb04 fit + decide (4 challengers, more-topics table)':<58} {wall:7.2f}")
    print(f"  of which fit {fit_s:.2f} s; decision {wall - fit_s:.2f} s; "
          f"{undecided} undecided challenger(s) simulated; target <= 30 s")  # fmt: skip


if __name__ == "__main__":
    main()
