"""The C/C++ runner of the swe-multi tier, for the repositories whose tests are googletest binaries built by CMake
(fmt): which test binary each instance needs, where its tests live, how its environment image is built and how
check.sh runs its tests (``templates/swe_multi/c/``).

- Toolchain: Debian bookworm's gcc/g++, cmake and ccache. ``TARGETS`` is the CMake target (and CTest test) of the
  test binary SWE-bench v4.1.0 builds and runs for each instance (``swebench/harness/constants/c.py``,
  ``SPECS_FMT``: ``cmake --build build --target <t>``, ``ctest --test-dir build -V -R <t>``). fmt vendors its
  googletest (``test/gtest``), so nothing is fetched but Debian packages.
- Build: the image configures and builds that target once at the base commit, in ``/work/build`` with the source
  at ``/work`` (where a grading has them), through ccache; the sources are removed and the cache kept, read-only, so
  a grading recompiles only what the patches changed.
- Tests: the target's binary run by CTest with ``GTEST_OUTPUT=xml:...``: googletest's XML report, read on the host
  by test identity (``rules.reports.parse_gtest_xml``: ``suite.name``, the names SWE-bench's googletest log parser
  reads). Every test of the binary runs (as SWE-bench runs it); the dataset's names are found by their ``TEST``
  macros in the test folder after the test patch.
- Canaries: the aider tier's C++ writer reads Catch2, not googletest, so this runner has its own
  (``templates/swe_multi/c/gtest_canaries.py``, copied into the image): failing and passing ``TEST``s of the test
  file's own suites, named from its tests' words, in the test file of the first FAIL_TO_PASS test.

jq (automake's ``make check``), redis and valkey (their Tcl suite) and micropython (run-tests.py) have no runner
here yet: ``languages.PENDING`` names what each lacks, and their instances are rejected with it.
"""
from __future__ import annotations

import io
import re
import shlex
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from rules.config import TEMPLATES
from rules.tier import Rejected
from rules.tiers.swe_multi.env import Env, env_name, table_toolchain

LANGUAGE = "c"
REPORT = "gtest-xml"  # rules.reports: googletest's XML report
SUBTEST_SEP = "/"  # unused: a googletest name is one report id
TEMPLATE_DIR = "swe_multi/c"
CANARY_WRITER = TEMPLATES / TEMPLATE_DIR / "gtest_canaries.py"
TEST_DIR = "test"  # where fmt keeps its test sources (and its vendored googletest)

# SWE-bench v4.1.0, swebench/harness/constants/c.py, SPECS_FMT: each version's test target (facts, by version)
TARGETS = {
    "fmtlib/fmt": {
        "3863": "ranges-test", "3158": "ranges-test", "2457": "ranges-test",
        "3901": "format-test", "3750": "format-test", "3248": "format-test", "2317": "format-test",
        "2310": "format-test", "3272": "xchar-test", "3729": "std-test", "1683": "printf-test"},
}

