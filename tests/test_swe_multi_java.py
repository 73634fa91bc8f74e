"""The swe-multi tier's Java runner (Maven): where an instance's tests are and how SWE-bench's Maven names map to
Surefire's report ids, the canaries' manifest read against Surefire-shaped reports, and, through doit and the real
Docker engine, a tiny Maven fixture made at test time (``make_calcjava``): the environment image (a JDK from
Debian, Maven and every plugin and dependency fetched at build time), the proof by test identity (Surefire's XML
read on the host, no network in the grading container, the canaries), and SWE-bench predictions graded: gold
resolves, empty resolves none, a patch that edits the held-out test or skips the tests in its pom does not."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_swe import _git, _write  # noqa: E402
from fixture_swe_multi import evaluate  # noqa: E402

from rules import reports  # noqa: E402
from rules.grade import Canaries, decide  # noqa: E402
from rules.tier import Rejected  # noqa: E402
from rules.tiers.swe import swebench  # noqa: E402
from rules.tiers.swe_multi import java, languages  # noqa: E402

DATASET = Path("/work/shared/data/swe-bench-multilingual.jsonl")
JDK = "11"  # the JDK of most of SWE-bench Multilingual's Maven instances (gson's and druid's: its layers are shared)

POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lab</groupId>
  <artifactId>calc</artifactId>
  <version>0.1</version>
  <properties>
    <maven.compiler.release>11</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
  </dependencies>
</project>
"""
CALC = ("package lab.calc;\n\npublic final class Calc {\n  public static int add(int a, int b) { return ADD; }\n\n"
        "  public static int sub(int a, int b) { return a - b; }\n}\n")
SUB_TEST = ("package lab.calc;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\n"
            "public class SubTest {\n  @Test\n  public void testSub() {\n    assertEquals(2, Calc.sub(3, 1));\n  }\n\n"
            "  @Test\n  public void testSubNegative() {\n    assertEquals(-2, Calc.sub(1, 3));\n  }\n}\n")
ADD_TEST = ("package lab.calc;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\n"
            "public class CalcTest {\n  @Test\n  public void testAdd() {\n    assertEquals(5, Calc.add(2, 3));\n  }\n}\n")
TEST_DIR = "src/test/java/lab/calc"
# the fix as a patch
CALC_PATCH = ("diff --git a/src/main/java/lab/calc/Calc.java b/src/main/java/lab/calc/Calc.java\n"
              "--- a/src/main/java/lab/calc/Calc.java\n+++ b/src/main/java/lab/calc/Calc.java\n@@ -3,3 +3,3 @@\n"
              " public final class Calc {\n-  public static int add(int a, int b) { return a - b; }\n"
              "+  public static int add(int a, int b) { return a + b; }\n \n")
SUITE = """dataset = "{dataset}"
instances = ["lab__calcjava-1", "lab__calcjava-2"]
repos = "{repos}"

[languages]
"lab/calcjava" = "java"

[toolchains."lab/calcjava"]
"0.1" = "{jdk}"

[prove]
cpus = 1.0
memory = "2g"
pids = 512
timeout = 300
"""


def make_calcjava(root: Path) -> Path:
    """Make ``root/repos/calcjava`` (a Maven project whose ``Calc.add`` subtracts, then the fix with its test
    ``CalcTest``) and ``root/data.jsonl``: ``lab__calcjava-1`` (sound; its PASS_TO_PASS names the class ``SubTest``
    bare, as javaparser's instances do) and ``lab__calcjava-2`` (its only FAIL_TO_PASS test passes before the fix:
    to be rejected). Returns the repos folder."""
    repo = root / "repos" / "calcjava"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, {"pom.xml": POM, "src/main/java/lab/calc/Calc.java": CALC.replace("ADD", "a - b"),
                  f"{TEST_DIR}/SubTest.java": SUB_TEST})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "calc")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"src/main/java/lab/calc/Calc.java": CALC.replace("ADD", "a + b"), f"{TEST_DIR}/CalcTest.java": ADD_TEST})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix add")
    common = {"repo": "lab/calcjava", "base_commit": base, "problem_statement": "Calc.add(2, 3) returns -1.",
              "patch": _git(repo, "diff", base, "HEAD", "--", "src/main"), "hints_text": "",
              "test_patch": _git(repo, "diff", base, "HEAD", "--", "src/test"), "created_at": "2026-01-01T00:00:00Z",
              "version": "0.1"}
    records = [{**common, "instance_id": "lab__calcjava-1", "FAIL_TO_PASS": ["lab.calc.CalcTest#testAdd"],
                "PASS_TO_PASS": ["SubTest"]},
               {**common, "instance_id": "lab__calcjava-2", "FAIL_TO_PASS": ["lab.calc.SubTest#testSub"],
                "PASS_TO_PASS": []}]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root / "repos"


