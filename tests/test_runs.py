"""Runs you can trust: ``error`` only when the agent never had a fair chance, timed-out tries graded and
followed, re-grading kept work trees without the agent, and a disk cap on what an agent writes.

Fast tests (no Docker) cover the pure rules: ``trial_state``, the provider-error table, outcomes and statuses,
the work-tree archive. The Docker tests run real containers on the fixture tier of tests/test_trial.py, and the
real aider CLI against a local server that refuses every key.
"""
from __future__ import annotations

import dataclasses
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import PROJECT, run_doit  # noqa: E402
from test_trial import GOOD, WRONG, lab_containers, make_tier  # noqa: E402

docker = pytest.mark.docker


# ---- fast: the rules, without Docker ----

def _agent(**kw):
    from rules.agents import parse_agent

    return parse_agent("a", {"image": "noop", "command": ["true"], **kw})


def _task(folder: Path) -> Path:
    (folder / "workspace").mkdir(parents=True)
    (folder / "prompt.txt").write_text("Do it.\n")
    (folder / "setup.sh").write_text("cp -r workspace/. \"$1\"\n")
    (folder / "check.sh").write_text("echo lab-check: ran=1 passed=1 failed=0\n")
    (folder / "workspace" / "a.py").write_text("x = 1\n")
    (folder / "task.json").write_text('{"task": "t", "solution_files": ["a.py"]}')
    return folder


def _trial(tmp_path: Path, agent=None, tries: int = 2, **limits):
    from rules.config import Limits
    from rules.trial import Trial

    return Trial(agent=agent or _agent(), task_dir=tmp_path / "task", run_dir=tmp_path / "run",
                 scratch=tmp_path / "scratch", agent_image="lab/agent-a:latest", grader_image="lab/grader:latest",
                 grade_limits=Limits(**limits), tries=tries)


def _stored(t, grader_id: str, status: str = "fail", archived: bool = True) -> dict:
    """A finished result of trial ``t`` as run_trial writes it, its one try graded and kept."""
    t.run_dir.mkdir(parents=True, exist_ok=True)
    if archived:
        (t.run_dir / "work-1.tar.gz").write_bytes(b"")
    return {"status": status, "key": t.key(grader_id), "tries_allowed": t.tries,
            "tries": [{"try": 1, "grade": {"passed": status == "pass"}, "work_archive": "work-1.tar.gz"}]}


def test_trial_state_reruns_for_the_agents_side_and_regrades_for_the_graders(tmp_path):
    from rules.trial import trial_state

    _task(tmp_path / "task")
    t = _trial(tmp_path)
    result = _stored(t, "sha256:grader-1")
    assert trial_state(result, t, "sha256:grader-1") == "current"
    assert trial_state(result, t, "sha256:grader-2") == "regrade"  # a new grader image
    assert trial_state(result, _trial(tmp_path, timeout=5), "sha256:grader-1") == "regrade"  # grading limits
    (tmp_path / "task" / "check.sh").write_text("echo lab-check: ran=1 passed=0 failed=1; exit 1\n")
    assert trial_state(result, t, "sha256:grader-1") == "regrade"  # check.sh
    assert trial_state(result, _trial(tmp_path, tries=1), "sha256:grader-1") == "rerun"  # tries
    assert trial_state(result, _trial(tmp_path, agent=_agent(command=["false"])), "sha256:grader-1") == "rerun"
    assert trial_state({**result, "status": "error"}, t, "sha256:grader-1") == "rerun"
    assert trial_state(None, t, "sha256:grader-1") == "rerun"
    old = {**result, "key": {**result["key"], "format": 1}}
    assert trial_state(old, t, "sha256:grader-1") == "rerun"
    for change in ("prompt.txt", "setup.sh", "task.json", "workspace/a.py"):
        _task(tmp_path / "again")
        t2 = dataclasses.replace(t, task_dir=tmp_path / "again")
        r2 = _stored(t2, "sha256:grader-1")
        (tmp_path / "again" / change).write_text("changed\n")
        assert trial_state(r2, t2, "sha256:grader-1") == "rerun", change
        shutil.rmtree(tmp_path / "again")


