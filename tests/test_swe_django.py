"""The swe tier's django runner (rules/tiers/swe/djangotests.py, templates/swe/django_run.py.j2) on repositories
built at test time (tests/fixture_django.py; never upstream code): SWE-bench's django test names mapped to the
recorder's report ids, the labels and command, the recorder's JUnit report of every unittest outcome, and in the
real engine a fixture instance proved with it and reports forged by the graded code caught."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixture_django import F2P, FIXED_SOURCE, RUNTESTS, make_shop, shop_env
from fixture_swe import lay_answers, lay_rendered
from rules import reports
from rules.render import render as render_template
from rules.tiers.swe import djangotests, swebench

docker = pytest.mark.docker
FIRST = "tests.shop_tests.test_total.TotalTests"


# ---- names, labels and the command (no Docker) ----

@pytest.mark.parametrize("name, report_id", [
    ("test_help_text (auth_tests.test_validators.UserAttributeSimilarityValidatorTest)",
     "tests.auth_tests.test_validators.UserAttributeSimilarityValidatorTest::test_help_text"),
    # Python 3.11's unittest adds the method to the class (django 5.0's instances)
    ("test_help_text (auth_tests.test_validators.UserAttributeSimilarityValidatorTest.test_help_text)",
     "tests.auth_tests.test_validators.UserAttributeSimilarityValidatorTest::test_help_text"),
    ("test_x (gis_tests.geoapp.tests.GeoModelTest)", "tests.gis_tests.geoapp.tests.GeoModelTest::test_x"),
    # a test with a docstring is named by its first line: it stands for the tests the gold run gave it
    ("Updating the user email address invalidates the token.",
     "lab.description::Updating the user email address invalidates the token."),
    ("test_x (not a class)", "lab.description::test_x (not a class)"),
])
def test_swe_bench_django_names_map_to_the_recorders_ids(name, report_id):
    assert djangotests.report_id(name) == report_id
    assert djangotests.stands_for(name) == report_id.startswith("lab.description::")


def test_labels_are_swe_bench_directives_and_data_files_are_left_out(tmp_path):
    repos, record = make_shop(tmp_path)
    inst = swebench._instance(record)
    assert djangotests.run_files(inst, {}) == ["tests/shop_tests/test_total.py"]  # prices.json is data
    assert djangotests.labels(["tests/auth_tests/test_validators.py", "tests/template_tests/a/b.html"]) == [
        "auth_tests.test_validators", "template_tests.a.b.html"]
    assert djangotests.test_cmd(["tests/shop_tests/test_total.py"], None, "/work") == (
        "PYTHONPATH=/work python tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 "
        "shop_tests.test_total")


def test_a_django_task_runs_swe_benchs_command_and_names_its_tests_by_the_recorders_ids(tmp_path):
    repos, record = make_shop(tmp_path)
    rendered = swebench.render(swebench._instance(record), shop_env(), str(repos))
    meta = rendered.meta
    assert meta["fail_to_pass"] == [f"{FIRST}::test_two_prices", "lab.description::The first price counts."]
    assert meta["pass_to_pass"] == [f"{FIRST}::test_empty", "lab.description::Totals are whole cents."]
    assert meta["truncated"] == ["lab.description::The first price counts.", "lab.description::Totals are whole cents."]
    assert meta["test_names"][f"{FIRST}::test_two_prices"] == F2P[0]
    check = rendered.task_files["check.sh"][0].decode()
    command = (f"{swebench.PYTHON} /tmp/lab-runner/django_run.py \"$out/report.xml\" \\\n  tests/runtests.py "
               "--verbosity 2 --settings=test_sqlite --parallel 1 shop_tests.test_total 2>&1")
    assert command in check and "-m pytest" not in check
    assert render_template("swe/django_run.py.j2") in check  # the recorder, written by root from check.sh itself
    # the agents' command is the same runner on the pre-existing module, at base
    assert meta["test_cmd"].endswith(f"{djangotests.COMMAND} shop_tests.test_total")
    assert "shop_tests.test_total" in rendered.task_files[swebench.PRETEST][0].decode()


# ---- the recorder, run by the host's Python on a tree made here ----

OUTCOMES = '''import io
import unittest


class Outcomes(unittest.TestCase):
    def test_pass(self):
        pass

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_error(self):
        raise RuntimeError("boom")

    @unittest.skip("not here")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_xpass(self):
        pass

    def test_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)

    def test_subtest_skipped(self):
        with self.subTest(i=0):
            self.skipTest("part")

    def test_described(self):
        """First line of the docstring.

        More lines.
        """

    def test_inner_run(self):
        class Inner(unittest.TestCase):
            def test_inner(self):
                self.fail("a suite of the test's own")

        unittest.TextTestRunner(stream=io.StringIO()).run(unittest.defaultTestLoader.loadTestsFromTestCase(Inner))


class BrokenSetUp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no class")

    def test_never(self):
        pass
'''


def test_the_recorder_reports_every_unittest_outcome_by_id(tmp_path):
    """Each outcome unittest reports becomes the status of the test's id, described tests get their description
    id too, a class whose set-up failed is a failed ``lab.errors`` entry, and a suite a test runs of its own adds
    nothing; runtests.py's exit status is kept."""
    tree = tmp_path / "tree"
    for rel, text in {"tests/runtests.py": RUNTESTS, "tests/cases/__init__.py": "",
                      "tests/cases/test_all.py": OUTCOMES}.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    (tmp_path / "run.py").write_text(render_template("swe/django_run.py.j2"))
    (tmp_path / "out").mkdir()
    proc = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path / "out" / "report.xml"),
                           "tests/runtests.py", "--verbosity", "2", "--settings=test_sqlite", "--parallel", "1",
                           "cases.test_all"], cwd=tree, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "test_fail (cases.test_all.Outcomes" in proc.stderr  # the runner's own output, unchanged
    tests = reports.parse_junit(tmp_path / "out").tests
    o = "tests.cases.test_all.Outcomes::"
    errors = [i for i in tests if i.startswith("lab.errors::")]
    assert {i: s for i, s in tests.items() if not i.startswith("lab.errors::")} == {
        o + "test_pass": "passed", o + "test_fail": "failed", o + "test_error": "failed", o + "test_skip": "skipped",
        o + "test_xfail": "skipped", o + "test_xpass": "failed", o + "test_subtests": "failed",
        o + "test_subtest_skipped": "skipped", o + "test_described": "passed", o + "test_inner_run": "passed",
        f"lab.description::First line of the docstring. ({o}test_described)": "passed"}
    assert len(errors) == 1 and errors[0].startswith("lab.errors::setUpClass") and tests[errors[0]] == "failed"