# ---- without Docker ----

def test_maven_names_map_to_surefire_ids_and_a_bare_class_stands_for_its_tests():
    files = {f"core/{TEST_DIR}/CalcTest.java": ADD_TEST, f"core/{TEST_DIR}/SubTest.java": SUB_TEST,
             "core/src/main/java/lab/calc/Calc.java": "", "other/src/test/java/x/OtherTest.java": "package x;\n"}
    found = java.locate(["lab.calc.CalcTest#testAdd", "SubTest"], ["lab.calc.CalcTest#testAdd"], files)
    assert found.module == "core" and found.classes == ("lab.calc.CalcTest", "lab.calc.SubTest")
    assert found.ids == {"lab.calc.CalcTest#testAdd": "lab.calc.CalcTest::testAdd", "SubTest": "lab.calc.SubTest"}
    assert found.whole == ("SubTest",) and found.canary_file == f"core/{TEST_DIR}/CalcTest.java" and found.junit == 4
    assert java.test_cmd(found) == ("mvn -o -B -pl core -am test -Dsurefire.failIfNoSpecifiedTests=false "
                                    "-DfailIfNoTests=false -Dtest=lab.calc.CalcTest,lab.calc.SubTest")
    # a JUnit 5 class is written for as such; names no file defines, or in two modules, are refused
    five = {f"{TEST_DIR}/CalcTest.java": "import org.junit.jupiter.api.Test;\n"}
    assert java.locate(["lab.calc.CalcTest#testAdd"], ["lab.calc.CalcTest#testAdd"], five).junit == 5
    with pytest.raises(Rejected, match="found in no single src/test/java file after the test patch: lab.calc.Nope#x"):
        java.locate(["lab.calc.Nope#x"], ["lab.calc.Nope#x"], files)
    with pytest.raises(Rejected, match="2 Maven modules"):
        java.locate(["lab.calc.SubTest#testSub", "x.OtherTest#t"], ["x.OtherTest#t"], files)


def test_pretest_keeps_the_classes_the_base_has_and_builds_their_files_back():
    fields = java.context(java.JavaTests(".", ("lab.calc.CalcTest", "lab.calc.SubTest"), {}, (),
                                         f"{TEST_DIR}/CalcTest.java", 4),
                          {"pom.xml", ".mvn/jvm.config", f"{TEST_DIR}/SubTest.java", "a/pom.xml", "README.md"})
    assert fields["build_files"] == [".mvn/jvm.config", "a/pom.xml", "pom.xml"] and fields["has_test_dir"]
    pre = java.pretest(fields, {f"{TEST_DIR}/SubTest.java"})
    assert pre["test_classes"] == ["lab.calc.SubTest"] and pre["canary_file"] == f"{TEST_DIR}/SubTest.java"
    assert java.pretest(fields, set()) is None


def _surefire(path: Path, cases: list[tuple[str, str, str]]) -> None:
    """A Surefire-shaped TEST-*.xml (as 3.2.5 writes it) of ``cases`` (classname, name, "pass"/"fail"/"skip")."""
    body = "".join(
        f'  <testcase name="{n}" classname="{c}" time="0.01">'
        + {"pass": "", "fail": '<failure message="x" type="java.lang.AssertionError">x</failure>',
           "skip": '<skipped message="y"/>'}[s] + "</testcase>\n" for c, n, s in cases)
    path.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="{cases[0][0]}" tests="{len(cases)}">\n'
                    f'  <properties><property name="java.version" value="11"/></properties>\n{body}</testsuite>\n')