def test_a_grading_change_without_kept_work_trees_means_a_rerun(tmp_path):
    from rules.trial import trial_state

    _task(tmp_path / "task")
    t = _trial(tmp_path)
    result = _stored(t, "sha256:grader-1", archived=False)
    assert trial_state(result, t, "sha256:grader-1") == "current"
    assert trial_state(result, t, "sha256:grader-2") == "rerun"


def test_tampered_is_a_finished_status_that_counts(tmp_path):
    from rules.trial import trial_state, trial_status, try_outcome

    assert try_outcome({"passed": True, "verdict": "pass"}, timed_out=True) == "pass"
    assert try_outcome({"passed": False, "verdict": "tampered"}, timed_out=True) == "tampered"
    assert try_outcome({"passed": False, "verdict": "fail"}, timed_out=True) == "timeout"
    assert try_outcome(None, timed_out=False) == "fail"
    assert trial_status([{"outcome": "tampered"}, {"outcome": "timeout"}]) == "tampered"
    assert trial_status([{"outcome": "tampered"}, {"outcome": "pass"}]) == "pass"
    assert trial_status([{"outcome": "timeout"}, {"outcome": "fail"}]) == "fail"
    assert trial_status([{"outcome": "fail"}, {"outcome": "timeout"}]) == "timeout"
    _task(tmp_path / "task")
    t = _trial(tmp_path)
    assert trial_state(_stored(t, "g", status="tampered"), t, "g") == "current"  # never retried


AUTH_401 = """Model: openai/lab-fake with whole edit format
litellm.AuthenticationError: AuthenticationError: OpenAIException - Error code: 401 - {'error': {'message':
'Incorrect API key provided: sk-lab-x'}}
The API provider is not able to authenticate you. Check your API key.
"""


@pytest.mark.parametrize("output, kind", [
    (AUTH_401, "auth"),
    ("litellm.RateLimitError: RateLimitError: OpenAIException - 429 slow down\nRetrying in 0.2 seconds...", "rate_limit"),
    ("litellm.APIConnectionError: APIConnectionError: OpenAIException - Connection error.", "connection"),
    ("litellm.InternalServerError: InternalServerError: OpenAIException - 503", "unavailable"),
    # aider 0.86.2 in a container with no network (its lines wrap at 80 columns)
    ("litellm.InternalServerError: InternalServerError: OpenAIException - Connection \nerror.\n"
     "The API provider's servers are down or overloaded.\nRetrying in 0.2 seconds...", "connection"),
    ("litellm.NotFoundError: NotFoundError: OpenAIException - model 'x' not found", "model"),
    ("litellm.BadRequestError: LLM Provider NOT provided. Pass in the LLM provider", "model"),
    ("Insufficient credits with the API provider. Please add credits.", "quota"),
    ("Applied edit to hello.py\nTokens: 1.2k sent, 30 received.", None),
])
def test_aider_provider_errors_are_read_from_its_output(output, kind):
    from rules.agents import provider_error

    found = provider_error("aider", output)
    assert (found or {}).get("kind") == kind
    if kind == "auth":
        assert found["message"].startswith("litellm.AuthenticationError")


def test_no_fair_chance_means_could_not_run_or_a_provider_error_with_no_tokens():
    from rules.trial import agent_problem

    aider = _agent(errors="aider")
    assert agent_problem(aider, 127, "sh: 1: aider: not found\n", None)["kind"] == "could_not_run"
    assert agent_problem(aider, 126, "permission denied", None)["kind"] == "could_not_run"
    assert agent_problem(aider, 0, AUTH_401, None)["kind"] == "auth"
    assert agent_problem(aider, 0, AUTH_401, {"tokens_sent": 0, "tokens_received": 0, "cost": None})["kind"] == "auth"
    assert agent_problem(aider, 0, AUTH_401, {"tokens_sent": 1200, "tokens_received": 30, "cost": 0.0}) is None
    assert agent_problem(_agent(), 0, AUTH_401, None) is None  # no errors table: graded as usual
    assert agent_problem(aider, 1, "Traceback ...\nValueError: boom", None) is None


