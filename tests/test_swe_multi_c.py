"""The swe-multi tier's C/C++ runner (CMake + googletest, as fmt's instances are), on a fixture project made at test
time: ``lab/calccpp``, a library whose ``add`` subtracts, a fix that makes it add, and a test patch adding
``calc_test.add`` (googletest from Debian's libgtest-dev in the image: no upstream code here). Without Docker:
googletest's XML report read by test identity, the googletest canary writer, the verdict with a forged or missing
canary, the render. Through doit and the real Docker engine: the environment image, the proof, and predictions
graded (gold resolves; empty, an edit of the held-out test and a library that ends the test binary early do not)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_swe import _git, _write, lay_rendered  # noqa: E402
from fixture_swe_multi import evaluate  # noqa: E402

from rules import reports  # noqa: E402
from rules.grade import Canaries, decide  # noqa: E402
from rules.tier import Rejected  # noqa: E402
from rules.tiers.swe import swebench  # noqa: E402
from rules.tiers.swe_multi import RUNNERS, c, languages  # noqa: E402
from rules.scan import scan  # noqa: E402
from rules.tiers.swe_multi.render import render  # noqa: E402
from rules.tiers.swe_multi.suspicions import TABLE as SUSPICIONS  # noqa: E402

WRITER = Path(__file__).resolve().parents[1] / "templates" / "swe_multi" / "c" / "gtest_canaries.py"
sys.path.insert(0, str(WRITER.parent))
import gtest_canaries  # noqa: E402

TARGET = "calc-test"
BASE = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(calc CXX)\n"
                      "add_library(calc src/calc.cc)\ntarget_include_directories(calc PUBLIC include)\n"
                      "enable_testing()\nadd_subdirectory(test)\n",
    "include/calc.h": "#pragma once\nint add(int a, int b);\nint sub(int a, int b);\n",
    "src/calc.cc": '#include "calc.h"\nint add(int a, int b) { return a - b; }\nint sub(int a, int b) { return a - b; }\n',
    "test/CMakeLists.txt": "find_package(GTest REQUIRED)\nadd_executable(calc-test calc-test.cc)\n"
                           "target_link_libraries(calc-test calc GTest::gtest_main)\n"
                           "add_test(NAME calc-test COMMAND calc-test)\n",
    "test/calc-test.cc": '#include <gtest/gtest.h>\n#include <string>\n#include "calc.h"\n\n'
                         "TEST(calc_test, sub_small) {\n  EXPECT_EQ(sub(3, 1), 2);\n}\n\n"
                         "#if 0\nTEST(calc_test, never_built) {\n  EXPECT_EQ(1, 1);\n}\n#endif\n\n"
                         "TEST(calc_test, sub_negative) {\n  EXPECT_EQ(sub(1, 3), -2);\n}\n",
}
FIXED = '#include "calc.h"\nint add(int a, int b) { return a + b; }\nint sub(int a, int b) { return a - b; }\n'
ADD_TEST = "\nTEST(calc_test, add) {\n  EXPECT_EQ(add(2, 3), 5);\n}\n"
SUITE = """dataset = "{root}/data.jsonl"
instances = ["lab__calccpp-1"]
repos = "{root}/repos"

[languages]
"lab/calccpp" = "c"

[toolchains."lab/calccpp"]
"0.1" = "{target}"

[prove]
cpus = 2.0
memory = "2g"
pids = 512
timeout = 300
"""


def make_calccpp(root: Path) -> dict:
    """Make ``root/repos/calccpp`` (base commit, then the fix) and ``root/data.jsonl`` with instance
    ``lab__calccpp-1``; returns its record."""
    repo = root / "repos" / "calccpp"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, BASE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "calc")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"src/calc.cc": FIXED, "test/calc-test.cc": BASE["test/calc-test.cc"] + ADD_TEST})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix add")
    record = {"repo": "lab/calccpp", "instance_id": "lab__calccpp-1", "base_commit": base,
              "patch": _git(repo, "diff", base, "HEAD", "--", "src/calc.cc"),
              "test_patch": _git(repo, "diff", base, "HEAD", "--", "test/calc-test.cc"),
              "problem_statement": "add(2, 3) returns -1; it should return 5.", "hints_text": "",
              "created_at": "2026-01-01T00:00:00Z", "version": "0.1",
              "FAIL_TO_PASS": ["calc_test.add"], "PASS_TO_PASS": ["calc_test.sub_small", "calc_test.sub_negative"]}
    (root / "data.jsonl").write_text(json.dumps(record) + "\n")
    return record


GTEST_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" failures="1" disabled="1" errors="0" time="0.01" name="AllTests">
  <testsuite name="format_test" tests="3" failures="1" disabled="1" skipped="0" errors="0" time="0.001">
    <testcase name="format_nan" file="test/format-test.cc" line="12" status="run" result="completed" time="0"
      classname="format_test" />
    <testcase name="width" file="test/format-test.cc" line="40" status="run" result="completed" time="0"
      classname="format_test">
      <failure message="Expected equality" type=""><![CDATA[test/format-test.cc:41
Expected equality of these values:]]></failure>
    </testcase>
    <testcase name="DISABLED_slow" status="notrun" result="suppressed" time="0" classname="format_test" />
  </testsuite>
  <testsuite name="is_string_test/0" tests="1" failures="0" disabled="0" skipped="1" errors="0" time="0">
    <testcase name="is_string" type_param="char" status="run" result="skipped" time="0"
      classname="is_string_test/0"><skipped message="" /></testcase>
  </testsuite>
  <testsuite name="std_test" tests="1" failures="0" disabled="0" errors="0" time="0">
    <testcase name="path" status="run" result="completed" time="0" classname="std_test" />
  </testsuite>
</testsuites>
"""


