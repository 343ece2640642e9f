"""Sphinx configuration of the bayes_ir documentation site.

Build it offline with warnings as errors (from the repository root)::

    .venv/bin/sphinx-build -b html -W --keep-going -E docs docs/_build/html

The notebooks in ``notebooks/`` (linked here as ``docs/notebooks``) are committed executed
and rendered as they are (``nb_execution_mode = "off"``); the API pages are generated from
the packages' ``__all__`` and the CLI reference from the typer app (``docs/_ext``). The
formulas are typeset by MathJax 2 from Debian's ``libjs-mathjax``, copied into the build.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))  # the checkout's bayes_ir, not an installed copy

from importlib.metadata import version as _version  # noqa: E402

project = "bayes_ir"
author = "bayes_ir developers"
copyright = "bayes_ir developers"  # noqa: A001
release = _version("bayes_ir")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_nb",
    "sphinx_copybutton",
    "bayes_ir_docs",
]

smartquotes = False  # keep "--option" and quotes as typed
templates_path = ["_templates"]  # class pages: the docstring, then the methods
exclude_patterns = ["_build", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# notebooks: rendered from their committed outputs, never executed by the build
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence", "dollarmath", "amsmath"]
myst_heading_anchors = 3

autosummary_generate = True
autodoc_default_options = {"members": True}  # a class page documents its methods
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# math: MathJax 2 from Debian's libjs-mathjax, copied into the build (docs/_ext), so the
# formulas render offline; only the elements Sphinx marks as math are typeset
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS_CHTML"
mathjax2_config = {
    "tex2jax": {"processClass": "math|output_area", "ignoreClass": "document|bd-page-width"},
    "CommonHTML": {"linebreaks": {"automatic": True}},
    "menuSettings": {"zoom": "None"},
    "messageStyle": "none",  # no "Processing math" box in the corner
}
myst_update_mathjax = False  # its settings are for MathJax 3+, and mathjax2_config covers them

intersphinx_mapping = {}  # offline: no inventories are fetched

# nitpicky: a reference to a missing name fails the build. References to other libraries
# cannot resolve without their inventories (offline), so only those are let through; a
# name of bayes_ir without a page of its own is shown as code once docs/_ext has checked
# that it exists.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|scipy|statsmodels|arviz_stats|xarray|html)\..*"),  # the docstrings cite
]

html_theme = "pydata_sphinx_theme"
html_title = f"bayes_ir {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # the header on one line at 1280 px: five links, the rest under "More", search as an icon
    "header_links_before_dropdown": 5,
    "navbar_align": "left",
    "navbar_persistent": [],
    "navbar_end": ["search-button", "theme-switcher"],
}
# a page without subpages has no section navigation: no empty left column on it
html_sidebars = {
    page.stem: []
    for page in [*HERE.glob("*.md"), *HERE.glob("*.rst")]
    if page.stem not in {"api", "notebooks", "defaults"}
}
html_static_path = ["_static"]
html_css_files = ["bayes_ir.css"]  # wide tables fit the page
