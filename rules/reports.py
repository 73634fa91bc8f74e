"""Reading test runners' reports on the host: which tests ran, by identity, and how each ended.

The graded code runs inside the test runner's process, so anything the runner writes may be forged; these
parsers only *read* what the grader container left in its report folder (``/lab/report``, copied out by
``check.sh`` after every process of the tested code was killed), and ``rules.grade.decide`` weighs it with
the expected test identities and the canaries. Every parser is a pure function of the folder's files,
registered in ``PARSERS`` under the name a task gives in ``task.json``'s ``report`` field, and is hardened
against hostile input: XML through defusedxml (no entities, no external references), files over
``MAX_REPORT_BYTES`` skipped with a note, and a malformed or missing report gives no tests and a note, never
an exception.

A test id is stable across runs and readable: JUnit-style reports give ``classname::name``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from defusedxml import ElementTree as SafeET
from defusedxml.common import DefusedXmlException
from xml.etree.ElementTree import ParseError

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
MAX_REPORT_BYTES = 48 * 1024 * 1024  # a report file larger than this is not read (check.sh caps copies too)
MAX_REPORT_FILES = 64


@dataclass
class Parsed:
    """What a report says: ``tests`` maps each test id to "passed", "failed" or "skipped"; ``notes`` says
    what could not be read (a missing or malformed file) in one line each."""

    tests: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, test_id: str, status: str) -> None:
        """Record ``status`` for ``test_id``; a test reported twice keeps its worst outcome
        (failed over skipped over passed)."""
        rank = {PASSED: 0, SKIPPED: 1, FAILED: 2}
        old = self.tests.get(test_id)
        if old is None or rank[status] > rank[old]:
            self.tests[test_id] = status


def report_files(report_dir: Path, pattern: str) -> list[Path]:
    """The regular files under ``report_dir`` matching the glob ``pattern`` (recursive, sorted, at most
    ``MAX_REPORT_FILES``); symlinks are never followed."""
    root = Path(report_dir)
    if not root.is_dir():
        return []
    found = sorted(p for p in root.rglob(pattern) if p.is_file() and not p.is_symlink())
    return found[:MAX_REPORT_FILES]


def read_capped(path: Path, parsed: Parsed) -> bytes | None:
    """The bytes of ``path``, or None (with a note in ``parsed``) when it is too large or unreadable."""
    try:
        size = path.stat().st_size
        if size > MAX_REPORT_BYTES:
            parsed.notes.append(f"{path.name}: {size} bytes, over the {MAX_REPORT_BYTES}-byte limit; not read")
            return None
        return path.read_bytes()
    except OSError as exc:
        parsed.notes.append(f"{path.name}: cannot be read ({exc.strerror})")
        return None


def parse_junit(report_dir: Path, meta: dict | None = None) -> Parsed:
    """Every ``*.xml`` JUnit report under ``report_dir`` (pytest's ``--junitxml``, JUnit Platform's legacy
    reports, Catch2's ``--reporter junit``): one test per ``<testcase>``, id ``classname::name``; a case with
    a ``<failure>`` or ``<error>`` child failed, one with ``<skipped>`` was skipped, any other passed.
    Format: https://github.com/testmoapp/junitxml (the de-facto schema these runners write)."""
    parsed = Parsed()
    files = report_files(report_dir, "*.xml")
    if not files:
        parsed.notes.append("no JUnit XML report was written")
    for path in files:
        data = read_capped(path, parsed)
        if data is None:
            continue
        try:
            root = SafeET.fromstring(data)
        except (ParseError, DefusedXmlException, ValueError) as exc:
            parsed.notes.append(f"{path.name}: not a readable XML report ({exc.__class__.__name__}: {exc})"[:300])
            continue
        for case in root.iter("testcase"):
            name = case.get("name") or ""
            test_id = f"{case.get('classname') or ''}::{name}"
            kids = {child.tag for child in case}
            status = FAILED if kids & {"failure", "error"} else SKIPPED if "skipped" in kids else PASSED
            parsed.add(test_id, status)
    return parsed


PARSERS: dict[str, Callable[[Path, dict], Parsed]] = {
    "junit": parse_junit,
}


def parse(fmt: str, report_dir: Path, meta: dict | None = None) -> Parsed:
    """Parse the report folder with the parser registered as ``fmt``. An unknown format is a note (the task
    was rendered by another lab version), never an exception."""
    parser = PARSERS.get(fmt)
    if parser is None:
        return Parsed(notes=[f"unknown report format {fmt!r}; known: {', '.join(sorted(PARSERS))}"])
    try:
        return parser(Path(report_dir), meta or {})
    except (OSError, ValueError, RecursionError) as exc:  # hostile input must never crash the grader
        return Parsed(notes=[f"the {fmt} report could not be read: {exc.__class__.__name__}: {exc}"[:300]])


def scrub(text: str, tokens: list[str]) -> str:
    """``text`` without the lines that mention any of ``tokens`` (the canaries' names), case-insensitively:
    the test output an agent sees on its next try never shows lab's canary tests."""
    tokens = [t for t in tokens if t]
    if not tokens:
        return text
    pattern = re.compile("|".join(re.escape(t) for t in tokens), re.I)
    return "".join(line for line in text.splitlines(keepends=True) if not pattern.search(line))
