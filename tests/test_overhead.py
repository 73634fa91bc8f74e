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


@pytest.mark.parametrize("argv, only", [
    (["gen:aider", "all=1"], True),
    (["-f", "/x/dodo.py", "gen:aider", "langs=go", "limit=5"], True),
    (["run", "gen:aider", "prove:aider/go-bowling", "-n", "2"], True),
    (["pull", "image:grader", "--file=/x/dodo.py", "-n2", "-a"], True),
    (["gen", "env:swe/x", "batch:aider/python-0"], True),
    ([], False),  # the default tasks (the report)
    (["agent=noop"], False),  # `doit run agent=noop`: the report, after the agent's trials
    (["run", "agent=noop"], False),
    (["gen:aider", "report"], False),
    (["eval:noop"], False),
    (["list"], False),
    (["info", "gen:aider"], False),
    (["forget", "gen:aider"], False),
    (["--some-new-option", "gen:aider"], False),  # unknown: its value could be a task name
])
def test_tier_steps_only_is_true_only_when_sure(argv, only):
    from rules.tasks import tier_steps_only

    assert tier_steps_only(argv) is only
