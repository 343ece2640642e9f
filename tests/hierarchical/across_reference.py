"""The tables, priors and R runs of the cross-checks of the model across groups.

``python tests/hierarchical/across_reference.py [names...]`` (from the repository root, with
``../shared/data`` present) writes every dataset's inputs to a temporary folder, runs
``tests/results/across/brms_across.R`` and ``lme4_across.R`` on them and stores the
outputs as ``tests/results/across/<name>_{brms,lme4}.csv``; the tests compare the fits
with those files, and the live tests (``rscript`` fixture) run R again.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from bayes_ir.hierarchical.design import collections_design, design_priors, segments_design
from bayes_ir.hierarchical.families import get_family
from bayes_ir.readers import read_scores
from bayes_ir.table import ScoreTable

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "results" / "across"
#: Seed of brms.
R_SEED = 2029


@dataclass(frozen=True)
class Case:
    """One cross-check: the table, its design and the options of fit_across."""

    name: str
    table: ScoreTable
    design: str  # "collections" or "segments"
    options: dict = field(default_factory=dict)
    brms_table: ScoreTable | None = None  # a subsample for brms (GLUE's 57k examples)
    adapt_delta: float = 0.99  # Stan's target acceptance in brms
    iterations: tuple[int, int] = (3000, 1000)  # brms' iter and warmup per chain
    #: brms's own diagnostics gate for its stored run, (R-hat below, divergences at most):
    #: the usual one, except where brms did not sample the model cleanly (cases() says why)
    brms_gate: tuple[float, int] = (1.01, 0)
    family: str = "gaussian"  # fit_across's likelihood and brms_across.R's family

    def build(self, table: ScoreTable | None = None, *, sigma: str = "collection"):
        """The design of ``table`` (default: the case's table)."""
        t = self.table if table is None else table
        if self.design == "segments":
            return segments_design(t, self.options["segments"])
        return collections_design(t, measure=self.options.get("measure"), sigma=sigma)

    def rates(self) -> dict[str, float]:
        """One Exponential rate per scale (brms takes one rate per class of SD).

        The autoscaled rates of the design with one residual and topic SD.
        """
        design = self.build(sigma="pooled")
        pri = design_priors(design, family=self.likelihood())
        inter = next(t for t in design.terms if t.name.startswith("system:"))
        out = {
            "sigma_topic": float(pri.rates["topic"][0]),
            "sigma_system": float(pri.rates["system"][0]),
            inter.scale_name: float(pri.rates[inter.name][0]),
        }
        if pri.residual_rate.size:  # the Gaussian model's residual SD
            out["sigma"] = float(pri.residual_rate[0])
        return out

    def likelihood(self):
        """The logit family of the case, or None for the Gaussian model."""
        return None if self.family == "gaussian" else get_family(self.family)


def _simulated() -> ScoreTable:
    """5 collections x 30-80 topics x 10 systems, a residual and topic SD per collection."""
    rng = np.random.default_rng(29)
    beta = rng.normal(0, 0.03, 10)
    rows = []
    for c, (n_t, sig) in enumerate(
        zip((30, 50, 80, 40, 60), (0.08, 0.12, 0.1, 0.15, 0.09), strict=True)
    ):
        gamma = rng.normal(0, 0.015, 10)
        for t in range(n_t):
            a = rng.normal(0, 0.12 + 0.02 * c)
            for s in range(10):
                y = 0.4 + 0.05 * c + a + beta[s] + gamma[s] + rng.normal(0, sig)
                rows.append((f"sim{c}", "AP", f"sys{s}", f"q{t}", y))
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    table = ScoreTable.from_frame(frame, check_range=False)
    return table.with_roles(champion="sys0", challengers=["sys1", "sys2", "sys3"])


def _simulated_bernoulli(truth: bool = False):
    """4 collections x 40-70 items x 5 systems, 0/1 outcomes of the logit model.

    With ``truth``, also ``{(challenger, collection): true contrast}``: the difference of
    the expected scores over the collection's item population (scipy's quadrature).
    """
    from scipy import integrate, special, stats

    rng = np.random.default_rng(31)
    beta = np.array([0.0, 0.35, -0.2, 0.1, 0.5])
    rows, known = [], {}
    for c, (n_t, b0, tau) in enumerate(
        zip((40, 70, 50, 60), (0.4, 1.4, -0.3, 0.9), (0.8, 1.2, 1.0, 1.5), strict=True)
    ):
        gamma = rng.normal(0, 0.25, beta.size)
        for t in range(n_t):
            a = rng.normal(0, tau)
            for s in range(beta.size):
                p = special.expit(b0 + a + beta[s] + gamma[s])
                rows.append((f"task{c}", "accuracy", f"m{s}", f"i{t}", float(rng.random() < p)))

        def mean(x, b0=b0, tau=tau):
            f = lambda u: special.expit(b0 + x + u) * stats.norm.pdf(u, 0, tau)  # noqa: E731
            return integrate.quad(f, -12 * tau, 12 * tau)[0]

        for s in (1, 2):
            known[(f"m{s}", f"task{c}")] = mean(beta[s] + gamma[s]) - mean(beta[0] + gamma[0])
    frame = pd.DataFrame(rows, columns=["collection", "measure", "system", "topic", "score"])
    table = ScoreTable.from_frame(frame).with_roles(champion="m0", challengers=["m1", "m2"])
    return (table, known) if truth else table


def cases(data: Path) -> dict[str, Case]:
    """The cross-checks on ``data`` (``../shared/data``)."""
    out = {}
    ranger = read_scores(data / "ranger" / "retrieval_perquery_tidy.csv.gz")
    ranger = ranger.select(measure="nDCG@10")
    ranger = ranger.with_roles(champion="tasb_dim768_hf", challengers=["colberter_dim1"])
    # brms on all 2,214 topics at adapt_delta 0.99 did not finish in 2 hours (two sessions):
    # brms takes the first 100 topics of each collection (548 topics; lme4 the whole table)
    pairs = ranger.data.drop_duplicates(["collection", "topic"])[["collection", "topic"]]
    kept = pairs[pairs.groupby("collection", observed=True).cumcount() < 100]
    ranger_sub = ScoreTable.from_frame(ranger.data.merge(kept)).with_roles(
        champion="tasb_dim768_hf", challengers=["colberter_dim1"]
    )
    # brms did not sample the two real tables of two systems cleanly (4 x 1,000 draws, tree
    # depth 10 reached by every draw): its i.i.d. system effects leave their sum to trade
    # with the collections' intercepts (a ridge), beside sd(system)'s funnel with one degree
    # of freedom. Ranger (adapt_delta 0.99): 19 divergent transitions, R-hat 1.013; GLUE
    # (971 examples, adapt_delta 0.999): 25, R-hat 1.054 (sd(system)). There its Monte Carlo
    # SEs, widened by the low ESS, carry the comparison.
    out["ranger_retrieval"] = Case("ranger_retrieval", ranger, "collections",
                                   brms_table=ranger_sub, iterations=(2000, 1000),
                                   brms_gate=(1.02, 20))  # fmt: skip
    glue = read_scores(data / "ranger" / "glue_persample_tidy.csv.gz")
    glue = glue.with_roles(champion="bert-base-cased", challengers=["distilbert-base-cased"])
    first = glue.data[glue.data["topic"].astype(int) < 150]
    sub = ScoreTable.from_frame(first).with_roles(
        champion="bert-base-cased", challengers=["distilbert-base-cased"]
    )
    # GLUE's two systems leave sd(system) one degree of freedom: its funnel needs Stan's
    # smaller steps
    out["glue"] = Case("glue", glue, "collections", brms_table=sub, adapt_delta=0.999,
                       iterations=(2000, 1000), brms_gate=(1.06, 25))  # fmt: skip
    cast = read_scores(data / "trec_cast" / "cast2021_baselines_perturn.csv.gz")
    cast = cast.select(measure="ndcg_cut_3").with_roles(
        champion="org_manual_bm25", challengers=["org_manual_ance_bert", "org_convdr_bert"]
    )
    segments = {t: t.split("_")[0] for t in cast.topics}
    out["cast"] = Case("cast", cast, "segments", {"segments": segments})
    out["simulated"] = Case("simulated", _simulated(), "collections")
    out["bernoulli"] = Case("bernoulli", _simulated_bernoulli(), "collections",
                            iterations=(2500, 1000), family="bernoulli")  # fmt: skip
    return out


def write_inputs(case: Case, folder: Path, *, brms: bool) -> tuple[Path, Path]:
    """The data and priors CSV files the R scripts read."""
    table = case.brms_table if brms and case.brms_table is not None else case.table
    design = case.build(table)
    cells = design.cells
    group = cells["segment"] if case.design == "segments" else cells["collection"]
    data = pd.DataFrame({"group": group, "topic": cells["topic"], "system": cells["system"],
                         "score": design.y})  # fmt: skip
    pri = design_priors(design, rates=case.rates(), family=case.likelihood())
    rows = []
    b0 = design.terms[0]
    for lev, m, s in zip(b0.levels, pri.intercept_mu, pri.intercept_sd, strict=True):
        rows += [("b0_mu", lev, m), ("b0_sd", lev, s)]
    rates = case.rates()
    rows += [("sigma_rate", "all", rates.get("sigma", np.nan)),
             ("topic_rate", "all", rates["sigma_topic"]),
             ("system_rate", "all", rates["sigma_system"])]  # fmt: skip
    rows.append(
        ("sxc_rate", "all", next(v for k, v in rates.items() if k.startswith("sigma_system_")))
    )
    data_path, prior_path = folder / f"{case.name}_data.csv", folder / f"{case.name}_priors.csv"
    data.to_csv(data_path, index=False)
    pd.DataFrame(rows, columns=["name", "level", "value"]).to_csv(prior_path, index=False)
    return data_path, prior_path


def run_brms(case: Case, rscript: str, out: Path) -> subprocess.CompletedProcess:
    """Run brms_across.R on the case."""
    with tempfile.TemporaryDirectory() as tmp:
        data, priors = write_inputs(case, Path(tmp), brms=True)
        roles = [case.table.champion, ",".join(case.table.challengers), case.design]
        # R reads its script as it runs it: a copy, so editing the stored one is safe
        script = Path(shutil.copy(RESULTS / "brms_across.R", tmp))
        args = [rscript, str(script), str(data), str(priors), str(out),
                *roles, str(R_SEED), str(case.adapt_delta), *map(str, case.iterations),
                case.family]  # fmt: skip
        return subprocess.run(args, capture_output=True, text=True, timeout=6 * 3600)


def run_lme4(case: Case, rscript: str, out: Path) -> subprocess.CompletedProcess:
    """Run lme4_across.R on the case (the whole table)."""
    with tempfile.TemporaryDirectory() as tmp:
        data, _ = write_inputs(case, Path(tmp), brms=False)
        args = [rscript, str(RESULTS / "lme4_across.R"), str(data), str(out),
                case.table.champion, case.design]  # fmt: skip
        return subprocess.run(args, capture_output=True, text=True, timeout=1800)


if __name__ == "__main__":  # store the R outputs
    rscript = shutil.which("Rscript")
    assert rscript, "R is not installed"
    chosen = cases(ROOT.parent / "shared" / "data")
    names = sys.argv[1:] or list(chosen)
    for name in names:
        tools = (("lme4", run_lme4), ("brms", run_brms))
        for tool, run in tools if chosen[name].family == "gaussian" else tools[1:]:
            done = run(chosen[name], rscript, RESULTS / f"{name}_{tool}.csv")
            print(name, tool, done.returncode, done.stderr[-2000:], flush=True)
