"""Shared helpers of the command-line tests."""

from __future__ import annotations

import pytest

from bayes_ir.cli import main


@pytest.fixture
def run_cli(capsys):
    """Run ``bayes-ir ARGV`` in this process; return ``(exit status, stdout, stderr)``."""

    def run(argv: list[str]) -> tuple[int, str, str]:
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run