def test_googletest_xml_is_read_by_the_names_googletest_prints(tmp_path):
    (tmp_path / "gtest").mkdir()
    (tmp_path / "gtest" / "report.xml").write_text(GTEST_XML)
    parsed = reports.parse("gtest-xml", tmp_path)
    assert parsed.tests == {"format_test.format_nan": "passed", "format_test.width": "failed",
                            "format_test.DISABLED_slow": "skipped", "is_string_test/0.is_string": "skipped",
                            "std_test.path": "passed"}, parsed
    assert parsed.notes == []
    (tmp_path / "gtest" / "report.xml").write_text("<testsuites><testsuite>")  # a binary killed while writing
    assert reports.parse("gtest-xml", tmp_path).tests == {}
    assert "not a readable XML report" in reports.parse("gtest-xml", tmp_path).notes[0]
    empty = tmp_path / "none"
    empty.mkdir()
    assert "no googletest XML report" in reports.parse("gtest-xml", empty).notes[0]


def test_the_canaries_are_tests_of_the_files_own_suites_where_they_surely_compile(tmp_path):
    source = BASE["test/calc-test.cc"] + "\nclass fixture : public ::testing::Test {};\nTEST_F(fixture, f) {}\n"
    text, manifest = gtest_canaries.with_canaries(source, "tok1", "tok2")
    assert manifest["match"] == "id" and len(manifest["fail"]) == 4 and len(manifest["pass"]) == 1
    # every canary a TEST of calc_test (never of the TEST_F suite: mixing them is googletest's run-time error),
    # named from the file's words, each once in the file, none inside the #if 0 block
    for test_id in manifest["fail"] + manifest["pass"]:
        suite, name = test_id.split(".")
        assert suite == "calc_test" and set(name.split("_")) <= {"sub", "small", "negative", "never", "built", "f"}
        assert text.count(f"TEST(calc_test, {name})") == 1
    block = text[text.index("#if 0"):text.index("#endif")]
    assert "TEST(calc_test, never_built)" in block and block.count("TEST(") == 1
    assert text.replace("\n", "").count("ADD_FAILURE()") == 1 and "ASSERT_EQ" in text
    # the draw is the tokens': the same tokens, the same canaries; others, others
    assert gtest_canaries.with_canaries(source, "tok1", "tok2") == (text, manifest)
    assert gtest_canaries.with_canaries(source, "tok3", "tok4")[1] != manifest
    # the writer as check.sh runs it: the file rewritten, the manifest root's alone
    f, m = tmp_path / "calc-test.cc", tmp_path / "canaries.json"
    f.write_text(source)
    subprocess.run([sys.executable, "-I", str(WRITER), str(f), "tok1", "tok2", str(m)], check=True)
    assert f.read_text() == text and json.loads(m.read_text()) == manifest and m.stat().st_mode & 0o777 == 0o600


def test_a_forged_or_missing_googletest_canary_makes_the_grading_fail():
    canaries = Canaries(("calc_test.sub_built",), ("calc_test.small_never",), {}, "id")
    honest = {"calc_test.add": "passed", "calc_test.sub_built": "failed", "calc_test.small_never": "passed"}
    assert decide(honest, ["calc_test.add"], canaries, 1)[0] == "pass"
    forged = {**honest, "calc_test.sub_built": "passed"}  # a binary that reports every test passed
    assert decide(forged, ["calc_test.add"], canaries, 0)[0] == "tampered"
    hidden = {"calc_test.add": "passed"}  # a report with the canaries left out
    verdict, evidence, _, _ = decide(hidden, ["calc_test.add"], canaries, 0)
    assert verdict == "tampered" and "2 of the 2 canary tests missing" in evidence[0]


