"""Presentation of results as files and text: CSV, JSON, Markdown, LaTeX."""

from bayes_ir.report.output import TABLE_FORMATS, render_table, write_table

__all__ = ["TABLE_FORMATS", "render_table", "write_table"]
