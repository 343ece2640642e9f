"""Reading a large long (tidy) file: time and peak memory, each step in a fresh process.

Generates a tidy CSV of ``--rows`` rows (default 2,000,000: 2 collections x 100 systems x
10,000 topics, measure nDCG@10), or with ``--layout wide`` a topic x 200 systems matrix
of as many cells, in a temporary folder with numpy, then runs, each in its own Python
process so that peak RSS is that step's alone:

1. the reference: bare ``pandas.read_csv(path, engine="pyarrow")`` of the same file;
2. ``bayes_ir.read_scores(path)`` (parse + validate);
3. ``bayes-ir inspect path`` (``python -m bayes_ir inspect``: import, read, validate, print).

Prints wall seconds (from the start of the process's code to its end, imports
included), CPU seconds (user + system: less sensitive to a busy machine) and peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) of each step. No assertions.

Run: python benchmarks/bench_readers_large.py [--rows N] [--layout tidy|wide]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Child-process wrapper: run ``code``, print "wall_s cpu_s peak_mb" on the last stderr line.
_WRAPPER = """
import resource, sys, time
start = time.perf_counter()
try:
    {code}
finally:
    use = resource.getrusage(resource.RUSAGE_SELF)
    cpu = use.ru_utime + use.ru_stime
    print(f"@@ {{time.perf_counter() - start:.2f}} {{cpu:.2f}} {{use.ru_maxrss / 1024:.0f}}",
          file=sys.stderr)
"""

STEPS = {
    "pandas.read_csv(engine='pyarrow') (reference)": (
        "import pandas as pd; pd.read_csv(sys.argv[1], engine='pyarrow')"
    ),
    "bayes_ir.read_scores (parse + validate)": (
        "from bayes_ir.readers import read_scores; read_scores(sys.argv[1])"
    ),
    "bayes-ir inspect (fresh process, whole command)": (
        "sys.argv = ['bayes-ir', 'inspect', sys.argv[1]]\n"
        "    from bayes_ir.cli import main\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass"
    ),
}


def write_tidy(path: str, rows: int, *, seed: int = 1) -> None:
    """Write a tidy CSV of about ``rows`` rows: 2 collections x 100 systems x topics."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_coll, n_sys = 2, 100
    n_top = max(rows // (n_coll * n_sys), 1)
    n = n_coll * n_sys * n_top
    frame = pd.DataFrame(
        {
            "collection": np.repeat([f"coll{c}" for c in range(n_coll)], n_sys * n_top),
            "measure": "nDCG@10",
            "system": np.tile(np.repeat([f"system_{s:03d}" for s in range(n_sys)], n_top), n_coll),
            "topic": np.tile(np.arange(1, n_top + 1), n_coll * n_sys),
            "score": rng.beta(2, 5, size=n).round(4),
        }
    )
    frame.to_csv(path, index=False)


def write_wide(path: str, rows: int, *, seed: int = 1) -> None:
    """Write a wide CSV of about ``rows`` cells: a ``topic`` column and 200 system columns."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_sys = 200
    n_top = max(rows // n_sys, 1)
    frame = pd.DataFrame(
        rng.beta(2, 5, size=(n_top, n_sys)).round(4),
        columns=[f"system_{s:03d}" for s in range(n_sys)],
    )
    frame.insert(0, "topic", np.arange(1, n_top + 1))
    frame.to_csv(path, index=False)


def run_step(code: str, path: Path) -> tuple[float, float, float, int]:
    """Run ``code`` in a fresh interpreter; return (wall s, CPU s, peak MB, exit status)."""
    script = _WRAPPER.format(code=code)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    last = [line for line in proc.stderr.splitlines() if line.startswith("@@ ")]
    if not last:
        raise RuntimeError(proc.stderr[-2000:])
    _, wall, cpu, peak = last[-1].split()
    return float(wall), float(cpu), float(peak), proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--layout", choices=["tidy", "wide"], default="tidy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"large_{args.layout}.csv"
        start = time.perf_counter()
        # in a child process: Linux keeps a parent's peak RSS as the floor of its
        # children's ru_maxrss, so this process must stay small
        writer = (
            f"from bench_readers_large import write_{args.layout} as write; "
            f"write({str(path)!r}, {args.rows})"
        )
        subprocess.run(
            [sys.executable, "-c", writer],
            cwd=Path(__file__).parent,
            check=True,
        )
        size = path.stat().st_size / 2**20
        print(f"wrote {path.name}: {args.rows:,} scores, {size:.0f} MB "
              f"in {time.perf_counter() - start:.1f} s")  # fmt: skip
        print(f"{'step':<50} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12}")
        for label, code in STEPS.items():
            wall, cpu, peak, status = run_step(code, path)
            flag = "" if status == 0 else f"  (exit {status})"
            print(f"{label:<50} {wall:8.2f} {cpu:8.2f} {peak:12.0f}{flag}")


if __name__ == "__main__":
    main()
