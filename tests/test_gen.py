"""Generating and proving a tier with doit, on the fixture upstream, with the real Docker engine."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PROJECT, run_doit, write_suite
from fixture_upstream import git, make_upstream

pytestmark = pytest.mark.docker

QUICK = ["python/hello", "python/ledger", "python/wrong-reference", "python/no-config", "go/hello"]


def manifest(home: Path) -> dict:
    return json.loads((home / "evals" / "aider" / "manifest.json").read_text())


def statuses(home: Path) -> dict[str, tuple[str, str]]:
    return {e["task"]: (e["status"], e["reason"]) for e in manifest(home)["tasks"]}


@pytest.fixture(scope="module")
def full_tier(tmp_path_factory, grader_image):
    """Every fixture exercise generated once (all four tracks, a short prove timeout for python-slow)."""
    root = tmp_path_factory.mktemp("full")
    up = make_upstream(root / "upstream")
    home = root / "home"
    write_suite(home, up, timeout=40)
    result = run_doit(home, "gen:aider", "all=1")
    assert result.code == 0, result.stderr[-3000:] + result.stdout[-3000:]
    return home, result


def test_every_status_and_reason_is_recorded(full_tier):
    home, _ = full_tier
    got = statuses(home)
    assert got["python-hello"][0] == "kept"
    assert got["go-hello"][0] == "kept"
    assert got["javascript-hello"][0] == "kept"
    assert got["rust-hello"][0] == "kept"
    assert got["python-ledger"] == ("free", "the untouched stub passes its tests")
    assert got["python-wrong-reference"] == ("rejected", "reference fails: 3 of 3 tests failed")
    assert got["python-slow"][0] == "rejected" and got["python-slow"][1].startswith("timeout")
    assert got["go-counter"][0] == "rejected" and got["go-counter"][1].startswith("reference ran no tests ("), got
    assert got["python-no-config"] == ("rejected", "malformed exercise: missing .meta/config.json")
    assert got["python-bad-json"][1].startswith("malformed exercise: invalid .meta/config.json")
    assert got["python-missing-file"] == ("rejected", "malformed exercise: missing files: missing_file_test.py")


def test_only_kept_and_free_tasks_are_published_with_answers_apart(full_tier):
    home, _ = full_tier
    tasks = sorted(p.name for p in (home / "evals/aider/tasks").iterdir())
    answers = sorted(p.name for p in (home / "evals/aider/answers").iterdir())
    assert tasks == answers == ["go-hello", "javascript-hello", "python-hello", "python-ledger", "rust-hello"]
    hello = home / "evals/aider/tasks/python-hello"
    assert sorted(p.name for p in hello.iterdir()) == ["check.sh", "prompt.txt", "setup.sh", "task.json", "tests.json",
                                                       "workspace"]
    ids = json.loads((hello / "tests.json").read_text())["tests"]
    assert ids == ["hello_test.HelloTest::test_one", "hello_test.HelloTest::test_three", "hello_test.HelloTest::test_two"]
    assert {e["task"]: e["test_ids"] for e in manifest(home)["tasks"]}["python-hello"] == ids
    assert "return number * 2" in (home / "evals/aider/answers/python-hello/hello.py").read_text()
    assert not list(hello.rglob("*example*"))


def test_skipped_tests_are_enabled_and_counted(full_tier):
    home, _ = full_tier
    tests = {e["task"]: e["tests"] for e in manifest(home)["tasks"]}
    assert tests["python-hello"] == 3
    assert tests["go-hello"] == 3  # two subtests and one test
    assert tests["javascript-hello"] == 3  # one test, one xtest, one xit
    assert tests["rust-hello"] == 3  # one test, two #[ignore]


def test_progress_is_shown(full_tier):
    _, result = full_tier
    out = result.stderr + result.stdout
    assert "[prove " in out and "kept" in out


def test_scenarios_lists_published_tasks(full_tier):
    home, _ = full_tier
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), "scenarios"], cwd=PROJECT,
                          env={**os.environ, "LAB_HOME": str(home)}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "python-ledger" in proc.stdout and "free" in proc.stdout and "python-slow" not in proc.stdout


def _grade(home: Path, task: str, edit, image: str):
    from rules.config import Limits
    from rules.grade import grade
    from rules.worktree import lay_work_tree

    task_dir = home / "evals/aider/tasks" / task
    work = home / f"work-{task}"
    shutil.rmtree(work, ignore_errors=True)
    lay_work_tree(task_dir, work)
    edit(work)
    return grade(task_dir, work, image=image, limits=Limits(timeout=120))


def test_tampered_test_file_is_laid_back(full_tier, grader_image):
    home, _ = full_tier

    def cheat(work: Path):
        (work / "hello_test.py").write_text("import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n")
    g = _grade(home, "python-hello", cheat, grader_image)
    assert not g.passed and g.ran == 3 and g.failed_tests == 3


def test_extra_test_file_from_the_agent_is_not_run(full_tier, grader_image):
    home, _ = full_tier

    def cheat(work: Path):
        (work / "hello.py").write_text("def double(n):\n    return n * 2\n")
        (work / "zz_test.py").write_text("def test_extra():\n    assert False\n")
    g = _grade(home, "python-hello", cheat, grader_image)
    assert g.passed and g.ran == 3


def test_tampered_build_file_is_laid_back(full_tier, grader_image):
    home, _ = full_tier

    def cheat(work: Path):
        (work / "go.mod").write_text("module nothing\n\ngo 1.18\n")
    g = _grade(home, "go-hello", cheat, grader_image)
    assert not g.passed and g.ran > 0


# ---- incremental rebuilds: which doit tasks ran ----

@pytest.fixture
def quick_home(tmp_path, grader_image):
    up = make_upstream(tmp_path / "upstream", only=QUICK)
    home = tmp_path / "home"
    write_suite(home, up, languages=("go", "python"))
    templates = tmp_path / "templates"
    shutil.copytree(PROJECT / "templates", templates)
    os.environ["LAB_TEMPLATES"] = str(templates)
    first = run_doit(home, "gen:aider", "all=1")
    assert first.code == 0, first.stderr[:3000] + first.stdout[-3000:]
    assert first.executed("prove:") == {f"prove:aider/{k.replace('/', '-')}" for k in QUICK}
    yield home, up, templates
    os.environ.pop("LAB_TEMPLATES", None)


def test_nothing_changed_means_nothing_runs(quick_home):
    home, _, _ = quick_home
    again = run_doit(home, "gen:aider", "all=1")
    assert again.code == 0
    assert again.executed("gen:") == set() and again.executed("prove:") == set()
    assert "\ntier aider: " in "\n" + again.stdout and "-- " not in again.stdout, "its summary, no line per task"


def test_upstream_change_reproves_only_that_exercise(quick_home):
    home, up, _ = quick_home
    test = up / "python/exercises/practice/hello/hello_test.py"
    test.write_text(test.read_text() + "\n    def test_four(self):\n        self.assertEqual(double(2), 4)\n")
    git(up, "commit", "-qam", "one more test")
    again = run_doit(home, "gen:aider", "all=1")
    assert again.code == 0, again.stderr[-2000:]
    assert again.executed("gen:aider/") == {"gen:aider/python-hello"}
    assert again.executed("prove:") == {"prove:aider/python-hello"}
    assert {e["task"]: e["tests"] for e in manifest(home)["tasks"]}["python-hello"] == 4


def test_template_change_rerenders_one_language_and_reproves_changed_tasks(quick_home):
    home, _, templates = quick_home
    check = templates / "aider/go/check.sh.j2"
    check.write_text(check.read_text() + "\n{# a comment changes no rendered file #}\n")
    again = run_doit(home, "gen:aider", "all=1")
    assert again.executed("gen:aider/") == {"gen:aider/go-hello"}
    assert again.executed("prove:") == set()
    python = templates / "aider/python/check.sh.j2"
    text = python.read_text()
    assert "{% block test -%}" in text
    python.write_text(text.replace("{% block test -%}", "{% block test -%}\n# changed by a test", 1))
    third = run_doit(home, "gen:aider", "all=1")
    assert third.executed("gen:aider/") == {f"gen:aider/{k.replace('/', '-')}" for k in QUICK if k.startswith("python/")}
    # the malformed exercise renders no check.sh, so only the rendered python tasks are proved again
    assert third.executed("prove:") == {"prove:aider/python-hello", "prove:aider/python-ledger",
                                       "prove:aider/python-wrong-reference"}


def test_strict_leaves_free_tasks_out(quick_home):
    home, _, _ = quick_home
    result = run_doit(home, "gen:aider", "all=1", "strict=1")
    assert result.code == 0
    assert not (home / "evals/aider/tasks/python-ledger").exists()
    entry = {e["task"]: e for e in manifest(home)["tasks"]}["python-ledger"]
    assert entry["status"] == "free" and entry["published"] is False


def test_selection_by_language_and_limit(tmp_path, grader_image):
    up = make_upstream(tmp_path / "upstream", only=QUICK)
    home = tmp_path / "home"
    write_suite(home, up, languages=("go", "python"))
    result = run_doit(home, "gen:aider", "langs=python", "limit=1")
    assert result.code == 0, result.stderr[-2000:]
    assert result.executed("prove:") == {"prove:aider/python-hello"}
    got = statuses(home)
    assert got["python-hello"][0] == "kept" and got["go-hello"][0] == "unproven"


def test_unreachable_upstream_names_the_setting(tmp_path):
    home = tmp_path / "home"
    write_suite(home, tmp_path / "does-not-exist")
    result = run_doit(home, "pull:aider")
    said = result.stdout + result.stderr
    assert result.code != 0
    # one line: what git said, the fix, that nothing was pulled; not doit's TaskFailed head or git's raw stderr
    assert (f"pull:aider: upstream '{tmp_path / 'does-not-exist'}': no such file or folder: pass upstream=PATH of a "
            "clone of the upstream") in said, said
    assert "nothing was pulled" in said and "TaskFailed" not in said and "stderr:" not in said, said


def test_an_upstream_without_exercises_is_refused_and_unpublishes_nothing(tmp_path):
    """A repository that is not the polyglot benchmark (no <track>/exercises/practice/<slug>/) would publish no
    task at all and so unpublish every task proven so far: gen refuses it in one line and leaves the manifest."""
    import subprocess

    other = tmp_path / "not-the-benchmark"
    other.mkdir()
    (other / "README.md").write_text("some other project\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=other, check=True)
    home = tmp_path / "home"
    write_suite(home, other)
    manifest = home / "evals" / "aider" / "manifest.json"
    manifest.write_text('{"format": 1, "tasks": []}\n')
    result = run_doit(home, "gen:aider")
    said = result.stdout + result.stderr
    assert result.code != 0, said
    assert "holds no exercise of the tracks go,javascript,python,rust" in said and "not remembered for later " \
        "commands" in said and "Traceback" not in said and "TaskFailed" not in said, said
    assert manifest.read_text() == '{"format": 1, "tasks": []}\n'
    assert not (home / ".lab" / "upstream" / "aider.json").exists(), "a wrong upstream is not remembered"
