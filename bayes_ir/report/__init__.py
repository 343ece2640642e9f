"""Presentation of results as files and text: CSV, JSON, Markdown, LaTeX, ``trec_eval -q``."""

from bayes_ir.report.escape import html_escape, latex_escape, markdown_escape
from bayes_ir.report.latex import latex_table, result_to_latex
from bayes_ir.report.numbers import format_probability
from bayes_ir.report.output import TABLE_FORMATS, render_table, write_table
from bayes_ir.report.trec_eval import render_trec_eval, write_trec_eval

__all__ = [
    "TABLE_FORMATS",
    "format_probability",
    "html_escape",
    "latex_escape",
    "latex_table",
    "markdown_escape",
    "render_table",
    "render_trec_eval",
    "result_to_latex",
    "write_table",
    "write_trec_eval",
]
