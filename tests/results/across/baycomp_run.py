"""Run baycomp's hierarchical test (Corani et al. 2017) on paired scores; store P(left/rope/right).

Run with an interpreter that has ``baycomp`` and ``pystan`` (PyPI):
``python baycomp_run.py pairs.csv out.csv``, ``pairs.csv`` with columns
``case, rope, dataset, sample, x, y`` (x: the champion's score, y: the challenger's; each
case a rectangle of datasets x samples). Writes ``case, p_left, p_rope, p_right``:
P(new dataset's difference y - x < -rope), within +-rope, > rope (baycomp's
``two_on_multiple(x, y, rope, runs=1)``), from 4 chains x 10,000 draws, seed 1.
"""

import sys

import baycomp
import pandas as pd

pairs = pd.read_csv(sys.argv[1])
rows = []
for case, part in pairs.groupby("case", sort=False):
    wide_x = part.pivot(index="dataset", columns="sample", values="x").to_numpy()
    wide_y = part.pivot(index="dataset", columns="sample", values="y").to_numpy()
    rope = float(part["rope"].iat[0])
    p = baycomp.two_on_multiple(wide_x, wide_y, rope=rope, runs=1, random_state=1, nsamples=10000)
    rows.append((case, *map(float, p)))
    print(case, p, flush=True)
pd.DataFrame(rows, columns=["case", "p_left", "p_rope", "p_right"]).to_csv(sys.argv[2], index=False)
