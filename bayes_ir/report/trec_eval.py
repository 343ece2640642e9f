"""Write a score table in the ``trec_eval -q`` text format (one block per run)."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from bayes_ir.files import write_text
from bayes_ir.measures import to_trec_eval_name
from bayes_ir.table import ScoreTable
from bayes_ir.table_checks import natural_sorted


def render_trec_eval(table: ScoreTable, *, decimals: int = 4, summary: bool = True) -> str:
    """Return the table as ``trec_eval -q`` output, one block per system.

    Parameters
    ----------
    table
        Scores of one collection (several measures and systems are fine).
    decimals
        Digits after the decimal point (``trec_eval`` prints 4).
    summary
        Append each run's ``all`` rows (``runid`` and the mean of each measure), as
        ``trec_eval`` does; readers ignore them.

    Returns
    -------
    str
        Lines ``measure<TAB>topic<TAB>value`` with the measure name padded to 22
        characters (``trec_eval``'s ``%-22s``), measures translated to ``trec_eval``
        names where one exists (``AP`` -> ``map``, ``nDCG@10`` -> ``ndcg_cut_10``).
    """
    table.require_one_per_cell("trec_eval output")
    if len(table.collections) > 1:
        from bayes_ir.errors import ScoreTableError

        raise ScoreTableError(
            "trec_eval output holds one collection; select one with table.select(collection=...)",
            source=table.source,
        )
    df = table.data
    lines: list[str] = []
    for system in table.systems:
        block = df[df["system"] == system]
        measures = list(dict.fromkeys(block["measure"]))
        by_topic = {
            (m, t): s for m, t, s in block[["measure", "topic", "score"]].itertuples(index=False)
        }
        for topic in natural_sorted(block["topic"].unique()):
            for meas in measures:
                if (meas, topic) in by_topic:
                    value = by_topic[(meas, topic)]
                    lines.append(f"{to_trec_eval_name(meas):<22}\t{topic}\t{value:.{decimals}f}")
        if summary:
            lines.append(f"{'runid':<22}\tall\t{system}")
            lines.append(f"{'num_q':<22}\tall\t{block['topic'].nunique()}")
            for meas in measures:
                mean = block.loc[block["measure"] == meas, "score"].mean()
                lines.append(f"{to_trec_eval_name(meas):<22}\tall\t{mean:.{decimals}f}")
    return "\n".join(lines) + "\n"


def write_trec_eval(
    table: ScoreTable, path: str | PathLike[str], *, decimals: int = 4, summary: bool = True
) -> Path:
    """Write :func:`render_trec_eval` output to ``path`` atomically and return the path."""
    return write_text(path, render_trec_eval(table, decimals=decimals, summary=summary))
