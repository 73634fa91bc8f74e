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

import json
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
    for case in _xml_testcases(report_dir, parsed, "no JUnit XML report was written"):
        test_id = f"{case.get('classname') or ''}::{case.get('name') or ''}"
        kids = {child.tag for child in case}
        parsed.add(test_id, FAILED if kids & {"failure", "error"} else SKIPPED if "skipped" in kids else PASSED)
    return parsed


def _xml_testcases(report_dir: Path, parsed: Parsed, missing: str):
    """The ``<testcase>`` elements of every ``*.xml`` report under ``report_dir``, in file order; ``missing`` is
    noted in ``parsed`` when there is no report, and an unreadable or oversized file is noted and skipped."""
    files = report_files(report_dir, "*.xml")
    if not files:
        parsed.notes.append(missing)
    for path in files:
        data = read_capped(path, parsed)
        if data is None:
            continue
        try:
            root = SafeET.fromstring(data)
        except (ParseError, DefusedXmlException, ValueError) as exc:
            parsed.notes.append(f"{path.name}: not a readable XML report ({exc.__class__.__name__}: {exc})"[:300])
            continue
        yield from root.iter("testcase")


def parse_gtest_xml(report_dir: Path, meta: dict | None = None) -> Parsed:
    """Every ``*.xml`` report under ``report_dir`` written by googletest's ``--gtest_output=xml`` (or its
    ``GTEST_OUTPUT`` variable): one test per ``<testcase>``, id ``classname.name`` as googletest itself names a
    test (``format_test.format_nan``, a typed test's ``is_string_test/0.is_string``; SWE-bench's googletest log
    parser reads the same names from ``[       OK ] ...`` lines). A case with a ``<failure>`` or ``<error>``
    child failed; one with a ``<skipped>`` child, ``result="skipped"``/``"suppressed"`` or ``status="notrun"``
    (a ``DISABLED_`` test) was skipped; any other passed. The file is written by the test binary when it ends,
    so a binary that did not build or died leaves none: a note, and every test missing.
    Format: googletest's docs/advanced.md, "Generating an XML Report"."""
    parsed = Parsed()
    missing = "no googletest XML report was written: the tests did not build, or the binary died"
    for case in _xml_testcases(report_dir, parsed, missing):
        test_id = f"{case.get('classname') or ''}.{case.get('name') or ''}"
        kids = {child.tag for child in case}
        skipped = ("skipped" in kids or case.get("result") in ("skipped", "suppressed")
                   or case.get("status") == "notrun")
        parsed.add(test_id, FAILED if kids & {"failure", "error"} else SKIPPED if skipped else PASSED)
    return parsed


# ---- Go, JavaScript, Rust: JSON reports (go test -json, jest --json, libtest --format json) ----
# Their files come from code that ran the graded solution: malformed lines are skipped (and noted), and a test
# started twice, given two verdicts, or started with no verdict at all (the program died) counts as failed.

def _report_text(path: Path, parsed: Parsed, what: str) -> str | None:
    """The text of one report file (undecodable bytes replaced), or None with a note when it is missing,
    a symlink, too large or unreadable."""
    if not path.is_file() or path.is_symlink():
        parsed.notes.append(f"no {what} report ({path.name}): the tests did not build or did not run")
        return None
    data = read_capped(path, parsed)
    return None if data is None else data.decode("utf-8", errors="replace")


def _json_lines(text: str) -> tuple[list[dict], int]:
    """The JSON objects of a JSON-lines text, and how many non-empty lines were not JSON objects."""
    events, junk = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            event = None
        if isinstance(event, dict):
            events.append(event)
        else:
            junk += 1
    return events, junk


