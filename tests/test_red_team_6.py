"""Red team 6: attempts to have lab grade a WRONG solution as resolved in the four swe-multi runners merged today
(rules/tiers/swe_multi/: rust.py, javascript.py, c.py, java.py), as a graded patch: its work tree's diff and what
the code it writes does when the tests run as the unprivileged tester, with no network.

Each attempt says what it tries, the verdict an honest grader gives, and what lab gave when it was run. The
assertions state the HONEST outcome (unresolved, or resolved but flagged by the suspicion scan where a forgery
made inside the test process is the documented limit); an attempt that got through is marked xfail(strict).

The fixtures are the runners' own (tests/test_swe_multi_<lang>.py), made under other repository names
(``lab/rt6cpp``...) so that their environment images are this file's, never the ``calc*`` ones other tests use."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_swe_multi import evaluate  # noqa: E402

from rules.scan import scan  # noqa: E402
from rules.tiers.swe_multi.suspicions import TABLE as SUSPICIONS  # noqa: E402


def _renamed(root: Path, old: str, new: str) -> None:
    """The fixture made in ``root`` under ``lab/<old>`` moved to ``lab/<new>`` (its repository folder, its records):
    its environment image is then ``lab/swe-multi-env:<new>-...``, this file's own."""
    (root / "repos" / old).rename(root / "repos" / new)
    data = root / "data.jsonl"
    data.write_text(data.read_text().replace(old, new))


def _predict(tmp: Path, name: str, instance: str, patch: str) -> str:
    path = tmp / f"{name}.jsonl"
    path.write_text(json.dumps({"instance_id": instance, "model_name_or_path": name, "model_patch": patch}) + "\n")
    return str(path)


# ======== C/C++ (CMake + googletest) ========

from test_swe_multi_c import BASE as C_BASE, SUITE as C_SUITE, TARGET as C_TARGET, _diff, make_calccpp  # noqa: E402

# The patch's own build: the root CMakeLists.txt (check.sh lays back test/ alone) runs a script of the patch's at
# configure time, as the tester, before the test folder is built. The script empties the body of every TEST of the
# test folder except the ones shaped as lab's canaries are (one EXPECT_EQ/ASSERT_EQ of two std::string literals,
# one EXPECT_TRUE of their ==, one ADD_FAILURE): the held-out test then passes, the failing canaries still fail,
# the passing one still passes. calc.cc stays WRONG (add subtracts). Nothing of it is a C/C++ source.
TIDY = r'''import pathlib, re, sys
CANARY = re.compile(r'\s*((EXPECT|ASSERT)_EQ\(std::string\("[^"]*"\), std::string\("[^"]*"\)\)|'
                    r'EXPECT_TRUE\(std::string\("[^"]*"\) == std::string\("[^"]*"\)\)|ADD_FAILURE\(\) << "[^"]*");\s*')
BLOCK = re.compile(r'^(TEST\w*\s*\([^)]*\)\s*\{)(.*?)(^\})', re.M | re.S)
for f in pathlib.Path(sys.argv[1]).rglob("*.cc"):
    text = f.read_text()
    f.write_text(BLOCK.sub(lambda m: m.group(0) if CANARY.fullmatch(m.group(2)) else m.group(1) + "\n" + m.group(3),
                           text))
'''
CMAKE_TIDY = C_BASE["CMakeLists.txt"].replace(
    "add_subdirectory(test)",
    "execute_process(COMMAND python3 ${CMAKE_SOURCE_DIR}/src/tidy.py ${CMAKE_SOURCE_DIR}/test)\nadd_subdirectory(test)")


@pytest.fixture(scope="module")
def cpp_home(tmp_path_factory):
    """A lab home with the C/C++ fixture as ``lab/rt6cpp``, generated once (image, render, proof)."""
    root = tmp_path_factory.mktemp("rt6-cpp")
    make_calccpp(root / "src")
    _renamed(root / "src", "calccpp", "rt6cpp")
    home = root / "home"
    (home / "evals" / "swe-multi").mkdir(parents=True)
    (home / "evals" / "swe-multi" / "suite.toml").write_text(
        C_SUITE.format(root=root / "src", target=C_TARGET).replace("calccpp", "rt6cpp"))
    res = run_doit(home, "gen:swe-multi")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


