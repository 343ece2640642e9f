"""Property-based tests of every CLI command that reads scores.

Arbitrary bytes and arbitrary small tables (hostile names, NaN, infinities, duplicates,
missing cells) give either a result (exit 0) or exactly one ``error:`` line (exit 2),
never a traceback, never a change to the input and never a file left behind. A quick
profile runs in the default suite (``BAYES_IR_FUZZ_CLI_EXAMPLES``), a longer one is marked
slow (``BAYES_IR_FUZZ_CLI_SLOW_EXAMPLES``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayes_ir.cli import main

#: Options after the file for each command; the fits are tiny (they must only not crash).
COMMANDS = {
    "inspect": [],
    "glm": [],
    "reliability": [],
    "fit": ["-c", "S0", "-C", "S1", "--draws", "40", "--chains", "2"],
    "risk": ["-c", "S0", "-C", "S1", "--no-bayes"],
    "decide": ["-c", "S0", "-C", "S1", "--draws", "40", "--chains", "2", "--topics", "0"],
    "rank": ["--draws", "40", "--chains", "2"],
}
NAMES = st.sampled_from(["S0", "S1", "S2", "a[1]", "[bold]x[/bold]", "new[/x]", "r&d_%", 'é,"q"'])
TOPICS = st.sampled_from(["1", "2", "3", "q 4", "05", "t,6", "7"])
SCORES = st.one_of(
    st.floats(min_value=0, max_value=1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, 0.5]),
)
ROWS = st.lists(st.tuples(NAMES, TOPICS, SCORES), min_size=0, max_size=40)
BYTES = {"data": st.binary(max_size=400), "suffix": st.sampled_from([".csv", ".txt", ".tsv"])}


def _settings(variable: str, default: int) -> settings:
    return settings(
        max_examples=int(os.environ.get(variable, default)),
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
        ],
    )


QUICK = _settings("BAYES_IR_FUZZ_CLI_EXAMPLES", 6)
LONG = _settings("BAYES_IR_FUZZ_CLI_SLOW_EXAMPLES", 60)


def _run(command: str, data: bytes, suffix: str, capsys) -> None:
    """Run one command on ``data`` written to a file and check the outcome."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"scores{suffix}"
        path.write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        capsys.readouterr()
        code = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                main([command, str(path), *COMMANDS[command]])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err, err[-2000:]
        assert code in (0, 2), (code, err[-2000:])
        if code == 2:
            errors = [line for line in err.splitlines() if line.startswith("error:")]
            assert len(errors) == 1, err
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
        assert sorted(p.name for p in Path(tmp).iterdir()) == [path.name]


def _csv(rows) -> bytes:
    return pd.DataFrame(rows, columns=["system", "topic", "score"]).to_csv(index=False).encode()


def _check(profile, command, capsys):
    @profile
    @given(**BYTES)
    def on_bytes(data, suffix):
        _run(command, data, suffix, capsys)

    @profile
    @given(rows=ROWS)
    def on_tables(rows):
        _run(command, _csv(rows), ".csv", capsys)

    on_bytes()
    on_tables()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_any_input_gives_a_result_or_one_error_line(command, capsys):
    _check(QUICK, command, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
def test_any_input_gives_a_result_or_one_error_line_long(command, capsys):
    _check(LONG, command, capsys)
