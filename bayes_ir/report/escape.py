r"""Escaping of names for each output format: one function per format.

System, topic and collection names come from users' files and may hold any character.
Each renderer passes every name through the function of its format, so that
``a_b&c`` stays ``a_b&c`` on the page instead of turning into a subscript or a column
break. CSV and JSON need no escaping here: pandas quotes them exactly.
"""

from __future__ import annotations

import html

__all__ = ["html_escape", "latex_escape", "markdown_escape"]

#: LaTeX's special characters and the text-mode commands that print them.
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}

#: Characters that Markdown (CommonMark with GFM tables) would read as markup inside a line.
MARKDOWN_SPECIAL = frozenset("\\`*_[]<>|~&")


def latex_escape(text: str) -> str:
    r"""Return ``text`` with LaTeX's special characters printed literally.

    Notes
    -----
    ``\ & % $ # _ { } ~ ^`` become ``\textbackslash{} \& \% \$ \# \_ \{ \}
    \textasciitilde{} \textasciicircum{}``, and ``< > |`` (which the default OT1 font
    encoding prints as other glyphs: ``¡ ¿ —``) become ``\textless{} \textgreater{}
    \textbar{}`` (text mode; all these commands are in the LaTeX kernel); a line break
    becomes a space, since a table cell is one line.
    """
    return "".join(LATEX_SPECIAL.get(c, c) for c in str(text).replace("\n", " "))


def markdown_escape(text: str) -> str:
    r"""Return ``text`` with Markdown's punctuation escaped by a backslash.

    Notes
    -----
    CommonMark lets any ASCII punctuation be escaped with ``\``; the characters that
    start markup inside a line (``\ ` * _ [ ] < > | ~ &``: emphasis, code, links, HTML,
    entities, strike-through) are escaped, which also keeps ``|`` from splitting a GFM
    table cell. An ``_`` between two letters or digits (``n_topics``) is left as it is:
    CommonMark never reads it as emphasis (spec 0.31, sec. 6.2, rule 2). A line break
    becomes ``<br>`` (a cell holds one line).
    """
    text = str(text)
    escaped = "".join(
        "\\" + c if c in MARKDOWN_SPECIAL and not _intraword_underscore(text, i) else c
        for i, c in enumerate(text)
    )
    return escaped.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def _intraword_underscore(text: str, i: int) -> bool:
    """``text[i]`` is ``_`` between two letters or digits, which never marks emphasis."""
    return (
        text[i] == "_" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
    )


def html_escape(text: str) -> str:
    """Return ``text`` with ``& < > " '`` as HTML entities (:func:`html.escape`)."""
    return html.escape(str(text), quote=True)
