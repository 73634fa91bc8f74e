"""Honest grading of the C++ track against adversarial solutions, on the real engine (Docker).

A tiny exercise (``greeter``, laid out as upstream's C++ exercises: CMakeLists.txt, Catch2 v2 in test/) is
written here at test time, rendered and proven like any task; then wrong solutions that try to forge a pass are
graded against the reference's test ids with fresh canaries and the compiler cache read-only, as a trial's
grading is. Each changes or adds only solution code, as an agent could, and must be graded ``fail`` or
``tampered``, never ``pass``; the reference must still pass.

Catch2's single header (640 kB, Boost licence) is not copied into lab: it is taken from ``LAB_CATCH_HPP``, from
an upstream polyglot checkout (``LAB_POLYGLOT``, default /work/scratch/polyglot), or from Debian's ``catch2``
package (/usr/include/catch2/catch.hpp); the tests are skipped, saying so, when none is there.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rules import prove, worktree
from rules.tiers.aider import exercises as aider
from rules.config import Limits
from rules.files import write_atomic
from rules.grade import grade

pytestmark = pytest.mark.docker

LIMITS = Limits(cpus=1.0, memory=3 * 1024**3, pids=512, timeout=240)
CACHE = "lab-cache-test-honest"


def catch_header() -> Path | None:
    """A Catch2 v2 single header to build the fixture exercise with, or None."""
    places = [os.environ.get("LAB_CATCH_HPP", "")]
    upstream = Path(os.environ.get("LAB_POLYGLOT", "/work/scratch/polyglot")) / "cpp/exercises/practice"
    if upstream.is_dir():
        places += [str(p / "test/catch.hpp") for p in sorted(upstream.iterdir())[:1]]
    places.append("/usr/include/catch2/catch.hpp")
    return next((Path(p) for p in places if p and Path(p).is_file()), None)


CMAKE = """\
get_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)
cmake_minimum_required(VERSION 3.5.1)
project(${exercise} CXX)
string(REPLACE "-" "_" file ${exercise})
add_executable(${exercise} ${file}_test.cpp ${file}.cpp ${file}.h test/tests-main.cpp)
set_target_properties(${exercise} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED OFF CXX_EXTENSIONS OFF
                      COMPILE_FLAGS "-Wall -Wextra -Wpedantic -Werror")
set(CMAKE_BUILD_TYPE Debug)
if(${EXERCISM_RUN_ALL_TESTS})
    target_compile_definitions(${exercise} PRIVATE EXERCISM_RUN_ALL_TESTS)
endif()
add_custom_target(test_${exercise} ALL DEPENDS ${exercise} COMMAND ${exercise})
"""
TEST = """\
#include "greeter.h"
#include "test/catch.hpp"

TEST_CASE("greets alice") {
    const std::string expected = "Hello, Alice!";
    REQUIRE(greeter::greet("Alice") == expected);
}

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("greets bob") {
    CHECK(greeter::greet("Bob") == "Hello, Bob!");
}

