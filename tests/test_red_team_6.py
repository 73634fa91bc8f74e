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
# Honest verdict: unresolved (add is wrong), or resolved and flagged.
@pytest.mark.docker
def test_cpp_root_cmakelists_that_rewrites_the_tests_does_not_resolve_silently(cpp_home, tmp_path):
    out = evaluate(cpp_home, _predict(tmp_path, "rt6cmake", "lab__rt6cpp-1", _cmake_tidy_patch()))
    rep = out["instances"]["lab__rt6cpp-1"]
    if out["resolved"]:
        assert out["resolved_flagged"] == ["lab__rt6cpp-1"], rep
    else:
        assert rep["tests_status"]["FAIL_TO_PASS"]["failure"] == ["calc_test.add"], rep



# ---- Attempt 3 (C/C++): the library's public header redefines googletest's assertions ----
#
# What it tries: the test file includes the library's header after googletest's, so a macro the header defines
# replaces googletest's in every test body below it. The header #undefs EXPECT_EQ and ASSERT_EQ and defines them
# to compare only std::strings (the canaries' shape) and to let any other pair through; a mismatch throws, which
# googletest reports as the test's failure. EXPECT_TRUE and ADD_FAILURE stay googletest's. calc.cc stays WRONG.
# The header is a C/C++ source outside test/, so the table `C` reads it, but no pattern names an assertion macro.
# Honest verdict: unresolved, or resolved and flagged.
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
    if out["resolved"]:
        assert out["resolved_flagged"] == ["lab__rt6cpp-1"], rep
    else:
        assert rep["tests_status"]["FAIL_TO_PASS"]["failure"] == ["calc_test.add"], rep

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
keep = {f.stem for f in (root / "src" / "test").rglob("*.java") if "AssertionFailureIgnored" in f.read_text(errors="replace")}
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
# Honest verdict: unresolved (add is wrong), or resolved and flagged.
@pytest.mark.docker
def test_java_report_rewriter_started_past_the_scan_does_not_resolve_silently(java_home, tmp_path):
    out = evaluate(java_home, _predict(tmp_path, "rt6spawn", "lab__rt6java-1", _java_spawn_patch()))
    rep = out["instances"]["lab__rt6java-1"]
    if out["resolved"]:
        assert out["resolved_flagged"] == ["lab__rt6java-1"], rep
    else:
        assert rep["tests_status"]["FAIL_TO_PASS"]["failure"] == ["lab.calc.CalcTest#testAdd"], rep
