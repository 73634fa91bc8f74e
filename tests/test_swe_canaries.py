"""The swe tier's canaries (templates/swe/canaries.py.j2, run by check.sh as root; issue 19 item 1): written into the
module of the instance's first FAIL_TO_PASS test, named from that scope's own test names (never the old
``test_k`` + 11 hex digits), placed among its tests, with copies of its tests whose expected value is changed;
an honest fix fails exactly the failing ones; the manifest names them for rules/grade.py. The script is run here
as check.sh runs it (``python3 -I -`` on stdin), and pytest runs the module it leaves. No Docker: the graded
run in the environment image is tests/test_honest_swe.py's (an honest fix resolved, a forger that spares the old
canaries' shape tampered)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rules.grade import Canaries, canaries_of, decide

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixture_swe import BASE, FIXED_SOURCE, FIXED_TESTS, calc_env, make_calc  # noqa: E402

OLD_SHAPE = re.compile(r"^test_k[0-9a-f]{11}$")
CLASS_TESTS = textwrap.dedent('''\
    import unittest

    from calc import add, mul


    class CalcTest(unittest.TestCase):
        def setUp(self):
            self.base = 2

        def test_add_small_numbers(self):
            self.assertEqual(add(self.base, 3), 5)

        def test_add_negative_numbers(self):
            expected = -1
            self.assertEqual(add(self.base, -3), expected)

        def test_mul_small_numbers(self):
            self.assertEqual(mul(self.base, 3), 6)


    def test_outside():
        assert add(1, 1) == 2
    ''')


def _script() -> str:
    from rules.render import render

    return render("swe/canaries.py.j2")


def _run(tmp: Path, files: dict[str, str], f2p: list[str], p2p: list[str], tokens=("kaaaa", "kbbbb"),
         test_files: list[str] | None = None) -> dict:
    """Lay ``files`` in ``tmp`` with the fixed calc, run the canary script as check.sh does; the manifest."""
    for rel, text in {"calc/__init__.py": FIXED_SOURCE, **files}.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    (tmp / "task.json").write_text(json.dumps({"fail_to_pass": f2p, "pass_to_pass": p2p}))
    files_arg = test_files or [p for p in files if p.startswith("tests/")]
    subprocess.run([sys.executable, "-I", "-", "task.json", *tokens, str(tmp / "canaries.json"), *files_arg],
                   input=_script(), text=True, cwd=tmp, check=True)
    assert (tmp / "canaries.json").stat().st_mode & 0o077 == 0, "root's alone"
    return json.loads((tmp / "canaries.json").read_text())


def _pytest(tmp: Path) -> dict[str, str]:
    """Run pytest on ``tmp/tests`` with a JUnit report; test id → status as rules.reports reads it."""
    from rules.reports import parse_junit

    (tmp / "out").mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", "/dev/null", "--rootdir",
                    str(tmp), f"--junitxml={tmp / 'out' / 'report.xml'}", "tests"], cwd=tmp, capture_output=True)
    return parse_junit(tmp / "out").tests


def test_the_canaries_look_like_the_instances_tests_and_an_honest_fix_fails_only_the_failing_ones(tmp_path):
    m = _run(tmp_path, {"tests/test_calc.py": FIXED_TESTS, "tests/test_other.py": BASE["tests/test_other.py"]},
             ["tests.test_calc::test_add"], ["tests.test_calc::test_mul"])
    names = m["fail"] + m["pass"]
    assert m["match"] == "leaf" and len(m["fail"]) >= 2 and len(m["pass"]) == 1, m
    assert not any(OLD_SHAPE.match(n) for n in names) and not any("kaaaa" in n or "kbbbb" in n for n in names)
    assert all(re.fullmatch(r"test_(add|mul)(_(add|mul))+(_\d+)?", n) for n in names), names
    assert set(m["originals"].values()) <= {"test_add", "test_mul"} and m["originals"], m
    source = (tmp_path / "tests" / "test_calc.py").read_text()
    assert all(f"def {n}():" in source for n in names), "module-level functions, as the module's tests are"
    assert (tmp_path / "tests" / "test_other.py").read_text() == BASE["tests/test_other.py"], "the first F2P's module"
    tests = _pytest(tmp_path)
    canaries = canaries_of({"canaries": "manifest"}, tmp_path, ("kaaaa", "kbbbb"))
    assert canaries.fail == tuple(m["fail"])
    assert {i: s for i, s in tests.items() if canaries.owns(i)} == {
        **{f"tests.test_calc::{n}": "failed" for n in m["fail"]}, **{f"tests.test_calc::{n}": "passed" for n in m["pass"]}}
    verdict, evidence, _, _ = decide(tests, ["tests.test_calc::test_add", "tests.test_calc::test_mul"], canaries, 1)
    assert (verdict, evidence) == ("pass", [])


def test_a_forger_sparing_the_old_shape_or_passing_everything_is_tampered(tmp_path):
    """Every failure turned into a pass but on names shaped like the old canaries (the forger of
    tests/test_honest_swe.py, on the report): the failing canaries pass, and the copies pass beside their
    originals: tampered."""
    m = _run(tmp_path, {"tests/test_calc.py": FIXED_TESTS}, ["tests.test_calc::test_add"], ["tests.test_calc::test_mul"])
    tests = _pytest(tmp_path)
    forged = {i: ("failed" if OLD_SHAPE.match(i.rsplit("::", 1)[1]) else "passed") for i in tests}
    canaries = Canaries(tuple(m["fail"]), tuple(m["pass"]), m["originals"], "leaf")
    verdict, evidence, _, _ = decide(forged, ["tests.test_calc::test_add", "tests.test_calc::test_mul"], canaries, 0)
    assert verdict == "tampered", evidence
    assert any("with its expected value changed" in e for e in evidence), evidence


def test_in_a_unittest_class_they_are_methods_asserting_as_its_tests_do(tmp_path):
    m = _run(tmp_path, {"tests/test_calc.py": CLASS_TESTS},
             ["tests.test_calc.CalcTest::test_add_negative_numbers"], ["tests.test_calc.CalcTest::test_mul_small_numbers"])
    source = (tmp_path / "tests" / "test_calc.py").read_text()
    for n in m["fail"] + m["pass"]:
        assert re.search(rf"^    def {n}\(self(, \*args)?\):", source, re.M), (n, source)
        assert not OLD_SHAPE.match(n) and re.fullmatch(r"test_[a-z_0-9]+", n)
    assert "self.assertEqual(" in source.split("def " + m["fail"][0], 1)[1].split("\n")[1]
    assert m["originals"], "the class's tests are copied with an expected value changed"
    tests = _pytest(tmp_path)
    own = {i.rsplit("::", 1)[1]: s for i, s in tests.items() if i.startswith("tests.test_calc.CalcTest::")}
    assert {n: own.get(n) for n in m["fail"]} == {n: "failed" for n in m["fail"]}, (own, source)
    assert {n: own.get(n) for n in m["pass"]} == {n: "passed" for n in m["pass"]}
    assert tests["tests.test_calc::test_outside"] == "passed"
    assert all(own[t] == "passed" for t in ("test_add_small_numbers", "test_add_negative_numbers",
                                            "test_mul_small_numbers"))


def test_a_draw_is_fresh_each_grading_and_never_reuses_a_test_name(tmp_path):
    drawn = set()
    for k, tokens in enumerate([("k1", "k2"), ("k3", "k4"), ("k5", "k6")]):
        m = _run(tmp_path / str(k), {"tests/test_calc.py": FIXED_TESTS}, ["tests.test_calc::test_add"],
                 ["tests.test_calc::test_mul"], tokens)
        names = m["fail"] + m["pass"]
        assert not {"test_add", "test_mul"} & set(names) and len(set(names)) == len(names)
        drawn.add(tuple(names))
    assert len(drawn) > 1


def test_a_module_the_script_cannot_read_gets_the_plain_canaries_at_its_end(tmp_path):
    broken = "def test_add(:\n    pass\n"
    m = _run(tmp_path, {"tests/test_calc.py": broken}, ["tests.test_calc::test_add"], [])
    source = (tmp_path / "tests" / "test_calc.py").read_text()
    assert source.startswith(broken) and len(m["fail"]) == 1 and len(m["pass"]) == 1 and m["originals"] == {}
    assert all(f"def {n}():" in source for n in m["fail"] + m["pass"])


@pytest.mark.parametrize("holdout", [True, False])
def test_check_sh_runs_the_script_and_hands_the_manifest_over_last(calc_dir, holdout):
    """The rendered check.sh (the held-out run and pretest.sh) runs the script as root before chown, and copies
    the manifest into the report after the tester's files (a canaries.json the tester left is replaced)."""
    from rules.tiers.swe import swebench

    inst = swebench.load_dataset(calc_dir / "data.jsonl")["lab__calc-1"]
    r = swebench.render(inst, calc_env(), str(calc_dir / "repos"))
    script = r.task_files["check.sh"][0].decode() if holdout else r.pretest
    assert json.loads(r.task_files["task.json"][0])["canaries"] == "manifest"
    assert "test_${canary_fail}" not in script and "<<'LAB_CANARIES_PY'" in script
    assert script.index("LAB_CANARIES_PY") < script.index("chown -R $tester")
    finish = script.split("finish() {", 1)[1].split("\n}\n", 1)[0]
    assert finish.index('head -c 50000000') < finish.index('cp "$manifest" "$report/canaries.json"')


