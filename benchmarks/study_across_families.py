"""Simulation-based calibration of the Bernoulli model across collections (issue 29).

Known truth drawn from fully specified priors (Talts et al. 2018) on 4 collections x 15-30
items x 3 systems of 0/1 outcomes; each dataset fitted by NUTS on the PyMC twin (compiled
once per worker, the outcomes swapped as data containers), 2 chains x 500 draws. Prints
the rank-uniformity test of every parameter and reported quantity (the score-scale
contrasts overall and per collection, the between-collection SD) and the coverage of the
90% intervals of the reported ones.

Run: ``python benchmarks/study_across_families.py [N_DATASETS]`` (default 400; about 2-3 s
per dataset on 2 cores).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "hierarchical")]

from test_design_calibration import bernoulli_collections  # noqa: E402

from bayes_ir.hierarchical.design_calibration import (  # noqa: E402
    calibrate_design,
    design_parameter_names,
)
from bayes_ir.hierarchical.families import get_family  # noqa: E402


def main(n: int) -> None:
    design, priors = bernoulli_collections()
    family = get_family("bernoulli")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = calibrate_design(design, priors, n_datasets=n, seed=1, max_workers=2,
                               family=family, tune=300)  # fmt: skip
    print(f"{n} datasets in {time.perf_counter() - t0:.0f} s")
    print(res.summary(bins=10))
    names = design_parameter_names(design, family)
    start = names.index("s1 - s0")
    frame = res.to_frame(bins=10).iloc[start:].set_index("parameter")
    print(frame[["coverage", "p_value"]].to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
