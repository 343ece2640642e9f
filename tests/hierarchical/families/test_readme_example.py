"""The README's Bernoulli example (GLUE RTE) prints what the README says it prints.

The README's code block is run as written (the data path pointed at the shared data) and
the frame it shows in comments is compared with the one it returns, to the printed digits.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


def _block() -> tuple[str, pd.DataFrame]:
    """The example's code and the frame its comment lines show."""
    text = README.read_text(encoding="utf-8")
    start = text.index("Two BERT models on GLUE RTE")
    code = re.search(r"```python\n(.*?)```", text[start:], re.DOTALL)
    assert code, "the README's GLUE RTE example has no python block"
    lines = code.group(1).splitlines()
    shown = [line[2:] for line in lines if line.startswith("# ")]
    header, *rows = shown
    frame = pd.DataFrame(
        [row.split()[1:] for row in rows], columns=header.split(), dtype=object
    ).astype({c: float for c in header.split()[1:]})
    return "\n".join(line for line in lines if not line.startswith("#")), frame


@pytest.mark.shared_data
def test_the_readme_glue_example_prints_its_numbers(shared_data):
    import bayes_ir

    code, shown = _block()
    tree = ast.parse(code.replace("../shared/data", str(shared_data)))
    *body, last = tree.body  # the last statement is the frame shown
    scope = {"bayes_ir": bayes_ir}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(ast.Module(body, []), "README", "exec"), scope)  # noqa: S102
        got = eval(compile(ast.Expression(last.value), "README", "eval"), scope)  # noqa: S307
    assert list(got.columns) == list(shown.columns)
    for column in shown.columns[1:]:  # printed to 4 decimals
        assert got[column].round(4).tolist() == pytest.approx(shown[column].tolist(), abs=6e-5), (
            column
        )
