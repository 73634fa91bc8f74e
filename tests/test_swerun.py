"""The swe tier's trials through doit, in the real engine, on the fixture repository built at test time: retry
until plausible across agents, the least-bad pick, the held-out tests never in an agent's reach, ``{test_cmd}``
running the pre-existing tests in the agent's container, ``noop`` resolving none, and predictions written by a
run and graded again by ``doit evaluate``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit, write_suite  # noqa: E402
from fixture_swe import FIXED_SOURCE, make_calc, write_swe_suite  # noqa: E402
from fixture_upstream import make_upstream  # noqa: E402

docker = pytest.mark.docker
TASK = "lab__calc-1"


def _writes(source: str) -> str:
    """A shell line writing ``source`` (no ``%`` or ``'`` in it) to calc/__init__.py."""
    return "printf '" + source.replace("\n", "\\n") + "' > calc/__init__.py"


BROKEN_MUL = FIXED_SOURCE.replace("return a * b", "return a + b")  # add fixed, mul broken: breaks test_mul
SYNTAX = "def add(a, b) return a + b\n"  # a syntax error (and every test of calc fails to import)
AGENTS = f"""
[fixer]
image = "noop"
command = ["sh", "-c", '''{_writes(FIXED_SOURCE)}''']
network = "none"

[breaker]
image = "noop"
command = ["sh", "-c", '''{_writes(BROKEN_MUL)}''']
network = "none"

[syntax]
image = "noop"
command = ["sh", "-c", '''{_writes(SYNTAX)}''']
network = "none"

[peek]
image = "noop"
command = ["sh", "-c", '''echo "TEST_CMD={{test_cmd}}"; {{test_cmd}}; ls /task /answers 2>&1
grep -rlsI --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr 'def test_add' / | sed 's/^/FOUND /'
true''']
network = "none"
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A lab home with the fixture swe tier generated (env image, proof) and the scripted agents."""
    root = tmp_path_factory.mktemp("swerun")
    make_calc(root / "src")
    home = root / "home"
    write_suite(home, make_upstream(root / "upstream"))
    write_swe_suite(home, root / "src")
    agents = home / "evals" / "agents.toml"
    agents.write_text(agents.read_text() + AGENTS)
    res = run_doit(home, "gen:swe")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


def _run(home: Path, *args: str) -> dict:
    res = run_doit(home, "run", "suite=swe", "jobs=1", *args)
    assert res.code == 0, res.stdout[-4000:] + res.stderr[-3000:]
    return res


def _result(home: Path, run: str) -> dict:
    return json.loads((home / "evals" / "swe" / "runs" / run / TASK / "result.json").read_text())


@docker
def test_third_attempt_is_the_first_plausible_one_and_ends_the_trial(home):
    res = _run(home, "agents=breaker,syntax,fixer,breaker", "attempts=6")
    run = "breaker+syntax+fixer+breaker.x6"
    r = _result(home, run)
    assert [a["agent"] for a in r["attempts"]] == ["breaker", "syntax", "fixer"]
    assert [a["plausible"] for a in r["attempts"]] == [False, False, True]
    assert r["attempts"][0]["broken"] == ["tests.test_calc::test_mul"]
    assert r["attempts"][1]["lint"] and "calc/__init__.py:1" in r["attempts"][1]["lint"][0]
    assert (r["chosen"], r["plausible"], r["status"], r["resolved"]) == (2, True, "pass", True)
    # every attempt was graded with the held-out tests (statistics), the choice did not read them
    assert [a["status"] for a in r["attempts"]] == ["fail", "fail", "pass"]
    # each attempt's patch was scanned (the swe tier's table): honest edits, no flag
    assert [a["suspicions"] for a in r["attempts"]] == [[], [], []]
    patch = (home / "evals" / "swe" / "runs" / run / TASK / "patch.diff").read_text()
    assert "+    return a + b" in patch and "-    return a - b" in patch
    meta = json.loads((home / "evals" / "swe" / "runs" / run / "run.json").read_text())
    assert meta["agents"] == ["breaker", "syntax", "fixer", "breaker"] and meta["attempts"] == 6
    # up to date: a second run makes no attempt
    again = _run(home, "agents=breaker,syntax,fixer,breaker", "attempts=6")
    assert not again.executed(f"eval:{run}/"), again.stdout[-2000:]


@docker
def test_with_no_plausible_attempt_the_least_bad_is_chosen(home):
    _run(home, "agents=syntax,breaker", "attempts=2")
    r = _result(home, "syntax+breaker.x2")
    assert [a["problems"] for a in r["attempts"]] == [2, 1]  # syntax: lint and broken; breaker: broken
    assert (r["chosen"], r["plausible"], r["resolved"], r["status"]) == (1, False, False, "fail")


@docker
def test_noop_resolves_none_and_its_predictions_are_empty(home):
    _run(home, "agent=noop")
    r = _result(home, "noop")
    assert (r["status"], r["resolved"], r["attempts"][0]["edit"]) == ("fail", False, "the attempt changed nothing")
    rows = [json.loads(x) for x in (home / "evals" / "swe" / "predictions" / "noop.jsonl").read_text().splitlines()]
    assert rows == [{"instance_id": TASK, "model_name_or_path": "noop", "model_patch": ""}]


@docker
def test_a_runs_predictions_round_trip_through_evaluate(home):
    _run(home, "agent=fixer")
    assert _result(home, "fixer")["resolved"] is True
    path = home / "evals" / "swe" / "predictions" / "fixer.jsonl"
    row = json.loads(path.read_text())
    assert row["instance_id"] == TASK and "return a + b" in row["model_patch"]
    res = run_doit(home, "evaluate", f"predictions={path}")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-2000:]
    results = json.loads((home / "evals" / "swe" / "evaluations" / "fixer" / "results.json").read_text())
    assert results["resolved"] == [TASK]


