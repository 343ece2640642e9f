"""Count the catalogue's outcomes by kind of failure, from a JUnit report of a run.

    PYTHONPATH=$PWD python -m pytest tests/bad_inputs/test_catalogue.py -m "" \\
        -p no:randomly --junitxml=report.xml
    python tests/bad_inputs/outcomes.py report.xml          # counts
    python tests/bad_inputs/outcomes.py report.xml --list   # and the case ids of each kind

Kinds: ``traceback`` (an exception that is not a BayesIRError, a traceback printed, or
an exit status of 1 or above 127: the interpreter aborted),
``hang`` (no answer before the case's timeout), ``damaged`` (an input file or folder
changed, or a partial file left behind), ``silent wrong`` (bad input accepted with exit 0,
an API call that returned, or a wrong answer or missing note on valid input), ``refused``
(valid input refused with an error), ``message`` (the error names the wrong thing, or
several lines), ``other``. Run it on a checkout before a fix to get the "before" counts.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict

KINDS = ("traceback", "hang", "damaged", "silent wrong", "refused", "message", "other")


def kind(message: str) -> str:
    """The kind of failure a case's assertion message describes."""
    if "hang:" in message:
        return "hang"
    if "Traceback" in message or "not a BayesIRError" in message or "traceback" in message:
        return "traceback"
    crash = re.search(r"expected exit \d+\s+exit (-?\d+)", message)
    if crash and (int(crash[1]) == 1 or not 0 <= int(crash[1]) < 128):  # an abort (134)
        return "traceback"
    if "has no attribute 'notes'" in message:  # a result object without the loader's notes
        return "silent wrong"
    if "was changed" in message or "partial or temporary files" in message:
        return "damaged"
    if "left output behind" in message:
        return "damaged"
    if "no exception; returned" in message or re.search(
        r"expected exit 2\s+exit [0345]\b", message
    ):
        return "silent wrong"  # accepted (3, 4, 5: decide --gate's decisions)
    if re.search(r"expected exit 0\s+exit 2", message):
        return "refused"
    if "does not name" in message or "exactly one 'error:' line" in message:
        return "message"
    if "expected exit" in message or "expected " in message and "got" in message:
        return "message"
    if "AssertionError" in message or "assert" in message:
        return "silent wrong"  # exit 0, the answer check failed: a wrong answer or no note
    return "other"


def main(path: str, listing: bool) -> None:
    tree = ET.parse(path)
    found: dict[str, list[str]] = defaultdict(list)
    total = passed = 0
    for case in tree.iter("testcase"):
        if "test_bad_input" not in case.get("name", ""):
            continue
        total += 1
        failure = case.find("failure")
        error = case.find("error")
        skipped = case.find("skipped")
        if failure is None and error is None:
            passed += skipped is None
            continue
        node = failure if failure is not None else error
        text = node.get("message", "")  # the assertion, not the test's source
        name = re.sub(r"^test_bad_input\[(.*)\]$", r"\1", case.get("name", ""))
        found[kind(text)].append(name)
    print(f"{total} cases: {passed} pass, {total - passed} fail")
    for k in KINDS:
        print(f"  {k:<13} {len(found[k])}")
        if listing:
            for name in found[k]:
                print(f"      {name}")


if __name__ == "__main__":
    main(sys.argv[1], "--list" in sys.argv[2:])
