"""Every notebook in notebooks/ is committed executed and re-executes without error.

Each notebook checks its key numbers against an independent reference in its own cells
(closed forms, scipy/statsmodels, published values, simulations with a known truth), so
an execution without error means those checks held.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
#: Notebooks that take over 10 s to execute on 2 cores (those that fit several
#: hierarchical models take about a minute each): run with ``-m slow``, which CI runs too.
SLOW = {
    "champion_vs_challengers",
    "deployment_review",
    "families_llm_and_robust04",
    "glm_link_comparison",
    "ranking_reliability",
    "risk_deployment_review",
}
PARAMS = [
    pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW else [])
    for p in NOTEBOOKS
]


def _code_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


@pytest.mark.parametrize("path", PARAMS)
def test_notebook_executes(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    errors = [
        out
        for cell in _code_cells(nb)
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors, errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_committed_executed(path: Path) -> None:
    """The committed file reads on a code host: run in order, with outputs and a figure."""
    nb = nbformat.read(path, as_version=4)
    cells = _code_cells(nb)
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1)), path.name
    outputs = [out for cell in cells for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"], path.name
    assert any("image/png" in out.get("data", {}) for out in outputs), f"{path.name}: no figure"
    volatile = [i for i, cell in enumerate(nb.cells) if "execution" in cell.metadata]
    assert not volatile, f"{path.name}: execution timestamps in cells {volatile}"
