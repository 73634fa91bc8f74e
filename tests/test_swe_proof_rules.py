"""The swe tier's proof rules by the dataset's meaning (rules.tiers.swe.swebench.prove): a FAIL_TO_PASS test that
already passes at base is kept and noted, the gold patch runs three times and a test whose outcome differs
between runs is recorded with each run's outcome and left out of the expectations.

The proof's logic runs here against a scripted grader (a fixture standing in for ``rules.grade.grade``: each call
returns the next scripted run, its verdict and evidence decided by the real ``rules.grade.decide``), so that a
flaky test can be made to flip on cue; tests/test_swe.py proves the fixture instances in the real engine."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixture_swe import calc_env, make_calc
from rules.grade import Grade, decide
from rules.tiers.swe import swebench

ADD, MUL = "tests.test_calc::test_add", "tests.test_calc::test_mul"


def _task(tmp_path: Path, iid: str) -> tuple[Path, Path, dict]:
    """The fixture instance ``iid`` rendered into a task folder and an answer folder."""
    repos, records = make_calc(tmp_path / "src")
    inst = swebench._instance(next(r for r in records if r["instance_id"] == iid))
    rendered = swebench.render(inst, calc_env(), str(repos))
    task, answer = tmp_path / "task", tmp_path / "answer"
    for root, files in ((task, rendered.task_files), (answer, rendered.answer_files)):
        for rel, (data, mode) in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
            (root / rel).chmod(mode)
    return task, answer, rendered.meta


class ScriptedGrader:
    """A fixture standing in for ``rules.grade.grade``: call k returns a Grade whose passed tests are
    ``runs[k]`` (ids; a string ``"timeout"`` is a run killed for time), decided against the ``expected`` ids
    the proof asks for; ``calls`` records which tree each call graded (``gold`` or ``base``)."""

    def __init__(self, runs: list):
        self.runs, self.calls = list(runs), []

    def __call__(self, task_dir, tree, *, image, limits, expected=None, log_path=None, **_):
        self.calls.append(Path(tree).name)
        run = self.runs.pop(0)
        if run == "timeout":
            return Grade(passed=False, ran=0, passed_tests=0, failed_tests=0, exit_code=None, timed_out=True,
                         seconds=900.0, output="", evidence=["the grading ran past its 900 s and was killed"])
        tests = {i: "passed" if i in run else "failed" for i in set(expected or []) | set(run)}
        verdict, evidence, ran, ok = decide(tests, expected, None, 0)
        return Grade(passed=verdict == "pass", ran=ran, passed_tests=ok, failed_tests=ran - ok, exit_code=0,
                     timed_out=False, seconds=1.0, output="", verdict=verdict, evidence=evidence,
                     tests=sorted(i for i, s in tests.items() if s == "passed"))


def _prove(monkeypatch, tmp_path, iid: str, runs: list) -> tuple[dict, ScriptedGrader]:
    import rules.grade

    task, answer, meta = _task(tmp_path, iid)
    grader = ScriptedGrader(runs)
    monkeypatch.setattr(rules.grade, "grade", grader)
    record = swebench.prove(task, answer, image="unused", limits=None, meta=meta)
    return record, grader


def test_fail_to_pass_test_passing_at_base_is_kept_expected_and_noted(monkeypatch, tmp_path):
    # lab__calc-3: FAIL_TO_PASS test_add and test_mul; test_mul already passes at base (as django-11099's)
    record, grader = _prove(monkeypatch, tmp_path, "lab__calc-3", [{ADD, MUL}] * 3 + [{MUL}])
    assert grader.calls == ["gold", "gold", "gold", "base"]
    assert record["status"] == "kept" and record["tests"] == [ADD, MUL]  # still expected after the fix
    assert record["before"]["fail_to_pass_passed"] == [MUL]
    assert record["task_fields"] == {"passed_at_base": ["tests/test_calc.py::test_mul"]}
    assert any("already pass at base" in n and "tests/test_calc.py::test_mul" in n for n in record["notes"])


def test_instance_whose_every_fail_to_pass_test_passes_at_base_is_rejected(monkeypatch, tmp_path):
    record, _ = _prove(monkeypatch, tmp_path, "lab__calc-3", [{ADD, MUL}] * 3 + [{ADD, MUL}])
    assert record["status"] == "rejected"
    assert "every FAIL_TO_PASS test passes already" in record["reason"] and "untouched base" in record["reason"]


def test_flaky_test_is_recorded_with_each_runs_outcome_and_left_out_of_the_expectations(monkeypatch, tmp_path):
    # lab__calc-1: FAIL_TO_PASS test_add, PASS_TO_PASS test_mul, which fails in the second gold run only
    record, grader = _prove(monkeypatch, tmp_path, "lab__calc-1", [{ADD, MUL}, {ADD}, {ADD, MUL}, {MUL}])
    assert grader.calls == ["gold", "gold", "gold", "base"]
    assert record["status"] == "kept" and record["tests"] == [ADD]
    assert record["task_fields"] == {"flaky": {"tests/test_calc.py::test_mul": ["passed", "not passed", "passed"]}}
    assert any("flaky" in n and "passed, not passed, passed" in n for n in record["notes"])
    assert [r["verdict"] for r in record["gold_runs"]] == ["pass", "fail", "pass"]


def test_test_that_fails_in_the_first_gold_run_only_is_flaky_not_a_rejection(monkeypatch, tmp_path):
    record, _ = _prove(monkeypatch, tmp_path, "lab__calc-1", [{ADD}, {ADD, MUL}, {ADD, MUL}, {MUL}])
    assert record["status"] == "kept" and record["tests"] == [ADD]
    assert record["task_fields"]["flaky"] == {"tests/test_calc.py::test_mul": ["not passed", "passed", "passed"]}


def test_gold_test_failing_in_every_run_rejects_the_instance(monkeypatch, tmp_path):
    record, grader = _prove(monkeypatch, tmp_path, "lab__calc-1", [{ADD}] * 3)
    assert grader.calls == ["gold"] * 3  # no base run
    assert record["status"] == "rejected"
    assert record["reason"] == "with the gold patch, 1 test(s) do not pass: tests/test_calc.py::test_mul"


def test_instance_whose_every_fail_to_pass_test_is_flaky_is_rejected(monkeypatch, tmp_path):
    record, _ = _prove(monkeypatch, tmp_path, "lab__calc-1", [{ADD, MUL}, {MUL}, {ADD, MUL}])
    assert record["status"] == "rejected" and "every FAIL_TO_PASS test is flaky" in record["reason"]
    assert "tests/test_calc.py::test_add (passed, not passed, passed)" in record["reason"]


def test_gold_run_that_times_out_stops_the_proof_as_the_machines_doing(monkeypatch, tmp_path):
    record, grader = _prove(monkeypatch, tmp_path, "lab__calc-1", [{ADD, MUL}, "timeout"])
    assert grader.calls == ["gold", "gold"]
    assert record["status"] == "rejected" and record["environmental"] == "timeout"
    assert record["reason"] == "timeout: the gold patch's tests did not finish (run 2 of 3)"


@pytest.mark.parametrize("runs, flaky, lost", [
    ([{"a", "b"}] * 3, {}, []),
    ([{"a", "b"}, {"a"}, {"a", "b"}], {"b": ["passed", "not passed", "passed"]}, []),
    ([{"a"}] * 3, {}, ["b"]),
])
def test_gold_outcomes_split_steady_flaky_and_lost_tests(runs, flaky, lost):
    steady, got_flaky, got_lost = swebench.gold_outcomes(["a", "b"], set(), runs)
    assert got_flaky == flaky and got_lost == lost
    assert steady["a"] == ["a"]


def test_truncated_name_stands_for_its_steady_ids_and_drops_its_flaky_ones():
    runs = [{"t[x 1]", "t[x 2]"}, {"t[x 1]"}, {"t[x 1]", "t[x 2]"}]
    steady, flaky, lost = swebench.gold_outcomes([], {"t[x"}, runs)
    assert steady == {"t[x": ["t[x 1]"]} and list(flaky) == ["t[x 2]"] and lost == []


def test_published_task_json_carries_the_proofs_fields_and_the_summary_its_notes(tmp_path):
    from rules.build import summary, _task_json

    staged = tmp_path / "task.json"
    staged.write_text(json.dumps({"task": "x", "fail_to_pass": ["a"]}))
    meta = json.loads(_task_json(staged, {"flaky": {"b": ["passed", "not passed", "passed"]}}))
    assert meta == {"task": "x", "fail_to_pass": ["a"], "flaky": {"b": ["passed", "not passed", "passed"]}}
    manifest = {"tier": "swe", "counts": {"kept": 1}, "published": 1, "languages": {"o/r": {"kept": 1}},
                "tasks": [{"task": "x", "status": "kept", "notes": ["flaky with the gold patch, ...: b"]}]}
    assert "  kept x: flaky with the gold patch, ...: b" in summary(manifest).splitlines()