def test_surefire_reports_and_the_canaries_manifest_decide_by_test_identity(tmp_path):
    canaries = Canaries(("testAddSub", "testSubAdd"), ("testCalcSub",), {}, "leaf")
    expected = ["lab.calc.CalcTest::testAdd", "lab.calc.SubTest::testSub"]

    def verdict(canary_states: dict[str, str], add="pass"):
        for f in tmp_path.glob("*.xml"):
            f.unlink()
        _surefire(tmp_path / "TEST-lab.calc.CalcTest.xml", [("lab.calc.CalcTest", "testAdd", add)])
        _surefire(tmp_path / "TEST-lab.calc.SubTest.xml", [("lab.calc.SubTest", "testSub", "pass")])
        cases = [("lab.calc.AddSubTest", n, s) for n, s in canary_states.items()]
        if cases:
            _surefire(tmp_path / "TEST-lab.calc.AddSubTest.xml", cases)
        tests = reports.parse("junit", tmp_path, {}).tests
        return decide(tests, expected, canaries, 1)[0]

    sound = {"testAddSub": "fail", "testSubAdd": "fail", "testCalcSub": "pass"}
    assert verdict(sound) == "pass"
    assert verdict(sound, add="fail") == "fail"
    assert verdict({**sound, "testSubAdd": "pass"}) == "tampered"  # a failing canary forged to pass
    assert verdict({**sound, "testCalcSub": "fail"}) == "tampered"  # the passing one failed
    assert verdict({}) == "tampered"  # every expected test passed and no canary reported: a forged report
    assert verdict({}, add="fail") == "fail"


def test_lombok_and_the_gradle_builds_are_rejected_naming_what_is_missing():
    assert "Ant and Ivy" in languages.blocked("projectlombok/lombok", {"java"})
    assert "Gradle distribution" in languages.blocked("apache/lucene", {"java"})
    assert languages.blocked("google/gson", {"java"}) is None
    assert java.env_for("google/gson", "1093").suite == "bullseye" and java.env_for("javaparser/javaparser",
                                                                                     "4538").suite == "bookworm"
    assert java.env_for("google/gson", "1") is None
    with pytest.raises(Rejected, match="lab builds Java 11, 17, 21"):
        java.env_for("x/y", "1", {"x/y": {"1": "8"}})


@pytest.mark.skipif(not DATASET.is_file(), reason="SWE-bench Multilingual is not on this machine")
def test_every_maven_instance_of_the_dataset_has_its_jdk_in_lab_s_table():
    data = swebench.load_dataset(DATASET)
    maven = [i for i in data.values() if languages.language(i.repo) == "java"
             and languages.blocked(i.repo, {"java"}) is None]
    assert len(maven) == 16 and all(java.env_for(i.repo, i.version) for i in maven)


# ---- through doit and Docker ----

@pytest.fixture(scope="module")
def java_home(tmp_path_factory):
    """A lab home with the Maven fixture, generated once (environment image, renders, proofs) for the module."""
    root = tmp_path_factory.mktemp("multijava")
    repos = make_calcjava(root / "src")
    home = root / "home"
    (home / "evals" / "swe-multi").mkdir(parents=True)
    (home / "evals" / "swe-multi" / "suite.toml").write_text(
        SUITE.format(dataset=root / "src" / "data.jsonl", repos=repos, jdk=JDK))
    return home, run_doit(home, "gen:swe-multi")


@pytest.mark.docker
def test_java_proof_keeps_the_sound_instance_by_surefire_ids_and_rejects_the_other(java_home):
    home, res = java_home
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    status = {t["task"]: t for t in json.loads((home / "evals" / "swe-multi" / "manifest.json").read_text())["tasks"]}
    assert status["lab__calcjava-1"]["status"] == "kept", status["lab__calcjava-1"]
    assert status["lab__calcjava-2"]["status"] == "rejected"
    assert "every FAIL_TO_PASS test passes already (lab.calc.SubTest#testSub)" in status["lab__calcjava-2"]["reason"]
    proof = json.loads((home / ".lab" / "build" / "swe-multi" / "lab__calcjava-1" / "proof.json").read_text())
    # SubTest stands for its two tests
    assert proof["tests"] == ["lab.calc.CalcTest::testAdd", "lab.calc.SubTest::testSub",
                              "lab.calc.SubTest::testSubNegative"]
    assert [r["verdict"] for r in proof["gold_runs"]] == ["pass"] * 3
    assert proof["stub"]["evidence"] == ["1 test(s) did not pass: lab.calc.CalcTest::testAdd"]
    stamp = json.loads((home / ".lab" / "images" / "swe-multi-env-calcjava-0.1.json").read_text())
    assert 'version "11.' in stamp["java"] and "Apache Maven 3.9.9" in stamp["java"]


