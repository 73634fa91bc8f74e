"""C++ check.sh, as the tester: the failing test cases of Catch's JUnit report, readable, for the agent's next
try (Catch's messages and the expanded expressions). It counts nothing that decides: the verdict is the host's.

    python3 -I -m lab_grader.catch_summary CATCH_XML RUNNER_STATUS [CANARY ...]

prints ``FAILED <case>: <message>`` and the failure's text for each failure or error, then ``<n> test cases,
<k> failed``; cases named like a canary are left out. No report (or an unreadable one) ends it with a message
naming the runner's exit status, and exit status 1.
"""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TextIO


def summary(cases: Iterable[ET.Element], canaries: Iterable[str], out: TextIO) -> None:
    """Write to ``out`` each failure of the report's ``<testcase>`` elements ``cases`` and the count line,
    the cases whose names hold any of ``canaries`` (case-insensitive, empty ones ignored) left out."""
    canaries = [t.lower() for t in canaries if t]
    cases = [c for c in cases if not any(t in (c.get("name") or "").lower() for t in canaries)]
    failed = 0
    for case in cases:
        bad = [k for k in case if k.tag in ("failure", "error")]
        failed += bool(bad)
        for k in bad:
            print(f"FAILED {case.get('name')}: {k.get('message', '')}\n{(k.text or '').strip()}\n", file=out)
    print(f"{len(cases)} test cases, {failed} failed", file=out)


def main(argv: list[str]) -> None:
    """``CATCH_XML RUNNER_STATUS [CANARY ...]``: print the summary, or exit naming the status."""
    try:
        cases = list(ET.parse(argv[0]).getroot().iter("testcase"))
    except (OSError, ET.ParseError):
        sys.exit(f"lab-check: the test program left no report: it crashed, exited early or was killed (exit status "
                 f"{argv[1]})")
    summary(cases, argv[2:], sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