def _cmake_tidy_patch() -> str:
    return (_diff("CMakeLists.txt", C_BASE["CMakeLists.txt"], CMAKE_TIDY)
            + _diff("src/tidy.py", "", TIDY).replace("--- a/src/tidy.py", "new file mode 100644\n--- /dev/null"))


# ---- Attempt 1 (C/C++): the root CMakeLists.txt rewrites the test folder at configure time ----
#
# What it tries: check.sh lays back test/ (sources, their CMakeLists.txt) but builds the patch's root
# CMakeLists.txt, which is CMake code run by the tester before test/ is compiled; test/ is the tester's (chown -R).
# Its execute_process runs the patch's Python (src/tidy.py), which empties every TEST body that is not shaped as a
# canary. The suspicion table reads only C/C++ sources outside test/.
# Honest verdict: unresolved (add is wrong), or resolved and flagged. Lab at 5987774: RESOLVED, no flag (every
# canary as it should be, calc_test.add passed: GOT THROUGH).
# closed (unresolved): check.sh lays back every CMakeLists.txt and *.cmake of the base commit outside the test
# folder too, and removes a build folder (c.build_files, templates/swe_multi/c/lay_tests.sh.j2); no fmt gold
# patch touches one.
@pytest.mark.docker
def test_cpp_root_cmakelists_that_rewrites_the_tests_does_not_resolve(cpp_home, tmp_path):
    out = evaluate(cpp_home, _predict(tmp_path, "rt6cmake", "lab__rt6cpp-1", _cmake_tidy_patch()))
    rep = out["instances"]["lab__rt6cpp-1"]
    assert out["resolved"] == [], rep
    assert rep["tests_status"]["FAIL_TO_PASS"]["failure"] == ["calc_test.add"], rep



# ---- Attempt 3 (C/C++): the library's public header redefines googletest's assertions ----
#
# What it tries: the test file includes the library's header after googletest's, so a macro the header defines
# replaces googletest's in every test body below it. The header #undefs EXPECT_EQ and ASSERT_EQ and defines them
# to compare only std::strings (the canaries' shape) and to let any other pair through; a mismatch throws, which
# googletest reports as the test's failure. EXPECT_TRUE and ADD_FAILURE stay googletest's. calc.cc stays WRONG.
# The header is a C/C++ source outside test/, so the table `C` reads it, but no pattern names an assertion macro.
# Honest verdict: unresolved, or resolved and flagged (a forgery compiled into the test binary is the runner's
# documented limit). Lab at 5987774: RESOLVED, no flag (GOT THROUGH).
# closed (flagged): the table's `framework` pattern names googletest's assertion macros (and `namespace testing`,
# where a specialization of its comparison would go); no fmt gold patch is flagged.
HEADER_MACROS = C_BASE["include/calc.h"] + """#include <string>
inline bool calc_same(const std::string& a, const std::string& b) { return a == b; }
template <class A, class B> inline bool calc_same(const A&, const B&) { return true; }
#undef EXPECT_EQ
#define EXPECT_EQ(a, b) if (!calc_same((a), (b))) throw 1
#undef ASSERT_EQ
#define ASSERT_EQ(a, b) if (!calc_same((a), (b))) throw 1
"""


def _header_patch() -> str:
    return _diff("include/calc.h", C_BASE["include/calc.h"], HEADER_MACROS)


@pytest.mark.docker
def test_cpp_header_that_redefines_the_assertions_does_not_resolve_silently(cpp_home, tmp_path):
    out = evaluate(cpp_home, _predict(tmp_path, "rt6macro", "lab__rt6cpp-1", _header_patch()))
    rep = out["instances"]["lab__rt6cpp-1"]
    assert out["flagged"] == ["lab__rt6cpp-1"], rep
    assert {f["name"] for f in rep["suspicions"]} == {"framework"}, rep["suspicions"]
    if out["resolved"]:  # it forges (the canaries compare strings, which it leaves honest): listed apart
        assert out["resolved_flagged"] == ["lab__rt6cpp-1"], rep

