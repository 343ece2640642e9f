"""The table, priors and R runs of the cross-checks of the replicate model (issue 30).

``python tests/hierarchical/replicates_reference.py [lme4] [brms]`` (from the repository
root) writes the simulated table's inputs to a temporary folder, runs
``tests/results/replicates/lme4_replicates.R`` and ``brms_replicates.R`` on them and
stores the outputs as ``tests/results/replicates/simulated_{lme4,lme4_system,brms}.csv``
(brms's wall times in ``simulated_brms_time.txt``); the tests compare the fits with those
files, and the live tests run R again.

The model, :func:`bayes_ir.hierarchical.design.replicates_design`:
``y[t,s,r] = b0 + topic[t] + system[s] + (topic x system)[t,s] + replicate[s,r] + e``.
The R scripts use i.i.d. topic and system effects (ours sum to zero); the system
contrasts, the scales and the residual SD have the same distribution either way (the
sums move into the intercept, whose prior is wide).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from bayes_ir.hierarchical.design import design_priors, replicates_design
from bayes_ir.table import ScoreTable

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "results" / "replicates"
NAME = "simulated"
#: Seed of brms (and of its new-seed draws).
R_SEED = 2030
#: The simulation: 50 topics x 5 systems x 5 seeds.
N_TOPICS, N_SEEDS = 50, 5
INTERCEPT = 0.4
SYSTEM_EFFECTS = (0.0, 0.01, 0.03, -0.02, 0.0)
SD_TOPIC, SD_TOPIC_SYSTEM, SD_REPLICATE, SD_RESIDUAL = 0.15, 0.04, 0.03, 0.05
CHAMPION, CHALLENGERS = "sys0", ("sys1", "sys2", "sys3")
#: The scale names of the pooled design, in the order of the priors file.
SCALES = ("sigma", "sigma_topic", "sigma_system", "sigma_topic_system", "sigma_replicate")


def case() -> ScoreTable:
    """The seeded simulated table: columns collection, measure, system, topic, replicate,
    score, sorted by topic, system, replicate; champion sys0, challengers sys1 to sys3
    (sys4 an artifact)."""
    rng = np.random.default_rng(30)
    n_sys = len(SYSTEM_EFFECTS)
    topic = rng.normal(0, SD_TOPIC, N_TOPICS)
    inter = rng.normal(0, SD_TOPIC_SYSTEM, (N_TOPICS, n_sys))
    run = rng.normal(0, SD_REPLICATE, (n_sys, N_SEEDS))
    noise = rng.normal(0, SD_RESIDUAL, (N_TOPICS, n_sys, N_SEEDS))
    rows = [
        ("sim", "AP", f"sys{s}", f"q{t:02d}", f"seed{r}",
         INTERCEPT + topic[t] + SYSTEM_EFFECTS[s] + inter[t, s] + run[s, r] + noise[t, s, r])
        for t in range(N_TOPICS) for s in range(n_sys) for r in range(N_SEEDS)
    ]  # fmt: skip
    columns = ["collection", "measure", "system", "topic", "replicate", "score"]
    frame = pd.DataFrame(rows, columns=columns)
    table = ScoreTable(data=frame, source="simulated replicates (issue 30)")
    return table.with_roles(champion=CHAMPION, challengers=list(CHALLENGERS))


def rates(table: ScoreTable) -> dict[str, float]:
    """One Exponential rate per scale (brms takes one rate per class of SD): the autoscaled
    rates of the pooled design."""
    design = replicates_design(table)
    pri = design_priors(design)
    out = {"sigma": float(pri.residual_rate[0])}
    for t in design.terms[1:]:
        out[t.scale_name] = float(pri.rates[t.name][0])
    assert tuple(out) == SCALES, tuple(out)
    return out


def write_inputs(table: ScoreTable, folder: Path) -> tuple[Path, Path]:
    """The data (topic, system, replicate, score) and priors (name, value) CSV files the R
    scripts read: ``b0_mu``, ``b0_sd`` and the rate of every scale (``<scale>_rate``)."""
    design = replicates_design(table)
    cells = design.cells
    data = pd.DataFrame({"topic": cells["topic"], "system": cells["system"],
                         "replicate": cells["replicate"], "score": design.y})  # fmt: skip
    pri = design_priors(design)
    rows = [("b0_mu", float(pri.intercept_mu[0])), ("b0_sd", float(pri.intercept_sd[0]))]
    rows += [(f"{k}_rate", v) for k, v in rates(table).items()]
    data_path, prior_path = folder / f"{NAME}_data.csv", folder / f"{NAME}_priors.csv"
    data.to_csv(data_path, index=False)
    pd.DataFrame(rows, columns=["name", "value"]).to_csv(prior_path, index=False)
    return data_path, prior_path


def run_lme4(table: ScoreTable, rscript: str, out: Path) -> subprocess.CompletedProcess:
    """Run lme4_replicates.R: ``out`` the pooled run-to-run SD, ``<out>_system`` one per
    system (``simulated_lme4.csv`` and ``simulated_lme4_system.csv``)."""
    with tempfile.TemporaryDirectory() as tmp:
        data, _ = write_inputs(table, Path(tmp))
        out_system = out.with_name(out.stem + "_system.csv")
        args = [rscript, str(RESULTS / "lme4_replicates.R"), str(data), str(out),
                str(out_system), str(table.champion)]  # fmt: skip
        return subprocess.run(args, capture_output=True, text=True, timeout=1800)


def run_brms(table: ScoreTable, rscript: str, out: Path) -> subprocess.CompletedProcess:
    """Run brms_replicates.R (``out`` and its wall times in ``<out>_time.txt``)."""
    with tempfile.TemporaryDirectory() as tmp:
        data, priors = write_inputs(table, Path(tmp))
        args = [rscript, str(RESULTS / "brms_replicates.R"), str(data), str(priors), str(out),
                str(table.champion), ",".join(table.challengers), str(R_SEED)]  # fmt: skip
        return subprocess.run(args, capture_output=True, text=True, timeout=7200)


if __name__ == "__main__":  # store the R outputs
    rscript = shutil.which("Rscript")
    assert rscript, "R is not installed"
    RESULTS.mkdir(parents=True, exist_ok=True)
    tools = sys.argv[1:] or ["lme4", "brms"]
    for tool in tools:
        run = {"lme4": run_lme4, "brms": run_brms}[tool]
        done = run(case(), rscript, RESULTS / f"{NAME}_{tool}.csv")
        print(tool, done.returncode, done.stderr[-2000:], flush=True)
