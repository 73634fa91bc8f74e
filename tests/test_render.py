"""Rendering a task from an exercise (pure: no Docker)."""
from __future__ import annotations

import subprocess

import pytest

from fixture_upstream import EXERCISES, write_exercise
from rules.tiers.aider import exercises as aider


def _exercises(root):
    return {e.task: e for e in aider.discover(root, list(aider.TRACKS))}


@pytest.fixture
def exercises(upstream):
    return _exercises(upstream)


def test_task_names_are_track_dash_slug(exercises):
    assert {"python-hello", "go-hello", "javascript-hello", "rust-hello", "go-counter"} <= set(exercises)


def test_prompt_has_docs_in_order_then_files_to_edit(exercises):
    prompt = aider.render(exercises["python-hello"]).task_files["prompt.txt"][0].decode()
    intro, instructions, append = (prompt.index(s) for s in ("INTRO for", "INSTRUCTIONS for", "APPEND for"))
    assert intro < instructions < append
    tail = prompt[append:]
    assert "hello.py" in tail and "hello_test.py" in tail


def test_prompt_without_optional_docs(tmp_path):
    files = {k: v for k, v in EXERCISES["python/hello"].items()
             if k not in (".docs/introduction.md", ".docs/instructions.append.md")}
    write_exercise(tmp_path, "python/hello", files)
    prompt = aider.render(_exercises(tmp_path)["python-hello"]).task_files["prompt.txt"][0].decode()
    assert "INSTRUCTIONS for" in prompt and "INTRO" not in prompt and "APPEND" not in prompt


def test_reference_goes_to_answers_never_into_the_task(exercises):
    r = aider.render(exercises["python-hello"])
    assert set(r.answer_files) == {"hello.py"}
    assert b"return number * 2" in r.answer_files["hello.py"][0]
    assert not any(".meta" in rel for rel in r.task_files)
    assert not any(b"return number * 2" in data for data, _ in r.task_files.values())


def test_setup_lays_stub_and_visible_tests(exercises, tmp_path):
    r = aider.render(exercises["python-hello"])
    task = tmp_path / "task"
    for rel, (data, mode) in r.task_files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_bytes(data)
        (task / rel).chmod(mode)
    subprocess.run(["sh", str(task / "setup.sh"), str(tmp_path / "work")], check=True)
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["hello.py", "hello_test.py"]
    assert (tmp_path / "work" / "hello.py").read_text() == "def double(number):\n    pass\n"


def test_check_lays_back_every_non_solution_file(exercises):
    check = aider.render(exercises["go-hello"]).task_files["check.sh"][0].decode()
    assert "hello_test.go" in check and "go.mod" in check
    assert '"$task/workspace/"hello.go ' not in check  # the solution file is the agent's


@pytest.mark.parametrize("task, reason", [
    ("python-no-config", "missing .meta/config.json"),
    ("python-bad-json", "invalid .meta/config.json"),
    ("python-missing-file", "missing files: missing_file_test.py"),
])
def test_malformed_exercise_is_rejected_with_its_reason(exercises, task, reason):
    with pytest.raises(aider.ExerciseError, match="malformed exercise") as err:
        aider.render(exercises[task])
    assert reason in str(err.value)


def test_select_takes_n_per_track(exercises):
    chosen = aider.select(list(exercises.values()), 1)
    assert sorted(e.track for e in chosen) == ["go", "javascript", "python", "rust"]
    assert aider.select(list(exercises.values()), None) == list(exercises.values())


def test_unknown_track_is_an_error(upstream):
    with pytest.raises(aider.ExerciseError, match="unknown track"):
        aider.discover(upstream, ["cobol"])


def test_render_is_deterministic(exercises):
    a, b = aider.render(exercises["rust-hello"]), aider.render(exercises["rust-hello"])
    assert a.task_files == b.task_files and a.answer_files == b.answer_files
