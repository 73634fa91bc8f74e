"""Report parsers of the Go, JavaScript and Rust tracks (moved into rules/reports.py once it exists).

Each parser reads what the grader's test block left in the report folder and returns ``Parsed``: test id →
"passed" | "failed" | "skipped", plus notes. The files come from code that ran the graded solution, so they are
hostile input: size-capped, malformed lines skipped, and a test reported twice, or started with no verdict,
counts as failed. Nothing here raises on bad input.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_REPORT_BYTES = 64 * 1024 * 1024  # per report file; what lies beyond is not read (its tests are missing)


@dataclass
class Parsed:
    tests: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _read(path: Path, notes: list[str]) -> str | None:
    """The text of ``path`` (at most MAX_REPORT_BYTES, undecodable bytes replaced), or None with a note."""
    try:
        if not path.is_file() or path.is_symlink():
            notes.append(f"no report {path.name}: the runner did not write it (build failure, crash or timeout)")
            return None
        with open(path, "rb") as f:
            raw = f.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        notes.append(f"report {path.name} unreadable: {exc.strerror or exc}")
        return None
    if len(raw) > MAX_REPORT_BYTES:
        notes.append(f"report {path.name} is larger than {MAX_REPORT_BYTES} bytes: only its start was read")
        raw = raw[:MAX_REPORT_BYTES]
    return raw.decode("utf-8", errors="replace")


def _json_lines(text: str) -> tuple[list[dict], int]:
    """The JSON objects of a JSON-lines text and how many non-empty lines were not JSON objects."""
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


def _unique(test_id: str, tests: dict[str, str]) -> str:
    """``test_id``, or ``test_id #2``, ``#3``... when an earlier test of the same report has that id."""
    if test_id not in tests:
        return test_id
    n = 2
    while f"{test_id} #{n}" in tests:
        n += 1
    return f"{test_id} #{n}"


# ---- Go: `go test -json` ----

GO_REPORT = "go-test.json"


def parse_go_json(report_dir: Path, meta: dict) -> Parsed:
    """Parse ``go-test.json`` (the output of ``go test -json``) in ``report_dir``.

    Ids are test names as Go prints them (``TestName/sub_case``). A test with subtests is represented by its
    leaves; a parent that failed with no failing leaf becomes a failed id of its own. A test started twice,
    given two verdicts, or given none (the binary died) is failed. ``meta`` is unused.
    """
    out = Parsed()
    text = _read(Path(report_dir) / GO_REPORT, out.notes)
    if text is None:
        return out
    events, junk = _json_lines(text)
    if junk:
        out.notes.append(f"{GO_REPORT}: {junk} line(s) that are not go test events were ignored")
    runs: dict[str, int] = {}
    verdicts: dict[str, list[str]] = {}
    package_failed = False
    for event in events:
        test, action = event.get("Test"), event.get("Action")
        if not isinstance(test, str) or not test:
            package_failed |= action in ("fail", "build-fail")
            continue
        if action == "run":
            runs[test] = runs.get(test, 0) + 1
            verdicts.setdefault(test, [])
        elif action in ("pass", "fail", "skip"):
            verdicts.setdefault(test, []).append(action)
    status: dict[str, str] = {}
    twice = []
    for name, seen in verdicts.items():
        if runs.get(name, 0) > 1 or len(seen) > 1:
            twice.append(name)
            status[name] = "failed"
        elif not seen:
            status[name] = "failed"
        else:
            status[name] = {"pass": "passed", "fail": "failed", "skip": "skipped"}[seen[0]]
    if twice:
        out.notes.append(f"reported more than once (counted failed): {', '.join(sorted(twice)[:20])}")
    if no_verdict := [n for n, seen in verdicts.items() if not seen]:
        out.notes.append(f"started but never finished (counted failed): {', '.join(no_verdict[:20])}")
    parents = {name[:i] for name in status for i, ch in enumerate(name) if ch == "/"} & set(status)
    for name, st in status.items():
        if name not in parents:
            out.tests[name] = st
    for parent in sorted(parents):
        leaves = [n for n in out.tests if n.startswith(parent + "/")]
        if status[parent] == "failed" and not any(out.tests[n] == "failed" for n in leaves):
            out.tests[parent] = "failed"
    if package_failed and not status:
        out.notes.append("the package failed before any test ran (a build failure?)")
    return out


# ---- JavaScript: jest --json --outputFile ----

JEST_REPORT = "jest.json"
JEST_STATUS = {"passed": "passed", "failed": "failed", "pending": "skipped", "todo": "skipped",
               "skipped": "skipped", "disabled": "skipped", "focused": "passed"}


def _relative(name: str, test_files: list[str]) -> str:
    """A jest test file path as the task names it (``hello.spec.js``), else its last path component."""
    for f in sorted(test_files, key=len, reverse=True):
        if name == f or name.endswith("/" + f):
            return f
    return name.rsplit("/", 1)[-1]


