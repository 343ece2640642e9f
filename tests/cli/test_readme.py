"""The README's two commands: the first runs the main job, the second is what CI runs."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def readme_commands() -> list[str]:
    """Lines of the first fenced ``bash`` block of the README."""
    match = re.search(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert match, "README.md has no fenced bash block"
    return [line for line in match.group(1).splitlines() if line.strip()]


def main_command() -> list[str]:
    """The ``bayes-ir ...`` command that ends line 1, run as ``python -m bayes_ir ...``."""
    first = readme_commands()[0]
    last = first.split("&&")[-1].strip()
    argv = shlex.split(last)
    assert argv[0].endswith("bayes-ir"), f"line 1 does not end with a bayes-ir command: {first}"
    return [sys.executable, "-m", "bayes_ir", *argv[1:]]


def test_first_line_runs_the_decision():
    argv = main_command()
    assert argv[3:5] == ["fit", "data/example_scores.csv"]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert "Challengers vs champion 'bm25'" in proc.stdout
    for name in ("chal_dense", "chal_fusion", "chal_rerank", "chal_risky"):
        assert name in proc.stdout
    assert "Model: gaussian likelihood, one residual SD (exact sampler); diagnostics PASS" in (
        proc.stdout
    )
    assert "\nnext:\n  bayes-ir fit data/example_scores.csv" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_ci_runs_the_readme_test_command():
    test_command = readme_commands()[1].strip()
    assert "pytest" in test_command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci, f"{test_command!r} is not in .ci/run"


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["COLUMNS"] = "120"
    return env