def _verdicts(starts: dict[str, int], ends: dict[str, list[str]], statuses: dict[str, str],
              parsed: Parsed, where: str) -> dict[str, str]:
    """Each test's status from its start count and its verdicts (``statuses`` maps a runner's verdict word to
    ours): one start and one verdict give that verdict, anything else "failed" (with a note)."""
    out, twice, unfinished = {}, [], []
    for name, seen in ends.items():
        if starts.get(name, 0) > 1 or len(seen) > 1:
            twice.append(name)
            out[name] = FAILED
        elif not seen:
            unfinished.append(name)
            out[name] = FAILED
        else:
            out[name] = statuses[seen[0]]
    if twice:
        parsed.notes.append(f"{where}reported more than once (counted failed): {_some(sorted(twice))}")
    if unfinished:
        parsed.notes.append(f"{where}started but never finished (counted failed): {_some(unfinished)}")
    return out


def _some(names: list[str]) -> str:
    """The first few of ``names`` for a note, each cut to a readable length (names come from hostile reports)."""
    return ", ".join(n if len(n) <= 200 else n[:200] + "..." for n in names[:20])


class _Numbering:
    """Gives a test id that an earlier test of the same report already has `` #2``, `` #3``... (a name repeated
    in one file: each occurrence stays a test of its own). Linear in the number of tests, whatever the names."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def __call__(self, test_id: str, tests: dict[str, str]) -> str:
        n = self.seen.get(test_id, 0)
        while True:
            n += 1
            candidate = test_id if n == 1 else f"{test_id} #{n}"
            if candidate not in tests:
                self.seen[test_id] = n
                return candidate


GO_REPORT = "go-test.json"


def parse_go_json(report_dir: Path, meta: dict | None = None) -> Parsed:
    """``go-test.json`` in ``report_dir``: the output of ``go test -json`` (one JSON event a line, see
    ``go doc test2json``). Ids are test names as Go prints them (``TestName/sub_case``); a test with subtests
    is represented by its leaves, and a parent that failed with no failing leaf becomes a failed id of its
    own. ``meta`` is not needed."""
    parsed = Parsed()
    text = _report_text(Path(report_dir) / GO_REPORT, parsed, "go test")
    if text is None:
        return parsed
    events, junk = _json_lines(text)
    if junk:
        parsed.notes.append(f"{GO_REPORT}: {junk} line(s) that are not go test events were ignored")
    starts: dict[str, int] = {}
    ends: dict[str, list[str]] = {}
    package_failed = False
    for event in events:
        test, action = event.get("Test"), event.get("Action")
        if not isinstance(test, str) or not test:
            package_failed |= action in ("fail", "build-fail")
        elif action == "run":
            starts[test] = starts.get(test, 0) + 1
            ends.setdefault(test, [])
        elif action in ("pass", "fail", "skip"):
            ends.setdefault(test, []).append(action)
    status = _verdicts(starts, ends, {"pass": PASSED, "fail": FAILED, "skip": SKIPPED}, parsed, "")
    # Go reports every level of a subtest (TestA, TestA/b, TestA/b/c), so each test's parent is the name up to
    # its last "/"; walking up from the failing leaves marks each ancestor once (linear, whatever the names).
    parent_of = {}
    for name in status:
        if "/" in name and (up := name.rsplit("/", 1)[0]) in status:
            parent_of[name] = up
    parents = set(parent_of.values())
    failing_below: set[str] = set()
    for name, st in status.items():
        if name not in parents:
            parsed.tests[name] = st
            up = parent_of.get(name) if st == FAILED else None
            while up is not None and up not in failing_below:
                failing_below.add(up)
                up = parent_of.get(up)
    for parent in sorted(parents):
        if status[parent] == FAILED and parent not in failing_below:
            parsed.tests[parent] = FAILED
    if package_failed and not status:
        parsed.notes.append("the package failed before any test ran (a build failure?)")
    return parsed


JEST_REPORT = "jest.json"
JEST_STATUS = {"passed": PASSED, "failed": FAILED, "pending": SKIPPED, "todo": SKIPPED, "skipped": SKIPPED,
               "disabled": SKIPPED, "focused": PASSED}


def _task_path(name: str, test_files: list[str]) -> str:
    """A test file's absolute path as the task names it (``hello.spec.js``), else its last component."""
    for f in sorted(test_files, key=len, reverse=True):
        if name == f or name.endswith("/" + f):
            return f
    return name.rsplit("/", 1)[-1]