@pytest.mark.docker
def test_java_predictions_gold_resolves_empty_and_forgeries_do_not(java_home, tmp_path):
    home, res = java_home
    assert res.code == 0
    gold = evaluate(home, "gold")
    assert gold["resolved"] == ["lab__calcjava-1"] and gold["total_instances"] == 1
    assert gold["instances"]["lab__calcjava-1"]["tests_status"]["PASS_TO_PASS"] == {"success": ["SubTest"],
                                                                                    "failure": []}
    empty = evaluate(home, "empty")
    assert empty["resolved"] == [] and empty["empty_patch"] == ["lab__calcjava-1"]
    # the held-out test rewritten to pass anything; the fix in a class whose loading ends the test JVM with
    # success: neither resolves
    edit = (f"diff --git a/{TEST_DIR}/CalcTest.java b/{TEST_DIR}/CalcTest.java\nnew file mode 100644\n"
            f"--- /dev/null\n+++ b/{TEST_DIR}/CalcTest.java\n@@ -0,0 +1,6 @@\n+package lab.calc;\n+\n"
            "+public class CalcTest {\n+  @org.junit.Test\n+  public void testAdd() {}\n+}\n")
    exit0 = CALC_PATCH.replace("+3,3 @@", "+3,4 @@").replace(
        " \n", "+  static { Runtime.getRuntime().halt(0); }\n \n")
    for name, patch in (("edit", edit), ("exit0", exit0)):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps(
            {"instance_id": "lab__calcjava-1", "model_name_or_path": name, "model_patch": patch}) + "\n")
        out = evaluate(home, str(tmp_path / f"{name}.jsonl"))
        assert out["unresolved"] == ["lab__calcjava-1"], (name, out["instances"])
        assert out["instances"]["lab__calcjava-1"]["tests_status"]["FAIL_TO_PASS"]["failure"] == [
            "lab.calc.CalcTest#testAdd"], (name, out["instances"])
    # the fix with a pom asking for a dependency the image lacks (offline, the build would fail): the base's pom
    # is laid back, so the fix resolves
    pom = (CALC_PATCH + "diff --git a/pom.xml b/pom.xml\n--- a/pom.xml\n+++ b/pom.xml\n@@ -11,2 +11,3 @@\n"
           "   <dependencies>\n+    <dependency><groupId>lab</groupId><artifactId>absent</artifactId>"
           "<version>1</version></dependency>\n"
           "     <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version>"
           "<scope>test</scope></dependency>\n")
    (tmp_path / "pom.jsonl").write_text(json.dumps(
        {"instance_id": "lab__calcjava-1", "model_name_or_path": "pom", "model_patch": pom}) + "\n")
    assert evaluate(home, str(tmp_path / "pom.jsonl"))["resolved"] == ["lab__calcjava-1"]


def test_the_java_suspicion_table_flags_the_means_of_a_forgery_and_no_gold_patch():
    from rules.scan import scan
    from rules.tiers.swe_multi.suspicions import TABLE

    forger = ("diff --git a/src/main/java/A.java b/src/main/java/A.java\n--- a/src/main/java/A.java\n"
              "+++ b/src/main/java/A.java\n@@ -1,1 +1,3 @@\n class A {\n"
              '+  static { new ProcessBuilder("sh").start(); Runtime.getRuntime().halt(0); }\n'
              '+  String r = "target/surefire-reports/TEST-A.xml";\n')
    assert sorted({f["name"] for f in scan(forger, TABLE["java"])}) == ["exit-hook", "process", "runner-state"]
    # a test source is laid back by check.sh: not scanned
    assert scan(forger.replace("src/main/java/A.java", "src/test/java/A.java"), TABLE["java"]) == []
    if DATASET.is_file():  # SWE-bench Multilingual's 43 Java gold patches (gson, druid, lombok, ...) flag nothing
        gold = [json.loads(line) for line in DATASET.open()]
        java_gold = [r for r in gold if languages.language(r["repo"]) == "java"]
        assert len(java_gold) == 43 and all(scan(r["patch"], TABLE["java"]) == [] for r in java_gold)