@docker
def test_agent_runs_pre_existing_tests_and_never_sees_held_out_ones(home):
    _run(home, "agent=peek")
    log = (home / "evals" / "swe" / "runs" / "peek" / TASK / "attempt-1" / "agent-1.log").read_text()
    assert "TEST_CMD=python -m pytest" in log and "tests/test_calc.py" in log
    assert "test_mul PASSED" in log or "PASSED tests/test_calc.py::test_mul" in log, log[-2000:]
    assert "FOUND" not in log and "test_add" not in log.split("TEST_CMD=", 1)[1], log[-2000:]
    assert "No such file or directory" in log  # neither /task nor /answers exists in the agent's container
    # running the tests left byte code in the work tree: never part of the prediction
    row = json.loads((home / "evals" / "swe" / "predictions" / "peek.jsonl").read_text())
    assert row["model_patch"] == "", row["model_patch"][:300]


@docker
def test_tries_other_than_one_are_refused_with_the_reason(home):
    res = run_doit(home, "run", "suite=swe", "agent=noop", "tries=2")
    assert res.code != 0 and "one try per attempt" in res.stdout + res.stderr


@docker
def test_a_grading_change_regrades_the_kept_attempts_without_the_agents(home):
    _run(home, "agents=breaker,fixer", "attempts=2")
    run_dir = home / "evals" / "swe" / "runs" / "breaker+fixer.x2" / TASK
    before = _result(home, "breaker+fixer.x2")
    logs = {str(p.relative_to(run_dir)): p.stat().st_mtime_ns for p in run_dir.glob("attempt-*/agent-1.log")}
    assert len(logs) == 2
    check = home / "evals" / "swe" / "tasks" / TASK / "check.sh"
    check.write_text(check.read_text() + "\n# a grading change\n")
    res = _run(home, "agents=breaker,fixer", "attempts=2")
    assert "re-graded, no agent ran" in res.stdout, res.stdout[-2000:]
    after = _result(home, "breaker+fixer.x2")
    assert {str(p.relative_to(run_dir)): p.stat().st_mtime_ns for p in run_dir.glob("attempt-*/agent-1.log")} == logs
    assert (after["chosen"], after["status"], after["graded"]["regraded"]) == (before["chosen"], "pass", True)
    assert after["key"]["grade"]["check_digest"] != before["key"]["grade"]["check_digest"]
    assert [a["suspicions"] for a in after["attempts"]] == [[], []], "a re-grading scans the attempts again"


@docker
def test_a_damaged_record_is_run_again_not_a_crash(home):
    _run(home, "agent=noop")
    path = home / "evals" / "swe" / "runs" / "noop" / TASK / "result.json"
    path.write_text('{"broken')
    res = _run(home, "agent=noop")
    assert f"eval:noop/{TASK}" in res.executed("eval:"), res.stdout[-2000:]
    assert json.loads(path.read_text())["status"] == "fail"
