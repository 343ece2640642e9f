"""Text of a :class:`~bayes_ir.decision.more_runs.MoreRuns`: the grid, the cheapest cell."""

from __future__ import annotations

from typing import Any

from bayes_ir.decision.more_runs import MORE_RUNS_ASSUMPTIONS, SYSTEMS_RUN
from bayes_ir.report.numbers import format_probability

__all__ = ["more_runs_line", "more_runs_summary"]

#: How the quantity decided on is named.
_OVER = {
    "expectation": "in expectation over seeds",
    "single_run": "one run of each, drawn at random (run-to-run variance included)",
}


def _cost(value: float) -> str:
    return f"{value:g}"


def _what(k: int, m: int) -> str:
    """Say a cell: ``+25 topics and +2 runs of each``."""
    parts = [f"+{k} topics"] if k else []
    if m:
        parts.append(f"+{m} run{'s' if m > 1 else ''} of each system")
    return " and ".join(parts) or "no more data"


def _no_cell(plan: Any) -> str:
    """Say what the grid does reach when no cell reaches the target (the best cell, each way)."""
    g = plan.grid
    best = g.sort_values(["p_decided", "cost"], ascending=[False, True], kind="stable").iloc[0]
    top_k, top_m = max(plan.topics), max(plan.runs)
    runs, topics = plan.cell(0, top_m), plan.cell(top_k, 0)
    text = (
        f"No cell of the grid reaches P(decided) >= {plan.target:g}. The best: "
        f"+{int(best.topics_added)} topics and +{int(best.runs_added)} runs of each "
        f"(P {format_probability(best.p_decided)}, cost {best.cost:g}); runs alone (+{top_m} "
        f"of each, cost {runs.cost:g}): P {format_probability(runs.p_decided)}; topics alone "
        f"(+{top_k}, cost {topics.cost:g}): P {format_probability(topics.p_decided)}."
    )
    if plan.over == "single_run":
        text += (
            " One run of each keeps the run-to-run variance however much data is added: "
            "the single-run question may stay open."
        )
    return text


def _sooner(result: Any) -> str:
    """One sentence: do more runs or more topics settle it sooner."""
    g = result.grid
    ok = g[g["p_decided"] >= result.target]
    target = f"P(decided) >= {result.target:g}"
    if result.sooner == "settled":
        return f"Already settled: the decision now reaches {target}."
    if result.sooner == "neither":
        return _no_cell(result)
    topics = ok[ok["runs_added"] == 0].sort_values("cost")
    runs = ok[ok["topics_added"] == 0].sort_values("cost")
    said = []
    if len(runs):
        r = runs.iloc[0]
        said.append(f"runs alone: {_what(0, int(r.runs_added))} (cost {_cost(r.cost)})")
    if len(topics):
        t = topics.iloc[0]
        said.append(f"topics alone: {_what(int(t.topics_added), 0)} (cost {_cost(t.cost)})")
    lead = {
        "runs": "More runs (seeds) settle it sooner than more topics",
        "topics": "More topics settle it sooner than more runs (seeds)",
        "either": "More runs and more topics settle it at the same cost",
        "both": "Neither more topics alone nor more runs alone reach it in the grid; both do",
    }[result.sooner]
    return f"{lead}" + (f": {'; '.join(said)}." if said else ".")


def more_runs_line(result: Any) -> str:
    """One line for a short output: the cheapest cell that settles it, and which data."""
    r = result
    if r.cheapest is None or r.sooner == "settled":
        return f"{r.challenger}: {_sooner(r)}"
    k, m = r.cheapest
    c = r.grid.set_index(["topics_added", "runs_added"]).loc[(k, m)]
    return (
        f"{r.challenger}: {_what(k, m)} would settle it with probability "
        f"{format_probability(c.p_decided)} (cost {_cost(c.cost)}, the cheapest of the grid). "
        + _sooner(r)
    )


def more_runs_summary(result: Any) -> str:
    """Header, the data now, the grid of P(decided) (cost), the cheapest cell, assumptions."""
    r = result
    cur = r.current
    measure = f" {r.measure}" if r.measure else ""
    what = "better by more than" if r.mode == "superiority" else "not worse by more than"
    lines = [
        r.header,
        f"More topics or more runs? {r.challenger} vs {r.champion}, decided "
        f"{_OVER[r.over]}: deploy when {what} {r.margin:g}{measure} (P >= {r.p_min:g}, "
        f"expected loss <= {r.threshold:g})",
        f"Now: {cur['topics']} topics, {cur['runs_challenger']} vs {cur['runs_champion']} runs; "
        f"contrast {cur['mean']:+.4f} (SD {cur['sd']:.4f}): {cur['action']}",
        f"Variance parts (root posterior means of squares): run-to-run SD "
        f"{cur['run_sd_challenger']:.4f} vs {cur['run_sd_champion']:.4f}, topic x system SD "
        f"{cur['sigma_topic_system']:.4f}, residual SD {cur['sigma']:.4f}",
    ]
    if not r.diagnostics_passed:
        lines.insert(1, "DIAGNOSTICS FAILED: the posterior this plan starts from is not reliable")
    if r.misfit:
        lines.insert(1, f"MODEL MISFIT: the model does not describe {', '.join(r.misfit)}")
    lines += [
        "",
        f"P(decided) after adding topics (rows) and runs of each of the {SYSTEMS_RUN} systems "
        f"(columns); [cost = topics x {r.cost_topic:g} + runs x {SYSTEMS_RUN} x "
        f"{r.cost_run:g}]; * the cheapest cell reaching {r.target:g}:",
    ]
    grid = r.grid.set_index(["topics_added", "runs_added"])
    header = ["+topics \\ +runs", *(f"+{m}" for m in r.runs)]
    rows = []
    for k in r.topics:
        row = [f"+{k}"]
        for m in r.runs:
            c = grid.loc[(k, m)]
            mark = "*" if r.cheapest == (k, m) else " "
            row.append(f"{format_probability(c.p_decided)} [{_cost(c.cost)}]{mark}")
        rows.append(row)
    widths = [max(len(h), *(len(x[i]) for x in rows)) for i, h in enumerate(header)]
    for cells in (header, *rows):
        lines.append(
            "  ".join([cells[0].ljust(widths[0]),
                       *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))]).rstrip()
        )  # fmt: skip
    if r.cheapest is not None:
        k, m = r.cheapest
        c = grid.loc[(k, m)]
        lines += [
            "",
            f"Cheapest cell reaching P(decided) >= {r.target:g}: {_what(k, m)} (cost "
            f"{_cost(c.cost)}): P(deploy) {format_probability(c.p_deploy)}, P(keep champion) "
            f"{format_probability(c.p_keep)}, P(undecided) {format_probability(c.p_undecided)}, "
            f"E[loss] {c.expected_loss:.4f}",
        ]
    lines += [_sooner(r), f"Assumptions: {MORE_RUNS_ASSUMPTIONS}.",
              f"({r.n_sim:,} simulations per cell; Monte Carlo SE of P(decided) <= "
              f"{float(r.grid['mc_se'].max()):.3f}; seed {r.seed}.)"]  # fmt: skip
    return "\n".join(lines)
