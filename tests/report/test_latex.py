"""The one LaTeX table style: exact text of a known table, and real results compiled by pdflatex.

References: the expected text below is written by hand from the style's definition
(booktabs rules, Lamport's text-mode commands for the special characters, fixed decimals);
the compile test runs pdflatex (TeX Live) on tables made from data/example_scores.csv.
"""

from __future__ import annotations

import inspect
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayes_ir.errors import BayesIRError
from bayes_ir.report import format_probability, render_table
from bayes_ir.report.latex import latex_number, latex_table, result_to_latex

ROOT = Path(__file__).resolve().parents[2]
FRAME = pd.DataFrame(
    {
        "system": ["bm_25", "a&b", "50%", "#7"],
        "mean": [0.3, 0.41234, -0.25, np.nan],
        "n": [50, 49, 48, 47],
        "p_value": [0.0004, 0.2, 0.9996, 0.05],
    }
)


def test_known_table_exactly():
    tex = latex_table(
        FRAME,
        caption="Runs & scores_1",
        label="tab:runs",
        best={"mean": "max"},
        marks={
            "never used": {"n": [False] * 4},  # a mark on no cell takes no symbol
            "p < 0.05": {"p_value": FRAME["p_value"] < 0.01},
            "interpolated": {"n": [False, False, False, True]},
        },
        notes=["100% of topics"],
    )
    assert tex.splitlines() == [
        r"\begin{table}[tbp]",
        r"\centering",
        r"\caption{Runs \& scores\_1}",
        r"\label{tab:runs}",
        r"\begin{tabular}{lrrr}",
        r"\toprule",
        r"system & mean & n & p\_value \\",
        r"\midrule",
        r"bm\_25 & 0.3000 & 50 & \textless{}0.001$^{\dagger}$ \\",
        r"a\&b & \textbf{0.4123} & 49 & 0.200 \\",
        r"50\% & $-$0.2500 & 48 & \textgreater{}0.999 \\",
        r"\#7 &  & 47$^{\ddagger}$ & 0.050 \\",
        r"\bottomrule",
        r"\end{tabular}",
        r"\par\smallskip\footnotesize",
        r"$^{\dagger}$ p \textless{} 0.05\par",
        r"$^{\ddagger}$ interpolated\par",
        r"Bold: highest mean.\par",
        r"100\% of topics\par",
        r"\end{table}",
    ]


def test_ties_lowest_digits_and_errors():
    frame = pd.DataFrame({"link": ["a", "b", "c"], "deviance": [2.0, 1.0, 1.0]})
    lines = latex_table(frame, best={"deviance": "min"}, digits=2).splitlines()
    assert lines[6:9] == [r"a & 2.00 \\", r"b & \textbf{1.00} \\", r"c & \textbf{1.00} \\"]
    assert r"Bold: lowest deviance.\par" in lines
    with pytest.raises(BayesIRError, match="no column 'x'"):
        latex_table(frame, best={"x": "max"})
    with pytest.raises(BayesIRError, match="'top' is not 'max' or 'min'"):
        latex_table(frame, best={"deviance": "top"})
    with pytest.raises(BayesIRError, match="2 rows given for a table of 3"):
        latex_table(frame, marks={"m": {"deviance": [True, False]}})
    with pytest.raises(BayesIRError, match="6 meanings, but at most 5 symbols"):
        latex_table(frame, marks={str(i): {"deviance": [True] * 3} for i in range(6)})


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.12345, "0.1235"), (-0.00001, "0.0000"), (-1.5, "$-$1.5000"), (7, "7"),
     (np.int64(-3), "$-$3"), (float("inf"), r"$\infty$"), (float("-inf"), r"$-\infty$"),
     (float("nan"), "")],
)  # fmt: skip
def test_numbers(value, text):
    assert latex_number(value) == text