def parse_jest_json(report_dir: Path, meta: dict | None = None) -> Parsed:
    """``jest.json`` in ``report_dir``: jest's ``--json --outputFile`` report. Ids are
    ``<test file> › <fullName>``, the file as ``meta["test_files"]`` names it; a second test with the same id
    in one file gets `` #2``. Pending and todo tests are "skipped". Only the per-test results count (the
    report's totals are not read); a test file that failed to load adds a note and no ids."""
    parsed = Parsed()
    text = _report_text(Path(report_dir) / JEST_REPORT, parsed, "jest")
    if text is None:
        return parsed
    try:
        report = json.loads(text)
    except (ValueError, RecursionError):
        parsed.notes.append(f"{JEST_REPORT} is not valid JSON")
        return parsed
    suites = report.get("testResults") if isinstance(report, dict) else None
    if not isinstance(suites, list):
        parsed.notes.append(f"{JEST_REPORT} has no testResults list")
        return parsed
    test_files = [f for f in (meta or {}).get("test_files") or [] if isinstance(f, str)]
    unique = _Numbering()
    for suite in suites:
        if not isinstance(suite, dict):
            continue
        file = _task_path(str(suite.get("name", "")), test_files)
        results = suite.get("assertionResults")
        results = results if isinstance(results, list) else []
        if not results and suite.get("status") == "failed":
            message = str(suite.get("message") or suite.get("failureMessage") or "")
            first = next((ln.strip(" ●") for ln in message.splitlines() if ln.strip(" ●")), "no message")
            parsed.notes.append(f"{file}: test suite failed to run ({first[:200]})")
        for result in results:
            if isinstance(result, dict):
                test_id = unique(f"{file} › {result.get('fullName', result.get('title', ''))}", parsed.tests)
                parsed.tests[test_id] = JEST_STATUS.get(str(result.get("status")), FAILED)
    return parsed


LIBTEST_PREFIX, LIBTEST_SUFFIX = "libtest-", ".json"
DOCTEST_REPORT = "doctest.txt"
DOCTEST_LINE = re.compile(r"^test (.+) \.\.\. (ok|FAILED|ignored)\s*$")
DOCTEST_LINE_NUMBER = re.compile(r" \(line \d+\)")


def _libtest_target(path: Path, parsed: Parsed) -> None:
    target = path.name[len(LIBTEST_PREFIX):-len(LIBTEST_SUFFIX)]
    text = _report_text(path, parsed, "libtest")
    if text is None:
        return
    events, junk = _json_lines(text)
    if junk:
        parsed.notes.append(f"{path.name}: {junk} line(s) that are not libtest events were ignored")
    starts: dict[str, int] = {}
    ends: dict[str, list[str]] = {}
    announced: list[int] = []
    for event in events:
        kind, what, name = event.get("type"), event.get("event"), event.get("name")
        if kind == "suite" and what == "started" and isinstance(event.get("test_count"), int):
            announced.append(event["test_count"])
        if kind != "test" or not isinstance(name, str) or not name:
            continue
        if what == "started":
            starts[name] = starts.get(name, 0) + 1
            ends.setdefault(name, [])
        elif what in ("ok", "failed", "ignored"):
            ends.setdefault(name, []).append(what)
    status = _verdicts(starts, ends, {"ok": PASSED, "failed": FAILED, "ignored": SKIPPED}, parsed, f"{target}: ")
    for name, st in status.items():
        parsed.tests[f"{target}::{name}"] = st
    if len(announced) > 1:
        parsed.notes.append(f"{target}: the test suite started {len(announced)} times")
    elif announced and announced[0] != len(status):
        parsed.notes.append(f"{target}: the suite announced {announced[0]} tests and reported {len(status)}")