_TARGET = re.compile(r"^[A-Za-z0-9_.+-]+$")
_TEST = re.compile(r"^\s*(?:TEST|TEST_F|TYPED_TEST|TEST_P)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.M)
_SOURCE = (".cc", ".cpp", ".cxx", ".h", ".hpp")


def env_for(repo: str, version: str, extra: dict | None = None) -> Env | None:
    """The environment of ``repo`` at dataset ``version``: its test target from ``extra`` (suite.toml's
    ``[toolchains."owner/name"]``: version → CMake target) or else ``TARGETS``; None when neither has one."""
    target = table_toolchain(repo, version, extra, TARGETS)
    if not target:
        return None
    if not _TARGET.match(target):
        raise Rejected(f"CMake target {target!r} for {repo} {version} is not a target name (give e.g. format-test)")
    return Env(name=env_name(repo, version), repo=repo, version=version, language=LANGUAGE, toolchain=target)


@dataclass(frozen=True)
class GTests:
    """Where an instance's tests are: ``canary_file`` (the test source defining the first FAIL_TO_PASS test)
    and ``defined`` (every ``suite.name`` the test folder defines, typed tests by their suite's name)."""

    canary_file: str
    defined: frozenset[str]


def _key(name: str) -> str:
    """A dataset name as its macro writes it: ``is_string_test/0.is_string`` → ``is_string_test.is_string``
    (a typed or parameterized test's instance number left out)."""
    suite, _, test = name.partition(".")
    return f"{suite.split('/', 1)[0]}.{test.split('/', 1)[0]}"


def locate(fail_to_pass: list[str], files: dict[str, str]) -> GTests:
    """Find the FAIL_TO_PASS tests (googletest names, ``suite.name``) in ``files`` (every test source of the
    test folder after the test patch → its text). Raises Rejected naming the ones no ``TEST`` macro defines (the
    canaries need the file of the first)."""
    where: dict[str, str] = {}
    for path in sorted(files):
        for m in _TEST.finditer(files[path]):
            where.setdefault(f"{m.group(1)}.{m.group(2)}", path)
    lost = [n for n in fail_to_pass if _key(n) not in where]
    if lost:
        raise Rejected(f"test(s) defined by no TEST macro under {TEST_DIR}/ after the test patch: "
                       f"{', '.join(lost[:10])}")
    return GTests(where[_key(fail_to_pass[0])], frozenset(where))


def test_files_of(tar: bytes, after: dict[str, bytes | None]) -> dict[str, str]:
    """Every C/C++ source under the test folder of the tree ``tar`` (the base commit) with the test patch's
    files ``after`` laid over it (None: deleted), googletest's own sources left out: path → text."""
    def ours(path: str) -> bool:
        return path.startswith(TEST_DIR + "/") and path.endswith(_SOURCE) and "/gtest/" not in path \
            and "/gmock/" not in path

    out: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        for m in tf.getmembers():
            if m.isfile() and ours(m.name):
                out[m.name] = tf.extractfile(m).read().decode("utf-8", errors="replace")
    for path, data in after.items():
        if ours(path):
            if data is None:
                out.pop(path, None)
            else:
                out[path] = data.decode("utf-8", errors="replace")
    return out


TARGET_FILE = "/opt/lab/target"  # in the image: the environment's test target (env.Dockerfile.j2 writes it)


def test_cmd() -> str:
    """The agents' command for the pre-existing tests of the instance's test binary, as the grading builds and
    runs it (offline: the image's ccache and Debian's toolchain; the target named in the image)."""
    return (f't=$(cat {TARGET_FILE}) && cmake -B build -S . -DCMAKE_CXX_COMPILER_LAUNCHER=ccache '
            '-DCMAKE_C_COMPILER_LAUNCHER=ccache && cmake --build build --parallel 2 --target "$t" && '
            'ctest --test-dir build --output-on-failure -R "^$t\\$"')


def tests(inst, tar: bytes, tests_after: dict[str, bytes | None], base_files: set[str]):
    """The runner's part of a render (``rules.tiers.swe_multi.render.Runner.tests``): check.sh's fields (the
    test folder laid back from the base, the canary file; the target is the image's, ``TARGET_FILE``), no name
    standing for several ids, the agents' test command, and no build input besides the environment. Raises
    Rejected."""
    found = locate(list(inst.fail_to_pass), test_files_of(tar, tests_after))
    fields = {"test_dir": TEST_DIR, "canary_file": found.canary_file,
              "test_dir_in_base": any(p.startswith(TEST_DIR + "/") for p in base_files),
              "build_files": build_files(base_files)}
    return fields, [], test_cmd(), []


def build_files(base_files: set[str]) -> list[str]:
    """The base commit's CMake files outside the test folder (every ``CMakeLists.txt`` and ``*.cmake``), which
    check.sh lays back: CMake code the tester runs at configure time, before the test folder is compiled, could
    rewrite the tests (red team 6). No gold patch of fmt's 11 instances touches one."""
    return sorted(p for p in base_files if not p.startswith(TEST_DIR + "/")
                  and (p.rsplit("/", 1)[-1] == "CMakeLists.txt" or p.endswith(".cmake")))


def pretest(fields: dict, base_files: set[str]) -> dict | None:
    """check.sh's fields for the pre-existing tests (``pretest.sh``): the same binary with the base's test folder,
    the canaries in the base's copy of the canary file; None when the base commit has no such file."""
    if fields["canary_file"] not in base_files:
        return None
    return dict(fields)


# ---- the environment image ----

def dockerfile(env: Env, base: str) -> str:
    """The Dockerfile of ``env``'s image, ``FROM`` the tag ``base``."""
    from rules.render import render as render_template

    return render_template(f"{TEMPLATE_DIR}/env.Dockerfile.j2", env=env, base=base)


def build_env(env: Env, repo: Path, commit: str, log=sys.stderr) -> dict:
    """Build ``env``'s image from ``repo`` at ``commit`` (Debian's toolchain, the test target built once into a
    ccache; host networking and the host's CA bundle) and stamp it in ``.lab/images/<stamp>.json``, rewritten
    only when the image id changed. Returns the stamp ``{"image", "id", "env", "seconds", "built_here", "cc",
    "bytes"}``. Raises SandboxError."""
    from rules import images, sandbox
    from rules.files import read_json, write_json
    from rules.upstream import tree_tar

    start, since = time.monotonic(), time.time()
    base = sandbox.ensure_base_image(env.base, log=log)
    files = {"ca-certificates.crt": images.HOST_CA.read_bytes() if images.HOST_CA.is_file() else b"",
             "gtest_canaries.py": CANARY_WRITER.read_bytes()}
    with tarfile.open(fileobj=io.BytesIO(tree_tar(repo, commit))) as tf:
        for m in tf.getmembers():
            if m.isfile():
                files[f"src/{m.name}"] = tf.extractfile(m).read()
    if "src/CMakeLists.txt" not in files:
        from rules.sandbox import SandboxError

        raise SandboxError(f"environment {env.name}: {env.repo} has no CMakeLists.txt at {commit[:12]} (lab's C/C++ "
                           "runner builds CMake projects only)")
    image = sandbox.build_image(env.tag, dockerfile(env, base), files, log=log,
                                labels={"lab.env": env.name, "lab.env.digest": env.digest()})
    old = read_json(images.stamp_path(env.stamp_name))
    if isinstance(old, dict) and old.get("id") == image and old.get("env") == env.name:
        return old
    probe = sandbox.run(env.tag, ["g++", "--version"], network="none")
    here = images.built_here(image, since)
    size = sandbox.client().images.get(image).attrs.get("Size")
    stamp = {"image": env.tag, "id": image, "env": env.name, "seconds": round(time.monotonic() - start, 1),
             "built_here": here, "cc": probe.output.strip().splitlines()[0] if probe.output else "", "bytes": size}
    write_json(images.stamp_path(env.stamp_name), stamp, only_if_changed=True)
    return stamp


def build(env: Env, repo: Path, commit: str, inputs: list, log=sys.stderr) -> dict:
    """``build_env`` (the runner's ``build``)."""
    return build_env(env, repo, commit, log=log)


def runner():
    """This module as a ``rules.tiers.swe_multi.render.Runner``."""
    from rules.tiers.swe_multi.render import Runner

    return Runner(LANGUAGE, REPORT, SUBTEST_SEP, TEMPLATE_DIR, env_for, tests, build, pretest, CANARY_WRITER)
