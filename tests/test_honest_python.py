"""Forged verdicts, tried as adversarial solutions of the Python fixture task (real engine).

Each solution below only changes the solution file (``hello.py``, whose tests want ``double(n) == 2 * n``) and
leaves ``double`` wrong; it then tries to make the grading say ``pass`` anyway. Each must be graded ``fail`` or
``tampered``, while the reference solution still passes.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from honest_kit import PYTEST_RUNNER_PATCH, REPORT_FLOOD, prove_fixture, reports_handed_over  # noqa: E402
from honest_kit import grade_solution as kit_grade_solution  # noqa: E402

pytestmark = pytest.mark.docker

WRONG = "def double(number):\n    return number + 1\n"

FORGERIES = {
    # the example: rewrite every JUnit report at exit, drop the failures, force exit status 0
    "report-rewritten-at-exit": WRONG + textwrap.dedent('''\
        import atexit, glob, os, re

        def _forge():
            for pattern in ("/tmp/**/*.xml", "/work/**/*.xml", "/lab/**/*.xml"):
                for path in glob.glob(pattern, recursive=True):
                    try:
                        text = open(path).read()
                        text = re.sub(r"<(failure|error|skipped)\\b.*?</\\1>", "", text, flags=re.S)
                        text = re.sub(r"<(failure|error|skipped)\\b[^>]*/>", "", text)
                        text = re.sub(r'(failures|errors|skipped)="\\d+"', r'\\1="0"', text)
                        open(path, "w").write(text)
                    except OSError:
                        pass
            os._exit(0)

        atexit.register(_forge)
        '''),
    # the runner's own summary lines, and lab's old one, printed by the solution
    "runner-lines-printed": WRONG + textwrap.dedent('''\
        print("lab-check: ran=3 passed=3 failed=0")
        print("============================== 3 passed in 0.01s ===============================")
        '''),
    # the exit status forced before any report is written
    "exit-status-forced": WRONG + "import os\nos._exit(0)\n",
    # the assertion every test uses, swapped for one that never fails
    "assertions-swapped": WRONG + textwrap.dedent('''\
        import unittest
        unittest.TestCase.assertEqual = lambda self, first, second, msg=None: None
        '''),
    # pytest's own reporting patched: every test's report says passed, and the JUnit writer drops failures
    "runner-internals-patched": WRONG + PYTEST_RUNNER_PATCH,
    # fewer tests registered: every class defined from now on loses its failing test methods
    "tests-unregistered": WRONG + textwrap.dedent('''\
        import builtins
        _build = builtins.__build_class__

        def _strip(func, name, *bases, **kw):
            cls = _build(func, name, *bases, **kw)
            for attr in [a for a in vars(cls) if a.startswith("test_") and a != "test_one"]:
                delattr(cls, attr)
            return cls

        builtins.__build_class__ = _strip
        '''),
    # assertions made no-ops only for the tests' argument types (numbers): the canaries compare numbers too
    "assertions-swapped-for-numbers": WRONG + textwrap.dedent('''\
        import unittest
        _original = unittest.TestCase.assertEqual

        def _assert_equal(self, first, second, msg=None):
            if isinstance(first, int) and isinstance(second, int):
                return None
            return _original(self, first, second, msg)

        unittest.TestCase.assertEqual = _assert_equal
        '''),
    # only the exercise's own test class emptied as it is created (every test name kept)
    "test-class-emptied": WRONG + textwrap.dedent('''\
        import builtins
        _build = builtins.__build_class__

        def _hook(func, name, *bases, **kw):
            cls = _build(func, name, *bases, **kw)
            if name == "HelloTest":
                for attr in [a for a in vars(cls) if a.startswith("test_")]:
                    setattr(cls, attr, lambda self: None)
            return cls

        builtins.__build_class__ = _hook
        '''),
    # the test module's own `unittest` swapped (found up the import stack) for one whose assertEqual passes
    "test-module-unittest-swapped": WRONG + textwrap.dedent('''\
        import sys, types, unittest

        class _Case(unittest.TestCase):
            def assertEqual(self, *args, **kwargs):
                return None

        _fake = types.ModuleType("unittest")
        _fake.__dict__.update(unittest.__dict__)
        _fake.TestCase = _Case
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_globals.get("__name__", "").endswith("hello_test") and frame.f_globals.get("unittest") is unittest:
                frame.f_globals["unittest"] = _fake
                break
            frame = frame.f_back
        '''),
    # the grader's filesystem patched: pytest's JUnit writer, lab's folders, the report folder
    "grader-filesystem-patched": textwrap.dedent('''\
        import glob
        _seen = []
        for target in glob.glob("/usr/lib/python3/dist-packages/_pytest/junitxml.py") + [
                "/usr/bin/timeout", "/opt/lab/planted", "/etc/passwd", "/lab/report/exit", "/task/check.sh"]:
            try:
                with open(target, "a") as f:
                    f.write("# planted")
                _seen.append(f"PLANTED {target}")
            except OSError as exc:
                _seen.append(f"REFUSED {target} {exc.strerror}")

        def double(number):
            raise RuntimeError(" | ".join(_seen))  # shown in the test output
        '''),
    # a process that outlives the tests and writes a perfect report, canaries included, after the runner ends
    "report-forged-after-exit": WRONG + textwrap.dedent('''\
        import os, re, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                names = re.findall(r"def (test_\\w+)", open("/work/hello_test.py").read())
                while not os.path.exists("/tmp/lab-out/report.xml"):
                    time.sleep(0.01)
                time.sleep(0.2)
                cases = "".join(f'<testcase classname="hello_test.HelloTest" name="{n}"/>' for n in names)
                for _ in range(500):
                    try:
                        open("/tmp/lab-out/report.xml", "w").write(f"<testsuite>{cases}</testsuite>")
                        open("/tmp/lab-out/exit", "w").write("0")
                    except OSError:
                        pass
                    time.sleep(0.01)
            os._exit(0)
        '''),
}


@pytest.fixture(scope="module")
def proven(tmp_path_factory, grader_image):
    """The fixture's python-hello task, rendered and proven (its reference's test ids recorded)."""
    return prove_fixture(tmp_path_factory.mktemp("honest-python"), "python/hello", grader_image,
                         memory=1024**3, timeout=120)


def grade_solution(proven, name: str, solution: str):
    return kit_grade_solution(proven, name, "hello.py", solution)


def test_the_proof_records_the_reference_test_ids(proven):
    _, proof, _, _ = proven
    assert proof["tests"] == ["hello_test.HelloTest::test_one", "hello_test.HelloTest::test_three",
                              "hello_test.HelloTest::test_two"]
    assert proof["reference"]["verdict"] == "pass" and proof["stub"]["verdict"] == "fail"


def test_the_reference_passes_again_with_fresh_canaries(proven):
    from rules.files import read_json

    base, *_ = proven
    g = grade_solution(proven, "reference", (base / "answer" / "hello.py").read_text())
    assert (g.verdict, g.ran, g.passed_tests) == ("pass", 3, 3), g.output[-2000:]
    assert not any(tok in g.output for tok in ("kfail", "def test_k")), "canary lines are scrubbed"
    assert read_json(base / "task" / "task.json")["report"] == "junit"


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forged_verdict_is_never_a_pass(proven, name):
    g = grade_solution(proven, name, FORGERIES[name])
    assert g.verdict in ("fail", "tampered") and not g.passed, g.output[-3000:]
    expect = {"report-rewritten-at-exit": "tampered", "assertions-swapped": "tampered",
              "runner-internals-patched": "tampered", "assertions-swapped-for-numbers": "tampered",
              "test-class-emptied": "tampered", "test-module-unittest-swapped": "tampered"}
    if name in expect:
        assert g.verdict == expect[name], (g.evidence, g.output[-2000:])
    if name == "grader-filesystem-patched":
        assert "PLANTED" not in g.output and g.output.count("REFUSED") >= 5, g.output[-3000:]
    if name == "tests-unregistered":
        assert "not reported" in " ".join(g.evidence)


def test_an_extension_module_beside_the_solution_is_removed_before_the_tests_import_it(proven):
    """Python imports ``hello.so`` (or ``hello.cpython-*.so``, ``hello.abi3.so``) before ``hello.py``: a compiled
    module shipped in the work tree would replace the graded source the scan reads. check.sh removes them, so the
    reference passes beside a junk one (were it kept, importing it would fail every test: not an ELF file)."""
    base, *_ = proven
    reference = (base / "answer" / "hello.py").read_text()
    g = kit_grade_solution(proven, "extension-module", "hello.py", reference,
                           extra={"hello.so": "not an ELF file\n", "hello.abi3.so": "not an ELF file\n"})
    assert (g.verdict, g.passed_tests) == ("pass", 3), (g.evidence, g.output[-2000:])


def test_odd_names_in_the_report_folder_never_make_root_copy_through_links(proven, monkeypatch):
    """check.sh copies the tester's report folder as root: a name holding a newline must never make a line of it
    a path of its own (a link to /dev/zero, 50 MB a name, onto the host): NUL-separated, links never followed."""
    seen = reports_handed_over(monkeypatch)
    g = grade_solution(proven, "flood", WRONG + REPORT_FLOOD)
    assert g.verdict != "pass" and seen, (g.evidence, seen)
    assert max(seen.values()) < 1_000_000 and not any(k.startswith(("zz", "link")) for k in seen), seen


def test_a_process_left_holding_the_output_does_not_keep_the_grading_open(proven):
    lingering = WRONG + "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(600)\n    os._exit(0)\n"
    g = grade_solution(proven, "lingering", lingering)
    assert g.verdict == "fail" and not g.timed_out and g.seconds < 60, (g.seconds, g.evidence)


def test_a_proof_grades_reference_and_stub_in_one_container_apart(proven):
    """grade_proof: two check.sh runs in one container, each with its own report, canaries and verdict; the
    second run finds none of the first one's files (but the warm caches) and is decided against the first's ids."""
    from rules.grade import grade_proof
    from rules.worktree import lay_work_tree

    base, proof, limits, image = proven
    reference = (base / "answer" / "hello.py").read_text()
    first, second, stub = base / "pair" / "first", base / "pair" / "second", base / "pair" / "stub"
    for tree in (first, second, stub):
        lay_work_tree(base / "task", tree)
    (first / "hello.py").write_text("open('/tmp/lab-leak', 'w').write('x')\nopen('/work/leak', 'w').write('x')\n"
                                    + reference)
    (second / "hello.py").write_text("import os\nassert not os.path.exists('/tmp/lab-leak')\n"
                                     "assert not os.path.exists('/work/leak')\n" + reference)
    a, b = grade_proof(base / "task", first, second, image=image, limits=limits, log_dir=base / "pair-logs")
    assert a.verdict == "pass" and b.verdict == "pass", (a.evidence, b.evidence, b.output)
    assert a.tests == b.tests == proof["tests"]
    ref, st = grade_proof(base / "task", first, stub, image=image, limits=limits)
    assert ref.verdict == "pass" and st.verdict == "fail" and st.ran == len(proof["tests"]), st.evidence
    assert (base / "pair-logs" / "reference.log").read_text() != (base / "pair-logs" / "stub.log").read_text()


# A package named as the test module: Python imports it in place of hello_test.py. It sets __file__ to the test
# file's path (pytest's mismatch check), runs the real file and hands pytest its test class with every test emptied.
SHADOW_PACKAGE = '''
import os, runpy
__file__ = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hello_test.py")
_real = runpy.run_path(__file__)
for _name, _value in list(_real.items()):
    if isinstance(_value, type) and _name.endswith("Test"):
        for _attr in list(vars(_value)):
            if _attr.startswith("test"):
                setattr(_value, _attr, lambda self: None)
    globals()[_name] = _value
'''


def test_a_package_named_as_the_test_module_is_removed_before_pytest_imports_it(proven):
    """Red team 3: a folder ``hello_test/`` (a package wins over ``hello_test.py``) stood in for the tests."""
    g = kit_grade_solution(proven, "shadow-package", "hello.py", "def double(number):\n    return 0\n",
                           extra={"hello_test/__init__.py": SHADOW_PACKAGE})
    # the real tests ran: the two whose input is not 0 fail
    assert g.verdict == "fail" and g.passed_tests == 1, (g.evidence, g.output[-2000:])