def test_errors_parser_must_be_known_and_counts_in_the_definition():
    from rules.agents import AgentError

    with pytest.raises(AgentError, match="errors 'nope' is unknown; known: aider"):
        _agent(errors="nope")
    assert _agent(errors="aider").digest != _agent().digest


def test_disk_limit_parses_like_memory_and_is_part_of_the_definition():
    from rules.config import ConfigError, Limits

    assert Limits.parse({"disk": "64m"}, "x").disk == 64 * 1024**2
    assert Limits().disk == 2 * 1024**3
    with pytest.raises(ConfigError, match="x: "):
        Limits.parse({"disk": "lots"}, "x")
    assert _agent(limits={"disk": "64m"}).digest != _agent().digest
    assert "disk" not in repr(Limits())  # proofs' config_changed(repr(limits)) is unchanged


def test_rate_limit_waits_are_settable():
    from rules.trial import RATE_LIMIT_WAITS, rate_limit_waits

    assert rate_limit_waits({}) == RATE_LIMIT_WAITS
    assert rate_limit_waits({"LAB_RATE_LIMIT_WAITS": "0.1, 0.2"}) == (0.1, 0.2)
    assert rate_limit_waits({"LAB_RATE_LIMIT_WAITS": ""}) == ()
    with pytest.raises(ValueError, match="LAB_RATE_LIMIT_WAITS"):
        rate_limit_waits({"LAB_RATE_LIMIT_WAITS": "soon"})


def test_work_archive_keeps_symlinks_as_links_and_odd_names(tmp_path):
    from rules.trial import archive_work, unpack_work

    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "a.py").write_text("x = 1\n")
    (work / "run.sh").write_text("#!/bin/sh\n")
    (work / "run.sh").chmod(0o755)
    (tmp_path / "secret").write_text("HOST-SECRET\n")
    (work / "link").symlink_to(tmp_path / "secret")
    (work / "sub" / "rel").symlink_to("../a.py")
    os.symlink(b"a.py", os.path.join(os.fsencode(work), b"odd-\xff"))
    archive_work(work, tmp_path / "work-1.tar.gz")
    out = tmp_path / "out"
    unpack_work(tmp_path / "work-1.tar.gz", out)
    assert (out / "a.py").read_text() == "x = 1\n" and os.access(out / "run.sh", os.X_OK)
    assert os.readlink(out / "link") == str(tmp_path / "secret")  # kept as a link, never followed
    assert os.readlink(out / "sub" / "rel") == "../a.py"
    assert os.path.islink(os.path.join(os.fsencode(out), b"odd-\xff"))
    import tarfile
    with tarfile.open(tmp_path / "work-1.tar.gz") as tar:
        assert all(b"HOST-SECRET" not in (tar.extractfile(m).read() if m.isfile() else b"") for m in tar)


def test_error_warning_names_the_agent_and_the_first_error(tmp_path):
    from rules.runs import error_warning

    for task, status in (("a", "error"), ("b", "error"), ("c", "fail")):
        (tmp_path / task).mkdir()
        (tmp_path / task / "result.json").write_text(json.dumps(
            {"status": status, "error": f"try 1: auth: bad key for {task}" if status == "error" else None,
             "error_kind": "agent" if status == "error" else None}))
    line = error_warning("aider", tmp_path, ["a", "b", "c"])
    assert line.startswith("lab: WARNING: 2 of 3 trials of agent 'aider' ended in error (agent)")
    assert "a: try 1: auth: bad key for a" in line
    assert line.endswith(f"; check the agent's command, image and keys in evals/agents.toml (its log: "
                         f"{tmp_path / 'a'}/agent-1.log)"), line  # the fix, as the FAILED line gives it
    assert error_warning("aider", tmp_path, ["a", "c", "c"]) is None  # not most
    assert error_warning("aider", tmp_path, ["a", "b", "missing"]) is None  # the run has not ended
    old = time.time() - 100
    os.utime(tmp_path / "a" / "result.json", (old, old))  # an error of an earlier run: this run retries it
    assert error_warning("aider", tmp_path, ["a", "b", "c"], since=old + 50) is None
    assert error_warning("aider", tmp_path, ["a", "b", "c"], since=old - 50) == line


