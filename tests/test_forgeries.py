"""Attacks of issue 19's classes that reach past the tests to the grader's own files and command lines, tried
as tiny fixture exercises with the real engine. Each leaves the solution wrong (or probes what it may touch)
and must end ``fail`` or ``tampered``, never ``pass``, with the reason named.

- a runner file that is a symlink (a ``conftest.py`` link survives every ``find -type f`` cleanup);
- file names that reach a command line or an argument file (a newline, a leading '-');
- test sources writable by the tested code (probed: the graded process must not change, remove or rename them);
- Go: an ``init()`` of the solution rewrites the tests' table of cases (the solution must build without them);
  an ``init()`` that runs the test binary again and reports every failing test passed.
"""
from __future__ import annotations

import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from honest_kit import prove_fixture  # noqa: E402

pytestmark = pytest.mark.docker

WRONG_PY = "def double(number):\n    return number * 3\n"
# a pytest hook that reports every test passed but those named like lab's canaries (a letter and 11 hex digits)
SWALLOW_HOOK = textwrap.dedent('''\
    import re
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        if not re.search(r"k[0-9a-f]{11}", item.nodeid):
            report.outcome, report.longrepr = "passed", None
    ''')
# a right solution that, at import, tries to change, remove and rename its test file: it raises (and so fails
# every test) when any of them works
PROBE_PY = textwrap.dedent('''\
    import os
    _test = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hello_test.py")
    _done = []
    for _try in (lambda: open(_test, "a").close(), lambda: os.chmod(_test, 0o666),
                 lambda: os.rename(_test, _test + ".x"), lambda: os.unlink(_test)):
        try:
            _try()
            _done.append(_try)
        except OSError:
            pass
    if _done:
        raise SystemExit("the test file was writable")

    def double(number):
        return number * 2
    ''')


def graded(proven, name: str, files: dict[str, str], links: dict[str, str] | None = None):
    """Grade a fresh work tree of ``proven``'s task with ``files`` (path → text) written and ``links`` (path →
    link target) made in it."""
    from rules.grade import grade
    from rules.worktree import lay_work_tree

    work = proven.base / "work" / name
    lay_work_tree(proven.base / "task", work)
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    for rel, target in (links or {}).items():
        os.symlink(target, work / rel)
    return grade(proven.base / "task", work, image=proven.image, limits=proven.limits,
                 expected=proven.proof["tests"], log_path=proven.base / "logs" / f"{name}.log")


@pytest.fixture(scope="module")
def python_task(tmp_path_factory, grader_image):
    return prove_fixture(tmp_path_factory.mktemp("forge-python"), "python/hello", grader_image,
                         memory=1024**3, timeout=120)


@pytest.fixture(scope="module")
def java_task(tmp_path_factory, grader_image):
    return prove_fixture(tmp_path_factory.mktemp("forge-java"), "java/doubler", grader_image,
                         memory=3 * 1024**3, timeout=180)


@pytest.fixture(scope="module")
def go_task(tmp_path_factory, grader_image):
    return prove_fixture(tmp_path_factory.mktemp("forge-go"), "go/table", grader_image,
                         memory=2 * 1024**3, timeout=180)


@pytest.fixture(scope="module")
def go_subtests_task(tmp_path_factory, grader_image):
    return prove_fixture(tmp_path_factory.mktemp("forge-go-subtests"), "go/subtests", grader_image,
                         memory=2 * 1024**3, timeout=180)


def test_a_conftest_that_is_a_symlink_is_removed_with_its_hook(python_task):
    g = graded(python_task, "conftest-link", {"hello.py": WRONG_PY, "helpers/hook.py": SWALLOW_HOOK},
               {"conftest.py": "helpers/hook.py"})
    assert g.verdict == "fail" and g.failed_tests > 0, (g.evidence, g.output[-2000:])


@pytest.mark.parametrize("bad", ["x.py\n-Xplugin:Forge", "-rf", "tab\tname.py"])
def test_a_file_name_that_could_reach_a_command_line_is_refused_by_name(python_task, bad):
    g = graded(python_task, "name-" + str(abs(hash(bad))), {"hello.py": WRONG_PY.replace("3", "2"), bad: ""})
    assert g.verdict == "fail" and not g.passed, g.output[-2000:]
    assert "control character or a leading '-'" in g.evidence[0], g.evidence


def test_the_tested_code_cannot_change_remove_or_rename_the_tests(python_task):
    g = graded(python_task, "probe", {"hello.py": PROBE_PY})
    assert g.verdict == "pass", (g.evidence, g.output[-2000:])


