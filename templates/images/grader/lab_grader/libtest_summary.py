"""Rust check.sh, as the tester: a readable account of one test program's libtest JSON report.

    python3 -I -m lab_grader.libtest_summary LIBTEST_JSON [CANARY ...]

prints ``test <name> ... <ok|failed|ignored>`` per test (a failed test's captured output after it, 20000
characters at most, each of its lines after ``<name> | ``, so that the host's rules/reports.py: scrub, which
drops the lines holding a canary's name, drops all of a canary's output), any line that is not a test event (or
cannot be written) as it is, and, only when CANARY names are given, a ``test result:`` line with the counts.
Tests whose names hold a canary are left out. A track whose canaries the tester must not learn (the Rust
track: rust_canaries.py, named in a manifest only root reads) gives none: its counts, which would count the
canaries, are then the host's ``lab-check:`` line. It counts nothing that decides: the verdict is the host's,
from the JSON report itself (rules/reports.py: parse_libtest_json).
"""
from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import TextIO

STDOUT_CAP = 20000  # characters of a failed test's captured output shown


def account(lines: Iterable[str], canaries: Iterable[str], out: TextIO) -> None:
    """Write to ``out`` the account of libtest's JSON event ``lines``, the tests named like any of ``canaries``
    (empty ones ignored) left out."""
    skip = [t for t in canaries if t]
    counts = {"ok": 0, "failed": 0, "ignored": 0}
    for line in lines:
        try:
            e = json.loads(line)
            name, event = str(e.get("name")), e.get("event")
            if e.get("type") != "test" or event not in counts or any(t in name for t in skip):
                continue
            counts[event] += 1
            print("test %s ... %s" % (name, event), file=out)
            if event == "failed" and e.get("stdout"):
                for text in str(e["stdout"])[:STDOUT_CAP].splitlines():
                    print("%s | %s" % (name, text), file=out)
        except (ValueError, TypeError, AttributeError, RecursionError):
            out.write(line)  # (ValueError includes a name the output's encoding cannot hold)
    if skip:
        print("test result: %(ok)d passed; %(failed)d failed; %(ignored)d ignored" % counts, file=out)


def main(argv: list[str]) -> None:
    """``LIBTEST_JSON [CANARY ...]``: print the account."""
    account(open(argv[0], encoding="utf-8", errors="replace"), argv[1:], sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