def test_a_run_whose_every_trial_is_an_error_fails_naming_the_run_and_the_fix(tmp_path):
    from rules.runs import run_failed

    for task, status in (("a", "error"), ("a@2", "error"), ("b", "error"), ("old", "pass")):
        (tmp_path / task).mkdir()
        (tmp_path / task / "result.json").write_text(json.dumps(
            {"status": status, "error": f"try 1: could_not_run: {task}", "error_kind": "agent"}))
    line = run_failed("tomo.m1", tmp_path, ["a", "b"])  # "old" is no published task: not the run's
    assert line.startswith("lab: run 'tomo.m1' FAILED: all 3 of its trials ended in error, none was graded")
    assert "first, a: try 1: could_not_run: a" in line and "evals/agents.toml" in line and "\n" not in line
    assert run_failed("tomo.m1", tmp_path, ["a", "b", "old"]) is None  # one trial finished
    assert run_failed("tomo.m1", tmp_path, ["nothing"]) is None  # no result at all


def test_capped_folder_holds_writes_to_its_size_and_leaves_nothing(tmp_path):
    from rules import disk

    reason = disk.why_not(tmp_path)
    if reason:
        pytest.skip(f"no loop mounts here: {reason}")
    folder = tmp_path / "scratch"
    with disk.capped_folder(folder, 16 * 1024**2) as not_capped:
        assert not_capped is None and os.path.ismount(folder)
        with pytest.raises(OSError):
            (folder / "big").write_bytes(b"\0" * 32 * 1024**2)
        assert disk.is_full(folder)
    assert not os.path.ismount(folder) and not any(tmp_path.glob(".*.img"))


# ---- Docker: real containers on the fixture tier ----

EQ_FORGER = r"printf 'class Any:\n    def __eq__(self, other):\n        return True\n\n\ndef double(number):\n    return Any()\n'"
RL_LINE = "litellm.RateLimitError: RateLimitError: OpenAIException - Error code: 429 - slow down"
RUN_AGENTS = f"""
[missing-command]
image = "noop"
command = ["no-such-agent-command", "{{prompt}}"]

[exit-127]
image = "noop"
command = ["sh", "-c", "lab-agent-cli --message-file {{prompt}}"]

[slow-first]
# try 1: a wrong solution, then it hangs past its limit; try 2 (prompt with the test output): the right one
image = "noop"
command = ["sh", "-c", '''if grep -q 'did not pass the tests' {{prompt}}; then {GOOD} > {{files}}
else {WRONG} > {{files}}; sleep 600; fi''']
[slow-first.limits]
timeout = 5

[rate-limited]
# rate limited on its first run; the run lab starts again after a wait succeeds
image = "noop"
command = ["sh", "-c", '''if [ -f .lab-retried ]; then {GOOD} > {{files}}
else touch .lab-retried; echo '{RL_LINE}'; fi''']
errors = "aider"

[always-limited]
image = "noop"
command = ["sh", "-c", "echo '{RL_LINE}'"]
errors = "aider"

[regrade-solver]
# solves every task (a name of its own: the test counts its containers on an engine other tests share)
image = "noop"
command = ["sh", "-c", '''for f in {{files}}; do {GOOD} > "$f"; done''']

[eq-forger]
# a result that compares equal to anything: it passes the tests and their copies with a changed expected value
# (tampered), and the suspicion scan flags it for review
image = "noop"
command = ["sh", "-c", '''{EQ_FORGER} > {{files}}''']

[filler]
# writes far past its 64 MiB disk
image = "noop"
command = ["sh", "-c", '''{GOOD} > {{files}}; head -c 200000000 /dev/zero > fill.bin; echo "filler rc=$?"''']
[filler.limits]
disk = "64m"
"""
RUN_AGENT_NAMES = ["missing-command", "exit-127", "slow-first", "rate-limited", "always-limited", "regrade-solver",
                   "filler", "eq-forger"]