def test_fmt_is_a_candidate_and_the_other_c_repositories_say_what_they_lack():
    acc = languages.accounting([type("I", (), {"id": f"{r}-1", "repo": r})() for r in languages.LANGUAGES
                                if languages.LANGUAGES[r] == "c"], RUNNERS)
    assert acc["candidates"] == ["fmtlib/fmt-1"]
    assert "automake" in acc["rejected"]["jqlang/jq-1"] and "Tcl" in acc["rejected"]["redis/redis-1"]
    assert c.env_for("fmtlib/fmt", "3729").toolchain == "std-test" and c.env_for("fmtlib/fmt", "9999") is None
    with pytest.raises(Rejected, match="not a target name"):
        c.env_for("lab/x", "1", {"lab/x": {"1": "a b; rm"}})


@pytest.mark.skipif(not Path("/work/shared/data/swe-bench-multilingual.jsonl").is_file(),
                    reason="SWE-bench Multilingual is not on this machine")
def test_every_fmt_instance_of_the_real_dataset_has_its_target_and_no_gold_patch_is_flagged():
    data = swebench.load_dataset(Path("/work/shared/data/swe-bench-multilingual.jsonl"))
    acc = languages.accounting(data.values(), RUNNERS)
    assert acc["by_language"]["c"] == {"total": 42, "candidates": 11}
    fmt = [i for i in data.values() if i.repo == "fmtlib/fmt"]
    assert len(fmt) == 11 and all(c.env_for(i.repo, i.version) for i in fmt)
    assert [i.id for i in fmt if scan(i.patch, SUSPICIONS["c"])] == []


def test_the_c_suspicions_flag_a_library_that_ends_the_binary_or_writes_the_report():
    exit0 = _diff("src/calc.cc", BASE["src/calc.cc"], BASE["src/calc.cc"] + "static int q = (std::_Exit(0), 0);\n")
    assert {f["name"] for f in scan(exit0, SUSPICIONS["c"])} == {"runner-state"}
    forged = {f["name"] for f in scan(_diff("src/calc.cc", BASE["src/calc.cc"], FIXED + FORGE), SUSPICIONS["c"])}
    assert {"files", "runner-state"} <= forged
    # the test folder is laid back at grading: a test's own googletest calls are no flag
    assert scan(_diff("test/calc-test.cc", "", "TEST(a, b) { testing::Test::HasFailure(); }\n"), SUSPICIONS["c"]) == []


def test_fmt_names_are_found_by_their_test_macros_typed_ones_by_their_suite():
    files = {"test/format-test.cc": "TEST(format_test, width) {}\nTYPED_TEST(is_string_test, is_string) {}\n",
             "test/std-test.cc": "TEST(std_test, path) {}\n"}
    found = c.locate(["std_test.path", "is_string_test/0.is_string"], files)
    assert found.canary_file == "test/std-test.cc" and "format_test.width" in found.defined
    assert c.locate(["is_string_test/1.is_string"], files).canary_file == "test/format-test.cc"
    with pytest.raises(Rejected, match="std_test.nowhere"):
        c.locate(["std_test.nowhere"], files)


def test_the_fixture_renders_a_task_that_lays_back_the_test_folder_and_runs_the_images_target(tmp_path):
    record = make_calccpp(tmp_path / "src")
    env = c.env_for("lab/calccpp", "0.1", {"lab/calccpp": {"0.1": TARGET}})
    out = render(swebench._instance(record), env, c.runner(), str(tmp_path / "src" / "repos"))
    meta = json.loads(out.task_files["task.json"][0])
    assert meta["report"] == "gtest-xml" and meta["language"] == "c" and meta["canaries"] == "manifest"
    assert meta["private_task"] is True and meta["fail_to_pass"] == ["calc_test.add"]
    check = out.task_files["check.sh"][0].decode()
    assert subprocess.run(["bash", "-n"], input=check, text=True).returncode == 0
    assert "rm -rf test\ntar -xf \"$task/workspace.tar\" test\n" in check
    assert "python3 -I /opt/lab/gtest_canaries.py test/calc-test.cc" in check
    assert re.search(r'GTEST_OUTPUT="xml:\$2/gtest/report.xml" ctest', check)
    pre = out.task_files[swebench.PRETEST][0].decode()
    assert "holdout/test.patch" not in pre and "gtest_canaries.py test/calc-test.cc" in pre
    tree = lay_rendered(out, tmp_path / "laid")
    assert "calc_test, add" not in (tree / "test" / "calc-test.cc").read_text()


