"""The swe tier tried as a hostile agent and as a hostile predictions file: every attack must end in the honest
outcome (``fail``/unresolved, ``tampered``, not plausible, or refused), never in a verdict the work does not
deserve.

Pure attacks on the host (a predictions file, a patch applied on the host) run without Docker. The others use the
fixture swe tier of tests/fixture_swe.py (``calc``: ``add`` subtracts; the held-out test ``test_add`` fails until it
adds) in the real engine: a work tree with the bug left in and an attack added is graded the way a trial grades it
(the patch laid on a fresh base, ``rules.trial.graded_tree``), or run through ``doit run suite=swe`` with scripted
agents.
"""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit, write_suite  # noqa: E402
from fixture_swe import BASE, FIXED_SOURCE, make_calc, write_swe_suite  # noqa: E402
from fixture_upstream import make_upstream  # noqa: E402

from rules import swebench  # noqa: E402
from rules.config import Suite  # noqa: E402

docker = pytest.mark.docker
TASK = "lab__calc-1"
WRONG = BASE["calc/__init__.py"]  # add still subtracts


# ---- a hostile predictions file, on the host (no Docker) ----

@pytest.fixture
def swe_suite(tmp_path, monkeypatch):
    """A swe tier with one published task (its folder, task.json and tests.json; never graded here)."""
    import rules.config

    monkeypatch.setattr(rules.config, "EVALS", tmp_path / "home" / "evals")
    suite = Suite(name="swe", upstream="", ref="", languages=())
    task = suite.tasks_dir / TASK
    task.mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task": TASK, "repo": "lab/calc", "image": "lab/swe-env:calc",
                                                "fail_to_pass": [], "pass_to_pass": []}))
    (task / "tests.json").write_text(json.dumps({"version": 1, "tests": ["tests.test_calc::test_add"]}))
    return suite


def test_a_predictions_file_cannot_write_outside_its_folder_nor_count_a_task_twice(swe_suite, tmp_path):
    """instance_id names a folder: ``../`` paths, absolute paths and second spellings of a published task are
    errors, write nothing, and never add to a count (before: ``out_dir / instance_id`` was written, and
    ``../tasks/<id>`` graded the task again under another name)."""
    outside = tmp_path / "outside"
    ids = [TASK, f"./{TASK}", f"../tasks/{TASK}", f"{TASK}/", "../../../../outside", str(outside), "..", "."]
    rows = [{"instance_id": i, "model_name_or_path": "m", "model_patch": ""} for i in ids]
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = swebench.evaluate(swe_suite, preds, out_dir=tmp_path / "ev" / "p", log=open("/dev/null", "w"))
    assert out["empty_patch"] == [TASK] and out["resolved"] == [] and out["unresolved"] == []
    assert sorted(out["error"]) == sorted(ids[1:])
    assert all("not a published task" in out["instances"][i]["reason"] for i in ids[1:])
    assert not outside.exists() and not (tmp_path / "outside").exists()
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file() and "home" not in p.parts)
    assert written == ["ev/p/lab__calc-1/patch.diff", "ev/p/lab__calc-1/report.json", "ev/p/results.json", "p.jsonl"]


@pytest.mark.parametrize("patch", [["not", "text"], {"a": 1}, 7, "diff \ud800 lone surrogate\n"])
def test_a_model_patch_that_is_not_text_is_an_error_not_a_crash(swe_suite, tmp_path, patch):
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps([{"instance_id": TASK, "model_name_or_path": "m", "model_patch": patch}]))
    out = swebench.evaluate(swe_suite, preds, out_dir=tmp_path / "ev", log=open("/dev/null", "w"))
    assert out["error"] == [TASK] and "not text" in out["instances"][TASK]["reason"], out["instances"][TASK]


# ---- a patch applied on the host (rules.upstream.apply_patch; no Docker) ----

ESCAPES = {
    "dot-dot": "diff --git a/../escape.txt b/../escape.txt\nnew file mode 100644\n--- /dev/null\n+++ b/../escape.txt\n"
               "@@ -0,0 +1 @@\n+pwned\n",
    "absolute": "diff --git a/{abs} b/{abs}\nnew file mode 100644\n--- /dev/null\n+++ b/{abs}\n@@ -0,0 +1 @@\n+pwned\n",
    "through-a-symlink": "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n"
                         "+{outside}\n\\ No newline at end of file\n"
                         "diff --git a/link/through.txt b/link/through.txt\nnew file mode 100644\n--- /dev/null\n"
                         "+++ b/link/through.txt\n@@ -0,0 +1 @@\n+pwned\n",
    "git-hook": "diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n"
                "--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+touch {outside}/hook\n",
    "git-config": "diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n@@ -1 +1,2 @@\n"
                  " [core]\n+\tfsmonitor = touch {outside}/fsmonitor\n",
}


def _lab_repo(root: Path) -> Path:
    """A work tree as a task's setup.sh lays it: a fresh repository with one commit."""
    import subprocess

    root.mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin",
           "GIT_AUTHOR_NAME": "l", "GIT_AUTHOR_EMAIL": "l@l", "GIT_COMMITTER_NAME": "l", "GIT_COMMITTER_EMAIL": "l@l"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return root


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_a_patch_never_writes_outside_the_work_tree_nor_into_its_repository(tmp_path, name):
    from rules.upstream import apply_patch

    outside = tmp_path / "outside"
    outside.mkdir()
    tree = _lab_repo(tmp_path / "tree")
    config = (tree / ".git" / "config").read_text()
    patch = ESCAPES[name].format(abs=str(outside / "abs.txt"), outside=outside)
    problem = apply_patch(tree, patch)
    assert problem, "git apply refused it"
    assert list(outside.iterdir()) == [] and not (tmp_path / "escape.txt").exists()
    assert (tree / ".git" / "config").read_text() == config and not (tree / ".git" / "hooks" / "post-checkout").exists()
