"""The Go runner of the swe-multi tier: which Go each instance needs, where its tests live, how its environment
image is built and how check.sh runs its tests (``templates/swe_multi/go/``).

- Toolchains: ``TOOLCHAINS``, the ``go_version`` SWE-bench v4.1.0 gives each instance
  (``swebench/harness/constants/go.py``, its ``docker_specs``), fetched at image build through the Go module proxy
  (``GOTOOLCHAIN=go<version> go env GOROOT``, bootstrapped by Debian bookworm-backports' Go 1.23) and laid at
  ``/usr/local/go``.
- Modules: ``go mod download`` at the instance's base commit, then every test package of the grading compiled
  once (``go test -c``) with the network still on, so the module cache and the build cache are in the image;
  a grading runs with ``GOPROXY=off GOSUMDB=off GOFLAGS=-mod=mod``, offline.
- Tests: ``go test -json`` over the packages that define the instance's tests (found by ``func TestX(`` in the
  base commit's ``_test.go`` files with the test patch applied), ``-run`` limited to the top-level tests the
  dataset names and the canaries. The host reads the report by test identity (``rules.reports.parse_go_json``:
  Go's test names, subtests by their leaves). A dataset name of a test with subtests (its function calls
  ``.Run(``) stands for the leaves below it (task.json ``truncated``, ``subtest_sep`` ``/``): SWE-bench's log
  parser lists parents and leaves alike.
- Canaries: the aider tier's Go canary writer (``templates/images/grader/lab_grader/go_canaries.py``, copied into
  the image) writes them into the test file of the instance's first FAIL_TO_PASS test.
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

LANGUAGE = "go"
REPORT = "go-json"  # rules.reports: go test -json
SUBTEST_SEP = "/"
CANARY_WRITER = TEMPLATES / "images" / "grader" / "lab_grader" / "go_canaries.py"
TEMPLATE_DIR = "swe_multi/go"
BOOTSTRAP_GO = "1.23"  # Debian bookworm-backports' golang-<this>-go: new enough to fetch any toolchain (Go >= 1.21)

# SWE-bench v4.1.0, swebench/harness/constants/go.py: each instance's docker_specs go_version (facts, by version)
TOOLCHAINS = {
    "caddyserver/caddy": {
        "6411": "1.23.8", "6345": "1.23.8", "6115": "1.23.8", "6051": "1.23.8", "5404": "1.20.14", "6370": "1.23.8",
        "6350": "1.23.8", "6288": "1.23.8", "5995": "1.23.8", "4943": "1.18.10", "5626": "1.19.13",
        "5761": "1.23.8", "5870": "1.23.8", "4774": "1.18.10"},
    "hashicorp/terraform": {"35611": "1.23.8", "35543": "1.23.8", "34900": "1.22.12", "34580": "1.21.13",
                            "34814": "1.22.12"},
    "prometheus/prometheus": {"14861": "1.23.8", "13845": "1.23.8", "12874": "1.23.8", "11859": "1.23.8",
                              "10720": "1.23.8", "10633": "1.23.8", "9248": "1.23.8", "15142": "1.23.8"},
    "gohugoio/hugo": {"12768": "1.23.8", "12579": "1.23.8", "12562": "1.23.8", "12448": "1.23.8", "12343": "1.23.8",
                      "12204": "1.23.8", "12171": "1.23.8"},
    "gin-gonic/gin": {"4003": "1.23.8", "3820": "1.23.8", "3741": "1.23.8", "2755": "1.23.8", "3227": "1.23.8",
                      "2121": "1.23.8", "1957": "1.23.8", "1805": "1.23.8"},
}

_FUNC = re.compile(r"^func (Test\w*)\(\s*\w+\s+\*testing\.T\s*\)", re.M)
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")


def env_for(repo: str, version: str, extra: dict | None = None) -> Env | None:
    """The environment of ``repo`` at dataset ``version``: its Go toolchain from ``extra`` (suite.toml's
    ``[toolchains."owner/name"]``: version → Go version) or else ``TOOLCHAINS``; None when neither has one."""
    go = table_toolchain(repo, version, extra, TOOLCHAINS)
    if not go:
        return None
    if not _VERSION.match(go):
        raise Rejected(f"Go toolchain {go!r} for {repo} {version} is not a version (give e.g. 1.23.8)")
    return Env(name=env_name(repo, version), repo=repo, version=version, language=LANGUAGE, toolchain=go)


@dataclass(frozen=True)
class GoTests:
    """Where an instance's tests are: ``packages`` (``./dir`` of each folder that defines one, sorted; ``.`` the
    module root), ``top`` (the top-level test functions the run selects, sorted), ``parents`` (dataset names
    of tests whose function runs subtests: each stands for its leaves), ``canary_file`` (the test file of the
    first FAIL_TO_PASS test) and ``test_files`` (every ``_test.go`` file of those packages after the test patch,
    sorted: check.sh lays them back as the base commit and the test patch have them)."""

    packages: tuple[str, ...]
    top: tuple[str, ...]
    parents: tuple[str, ...]
    canary_file: str
    test_files: tuple[str, ...]


def _package(path: str) -> str:
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    return f"./{folder}" if folder else "."


def _body(text: str, start: int) -> str:
    """The text of the function starting at ``start``: up to the next top-level ``func`` (or the end)."""
    nxt = re.compile(r"^(func|type|var|const) ", re.M).search(text, start + 1)
    return text[start:nxt.start() if nxt else len(text)]


def locate(names: list[str], fail_to_pass: list[str], files: dict[str, str], touched: list[str] = ()) -> GoTests:
    """Find the tests ``names`` (SWE-bench Go test names, ``TestX`` or ``TestX/sub``) in ``files`` (every
    ``_test.go`` path of the tree after the test patch → its text). A name several packages define is taken
    from the packages of the test patch's files (``touched``) when exactly one of them defines it. Raises
    Rejected naming the names no file defines, or that stay defined in more than one package (their report id
    would be ambiguous)."""
    defs: dict[str, list[tuple[str, str]]] = {}
    for path, text in files.items():
        if "/testdata/" in f"/{path}" or "/vendor/" in f"/{path}":
            continue
        for m in _FUNC.finditer(text):
            defs.setdefault(m.group(1), []).append((path, _body(text, m.start())))
    top = sorted({n.split(SUBTEST_SEP, 1)[0] for n in names})
    lost = [t for t in top if t not in defs]
    if lost:
        raise Rejected(f"test function(s) defined in no _test.go file after the test patch: {', '.join(lost[:10])}")
    patched = {_package(p) for p in touched}
    for t in top:
        if len({_package(p) for p, _ in defs[t]}) > 1:
            mine = [d for d in defs[t] if _package(d[0]) in patched]
            if len({_package(p) for p, _ in mine}) == 1:
                defs[t] = mine
    twice = [t for t in top if len({_package(p) for p, _ in defs[t]}) > 1]
    if twice:
        raise Rejected(f"test function(s) defined in more than one package (Go's report names a test without its "
                       f"package): {', '.join(twice[:10])}")
    packages = sorted({_package(defs[t][0][0]) for t in top})
    parents = sorted(n for n in names if SUBTEST_SEP not in n and ".Run(" in defs[n][0][1])
    first = fail_to_pass[0].split(SUBTEST_SEP, 1)[0] if fail_to_pass else top[0]
    in_packages = sorted(p for p in files if _package(p) in packages)  # a file directly in one of them
    return GoTests(tuple(packages), tuple(top), tuple(parents), defs[first][0][0], tuple(in_packages))


def test_files_of(tar: bytes, after: dict[str, bytes | None]) -> dict[str, str]:
    """Every ``_test.go`` file of the tree ``tar`` (the base commit) with the test patch's files ``after`` laid
    over it (None: deleted): path → text."""
    out: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        for m in tf.getmembers():
            if m.isfile() and m.name.endswith("_test.go"):
                out[m.name] = tf.extractfile(m).read().decode("utf-8", errors="replace")
    for path, data in after.items():
        if path.endswith("_test.go"):
            if data is None:
                out.pop(path, None)
            else:
                out[path] = data.decode("utf-8", errors="replace")
    return out


def context(tests: GoTests, base_files: set[str]) -> dict:
    """check.sh's Go fields: the packages, the top-level tests, the canary file, and the package test files to
    lay back from the base commit (those that exist there)."""
    return {"packages": list(tests.packages), "run_names": list(tests.top), "canary_file": tests.canary_file,
            "package_test_dirs": [p[2:] if p != "." else "." for p in tests.packages],
            "package_base_test_files": [p for p in tests.test_files if p in base_files]}


def pretest(fields: dict, base_files: set[str]) -> dict | None:
    """check.sh's Go fields for the pre-existing tests (``pretest.sh``): every test of the instance's packages
    as the base commit has them (no ``-run``: the whole packages, as the agents' ``test_cmd`` runs them), the
    canaries in the base's file of the first FAIL_TO_PASS test or else the first test file of those packages;
    None when the base commit has no test file there."""
    files = fields["package_base_test_files"]
    if not files:
        return None
    canary = fields["canary_file"] if fields["canary_file"] in base_files else files[0]
    return {**fields, "canary_file": canary, "run_names": []}


def test_cmd(tests: GoTests) -> str:
    """The agents' command for the pre-existing tests of the instance's packages, offline, as the grading runs
    them (without the held-out tests)."""
    return "go test -count=1 " + " ".join(shlex.quote(p) for p in tests.packages)


# ---- the environment image ----

def dockerfile(env: Env, base: str, packages: list[str]) -> str:
    """The Dockerfile of ``env``'s image, ``FROM`` the tag ``base``: the toolchain, the module and build caches
    of the instance's ``packages``."""
    from rules.render import render as render_template

    return render_template(f"{TEMPLATE_DIR}/env.Dockerfile.j2", env=env, base=base, bootstrap=BOOTSTRAP_GO,
                           packages=packages)


def build_env(env: Env, repo: Path, commit: str, packages: list[str], log=sys.stderr) -> dict:
    """Build ``env``'s image from ``repo`` at ``commit`` (its module and build caches for ``packages``; host
    networking and the host's CA bundle) and stamp it in ``.lab/images/<stamp>.json``, rewritten only when the
    image id changed. Returns the stamp ``{"image", "id", "env", "seconds", "built_here", "go", "bytes"}``
    (``built_here``: ``images.built_here``). Raises
    SandboxError."""
    from rules import images, sandbox
    from rules.files import read_json, write_json
    from rules.upstream import tree_tar

    start, since = time.monotonic(), time.time()
    base = sandbox.ensure_base_image(env.base, log=log)
    files = {"ca-certificates.crt": images.HOST_CA.read_bytes() if images.HOST_CA.is_file() else b"",
             "go_canaries.py": CANARY_WRITER.read_bytes()}
    with tarfile.open(fileobj=io.BytesIO(tree_tar(repo, commit))) as tf:
        for m in tf.getmembers():
            if m.isfile():
                files[f"src/{m.name}"] = tf.extractfile(m).read()
            elif m.issym():
                files[f"src/{m.name}"] = b""  # a link's target is no part of a Go build; its name stays
    if "src/go.mod" not in files:
        from rules.sandbox import SandboxError

        raise SandboxError(f"environment {env.name}: {env.repo} has no go.mod at {commit[:12]} (lab builds Go "
                           "modules only)")
    files["mod/go.mod"] = files["src/go.mod"]
    files["mod/go.sum"] = files.get("src/go.sum", b"")
    image = sandbox.build_image(env.tag, dockerfile(env, base, packages), files, log=log,
                                labels={"lab.env": env.name, "lab.env.digest": env.digest()})
    old = read_json(images.stamp_path(env.stamp_name))
    if isinstance(old, dict) and old.get("id") == image and old.get("env") == env.name:
        return old
    probe = sandbox.run(env.tag, ["go", "version"], network="none")
    here = images.built_here(image, since)  # False: found whole in the cache, another home's (prune leaves it)
    size = sandbox.client().images.get(image).attrs.get("Size")
    stamp = {"image": env.tag, "id": image, "env": env.name, "seconds": round(time.monotonic() - start, 1),
             "built_here": here, "go": probe.output.strip(), "bytes": size}
    write_json(images.stamp_path(env.stamp_name), stamp, only_if_changed=True)
    return stamp


def tests(inst, tar: bytes, tests_after: dict[str, bytes | None], base_files: set[str]):
    """The runner's part of a render (``rules.tiers.swe_multi.render.Runner.tests``): check.sh's Go fields, the
    dataset names standing for their subtests, the agents' test command and the packages the image compiles.
    Raises Rejected (tests no file defines, or defines twice)."""
    names = list(inst.fail_to_pass) + list(inst.pass_to_pass)
    found = locate(names, list(inst.fail_to_pass), test_files_of(tar, tests_after), list(tests_after))
    return context(found, base_files), list(found.parents), test_cmd(found), list(found.packages)


def build(env: Env, repo: Path, commit: str, packages: list[str], log=sys.stderr) -> dict:
    """``build_env`` (the runner's ``build``)."""
    return build_env(env, repo, commit, packages, log=log)


def runner():
    """This module as a ``rules.tiers.swe_multi.render.Runner``."""
    from rules.tiers.swe_multi.render import Runner

    return Runner(LANGUAGE, REPORT, SUBTEST_SEP, TEMPLATE_DIR, env_for, tests, build, pretest)