# ---- through doit and Docker ----

@pytest.fixture(scope="module")
def c_home(tmp_path_factory):
    """A lab home with the C/C++ fixture, generated once (environment image, render, proof) for the module."""
    root = tmp_path_factory.mktemp("multi-c")
    make_calccpp(root / "src")
    home = root / "home"
    (home / "evals" / "swe-multi").mkdir(parents=True)
    (home / "evals" / "swe-multi" / "suite.toml").write_text(SUITE.format(root=root / "src", target=TARGET))
    return home, run_doit(home, "gen:swe-multi")


@pytest.mark.docker
def test_c_proof_keeps_the_fixture_by_googletests_names(c_home):
    home, res = c_home
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    manifest = json.loads((home / "evals" / "swe-multi" / "manifest.json").read_text())
    status = {t["task"]: t for t in manifest["tasks"]}
    assert status["lab__calccpp-1"]["status"] == "kept", status
    proof = json.loads((home / ".lab" / "build" / "swe-multi" / "lab__calccpp-1" / "proof.json").read_text())
    assert proof["tests"] == ["calc_test.add", "calc_test.sub_negative", "calc_test.sub_small"]
    assert [r["verdict"] for r in proof["gold_runs"]] == ["pass"] * 3
    assert proof["stub"]["evidence"] == ["1 test(s) did not pass: calc_test.add"]
    stamp = json.loads((home / ".lab" / "images" / "swe-multi-env-calccpp-0.1.json").read_text())
    assert stamp["cc"].startswith("g++ ")


@pytest.mark.docker
def test_c_predictions_gold_resolves_empty_and_forgeries_do_not(c_home, tmp_path):
    home, res = c_home
    assert res.code == 0
    gold = evaluate(home, "gold")
    assert gold["resolved"] == ["lab__calccpp-1"], gold["instances"]
    empty = evaluate(home, "empty")
    assert empty["resolved"] == [] and empty["empty_patch"] == ["lab__calccpp-1"]
    # the held-out test rewritten to pass anything (the test folder is laid back), a library whose static
    # initializer ends the test binary with success before any test ran (no report), and one that reads the test
    # file and writes googletest's report itself, every TEST there passed (the failing canaries among them):
    # none resolves
    edit = _diff("test/calc-test.cc", BASE["test/calc-test.cc"],
                 BASE["test/calc-test.cc"] + "\nTEST(calc_test, add) {}\n")
    exit0 = _diff("src/calc.cc", BASE["src/calc.cc"],
                  BASE["src/calc.cc"] + "#include <cstdlib>\nstatic int quit = (std::_Exit(0), 0);\n")
    forge = _diff("src/calc.cc", BASE["src/calc.cc"], FIXED + FORGE)
    for name, patch, verdict in (("edit", edit, "failure"), ("exit0", exit0, "failure"), ("forge", forge, "success")):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps(
            {"instance_id": "lab__calccpp-1", "model_name_or_path": name, "model_patch": patch}) + "\n")
        out = evaluate(home, str(tmp_path / f"{name}.jsonl"))
        assert out["unresolved"] == ["lab__calccpp-1"], (name, out["instances"])
        rep = out["instances"]["lab__calccpp-1"]
        assert rep["tests_status"]["FAIL_TO_PASS"][verdict] == ["calc_test.add"], (name, rep)
        if name == "forge":  # every test "passed", the failing canaries too
            assert "canar" in json.dumps(rep["evidence"]), rep


FORGE = r"""#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
static int forged = [] {
  const char* out = std::getenv("GTEST_OUTPUT");
  if (!out) return 0;
  std::ifstream in("/work/test/calc-test.cc");
  std::stringstream text;
  text << in.rdbuf();
  std::string src = text.str(), xml = "<testsuites><testsuite name=\"all\">";
  std::regex test(R"(TEST\((\w+), (\w+)\))");
  for (std::sregex_iterator i(src.begin(), src.end(), test), e; i != e; ++i)
    xml += "<testcase classname=\"" + (*i)[1].str() + "\" name=\"" + (*i)[2].str() + "\" status=\"run\"/>";
  std::ofstream(std::string(out).substr(4)) << xml << "</testsuite></testsuites>";
  std::_Exit(0);
}();
"""


def _diff(path: str, old: str, new: str) -> str:
    """A git-style patch of ``path`` from ``old`` to ``new``."""
    import difflib

    body = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))
    return f"diff --git a/{path} b/{path}\n{body}"
