"""The grader image's lab_grader modules (what check.sh and batch.sh run with ``python3 -I -m lab_grader.<module>``),
imported from templates/ and run on real inputs (no Docker); and, on the engine, that the image holds them where
the tester can read and run but not change them."""
from __future__ import annotations

import importlib
import io
import json
import re
import sys
import tomllib
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rules.config import TEMPLATES

GRADER = TEMPLATES / "images" / "grader"


def grader_module(name: str):
    """``lab_grader.<name>`` from templates/images/grader, no bytecode written beside it."""
    if str(GRADER) not in sys.path:
        sys.path.insert(0, str(GRADER))
    keep, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        return importlib.import_module(f"lab_grader.{name}")
    finally:
        sys.dont_write_bytecode = keep


MODULES = sorted(p.stem for p in (GRADER / "lab_grader").glob("*.py") if p.stem != "__init__")


# ---- what the templates run ----

def test_no_template_embeds_python_and_every_module_it_names_exists():
    named = set()
    for path in (TEMPLATES / "aider").rglob("*.sh.j2"):
        text = path.read_text()
        assert "<<'PY'" not in text and "python3 -I -c" not in text and "python3 -I - " not in text, path
        named |= set(re.findall(r"python3 -I -m lab_grader\.(\w+)", text))
    assert named == set(MODULES) - {"batch"}
    for name in MODULES:
        assert callable(getattr(grader_module(name), "main", None)) or name == "batch", name


# ---- Rust: cargo_manifest, cargo_programs, libtest_summary ----

def merge_manifest(tmp_path: Path, pristine: str, agent: str) -> dict:
    """Run cargo_manifest as check.sh does (PRISTINE AGENT DEPS_OUT); returns the rewritten AGENT."""
    (tmp_path / "pristine.toml").write_text(pristine)
    (tmp_path / "Cargo.toml").write_text(agent)
    grader_module("cargo_manifest").main([str(tmp_path / "pristine.toml"), str(tmp_path / "Cargo.toml"),
                                          str(tmp_path / "deps.json")])
    return tomllib.loads((tmp_path / "Cargo.toml").read_text())


def test_cargo_manifest_keeps_only_the_agents_registry_dependencies(tmp_path):
    pristine = ('[package]\nname = "deps"\nedition = "2021"\n\n[features]\nextra = []\n\n[lints.clippy]\nx = "allow"\n'
                '\n[[bin]]\nname = "tool"\npath = "src/tool.rs"\n')
    agent = ('[package]\nname = "deps"\nedition = "2021"\nbuild = "evil.rs"\n\n'
             '[dependencies]\nrand = "0.8"\nregex = { version = "1", default-features = false, features = ["std"] }\n'
             'mine = { path = "../mine" }\n"odd name" = { git = "https://example.invalid/x", version = "2" }\n\n'
             '[[test]]\nname = "deps"\npath = "src/fake.rs"\n')
    merged = merge_manifest(tmp_path, pristine, agent)
    assert merged["package"] == {"name": "deps", "edition": "2021"}
    assert merged["features"] == {"extra": []}
    assert merged["lints"] == {"clippy": {"x": "allow"}}
    assert merged["dependencies"] == {"rand": "0.8", "regex": {"version": "1", "default-features": False,
                                                                "features": ["std"]}, "mine": {},
                                      "odd name": {"version": "2"}}
    assert merged["bin"] == [{"name": "tool", "path": "src/tool.rs"}]
    assert "test" not in merged
    assert json.loads((tmp_path / "deps.json").read_text()) == merged["dependencies"]


