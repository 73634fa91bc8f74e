"""The swe tier on a fixture repository built at test time (never upstream code): test identity, the work tree cut
at the base commit, held-out tests, the proof both ways, and predictions in and out."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import run_doit, write_suite
from fixture_upstream import make_upstream
from fixture_swe import FIXED_SOURCE, HINT, ISSUE, calc_env as _env, lay_rendered as _lay, make_calc, write_swe_suite
from rules.tiers.swe import swebench
from rules.tier import Rejected


# ---- test identity (no Docker) ----

@pytest.mark.parametrize("nodeid, junit", [
    ("tests/test_config.py::test_config_from_file_toml", "tests.test_config::test_config_from_file_toml"),
    ("testing/test_assertrewrite.py::TestIssue11140::test_constant", "testing.test_assertrewrite.TestIssue11140::test_constant"),
    ("tests/test_x.py::test_enc[utf-8]", "tests.test_x::test_enc[utf-8]"),
    ("tests/test_x.py::test_path[a/b.py::c]", "tests.test_x::test_path[a/b.py::c]"),
])
def test_swe_bench_names_map_to_pytest_junit_ids(nodeid, junit):
    assert swebench.junit_id(nodeid) == junit


def test_sympy_names_map_to_the_one_file_defining_them():
    files = {"sympy/core/tests/test_basic.py": "def test_immutable():\n    pass\n",
             "sympy/core/tests/test_other.py": "def test_other():\n    def test_immutable():\n        pass\n"}
    assert swebench.sympy_id("test_immutable", files) == "sympy.core.tests.test_basic::test_immutable"
    files["sympy/core/tests/test_more.py"] = "def test_immutable():\n    pass\n"
    assert swebench.sympy_id("test_immutable", files) is None  # two files define it: no single id
    assert swebench.sympy_id("test_missing", files) is None


def test_predictions_are_read_in_the_three_shapes(tmp_path):
    rec = {"instance_id": "a", "model_name_or_path": "m", "model_patch": "p"}
    for text in (json.dumps(rec) + "\n", json.dumps([rec]), json.dumps({"a": {"model_name_or_path": "m", "model_patch": "p"}})):
        (tmp_path / "p.jsonl").write_text(text)
        assert swebench.read_predictions(tmp_path / "p.jsonl") == [rec]
    (tmp_path / "p.jsonl").write_text('{"model_patch": "x"}\n')
    with pytest.raises(Rejected, match="no instance_id"):
        swebench.read_predictions(tmp_path / "p.jsonl")


# ---- rendering from the fixture repository (no Docker) ----

@pytest.fixture
def calc(tmp_path):
    repos, records = make_calc(tmp_path / "src")
    return repos, {r["instance_id"]: swebench._instance(r) for r in records}


def test_work_tree_is_the_base_commit_alone_with_no_history_after_it(calc, tmp_path):
    repos, insts = calc
    tree = _lay(swebench.render(insts["lab__calc-1"], _env(), str(repos)), tmp_path)
    git = lambda *a: subprocess.run(["git", *a], cwd=tree, capture_output=True, text=True, check=True).stdout
    assert len(git("log", "--all", "--oneline").splitlines()) == 1
    assert git("tag") == "" and git("remote") == ""
    assert git("status", "--porcelain") == ""  # every file of the base tree is in that one commit
    objects = git("rev-list", "--all", "--objects")
    fixed_blob = subprocess.run(["git", "hash-object", "--stdin"], input=FIXED_SOURCE, capture_output=True,
                                text=True, check=True).stdout.strip()
    assert fixed_blob not in objects  # the fix is nowhere in the repository
    assert (tree / "calc" / "__init__.py").read_text() == "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def test_held_out_tests_and_hints_never_reach_the_work_tree_or_prompt(calc, tmp_path):
    repos, insts = calc
    rendered = swebench.render(insts["lab__calc-1"], _env(), str(repos))
    tree = _lay(rendered, tmp_path)
    every = "".join(p.read_text(errors="replace") for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert "test_add" not in every and "test_add" not in rendered.task_files["prompt.txt"][0].decode()
    prompt = rendered.task_files["prompt.txt"][0].decode()
    assert ISSUE in prompt and HINT not in prompt
    assert "test_add" in rendered.task_files["holdout/test.patch"][0].decode()  # kept in the task, for the grader
    assert set(rendered.answer_files) == {"calc/__init__.py"}
    assert rendered.answer_files["calc/__init__.py"][0].decode() == FIXED_SOURCE
    meta = rendered.meta
    assert meta["fail_to_pass"] == ["tests.test_calc::test_add"] and meta["pass_to_pass"] == ["tests.test_calc::test_mul"]
    assert meta["image"] == "lab/swe-env:calc"
    # the agent's test command runs the pre-existing test file the held-out patch changes, at base: never test_add
    assert meta["test_cmd"].endswith("tests/test_calc.py") and "test_add" not in meta["test_cmd"]


def test_instance_without_an_environment_is_rejected_with_the_reason(calc):
    repos, insts = calc
    with pytest.raises(Rejected, match="no environment for lab/calc 0.1"):
        swebench.render(insts["lab__calc-1"], None, str(repos))


def test_fail_to_pass_tests_that_need_a_network_are_left_out_while_another_decides(calc):
    repos, insts = calc
    env = _env(exclude=("tests/test_calc.py::test_mul",))
    meta = swebench.render(insts["lab__calc-3"], env, str(repos)).meta
    assert meta["fail_to_pass"] == ["tests.test_calc::test_add"]
    assert meta["excluded"] == ["tests/test_calc.py::test_mul"]
    assert "--deselect tests/test_calc.py::test_mul" in meta["test_cmd"]
    with pytest.raises(Rejected, match="every FAIL_TO_PASS test needs a network: tests/test_calc.py::test_add"):
        swebench.render(insts["lab__calc-1"], _env(exclude=("tests/test_calc.py::test_add",)), str(repos))


def test_a_clone_lacking_a_files_content_is_rejected_naming_the_file_and_the_fix(calc):
    repos, insts = calc
    blob = subprocess.run(["git", "rev-parse", f"{insts['lab__calc-1'].base_commit}:README.md"], cwd=repos / "calc",
                          capture_output=True, text=True, check=True).stdout.strip()
    (repos / "calc" / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # as a snapshot without its big files
    with pytest.raises(Rejected, match=f"lacks the content of README.md \\(blob {blob}\\).*git hash-object -w"):
        swebench.render(insts["lab__calc-1"], _env(), str(repos))


def test_an_environment_built_from_another_commit_says_so_in_its_digest_alone():
    from rules.tiers.swe.envs import ENVS

    plain = _env()
    assert plain.digest() == _env(setup_commit="").digest()  # the field's default leaves every digest as it was
    assert _env(setup_commit="a" * 40).digest() != plain.digest()
    assert repr(_env(setup_commit="a" * 40)) == repr(plain)
    assert len({e.digest() for e in ENVS}) == len(ENVS)


# ---- the repositories folder: each README layout, tried in turn (no Docker) ----

def _init(path: Path, bare: bool = False) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", *(["--bare"] if bare else []), str(path)], check=True)
    return path


@pytest.mark.parametrize("layout, bare", [("sympy", False), ("sympy__sympy", True), ("sympy/sympy", False),
                                          ("sympy/sympy", True)])
def test_repositories_folder_takes_each_layout_owner_folder_included(tmp_path, layout, bare):
    want = _init(tmp_path / layout, bare)
    assert swebench.repo_dir("sympy/sympy", str(tmp_path)) == want


def test_repositories_folder_prefers_the_name_and_skips_folders_that_are_no_repository(tmp_path):
    (tmp_path / "flask").mkdir()  # a plain folder named like the repository: not a clone
    want = _init(tmp_path / "pallets" / "flask", bare=True)
    assert swebench.repo_dir("pallets/flask", str(tmp_path)) == want
    first = _init(tmp_path / "pallets__flask")
    assert swebench.repo_dir("pallets/flask", str(tmp_path)) == first  # the second layout before the third


def test_repositories_folder_without_a_clone_names_every_path_looked_at_and_the_fix(tmp_path):
    from rules.upstream import UpstreamError

    (tmp_path / "sympy").mkdir()
    (tmp_path / "sympy" / "README").write_text("not a clone")
    with pytest.raises(UpstreamError) as err:
        swebench.repo_dir("sympy/sympy", str(tmp_path))
    line = str(err.value)
    assert "\n" not in line
    assert f"{tmp_path / 'sympy'} (not a git repository)" in line
    assert f"{tmp_path / 'sympy__sympy'} (missing)" in line and f"{tmp_path / 'sympy' / 'sympy'} (missing)" in line
    assert "git clone --bare https://github.com/sympy/sympy" in line


# ---- the proof and predictions, through doit, in the real engine ----

@pytest.fixture(scope="module")
def swe_home(tmp_path_factory):
    """A lab home with the fixture swe tier, generated once (env image, render, proof) for the module."""
    root = tmp_path_factory.mktemp("swe")
    make_calc(root / "src")
    home = root / "home"
    write_suite(home, make_upstream(root / "upstream"))  # the aider tier beside it, as in a real lab home
    write_swe_suite(home, root / "src")
    res = run_doit(home, "gen:swe")
    return home, res, root / "src"


@pytest.mark.docker
def test_proof_keeps_the_sound_instance_and_rejects_the_other_naming_the_test(swe_home):
    home, res, src = swe_home
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    manifest = json.loads((home / "evals" / "swe" / "manifest.json").read_text())
    status = {t["task"]: t for t in manifest["tasks"]}
    assert status["lab__calc-1"]["status"] == "kept"
    assert status["lab__calc-2"]["status"] == "rejected"
    assert "every FAIL_TO_PASS test passes already" in status["lab__calc-2"]["reason"]
    assert "tests/test_calc.py::test_mul" in status["lab__calc-2"]["reason"]
    proof = json.loads((home / ".lab" / "build" / "swe" / "lab__calc-1" / "proof.json").read_text())
    assert proof["tests"] == ["tests.test_calc::test_add", "tests.test_calc::test_mul"]
    assert proof["before"] == {"fail_to_pass_passed": [], "pass_to_pass_failed": [], "completed": True}
    # the gold patch ran three times, all alike: nothing flaky, nothing noted
    assert [r["verdict"] for r in proof["gold_runs"]] == ["pass"] * 3 and "notes" not in proof
    assert "flaky" not in json.loads((home / "evals" / "swe" / "tasks" / "lab__calc-1" / "task.json").read_text())
    assert proof["stub"]["evidence"] == ["1 test(s) did not pass: tests.test_calc::test_add"]
    tests = json.loads((home / "evals" / "swe" / "tasks" / "lab__calc-1" / "tests.json").read_text())
    assert tests["tests"] == proof["tests"]
    assert not (home / "evals" / "swe" / "tasks" / "lab__calc-2").exists()
    # nothing changed: a second gen redoes no work
    again = run_doit(home, "gen:swe")
    assert again.code == 0 and not again.executed("prove:") and not again.executed("env:"), again.stdout


@pytest.mark.docker
def test_fail_to_pass_test_passing_at_base_is_kept_and_noted_in_task_json_and_gen_output(tmp_path):
    make_calc(tmp_path / "src")
    home = tmp_path / "home"
    write_swe_suite(home, tmp_path / "src")
    res = run_doit(home, "gen:swe", "instances=lab__calc-3", "jobs=1")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    entry = {t["task"]: t for t in json.loads((home / "evals" / "swe" / "manifest.json").read_text())["tasks"]}
    assert entry["lab__calc-3"]["status"] == "kept" and entry["lab__calc-3"]["published"]
    meta = json.loads((home / "evals" / "swe" / "tasks" / "lab__calc-3" / "task.json").read_text())
    assert meta["passed_at_base"] == ["tests/test_calc.py::test_mul"] and "flaky" not in meta
    tests = json.loads((home / "evals" / "swe" / "tasks" / "lab__calc-3" / "tests.json").read_text())["tests"]
    assert tests == ["tests.test_calc::test_add", "tests.test_calc::test_mul"]  # still expected after the fix
    said = res.stdout + res.stderr
    assert "kept lab__calc-3: FAIL_TO_PASS test(s) already pass at base" in said, said[-2000:]
    # had a proof found test_mul flaky (tests/test_swe_proof_rules.py), the published task would say so and
    # expect it no more: an evaluation lists it apart, as deciding nothing
    task = home / "evals" / "swe" / "tasks" / "lab__calc-3"
    (task / "task.json").write_text(json.dumps({**meta, "flaky": {"tests/test_calc.py::test_mul": [
        "passed", "not passed", "passed"]}}))
    (task / "tests.json").write_text(json.dumps({"version": 1, "tests": ["tests.test_calc::test_add"]}))
    rep = _evaluate(home, "gold")["instances"]["lab__calc-3"]
    assert rep["status"] == "resolved", rep
    assert rep["tests_status"] == {"FAIL_TO_PASS": {"success": ["tests/test_calc.py::test_add"], "failure": []},
                                   "PASS_TO_PASS": {"success": [], "failure": []},
                                   "flaky": ["tests/test_calc.py::test_mul"]}


@pytest.mark.docker
def test_gen_killed_outright_resumes_without_losing_or_redoing_a_finished_proof(tmp_path):
    """`doit gen:swe all=1` over hundreds of instances is killed (SIGKILL, no handler runs) between proofs: the
    next gen proves only what was left, and every proof that had finished stands as it was."""
    import os
    import signal
    import sys
    import time

    from conftest import PROJECT

    make_calc(tmp_path / "src")
    home = tmp_path / "home"
    write_swe_suite(home, tmp_path / "src")
    build = home / ".lab" / "build" / "swe"
    proc = subprocess.Popen([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), "gen:swe", "all=1",
                             "jobs=1"], cwd=PROJECT, env={**os.environ, "LAB_HOME": str(home)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while time.time() < deadline and proc.poll() is None and not list(build.glob("*/proof.json")):
        time.sleep(0.2)
    time.sleep(1.0)  # into the next proof: its gold run is in a container
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {p.parent.name: p.read_bytes() for p in build.glob("*/proof.json")}
    assert 1 <= len(before) < 3, sorted(before)
    res = run_doit(home, "gen:swe", "all=1", "jobs=1")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    after = {p.parent.name: p.read_bytes() for p in build.glob("*/proof.json")}
    assert sorted(after) == ["lab__calc-1", "lab__calc-2", "lab__calc-3"]
    # doit lost its record of them (it writes its database at a command's end), so their prove steps run, and
    # take the proof there (the same inputs): the same bytes, its seconds and each gold run's timing included
    assert all(after[t] == data for t, data in before.items()), "a finished proof was made again"
    manifest = json.loads((home / "evals" / "swe" / "manifest.json").read_text())
    assert manifest["counts"] == {"kept": 2, "rejected": 1} and manifest["published"] == 2
    assert "lab/calc" in res.stdout + res.stderr  # the summary's line for the repository


def _evaluate(home: Path, predictions: str) -> dict:
    res = run_doit(home, "evaluate", f"predictions={predictions}")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    name = Path(predictions).stem
    return json.loads((home / "evals" / "swe" / "evaluations" / name / "results.json").read_text())


@pytest.mark.docker
def test_predictions_round_trip_gold_resolves_empty_resolves_none(swe_home, tmp_path):
    home, res, src = swe_home
    assert res.code == 0
    gold = _evaluate(home, "gold")
    assert gold["resolved"] == ["lab__calc-1"] and gold["total_instances"] == 1
    assert gold["repos"] == {"lab/calc": {"tasks": 1, "resolved": 1, "rate": 1.0}}
    rep = gold["instances"]["lab__calc-1"]
    assert rep["tests_status"]["FAIL_TO_PASS"] == {"success": ["tests/test_calc.py::test_add"], "failure": []}
    assert (home / "evals" / "swe" / "predictions" / "gold.jsonl").is_file()
    empty = _evaluate(home, "empty")
    assert empty["resolved"] == [] and empty["empty_patch"] == ["lab__calc-1"]
    # a patch that edits the held-out test file instead of the code: the held-out tests are laid back, unresolved
    cheat = ("diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n"
             "@@ -1,5 +1,9 @@\n from calc import mul\n \n \n def test_mul():\n     assert mul(2, 3) == 6\n+\n+\n"
             "+def test_add():\n+    pass\n")
    bad = "diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n"
    rows = [{"instance_id": "lab__calc-1", "model_name_or_path": "cheat", "model_patch": cheat},
            {"instance_id": "lab__calc-404", "model_name_or_path": "cheat", "model_patch": bad}]
    (tmp_path / "cheat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = _evaluate(home, str(tmp_path / "cheat.jsonl"))
    assert out["unresolved"] == ["lab__calc-1"] and out["error"] == ["lab__calc-404"]
    assert out["instances"]["lab__calc-1"]["tests_status"]["FAIL_TO_PASS"]["failure"] == ["tests/test_calc.py::test_add"]
    # a patch that does not apply is an error, never an unresolved
    rows = [{"instance_id": "lab__calc-1", "model_name_or_path": "bad", "model_patch": bad}]
    (tmp_path / "bad.jsonl").write_text(json.dumps(rows[0]) + "\n")
    out = _evaluate(home, str(tmp_path / "bad.jsonl"))
    assert out["error"] == ["lab__calc-1"] and "does not apply" in out["instances"]["lab__calc-1"]["reason"]


def test_names_swe_bench_cut_at_a_space_stand_for_every_id_they_begin():
    name = "testing/test_assertrewrite.py::test_get_assertion_exprs[multi"
    assert swebench.truncated(name) and not swebench.truncated("tests/t.py::test_x[utf-8]")
    cut = {swebench.junit_id(name)}
    ids = ["testing.test_assertrewrite::test_get_assertion_exprs[multi line]",
           "testing.test_assertrewrite::test_get_assertion_exprs[multi-line x]",
           "testing.test_assertrewrite::test_other"]
    assert swebench.members(swebench.junit_id(name), ids, cut) == [ids[0]]
    assert swebench.members("a::b", ids, cut) == ["a::b"]


def test_an_agents_work_tree_becomes_the_patch_that_reapplies_it(calc, tmp_path):
    from rules.upstream import apply_patch

    repos, insts = calc
    rendered = swebench.render(insts["lab__calc-1"], _env(), str(repos))
    work = _lay(rendered, tmp_path)
    task = tmp_path / "task"
    assert swebench.work_patch(task, work) == ""
    (work / "calc" / "__init__.py").write_text(FIXED_SOURCE)
    (work / "calc" / "new.py").write_text("X = 1\n")
    (work / "README.md").unlink()
    subprocess.run(["git", "-C", str(work), "config", "core.fsmonitor", "touch /tmp/pwned-by-agent"], check=True)
    patch = swebench.work_patch(task, work)
    assert "+    return a + b" in patch and "calc/new.py" in patch and "deleted file" in patch
    again = tmp_path / "again"
    subprocess.run(["sh", str(task / "setup.sh"), str(again)], check=True)
    assert apply_patch(again, patch) is None
    assert (again / "calc" / "__init__.py").read_text() == FIXED_SOURCE and not (again / "README.md").exists()
    assert not Path("/tmp/pwned-by-agent").exists()  # the agent's .git/config was never read


def test_a_trial_grades_the_patch_on_a_fresh_base_as_its_prediction_is(calc, tmp_path):
    from rules.trial import graded_tree

    repos, insts = calc
    work = _lay(swebench.render(insts["lab__calc-1"], _env(), str(repos)), tmp_path)
    task = tmp_path / "task"
    (work / "calc" / "__init__.py").write_text(FIXED_SOURCE)
    (work / ".pytest_cache").mkdir()
    (work / ".pytest_cache" / "fix.py").write_text("X = 1\n")  # left out of every patch
    tree, note = graded_tree(task, work, tmp_path / "scratch" / "graded-1")
    assert tree != work and note == ""
    assert (tree / "calc" / "__init__.py").read_text() == FIXED_SOURCE
    assert not (tree / ".pytest_cache").exists() and (tree / "README.md").is_file()
    # a task of the aider tier (no "graded": "patch") is graded as its work tree is
    meta = json.loads((task / "task.json").read_text())
    (task / "task.json").write_text(json.dumps({**meta, "graded": None}))
    assert graded_tree(task, work, tmp_path / "scratch" / "graded-2") == (work, "")


# ---- retry until plausible (scripted agents; the pre-existing test outcome scripted too) ----

def _agent(edits):
    """A scripted agent: on attempt n it writes edits[n] (path → text) into the work tree."""
    def run(tree: Path, n: int) -> None:
        for rel, text in edits.get(n, {}).items():
            (tree / rel).write_text(text)
    return run


def test_first_plausible_attempt_is_the_answer_and_stops_the_loop(calc, tmp_path):
    repos, insts = calc
    _lay(swebench.render(insts["lab__calc-1"], _env(), str(repos)), tmp_path)
    task = tmp_path / "task"
    broken_source = "def add(a, b):\n    return a +\n"
    a = _agent({1: {"calc/__init__.py": broken_source}, 3: {"calc/__init__.py": FIXED_SOURCE}})
    b = _agent({2: {}})  # changes nothing
    out = swebench.run_attempts(task, [("a", a), ("b", b)], attempts=6)
    assert [x["agent"] for x in out["attempts"]] == ["a", "b", "a"]  # cycled, stopped at the plausible third
    assert out["chosen"] == 2 and out["plausible"] and "+    return a + b" in out["patch"]
    assert out["attempts"][0]["lint"] and out["attempts"][1]["edit"] == "the attempt changed nothing"


def test_with_no_plausible_attempt_the_least_bad_is_chosen(calc, tmp_path):
    repos, insts = calc
    _lay(swebench.render(insts["lab__calc-1"], _env(), str(repos)), tmp_path)
    task = tmp_path / "task"
    edits = {1: {"calc/__init__.py": "def add(:\n"},  # a syntax error: a lint problem
             2: {"calc/__init__.py": FIXED_SOURCE + "\n\nX = 1\nY = 2\n"},  # breaks a test: one problem, bigger diff
             3: {"calc/__init__.py": FIXED_SOURCE}}  # breaks a test too: one problem, the smaller diff
    broken = lambda tree: ["tests.test_calc::test_mul"]  # scripted: every non-empty attempt breaks test_mul
    out = swebench.run_attempts(task, [("never", _agent(edits))], attempts=3, broken=broken)
    assert len(out["attempts"]) == 3 and not out["plausible"]
    assert [x["problems"] for x in out["attempts"]] == [2, 1, 1]
    assert out["chosen"] == 2  # fewest problems, then the smaller diff


@pytest.mark.docker
def test_pre_existing_tests_measure_what_an_attempt_breaks_and_never_run_held_out_ones(swe_home, tmp_path):
    from rules.config import Limits

    home, res, src = swe_home
    assert res.code == 0
    task = home / "evals" / "swe" / "tasks" / "lab__calc-1"
    meta = json.loads((task / "task.json").read_text())
    inst = swebench.load_dataset(src / "data.jsonl")["lab__calc-1"]
    script = swebench.render(inst, _env(), str(src / "repos")).pretest
    pre = swebench.pretest_task(task, script, tmp_path / "pretest")
    limits = Limits(cpus=1, memory=2 * 1024**3, pids=512, timeout=300)
    base = swebench.pretest_baseline(pre, task, image=meta["image"], limits=limits)
    assert base == ["tests.test_calc::test_mul"]  # the held-out test_add never runs here
    bad = tmp_path / "bad"
    subprocess.run(["sh", str(task / "setup.sh"), str(bad)], check=True)
    (bad / "calc" / "__init__.py").write_text(FIXED_SOURCE.replace("a * b", "a + b"))
    assert swebench.pretest_failures(pre, bad, base, image=meta["image"], limits=limits) == base
    good = tmp_path / "good"
    subprocess.run(["sh", str(task / "setup.sh"), str(good)], check=True)
    (good / "calc" / "__init__.py").write_text(FIXED_SOURCE)
    assert swebench.pretest_failures(pre, good, base, image=meta["image"], limits=limits) == []


def test_tests_that_reach_out_are_deselected_from_the_agents_test_command():
    cmd = swebench.test_cmd(["tests/test_requests.py"], None, "", (
        "tests/test_requests.py::TestTimeout::test_connect_timeout", "tests/other.py::test_x"))
    assert cmd == ("python -m pytest -rA -p no:cacheprovider --deselect "
                   "tests/test_requests.py::TestTimeout::test_connect_timeout tests/test_requests.py")


def test_the_agents_test_command_runs_with_the_environments_test_variables():
    cmd = swebench.test_cmd(["tests/test_util_rst.py"], "pyproject.toml", "/work", (),
                            test_env=(("PYTHONDEVMODE", "1"), ("PYTHONWARNINGS", "all,ignore::DeprecationWarning:site")))
    assert cmd == ("PYTHONPATH=/work PYTHONDEVMODE=1 PYTHONWARNINGS=all,ignore::DeprecationWarning:site "
                   "python -m pytest -rA -p no:cacheprovider tests/test_util_rst.py")
    assert swebench.test_cmd(["t.py"], None, "", test_env=(("A", "x y"),)) == "A='x y' python -m pytest -rA -p no:cacheprovider t.py"


def test_agents_get_the_pre_existing_test_command_through_the_test_cmd_placeholder():
    from rules.agents import parse_agent

    agent = parse_agent("tomo", {"image": "noop", "command": ["tomo", "--test-cmd", "{test_cmd}", "{files}"]})
    assert agent.argv([], 1, test_cmd="python -m pytest tests/test_calc.py") == [
        "tomo", "--test-cmd", "python -m pytest tests/test_calc.py"]
    assert agent.argv(["a.py"], 1) == ["tomo", "--test-cmd", "", "a.py"]  # other tiers: empty


def test_log_fragments_in_the_dataset_lists_are_no_tests():
    assert swebench.test_name("tests/t.py::test_x[1]") and swebench.test_name("test_issue_123")
    assert not any(map(swebench.test_name, ["[100%]", "[", "[100%]------------------------------"]))


def test_a_repository_that_cannot_be_reached_is_no_rejection_and_the_fix_works(tmp_path):
    make_calc(tmp_path / "src")
    home = tmp_path / "home"
    write_suite(home, make_upstream(tmp_path / "upstream"))
    write_swe_suite(home, tmp_path / "src")
    empty = tmp_path / "nothing"
    empty.mkdir()
    res = run_doit(home, "gen:swe/lab__calc-1", f"repos={empty}")
    assert res.code != 0 and f"repos={empty} has no clone of lab/calc" in res.stdout + res.stderr
    assert not (home / ".lab" / "build" / "swe" / "lab__calc-1" / "render.json").exists()
    res = run_doit(home, "gen:swe", f"repos={empty}")  # the instance's gen task and its environment's build
    assert res.code != 0 and (res.stdout + res.stderr).count("has no clone of lab/calc") == 1, \
        "one missing repository, one line"
    res = run_doit(home, "gen:swe/lab__calc-1", f"repos={tmp_path / 'src' / 'repos'}")
    assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]
    render = json.loads((home / ".lab" / "build" / "swe" / "lab__calc-1" / "render.json").read_text())
    assert render["error"] is None


# ---- the dataset file: a bad record is named by file and line (no Docker) ----

def test_a_malformed_dataset_record_is_named_by_its_file_and_line(tmp_path):
    """A newcomer's dataset with one bad record stopped gen with the JSON parser's words alone (or a KeyError's
    field, or an AttributeError for a record that is no object): which file, which line, was theirs to find."""
    _, records = make_calc(tmp_path / "src")
    good = [json.dumps(r) for r in records]
    cases = {
        "broken.jsonl": (good[0] + "\n\n" + good[1] + "\n{oops\n", ":4: not JSON (Expecting property name"),
        "field.jsonl": (good[0] + "\n" + json.dumps({k: v for k, v in records[1].items() if k != "repo"}),
                        ":2: lab__calc-2: the dataset record has no field 'repo'; fix or remove that record"),
        "noid.jsonl": (json.dumps({k: v for k, v in records[0].items() if k != "instance_id"}),
                       ":1: the record has no field 'instance_id'"),
        "array.jsonl": (good[0] + "\n[1, 2]\n", ":2: the record is an array, not a JSON object"),
        "names.json": ("[\n" + good[0] + ",\n" + good[1] + ",\n" + json.dumps({**records[2], "PASS_TO_PASS": "x"}) + "\n]",
                       ":4: lab__calc-3: PASS_TO_PASS is not a JSON list of test names"),
        "number.json": ("[" + good[0] + ",\n\n 7]", ":3: the record is a number"),
        "cut.json": ("[\n" + good[0] + ",\n" + good[1][:40], ":3: not JSON ("),
        "extra.json": ("[" + good[0] + "]\n\n]", ":3: not JSON (more text after the array's closing ])"),
    }
    for name, (text, said) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(Rejected) as exc:
            swebench.load_dataset(tmp_path / name)
        assert str(exc.value).startswith(f"dataset {tmp_path / name}{said}"), (name, str(exc.value))
    (tmp_path / "whole.json").write_text("[\n" + ",\n".join(good) + "\n]\n")
    whole = swebench.load_dataset(tmp_path / "whole.json")
    assert whole == swebench.load_dataset(tmp_path / "src" / "data.jsonl") and list(whole) == [
        "lab__calc-1", "lab__calc-2", "lab__calc-3"]