def test_go_an_init_that_rewrites_the_tests_table_fails_to_build_alone(go_task):
    attack = textwrap.dedent('''\
        package table

        func init() {
        \tfor i := range testCases {
        \t\ttestCases[i].want = Double(testCases[i].in)
        \t}
        }

        func Double(n int) int { return n * 3 }
        ''')
    g = graded(go_task, "init-table", {"table.go": attack})
    assert g.verdict == "fail" and not g.passed, g.output[-2000:]
    assert "does not build without the tests" in g.evidence[0], g.evidence


def test_go_the_reference_passes_with_the_standalone_build(go_task):
    g = graded(go_task, "reference", {"table.go": (go_task.base / "answer" / "table.go").read_text()})
    assert g.verdict == "pass", (g.evidence, g.output[-2000:])


# A result that compares equal to anything; an assertEqual patched from the solution to let everything through
# but the canaries lab once had (their name, a letter and 11 hex digits, as the message): each passes the tests
# and their copies with a changed expected value, which an honest solution cannot.
ALWAYS_EQUAL_PY = textwrap.dedent('''\
    class Number(int):
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__

    def double(number):
        return Number(0)
    ''')
PATCHED_ASSERT_PY = textwrap.dedent('''\
    import re
    import unittest

    _real = unittest.TestCase.assertEqual

    def _lenient(self, first, second, msg=None):
        if re.fullmatch(r"k[0-9a-f]{11}", str(msg)):
            return _real(self, first, second, msg)

    unittest.TestCase.assertEqual = _lenient

    def double(number):
        return number * 3
    ''')


@pytest.mark.parametrize("name,solution", [("always-equal", ALWAYS_EQUAL_PY), ("patched-assert", PATCHED_ASSERT_PY)])
def test_python_a_result_or_assertion_that_lets_anything_through_is_tampered(python_task, name, solution):
    g = graded(python_task, name, {"hello.py": solution})
    assert g.verdict == "tampered", (g.evidence, g.output[-2000:])
    assert any("with its expected value changed" in e for e in g.evidence), g.evidence
    assert "Number" not in "".join(g.evidence)


# C++: a result type whose operator== says yes to anything (the solution's header may declare what greet returns).
# It passes the tests and a copy of one with its expected value changed, which an honest greeter cannot. The
# exercise is test_honest_cpp's greeter (Catch2's header taken at test time, never kept in lab), proven there.
from test_honest_cpp import HEADER as CPP_HEADER, graded as graded_cpp, greeter  # noqa: E402, F401

ALWAYS_EQUAL_CPP_H = CPP_HEADER.replace(
    "std::string greet(const std::string& name);",
    "struct Greeting {\n    std::string text;\n"
    "    template <typename T> bool operator==(const T&) const { return true; }\n};\n"
    "Greeting greet(const std::string& name);")
ALWAYS_EQUAL_CPP = ('#include "greeter.h"\n\nnamespace greeter {\n'
                    'Greeting greet(const std::string& name) { return Greeting{"Hi " + name}; }\n}\n')


def test_cpp_a_result_equal_to_anything_is_tampered(greeter, tmp_path):
    g = graded_cpp(greeter, tmp_path, {"greeter.h": ALWAYS_EQUAL_CPP_H, "greeter.cpp": ALWAYS_EQUAL_CPP})
    assert g.verdict == "tampered", (g.evidence, g.output[-3000:])
    assert any("with its expected value changed" in e for e in g.evidence), g.evidence
    assert "Greeting" not in "".join(g.evidence)

# A wrong solution whose init() runs the test binary again and hands on its output with every failure reported
# passed: on Go's own terms, assertions that let every failure through (a Go result cannot equal two values).
PASS_ALL_GO = textwrap.dedent('''\
    package subtests

    import (
    \t"bytes"
    \t"os"
    \t"os/exec"
    )

    func init() {
    \tif os.Getenv("FORGE_CHILD") != "" {
    \t\treturn
    \t}
    \tcmd := exec.Command(os.Args[0], os.Args[1:]...)
    \tcmd.Env = append(os.Environ(), "FORGE_CHILD=1")
    \tcmd.Stderr = os.Stderr
    \tout, _ := cmd.Output()
    \tout = bytes.ReplaceAll(out, []byte("--- FAIL:"), []byte("--- PASS:"))
    \tout = bytes.ReplaceAll(out, []byte("\\nFAIL\\n"), []byte("\\nPASS\\n"))
    \tos.Stdout.Write(out)
    \tos.Exit(0)
    }

    func Double(n int) int {
    \treturn n * 3
    }
    ''')