@pytest.mark.parametrize(
    ("p", "text"),
    [(0.0, "<0.001"), (0.00099, "<0.001"), (0.001, "0.001"), (0.0123, "0.012"),
     (0.999, "0.999"), (0.99901, ">0.999"), (1.0, ">0.999"), (float("nan"), "nan")],
)  # fmt: skip
def test_one_probability_formatter(p, text):
    assert format_probability(p) == text


def test_probability_columns_are_found_by_name_and_range():
    frame = pd.DataFrame({"p_better": [0.9999], "trisk_p": [0.0001], "p_x": [2.0], "mean": [0.5]})
    row = latex_table(frame).splitlines()[6]
    assert row == r"\textgreater{}0.999 & \textless{}0.001 & 2.0000 & 0.5000 \\"


def test_failed_diagnostics_travel_with_the_table():
    class Result:
        diagnostics_passed = False

        def to_frame(self):
            return FRAME

    tex = result_to_latex(Result(), caption="c", notes=["n"])
    notes = tex.splitlines()[-3:-1]
    assert notes[0].startswith("DIAGNOSTICS FAILED") and notes[1] == r"n\par"


def test_every_result_has_to_latex():
    """Every class of the method floors with ``to_frame()`` also has ``to_latex()``."""
    import importlib
    import pkgutil

    import bayes_ir

    missing = []
    for info in pkgutil.walk_packages(bayes_ir.__path__, "bayes_ir."):
        floor = info.name.split(".")[1]
        if floor not in ("hierarchical", "risk", "frequentist", "reliability", "decision"):
            continue
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name and hasattr(cls, "to_frame"):
                if not hasattr(cls, "to_latex"):
                    missing.append(f"{info.name}.{name}")
    assert not missing


def test_tex_output_uses_the_style(tmp_path):
    from bayes_ir.report import write_table

    text = write_table(FRAME, tmp_path / "t.tex").read_text(encoding="utf-8")
    assert text == render_table(FRAME, "latex") == latex_table(FRAME)


PDFLATEX = shutil.which("pdflatex")


@pytest.mark.skipif(
    PDFLATEX is None,
    reason="pdflatex is not installed (Debian: texlive-latex-base texlive-latex-recommended)",
)
def test_real_results_compile_with_pdflatex(tmp_path):
    from bayes_ir.frequentist import paired_tests
    from bayes_ir.frequentist.glm import compare_links
    from bayes_ir.readers import read_scores
    from bayes_ir.risk import risk_review, trisk

    table = read_scores(ROOT / "data" / "example_scores.csv").with_roles(
        champion="bm25", challengers=["chal_*"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        review = risk_review(table, r=5, bayes=False, n_resamples=500, seed=1)
        links = compare_links(table, links=["identity", "logit", "log"], boundary="none")
    hostile = pd.DataFrame(
        {"system": ["a_b&c%d$e#f{g}h~i^j\\k", "<b>|x|</b>", "line\nbreak"], "mean": [1.0, 2, 3]}
    )
    tables = [
        review.to_latex(label="tab:risk"),
        links.to_latex("deviance", label="tab:deviance"),
        links.to_latex("n_significant", label="tab:pairs"),
        paired_tests(table, seed=1).to_latex(label="tab:paired"),
        trisk(table, r=2).to_latex(caption="TRisk_2 & more", best={"trisk_minus": "min"}),
        latex_table(hostile, caption="Names", best={"mean": "max"}),
    ]
    assert r"\textbf{" in tables[1] and r"$^{\dagger}$" in tables[0]
    body = "\n".join(tables)
    document = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm]{geometry}\n"
        f"\\tracinglostchars=1\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    )
    (tmp_path / "tables.tex").write_text(document, encoding="utf-8")
    run = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "tables.tex"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    log = (tmp_path / "tables.log").read_text(encoding="utf-8", errors="replace")
    assert run.returncode == 0, log[-3000:]
    assert (tmp_path / "tables.pdf").stat().st_size > 1000
    assert "Missing character" not in log and "Undefined control sequence" not in log
