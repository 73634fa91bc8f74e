"""The swe-multi tier's Rust runner: its table and identities without Docker, and through doit and the real
Docker engine on a Rust fixture made at test time (a crate ``calc`` with no dependencies, whose ``add``
subtracts; the fix makes it add and its test patch adds ``add_small`` to ``tests/calc.rs``): the environment image
(Rust by rustup at build time), the proof by test identity (libtest's JSON read on the host, no network in the
grading container, the canaries), and SWE-bench predictions graded: gold resolves, empty does not, a patch that
rewrites the held-out test does not count, and a cargo configuration of the patch's is not used."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_swe import _git, _write  # noqa: E402
from fixture_swe_multi import evaluate  # noqa: E402

from rules import reports  # noqa: E402
from rules.tier import Rejected  # noqa: E402
from rules.tiers.swe_multi import rust  # noqa: E402

TOOLCHAIN = "1.81.0"  # most of SWE-bench Multilingual's Rust instances' (its layers are shared with theirs)
BASE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    # committed, as most repositories do (without one the image build fetches a newer cargo to make it)
    "Cargo.lock": 'version = 3\n\n[[package]]\nname = "calc"\nversion = "0.1.0"\n',
    "src/lib.rs": "/// a plus b\npub fn add(a: i64, b: i64) -> i64 {\n    a - b\n}\n\n"
                  "/// a minus b\npub fn sub(a: i64, b: i64) -> i64 {\n    a - b\n}\n",
    "tests/calc.rs": "use calc::sub;\n\n#[test]\nfn sub_small() {\n    assert_eq!(sub(3, 1), 2);\n}\n\n"
                     "#[test]\nfn sub_negative() {\n    assert_eq!(sub(1, 3), -2);\n}\n",
}
FIXED = BASE["src/lib.rs"].replace("    a - b\n}\n\n/// a minus", "    a + b\n}\n\n/// a minus", 1)
TESTS_AFTER = BASE["tests/calc.rs"].replace("use calc::sub;", "use calc::{add, sub};") + \
    "\n#[test]\nfn add_small() {\n    assert_eq!(add(2, 3), 5);\n}\n"
SUITE = """dataset = "{dataset}"
instances = ["lab__calcrs-1", "lab__calcrs-2"]
repos = "{repos}"

[languages]
"lab/calcrs" = "rust"

[toolchains."lab/calcrs"]
"0.1" = "{rust}"

