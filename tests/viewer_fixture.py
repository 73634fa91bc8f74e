"""Stored trials for the viewer's tests and benchmark, written the way rules.records defines them (no agent runs):
``make_evals(home, runs, tasks)`` lays an aider-shaped tier (suite.toml, agents.toml, published tasks with
prompt.txt and task.json, manifest.json with each task's test ids) and, per run and task, a trial folder with
result.json (``TrialResult``), agent-1.log, trajectory-1.json (ATIF-v1.7 steps), grade-1.log and work.diff."""
from __future__ import annotations

import json
from pathlib import Path

from rules.records import TrialResult, TryRecord

OUTCOMES = ("pass", "fail", "fail", "pass", "timeout", "error", "tampered")  # cycled over run × task


def expected_ids(task: str, n: int = 5) -> list[str]:
    """The expected test ids of a fixture task."""
    return [f"{task}::test_{i}" for i in range(1, n + 1)]


def trial_record(task: str, run: str, status: str, language: str, cost: float, steps: int = 6,
                 tries: int = 2) -> tuple[TrialResult, dict]:
    """A trial's record and its files (name → text): ``status`` pass, fail, timeout, error or tampered. Try 1
    fails two tests (test_2 failed, test_4 missing); a passing trial passes on try 2."""
    ids = expected_ids(task)
    files: dict[str, str] = {}
    records = []
    n_tries = 1 if status in ("error", "timeout", "tampered") else tries
    for n in range(1, n_tries + 1):
        passed = status == "pass" and n == n_tries
        if passed:
            grade = {"passed": True, "verdict": "pass", "evidence": [], "ran": 5, "passed_tests": 5,
                     "failed_tests": 0, "seconds": 1.5, "timed_out": False, "exit_code": 0}
        elif status == "tampered":
            grade = {"passed": False, "verdict": "tampered", "ran": 5, "passed_tests": 5, "failed_tests": 0,
                     "evidence": ["the failing canary test was reported as passed"], "seconds": 1.2,
                     "timed_out": False, "exit_code": 0}
        else:
            grade = {"passed": False, "verdict": "fail", "ran": 5, "passed_tests": 3, "failed_tests": 2,
                     "evidence": [f"1 expected test(s) not reported: {ids[3]}", f"1 test(s) did not pass: {ids[1]}"],
                     "seconds": 2.0, "timed_out": False, "exit_code": 1}
        if status == "error":
            grade = None
        usage = {"tokens_sent": 1200, "tokens_received": 300, "cost": round(cost / n_tries, 4)}
        outcome = "pass" if passed else ("fail" if status == "pass" else status)
        steps_list = [{"step_id": 1, "source": "user", "message": f"Solve {task}. <script>alert(1)</script>"}]
        for s in range(2, steps + 1):
            steps_list.append({"step_id": s, "source": "agent", "message": f"step {s}: reading the tests",
                               "tool_calls": [{"tool_call_id": f"c{s}", "function_name": "bash",
                                               "arguments": {"command": f"cat test_{s}.py"}}],
                               "observation": {"results": [{"source_call_id": f"c{s}",
                                                            "content": f"output of call {s}\n" * 3}]}})
        steps_list.append({"step_id": steps + 1, "source": "agent",
                           "message": f"last step of try {n}: edited {task}.py and ran the tests"})
        files[f"trajectory-{n}.json"] = json.dumps({"schema_version": "ATIF-v1.7",
                                                    "agent": {"name": "fake", "model_name": "m"},
                                                    "steps": steps_list})
        files[f"agent-{n}.log"] = f"fake agent, try {n}\n" + "working...\n" * 20
        files[f"grade-{n}.log"] = (f"=== {task} ===\nFAILED {ids[1]} - assert 1 == 2\n"
                                   f"lab-check: ran=5 passed={grade['passed_tests'] if grade else 0} verdict="
                                   f"{grade['verdict'] if grade else '-'}\n") if grade else ""
        records.append(TryRecord(number=n, outcome=outcome, grade=grade, usage=usage,
                                 agent={"exit_code": 0 if status != "timeout" else None,
                                        "timed_out": status == "timeout", "seconds": 30.0 + n},
                                 trajectory=f"trajectory-{n}.json", suspicions=[]))
    files["work.diff"] = f"--- stub/{task}.py\n+++ work/{task}.py\n@@ -1 +1 @@\n-pass\n+return 42  # <b>not bold</b>\n"
    result = TrialResult(task=task, agent=run.split(".")[0], tier="aider",
                         groups={"language": language, "exercise": task.split("-", 1)[1]}, run=run,
                         settings={"model": f"model-{run}"}, label=run, status=status,
                         passed_try=n_tries if status == "pass" else None, tries=records, tries_allowed=2,
                         error="provider said 401 Unauthorized" if status == "error" else None,
                         error_kind="agent" if status == "error" else None,
                         tests={"ran": 5, "passed": 5 if status == "pass" else 3, "failed": 0 if status == "pass" else 2},
                         agent_seconds=31.0 * n_tries, grading_seconds=2.0 * n_tries, seconds=40.0 * n_tries,
                         usage={"tokens_sent": 1200 * n_tries, "tokens_received": 300 * n_tries, "cost": cost},
                         started="2026-12-04T10:00:00+00:00", finished="2026-12-04T10:01:20+00:00",
                         images={"agent": {"tag": "lab-agent-fake", "id": "sha256:aaaa"},
                                 "grader": {"tag": "lab-grader", "id": "sha256:bbbb"}})
    return result, files