@pytest.fixture(scope="module")
def home(tmp_path_factory, grader_image) -> Path:
    """A lab home with the fixture tier, tests/test_trial.py's agents and this file's, images built by doit."""
    home = tmp_path_factory.mktemp("runs") / "home"
    make_tier(home)
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write(RUN_AGENTS)
    res = run_doit(home, *[f"agent_image:{n}" for n in ["noop", "solver", "sleeper"] + RUN_AGENT_NAMES],
                   "jobs=1", timeout=1200)
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


def trial(home: Path, agent: str, task: str = "python-hello", tries: int = 2) -> dict:
    from test_trial import trial as run_one

    return run_one(home, agent, task, tries)


def run_folder(home: Path, agent: str, task: str = "python-hello") -> Path:
    return home / "evals" / "aider" / "runs" / agent / task


@docker
@pytest.mark.parametrize("agent", ["missing-command", "exit-127"])
def test_a_command_that_cannot_run_is_an_error_not_a_fail(home, agent):
    r = trial(home, agent)
    assert (r["status"], r["error_kind"]) == ("error", "agent"), r
    # a command missing from the image is run by the shell of the trial's agent container: exit 127 too
    missing = "lab-agent-cli" if agent == "exit-127" else "no-such-agent-command"
    assert [t["outcome"] for t in r["tries"]] == ["error"] and r["tries"][0]["agent"]["exit_code"] == 127
    assert "could not run (exit 127)" in r["error"] and f"{missing}: not found" in r["error"]
    assert r["tests"]["ran"] == 0 and not (run_folder(home, agent) / "grade-1.log").exists(), "never graded"
    assert lab_containers(**{"lab.agent": agent}) == []


@docker
def test_a_run_of_mostly_errors_says_so_loudly_at_the_end(home):
    res = run_doit(home, "eval:exit-127", "jobs=1", timeout=600)
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "[exit-127] 0/4 done, 0 passing, 4 errors" in res.stdout
    warning = [line for line in res.stderr.splitlines() if line.startswith("lab: WARNING")]
    assert len(warning) == 1, res.stderr[-2000:]
    assert "4 of 4 trials of agent 'exit-127' ended in error (agent)" in warning[0]
    assert "python-hello: try 1: could_not_run" in warning[0]
    again = run_doit(home, "eval:exit-127", "jobs=1", timeout=600)
    assert len(again.executed("eval:exit-127/")) == 4, "errors are retried by the next run"


@docker
def test_a_run_whose_every_trial_is_an_error_exits_non_zero_with_one_line(home):
    res = run_doit(home, "run", "agent=exit-127", "jobs=1", timeout=600)
    assert res.code != 0, res.stdout[-3000:] + res.stderr[-3000:]
    failed = [line for line in (res.stdout + res.stderr).splitlines() if "FAILED" in line]
    assert len(failed) == 1 and failed[0].startswith("lab: run 'exit-127' FAILED: all 4 of its trials"), failed
    assert "evals/agents.toml" in failed[0] and "TaskFailed" not in res.stdout + res.stderr
    assert (home / "evals" / "aider" / "report.md").is_file(), "the report is written all the same"
    ok = run_doit(home, "run", "agent=noop", "jobs=1", "tries=1", timeout=900)
    assert ok.code == 0 and "FAILED" not in ok.stdout + ok.stderr, ok.stdout[-3000:] + ok.stderr[-3000:]



@docker
def test_a_run_piped_into_a_reader_that_stops_early_finishes_its_work_quietly(home):
    """`doit run agent=noop | head -1`: the reader goes away after one line; lab finishes the trials and the
    report and exits 0, with no BrokenPipeError traceback (a newcomer's finding)."""
    report = home / "evals" / "aider" / "report.md"
    report.unlink(missing_ok=True)
    env = {**os.environ, "LAB_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), "run", "agent=noop",
                             "jobs=1", "tries=1", "repeat=2"], cwd=PROJECT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err.decode()[-3000:]
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()[-3000:]
    assert report.is_file(), "the report is written all the same"

