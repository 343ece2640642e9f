"""Text of a :class:`~bayes_ir.decision.Decision`: the rule, the table, what would settle it."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayes_ir.decision.more_topics import ASSUMPTIONS
from bayes_ir.report.marks import MISFIT_MARK, marked
from bayes_ir.report.numbers import format_probability

__all__ = ["decision_summary", "format_probability", "runs_lines"]


def _rows(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:-1], widths[1:-1], strict=True))
        return "  ".join([first, *rest, cells[-1]]).rstrip()

    return [line(header), *(line(r) for r in rows)]


def runs_lines(d: Any) -> list[str]:
    """Return the runs block of a decision of runs: P(a random run beats the champion's)."""
    lines = ["", f"Runs (seeds) of each challenger and of {d.champion!r}; P(run beats): "
             "the probability that a random run of the challenger beats a random run of the "
             "champion (the run-to-run variance included):"]  # fmt: skip
    header = ["challenger", "runs", "run-to-run SD", "P(better in expectation)",
              "P(run beats)", ""]  # fmt: skip
    rows = [
        [
            marked(str(r.challenger), d.misfit),
            f"{r.runs_challenger} vs {r.runs_champion}",
            f"{r.run_sd_challenger:.4f} vs {r.run_sd_champion:.4f}",
            format_probability(r.p_better_expectation),
            format_probability(r.p_run_beats),
            "",
        ]
        for r in d.runs.itertuples(index=False)
    ]
    return [*lines, *_rows(header, rows)]


def decision_summary(decision: Any) -> str:
    """Header, the rule, one row per challenger, P(best), and the more-topics table."""
    d = decision
    measure = f" {d.measure}" if d.measure else ""
    what = "better by more than" if d.mode == "superiority" else "not worse by more than"
    lines = [
        d.header,
        f"Decision: deploy a challenger when it is {what} {d.margin:g}{measure} "
        f"({d.mode.replace('_', '-')}); overall: {d.overall.upper()}",
        f"Rule: {d.rule}",
    ]
    if d.misfit:  # and each of them carries the mark in the tables below
        which = "it" if len(d.misfit) == 1 else "them"
        lines.insert(1, f"MODEL MISFIT ({MISFIT_MARK}): the model does not describe "
                        f"{', '.join(d.misfit)}: no decision is taken for {which}")  # fmt: skip
    if not d.diagnostics_passed:
        lines.insert(1, "DIAGNOSTICS FAILED: no decision can be taken from this posterior")
    pct = f"{100 * d.ci_prob:g}%"
    diff = "risk-adjusted difference" if d.r != 1 else "difference"
    note = getattr(d.comparison, "scale_note", "b0 + effect")
    means = (
        "system means" if note == "b0 + effect" else f"system means on the measure's scale: {note}"
    )
    if d.runs is not None:
        means = (
            "expected scores over seeds"
            if d.over == "expectation"
            else "one run of each, drawn at random"
        )
    lines += ["", f"Challengers minus champion {d.champion!r} ({diff} of {means}; m = "
              f"{d.margin:g}):"]  # fmt: skip
    header = ["challenger", "mean", f"{pct} interval", "P(>m)", "P(|d|<=m)", "P(<-m)",
              "P(best)", "L_deploy", "L_keep", "action"]  # fmt: skip
    rows = [
        [
            marked(str(r.challenger), d.misfit),
            f"{r.mean:+.4f}",
            f"[{r.ci_lower:+.4f}, {r.ci_upper:+.4f}]",
            format_probability(r.p_better),
            format_probability(r.p_equivalent),
            format_probability(r.p_worse),
            format_probability(r.p_best),
            f"{r.loss_deploy:.4f}",
            f"{r.loss_keep:.4f}",
            str(r.action),
        ]
        for r in d.table.itertuples(index=False)
    ]
    lines += _rows(header, rows)
    lines += [f"  {r.challenger}: {r.reason}" for r in d.table.itertuples(index=False)]
    if d.runs is not None:
        lines += runs_lines(d)
    lines += ["", "Picking one system (champion and challengers):"]
    header = ["system", "P(best)", "E[loss of picking it]"]
    rows = [
        [marked(str(r.system), d.misfit), format_probability(r.p_best), f"{r.expected_loss:.4f}"]
        for r in d.best.itertuples(index=False)
    ]
    lines += _rows([*header, ""], [[*row, ""] for row in rows])
    if len(d.more_topics):
        lines += [
            "",
            "How many more topics would settle it (pre-posterior analysis; assumes "
            + ASSUMPTIONS
            + "):",
        ]
        header = ["challenger", "+topics", "P(deploy)", "P(keep)", "P(undecided)", "E[loss]",
                  "Sakai n"]  # fmt: skip
        rows = [
            [
                str(r.challenger),
                str(r.topics_added),
                format_probability(r.p_deploy),
                format_probability(r.p_keep),
                format_probability(r.p_undecided),
                f"{r.expected_loss:.4f}",
                "" if not np.isfinite(r.sakai_total_topics) else str(int(r.sakai_total_topics)),
            ]
            for r in d.more_topics.itertuples(index=False)
        ]
        lines += _rows(header, rows)
        lines.append(
            "  Sakai n: total topics a paired t-test (alpha 0.05, power 0.8) needs to detect a "
            "difference of the margin, with the posterior per-topic SD (a plan made before "
            "data, for one fixed difference)."
        )
    return "\n".join(lines)