@pytest.fixture
def calc_dir(tmp_path):
    make_calc(tmp_path)
    return tmp_path


POLYGLOT = next((Path(p) for p in ("/work/polyglot", "/work/scratch/polyglot")
                 if (Path(p) / "python" / "exercises" / "practice").is_dir()), None)


@pytest.mark.skipif(POLYGLOT is None, reason="no polyglot-benchmark checkout")
def test_on_real_unittest_modules_an_honest_solution_fails_only_the_failing_canaries(tmp_path):
    """The script on each Python exercise's real test module of the polyglot benchmark (unittest classes, the
    class's first test taken as the instance's FAIL_TO_PASS), with the exercise's reference as the honest fix:
    every real test passes, the failing canaries (mutants included) fail, the passing one passes: ``pass``."""
    import ast as _ast

    from rules.reports import parse_junit
    from rules.tiers.aider.exercises import discover, render as render_exercise

    checked, mutants, wrong = 0, 0, []
    for ex in discover(POLYGLOT, ["python"]):
        r = render_exercise(ex)
        tmp = tmp_path / ex.slug
        files = {rel[len("workspace/"):]: data for rel, (data, _m) in r.task_files.items() if rel.startswith("workspace/")}
        files.update({rel: data for rel, (data, _m) in r.answer_files.items()})
        for rel, data in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
        test = r.meta["test_files"][0]
        cls = next(c for c in _ast.parse((tmp / test).read_text()).body if isinstance(c, _ast.ClassDef))
        first = next(f.name for f in cls.body if isinstance(f, _ast.FunctionDef) and f.name.startswith("test"))
        (tmp / "task.json").write_text(json.dumps({"fail_to_pass": [f"{test[:-3].replace('/', '.')}.{cls.name}::{first}"],
                                                   "pass_to_pass": []}))
        subprocess.run([sys.executable, "-I", "-", "task.json", "kx1", "ky2", str(tmp / "canaries.json"), test],
                       input=_script(), text=True, cwd=tmp, check=True)
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", "/dev/null", "--rootdir",
                        str(tmp), f"--junitxml={tmp / 'out' / 'report.xml'}", test], cwd=tmp, capture_output=True)
        tests = parse_junit(tmp / "out").tests
        canaries = canaries_of({"canaries": "manifest"}, tmp, ("kx1", "ky2"))
        real = [i for i in tests if not canaries.owns(i)]
        verdict, evidence, _, _ = decide(tests, real, canaries, 1)
        checked, mutants = checked + 1, mutants + len(canaries.originals)
        if verdict != "pass" or not real:
            wrong.append((ex.slug, verdict, evidence[:2]))
    assert checked == 34 and mutants >= 34, (checked, mutants)
    assert wrong == []