@docker
def test_an_equality_that_says_yes_is_tampered_and_carries_a_suspicion_flag_in_the_record_and_the_report(home):
    r = trial(home, "eq-forger", tries=1)
    assert r["status"] == "tampered" and r["version"] == 3, r
    assert any("with its expected value changed" in e for e in r["tries"][0]["grade"]["evidence"]), r["tries"]
    flags = r["tries"][0]["suspicions"]
    assert [(f["name"], f["file"], f["line"]) for f in flags] == [("eq-always", "hello.py", 2)], flags
    res = run_doit(home, "report", timeout=600)
    assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]
    md = (home / "evals" / "aider" / "report.md").read_text()
    assert "## Suspicion flags" in md and "eq-always hello.py:2" in md, md[-3000:]
    # a result graded before the scan (version 2, no flags) is scanned by a re-grading
    path = run_folder(home, "eq-forger") / "result.json"
    old = json.loads(path.read_text())
    del old["tries"][0]["suspicions"]
    path.write_text(json.dumps({**old, "version": 2}))
    res = run_doit(home, "regrade", "agent=eq-forger", timeout=600)
    assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]
    again = json.loads(path.read_text())
    assert again["version"] == 3 and again["tries"][0]["suspicions"] == flags and again["status"] == "tampered"


@docker
def test_a_timed_out_try_is_graded_and_followed_by_the_next(home):
    r = trial(home, "slow-first")
    first, second = r["tries"]
    assert first["agent"]["timed_out"] and first["grade"]["ran"] == 3 and first["grade"]["failed_tests"] == 2
    assert first["outcome"] == "timeout" and "ran past its 5 s" in first["note"]
    assert (r["status"], r["passed_try"], second["outcome"]) == ("pass", 2, "pass")
    prompt2 = (run_folder(home, "slow-first") / "prompt-2.txt").read_text()
    assert "test_two" in prompt2
    one = trial(home, "slow-first", tries=1)
    assert (one["status"], one["tries"][0]["grade"]["failed_tests"]) == ("timeout", 2)


@docker
def test_the_last_try_timing_out_is_a_timeout_with_both_tries_graded(home):
    r = trial(home, "sleeper")
    assert r["status"] == "timeout" and [t["outcome"] for t in r["tries"]] == ["timeout", "timeout"]
    assert all(t["agent"]["timed_out"] and t["grade"]["ran"] == 3 for t in r["tries"])


@docker
def test_a_rate_limit_is_retried_after_a_wait_then_graded(home, monkeypatch):
    monkeypatch.setenv("LAB_RATE_LIMIT_WAITS", "0.2,0.2")
    r = trial(home, "rate-limited")
    assert (r["status"], r["passed_try"]) == ("pass", 1), r
    assert [x["kind"] for x in r["tries"][0]["rate_limit_retries"]] == ["rate_limit"]
    r = trial(home, "always-limited")
    assert (r["status"], r["error_kind"]) == ("error", "agent") and "rate_limit" in r["error"]
    assert [x["waited"] for x in r["tries"][0]["rate_limit_retries"]] == [0.2, 0.2]


@docker
def test_an_agent_writing_past_its_disk_cap_fails_and_the_host_keeps_its_space(home):
    r = trial(home, "filler")
    log = (run_folder(home, "filler") / "agent-1.log").read_text()
    assert "No space left on device" in log and "filler rc=1" in log
    assert r["disk"] == {"cap": 64 * 1024**2, "enforced": True} and r["notes"] == []
    assert r["status"] == "fail" and len(r["tries"]) == 1 and "filled its disk" in r["tries"][0]["note"], r
    assert r["tries"][0]["grade"] is None
    scratch = home / ".lab" / "trials" / "filler"
    assert not (scratch / "python-hello").exists() and not list(scratch.glob(".*.img"))
    mounts = Path("/proc/mounts").read_text()
    assert str(scratch) not in mounts