def test_a_runtests_that_cannot_start_leaves_an_empty_report_and_its_status(tmp_path):
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "runtests.py").write_text("import not_installed_anywhere\n")
    (tmp_path / "run.py").write_text(render_template("swe/django_run.py.j2"))
    proc = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path / "report.xml"),
                           "tests/runtests.py"], cwd=tree, capture_output=True, text=True)
    assert proc.returncode == 1 and "not_installed_anywhere" in proc.stderr
    assert reports.parse_junit(tmp_path).tests == {}


# ---- in the real engine: a fixture instance proved, and forged reports ----

@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """The fixture instance rendered into a task folder, its environment image built (Python 3.11, nothing
    installed), and its proof."""
    from rules.config import Limits

    root = tmp_path_factory.mktemp("shop")
    repos, record = make_shop(root / "src")
    env = shop_env()
    rendered = swebench.render(swebench._instance(record), env, str(repos))
    work = lay_rendered(rendered, root)
    answers = lay_answers(rendered, root)
    swebench.build_env(env, repos / "shop", record["base_commit"], log=open("/dev/null", "w"))
    limits = Limits(cpus=1.0, memory=2 * 1024**3, pids=512, timeout=300)
    proof = swebench.prove(root / "task", answers, image=env.tag, limits=limits, meta=rendered.meta)
    return root / "task", work, env, limits, proof


@docker
def test_a_fixture_instance_is_proved_with_djangos_runner(shop):
    task, work, env, limits, proof = shop
    assert proof["status"] == "kept", proof
    assert proof["tests"] == sorted([
        f"{FIRST}::test_empty", f"{FIRST}::test_two_prices",
        f"lab.description::The first price counts. ({FIRST}::test_first)",
        f"lab.description::Totals are whole cents. ({FIRST}::test_whole)"])
    assert proof["before"] == {"fail_to_pass_passed": [], "pass_to_pass_failed": [], "completed": True}
    assert proof["stub"]["verdict"] == "fail" and "2 test(s) did not pass" in proof["stub"]["evidence"][0]


FORGER = '''import atexit
import re


def total(prices):
    return sum(prices[1:])


def _forge():
    # a report of its own over the recorder's, after it: every test it can see (or only the instance's) passed
    source = open("/work/tests/shop_tests/test_total.py").read()
    names = {every}
    cls = "tests.shop_tests.test_total.TotalTests"
    cases = ['<testcase classname="%s" name="%s"/>' % (cls, n) for n in names]
    cases += ['<testcase classname="lab.description" name="%s (%s::%s)"/>' % (d, cls, n)
              for d, n in (("The first price counts.", "test_first"), ("Totals are whole cents.", "test_whole"))]
    with open("/tmp/lab-out/report.xml", "w") as f:
        f.write("<testsuite>%s</testsuite>" % "".join(cases))


atexit.register(_forge)
'''


@docker
@pytest.mark.parametrize("every", ['re.findall(r"def (test\\w*)", source)',
                                   '["test_empty", "test_two_prices", "test_first", "test_whole"]'])
def test_a_report_the_graded_code_forges_never_passes(shop, tmp_path, every):
    """The graded package writes the report itself when the run ends (after lab's recorder): naming every test of
    the module passed, the failing canaries with them, or only the instance's tests, the canaries missing. Either
    is ``tampered``; the honest fix passes in the same way of grading."""
    import shutil

    from rules.grade import grade

    task, work, env, limits, proof = shop
    forged = tmp_path / "forged"
    shutil.copytree(work, forged, symlinks=True)
    (forged / "shop" / "__init__.py").write_text(FORGER.replace("{every}", every))
    g = grade(task, forged, image=env.tag, limits=limits, expected=proof["tests"])
    assert g.verdict == "tampered" and not g.passed, (g.verdict, g.evidence, g.output[-2000:])
    honest = tmp_path / "honest"
    shutil.copytree(work, honest, symlinks=True)
    (honest / "shop" / "__init__.py").write_text(FIXED_SOURCE)
    h = grade(task, honest, image=env.tag, limits=limits, expected=proof["tests"])
    assert h.verdict == "pass", (h.evidence, h.output[-2000:])