TEST_CASE("greets politely") {
    SECTION("carol") { REQUIRE(greeter::greet("Carol") == "Hello, Carol!"); }
    SECTION("dave") { REQUIRE(greeter::greet("Dave") == "Hello, Dave!"); }
}
#endif
"""
HEADER = """\
#ifndef GREETER_H
#define GREETER_H
#include <string>
namespace greeter {
std::string greet(const std::string& name);
}
#endif
"""
STUB = '#include "greeter.h"\n\nnamespace greeter {\nstd::string greet(const std::string&) { return ""; }\n}\n'
REFERENCE = ('#include "greeter.h"\n\nnamespace greeter {\n'
             'std::string greet(const std::string& name) { return "Hello, " + name + "!"; }\n}\n')
EXPECTED = {"greeter.global::greets alice", "greeter.global::greets bob", "greeter.global::greets politely/carol",
            "greeter.global::greets politely/dave"}


def wrong(extra: str = "", body: str = 'return "Hi " + name;', includes: str = "") -> str:
    """A wrong greeter.cpp (greets with "Hi") with ``extra`` code before it."""
    return (f'#include "greeter.h"\n{includes}\n{extra}\n\nnamespace greeter {{\n'
            f'std::string greet(const std::string& name) {{ {body} }}\n}}\n')


@pytest.fixture(scope="module")
def greeter(tmp_path_factory, grader_image):
    """The greeter task, rendered and proven (the compiler cache written): ``(task_dir, proof)``."""
    catch = catch_header()
    if catch is None:
        pytest.skip("no Catch2 v2 single header: set LAB_CATCH_HPP or LAB_POLYGLOT, or install Debian's catch2")
    root = tmp_path_factory.mktemp("cpp")
    ex_dir = root / "cpp" / "exercises" / "practice" / "greeter"
    files = {"greeter.cpp": STUB, "greeter.h": HEADER, "greeter_test.cpp": TEST, "CMakeLists.txt": CMAKE,
             "test/tests-main.cpp": '#define CATCH_CONFIG_MAIN\n#include "catch.hpp"\n',
             ".meta/example.cpp": REFERENCE, ".meta/example.h": HEADER, ".docs/instructions.md": "Greet.\n",
             ".meta/config.json": json.dumps({"files": {
                 "solution": ["greeter.cpp", "greeter.h"], "test": ["greeter_test.cpp"],
                 "example": [".meta/example.cpp", ".meta/example.h"]}})}
    for rel, text in files.items():
        write_atomic(ex_dir / rel, text)
    write_atomic(ex_dir / "test/catch.hpp", catch.read_bytes())
    rendered = aider.render(aider.Exercise("cpp", "greeter", ex_dir))
    for rel, (data, mode) in rendered.task_files.items():
        write_atomic(root / "task" / rel, data, mode)
    for rel, (data, mode) in rendered.answer_files.items():
        write_atomic(root / "answer" / rel, data, mode)
    proof = prove.prove(root / "task", root / "answer", image=grader_image, limits=LIMITS, meta=rendered.meta,
                        cache_volume=CACHE, log_dir=root / "logs")
    return root / "task", proof


def graded(greeter, tmp_path: Path, files: dict[str, str]):
    """Grade the stub's work tree with ``files`` laid over it, against the proof's test ids, with canaries and
    the compiler cache read-only (as a trial's grading)."""
    from rules import images

    task_dir, proof = greeter
    tree = tmp_path / "tree"
    worktree.lay_work_tree(task_dir, tree)
    for rel, text in files.items():
        write_atomic(tree / rel, text)
    return grade(task_dir, tree, image=images.GRADER, limits=LIMITS, cache_volume=CACHE, expected=proof["tests"])


def test_reference_is_kept_with_every_test_case_and_section_by_id(greeter):
    _, proof = greeter
    assert proof["status"] == "kept", proof
    assert set(proof["tests"]) == EXPECTED
    assert proof["stub"]["verdict"] == "fail"


def test_reference_passes_a_grading_with_canaries_and_a_read_only_cache(greeter, tmp_path):
    g = graded(greeter, tmp_path, {"greeter.cpp": REFERENCE})
    assert g.verdict == "pass", (g.evidence, g.output[-3000:])
    assert g.passed_tests == len(EXPECTED)
    assert "4 test cases, 0 failed" in g.output  # the readable summary leaves the canaries out


@pytest.mark.parametrize("define", [
    "#define REQUIRE(...) (void)0",
    "%:define CHECK(...) (void)0",  # the digraph of '#'
    "# /* a comment */ undef REQUIRE",
    "#define greet(name) greet(name), \"Hello, Alice!\"",  # a name the tests use
    "#define expected greeter::greet(\"Alice\")",
    "#define EXERCISM_RUN_ALL_TESTS_OFF\n#undef EXERCISM_RUN_ALL_TESTS",
])
def test_macros_named_like_catch_or_the_tests_names_are_refused(greeter, tmp_path, define):
    header = HEADER.replace("#endif", define + "\n#endif")
    g = graded(greeter, tmp_path, {"greeter.cpp": wrong(), "greeter.h": header})
    assert g.verdict == "fail", g.evidence
    assert "nothing was built" in g.output


def test_atexit_handler_that_clears_failures_from_the_report_is_tampered(greeter, tmp_path):
    forger = r'''
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
namespace {
void clear_failures() {
    const char* path = "/tmp/lab-out/catch.xml";
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::string xml = std::regex_replace(text.str(), std::regex("<(failure|error)[^>]*>[^<]*</(failure|error)>"), "");
    xml = std::regex_replace(xml, std::regex("(errors|failures)=\"[0-9]+\""), "$1=\"0\"");
    std::ofstream(path) << xml;
    std::printf("rewrote %s\n", path);
}
const int registered = std::atexit(clear_failures);
}
'''
    g = graded(greeter, tmp_path, {"greeter.cpp": wrong(forger)})
    assert "rewrote /tmp/lab-out/catch.xml" in g.output
    assert g.verdict == "tampered", g.evidence


def test_exit_zero_from_a_static_destructor_fails(greeter, tmp_path):
    forcer = "#include <unistd.h>\nnamespace { struct Last { ~Last() { _exit(0); } } last; }\n"
    g = graded(greeter, tmp_path, {"greeter.cpp": wrong(forcer)})
    assert g.runner_exit == 0  # the exit status was forced ...
    assert g.verdict == "fail" and g.failed_tests == len(EXPECTED), g.evidence  # ... the report still tells


def test_quick_exit_from_the_code_under_test_fails(greeter, tmp_path):
    g = graded(greeter, tmp_path, {"greeter.cpp": wrong(includes="#include <cstdlib>", body="std::quick_exit(0);")})
    assert g.verdict == "fail"
    assert any("not reported" in e for e in g.evidence), g.evidence


def test_background_process_that_forges_the_report_after_the_tests_does_not_pass(greeter, tmp_path):
    forger = r'''
#include <cstdlib>
#include <unistd.h>
namespace {
const int started = [] {
    if (fork() == 0) {
        setsid();
        execl("/bin/sh", "sh", "-c",
              "for i in $(seq 1 400); do sed -i -e 's|<failure.*||; s|<error.*||' /tmp/lab-out/catch.xml; "
              "cp /tmp/lab-out/catch.xml /lab/report/forged.xml; sleep 0.02; done >/dev/null 2>&1",
              (char*)nullptr);
        _exit(0);
    }
    return 0;
}();
}
'''
    g = graded(greeter, tmp_path, {"greeter.cpp": wrong(forger)})
    assert g.verdict in ("fail", "tampered"), g.evidence


def test_writes_to_the_grader_filesystem_and_the_cache_are_refused(greeter, tmp_path):
    probe = r'''
#include <cstdio>
namespace {
const int probed = [] {
    for (const char* path : {"/usr/bin/timeout", "/usr/lib/lab-probe", "/etc/lab-probe", "/opt/lab-probe",
                             "/lab/report/exit", "/task/check.sh", "/cache/ccache/lab-probe"}) {
        std::FILE* f = std::fopen(path, "w");
        std::printf("lab-probe %s %s\n", f ? "wrote" : "refused", path);
        if (f) std::fclose(f);
    }
    return 0;
}();
}
'''
    g = graded(greeter, tmp_path, {"greeter.cpp": wrong(probe)})
    assert "lab-probe wrote" not in g.output
    assert g.output.count("lab-probe refused") == 7, g.output[-3000:]
    assert g.verdict == "fail"


def test_python_modules_left_in_the_work_tree_are_never_imported_by_the_grader(greeter, tmp_path):
    # check.sh's own Python (the macro scan, as root; the readable summary, as the tester) must not import these
    planted = 'import os\nprint("lab-probe planted module ran as", os.getuid())\nraise SystemExit(0)\n'
    copier = r'''
#include <cstdlib>
namespace {
const int copied = std::system("mkdir -p xml && cp ../re.py xml/__init__.py && cp ../re.py sys.py");
}
'''
    g = graded(greeter, tmp_path, {"greeter.cpp": wrong(copier), "re.py": planted, "xml/__init__.py": planted,
                                   "os.py": planted})
    assert "planted module ran" not in g.output
    assert g.verdict == "fail" and g.failed_tests == len(EXPECTED), g.evidence


def test_test_file_the_agent_edited_is_laid_back(greeter, tmp_path):
    # every test case but the first switched off with an #if 0 of the agent's own: the pristine file comes back
    edited = TEST.replace("#if defined(EXERCISM_RUN_ALL_TESTS)", "#if 0")
    g = graded(greeter, tmp_path, {"greeter.cpp": wrong(), "greeter_test.cpp": edited})
    assert g.verdict == "fail" and g.failed_tests == len(EXPECTED), g.evidence


def test_comparison_swapped_for_the_tests_types_is_tampered(greeter, tmp_path):
    # no macro at all: an overload that the tests' own comparisons (a std::string against a literal) pick over
    # the standard one, always true; the failing canary compares the same way, and passes too
    header = HEADER.replace("#endif", "namespace std {\n"
                                      "inline bool operator==(const std::string&, const char*) { return true; }\n"
                                      "}\n#endif")
    g = graded(greeter, tmp_path, {"greeter.cpp": wrong(), "greeter.h": header})
    assert g.verdict == "tampered", (g.evidence, g.output[-3000:])


def test_a_proof_takes_over_a_compiler_cache_with_folders_root_wrote(greeter, tmp_path):
    # an older lab ran the compiler as root: its folders in the shared cache must not fail a proof's build
    from rules import images, sandbox

    task_dir, proof = greeter
    res = sandbox.run(images.GRADER, ["sh", "-c", "cd /cache/ccache && for d in 0 1 2 3 4 5 6 7 8 9 a b c d e f; "
                                      "do mkdir -p $d && chown 0:0 $d && chmod 755 $d; done"],
                      mounts=[sandbox.Mount(sandbox.volume(CACHE), "/cache", kind="volume")], network="none")
    assert res.exit_code == 0, res.output
    answer = task_dir.parent / "answer"
    meta = json.loads((task_dir / "task.json").read_text())
    again = prove.prove(task_dir, answer, image=images.GRADER, limits=LIMITS, meta=meta, cache_volume=CACHE)
    assert again["status"] == "kept", again["reference"]
    assert set(again["tests"]) == EXPECTED


SEED_CHECK = r"""
set -u
for mode in fresh seeded; do
  rm -rf /tmp/lab-cpp && mkdir -p /tmp/lab-cpp/greeter && cp -R /src/. /tmp/lab-cpp/greeter/
  build=/tmp/lab-cpp/greeter/lab-build
  if [ $mode = seeded ]; then cp -R /opt/lab/cpp/cmake-seed "$build"; else mkdir "$build"; fi
  cd "$build"
  cmake -S /tmp/lab-cpp/greeter -B . -DEXERCISM_RUN_ALL_TESTS=1 -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    > /tmp/$mode.log 2>&1 || { echo "cmake failed ($mode)"; cat /tmp/$mode.log; }
  cd / && rm -rf /tmp/$mode && cp -R /tmp/lab-cpp/greeter/lab-build /tmp/$mode
done
grep -c "Detecting CXX compiler ABI info - done" /tmp/fresh.log /tmp/seeded.log
diff -r -x CMakeOutput.log -x CMakeError.log -x Makefile.cmake -x CMakeScratch /tmp/fresh /tmp/seeded \
  && echo SAME-BUILD-FILES
"""


def test_the_cmake_seed_gives_the_build_files_a_fresh_configure_gives(greeter, tmp_path):
    """The image's CMake seed (templates/images/grader/cpp/cmake-seed.sh) spares each grading the toolchain
    checks and changes nothing cmake writes: the cache and every build file as a fresh configure's (but the logs
    and Makefile.cmake, the list of files that would make make re-run cmake)."""
    from rules import images, sandbox

    task_dir, _ = greeter
    tree = tmp_path / "tree"
    worktree.lay_work_tree(task_dir, tree)
    res = sandbox.run(images.GRADER, ["bash", "-c", SEED_CHECK],
                      mounts=[sandbox.Mount(str(tree), "/src", read_only=True)], network="none", limits=LIMITS,
                      workdir="/", read_only=True,
                      tmpfs={"/tmp": "size=1g,exec", "/work": "size=1g,exec"})
    assert "SAME-BUILD-FILES" in res.output, res.output[-3000:]
    assert "/tmp/fresh.log:1" in res.output and "/tmp/seeded.log:0" in res.output, res.output[-3000:]