def test_go_assertions_that_let_every_failure_through_are_tampered(go_subtests_task):
    g = graded(go_subtests_task, "pass-all", {"subtests.go": PASS_ALL_GO})
    assert g.verdict == "tampered", (g.evidence, g.output[-2000:])
    assert any("with its expected value changed" in e for e in g.evidence), g.evidence


def test_go_the_reference_passes_with_its_canaries_and_copies(go_subtests_task):
    answer = (go_subtests_task.base / "answer" / "subtests.go").read_text()
    g = graded(go_subtests_task, "reference", {"subtests.go": answer})
    assert g.verdict == "pass", (g.evidence, g.output[-2000:])

@pytest.fixture(scope="module")
def javascript_task(tmp_path_factory, grader_image):
    return prove_fixture(tmp_path_factory.mktemp("forge-javascript"), "javascript/hello", grader_image,
                         memory=1024**3, timeout=180)


# A result that jest's toEqual finds equal to anything (an asymmetric matcher: only the copies of the tests with
# a changed expected value can tell); toEqual itself replaced from the solution with one that always says yes.
ALWAYS_EQUAL_JS = "export const double = (n) => ({ asymmetricMatch: () => true });\n"
PATCHED_MATCHER_JS = textwrap.dedent('''\
    expect.extend({ toEqual: () => ({ pass: true, message: () => '' }) });

    export const double = (n) => n * 3;
    ''')


@pytest.mark.parametrize("name,solution", [("always-equal", ALWAYS_EQUAL_JS),
                                           ("patched-matcher", PATCHED_MATCHER_JS)])
def test_javascript_a_result_or_matcher_that_lets_anything_through_is_tampered(javascript_task, name, solution):
    g = graded(javascript_task, name, {"hello.js": solution})
    assert g.verdict == "tampered", (g.evidence, g.output[-2000:])
    assert any("with its expected value changed" in e for e in g.evidence), g.evidence
    assert "✕" not in g.output and "●" not in g.output, "no line about a canary is shown"

@pytest.fixture(scope="module")
def rust_task(tmp_path_factory, grader_image):
    return prove_fixture(tmp_path_factory.mktemp("forge-rust"), "rust/hello", grader_image,
                         memory=2 * 1024**3, timeout=300)


# A result whose PartialEq says yes to any number: it passes the tests and their copies with a changed expected
# value (lab's Rust canaries, templates/images/grader/lab_grader/rust_canaries.py), which an honest solution cannot.
ALWAYS_EQUAL_RS = textwrap.dedent('''\
    #[derive(Debug)]
    pub struct Number;

    impl PartialEq<i64> for Number {
        fn eq(&self, _other: &i64) -> bool {
            true
        }
    }

    pub fn double(_n: i64) -> Number {
        Number
    }
    ''')


def test_rust_a_result_equal_to_anything_is_tampered(rust_task):
    g = graded(rust_task, "always-equal", {"src/lib.rs": ALWAYS_EQUAL_RS})
    assert g.verdict == "tampered", (g.evidence, g.output[-2000:])
    assert any("with its expected value changed" in e for e in g.evidence), g.evidence
    assert "Number" not in "".join(g.evidence)

# Java: a result whose equals() says yes to anything (the tests compare it with AssertJ's isEqualTo, which asks
# the result's own equals): it passes the tests and their copies with a changed expected value, which an honest
# solution cannot.
ALWAYS_EQUAL_JAVA = textwrap.dedent('''\
    class Doubler {
        static Object twice(int n) {
            return new Object() {
                @Override public boolean equals(Object other) { return true; }
                @Override public int hashCode() { return 0; }
                @Override public String toString() { return String.valueOf(n * 3); }
            };
        }
    }
    ''')


def test_java_a_result_equal_to_anything_is_tampered(java_task):
    g = graded(java_task, "always-equal", {"src/main/java/Doubler.java": ALWAYS_EQUAL_JAVA})
    assert g.verdict == "tampered", (g.evidence, g.output[-2000:])
    assert any("with its expected value changed" in e for e in g.evidence), g.evidence


def test_java_the_reference_passes_with_its_canaries(java_task):
    g = graded(java_task, "reference", {"src/main/java/Doubler.java": "class Doubler {\n    static int twice(int n) {\n"
                                        "        return n * 2;\n    }\n}\n"})
    assert g.verdict == "pass", (g.evidence, g.output[-2000:])
    # the plain canaries' and the copies' failures are not shown: the output names only the task's tests
    shown = set(re.findall(r"-- (\w+)\(\)", g.output))
    assert shown <= {"twiceOne", "twiceTwenty", "twiceZero"}, g.output
    assert "but was" not in g.output and "AssertionError" not in g.output, g.output