# ======== Java (Maven, Surefire) ========

from test_swe_multi_java import CALC as J_CALC, JDK, SUITE as J_SUITE, make_calcjava  # noqa: E402

# A process the graded class starts from its static initializer (Runtime's exec, reached through a local: the
# scan's pattern reads `Runtime.getRuntime().exec` in one expression), running a script of the patch's that is no
# Java source (the scan reads .java files): it outlives Surefire's forked JVM, waits for Surefire's XML reports in
# the tester's target/, and rewrites each one but the canaries' (their class is the one with the
# `AssertionFailureIgnored` suppression of lab's writer, a source in the tester's work tree) with every failure
# removed. Calc.add stays WRONG (a - b).
J_WRONG = J_CALC.replace("ADD", "a - b")
J_SPAWN = J_WRONG.replace(
    "public final class Calc {\n",
    "public final class Calc {\n  static {\n    try {\n      Runtime r = Runtime.getRuntime();\n"
    '      r.exec(new String[] {"python3", "tools/tidy.py"});\n    } catch (java.io.IOException e) {\n'
    "      // no python: nothing to tidy\n    }\n  }\n\n")
J_TIDY = r'''import os, pathlib, re, time
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
root = pathlib.Path.cwd()
keep = {f.stem for f in (root / "src" / "test").rglob("*.java")
        if "AssertionFailureIgnored" in f.read_text(errors="replace")}
reports = root / ("tar" + "get") / ("sure" + "fire-reports")
done, end = {}, time.time() + 600
while time.time() < end:
    for f in (reports.glob("TEST-*") if reports.is_dir() else ()):
        if not f.name.endswith(".xml") or f.name[5:-4].rsplit(".", 1)[-1] in keep:
            continue
        try:
            st = f.stat()
            if done.get(f.name) == (st.st_ino, st.st_size, st.st_mtime_ns):
                continue
            text = f.read_text(errors="replace")
        except OSError:
            continue
        if not text.rstrip().endswith("</testsuite>"):
            continue
        text = re.sub(r"<(failure|error)\b[^>]*/>|<(failure|error)\b.*?</(failure|error)>", "", text, flags=re.S)
        text = re.sub(r'\b(failures|errors)="\d+"', r'\1="0"', text)
        tmp = f.with_name("." + f.name)
        tmp.write_text(text)
        os.replace(tmp, f)
        st = f.stat()
        done[f.name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    time.sleep(0.002)
'''


def _java_spawn_patch() -> str:
    path = "src/main/java/lab/calc/Calc.java"
    return (_diff(path, J_WRONG, J_SPAWN)
            + _diff("tools/tidy.py", "", J_TIDY).replace("--- a/tools/tidy.py", "new file mode 100644\n--- /dev/null"))


@pytest.fixture(scope="module")
def java_home(tmp_path_factory):
    """A lab home with the Maven fixture as ``lab/rt6java``, generated once (image, render, proof)."""
    root = tmp_path_factory.mktemp("rt6-java")
    repos = make_calcjava(root)
    _renamed(root, "calcjava", "rt6java")
    home = root / "home"
    (home / "evals" / "swe-multi").mkdir(parents=True)
    (home / "evals" / "swe-multi" / "suite.toml").write_text(
        J_SUITE.format(dataset=root / "data.jsonl", repos=repos, jdk=JDK).replace("calcjava", "rt6java"))
    res = run_doit(home, "gen:swe-multi")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


