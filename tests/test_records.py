"""The persisted records (rules/records.py): today's files, built here by hand in the shapes lab wrote them
before the records had a definition, load with their tier's group keys and write back unchanged; the writers
keep the aider tier's files as they were; the swe tier's new records carry no invented labels."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from rules.records import ManifestEntry, Proof, RecordError, SweResult, TaskMeta, TrialResult, TryRecord

AIDER = ("language", "exercise")
SWE = ("repo",)
GRADE = {"passed": True, "ran": 3, "passed_tests": 3, "failed_tests": 0, "seconds": 1.5, "verdict": "pass",
         "exit_code": 0, "timed_out": False, "oom_killed": False, "evidence": [], "runner_exit": 0}

AIDER_TASK = {"version": 2, "tier": "aider", "task": "go-bowling", "language": "go", "exercise": "bowling",
              "upstream_path": "go/exercises/practice/bowling", "solution_files": ["bowling.go"],
              "test_files": ["bowling_test.go"], "grader": "grader", "report": "go-json"}
AIDER_PROOF = {"version": 2, "task": "go-bowling", "language": "go", "exercise": "bowling", "status": "kept",
               "reason": "", "environmental": None, "tests": ["TestA", "TestB", "TestC"], "reference": GRADE,
               "stub": {**GRADE, "passed": False}, "seconds": 4.2, "inputs": "ab" * 32}
AIDER_ENTRY = {"task": "go-bowling", "language": "go", "exercise": "bowling", "status": "kept", "reason": "",
               "seconds": 4.2, "environmental": None, "tests": 3, "test_ids": ["TestA", "TestB", "TestC"],
               "reference": {"passed": True, "ran": 3, "passed_tests": 3, "failed_tests": 0, "seconds": 1.5},
               "stub": {"passed": False, "ran": 3, "passed_tests": 3, "failed_tests": 0, "seconds": 1.5},
               "published": True}
UNPROVEN = {"task": "go-x", "language": "go", "exercise": "x", "status": "unproven",
            "reason": "not proven yet: run doit gen:<tier> with a selection that includes it"}
TRY_1 = {"try": 1, "outcome": "fail", "note": "", "grade": {**GRADE, "passed": False}, "usage": None,
         "agent": {"exit_code": 0, "timed_out": False, "oom_killed": False, "seconds": 2.0, "output_bytes": 10,
                   "fresh_container": True},
         "removed_special_files": [], "out_files": [], "work_archive": "work-1.tar.gz", "work_digest": "d" * 64,
         "rate_limit_retries": [{"kind": "rate_limit", "message": "429", "waited": 0.1}]}
TRY_2 = {**TRY_1, "try": 2, "grade": {**GRADE, "passed": False, "reused_from_try": 1}, "note": "identical"}
AIDER_RESULT = {
    "version": 2, "tier": "aider", "task": "go-bowling", "language": "go", "exercise": "bowling", "agent": "noop",
    "run": "noop", "settings": {}, "label": "noop", "repeat": 1, "status": "fail", "passed_try": None,
    "tries": [TRY_1, TRY_2], "tries_allowed": 2, "error": None, "error_kind": None,
    "tests": {"ran": 3, "passed": 0, "failed": 3}, "agent_seconds": 4.0, "grading_seconds": 1.5, "seconds": 9.0,
    "usage": None, "started": "2026-12-01T10:00:00+00:00", "finished": "2026-12-01T10:00:09+00:00",
    "key": {"format": 2, "run": {"task_digest": "t"}, "grade": {"check_digest": "c"}},
    "graded": {"grader_image_id": "sha256:g", "check_digest": "c", "regraded": False, "at": "2026-12-01T10:00:09+00:00"},
    "notes": [], "disk": {"cap": 1024, "enforced": True},
    "images": {"agent": {"tag": "lab/agent-noop", "id": "sha256:a"}, "grader": {"tag": "lab/grader", "id": "sha256:g"}},
    "toolchains": {"go": "1.22"}, "agent_container": "trial", "backend": {"name": "local", "node": "here"}}
ERROR_RESULT = {  # backends.error_result's shape: no disk, no container mode
    **{k: v for k, v in AIDER_RESULT.items() if k not in ("disk", "agent_container")},
    "status": "error", "tries": [], "error": "the trial's ray executor did not answer", "error_kind": "infrastructure",
    "key": None, "graded": None, "toolchains": {}}


@pytest.mark.parametrize("cls, data", [(TaskMeta, AIDER_TASK), (Proof, AIDER_PROOF), (ManifestEntry, AIDER_ENTRY),
                                       (ManifestEntry, UNPROVEN), (TrialResult, AIDER_RESULT),
                                       (TrialResult, ERROR_RESULT)])
def test_todays_aider_records_load_with_their_groups_and_write_back_unchanged(cls, data):
    record = cls.from_json(copy.deepcopy(data), AIDER, "evals/aider/x.json")
    assert record.groups == {"language": data["language"], "exercise": data["exercise"]}
    assert record.to_json() == data


def test_a_trial_results_tries_are_typed_and_the_numbers_stay():
    r = TrialResult.from_json(copy.deepcopy(AIDER_RESULT), AIDER)
    assert [type(t) for t in r.tries] == [TryRecord, TryRecord]
    assert [t.number for t in r.tries] == [1, 2] and r.tries[1].grade["reused_from_try"] == 1
    assert (r.status, r.passed_try, r.tests, r.seconds) == ("fail", None, {"ran": 3, "passed": 0, "failed": 3}, 9.0)


OLD_SWE_PROOF = {"version": 2, "task": "pallets__flask-4992", "language": "python", "exercise": "pallets__flask-4992",
                 "repo": "pallets/flask", "status": "kept", "reason": "", "environmental": None, "tests": ["t::a"],
                 "reference": GRADE, "stub": GRADE, "seconds": 30.0,
                 "before": {"fail_to_pass_passed": [], "pass_to_pass_failed": [], "completed": True}}
OLD_SWE_RESULT = {
    "version": 1, "tier": "swe", "task": "pallets__flask-4992", "repo": "pallets/flask", "language": "python",
    "run": "noop", "label": "noop", "agent": "noop", "agents": ["noop"], "agent_settings": [{}], "settings": {},
    "repeat": 1, "status": "pass", "resolved": True, "plausible": True, "chosen": 0, "attempts_allowed": 1,
    "attempts": [{"attempt": 1, "agent": "noop", "folder": "attempt-1", "status": "pass", "plausible": True}],
    "error": None, "error_kind": None, "tests": {"ran": 2, "passed": 2, "failed": 0}, "usage": None,
    "agent_seconds": 1.0, "grading_seconds": 2.0, "seconds": 5.0, "started": "2026-12-01T10:00:00+00:00",
    "finished": "2026-12-01T10:00:05+00:00", "key": {"format": 1}, "passed_try": 1, "tries": [],
    "images": {"grader": {"tag": "lab/swe-env-flask", "id": "sha256:e"}}, "backend": {"name": "local", "node": "n"}}
OLD_ATTEMPT = {**AIDER_RESULT, "tier": "swe", "task": "pallets__flask-4992", "language": "python",
               "exercise": "pallets__flask-4992", "tries_allowed": 1, "tries": [TRY_1]}


@pytest.mark.parametrize("cls, data", [(Proof, OLD_SWE_PROOF), (SweResult, OLD_SWE_RESULT),
                                       (TrialResult, OLD_ATTEMPT)])
def test_old_swe_records_with_invented_labels_still_load_and_keep_them(cls, data):
    record = cls.from_json(copy.deepcopy(data), SWE, "evals/swe/x.json")
    assert record.groups == ({"repo": "pallets/flask"} if "repo" in data else {})
    assert record.extra.get("language") == "python", "an old key is kept, never dropped"
    assert record.to_json() == data


def test_the_swe_tiers_new_records_carry_only_its_own_group():
    from rules import tiers

    assert tiers.groups_of("swe") == SWE
    meta = TaskMeta.from_json({"task": "pallets__flask-4992", "tier": "swe", "repo": "pallets/flask",
                               "language": "python", "exercise": "pallets__flask-4992"}, SWE)
    proof = Proof.of(meta, status="kept").to_json()
    assert proof["repo"] == "pallets/flask" and "language" not in proof and "exercise" not in proof
    entry = ManifestEntry.of(Proof.from_json(proof, SWE), published=True, strict=False).to_json()
    assert entry["repo"] == "pallets/flask" and "language" not in entry


def test_the_writers_keep_the_aider_tiers_files_as_they_were():
    from rules import tiers
    from rules.tiers.aider.exercises import GROUP_KEYS

    assert GROUP_KEYS == tiers.groups_of("aider") == AIDER and tiers.groups_of(None) == ()
    meta = TaskMeta.from_json(AIDER_TASK, AIDER)
    head = {k: AIDER_PROOF[k] for k in ("version", "task", "language", "exercise")}
    assert Proof.of(meta).to_json() == {**head, "status": "rejected", "reason": "", "environmental": None,
                                        "tests": [], "reference": None, "stub": None}
    proof = Proof.from_json(AIDER_PROOF, AIDER)
    assert ManifestEntry.of(proof, published=True, strict=False).to_json() == AIDER_ENTRY
    free = Proof.from_json({**AIDER_PROOF, "status": "free"}, AIDER)
    assert ManifestEntry.of(free, published=False, strict=True).to_json()["reason"] == "free task left out by strict=1"
    assert ManifestEntry.unproven("go-x", {"language": "go", "exercise": "x"}).to_json() == UNPROVEN


def test_a_new_trial_result_has_the_keys_run_trial_always_wrote(tmp_path):
    from rules.agents import parse_agent
    from rules.config import Limits
    from rules.trial import Trial

    t = Trial(agent=parse_agent("noop", {"image": "noop", "command": ["true"]}), task_dir=tmp_path, run_dir=tmp_path,
              scratch=tmp_path, agent_image="lab/agent-noop", grader_image="lab/grader", grade_limits=Limits())
    result = t.new_result(AIDER_TASK)
    result.disk, result.agent_container = {"cap": 1024, "enforced": False}, "trial"
    data = result.to_json()
    assert set(data) == set(AIDER_RESULT) - {"backend"}
    assert (data["language"], data["exercise"], data["status"], data["tries"]) == ("go", "bowling", "error", [])


def test_a_damaged_record_names_the_file_and_the_fix():
    with pytest.raises(RecordError, match=r"runs/noop/go-x/result.json: field 'status' .*run the trial again"):
        TrialResult.from_json({"task": "go-x", "status": 3}, AIDER, Path("runs/noop/go-x/result.json"))
    with pytest.raises(RecordError, match=r"proof.json: not a JSON object; prove the task again"):
        Proof.from_json([], AIDER, "proof.json")
    with pytest.raises(RecordError, match=r"a try without its number"):
        TrialResult.from_json({**AIDER_RESULT, "tries": [{"outcome": "fail"}]}, AIDER, "r.json")


def test_a_task_json_is_written_as_today(tmp_path):
    data, mode = TaskMeta.from_json(AIDER_TASK, AIDER).file()
    import json

    assert mode == 0o644 and data == (json.dumps(AIDER_TASK, indent=2, sort_keys=True) + "\n").encode()
    (tmp_path / "task.json").write_bytes(data)
    assert TaskMeta.read(tmp_path, AIDER).groups == {"language": "go", "exercise": "bowling"}
    with pytest.raises(RecordError, match="cannot be read.*render the task again"):
        TaskMeta.read(tmp_path / "missing", AIDER)


def test_a_damaged_proof_is_proven_again_not_a_crash(tmp_path):
    """A truncated proof.json (or a JSON list) crashed `doit gen` while it made its tasks (a red team's); the
    prove step's up-to-date check now says "prove again"."""
    from rules.tasks import _proof_stands

    proof = tmp_path / "proof.json"
    for text, current in (('{"task": ', False), ("[1]", False), ('{"status": "kept", "environmental": null}', True)):
        proof.write_text(text)
        assert _proof_stands(str(proof)) is current, text


def test_a_rejection_for_a_timeout_stands_until_asked_to_prove_again(tmp_path):
    """A reference that hangs cost twice the proof timeout on every no-op `doit gen`; its rejection now stands
    (doit still proves it again when its inputs or limits change), and `reprove=1` proves it again."""
    from rules.tasks import _proof_stands

    proof = tmp_path / "proof.json"
    proof.write_text('{"status": "rejected", "environmental": "timeout"}')
    assert _proof_stands(str(proof)) is True
    assert _proof_stands(str(proof), reprove=True) is False
