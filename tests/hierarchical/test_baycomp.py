"""Two systems on many datasets: P(left / rope / right) against baycomp's hierarchical test.

baycomp (Corani et al. 2017, PyPI ``baycomp`` 1.0.3 with pystan 3.10) was run by
``baycomp_reference.py`` on the cases there; its output is
``tests/results/across/baycomp.csv``. Its probabilities are those of a *new* dataset's
difference (y - x) falling left of -rope, inside +-rope or right of it, which are the
model across collections' ``P(delta_new < -rope)``, ``P(|delta_new| <= rope)`` and
``P(delta_new > rope)``.

Matched assumptions: both put a residual SD on each dataset and a between-dataset SD on
the difference with (nearly) flat priors: here the system and system x collection SDs
get Exponential priors of rate 0.01 (mean 100 score units), as baycomp's uniform priors
on its scales reach 1,000 times the data's spread. What stays different: baycomp's
datasets' differences follow a Student t (its nu learned with a Gamma prior), here a
normal; baycomp's noise has the correlation 1/n of cross-validation folds (0.02 with 50
samples); its mean difference has a uniform prior on the data's range. The three
probabilities agree within 0.03.
"""

from __future__ import annotations

import pandas as pd
import pytest
from baycomp_reference import OUT, ROPE, as_table, cases

from bayes_ir.hierarchical import fit_across

pytestmark = pytest.mark.shared_data
#: Flat-ish priors of the two scales of the contrast (matched to baycomp's uniform ones).
FLAT = {"sigma_system": 0.01, "sigma_system_collection": 0.01}


@pytest.mark.parametrize("name", ["simulated", "ranger50"])
def test_probabilities_of_a_new_dataset_agree_with_baycomp(shared_data, name):
    ref = pd.read_csv(OUT).set_index("case").loc[name]
    table = as_table(cases(shared_data)[name])
    fit = fit_across(table, priors=FLAT, seed=5, draws=5000)
    c = fit.contrasts()
    right = float(c.p_new_win(ROPE)[0])
    left = 1.0 - float(c.p_new_win(-ROPE)[0])
    mine = {"p_left": left, "p_rope": 1.0 - left - right, "p_right": right}
    for key, value in mine.items():
        assert value == pytest.approx(ref[key], abs=0.03), (key, mine, dict(ref))