def test_cargo_manifest_names_the_dependency_set_as_the_image_seeds_do(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("crates", GRADER / "rust/crates.py")
    crates = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(crates)
    pristine = '[package]\nname = "deps"\nedition = "2021"\n'
    merge_manifest(tmp_path, pristine, pristine + '\n[dependencies]\nthiserror = "1.0"\nanyhow = "1.0"\n')
    assert (tmp_path / "deps.json").read_text().strip() == crates.deps_key({"anyhow": "1.0", "thiserror": "1.0"})
    assert crates.deps_key({"anyhow": "1.0", "thiserror": "1.0"}) in {
        crates.deps_key(deps) for deps in crates.sets().values()}


def test_cargo_manifest_without_dependencies_writes_none_and_an_empty_set(tmp_path):
    merged = merge_manifest(tmp_path, '[package]\nname = "a"\n\n[dependencies]\nserde = "1"\n', '[package]\nname = "b"\n')
    assert merged == {"package": {"name": "a"}}
    assert (tmp_path / "deps.json").read_text() == "{}\n"


def test_cargo_manifest_refuses_invalid_toml_and_leaves_the_agents_manifest(tmp_path):
    # check.sh's `|| { echo "lab-check: Cargo.toml is not valid TOML"; finish 0; }` depends on the failure
    with pytest.raises(tomllib.TOMLDecodeError):
        merge_manifest(tmp_path, '[package]\nname = "a"\n', "[package\n")
    # a value TOML can hold but the writer cannot (a date) fails before the agent's manifest is opened
    with pytest.raises(ValueError, match="unsupported TOML value"):
        merge_manifest(tmp_path, '[package]\nname = "a"\nwhen = 1979-05-27\n', '[package]\nname = "a"\n')
    assert (tmp_path / "Cargo.toml").read_text() == '[package]\nname = "a"\n'
    assert not (tmp_path / "deps.json").exists()


def test_cargo_programs_lists_the_test_programs_of_cargos_messages():
    messages = [
        {"reason": "compiler-artifact", "target": {"kind": ["lib"], "name": "deps"}, "executable": None},
        {"reason": "compiler-artifact", "target": {"kind": ["test"], "name": "deps"},
         "executable": "/tmp/lab-target/debug/deps/deps-1a2b"},
        {"reason": "compiler-artifact", "target": {"kind": ["test"], "name": "more_deps"},
         "executable": "/tmp/lab-target/debug/deps/more_deps-3c4d"},
        {"reason": "compiler-artifact", "target": {"kind": ["bin"], "name": "tool"},
         "executable": "/tmp/lab-target/debug/tool"},  # a program, not a test program
        {"reason": "compiler-artifact", "executable": "/x"},  # no target: passed over
        {"reason": "compiler-artifact", "target": {"kind": ["test"], "name": "bad\ud800"}, "executable": "/y"},
        {"reason": "build-finished", "success": True},
    ]
    lines = [json.dumps(m) + "\n" for m in messages] + ["warning: not json\n", "[1, 2]\n"]
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n")
    grader_module("cargo_programs").list_programs(lines, out)
    out.flush()
    # the name the output cannot hold (a lone surrogate) is passed over, as any unreadable message is
    assert out.buffer.getvalue().decode() == ("deps\t/tmp/lab-target/debug/deps/deps-1a2b\n"
                                              "more_deps\t/tmp/lab-target/debug/deps/more_deps-3c4d\n")


LIBTEST = [
    {"type": "suite", "event": "started", "test_count": 5},
    {"type": "test", "event": "started", "name": "greets"},
    {"type": "test", "name": "greets", "event": "ok"},
    {"type": "test", "name": "counts", "event": "failed",
     "stdout": "thread 'counts' panicked at tests/deps.rs:9:5:\nassertion `left == right` failed\n"},
    {"type": "test", "name": "quiet", "event": "failed"},
    {"type": "test", "name": "slow", "event": "ignored"},
    {"type": "test", "name": "k0123456789a", "event": "failed", "stdout": "canary"},
    {"type": "test", "name": "kba987654321", "event": "ok"},
    {"type": "suite", "event": "failed", "passed": 2, "failed": 3},
]


def test_libtest_summary_accounts_for_each_test_but_the_canaries():
    lines = [json.dumps(e) + "\n" for e in LIBTEST] + ["note: a line of the program's own\n"]
    out = io.StringIO()
    grader_module("libtest_summary").account(lines, ["k0123456789a", "kba987654321", ""], out)
    assert out.getvalue() == (
        "test greets ... ok\n"
        "test counts ... failed\n"
        "counts | thread 'counts' panicked at tests/deps.rs:9:5:\ncounts | assertion `left == right` failed\n"
        "test quiet ... failed\n"
        "test slow ... ignored\n"
        "note: a line of the program's own\n"
        "test result: 1 passed; 2 failed; 1 ignored\n")


def test_libtest_summary_caps_a_failed_tests_output_and_shows_an_unwritable_event_raw():
    big = {"type": "test", "name": "big", "event": "failed", "stdout": "x" * 50_000}
    odd = '{"type": "test", "name": "odd\\ud800", "event": "ok"}\n'
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n")
    grader_module("libtest_summary").account([json.dumps(big) + "\n", odd], ["canary"], out)
    out.flush()
    text = out.buffer.getvalue().decode()
    assert text.startswith("test big ... failed\nbig | " + "x" * 20_000 + "\n" + odd)
    # the odd test was counted before its line could not be written
    assert text.endswith("test result: 1 passed; 1 failed; 0 ignored\n")


def test_libtest_summary_without_canaries_names_no_counts_and_a_canarys_section_can_be_scrubbed():
    from rules.reports import scrub

    lines = [json.dumps(e) + "\n" for e in LIBTEST]
    out = io.StringIO()
    grader_module("libtest_summary").account(lines, [], out)
    assert "test result:" not in out.getvalue()
    left = scrub(out.getvalue(), ["k0123456789a", "kba987654321"])
    assert "canary" not in left and left.endswith("test slow ... ignored\n")
    assert "thread 'counts' panicked" in left


# ---- C++: macro_guard, catch_summary ----

def test_macro_guard_finds_directives_on_the_tests_names_in_every_non_pristine_file(tmp_path, monkeypatch):
    (tmp_path / "greeter_test.cpp").write_text('#include "greeter.h"\n#define LOCAL_TO_TESTS 1\n'
                                               'TEST_CASE("hi") { REQUIRE(greeter::greet() == "hi"); }\n')
    (tmp_path / "CMakeLists.txt").write_text("project(greeter)\n")
    (tmp_path / "greeter.h").write_text(
        "#pragma once\n#define MY_OWN 1\n"            # a name of its own: allowed
        "  /* x */ # /* y */ define REQUIRE(e) 1\n"   # comments wherever the preprocessor allows them
        "%: undef greet\n"                             # the digraph of '#'
        "??=def\\\nine EXERCISM_RUN_ALL_TESTS 0\n"   # the trigraph, and a line splice inside the directive
        "int x; /* c */#define CATCH_CONFIG_MAIN\n")
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "last.c").write_text("#undef CATCH_ANY\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "extra.txt").write_text("#define LOCAL_TO_TESTS 2\n")  # any file a solution could include
    (tmp_path / "sub" / "link.h").symlink_to(tmp_path / "greeter.h")  # passed over: its target is read itself
    monkeypatch.chdir(tmp_path)
    found = list(grader_module("macro_guard").findings(["greeter_test.cpp", "CMakeLists.txt"]))
    assert found == ["greeter.h: #define REQUIRE", "greeter.h: #undef greet", "greeter.h: #define EXERCISM_RUN_ALL_TESTS",
                     "greeter.h: #define CATCH_CONFIG_MAIN", "sub/extra.txt: #define LOCAL_TO_TESTS",
                     "z/last.c: #undef CATCH_ANY"]


def test_macro_guard_passes_a_tree_that_defines_only_its_own_names(tmp_path, monkeypatch):
    (tmp_path / "t_test.cpp").write_text('TEST_CASE("a") { CHECK(f() == 1); }\n')
    (tmp_path / "t.h").write_text("#ifndef T_H\n#define T_H\nint f();\n#endif\n// #define f g: a comment\n")
    monkeypatch.chdir(tmp_path)
    assert list(grader_module("macro_guard").findings(["t_test.cpp"])) == []


CATCH_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="greeter" errors="0" failures="2" tests="5">
    <testcase classname="greeter.global" name="greets" time="0.001"/>
    <testcase classname="greeter.global" name="counts" time="0.001">
      <failure message="greeter::count() == 2" type="REQUIRE">
FAILED:
  REQUIRE( greeter::count() == 2 )
with expansion:
  1 == 2
greeter_test.cpp:9
      </failure>
    </testcase>
    <testcase classname="greeter.global" name="throws" time="0.001"><error message="boom" type="TEST_CASE"/></testcase>
    <testcase classname="greeter.global" name="K0123456789A/K0123456789A REQUIRE" time="0"><failure message="x"/></testcase>
    <testcase classname="greeter.global" name="kba987654321" time="0"/>
  </testsuite>
</testsuites>
"""


def test_catch_summary_shows_the_failures_and_counts_without_the_canaries(tmp_path):
    cases = list(ET.fromstring(CATCH_XML).iter("testcase"))
    out = io.StringIO()
    grader_module("catch_summary").summary(cases, ["k0123456789a", "KBA987654321"], out)  # either case
    assert out.getvalue() == (
        "FAILED counts: greeter::count() == 2\n"
        "FAILED:\n  REQUIRE( greeter::count() == 2 )\nwith expansion:\n  1 == 2\ngreeter_test.cpp:9\n\n"
        "FAILED throws: boom\n\n\n"
        "3 test cases, 2 failed\n")


def test_catch_summary_without_a_report_names_the_runners_status(tmp_path, capsys):
    summary = grader_module("catch_summary")
    for report in (tmp_path / "missing.xml", tmp_path / "cut.xml"):
        (tmp_path / "cut.xml").write_text(CATCH_XML[:200])
        with pytest.raises(SystemExit) as stop:
            summary.main([str(report), "139", "k0123456789a", "kba987654321"])
        assert stop.value.code == ("lab-check: the test program left no report: it crashed, exited early or was "
                                   "killed (exit status 139)")
    (tmp_path / "catch.xml").write_text(CATCH_XML)
    summary.main([str(tmp_path / "catch.xml"), "1", "k0123456789a", "kba987654321"])
    assert capsys.readouterr().out.endswith("3 test cases, 2 failed\n")


# ---- Python: pytest_canaries, pytest_batch ----

def run_canaries(tmp_path: Path, source: str) -> tuple[str, dict, unittest.TestResult]:
    """Add the canaries to ``source`` as check.sh does, then run the file's tests; returns its text, the
    manifest and the result."""
    path, manifest = tmp_path / "hello_test.py", tmp_path / "canaries.json"
    path.write_text(source)
    grader_module("pytest_canaries").main([str(path), "k0123456789a", "kba987654321", str(manifest)])
    assert manifest.stat().st_mode & 0o777 == 0o600, "the tester must not read the canaries' names"
    text = path.read_text()
    namespace: dict = {"__name__": "hello_test"}
    exec(compile(text, str(path), "exec"), namespace)
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(v) for v in namespace.values()
                               if isinstance(v, type) and issubclass(v, unittest.TestCase))
    result = unittest.TestResult()
    suite.run(result)
    return text, json.loads(manifest.read_text()), result


def test_python_canaries_go_into_the_first_test_case_class_at_its_indentation(tmp_path):
    source = ("import unittest\nfrom unittest import mock\n\n\n@mock.patch('os.getcwd')\n"
              "class HelloTest(unittest.TestCase):\n\n  def test_hello_world(self, cwd):\n    self.assertEqual(1, 1)\n"
              "\n  def test_hello_name(self, cwd):\n    self.assertEqual(len('a'), 1)\n\n\n"
              "class OtherTest(unittest.TestCase):\n  def test_other(self):\n    pass\n")
    text, manifest, result = run_canaries(tmp_path, source)
    other = text.index("class OtherTest")
    for name in manifest["fail"] + manifest["pass"]:
        at = text.index(f"  def {name}(self")
        assert text.index("class HelloTest") < at < other and text.count(f"def {name}(") == 1
    # a copy of test_hello_name (its computed value against 1): the only test that can be copied
    assert manifest["originals"] and set(manifest["originals"].values()) == {"test_hello_name"}
    assert "k0123456789a" not in text and "kba98765432" not in text
    # run as the tests run: every failing canary fails through assertEqual, the others pass
    failed = sorted(t.id().rsplit(".", 1)[-1] for t, _ in result.failures)
    assert result.testsRun == 4 + len(manifest["fail"]) + len(manifest["pass"]) - 1
    assert failed == sorted(manifest["fail"]) and not result.errors


def test_python_canaries_get_a_class_of_their_own_when_the_file_has_none(tmp_path):
    text, manifest, result = run_canaries(tmp_path, "import pytest\n\ndef test_plain_case():\n    assert True\n")
    assert text.startswith("import pytest\n\ndef test_plain_case():\n    assert True\n\n\nimport unittest as ")
    assert len(manifest["fail"]) == len(manifest["pass"]) == 1 and not manifest["originals"]
    assert result.testsRun == 2 and len(result.failures) == 1 and not result.errors


def batch_folders(tmp_path: Path, prepared: dict[str, int]):
    """A scratch batch container: report/<n>.prepared and report/<n>/ as BATCH_DRIVER leaves them."""
    folders = grader_module("batch").Folders(report=tmp_path / "report", out=tmp_path / "out", tmp=tmp_path,
                                             work=tmp_path / "work")
    for d in (folders.report, folders.out, folders.work):
        d.mkdir()
    for n, status in prepared.items():
        (folders.report / n).mkdir()
        (folders.report / f"{n}.prepared").write_text(f"{status}\n")
    return folders


def test_batch_sessions_are_comma_separated_runs():
    assert grader_module("batch").sessions(["1,2,3", "4,5,6", ""]) == [["1", "2", "3"], ["4", "5", "6"], []]


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" tests="4">
<testcase classname="1.hello_test.HelloTest" name="test_hello" time="0.001"/>
<testcase classname="2.twice_test.TwiceTest" name="test_twice" time="0.001"><failure message="no">x</failure></testcase>
<testcase classname="11.hello_test.HelloTest" name="test_eleven" time="0.001"/>
<testcase classname="" name="test_nobodys" time="0.001"/>
</testsuite></testsuites>"""


def test_pytest_batch_gives_each_run_its_own_tests_and_the_sessions_status(tmp_path):
    f = batch_folders(tmp_path, {"1": 0, "2": 0, "3": 1, "11": 0, "4": 0})
    (f.out / "session1.xml").write_text(JUNIT)
    (tmp_path / "lab-session1.status").write_text("1\n")
    (tmp_path / "lab-session2.status").write_text("2\n")  # session 2 left no report
    grader_module("pytest_batch").main(["1,2,3,11", "4"], f)

    def ids(n):
        root = ET.parse(f.report / n / "report.xml").getroot()
        return [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert ids("1") == [("hello_test.HelloTest", "test_hello")]
    assert ids("2") == [("twice_test.TwiceTest", "test_twice")]
    assert ids("11") == [("hello_test.HelloTest", "test_eleven")]
    assert ET.parse(f.report / "2" / "report.xml").getroot().find("testsuite/testcase/failure").text == "x"
    assert [(f.report / n / "exit").read_text() for n in ("1", "2", "11", "4")] == ["1\n", "1\n", "1\n", "2\n"]
    # run 3 was not prepared: nothing of the batch's; run 4's session wrote no report: none for it either
    assert list((f.report / "3").iterdir()) == [] and not (f.report / "4" / "report.xml").exists()


def test_a_session_with_no_prepared_run_reads_no_status(tmp_path):
    f = batch_folders(tmp_path, {"1": 2, "2": 0})
    (f.out / "session2.xml").write_text(JUNIT)
    (tmp_path / "lab-session2.status").write_text("0\n")
    grader_module("pytest_batch").main(["1", "2"], f)  # session 1 has no status file: it is not read
    assert (f.report / "2" / "exit").read_text() == "0\n" and not (f.report / "1" / "exit").exists()


# ---- Go: go_batch ----

def go_event(package: str, action: str, test: str | None = None) -> str:
    return json.dumps({"Action": action, "Package": package, **({"Test": test} if test else {})}) + "\n"


def test_go_batch_gives_each_run_the_events_of_its_own_module(tmp_path):
    f = batch_folders(tmp_path, {"1": 0, "2": 0, "3": 0})
    for n, mod in (("1", "module hello\n\ngo 1.18\n"), ("2", 'module "example.com/twice"\n'), ("3", "go 1.18\n")):
        (f.work / n).mkdir()
        (f.work / n / "go.mod").write_text(mod)
    lines = [go_event("hello", "run", "TestHello"), go_event("example.com/twice", "run", "TestDouble"),
             json.dumps({"ImportPath": "hello", "Action": "build-output", "Output": "# hello\n"}) + "\n",
             "panic: not an event\n", go_event("other", "pass"), "[3]\n", go_event("hello", "pass", "TestHello")]
    (f.out / "session1.json").write_text("".join(lines))
    (tmp_path / "lab-session1.status").write_text("1\n")
    grader_module("go_batch").main(["1,2,3"], f)
    assert (f.report / "1" / "go-test.json").read_text() == lines[0] + lines[2] + lines[6]
    assert (f.report / "2" / "go-test.json").read_text() == lines[1]
    assert (f.report / "3" / "go-test.json").read_text() == ""  # a go.mod without a module line owns nothing
    assert {(f.report / n / "exit").read_text() for n in ("1", "2", "3")} == {"1\n"}


def test_go_batch_session_without_events_leaves_the_runs_no_report(tmp_path):
    f = batch_folders(tmp_path, {"1": 0})
    (f.work / "1").mkdir()
    (f.work / "1" / "go.mod").write_text("module hello\n")
    (tmp_path / "lab-session1.status").write_text("137\n")
    grader_module("go_batch").main(["1"], f)
    assert sorted(p.name for p in (f.report / "1").iterdir()) == ["exit"]
    assert (f.report / "1" / "exit").read_text() == "137\n"


# ---- JavaScript: jest_batch ----

def test_jest_batch_gives_each_run_the_results_of_its_own_files(tmp_path):
    f = batch_folders(tmp_path, {"1": 0, "2": 0, "3": 3, "12": 0})
    suites = [{"name": f"{f.work}/1/hello.spec.js", "assertionResults": [{"title": "a", "status": "passed"}]},
              {"name": f"{f.work}/12/hello.spec.js", "assertionResults": []},
              {"name": f"{f.work}/3/x.spec.js"}, "not a suite", {"name": "/elsewhere/1/y.spec.js"}]
    (f.out / "jest.json").write_text(json.dumps({"numTotalTests": 1, "testResults": suites}))
    grader_module("jest_batch").main([str(f.out / "jest.json"), "1", "1", "2", "3", "12"], f)
    assert json.loads((f.report / "1" / "jest.json").read_text()) == {"testResults": [suites[0]]}
    assert json.loads((f.report / "2" / "jest.json").read_text()) == {"testResults": []}
    assert json.loads((f.report / "12" / "jest.json").read_text()) == {"testResults": [suites[1]]}
    assert list((f.report / "3").iterdir()) == []
    assert {(f.report / n / "exit").read_text() for n in ("1", "2", "12")} == {"1\n"}


def test_jest_batch_without_a_readable_report_gives_only_the_status(tmp_path):
    f = batch_folders(tmp_path, {"1": 0})
    for report in ("missing.json", "cut.json", "list.json"):
        (f.out / "cut.json").write_text('{"testResults": [')
        (f.out / "list.json").write_text("[]")
        grader_module("jest_batch").main([str(f.out / report), "137", "1"], f)
        assert sorted(p.name for p in (f.report / "1").iterdir()) == ["exit"], report


# ---- in the image ----

@pytest.mark.docker
def test_the_grader_image_lets_the_tester_run_lab_grader_but_not_change_it(grader_image):
    from rules import sandbox

    imports = "; ".join(f"import lab_grader.{m}" for m in MODULES)
    script = ("set -e; d=/usr/lib/python3/dist-packages/lab_grader; "
              f"python3 -I -c '{imports}; print(lab_grader.__file__)'; "
              "find $d ! -user 0 -print; find $d -perm /022 -print; "
              "for f in $d $d/*.py; do [ -w \"$f\" ] && echo writable $f; done; "
              "cd /tmp && python3 -I -m lab_grader.catch_summary /nothing 7 || echo status $?")
    res = sandbox.run(grader_image, ["sh", "-c", script], user="1000:1000", network="none")
    assert res.output.split("\n")[0] == "/usr/lib/python3/dist-packages/lab_grader/__init__.py", res.output
    assert res.output.strip().split("\n")[1:] == [
        "lab-check: the test program left no report: it crashed, exited early or was killed (exit status 7)",
        "status 1"], res.output
