"""Rendering facts of the Go, JavaScript and Python tracks (pure: no Docker).

Each test writes a tiny exercise of its own, renders it, and checks one thing its check.sh must keep doing:
which files it removes and lays back, how it enables skipped tests, and how it counts test cases from the
runner's machine-readable output (the counting scripts embedded in check.sh run here on made-up reports).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rules import aider


def _exercise(root: Path, track: str, slug: str, files: dict[str, str], config: dict) -> aider.Exercise:
    base = root / track / "exercises" / "practice" / slug
    for rel, text in {**files, ".meta/config.json": json.dumps({"files": config}),
                      ".docs/instructions.md": "# Instructions\n\nDo it.\n"}.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    return aider.Exercise(track, slug, base)


def _go(root: Path) -> aider.Rendered:
    return aider.render(_exercise(root, "go", "leap", {
        "go.mod": "module leap\n\ngo 1.18\n",
        "leap.go": "package leap\n",
        "leap_test.go": "package leap\n",
        "cases_test.go": "package leap\n",
        ".meta/example.go": "package leap\n\nfunc IsLeap(y int) bool { return y%4 == 0 }\n",
    }, {"solution": ["leap.go"], "test": ["leap_test.go"], "example": [".meta/example.go"],
        "editor": ["cases_test.go"], "invalidator": ["go.mod"]}))


def _js(root: Path) -> aider.Rendered:
    return aider.render(_exercise(root, "javascript", "leap", {
        "package.json": "{}\n",
        "babel.config.js": "module.exports = { presets: ['@exercism/babel-preset-javascript'] };\n",
        "leap.js": "export const isLeap = () => {};\n",
        "leap.spec.js": "describe('leap', () => {\n  test('a', () => {});\n  xtest('b', () => {});\n"
                        "  xit('c', () => {});\n  xdescribe('d', () => {});\n  test.skip('slow', () => {});\n"
                        "  maxtest(1);\n});\n",
        ".meta/proof.ci.js": "export const isLeap = (y) => y % 4 === 0;\n",
    }, {"solution": ["leap.js"], "test": ["leap.spec.js"], "example": [".meta/proof.ci.js"]}))


def _python(root: Path) -> aider.Rendered:
    return aider.render(_exercise(root, "python", "paasio", {
        "paasio.py": "class MeteredFile:\n    pass\n",
        "paasio_test.py": "import unittest\n",
        "test_utils.py": "ZEN = b''\n",
        ".meta/example.py": "class MeteredFile:\n    size = 1\n",
    }, {"solution": ["paasio.py"], "test": ["paasio_test.py", "test_utils.py"], "example": [".meta/example.py"]}))


def _check(rendered: aider.Rendered) -> str:
    return rendered.task_files["check.sh"][0].decode()


def _counter(check: str) -> str:
    """The Python program check.sh runs to count test cases (the heredoc between <<'PY' and PY)."""
    found = re.search(r"<<'PY'\n(.*?)\nPY\n", check, re.S)
    assert found, "check.sh has no counting program"
    return found.group(1)


def _count(check: str, tmp_path: Path, report: str, *args: str) -> tuple[int, int, int]:
    (tmp_path / "report").write_text(report)
    (tmp_path / "stderr").write_text("")
    if not (tmp_path / "files").exists():
        (tmp_path / "files").write_text("")
    proc = subprocess.run([sys.executable, "-c", _counter(check), str(tmp_path / "report"), *args],
                          capture_output=True, text=True, check=True, cwd=tmp_path)
    ran, passed, failed = (int(x) for x in proc.stdout.split())
    return ran, passed, failed


# ---- Go ----

def test_go_reference_maps_onto_the_solution_not_the_editor_test_file(tmp_path):
    assert set(_go(tmp_path).answer_files) == {"leap.go"}


def test_go_check_removes_added_test_files_before_laying_back_the_tasks_own(tmp_path):
    check = _check(_go(tmp_path))
    removal = check.index("-name '*_test.go' -exec rm -f")
    assert removal < check.index('"$task/workspace/"leap_test.go') and removal < check.index("cases_test.go")
    assert "rm -rf vendor go.work" in check


def test_go_check_runs_offline_without_cached_results(tmp_path):
    check = _check(_go(tmp_path))
    assert "GOPROXY=off" in check and "GOTOOLCHAIN=local" in check and "GOWORK=off" in check
    assert re.search(r"timeout --signal=KILL \d+ go test -count=1 -json \.", check)


def _go_events(*events: tuple) -> str:
    return "".join(json.dumps({"Action": a, "Package": "leap", **({"Test": t} if t else {})}) + "\n"
                   for a, t in events)


def _go_count(tmp_path: Path, report: str) -> tuple[int, int, int]:
    """Count ``report`` (go test -json lines) as check.sh does, with the test files listed in ``files``."""
    return _count(_check(_go(tmp_path)), tmp_path, report, str(tmp_path / "stderr"), str(tmp_path / "files"))


def test_go_counts_leaf_subtests_as_cases(tmp_path):
    report = _go_events(("start", None), ("run", "TestLeap"), ("run", "TestLeap/a"), ("pass", "TestLeap/a"),
                        ("run", "TestLeap/b"), ("pass", "TestLeap/b"), ("pass", "TestLeap"),
                        ("run", "ExampleLeap"), ("pass", "ExampleLeap"), ("pass", None))
    assert _go_count(tmp_path, report) == (3, 3, 0)


def test_go_counts_a_skip_or_a_test_without_verdict_as_failed(tmp_path):
    report = _go_events(("run", "TestA"), ("skip", "TestA"), ("run", "TestB"), ("run", "TestC"),
                        ("pass", "TestC"), ("fail", None))
    assert _go_count(tmp_path, report) == (3, 1, 2)


def test_go_package_failing_after_passing_tests_is_a_failure(tmp_path):
    report = _go_events(("run", "TestA"), ("pass", "TestA"), ("fail", None))
    assert _go_count(tmp_path, report) == (2, 1, 1)


def test_go_declared_test_that_never_reported_is_a_failed_case(tmp_path):
    (tmp_path / "leap_test.go").write_text("package leap\n\nfunc TestLeap(t *testing.T) {}\n"
                                           "func TestMain(m *testing.M) {}\nfunc Testify(t *testing.T) {}\n")
    (tmp_path / "bonus_test.go").write_text("//go:build bonus\n\npackage leap\n\nfunc TestBonus(t *testing.T) {}\n")
    (tmp_path / "files").write_text("leap_test.go\n")  # what `go list` reports: bonus_test.go is not built
    fake = _go_events(("run", "TestFake"), ("pass", "TestFake"), ("pass", None))
    assert _go_count(tmp_path, fake) == (2, 1, 1)


def test_go_build_failure_runs_no_tests(tmp_path):
    report = _go_events(("start", None), ("output", None), ("fail", None))
    assert _go_count(tmp_path, report) == (0, 0, 0)


def test_go_empty_test_file_runs_no_tests(tmp_path):
    report = _go_events(("start", None), ("pass", None))
    assert _go_count(tmp_path, report) == (0, 0, 0)


# ---- JavaScript ----

def _enable(check: str, tmp_path: Path) -> tuple[str, int]:
    """Run check.sh's enabling lines (sed, then the count of deliberate skips) on the fixture's spec."""
    spec = tmp_path / "work" / "leap.spec.js"
    spec.parent.mkdir()
    spec.write_text(_js(tmp_path / "again").task_files["workspace/leap.spec.js"][0].decode())
    block = check[check.index("# 2. Enable"):check.index("# 3. Run")]
    out = subprocess.run(["bash", "-c", block + '\necho "$allowed_skips"'], cwd=spec.parent,
                         capture_output=True, text=True, check=True).stdout
    return spec.read_text(), int(out.split()[-1])


def test_js_enables_xtest_xit_xdescribe_and_keeps_deliberate_skips(tmp_path):
    text, allowed = _enable(_check(_js(tmp_path)), tmp_path)
    assert not re.search(r"(^|\s)x(test|it|describe)\(", text, re.M)
    assert "  test('b'" in text and "  it('c'" in text and "  describe('d'" in text
    assert "test.skip('slow'" in text and "maxtest(1)" in text
    assert allowed == 1


def test_js_check_ignores_the_work_trees_jest_and_babel_settings(tmp_path):
    check = _check(_js(tmp_path))
    assert "rm -rf node_modules __mocks__ __tests__" in check
    assert "-name '.babelrc'" in check and "-name 'jest.config.*'" in check
    assert '"configFile": "$work/babel.config.js", "babelrc": false' in check
    assert "--runTestsByPath leap.spec.js" in check


def _jest(passed: int, failed: int, pending: int, suites_failed: int = 0) -> str:
    return json.dumps({"numPassedTests": passed, "numFailedTests": failed, "numPendingTests": pending,
                       "numTodoTests": 0, "numRuntimeErrorTestSuites": 0, "numFailedTestSuites": suites_failed,
                       "success": failed == 0 and suites_failed == 0})


def test_js_deliberate_skip_is_not_counted_but_further_skips_fail(tmp_path):
    check = _check(_js(tmp_path))
    assert _count(check, tmp_path, _jest(11, 0, 1), "1") == (11, 11, 0)
    assert _count(check, tmp_path, _jest(10, 0, 2), "1") == (11, 10, 1)


def test_js_suite_that_fails_to_load_runs_no_tests(tmp_path):
    check = _check(_js(tmp_path))
    assert _count(check, tmp_path, _jest(0, 0, 0, suites_failed=1), "0") == (0, 0, 0)
    assert _count(check, tmp_path, "not json", "0") == (0, 0, 0)


# ---- Python ----

def test_python_runs_every_listed_test_file_isolated_from_work_tree_settings(tmp_path):
    check = _check(_python(tmp_path))
    assert "paasio_test.py test_utils.py" in check
    assert "python3 -I -B -m pytest -c /dev/null" in check
    removal = check.index("-name 'conftest.py'")
    assert removal < check.index('"$task/workspace/"test_utils.py')
    assert "__pycache__" in check


def test_python_reference_maps_onto_the_solution(tmp_path):
    assert set(_python(tmp_path).answer_files) == {"paasio.py"}