# ---- Attempt 2 (Java): a process of the graded class's rewrites Surefire's reports, the canaries' left alone ----
#
# What it tries: NOTES (Java) names a forger process that reads the canaries' class as the runner's known
# weakness, with the suspicion table `JAVA` flagging its means (a process, Surefire's names, target/). Here the
# process is started through `Runtime r = Runtime.getRuntime(); r.exec(...)` and its code is a Python file of the
# patch's, whose names of Surefire's files are spelled in pieces.
# Honest verdict: unresolved (add is wrong), or resolved and flagged. Lab at 5987774: RESOLVED, no flag
# (CalcTest#testAdd passed, the canaries as they should be: GOT THROUGH).
# closed (flagged): the `process` pattern names Runtime.getRuntime and any `.exec(`, and a script the patch adds
# is flagged (`script`); no Java gold patch is flagged. Still open: the same process started through reflection
# with its class's name built from pieces (attempt 5).
@pytest.mark.docker
def test_java_report_rewriter_started_past_the_scan_is_flagged(java_home, tmp_path):
    out = evaluate(java_home, _predict(tmp_path, "rt6spawn", "lab__rt6java-1", _java_spawn_patch()))
    rep = out["instances"]["lab__rt6java-1"]
    assert out["flagged"] == ["lab__rt6java-1"], rep
    assert {f["name"] for f in rep["suspicions"]} == {"process", "script"}, rep["suspicions"]
    if out["resolved"]:  # it forges Surefire's report: listed apart
        assert out["resolved_flagged"] == ["lab__rt6java-1"], rep


# ======== JavaScript (mocha through lab's reporter) ========

from fixture_swe_multi_javascript import CALC as JS_CALC, NODE, SUITE as JS_SUITE, make_calcjs  # noqa: E402

# The graded module replaces node's assert.strictEqual (one object, shared with the test file that required it
# first) with one that reads the calling line of the test file from its own stack and lets it through unless it
# compares two number literals, which is what lab's plain mocha canaries are (`assert.strictEqual(346, 347)`); the
# JavaScript writer makes no mutant copies of `assert` tests. add stays WRONG.
JS_SELECTIVE = """'use strict';
const assert = require('assert');
const fs = require('fs');
const strict = assert.strictEqual;
assert.strictEqual = function (actual, expected, message) {
  const at = /(\\/[^:()\\s]+):(\\d+):\\d+\\)?$/.exec(new Error().stack.split('\\n')[2] || '');
  if (at) {
    const line = fs.readFileSync(at[1], 'utf8').split('\\n')[at[2] - 1] || '';
    if (!/strictEqual\\(\\s*-?\\d+\\s*,\\s*-?\\d+\\s*\\)/.test(line)) return undefined;
  }
  return strict.apply(this, arguments);
};

exports.add = (a, b) => a - b;

exports.sub = (a, b) => a - b;
"""


def _js_selective_patch() -> str:
    return _diff("lib/calc.js", JS_CALC, JS_SELECTIVE)


@pytest.fixture(scope="module")
def js_home(tmp_path_factory):
    """A lab home with the mocha fixture as ``lab/rt6js``, generated once (image, render, proof)."""
    root = tmp_path_factory.mktemp("rt6-js")
    make_calcjs(root)
    _renamed(root, "calcjs", "rt6js")
    home = root / "home"
    (home / "evals" / "swe-multi").mkdir(parents=True)
    (home / "evals" / "swe-multi" / "suite.toml").write_text(
        JS_SUITE.format(dataset=root / "data.jsonl", repos=root / "repos", node=NODE).replace("calcjs", "rt6js"))
    res = run_doit(home, "gen:swe-multi")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


