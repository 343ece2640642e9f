"""List the bad-input catalogue by class and status; ``--failing`` lists today's failures.

    python tests/bad_inputs/list_cases.py             # counts per class
    python tests/bad_inputs/list_cases.py --failing   # failing ids grouped by owner

The status is the one declared in ``cases.py`` (``FAILS_TODAY``); run
``pytest tests/bad_inputs -rxX`` to see what the code does now (XPASS = fixed).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bad_inputs.cases import CASES  # noqa: E402


def counts() -> str:
    by_class: dict[str, Counter] = defaultdict(Counter)
    for case in CASES:
        row = by_class[case.cls]
        row["cases"] += 1
        row[case.expect] += 1
        row["xfail" if case.xfail else "pass"] += 1
        row["slow"] += case.slow
    columns = ["cases", "pass", "xfail", "error", "ok", "warning", "raises", "exit", "slow"]
    lines = [f"{'class':<16}" + "".join(f"{c:>8}" for c in columns)]
    total: Counter = Counter()
    for name in sorted(by_class):
        total.update(by_class[name])
        lines.append(f"{name:<16}" + "".join(f"{by_class[name][c]:>8}" for c in columns))
    lines.append(f"{'total':<16}" + "".join(f"{total[c]:>8}" for c in columns))
    return "\n".join(lines)


def failing() -> str:
    by_owner: dict[str, list] = defaultdict(list)
    for case in CASES:
        if case.xfail:
            by_owner[case.owner].append(case)
    lines = []
    for owner in sorted(by_owner):
        lines.append(f"{owner} ({len(by_owner[owner])})")
        lines += [f"  {case.id}: {case.xfail}" for case in by_owner[owner]]
    return "\n".join(lines)


if __name__ == "__main__":
    print(failing() if "--failing" in sys.argv[1:] else counts())
