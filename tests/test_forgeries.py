"""Attacks of issue 19's classes that reach past the tests to the grader's own files and command lines, tried
as tiny fixture exercises with the real engine. Each leaves the solution wrong (or probes what it may touch)
and must end ``fail`` or ``tampered``, never ``pass``, with the reason named.

- a runner file that is a symlink (a ``conftest.py`` link survives every ``find -type f`` cleanup);
- file names that reach a command line or an argument file (a newline, a leading '-');
- test sources writable by the tested code (probed: the graded process must not change, remove or rename them);
- Go: an ``init()`` of the solution rewrites the tests' table of cases (the solution must build without them).
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
