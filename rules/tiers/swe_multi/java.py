"""The Java runner of the swe-multi tier (Maven repositories): which JDK each instance needs, where its tests live,
how its environment image is built and how check.sh runs its tests (``templates/swe_multi/java/``).

- Toolchains: ``TOOLCHAINS``, the ``java_version`` SWE-bench v4.1.0 gives each instance
  (``swebench/harness/constants/java.py``, its ``docker_specs``): OpenJDK from Debian's packages (11: bullseye, the
  last suite that has it; 17: bookworm), and Maven ``MAVEN`` (the Maven SWE-bench's ``mvnd`` carries, with its
  default Surefire) from Maven Central, fetched by Debian's own Maven, which then leaves.
- Dependencies: the image runs, with the network on, the Maven lifecycle the grading runs (``test`` of the
  module of the instance's tests and the modules it needs, ``-am``) over the base commit, on one test class of
  lab's own (``LabWarmTest``: empty, never a test of the repository), so that every plugin, dependency and
  Surefire provider the grading needs is in the image's local repository; a grading runs ``mvn -o``, offline.
- Tests: the classes that define the dataset's tests, and the canaries' class, selected by ``-Dtest``; Surefire's
  XML reports are the report (``rules.reports.parse_junit``: ids ``classname::name``). SWE-bench's Maven names are
  ``-Dtest`` arguments (``swebench/harness/log_parsers/java.py``, ``parse_log_maven``): ``pkg.Class#method`` is
  the id ``pkg.Class::method``; a bare ``Class`` (javaparser's) stands for every test of that class (task.json
  ``truncated``, ``subtest_sep`` ``::``), as ``-Dtest=Class`` ran them all.
- Canaries: the aider tier's Java canary writer (``templates/images/grader/lab_grader/java_canaries.py``, copied
  into the image) draws the names (fresh words of the instance's test names) and the mutants (copies of the
  tests with an expected value changed, where the tests use AssertJ); the canaries' class itself is written for
  the JUnit the instance's tests use (4 or 5) with that JUnit's own assertions (the repositories need not have
  AssertJ), beside the first FAIL_TO_PASS test's class, in its package.
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

LANGUAGE = "java"
REPORT = "junit"  # rules.reports: Surefire's XML reports
SUBTEST_SEP = "::"  # a class name standing for its tests: classname::name
CANARY_WRITER = TEMPLATES / "images" / "grader" / "lab_grader" / "java_canaries.py"
TEMPLATE_DIR = "swe_multi/java"
MAVEN = "3.9.9"  # Maven from Maven Central (its default Surefire is 3.2.5)
SUITES = {"11": "bullseye", "17": "bookworm", "21": "trixie"}  # the Debian suite whose OpenJDK is that version
TEST_ROOT = "/src/test/java/"
# Maven's settings in the image: its local repository, which the build fills and gradings read offline
SETTINGS = b"<settings><localRepository>/opt/lab/m2</localRepository></settings>\n"

# SWE-bench v4.1.0, swebench/harness/constants/java.py: each Maven instance's docker_specs java_version (facts)
TOOLCHAINS = {
    "google/gson": {v: "11" for v in ("2158", "2024", "2479", "2134", "2061", "2311", "1100", "1093", "1014")},
    "apache/druid": {v: "11" for v in ("15402", "14092", "14136", "13704", "16875")},
    "javaparser/javaparser": {"4561": "17", "4538": "17"},
}


def env_for(repo: str, version: str, extra: dict | None = None) -> Env | None:
    """The environment of ``repo`` at dataset ``version``: its JDK from ``extra`` (suite.toml's
    ``[toolchains."owner/name"]``: version → Java version) or else ``TOOLCHAINS``; None when neither has one.
    Raises Rejected for a Java version no Debian suite here packages."""
    jdk = table_toolchain(repo, version, extra, TOOLCHAINS)
    if not jdk:
        return None
    if jdk not in SUITES:
        raise Rejected(f"Java {jdk!r} for {repo} {version}: lab builds Java {', '.join(SUITES)} (Debian's OpenJDK)")
    return Env(name=env_name(repo, version), repo=repo, version=version, language=LANGUAGE, toolchain=jdk,
               suite=SUITES[jdk])


@dataclass(frozen=True)
class JavaTests:
    """Where an instance's tests are: ``module`` (the Maven module folder holding them, ``.`` the root),
    ``classes`` (the fully qualified test classes the run selects, sorted), ``ids`` (dataset name → report id),
    ``whole`` (dataset names that name a class: each stands for its tests), ``canary_file`` (the source of the
    first FAIL_TO_PASS test's class), ``junit`` (4 or 5: what that class is written for)."""

    module: str
    classes: tuple[str, ...]
    ids: dict
    whole: tuple[str, ...]
    canary_file: str
    junit: int


def _split(path: str) -> tuple[str, str] | None:
    """``gson/src/test/java/com/x/FooTest.java`` → (``gson``, ``com.x.FooTest``); None for other paths."""
    if not path.endswith(".java") or TEST_ROOT not in f"/{path}":
        return None
    head, _, tail = f"/{path}".partition(TEST_ROOT)
    return (head.strip("/") or "."), tail[:-len(".java")].replace("/", ".")


def locate(names: list[str], fail_to_pass: list[str], files: dict[str, str]) -> JavaTests:
    """Find the tests ``names`` (SWE-bench's Maven names: ``pkg.Class#method`` or a bare ``Class``) in ``files``
    (every test source path of the tree after the test patch → its text). Raises Rejected naming the classes no
    file defines or several define, and instances whose tests sit in more than one Maven module."""
    by_fqcn: dict[str, str] = {}
    by_simple: dict[str, list[str]] = {}
    for path in files:
        split = _split(path)
        if split:
            by_fqcn[split[1]] = path
            by_simple.setdefault(split[1].rsplit(".", 1)[-1], []).append(split[1])
    ids, whole, lost, classes = {}, [], [], {}
    for name in names:
        cls, _, method = name.partition("#")
        fqcn = cls if cls in by_fqcn else None
        if fqcn is None and "." not in cls and len(by_simple.get(cls, [])) == 1:
            fqcn = by_simple[cls][0]
        if fqcn is None:
            lost.append(name)
            continue
        classes[fqcn] = by_fqcn[fqcn]
        ids[name] = f"{fqcn}::{method}" if method else fqcn
        if not method:
            whole.append(name)
    if lost:
        raise Rejected(f"test class(es) found in no single src/test/java file after the test patch: "
                       f"{', '.join(lost[:10])}")
    modules = sorted({_split(p)[0] for p in classes.values()})
    if len(modules) != 1:
        raise Rejected(f"the tests sit in {len(modules)} Maven modules ({', '.join(modules)}); lab runs one")
    first = fail_to_pass[0].partition("#")[0] if fail_to_pass else names[0].partition("#")[0]
    canary_file = next(p for c, p in classes.items() if c == first or c.rsplit(".", 1)[-1] == first)
    junit = 5 if re.search(r"^\s*import\s+(static\s+)?org\.junit\.jupiter\.", files[canary_file], re.M) else 4
    return JavaTests(modules[0], tuple(sorted(classes)), ids, tuple(whole), canary_file, junit)


def test_files_of(tar: bytes, after: dict[str, bytes | None]) -> dict[str, str]:
    """Every ``.java`` file under a ``src/test/java`` of the tree ``tar`` (the base commit) with the test patch's
    files ``after`` laid over it (None: deleted): path → text."""
    out: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        for m in tf.getmembers():
            if m.isfile() and _split(m.name):
                out[m.name] = tf.extractfile(m).read().decode("utf-8", errors="replace")
    for path, data in after.items():
        if _split(path):
            if data is None:
                out.pop(path, None)
            else:
                out[path] = data.decode("utf-8", errors="replace")
    return out


def _poms(base_files: set[str]) -> list[str]:
    """The build's own files of the base tree: every ``pom.xml`` and what ``.mvn/`` holds (Maven's options,
    extensions and JVM flags), sorted."""
    return sorted(p for p in base_files if p == "pom.xml" or p.endswith("/pom.xml") or p.startswith(".mvn/"))


def context(tests: JavaTests, base_files: set[str]) -> dict:
    """check.sh's Java fields: the module, the test classes, the canaries' file and JUnit, the module's test tree
    and the build files to lay back from the base commit."""
    test_dir = "src/test" if tests.module == "." else f"{tests.module}/src/test"
    reports = "target/surefire-reports" if tests.module == "." else f"{tests.module}/target/surefire-reports"
    return {"module": tests.module, "reports_dir": reports, "test_classes": list(tests.classes), "canary_file": tests.canary_file,
            "junit": tests.junit, "test_dir": test_dir, "build_files": _poms(base_files),
            "has_test_dir": any(p.startswith(test_dir + "/") for p in base_files)}


def pretest(fields: dict, base_files: set[str]) -> dict | None:
    """check.sh's Java fields for the pre-existing tests (``pretest.sh``): the instance's test classes that the
    base commit has, canaries beside the first of them; None when it has none."""
    kept = [c for c in fields["test_classes"]
            if f"{fields['test_dir']}/java/{c.replace('.', '/')}.java" in base_files]
    if not kept:
        return None
    canary = fields["canary_file"] if fields["canary_file"] in base_files else \
        f"{fields['test_dir']}/java/{kept[0].replace('.', '/')}.java"
    return {**fields, "test_classes": kept, "canary_file": canary}


def test_cmd(tests: JavaTests) -> str:
    """The agents' command for the instance's test classes, offline, as the grading runs them."""
    pl = "" if tests.module == "." else f" -pl {shlex.quote(tests.module)} -am"
    return (f"mvn -o -B{pl} test -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false "
            f"-Dtest={shlex.quote(','.join(tests.classes))}")


# ---- the environment image ----

def dockerfile(env: Env, base: str, fields: dict) -> str:
    """The Dockerfile of ``env``'s image, ``FROM`` the tag ``base``: the JDK, Maven, and the local repository the
    grading of ``fields`` (``context``'s) needs."""
    from rules.render import render as render_template

    return render_template(f"{TEMPLATE_DIR}/env.Dockerfile.j2", env=env, base=base, maven=MAVEN, **fields)


def build_env(env: Env, repo: Path, commit: str, fields: dict, log=sys.stderr) -> dict:
    """Build ``env``'s image from ``repo`` at ``commit`` (host networking and the host's CA bundle) and stamp it in
    ``.lab/images/<stamp>.json``, rewritten only when the image id changed. Returns the stamp ``{"image", "id",
    "env", "seconds", "built_here", "java", "bytes"}``. Raises SandboxError."""
    from rules import images, sandbox
    from rules.files import read_json, write_json
    from rules.upstream import tree_tar

    start, since = time.monotonic(), time.time()
    base = sandbox.ensure_base_image(env.base, log=log)
    files = {"ca-certificates.crt": images.HOST_CA.read_bytes() if images.HOST_CA.is_file() else b"",
             "java_canaries.py": CANARY_WRITER.read_bytes(), "maven-settings.xml": SETTINGS}
    with tarfile.open(fileobj=io.BytesIO(tree_tar(repo, commit))) as tf:
        for m in tf.getmembers():
            if m.isfile():
                files[f"src/{m.name}"] = tf.extractfile(m).read()
    root = "src" if fields["module"] == "." else f"src/{fields['module']}"
    if f"{root}/pom.xml" not in files:
        from rules.sandbox import SandboxError

        raise SandboxError(f"environment {env.name}: {env.repo} has no {root[4:] or '.'}/pom.xml at {commit[:12]} "
                           "(lab builds Maven projects only)")
    image = sandbox.build_image(env.tag, dockerfile(env, base, fields), files, log=log,
                                labels={"lab.env": env.name, "lab.env.digest": env.digest()})
    old = read_json(images.stamp_path(env.stamp_name))
    if isinstance(old, dict) and old.get("id") == image and old.get("env") == env.name:
        return old
    probe = sandbox.run(env.tag, ["sh", "-c", "java -version 2>&1 | head -n1; mvn -v | head -n1"], network="none")
    size = sandbox.client().images.get(image).attrs.get("Size")
    stamp = {"image": env.tag, "id": image, "env": env.name, "seconds": round(time.monotonic() - start, 1),
             "built_here": images.built_here(image, since), "java": probe.output.strip(), "bytes": size}
    write_json(images.stamp_path(env.stamp_name), stamp, only_if_changed=True)
    return stamp


def tests(inst, tar: bytes, tests_after: dict[str, bytes | None], base_files: set[str]):
    """The runner's part of a render (``rules.tiers.swe_multi.render.Runner.tests``): check.sh's Java fields (with
    ``report_ids``, dataset name → report id), the dataset names standing for a whole class, the agents' test
    command and the image's build inputs (the fields). Raises Rejected (tests no file defines)."""
    names = list(inst.fail_to_pass) + list(inst.pass_to_pass)
    found = locate(names, list(inst.fail_to_pass), test_files_of(tar, tests_after))
    fields = context(found, base_files)
    return {**fields, "report_ids": dict(found.ids)}, list(found.whole), test_cmd(found), fields


def build(env: Env, repo: Path, commit: str, fields: dict, log=sys.stderr) -> dict:
    """``build_env`` (the runner's ``build``)."""
    return build_env(env, repo, commit, fields, log=log)


def runner():
    """This module as a ``rules.tiers.swe_multi.render.Runner``."""
    from rules.tiers.swe_multi.render import Runner

    return Runner(LANGUAGE, REPORT, SUBTEST_SEP, TEMPLATE_DIR, env_for, tests, build, pretest)
