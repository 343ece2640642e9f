"""Run baycomp's hierarchical test (Corani et al. 2017) on paired scores; store P(left/rope/right).

Run with an interpreter that has ``baycomp`` and ``pystan`` (PyPI):
``python baycomp_run.py pairs.csv out.csv``, ``pairs.csv`` with columns
``case, rope, dataset, sample, x, y`` (x: the champion's score, y: the challenger's; each
case a rectangle of datasets x samples). Writes ``case, p_left, p_rope, p_right``:
the share of posterior draws in which the new dataset's difference y - x is most probably
below -rope, within +-rope, or above rope (baycomp's ``two_on_multiple(x, y, rope,
runs=1)``, whose ``probs()`` counts the region of largest predictive probability in each
draw), from 4 chains x 10,000 draws, seed 1; once with baycomp's Student-t between data
sets (``nu="learned"``: its Gamma prior on nu - 1) and once with that t made normal
(``nu="normal"``: the Gamma's shape in [1000, 1001] and rate in [0.01, 0.011], so nu is
about 95,000 a priori and a posteriori), the distribution bayes_ir's model assumes.
"""

import sys

import baycomp
import pandas as pd

#: The Gamma prior of nu - 1 that makes baycomp's Student-t a normal (nu ~ 95,000).
NORMAL = {"lower_alpha": 1000, "upper_alpha": 1001, "lower_beta": 0.01, "upper_beta": 0.011}
pairs = pd.read_csv(sys.argv[1])
rows = []
for case, part in pairs.groupby("case", sort=False):
    wide_x = part.pivot(index="dataset", columns="sample", values="x").to_numpy()
    wide_y = part.pivot(index="dataset", columns="sample", values="y").to_numpy()
    rope = float(part["rope"].iat[0])
    for nu, prior in (("learned", {}), ("normal", NORMAL)):
        p = baycomp.two_on_multiple(wide_x, wide_y, rope=rope, runs=1, random_state=1,
                                    nsamples=10000, **prior)  # fmt: skip
        rows.append((case, nu, *map(float, p)))
        print(case, nu, p, flush=True)
columns = ["case", "nu", "p_left", "p_rope", "p_right"]
pd.DataFrame(rows, columns=columns).to_csv(sys.argv[2], index=False)