def parse_jest_json(report_dir: Path, meta: dict) -> Parsed:
    """Parse ``jest.json`` (jest's ``--json --outputFile``) in ``report_dir``.

    Ids are ``<test file> › <fullName>`` with the test file as ``meta["test_files"]`` names it; a second test
    with the same id in one file gets `` #2``. pending and todo tests are "skipped". A test file that failed
    to run (it did not load) adds a note and no ids.
    """
    out = Parsed()
    text = _read(Path(report_dir) / JEST_REPORT, out.notes)
    if text is None:
        return out
    try:
        report = json.loads(text)
    except (ValueError, RecursionError):
        out.notes.append(f"{JEST_REPORT} is not valid JSON")
        return out
    suites = report.get("testResults") if isinstance(report, dict) else None
    if not isinstance(suites, list):
        out.notes.append(f"{JEST_REPORT} has no testResults list")
        return out
    test_files = [f for f in meta.get("test_files") or [] if isinstance(f, str)]
    for suite in suites:
        if not isinstance(suite, dict):
            continue
        file = _relative(str(suite.get("name", "")), test_files)
        results = suite.get("assertionResults")
        results = results if isinstance(results, list) else []
        if not results and suite.get("status") == "failed":
            message = str(suite.get("message") or suite.get("failureMessage") or "").strip()
            first = next((ln.strip(" ●") for ln in message.splitlines() if ln.strip(" ●")), "no message")
            out.notes.append(f"{file}: test suite failed to run ({first[:200]})")
        for result in results:
            if not isinstance(result, dict):
                continue
            test_id = _unique(f"{file} › {result.get('fullName', result.get('title', ''))}", out.tests)
            out.tests[test_id] = JEST_STATUS.get(str(result.get("status")), "failed")
    return out


# ---- Rust: libtest's JSON format, one file per integration test target, and rustdoc's text output ----

LIBTEST_PREFIX, LIBTEST_SUFFIX = "libtest-", ".json"
DOCTEST_REPORT = "doctest.txt"
DOCTEST_LINE = re.compile(r"^test (.+) \.\.\. (ok|FAILED|ignored)\s*$")
DOCTEST_LINE_NUMBER = re.compile(r" \(line \d+\)")


def _libtest_target(path: Path, out: Parsed) -> None:
    target = path.name[len(LIBTEST_PREFIX):-len(LIBTEST_SUFFIX)]
    text = _read(path, out.notes)
    if text is None:
        return
    events, junk = _json_lines(text)
    if junk:
        out.notes.append(f"{path.name}: {junk} line(s) that are not libtest events were ignored")
    starts: dict[str, int] = {}
    verdicts: dict[str, list[str]] = {}
    counted = None
    for event in events:
        kind, what, name = event.get("type"), event.get("event"), event.get("name")
        if kind == "suite" and what == "started" and isinstance(event.get("test_count"), int):
            counted = event["test_count"] if counted is None else -1
        if kind != "test" or not isinstance(name, str) or not name:
            continue
        if what == "started":
            starts[name] = starts.get(name, 0) + 1
            verdicts.setdefault(name, [])
        elif what in ("ok", "failed", "ignored"):
            verdicts.setdefault(name, []).append(what)
    twice, unfinished = [], []
    for name, seen in verdicts.items():
        if starts.get(name, 0) > 1 or len(seen) > 1:
            twice.append(name)
            status = "failed"
        elif not seen:
            unfinished.append(name)
            status = "failed"
        else:
            status = {"ok": "passed", "failed": "failed", "ignored": "skipped"}[seen[0]]
        out.tests[f"{target}::{name}"] = status
    if twice:
        out.notes.append(f"{target}: reported more than once (counted failed): {', '.join(sorted(twice)[:20])}")
    if unfinished:
        out.notes.append(f"{target}: started but never finished (counted failed): {', '.join(unfinished[:20])}")
    if counted == -1:
        out.notes.append(f"{target}: the test suite started more than once")
    elif counted is not None and counted != len(verdicts):
        out.notes.append(f"{target}: the suite announced {counted} tests and reported {len(verdicts)}")


def _doctests(path: Path, solution_files: set[str], out: Parsed) -> None:
    text = _read(path, out.notes)
    if text is None:
        return
    seen: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("failures:") or line.startswith("test result:"):
            break  # what follows quotes the tests' own output
        found = DOCTEST_LINE.match(line)
        if not found:
            continue
        name, verdict = found.groups()
        if name.split(" - ", 1)[0] in solution_files:
            continue  # a doc test of a solution file: its name changes with the solution
        test_id = _unique("doc::" + DOCTEST_LINE_NUMBER.sub("", name, count=1), seen)
        seen[test_id] = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}[verdict]
    out.tests.update(seen)


def parse_libtest_json(report_dir: Path, meta: dict) -> Parsed:
    """Parse the Rust reports in ``report_dir``: ``libtest-<target>.json`` (a test program's
    ``--format json`` output) for each integration test target, and ``doctest.txt`` (``cargo test --doc``).

    Ids: ``<target>::<test name>``; doc tests ``doc::<file> - <item>`` with the ``(line N)`` taken out
    (`` #2`` for a second one with the same id), only those of files not in ``meta["solution_files"]``.
    Ignored tests are "skipped"; a test started twice, given two verdicts or none is failed.
    """
    out = Parsed()
    report_dir = Path(report_dir)
    try:
        targets = sorted(p for p in report_dir.iterdir()
                         if p.name.startswith(LIBTEST_PREFIX) and p.name.endswith(LIBTEST_SUFFIX))
    except OSError:
        targets = []
    if not targets:
        out.notes.append("no libtest report: the tests did not build or did not run")
    for path in targets:
        _libtest_target(path, out)
    if (report_dir / DOCTEST_REPORT).exists():
        _doctests(report_dir / DOCTEST_REPORT, set(meta.get("solution_files") or []), out)
    return out


PARSERS = {"go-json": parse_go_json, "jest-json": parse_jest_json, "libtest-json": parse_libtest_json}