def make_evals(home: Path, runs: list[str], tasks: list[tuple[str, str]], steps: int = 6) -> Path:
    """Lay an aider tier with stored trials below ``home`` (the LAB_HOME): ``runs`` (run names), ``tasks``
    ((task, language) pairs); every run has a trial of every task, its outcome cycled through OUTCOMES. Returns
    the tier's folder (``home/evals/aider``)."""
    tier = Path(home) / "evals" / "aider"
    (tier / "tasks").mkdir(parents=True, exist_ok=True)
    (tier / "suite.toml").write_text('upstream = "x"\nref = "main"\nlanguages = ["python"]\n')
    # no table for the runs' agents: the report then judges a stored trial by its task's side only (its key's
    # digests, written below), as it does for a run whose agent was removed
    (Path(home) / "evals" / "agents.toml").write_text("# the viewer's fixture: no agent is run\n")
    entries = []
    for task, lang in tasks:
        d = tier / "tasks" / task
        d.mkdir(exist_ok=True)
        (d / "task.json").write_text(json.dumps({"task": task, "language": lang, "exercise": task.split("-", 1)[1]}))
        (d / "prompt.txt").write_text(f"# {task}\n\nMake the tests pass. Edit {task}.py.\n")
        entries.append({"task": task, "language": lang, "exercise": task.split("-", 1)[1], "status": "kept",
                        "test_ids": expected_ids(task), "tests": 5})
    (tier / "manifest.json").write_text(json.dumps({"version": 2, "tier": "aider", "tasks": entries}))
    from rules.trial import GRADING_FILES, check_digest, task_digest

    keys = {task: {"format": 2, "run": {"task_digest": task_digest(tier / "tasks" / task, without=GRADING_FILES)},
                   "grade": {"check_digest": check_digest(tier / "tasks" / task)}} for task, _ in tasks}
    for i, run in enumerate(runs):
        for j, (task, lang) in enumerate(tasks):
            status = OUTCOMES[(i + j) % len(OUTCOMES)]
            result, files = trial_record(task, run, status, lang, cost=0.0123 * (j + 1), steps=steps)
            result.key = keys[task]
            folder = tier / "runs" / run / task
            folder.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (folder / name).write_text(text)
            result.save(folder / "result.json")
        (tier / "runs" / run / "run.json").write_text(json.dumps({"version": 1, "run": run, "agent": run.split(".")[0],
                                                                  "label": run, "settings": {}}))
    return tier
