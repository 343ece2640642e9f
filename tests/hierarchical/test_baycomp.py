"""Two systems on many datasets: P(left / rope / right) against baycomp's hierarchical test.

baycomp (Corani et al. 2017, PyPI ``baycomp`` 1.0.3 with pystan 3.10) was run by
``baycomp_reference.py`` on the cases there; its output is
``tests/results/across/baycomp.csv``. baycomp's ``probs()`` of its hierarchical test are
not the predictive probabilities of the regions: in each posterior draw it computes
P(new dataset's difference < -rope), P(within +-rope) and P(> rope), and reports the share
of draws in which each is the largest. The same is computed here from the model across
collections' draws of the overall contrast and of the between-collection SD (a new
collection's contrast is N(delta, between_sd^2)).

The settings bring the models close: both put a residual SD on each dataset and a
between-dataset SD on the difference with (nearly) flat priors: the system and system x
collection SDs get Exponential priors of rate 0.01 (mean 100 score units), as baycomp's
uniform priors on its scales reach 1,000 times the data's spread; baycomp's Student-t
between datasets is made normal (``nu="normal"`` in the stored output: its Gamma prior on
nu-1 set to put nu near 95,000; it changes baycomp's shares by less than 0.01 here). baycomp
models a dataset's scores as cross-validation folds correlated by rho = runs / n (the stored
output uses its default, ``runs=1``); here the topics are independent. On Ranger's runs (6
collections x 50 queries) the three shares agree within 0.03 (measured: 0.077/0.000/0.923
against 0.066/0.000/0.934); on the simulated rectangle (8 x 50, a contrast near the rope)
within 0.05 (measured: 0.014/0.331/0.655 against 0.042/0.285/0.673).

That gap is two assumptions the two models do not share, taken apart by baycomp's own
model written in PyMC (``baycomp_port.py``), which first reproduces baycomp's stored
output (within 0.02 here, 0.03 in the test) and then, moved to bayes_ir's assumptions one
at a time, bayes_ir's shares:

* baycomp's folds are correlated (rho = 1/50, each dataset's mean twice as uncertain):
  with rho = 0 the left share falls from 0.041 to 0.014, bayes_ir's;
* baycomp's contrast has a uniform prior; bayes_ir's, with two systems pooled, is a scale
  mixture of normals (the system SD), whose density rises towards 0 and moves the contrast
  0.07 posterior SD towards it, which near the rope moves 0.03 between the rope and the
  right: with that prior as well the port gives 0.014-0.015/0.326-0.334/0.651-0.660 (three
  seeds) against 0.014/0.331/0.655.

Under matched assumptions, therefore, the shares agree within 0.01 (0.02 in the test)
(:func:`test_baycomp_model_under_our_assumptions_gives_our_shares`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from baycomp_port import differences, region_shares
from baycomp_port import shares as port_shares
from baycomp_reference import OUT, ROPE, as_table, cases
from scipy import special

from bayes_ir.errors import ConvergenceWarning
from bayes_ir.hierarchical import fit_across

pytestmark = pytest.mark.shared_data
#: Flat-ish priors of the two scales of the contrast (matched to baycomp's uniform ones).
FLAT = {"sigma_system": 0.01, "sigma_system_collection": 0.01}


def _shares(contrasts) -> dict[str, float]:
    """baycomp's probs(): the share of draws in which each region is the most probable."""
    d, sd = contrasts.overall[:, 0], np.maximum(contrasts.between_sd, 1e-300)
    right = 1.0 - special.ndtr((ROPE - d) / sd)
    return region_shares(special.ndtr((-ROPE - d) / sd), right)


@pytest.fixture(scope="module")
def shares(shared_data):
    out = {}
    for name, pairs in cases(shared_data).items():
        with warnings.catch_warnings():  # sigma_system of 2 systems under a flat prior
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = fit_across(as_table(pairs), priors=FLAT, seed=5, draws=5000, model_check=False)
        gate = fit.contrasts().gate
        assert gate.passed or all("sigma_system" in m for m in gate.messages), gate.messages
        out[name] = _shares(fit.contrasts())
    return out


#: Largest difference of a share from baycomp's (module docstring: near the rope, the
#: simulated case's shares part by the two assumptions the models do not share).
TOLERANCE = {"ranger50": 0.03, "simulated": 0.05}


@pytest.mark.parametrize("name", ["simulated", "ranger50"])
def test_shares_agree_with_baycomp_under_matched_assumptions(shares, name):
    ref = pd.read_csv(OUT).set_index(["case", "nu"])
    for nu in ("normal", "learned"):
        for key, value in shares[name].items():
            expected = ref.loc[(name, nu), key]
            assert value == pytest.approx(expected, abs=TOLERANCE[name]), (key, nu, shares[name])


@pytest.mark.slow
def test_baycomp_model_under_our_assumptions_gives_our_shares(shares, shared_data):
    """baycomp's model in PyMC reproduces baycomp; under bayes_ir's assumptions, bayes_ir.

    Each side's shares carry a Monte Carlo error of about 0.005 (baycomp's own about 0.01:
    its Stan program is centred and unseeded), hence 0.03 against baycomp and 0.02 between
    the port and bayes_ir, whose models then differ by nothing but the datasets' SD priors.
    """
    diff = differences(cases(shared_data)["simulated"])
    port, checks = port_shares(diff, ROPE, rho=1.0 / diff.shape[1])
    rates = (FLAT["sigma_system"], FLAT["sigma_system_collection"])
    ours, ours_checks = port_shares(diff, ROPE, rho=0.0, prior="bayes_ir", rates=rates)
    for c in (checks, ours_checks):
        assert c["rhat"] <= 1.01 and c["divergences"] == 0, c
    ref = pd.read_csv(OUT).set_index(["case", "nu"]).loc[("simulated", "normal")]
    for key in ("p_left", "p_rope", "p_right"):
        assert port[key] == pytest.approx(ref[key], abs=0.03), (port, ref)
        assert ours[key] == pytest.approx(shares["simulated"][key], abs=0.02), (ours, shares)
    # the two assumptions are what part them: with baycomp's, the shares differ by > 0.02
    assert max(abs(port[k] - shares["simulated"][k]) for k in port) > 0.02
