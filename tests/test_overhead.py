"""lab's own per-command and per-trial work made cheaper without changing what it decides (no Docker)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from rules.files import files_below


def _walked(folder: Path) -> list[str]:
    out: list[str] = []
    for root, _dirs, names in os.walk(folder):
        out += [os.path.join(root, n) for n in names]
    return sorted(out)


def test_files_below_lists_what_os_walk_lists(tmp_path):
    root = tmp_path / "ex"
    (root / ".meta" / "deep").mkdir(parents=True)
    (root / "a.py").write_text("a")
    (root / ".meta" / "config.json").write_text("{}")
    (root / ".meta" / "deep" / "x").write_text("x")
    (root / "empty").mkdir()
    (root / "link-to-file").symlink_to("a.py")
    (root / "link-to-dir").symlink_to(".meta")  # listed by neither, never followed
    (root / "dangling").symlink_to("nowhere")
    got = files_below(root)
    assert got == _walked(root)
    assert str(root / "link-to-file") in got and str(root / "dangling") in got
    assert not any("link-to-dir" in p for p in got)
    assert files_below(tmp_path / "missing") == [] == _walked(tmp_path / "missing")


@pytest.mark.parametrize("name, targets, only", [
    ("run", ["gen:aider"], True),
    ("run", ["gen:aider", "prove:aider/go-bowling"], True),
    ("run", ["pull", "image:grader"], True),
    ("run", ["gen", "env:swe/x", "batch:aider/python-0", "publish:aider"], True),
    ("run", [], False),  # the default tasks (the report), also `doit run agent=noop`
    ("run", ["gen:aider", "report"], False),
    ("run", ["eval:noop"], False),
    ("list", [], False),
    ("info", ["gen:aider"], False),
    ("forget", ["gen:aider"], False),
])
def test_tier_steps_only_is_true_only_for_a_command_that_runs_tier_steps_alone(name, targets, only):
    """The targets are doit's own (its loader hands them to rules.cli), so no option of doit's is guessed at."""
    from rules import cli

    cli.use(cli.Command(name, tuple(targets), {}, runs_tasks=name == "run"))
    assert cli.tier_steps_only(("pull", "image", "gen", "prove", "env", "batch", "publish")) is only


def _shape(root: Path) -> dict[str, tuple]:
    """Every entry below ``root``: (kind, permission bits, content or link target)."""
    import stat

    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(folder) / name
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[p.relative_to(root).as_posix()] = ("link", None, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[p.relative_to(root).as_posix()] = ("dir", stat.S_IMODE(st.st_mode), None)
            else:
                out[p.relative_to(root).as_posix()] = ("file", stat.S_IMODE(st.st_mode), p.read_bytes())
    return out


def _aider_task(task_dir: Path, tier: str = "aider") -> Path:
    import json

    from rules.render import render

    ws = task_dir / "workspace"
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / "stub.py").write_text("def f():\n    pass\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "src" / "deep" / "data.bin").write_bytes(bytes(range(256)))
    (ws / "src" / "ro.txt").write_text("read only")
    (ws / "src" / "ro.txt").chmod(0o444)
    (ws / "link.py").symlink_to("stub.py")
    (ws / "src-link").symlink_to("src")
    (ws / "dangling").symlink_to("missing/file")
    (ws / "src" / "deep").chmod(0o750)
    (task_dir / "setup.sh").write_text(render("aider/setup.sh.j2", task="t"))
    (task_dir / "setup.sh").chmod(0o755)
    (task_dir / "task.json").write_text(json.dumps({"task": "t", "tier": tier}))
    return task_dir


def test_a_work_tree_laid_by_copy_is_the_tree_setup_sh_lays(tmp_path):
    from rules.worktree import lay_work_tree, lay_work_tree_like

    task = _aider_task(tmp_path / "task")
    lay_work_tree(task, tmp_path / "stub")
    lay_work_tree(task, tmp_path / "by-setup")
    before = (tmp_path / "stub" / "stub.py").stat().st_mtime_ns
    lay_work_tree_like(task, tmp_path / "stub", tmp_path / "by-copy")
    expected = _shape(tmp_path / "by-setup")
    assert expected["run.sh"][1] == 0o755 and expected["src-link"] == ("link", None, "src")
    assert _shape(tmp_path / "by-copy") == expected
    assert _shape(tmp_path / "by-copy") == _shape(tmp_path / "stub")  # the stub is untouched
    assert (tmp_path / "by-copy").stat().st_mode == (tmp_path / "by-setup").stat().st_mode
    assert (tmp_path / "by-copy" / "stub.py").stat().st_mtime_ns >= before  # fresh, as cp -R without -p


def test_a_tier_whose_setup_is_not_a_copy_runs_setup_sh_again(tmp_path):
    from rules.worktree import lay_work_tree, lay_work_tree_like

    task = _aider_task(tmp_path / "task", tier="swe")
    lay_work_tree(task, tmp_path / "stub")
    (tmp_path / "stub" / "stub.py").write_text("changed")  # a copy would carry this; setup.sh does not
    lay_work_tree_like(task, tmp_path / "stub", tmp_path / "work")
    assert (tmp_path / "work" / "stub.py").read_text() == "def f():\n    pass\n"


def test_a_gen_command_loads_neither_the_swe_tier_nor_the_trial_modules(tmp_path):
    """`doit gen:aider` makes no agent, trial or report task and imports nothing of theirs (the swe tier's seam
    is made on first use)."""
    import subprocess
    import sys

    code = ("from rules import cli\n"
            "cli.use(cli.Command('run', ('gen:aider',), {'all': '1'}, runs_tasks=True))\n"
            "import sys\n"
            "import rules.tasks as t\n"
            "assert t._tier_steps_only() and t.task_eval() is not None and list(t.task_eval()) == []\n"
            "assert t.task_report() is None\n"
            "print(sorted(m for m in sys.modules if m in ('rules.tiers.swe.swebench', 'rules.tiers.swe.swerun', 'rules.trial')))\n"
            "from rules import tiers\n"
            "assert type(tiers.get('swe')).__name__ == 'SweTier' and 'rules.tiers.swe.swebench' in sys.modules\n"
            "assert [type(tiers.get(n)).__name__ for n in tiers.names()] == ['AiderTier', 'SweTier', 'SweMultiTier']\n"
            "assert tiers.get('swe') is tiers.get('swe')\n"
            "try:\n    tiers.get('nope')\nexcept Exception as exc:\n    assert 'aider, swe' in str(exc), exc\n"
            "else:\n    raise AssertionError('an unknown tier loaded')\n")
    (tmp_path / "evals" / "aider").mkdir(parents=True)
    env = {**os.environ, "LAB_HOME": str(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"
