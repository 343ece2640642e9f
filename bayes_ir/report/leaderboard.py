r"""A leaderboard as text, Markdown, LaTeX and a self-contained HTML page: one formatter each.

Every output shows the same board (:class:`~bayes_ir.hierarchical.Leaderboard`): place,
system, posterior mean with its interval, mean rank with its rank interval, P(best),
P(top k) and the tie group, the groups marked as in a paper (a rule between groups in
text and LaTeX, the group number and the leader in bold in Markdown, shaded bands in
HTML), a system the model check flags marked ``misfit`` (a dagger in LaTeX), a failed
diagnostics gate first, the rule of the groups in one line, and the Friedman-Nemenyi
companion. Names are escaped for each format (:mod:`bayes_ir.report.escape`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayes_ir.report.escape import latex_escape, markdown_escape
from bayes_ir.report.numbers import format_probability

__all__ = [
    "BORDERLINE_MARK",
    "MISFIT_MARK",
    "how_to_read",
    "leaderboard_cells",
    "leaderboard_latex",
    "leaderboard_markdown",
    "leaderboard_text",
    "render_leaderboard",
]

#: Word marking a system the model check flags, in text, Markdown and HTML.
MISFIT_MARK = "misfit"
#: Mark after the group of a system the rule decided within Monte Carlo error.
BORDERLINE_MARK = "*"


def _num(x: float, digits: int = 4) -> str:
    return "" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def _where(lb: Any) -> str:
    if lb.measure and lb.collection:
        return f"{lb.measure} on {lb.collection}"
    return lb.measure or lb.collection or "scores"


def _pct(p: float) -> str:
    return f"{100 * p:g}%"


def leaderboard_cells(lb: Any) -> pd.DataFrame:
    """Return the board as display strings, one row per system (shared by every output).

    Columns ``place, system, mean, interval, rank, rank_interval, p_best, p_top, group``
    (with :data:`BORDERLINE_MARK` when borderline), ``number`` (the group, an integer),
    ``leader`` (bool), ``fit`` (``"misfit"`` or ``""``); probabilities by
    :func:`~bayes_ir.report.numbers.format_probability`.
    """
    f = lb.frame
    return pd.DataFrame(
        {
            "place": f["place"].astype(str),
            "system": f["system"].astype(str),
            "mean": f["mean"].map(_num),
            "interval": [f"[{_num(a)}, {_num(b)}]" for a, b in zip(f["ci_lower"], f["ci_upper"],
                                                                     strict=True)],
            "rank": f["rank_mean"].map(lambda v: f"{v:.1f}"),
            "rank_interval": [
                f"{int(a)}" if a == b else f"{int(a)}-{int(b)}"
                for a, b in zip(f["rank_lower"], f["rank_upper"], strict=True)
            ],
            "p_best": f["p_best"].map(format_probability),
            "p_top": f["p_top"].map(format_probability),
            "group": [
                f"{g}{BORDERLINE_MARK}" if b else str(g)
                for g, b in zip(f["group"], f["borderline"], strict=True)
            ],
            "number": f["group"].to_numpy(dtype=int),
            "leader": (f["system"] == f["leader"]).to_numpy(),
            "fit": np.where(f["misfit"].to_numpy(dtype=bool), MISFIT_MARK, ""),
        }
    )  # fmt: skip


def how_to_read(lb: Any) -> str:
    """One line: what a tie group and a rank interval mean on this board."""
    unit = f" {lb.measure}" if lb.measure else ""
    return (
        f"How to read: each group runs from its leader down to the last system not shown "
        f"behind the leader by more than {lb.rope:g}{unit} (P >= {lb.p_min:g}); the rank "
        f"interval holds the system's rank with probability {lb.ci_prob:g}."
    )


def _misfit_line(lb: Any) -> str | None:
    if not lb.model_checked:
        return "no model check was run: misfit cannot be told (fit with model_check=True)"
    if not lb.misfit:
        return None
    names = ", ".join(lb.misfit[:8]) + (f" and {len(lb.misfit) - 8} more" if len(lb.misfit) > 8
                                        else "")  # fmt: skip
    return (
        f"MODEL MISFIT: the {lb.likelihood} model does not describe {len(lb.misfit)} of "
        f"{len(lb.frame)} systems ({names}): their places rest on a model that does not "
        "fit their scores"
    )


def _facts(lb: Any) -> str:
    p = lb.provenance
    sampler = f", {p['sampler']} sampler" if p.get("sampler") else ""
    return (
        f"{len(lb.frame)} systems on {lb.n_topics} topics ({lb.likelihood} model{sampler}; "
        f"{lb.n_draws:,} posterior draws)"
    )


def _borderline_line(lb: Any) -> str | None:
    names = list(lb.frame.loc[lb.frame["borderline"].to_numpy(dtype=bool), "system"])
    if not names:
        return None
    return (
        f"{BORDERLINE_MARK} decided within Monte Carlo error of P >= {lb.p_min:g} "
        f"({', '.join(names[:6])}{' ...' if len(names) > 6 else ''}): another seed may move "
        "the group boundary there; refit with more draws to settle it"
    )


def _header(lb: Any) -> str:
    return f"Leaderboard: {_where(lb)}, {_facts(lb)}"


def _companion_line(lb: Any) -> str:
    fr = lb.friedman
    if fr is None:
        return lb.friedman_note or "no Friedman test"
    rows = len(fr.cliques)
    return (
        f"Frequentist companion: {fr.test_line()}; {rows} overlapping group"
        f"{'s' if rows != 1 else ''} of the CD diagram (cd_groups)"
    )


def _group_lines(lb: Any) -> list[str]:
    out = []
    for number, members in enumerate(lb.groups(), 1):
        first = int(lb.frame.loc[lb.frame["system"] == members[0], "place"].iloc[0])
        places = (
            f"place {first}" if len(members) == 1 else f"places {first}-{first + len(members) - 1}"
        )
        out.append(f"  group {number}: {places}, led by {members[0]} ({len(members)} system"
                   f"{'s' if len(members) != 1 else ''})")  # fmt: skip
    return out


def leaderboard_text(lb: Any, *, rows: int | None = None) -> str:
    """Return the board as plain text: header, gate, table with rules between groups, groups.

    Parameters
    ----------
    lb
        A :class:`~bayes_ir.hierarchical.Leaderboard`.
    rows
        Show only the first ``rows`` places (default: all), saying how many are left out.
    """
    cells = leaderboard_cells(lb)
    shown = cells if rows is None else cells.head(rows)
    k = lb.top
    head = ["place", "system", "mean", f"{_pct(lb.ci_prob)} interval", "rank",
            f"{_pct(lb.ci_prob)} rank", "P(best)", f"P(top {k})", "group", "fit"]  # fmt: skip
    keys = ["place", "system", "mean", "interval", "rank", "rank_interval", "p_best", "p_top",
            "group", "fit"]  # fmt: skip
    widths = [
        max(len(h), *(len(str(v)) for v in shown[c])) for h, c in zip(head, keys, strict=True)
    ]
    left = {"system", "fit", "rank_interval"}

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            str(v).ljust(w) if c in left else str(v).rjust(w)
            for v, w, c in zip(values, widths, keys, strict=True)
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    lines = [_header(lb), lb.gate.banner()]
    misfit = _misfit_line(lb)
    if misfit:
        lines.append(misfit)
    lines += ["", line(head), rule]
    previous = None
    for r in shown.itertuples(index=False):
        if previous is not None and r.number != previous:
            lines.append(rule)
        previous = r.number
        lines.append(line([getattr(r, c) for c in keys]))
    if len(shown) < len(cells):
        lines.append(f"  ... {len(cells) - len(shown)} more places (to_frame() has them all)")
    n_groups = int(lb.frame["group"].max())
    lines += [
        "",
        f"Tie groups, anchored on each group's leader (rope {lb.rope:g}, P >= {lb.p_min:g}): "
        f"{n_groups} group{'s' if n_groups != 1 else ''}",
        *_group_lines(lb),
        *([borderline] if (borderline := _borderline_line(lb)) else []),
        _companion_line(lb),
        how_to_read(lb),
    ]
    return "\n".join(lines)


def leaderboard_markdown(lb: Any) -> str:
    """Return the board as a Markdown table, the group column and each leader in bold.

    Lines under the table state the gate (when it failed), the misfit systems, the rule
    of the groups and the Friedman-Nemenyi companion.
    """
    cells = leaderboard_cells(lb)
    k = lb.top
    pct = _pct(lb.ci_prob)
    head = ["Place", "System", "Mean", f"{pct} interval", "Rank", f"{pct} rank", "P(best)",
            f"P(top {k})", "Group", "Friedman rank"]  # fmt: skip
    align = ["---:", ":---", "---:", ":---:", "---:", ":---:", "---:", "---:", ":---:", "---:"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    ranks = lb.frame["friedman_rank"].to_numpy(dtype=float)
    for r, fr_rank in zip(cells.itertuples(index=False), ranks, strict=True):
        name = markdown_escape(r.system)
        name = f"**{name}**" if r.leader else name
        if r.fit:
            name += " †"
        group = f"**{r.group}**" if r.leader else r.group
        lines.append(
            "| " + " | ".join([r.place, name, r.mean, r.interval, r.rank, r.rank_interval,
                               markdown_escape(r.p_best), markdown_escape(r.p_top), group,
                               _num(fr_rank, 2)]) + " |"
        )  # fmt: skip
    notes = []
    if not lb.diagnostics_passed:
        notes.append("**DIAGNOSTICS FAILED: do not act on these numbers.**")
    misfit = _misfit_line(lb)
    if misfit:
        notes.append("† " + markdown_escape(misfit))
    borderline = _borderline_line(lb)
    if borderline:
        notes.append(markdown_escape(borderline))
    notes += [
        markdown_escape(
            f"Bold: the leader of each tie group. {how_to_read(lb)} {_where(lb)}; "
            f"{len(lb.frame)} systems, {lb.n_topics} topics."
        ),
        markdown_escape(_companion_line(lb)),
    ]
    return "\n".join(lines) + "\n\n" + "\n\n".join(notes) + "\n"


def leaderboard_latex(
    lb: Any, *, caption: str | None = None, label: str | None = "tab:leaderboard"
) -> str:
    r"""Return the board as a LaTeX table in the package's style, the groups between rules.

    A thin ``\cmidrule`` separates the tie groups, each leader's group number is bold, a
    system the model check flags carries a dagger explained under the table, and the
    lines under it state the rule of the groups and the Friedman-Nemenyi companion (and
    a failed diagnostics gate first). See :func:`bayes_ir.report.latex.latex_table`.
    """
    from bayes_ir.report.latex import DIAGNOSTICS_FAILED, latex_table

    cells = leaderboard_cells(lb)
    k = lb.top
    frame = pd.DataFrame(
        {
            "Place": cells["place"],
            "System": cells["system"].map(latex_escape),
            "Mean": cells["mean"],
            f"{_pct(lb.ci_prob)} interval": cells["interval"],
            "Rank": cells["rank"],
            f"{_pct(lb.ci_prob)} rank": cells["rank_interval"].str.replace("-", "--"),
            "P(best)": cells["p_best"].map(latex_escape),
            f"P(top {k})": cells["p_top"].map(latex_escape),
            "Group": [rf"\textbf{{{g}}}" if lead else g for g, lead in zip(cells["group"],
                                                                          cells["leader"],
                                                                          strict=True)],
        }
    )  # fmt: skip
    frame.columns = [latex_escape(c) for c in frame.columns]
    group = lb.frame["group"].to_numpy()
    breaks = [i for i in range(1, len(group)) if group[i] != group[i - 1]]
    notes = [DIAGNOSTICS_FAILED] if not lb.diagnostics_passed else []
    notes += [f"Tie groups between rules; {how_to_read(lb)}"]
    borderline = _borderline_line(lb)
    notes += [borderline, _companion_line(lb)] if borderline else [_companion_line(lb)]
    misfit = _misfit_line(lb)
    marks = {}
    if misfit:
        marks[misfit] = {"System": cells["fit"].to_numpy() == MISFIT_MARK}
    return latex_table(
        frame,
        caption=caption
        or f"Leaderboard, {_where(lb)} ({len(lb.frame)} systems, {lb.n_topics} topics)",
        label=label,
        marks=marks,
        notes=notes,
        escape=False,
        rules=breaks,
    )


def _figures(lb: Any) -> list[dict[str, str]]:
    from bayes_ir.report.html import figure_svg

    where = _where(lb)
    out = [
        {
            "svg": figure_svg(lb.plot(), label=f"Rank intervals, {where}"),
            "caption": f"Rank of each system ({where}): the dot is the posterior mean rank, "
            f"the bar the {_pct(lb.ci_prob)} rank interval; the bands are the tie groups, "
            "alternately shaded; misfit systems in red. Look for bands that hold many "
            "places: those places cannot be told apart.",
        },
        {
            "svg": figure_svg(lb.plot_critical_difference(), label=f"Groups, {where}"),
            "caption": f"Critical-difference-style diagram ({where}): systems on the axis of "
            "their posterior mean rank; the thick bars below the axis join each tie group "
            "(anchored on its leader); the thin bars join the overlapping Friedman-Nemenyi "
            "groups (mean ranks within the critical difference). Look for thin bars that "
            "chain across the thick ones.",
        },
    ]
    return out


def _provenance(lb: Any, inputs: Sequence[str | Path], command: str) -> dict[str, Any]:
    from bayes_ir.provenance import input_hashes

    p = lb.provenance
    return {
        "inputs": input_hashes(inputs),
        "notes": list(getattr(lb, "notes", ())),
        "where": _where(lb),
        "source": p.get("source", ""),
        "model": f"{lb.likelihood} likelihood; {p.get('sampler', '')} sampler; "
        f"{p.get('chains', '')} chains x {p.get('draws', '')} draws; seed {p.get('seed', '')}",
        "rule": f"rope {lb.rope:g}; P >= {lb.p_min:g}; intervals {lb.ci_prob:g}; top {lb.top}",
        "data_hash": p.get("data_hash", ""),
        "command": command,
        "versions": p.get("versions", {}),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def render_leaderboard(lb: Any, *, inputs: Sequence[str | Path] = (), command: str = "") -> str:
    """Render a :class:`~bayes_ir.hierarchical.Leaderboard` with ``templates/leaderboard.html.j2``.

    One self-contained page (figures inline as SVG, no request), styled like the
    deployment review: the gate and misfit banners, the board with the tie groups as
    shaded bands, the groups, the two figures, the frequentist companion, the model
    check of flagged systems, how the data were read (the table's notes) and the
    provenance (``inputs`` with their SHA-256, a folder standing for its files;
    ``command``).
    """
    from bayes_ir.report.html import environment

    cells = leaderboard_cells(lb)
    f = lb.frame
    rows = []
    for r, fr_rank, cd, checks in zip(cells.itertuples(index=False), f["friedman_rank"],
                                      f["cd_groups"], f["failed_checks"], strict=True):  # fmt: skip
        rows.append(r._asdict() | {"friedman_rank": _num(fr_rank, 2), "cd_groups": cd,
                                   "band": int(r.number) % 2, "checks": checks})  # fmt: skip
    groups = [
        {"number": i, "leader": members[0], "size": len(members), "members": members}
        for i, members in enumerate(lb.groups(), 1)
    ]
    fr = lb.friedman
    companion = None
    if fr is not None:
        companion = {
            "line": fr.test_line(),
            "rejected": fr.rejected,
            "groups": [
                {
                    "letter": letter,
                    "members": members,
                    "span": f"{fr.mean_ranks[members[0]]:.1f}-{fr.mean_ranks[members[-1]]:.1f}",
                }
                for letter, members in fr.named_groups().items()
            ],  # fmt: skip
        }
    return (
        environment()
        .get_template("leaderboard.html.j2")
        .render(
            title=f"Leaderboard: {_where(lb)}",
            header=_facts(lb),
            lb=lb,
            gate=lb.gate,
            misfit=_misfit_line(lb),
            borderline=_borderline_line(lb),
            how_to_read=how_to_read(lb),
            pct=_pct(lb.ci_prob),
            rows=rows,
            groups=groups,
            companion=companion,
            companion_note=lb.friedman_note,
            figures=_figures(lb),
            provenance=_provenance(lb, inputs, command),
        )
    )