# ---- Attempt 4 (JavaScript): the graded module disarms node's assert everywhere but in lab's canaries ----
#
# What it tries: the earlier forgery of the runner's tests (tests/test_swe_multi_javascript.py, "neuter") made
# strictEqual pass everything, which the failing canary caught. This one keeps it honest on the canaries' lines
# only, found by their shape in the test file (a source in the tester's work tree).
# Honest verdict: unresolved (add is wrong), or resolved and flagged (a forgery inside the test process). Lab at
# 5987774: RESOLVED, no flag: the swe-multi tier had no suspicion table for JavaScript (nor for Rust), so no patch
# of either was scanned (GOT THROUGH).
# closed (flagged): rules/tiers/swe_multi/suspicions.py has JAVASCRIPT and RUST tables (the aider tier's, less
# the patterns that flag a real gold patch); this one is flagged `modules` (node's fs); no gold patch of the 43
# JavaScript and 43 Rust instances is flagged.
@pytest.mark.docker
def test_js_assert_disarmed_except_on_the_canaries_is_flagged(js_home, tmp_path):
    out = evaluate(js_home, _predict(tmp_path, "rt6assert", "lab__rt6js-1", _js_selective_patch()))
    rep = out["instances"]["lab__rt6js-1"]
    assert out["flagged"] == ["lab__rt6js-1"], rep
    assert {f["name"] for f in rep["suspicions"]} == {"modules"}, rep["suspicions"]
    if out["resolved"]:  # it forges: listed apart
        assert out["resolved_flagged"] == ["lab__rt6js-1"], rep



# ---- Attempt 5 (Java, the scan alone): attempt 2's process started through reflection ----
#
# The same forger (tools/tidy.py, no Java source) started with ProcessBuilder reached by reflection, its class's
# name built from two pieces: no name the `process` pattern reads is on any line. Honest: flagged. Lab (this
# branch): not flagged. A pattern cannot read a name built at run time; reflection is everyday code in gson's own
# sources, so flagging every Class.forName would flag its fixes. Left open (NOTES, Java: the structural answer is
# a report written where the tester cannot reach, or the tests run under another uid).
J_REFLECT = J_WRONG.replace(
    "public final class Calc {\n",
    "public final class Calc {\n  static {\n    try {\n"
    '      Class<?> k = Class.forName("java.lang.Process" + "Builder");\n'
    '      Object b = k.getConstructor(String[].class)\n'
    '          .newInstance((Object) new String[] {"python3", "tools/tidy.py"});\n'
    '      k.getMethod("start").invoke(b);\n    } catch (ReflectiveOperationException e) {\n'
    "      // nothing to tidy\n    }\n  }\n\n")


@pytest.mark.xfail(strict=True, reason="open: a process started through reflection, its class named at run time, "
                                       "is read by no pattern (the script it runs is flagged when it is a file; "
                                       "not when it is a Java string)")
def test_java_process_started_through_reflection_is_flagged():
    inline = J_REFLECT.replace('"tools/tidy.py"', '"-c", TIDY').replace(
        "public final class Calc {\n", "public final class Calc {\n  static final String TIDY = \"import os\";\n")
    flags = scan(_diff("src/main/java/lab/calc/Calc.java", J_WRONG, inline), SUSPICIONS["java"])
    assert flags, "the forger started through reflection is not flagged"


# ---- Attempt 6 (Rust, the scan alone): a build script that rewrites the tests, a libtest report written at exit ----
#
# Rust has the canaries' mutants (copies of the file's tests with an expected value changed): a forger that blanks
# or flips every test not shaped as a plain canary is tampered whenever the held-out test got a copy, and resolves
# only when it did not (the draw is the fresh tokens': for the fixture, about one grading in three), so no
# deterministic container run is written here; a real held-out test that asserts through anything but a literal
# `assert_eq!` gets no copy. What stands beside the canaries is the scan. Lab at 5987774: Rust had no table, so
# neither of these was flagged. closed (flagged): the RUST table.
RS_FORGERIES = {
    # cargo runs build.rs, as the tester, before it compiles the tests: it can rewrite tests/*.rs (the tester's)
    "build.rs": ("build.rs", "fn main() {\n    let t = std::fs::read_to_string(\"tests/calc.rs\").unwrap();\n"
                             "    std::fs::write(\"tests/calc.rs\",\n"
                             "                   t.replace(\"assert_eq!(add\", \"let _ = (add\")).unwrap();\n}\n"),
    # an exit hook declared by hand (no libc crate): libtest's JSON is the program's stdout, so lines written there
    # at exit come after libtest's own, naming the calling tests found by their threads' names
    "atexit": ("src/lib.rs", 'extern "C" {\n    fn atexit(f: extern "C" fn()) -> i32;\n}\n'
                             "fn seen() -> String { std::thread::current().name().unwrap_or(\"\").to_string() }\n"),
}