[prove]
cpus = 1.0
memory = "2g"
pids = 512
timeout = 300
"""


def make_calcrs(root: Path) -> Path:
    """``root/repos/calcrs`` (base commit, then the fix) and ``root/data.jsonl``: ``lab__calcrs-1`` (sound) and
    ``lab__calcrs-2`` (its only FAIL_TO_PASS test passes before the fix). Returns the repos folder."""
    repo = root / "repos" / "calcrs"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, BASE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "calc")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"src/lib.rs": FIXED, "tests/calc.rs": TESTS_AFTER})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix add")
    common = {"repo": "lab/calcrs", "base_commit": base, "patch": _git(repo, "diff", base, "HEAD", "--", "src"),
              "test_patch": _git(repo, "diff", base, "HEAD", "--", "tests"), "problem_statement": "add(2, 3) is -1",
              "hints_text": "", "created_at": "2026-01-01T00:00:00Z", "version": "0.1"}
    records = [{**common, "instance_id": "lab__calcrs-1", "FAIL_TO_PASS": ["add_small"],
                "PASS_TO_PASS": ["sub_small", "sub_negative"]},
               {**common, "instance_id": "lab__calcrs-2", "FAIL_TO_PASS": ["sub_small"], "PASS_TO_PASS": []}]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root / "repos"


# ---- without Docker ----

def test_program_of_takes_the_table_or_the_one_integration_test_file():
    rg = rust.program_of("burntsushi/ripgrep", "2209", ["tests/regression.rs"], ["regression::r2208"])
    assert (rg.target, rg.canary_file, rg.module) == ("integration", "tests/regression.rs", "regression")
    axum = rust.program_of("tokio-rs/axum", "1934", ["axum/src/routing/tests/fallback.rs"],
                           ["routing::tests::fallback::doesnt_panic_if_used_with_nested_router"])
    assert axum.args == ("--package", "axum", "--lib") and axum.module == "routing::tests::fallback"
    own = rust.program_of("lab/x", "1", ["crates/a/tests/t.rs", "README.md"], ["t"])
    assert own.args == ("--manifest-path", "crates/a/Cargo.toml", "--test", "t") and own.tests_dir == "crates/a/tests"
    with pytest.raises(Rejected, match="touches 2 integration test files"):
        rust.program_of("lab/x", "1", ["tests/a.rs", "tests/b.rs"], ["t"])
    ruff = rust.program_of("astral-sh/ruff", "15309", ["crates/ruff_linter/resources/test/fixtures/F523.py"],
                           ["rules::pyflakes::tests::rules::rule_x"])
    assert ruff.canary_file == "crates/ruff_linter/src/rules/pyflakes/mod.rs" and ruff.tests_dir is None


def test_toolchain_table_and_bad_versions():
    assert rust.env_for("sharkdp/bat", "562").toolchain == "1.81.0"
    assert rust.env_for("nushell/nushell", "13605").toolchain == "1.78.0"
    assert rust.env_for("sharkdp/bat", "1") is None
    with pytest.raises(Rejected, match="not a release"):
        rust.env_for("lab/x", "1", {"lab/x": {"1": "stable"}})


def test_libtest_report_ids_are_the_program_and_the_dataset_name(tmp_path):
    # libtest's JSON as a test program prints it (rustc 1.81, -Z unstable-options --format json)
    events = [{"type": "suite", "event": "started", "test_count": 3},
              {"type": "test", "event": "started", "name": "regression::r2208"},
              {"type": "test", "event": "started", "name": "regression::r105_part1"},
              {"type": "test", "name": "regression::r105_part1", "event": "ok"},
              {"type": "test", "name": "regression::r2208", "event": "failed", "stdout": "panicked"},
              {"type": "test", "event": "started", "name": "misc::ignored_one"},
              {"type": "test", "name": "misc::ignored_one", "event": "ignored"},
              {"type": "suite", "event": "failed", "passed": 1, "failed": 1, "ignored": 1}]
    (tmp_path / "libtest-integration.json").write_text("".join(json.dumps(e) + "\n" for e in events))
    parsed = reports.parse_libtest_json(tmp_path, {})
    assert parsed.tests == {"integration::regression::r2208": "failed", "integration::regression::r105_part1": "passed",
                            "integration::misc::ignored_one": "skipped"}


# ---- through Docker ----

@pytest.fixture(scope="module")
def rust_home(tmp_path_factory):
    """A lab home with the Rust fixture, generated once (environment image, renders, proofs) for the module."""
    root = tmp_path_factory.mktemp("multi-rust")
    repos = make_calcrs(root)
    home = root / "home"
    (home / "evals" / "swe-multi").mkdir(parents=True)
    (home / "evals" / "swe-multi" / "suite.toml").write_text(
        SUITE.format(dataset=root / "data.jsonl", repos=repos, rust=TOOLCHAIN))
    return home, run_doit(home, "gen:swe-multi")


@pytest.mark.docker
def test_rust_proof_keeps_the_sound_instance_and_rejects_the_other(rust_home):
    home, res = rust_home
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    manifest = json.loads((home / "evals" / "swe-multi" / "manifest.json").read_text())
    status = {t["task"]: t for t in manifest["tasks"]}
    assert status["lab__calcrs-1"]["status"] == "kept", status["lab__calcrs-1"]
    assert status["lab__calcrs-2"]["status"] == "rejected"
    assert "every FAIL_TO_PASS test passes already (sub_small)" in status["lab__calcrs-2"]["reason"]
    proof = json.loads((home / ".lab" / "build" / "swe-multi" / "lab__calcrs-1" / "proof.json").read_text())
    assert proof["tests"] == ["calc::add_small", "calc::sub_negative", "calc::sub_small"]
    assert [r["verdict"] for r in proof["gold_runs"]] == ["pass"] * 3
    assert proof["stub"]["evidence"] == ["1 test(s) did not pass: calc::add_small"]
    stamp = json.loads((home / ".lab" / "images" / "swe-multi-env-calcrs-0.1.json").read_text())
    assert stamp["rust"].startswith(f"rustc {TOOLCHAIN} ")


@pytest.mark.docker
def test_rust_predictions_gold_resolves_empty_and_forgeries_do_not(rust_home, tmp_path):
    home, res = rust_home
    assert res.code == 0
    gold = evaluate(home, "gold")
    assert gold["resolved"] == ["lab__calcrs-1"] and gold["total_instances"] == 1
    rep = gold["instances"]["lab__calcrs-1"]
    assert rep["tests_status"]["PASS_TO_PASS"] == {"success": ["sub_small", "sub_negative"], "failure": []}
    empty = evaluate(home, "empty")
    assert empty["resolved"] == [] and empty["empty_patch"] == ["lab__calcrs-1"]
    # the held-out test file rewritten so that add_small asserts nothing: the program's tests/ folder is laid back
    # as the base commit and the test patch have it
    edit = ("diff --git a/tests/calc.rs b/tests/calc.rs\n--- a/tests/calc.rs\n+++ b/tests/calc.rs\n"
            "@@ -1,4 +1,7 @@\n use calc::sub;\n+\n+#[test]\n+fn add_small() {}\n \n #[test]\n fn sub_small() {\n")
    for name, patch in (("edit", edit),):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps(
            {"instance_id": "lab__calcrs-1", "model_name_or_path": name, "model_patch": patch}) + "\n")
        out = evaluate(home, str(tmp_path / f"{name}.jsonl"))
        assert out["unresolved"] == ["lab__calcrs-1"], (name, out["instances"])
        assert out["instances"]["lab__calcrs-1"]["tests_status"]["FAIL_TO_PASS"]["failure"] == ["add_small"]
    # the gold patch with a cargo configuration of its own (a rustc wrapper that would replace the compiler):
    # removed before the build, so the fix resolves as it is
    wrapper = ("diff --git a/.cargo/config.toml b/.cargo/config.toml\nnew file mode 100644\n--- /dev/null\n"
               "+++ b/.cargo/config.toml\n@@ -0,0 +1,2 @@\n+[build]\n+rustc-wrapper = \"/bin/false\"\n")
    fix = ("diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,4 +1,4 @@\n"
           " /// a plus b\n pub fn add(a: i64, b: i64) -> i64 {\n-    a - b\n+    a + b\n }\n")
    (tmp_path / "wrapped.jsonl").write_text(json.dumps(
        {"instance_id": "lab__calcrs-1", "model_name_or_path": "wrapped", "model_patch": fix + wrapper}) + "\n")
    assert evaluate(home, str(tmp_path / "wrapped.jsonl"))["resolved"] == ["lab__calcrs-1"]