@docker
def test_without_loop_mounts_the_trial_runs_uncapped_and_says_so(home, monkeypatch):
    from rules import disk

    monkeypatch.setattr(disk, "why_not", lambda folder: "no loop devices (/dev/loop-control is missing)")
    r = trial(home, "solver")
    assert (r["status"], r["passed_try"]) == ("pass", 1)
    assert r["disk"]["enforced"] is False
    assert r["notes"] == ["disk cap not enforced: no loop devices (/dev/loop-control is missing)"]


def _agent_containers_created(agent: str, since: float) -> list[str]:
    out = subprocess.run(["docker", "events", "--since", f"{since:.3f}", "--until", f"{time.time():.3f}",
                          "--filter", "type=container", "--filter", "event=create", "--filter", f"label=lab.agent={agent}",
                          "--format", "{{.Actor.Attributes.name}}"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@docker
def test_regrade_after_a_check_change_grades_kept_work_without_the_agent(home):
    # tries=1: a pass lost on re-grading with a try left that never ran would need the agent again
    res = run_doit(home, "eval:regrade-solver/python-hello", "jobs=1", "tries=1", timeout=600)
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run = run_folder(home, "regrade-solver")
    first = json.loads((run / "result.json").read_text())
    assert first["status"] == "pass" and first["graded"]["regraded"] is False
    assert (run / "work-1.tar.gz").is_file() and first["tries"][0]["work_archive"] == "work-1.tar.gz"
    agent_log = (run / "agent-1.log").read_bytes()
    check = home / "evals" / "aider" / "tasks" / "python-hello" / "check.sh"
    original = check.read_text()
    since = time.time()
    try:
        # a stricter grader: this check.sh fails everything
        check.write_text(original.replace("#!/usr/bin/env bash", "#!/usr/bin/env bash\n"
                                          "echo 'lab-check: ran=3 passed=0 failed=3'; exit 1", 1))
        assert check.read_text() != original
        res = run_doit(home, "regrade", "agent=regrade-solver", timeout=600)
        assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
        assert "python-hello: pass@1 -> fail (re-graded)" in res.stdout
        after = json.loads((run / "result.json").read_text())
        assert (after["status"], after["passed_try"], after["graded"]["regraded"]) == ("fail", None, True)
        assert after["key"]["grade"]["check_digest"] != first["key"]["grade"]["check_digest"]
        assert after["key"]["run"] == first["key"]["run"] and after["usage"] == first["usage"]
    finally:
        check.write_text(original)
    # the grading changed back: doit's own check re-grades it, and the agent does not run
    res = run_doit(home, "eval:regrade-solver/python-hello", "jobs=1", "tries=1", timeout=600)
    assert res.code == 0 and "eval:regrade-solver/python-hello" in res.executed("eval:"), res.stdout[-2000:]
    assert "re-graded, the agent did not run" in res.stdout
    back = json.loads((run / "result.json").read_text())
    assert (back["status"], back["passed_try"]) == ("pass", 1)
    assert (run / "agent-1.log").read_bytes() == agent_log
    assert _agent_containers_created("regrade-solver", since) == [], "re-grading never starts an agent container"
    # and now it is current: doit runs nothing
    again = run_doit(home, "eval:regrade-solver/python-hello", "jobs=1", "tries=1", timeout=600)
    assert again.code == 0 and not again.executed("eval:regrade-solver/"), again.stdout[-2000:]


@docker
def test_a_pass_lost_on_regrading_with_a_try_left_needs_the_agent_again(home):
    res = run_doit(home, "eval:regrade-solver/python-twice", "jobs=1", timeout=600)  # tries=2
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run = run_folder(home, "regrade-solver", "python-twice")
    before = (run / "result.json").read_bytes()
    assert json.loads(before)["passed_try"] == 1
    check = home / "evals" / "aider" / "tasks" / "python-twice" / "check.sh"
    original = check.read_text()
    try:
        check.write_text(original.replace("#!/usr/bin/env bash", "#!/usr/bin/env bash\n"
                                          "echo 'lab-check: ran=3 passed=0 failed=3'; exit 1", 1))
        res = run_doit(home, "regrade", "agent=regrade-solver", timeout=600)
        assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
        assert "python-twice: cannot be re-graded alone" in res.stdout
        assert (run / "result.json").read_bytes() == before, "the try 2 that never ran is not made up"
    finally:
        check.write_text(original)


@docker
def test_an_agent_image_rebuild_alone_reruns_no_trial(home):
    res = run_doit(home, "eval:solver/python-ledger", "jobs=1", timeout=600)
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    stamp = home / ".lab" / "images" / "agent-solver.json"
    assert stamp.is_file()
    stamp.unlink()  # the image task must run again (a rebuild); the trial's key does not hold the image id
    res = run_doit(home, "eval:solver/python-ledger", "jobs=1", timeout=600)
    assert res.code == 0 and "agent_image:solver" in res.executed(), res.stdout[-2000:]
    assert not res.executed("eval:solver/"), "W3: an image rebuild that changes no key re-ran the trial"


# ---- the real aider CLI against a server that refuses every key ----

class Refuse401(http.server.BaseHTTPRequestHandler):
    """Answers every request 401 with OpenAI's error body for a wrong key, echoing the key (the worst a
    provider could do: lab must keep it out of every file)."""

    hits = 0

    def _refuse(self):
        Refuse401.hits += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        data = json.dumps({"error": {"message": f"Incorrect API key provided: {key}", "type":
                                     "invalid_request_error", "param": None, "code": "invalid_api_key"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_GET = _refuse  # noqa: N815

    def log_message(self, *args):
        pass


@docker
def test_real_aider_with_a_refused_key_is_an_error_not_a_fail(home, monkeypatch):
    RUN = "aider.openai-lab-fake.whole"  # the run of aider with model openai/lab-fake and edit format whole
    res = run_doit(home, "agent_image:aider", "jobs=1", timeout=1800)
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse401)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("AIDER_MODEL", "openai/lab-fake")
        monkeypatch.setenv("AIDER_EDIT_FORMAT", "whole")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-lab-wrong-key")
        monkeypatch.setenv("OPENAI_API_BASE", f"http://127.0.0.1:{server.server_port}/v1")
        res = run_doit(home, f"eval:{RUN}/python-hello", "jobs=1", timeout=900)
    finally:
        server.shutdown()
    run = run_folder(home, RUN)
    assert res.code == 0 and (run / "result.json").is_file(), res.stdout[-3000:] + res.stderr[-3000:]
    r = json.loads((run / "result.json").read_text())
    log = (run / "agent-1.log").read_text()
    assert (r["status"], r["error_kind"]) == ("error", "agent"), log[-3000:]
    assert r["tries"][0]["agent"]["exit_code"] == 0, "aider exits 0 after a refused key: only its output tells"
    assert "auth" in r["error"] and "AuthenticationError" in r["error"] and Refuse401.hits >= 1
    assert r["tries"][0]["grade"] is None and r["tests"]["ran"] == 0
    assert "API key provided: ***" in log  # aider wraps its lines at 80 columns
    assert not [p for p in run.rglob("*") if p.is_file() and b"sk-lab-wrong-key" in p.read_bytes()]
    assert f"eval:{RUN}/python-hello" in res.executed("eval:")
    # no key at all: litellm refuses before sending anything; and the error is retried by the next run
    monkeypatch.delenv("OPENAI_API_KEY")
    again = run_doit(home, f"eval:{RUN}/python-hello", "jobs=1", timeout=900)
    assert f"eval:{RUN}/python-hello" in again.executed("eval:"), "an error is never a finished trial"
    r = json.loads((run / "result.json").read_text())
    assert (r["status"], r["error_kind"]) == ("error", "agent") and "auth: litellm.AuthenticationError" in r["error"]