DEFINES_A_CLASS = '''import unittest

from calc import add


class CalcTest(unittest.TestCase):
    def test_add_model(self):
        class Model:
            registered = True
        self.assertEqual(add(2, 3), 5)

    def test_add_plain(self):
        self.assertEqual(add(1, 1), 2)
'''


def test_a_test_that_defines_a_class_is_never_copied(tmp_path):
    """Defining a class twice may not be harmless (django registers a model's name once per app: the copy made
    the original test error in django__django-11999's gold run), so only the other test is copied."""
    for seed in ("kaaaa", "kcccc", "kdddd", "keeee"):
        m = _run(tmp_path / seed, {"tests/test_calc.py": DEFINES_A_CLASS}, ["tests.test_calc.CalcTest::test_add_model"],
                 ["tests.test_calc.CalcTest::test_add_plain"], tokens=(seed, "kbbbb"))
        assert set(m["originals"].values()) == {"test_add_plain"}, m


FEEDS_BOTH_SIDES = """import unittest

from calc import add


class CalcTest(unittest.TestCase):
    def test_add_listed(self):
        pairs = [(1, 2), (3, 4)]
        self.assertEqual([tuple(p) for p in pairs], pairs)

    def test_add_plain(self):
        expected = 5
        self.assertEqual(add(2, 3), expected)
"""


def test_a_name_that_feeds_the_computed_side_too_is_never_the_changed_value(tmp_path):
    """django__django-13401: ``choices`` built the field and was its expected value; a copy with it changed
    passed as the test did, with the gold patch, and the proof refused the instance for lab's own canary. Only a
    name the equality alone reads is changed; every copy made must fail with the fix."""
    for seed in ("kaaaa", "kcccc", "kdddd", "keeee"):
        tmp = tmp_path / seed
        m = _run(tmp, {"tests/test_calc.py": FEEDS_BOTH_SIDES}, ["tests.test_calc.CalcTest::test_add_listed"],
                 ["tests.test_calc.CalcTest::test_add_plain"], tokens=(seed, "kbbbb"))
        assert "test_add_listed" not in m["originals"].values(), m
        assert set(m["originals"].values()) == {"test_add_plain"}, m
        results = _pytest(tmp)
        for name in m["originals"]:
            assert [s for i, s in results.items() if i.endswith("::" + name)] == ["failed"], (name, results)