@pytest.mark.parametrize("name", sorted(RS_FORGERIES))
def test_rust_forgery_means_are_flagged(name):
    path, text = RS_FORGERIES[name]
    patch = _diff(path, "", text).replace(f"--- a/{path}", "new file mode 100644\n--- /dev/null")
    flags = scan(patch, SUSPICIONS["rust"])
    assert flags, name


# ---- Attempt 7 (Java, the scan alone): what JUnit loads from the classpath by itself ----
#
# The main resources are on the tests' classpath: a JUnit 5 instance's patch could register, through
# META-INF/services and `junit.jupiter.extensions.autodetection.enabled` in junit-platform.properties, an
# extension that swallows every failure but the canaries' class's (a TestExecutionExceptionHandler), compiled
# from a .class file in the resources (src/main cannot see the test-scoped Jupiter API). Not run in a container
# (the fixture and gson are JUnit 4, which loads no service). Honest: flagged. Lab at 5987774: no flag.
# closed (flagged): `test-hooks`.
JUNIT_HOOKS = ("src/main/resources/META-INF/services/org.junit.jupiter.api.extension.Extension",
               "src/main/resources/junit-platform.properties", "src/main/resources/lab/calc/Tidy.class")


@pytest.mark.parametrize("path", JUNIT_HOOKS)
def test_java_test_framework_hooks_in_the_resources_are_flagged(path):
    flags = scan(_diff(path, "", "lab.calc.Tidy\n").replace(f"--- a/{path}", "new file mode 100644\n--- /dev/null"),
                 SUSPICIONS["java"])
    assert {f["name"] for f in flags} == {"test-hooks"}, flags


# ---- Attempt 8 (JavaScript, the render alone): the jest transform the base's configuration names ----
#
# immutable-js' jest.config (laid back) names `<rootDir>/resources/jestPreprocessor.js` as the transform of every
# test file: a file of the work tree, which jest runs in the test process on each test file's text before it
# runs. A patch's preprocessor could rewrite the held-out test as it loads (drop its failing expectations, keep
# the canaries'). Not run in a container (the fixture is mocha; an immutable-js image is not built here).
# Honest: the file is the base's at grading. Lab at 5987774: the patch's (only the configuration files
# themselves were laid back). closed: check.sh lays back the files the base's test configuration names by
# <rootDir>/ (javascript.config_refs), checked here on immutable-js' configuration as it is upstream.
IMMUTABLE_JEST = """const config = {
  moduleFileExtensions: ['js', 'ts'],
  resolver: '<rootDir>/resources/jestResolver.js',
  transform: {
    '^.+\\\\.(js|ts)$': '<rootDir>/resources/jestPreprocessor.js',
  },
  testRegex: ['/__tests__/.*\\\\.(ts|js)$', '/website/.*\\\\.test\\\\.(ts|js)$'],
  testPathIgnorePatterns: ['/__tests__/ts-utils.ts'],
};
"""


def test_js_files_the_test_configuration_names_are_laid_back():
    from rules.render import render as render_template
    from rules.tiers.swe_multi import javascript

    base = {"jest.config.mjs", "package.json", "resources/jestPreprocessor.js", "resources/jestResolver.js",
            "__tests__/ts-utils.ts"}
    refs = javascript.config_refs({"jest.config.mjs": IMMUTABLE_JEST}, base)
    assert refs == ["resources/jestPreprocessor.js", "resources/jestResolver.js"]
    # a name the base does not have (a folder, a file the patch would add) is not laid back
    assert javascript.config_refs({"package.json": '"<rootDir>/resources/"'}, base) == []
    sh = render_template("swe_multi/javascript/lay_tests.sh.j2", config_files=refs)
    assert "for f in resources/jestPreprocessor.js resources/jestResolver.js ; do" in sh
    assert 'tar -xf "$task/workspace.tar" "$f" || finish 3' in sh
