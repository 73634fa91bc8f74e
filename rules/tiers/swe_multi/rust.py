"""The Rust runner of the swe-multi tier: which Rust each instance needs, which cargo test program holds its
tests, how its environment image is built and how check.sh runs its tests (``templates/swe_multi/rust/``).

- Toolchains: ``TOOLCHAINS``, the ``rust_version`` SWE-bench v4.1.0 gives each instance
  (``swebench/harness/constants/rust.py``, its ``docker_specs``), as its ``.0`` release, installed at image build
  by rustup (``rustup-init`` from static.rust-lang.org, profile ``minimal``) under ``/opt/lab/rustup``;
  ``RUSTUP_TOOLCHAIN`` pins it over any ``rust-toolchain.toml`` of the repository.
- Crates: ``cargo vendor`` at the instance's base commit (a ``Cargo.lock`` made by ``cargo generate-lockfile``
  when the commit has none) into ``/opt/lab/vendor``, cargo pointed at it offline (``/opt/lab/cargo/config.toml``),
  then the instance's test program compiled once in ``/work`` (``cargo test --no-run``) into
  ``/opt/lab/target``. A grading copies that folder into its own ``/tmp`` (cargo sees the dependencies up to date
  and compiles the work tree's crates again), lays back the image's ``Cargo.lock`` and runs offline.
- Tests: ``PROGRAMS`` names, for each instance, the cargo arguments that select its one test program (SWE-bench's
  ``test_cmd`` without its name filter), its target name (the report's ``libtest-<target>.json``) and where
  its canaries go; an instance absent there takes the default when its test patch touches exactly one
  integration test file (``<package>/tests/<name>.rs``: ``--test <name>``). ``cargo test`` builds and runs it
  (its working directory and environment, ``CARGO_MANIFEST_DIR`` among them, are cargo's) through a runner of
  root's (``CARGO_TARGET_<triple>_RUNNER``) that adds libtest's JSON output (``-Z unstable-options --format
  json``, allowed by ``RUSTC_BOOTSTRAP=1`` in the test program's environment only, nothing is compiled with it)
  and sends it to a file root opened. Every test of the program runs. The host reads it by test identity
  (``rules.reports.parse_libtest_json``: ``<target>::<libtest name>``); a dataset name is the libtest name, so
  its report id is ``<target>::<name>`` (task.json ``test_names``).
- Canaries: the aider tier's Rust canary writer (``templates/images/grader/lab_grader/rust_canaries.py``, copied
  into the image) writes them into the program's test file of the first FAIL_TO_PASS test; it names them
  ``<file stem>::<mod path>::<fn>``, which check.sh rewrites to the report's ``<target>::<module of the file>::
  <mod path>::<fn>`` before the manifest is written.
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

LANGUAGE = "rust"
REPORT = "libtest-json"  # rules.reports: libtest's --format json, one file per test program
SUBTEST_SEP = " "  # (no dataset name of a Rust instance stands for several tests)
GRADER = TEMPLATES / "images" / "grader" / "lab_grader"
HELPERS = ("rust_canaries.py", "libtest_summary.py")  # copied into the image's /opt/lab
TEMPLATE_DIR = "swe_multi/rust"
WARNINGS = "-Awarnings"  # SWE-bench's RUSTFLAGS for most instances (a RUSTFLAGS change rebuilds everything)

# SWE-bench v4.1.0, swebench/harness/constants/rust.py: each instance's docker_specs rust_version (by version)
TOOLCHAINS = {
    "burntsushi/ripgrep": {"2576": "1.81.0", "2209": "1.81.0"},
    "sharkdp/bat": {v: "1.81.0" for v in ("3108", "2835", "2650", "2393", "2201", "2260", "1892", "562")},
    "astral-sh/ruff": {"15626": "1.84.0", "15543": "1.84.0", "15443": "1.84.0", "15394": "1.83.0",
                       "15356": "1.83.0", "15330": "1.83.0", "15309": "1.83.0"},
    "tokio-rs/tokio": {v: "1.81.0" for v in ("6724", "6838", "6752", "4867", "4898", "6603", "6551", "4384",
                                              "7139")},
    "uutils/coreutils": {v: "1.81.0" for v in ("6690", "6731", "6575", "6682", "6377")},
    "nushell/nushell": {"13246": "1.77.0", "12950": "1.77.0", "12901": "1.77.0", "13831": "1.79.0",
                        "13605": "1.78.0"},
    "tokio-rs/axum": {v: "1.81.0" for v in ("2096", "1934", "1730", "1119", "734", "691", "682")},
}


@dataclass(frozen=True)
class Program:
    """The one cargo test program an instance's tests are in: ``args`` (cargo test's arguments selecting it, as
    SWE-bench's ``test_cmd`` has them, without a test name filter), ``target`` (its cargo target name: the report
    file ``libtest-<target>.json``; a library's unit tests are its crate name), ``canary_file`` (the test file
    of the program the canaries go into; None: the test patch's first ``.rs`` file), ``module`` (that file's
    module path in the program, ``""`` for the program's root file; None: from the first FAIL_TO_PASS name),
    ``rustflags``, and ``tests_dir`` (the program's package ``tests/`` folder check.sh lays back whole, as the
    base commit has it; None for a library's unit tests)."""

    args: tuple[str, ...]
    target: str
    canary_file: str | None = None
    module: str | None = None
    rustflags: str = WARNINGS
    tests_dir: str | None = "tests"


TOKIO_UNSTABLE = "--cfg tokio_unstable"
AXUM_LIB = Program(("--package", "axum", "--lib"), "axum", tests_dir=None)
# SWE-bench v4.1.0's test_cmd of each instance (swebench/harness/constants/rust.py), its test program named
PROGRAMS = {
    "burntsushi/ripgrep": {v: Program(("--package", "ripgrep", "--test", "integration"), "integration",
                                      "tests/regression.rs", "regression") for v in ("2576", "2209")},
    "sharkdp/bat": {v: Program(("--package", "bat", "--test", "integration_tests"), "integration_tests",
                               "tests/integration_tests.rs", "")
                    for v in ("3108", "2835", "2650", "2393", "2201", "2260", "1892", "562")},
    "tokio-rs/tokio": {
        **{v: Program(("--test", t), t, f"tokio/tests/{t}.rs", "", rustflags="", tests_dir="tokio/tests")
           for v, t in (("6724", "io_write_all_buf"), ("6838", "uds_stream"), ("4867", "sync_broadcast"),
                        ("6603", "sync_mpsc"))},
        "6752": Program(("--test", "time_delay_queue"), "time_delay_queue", "tokio-util/tests/time_delay_queue.rs",
                        "", rustflags="", tests_dir="tokio-util/tests"),
        "4898": Program(("--features", "full", "--test", "rt_metrics"), "rt_metrics", "tokio/tests/rt_metrics.rs",
                        "", rustflags=TOKIO_UNSTABLE, tests_dir="tokio/tests"),
        "6551": Program(("--features", "full", "--test", "rt_metrics"), "rt_metrics", "tokio/tests/rt_metrics.rs",
                        "", rustflags=TOKIO_UNSTABLE, tests_dir="tokio/tests"),
        "7139": Program(("--test", "fs_file"), "fs_file", "tokio/tests/fs_file.rs", "", rustflags=TOKIO_UNSTABLE,
                        tests_dir="tokio/tests"),
        "4384": Program(("--package", "tokio", "--test", "net_types_unwind", "--features", "full"),
                        "net_types_unwind", "tokio/tests/net_types_unwind.rs", "", tests_dir="tokio/tests"),
    },
    # ruff's rule tests are unit tests of ruff_linter (test_case functions in each linter's mod.rs `mod tests`); their
    # test patches touch fixtures and snapshots only
    "astral-sh/ruff": {v: Program(("--package", "ruff_linter", "--lib"), "ruff_linter",
                                  f"crates/ruff_linter/src/rules/{linter}/mod.rs", f"rules::{linter}", tests_dir=None)
                       for v, linter in (("15626", "flake8_simplify"), ("15543", "pyupgrade"),
                                         ("15443", "flake8_bandit"), ("15394", "flake8_pie"), ("15356", "pycodestyle"),
                                         ("15330", "eradicate"), ("15309", "pyflakes"))},
    "tokio-rs/axum": {v: AXUM_LIB for v in ("2096", "1934", "1730", "1119", "734", "691", "682")},
    # coreutils' tests/tests.rs holds each utility's tests as `#[path = "by-util/test_<util>.rs"] mod test_<util>`
    "uutils/coreutils": {v: Program(("--test", "tests"), "tests", rustflags="")
                         for v in ("6690", "6731", "6575", "6682", "6377")},
    "nushell/nushell": {
        "12950": Program(("--test", "main"), "main", rustflags=""),
        "12901": Program(("--test", "main"), "main", rustflags=""),
        "13246": Program(("-p", "nu-command", "--test", "main"), "main", rustflags="",
                         tests_dir="crates/nu-command/tests"),
        "13831": Program(("-p", "nu-command", "--test", "main"), "main", rustflags="",
                         tests_dir="crates/nu-command/tests"),
    },
}
# instances whose tests one test program cannot hold
ONE_PROGRAM = ("lab's Rust runner runs one test program per instance, and this instance's tests are in two: "
               "nu-command's unit tests (sort_utils::tests) and its tests/main.rs (commands::ls)")
UNRUNNABLE = {("nushell/nushell", "13605"): ONE_PROGRAM}

_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_TEST_FILE = re.compile(r"^(?:(.+)/)?tests/([A-Za-z0-9_-]+)\.rs$")


def env_for(repo: str, version: str, extra: dict | None = None) -> Env | None:
    """The environment of ``repo`` at dataset ``version``: its Rust toolchain from ``extra`` (suite.toml's
    ``[toolchains."owner/name"]``: version → Rust version) or else ``TOOLCHAINS``; None when neither has one."""
    rust = table_toolchain(repo, version, extra, TOOLCHAINS)
    if not rust:
        return None
    if not _VERSION.match(rust):
        raise Rejected(f"Rust toolchain {rust!r} for {repo} {version} is not a release (give e.g. 1.81.0)")
    return Env(name=env_name(repo, version), repo=repo, version=version, language=LANGUAGE, toolchain=rust)


def program_of(repo: str, version: str, touched: list[str], fail_to_pass: list[str]) -> Program:
    """The test program of an instance (``PROGRAMS``, or the one integration test file ``<dir>/tests/<name>.rs``
    its test patch touches), its canary file and module filled in. Raises Rejected when neither says, or the instance is one of
    ``UNRUNNABLE``."""
    if (repo, version) in UNRUNNABLE:
        raise Rejected(UNRUNNABLE[repo, version])
    prog = PROGRAMS.get(repo, {}).get(version)
    if prog is None:
        found = {m.groups() for m in map(_TEST_FILE.match, touched) if m}
        if len(found) != 1:
            raise Rejected(f"no test program for {repo} {version} in lab's table (rules/tiers/swe_multi/rust.py "
                           f"PROGRAMS), and its test patch touches {len(found)} integration test files, not one")
        folder, name = found.pop()
        manifest = ("--manifest-path", f"{folder}/Cargo.toml") if folder else ()
        prog = Program(manifest + ("--test", name), name, f"{folder + '/' if folder else ''}tests/{name}.rs", "",
                       tests_dir=f"{folder + '/' if folder else ''}tests")
    canary = prog.canary_file or next((p for p in touched if p.endswith(".rs")), None)
    if canary is None:
        raise Rejected(f"{repo} {version}: its test patch touches no .rs file to put the canaries in (lab's table: "
                       "rules/tiers/swe_multi/rust.py PROGRAMS)")
    module = prog.module
    if module is None:  # the first FAIL_TO_PASS test is a function at the top of the canary file's module
        first = fail_to_pass[0] if fail_to_pass else ""
        module = first.rsplit("::", 1)[0] if "::" in first else ""
    return Program(prog.args, prog.target, canary, module, prog.rustflags, prog.tests_dir)


def context(prog: Program, base_files: set[str]) -> dict:
    """check.sh's Rust fields."""
    tests_dir = prog.tests_dir
    return {"cargo_args": list(prog.args), "target": prog.target, "canary_file": prog.canary_file,
            "canary_module": prog.module, "rustflags": prog.rustflags, "tests_dir": tests_dir,
            "tests_dir_base_files": sorted(p for p in base_files if tests_dir and p.startswith(tests_dir + "/"))}


def pretest(fields: dict, base_files: set[str]) -> dict | None:
    """check.sh's Rust fields for the pre-existing tests (``pretest.sh``): the same program as the base commit
    has it, the canaries in the same file; None when the base commit has no such file."""
    return fields if fields["canary_file"] in base_files else None


def test_cmd(prog: Program) -> str:
    """The agents' command for the instance's test program, offline, as the grading builds it."""
    flags = f"RUSTFLAGS={shlex.quote(prog.rustflags)} " if prog.rustflags else ""
    return f"{flags}cargo test --offline " + " ".join(shlex.quote(a) for a in prog.args)


def tests(inst, tar: bytes, tests_after: dict[str, bytes | None], base_files: set[str]):
    """The runner's part of a render (``rules.tiers.swe_multi.render.Runner.tests``): check.sh's Rust fields
    (with ``report_ids``: dataset name → report id), no name standing for several, the agents' test command,
    and the image's build input (the program). Raises Rejected."""
    from rules.tiers.swe import swebench

    touched = swebench.patch_paths(inst.test_patch)
    prog = program_of(inst.repo, inst.version, touched, list(inst.fail_to_pass))
    fields = context(prog, base_files)
    names = list(inst.fail_to_pass) + list(inst.pass_to_pass)
    fields["report_ids"] = {n: f"{prog.target}::{n}" for n in names}
    return fields, [], test_cmd(prog), prog


# ---- the environment image ----

def dockerfile(env: Env, base: str, prog: Program) -> str:
    """The Dockerfile of ``env``'s image, ``FROM`` the tag ``base``: the toolchain, the vendored crates and the
    compiled test program ``prog``."""
    from rules.render import render as render_template

    return render_template(f"{TEMPLATE_DIR}/env.Dockerfile.j2", env=env, base=base, prog=prog)


def build_env(env: Env, repo: Path, commit: str, prog: Program, log=sys.stderr) -> dict:
    """Build ``env``'s image from ``repo`` at ``commit`` (its crates vendored, ``prog`` compiled; host networking
    and the host's CA bundle) and stamp it in ``.lab/images/<stamp>.json``, rewritten only when the image id
    changed. Returns the stamp ``{"image", "id", "env", "seconds", "built_here", "rust", "bytes"}``. Raises
    SandboxError."""
    from rules import images, sandbox
    from rules.files import read_json, write_json
    from rules.upstream import tree_tar

    start, since = time.monotonic(), time.time()
    base = sandbox.ensure_base_image(env.base, log=log)
    files = {"ca-certificates.crt": images.HOST_CA.read_bytes() if images.HOST_CA.is_file() else b""}
    for name in HELPERS:
        files[f"lab/{name}"] = (GRADER / name).read_bytes()
    with tarfile.open(fileobj=io.BytesIO(tree_tar(repo, commit))) as tf:
        for m in tf.getmembers():
            if m.isfile():
                files[f"src/{m.name}"] = tf.extractfile(m).read()
    if "src/Cargo.toml" not in files:
        from rules.sandbox import SandboxError

        raise SandboxError(f"environment {env.name}: {env.repo} has no Cargo.toml at its root at {commit[:12]}")
    image = sandbox.build_image(env.tag, dockerfile(env, base, prog), files, log=log,
                                labels={"lab.env": env.name, "lab.env.digest": env.digest()})
    old = read_json(images.stamp_path(env.stamp_name))
    if isinstance(old, dict) and old.get("id") == image and old.get("env") == env.name:
        return old
    probe = sandbox.run(env.tag, ["rustc", "--version"], network="none")
    here = images.built_here(image, since)
    size = sandbox.client().images.get(image).attrs.get("Size")
    stamp = {"image": env.tag, "id": image, "env": env.name, "seconds": round(time.monotonic() - start, 1),
             "built_here": here, "rust": probe.output.strip(), "bytes": size}
    write_json(images.stamp_path(env.stamp_name), stamp, only_if_changed=True)
    return stamp


def build(env: Env, repo: Path, commit: str, prog: Program, log=sys.stderr) -> dict:
    """``build_env`` (the runner's ``build``)."""
    return build_env(env, repo, commit, prog, log=log)


def runner():
    """This module as a ``rules.tiers.swe_multi.render.Runner``."""
    from rules.tiers.swe_multi.render import Runner

    return Runner(LANGUAGE, REPORT, SUBTEST_SEP, TEMPLATE_DIR, env_for, tests, build, pretest)