def _doctests(path: Path, solution_files: set[str], parsed: Parsed) -> None:
    text = _report_text(path, parsed, "doc test")
    if text is None:
        return
    seen: dict[str, str] = {}
    unique = _Numbering()
    for line in text.splitlines():
        if line.startswith("failures:") or line.startswith("test result:"):
            break  # what follows quotes the tests' own output
        found = DOCTEST_LINE.match(line)
        if not found:
            continue
        name, verdict = found.groups()
        if name.split(" - ", 1)[0] in solution_files:
            continue  # a doc test of a solution file: its name changes with the solution
        test_id = unique("doc::" + DOCTEST_LINE_NUMBER.sub("", name, count=1), seen)
        seen[test_id] = {"ok": PASSED, "FAILED": FAILED, "ignored": SKIPPED}[verdict]
    parsed.tests.update(seen)


def parse_libtest_json(report_dir: Path, meta: dict | None = None) -> Parsed:
    """The Rust reports in ``report_dir``: ``libtest-<target>.json`` for each integration test program (its
    ``--format json`` output: one JSON event a line) and ``doctest.txt`` (``cargo test --doc``'s text). Ids:
    ``<target>::<test name>``; doc tests ``doc::<file> - <item>`` with the ``(line N)`` taken out (`` #2``
    for a second one with the same id), only those of files not in ``meta["solution_files"]`` (a solution
    file's doc tests change with the solution). Ignored tests are "skipped"."""
    parsed = Parsed()
    targets = [p for p in report_files(report_dir, f"{LIBTEST_PREFIX}*{LIBTEST_SUFFIX}") if p.parent == Path(report_dir)]
    if not targets:
        parsed.notes.append("no libtest report: the tests did not build or did not run")
    for path in targets:
        _libtest_target(path, parsed)
    if (Path(report_dir) / DOCTEST_REPORT).exists():
        _doctests(Path(report_dir) / DOCTEST_REPORT, set((meta or {}).get("solution_files") or []), parsed)
    return parsed


PARSERS: dict[str, Callable[[Path, dict], Parsed]] = {
    "junit": parse_junit,
    "gtest-xml": parse_gtest_xml,
    "go-json": parse_go_json,
    "jest-json": parse_jest_json,
    "libtest-json": parse_libtest_json,
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


# headings: pytest's (a test's failure section, a summary), jest's (a test's failure section, ``● A › b``; a
# test file's results, ``FAIL ./x.spec.js``; the totals, ``Test Suites: ...``) and unittest's, django's runner
# included (a test's section, ``FAIL: test_x (mod.Class)`` or ``ERROR: ...`` below a ``=====`` line; the totals,
# ``Ran 5 tests in 0.1s``)
SECTION = re.compile(r"^(_{3,} .+ _{3,}|={3,}.*|  ● .*|(PASS|FAIL) \S.*|Test Suites: .*"
                     r"|(FAIL|ERROR|UNEXPECTED SUCCESS): \S+ \(.*|Ran \d+ tests? in .*)\s*$")


def scrub(text: str, tokens: list[str]) -> str:
    """``text`` without the lines that mention any of ``tokens`` (the canaries' names), case-insensitively,
    and without the whole failure section a canary's heading opens (pytest's ``____ Class.name ____``, jest's
    ``● describe › title``, unittest's ``FAIL: name (module.Class)``, up to the next heading: a copied test's
    source, its traceback and its changed expected value included): the test output an agent sees on its next
    try, and a grading's output shown to people, never show lab's canary tests."""
    tokens = [t for t in tokens if t]
    if not tokens:
        return text
    pattern = re.compile("|".join(re.escape(t) for t in tokens), re.I)
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        heading = SECTION.match(line) is not None
        if heading:
            skipping = False
        if pattern.search(line):
            skipping = skipping or heading
            continue
        if not skipping:
            kept.append(line)
    return "".join(kept)
