"""One agent container per trial: each try is an exec in the container the first try started (``rules.sandbox``
boxes, ``rules.trial.AgentContainer``).

What the agent leaves outside the work tree lasts from try 1 to try 2 of a trial, never into another trial, and
never past a try that timed out or ran out of memory (the next try gets a fresh container and its note says so);
nothing it started runs on after its try; ``container = "try"`` restores a fresh container per try; output is
streamed and capped; no container is left behind. Agents are a few lines of shell on the ``noop`` image, on
``tests/test_trial.py``'s fixture tier.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from test_trial import GOOD, WRONG, lab_containers, make_tier, trial  # noqa: E402

docker = pytest.mark.docker

# try 1 leaves a file in /tmp, a process in the background, one that would write to the work tree a second
# later and one that forks without end; try 2 says what it finds of them
STATEFUL = f'''test -e /tmp/lab-state && echo "SEEN $(cat /tmp/lab-state)"
if [ {{try}} = 1 ]; then echo try-1-was-here > /tmp/lab-state; cp /bin/sleep /tmp/lab-lingerer
  /tmp/lab-lingerer 300 & (sleep 1; while :; do echo late >> /work/late.txt; sleep 0.1; done) &
  {WRONG} > {{files}}; cp /bin/sleep /tmp/lab-spawned; (while :; do /tmp/lab-spawned 300 & done) &
else ps -eo comm= | grep -qx lab-lingerer && echo LINGERER-ALIVE; test -e /work/late.txt && echo LATE-WRITE
  ps -eo comm= | grep -qx lab-spawned && echo SPAWNED-ALIVE
  {GOOD} > {{files}}; fi'''
BOX_AGENTS = f"""
[stateful]
image = "noop"
command = ["sh", "-c", '''{STATEFUL}''']

[per-try]
image = "noop"
container = "try"
command = ["sh", "-c", '''{STATEFUL}''']

[forgetful]
# try 1 leaves a file, then runs past its time limit; try 2 looks for the file
image = "noop"
command = ["sh", "-c", '''test -e /tmp/lab-state && echo "SEEN $(cat /tmp/lab-state)"
if [ {{try}} = 1 ]; then echo try-1-was-here > /tmp/lab-state; {WRONG} > {{files}}; sleep 600; else {GOOD} > {{files}}; fi''']
[forgetful.limits]
timeout = 3

[hog]
# try 1 leaves a file, then runs out of memory; try 2 looks for the file
image = "noop"
command = ["sh", "-c", '''test -e /tmp/lab-state && echo "SEEN $(cat /tmp/lab-state)"
if [ {{try}} = 1 ]; then echo try-1-was-here > /tmp/lab-state; {WRONG} > {{files}}
  python3 -c 'x = bytearray(512 * 1024 * 1024)'; echo "hog rc=$?"; else {GOOD} > {{files}}; fi''']
[hog.limits]
memory = "128m"

[not-executable]
image = "noop"
command = ["/etc/passwd", "{{prompt}}"]
"""
BOX_AGENT_NAMES = ["stateful", "per-try", "forgetful", "hog", "not-executable"]


# ---- no Docker ----

def _agent(**kw):
    from rules.agents import parse_agent

    return parse_agent("a", {"image": "noop", "command": ["true"], **kw})


def test_a_result_from_fresh_containers_per_try_is_run_again(tmp_path):
    from rules.config import Limits
    from rules.records import TRIAL_FORMAT
    from rules.trial import Trial, trial_state

    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "prompt.txt").write_text("Do it.\n")

    def make(agent):
        return Trial(agent=agent, task_dir=tmp_path / "task", run_dir=tmp_path / "run", scratch=tmp_path / "s",
                     agent_image="lab/agent-a:latest", grader_image="lab/grader:latest", grade_limits=Limits())

    t = make(_agent())
    assert t.run_key()["agent_container"] == "trial"
    key = {"format": TRIAL_FORMAT, "run": t.run_key(), "grade": t.grade_key("sha256:g")}
    assert trial_state({"status": "pass", "key": key}, t, "sha256:g") == "current"
    before = {**key, "run": {k: v for k, v in key["run"].items() if k != "agent_container"}}
    assert trial_state({"status": "pass", "key": before}, t, "sha256:g") == "rerun", "per-try results do not count"
    per_try = make(_agent(container="try"))
    assert per_try.run_key()["agent_container"] == "try"
    assert trial_state({"status": "pass", "key": key}, per_try, "sha256:g") == "rerun"


def test_the_container_mode_is_checked_and_only_the_opt_out_changes_the_digest():
    from rules.agents import AgentError

    assert _agent().container == "trial" and "container" not in _agent().definition()
    assert _agent(container="trial").digest == _agent().digest
    assert _agent(container="try").digest != _agent().digest
    with pytest.raises(AgentError, match=r"\[a\]: container 'box' is not one of 'trial', 'try'"):
        _agent(container="box")


# ---- Docker ----

@pytest.fixture(scope="module")
def home(tmp_path_factory, grader_image) -> Path:
    """A lab home with the fixture tier, tests/test_trial.py's agents and this file's, images built by doit."""
    home = tmp_path_factory.mktemp("agentbox") / "home"
    make_tier(home)
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write(BOX_AGENTS)
    res = run_doit(home, *[f"agent_image:{n}" for n in ["noop"] + BOX_AGENT_NAMES], "jobs=1", timeout=1200)
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


def logs(home: Path, agent: str, task: str = "python-hello") -> list[str]:
    run = home / "evals" / "aider" / "runs" / agent / task
    return [(run / f"agent-{n}.log").read_text() for n in (1, 2) if (run / f"agent-{n}.log").exists()]


@docker
def test_state_lasts_across_the_tries_of_a_trial_but_not_into_the_next_trial(home):
    r = trial(home, "stateful")
    assert (r["status"], r["passed_try"], r["agent_container"]) == ("pass", 2, "trial"), r
    assert [t["agent"]["fresh_container"] for t in r["tries"]] == [True, False]
    one, two = logs(home, "stateful")
    assert "SEEN" not in one and "SEEN try-1-was-here" in two, "try 2 finds what try 1 left in /tmp"
    assert "LINGERER-ALIVE" not in two and "LATE-WRITE" not in two, "nothing try 1 started outlives it"
    assert "SPAWNED-ALIVE" not in two, "not even what a process forking without end spawned"
    diff = (home / "evals" / "aider" / "runs" / "stateful" / "python-hello" / "work.diff").read_text()
    assert "late.txt" not in diff
    assert lab_containers(**{"lab.agent": "stateful"}) == []
    again = trial(home, "stateful")  # another trial: a container of its own
    assert "SEEN" not in logs(home, "stateful")[0] and again["status"] == "pass"
    assert lab_containers(**{"lab.agent": "stateful"}) == []


@docker
def test_container_per_try_keeps_nothing_between_tries(home):
    r = trial(home, "per-try")
    assert (r["status"], r["passed_try"], r["agent_container"]) == ("pass", 2, "try"), r
    assert [t["agent"]["fresh_container"] for t in r["tries"]] == [True, True]
    assert "SEEN" not in logs(home, "per-try")[1]
    assert r["key"]["run"]["agent_container"] == "try"
    assert lab_containers(**{"lab.agent": "per-try"}) == []


@docker
def test_a_try_that_timed_out_leaves_the_next_a_fresh_container_and_says_so(home):
    r = trial(home, "forgetful")
    first, second = r["tries"]
    assert first["agent"]["timed_out"] and first["outcome"] == "timeout" and first["grade"]["ran"] == 3
    assert (r["status"], r["passed_try"]) == ("pass", 2), r
    assert second["agent"]["fresh_container"] is True
    assert "a fresh agent container for this try (the last one was killed at its time limit)" in second["note"]
    assert "SEEN" not in logs(home, "forgetful")[1]
    assert r["agent_seconds"] < 30 and lab_containers(**{"lab.agent": "forgetful"}) == []


@docker
def test_a_try_that_ran_out_of_memory_says_so_and_the_next_gets_a_fresh_container(home):
    r = trial(home, "hog")
    first, second = r["tries"]
    assert "hog rc=137" in logs(home, "hog")[0]
    assert first["agent"]["oom_killed"] is True and first["agent"]["exit_code"] == 0, first
    assert second["agent"]["oom_killed"] is False and second["agent"]["fresh_container"] is True
    assert "the last one ran out of memory" in second["note"] and "SEEN" not in logs(home, "hog")[1]
    assert (r["status"], r["passed_try"]) == ("pass", 2)
    assert lab_containers(**{"lab.agent": "hog"}) == []


@docker
def test_a_command_that_is_not_executable_is_an_error_not_a_fail(home):
    r = trial(home, "not-executable")
    assert (r["status"], r["error_kind"]) == ("error", "agent"), r
    assert r["tries"][0]["agent"]["exit_code"] == 126 and "could not run (exit 126)" in r["error"]
    assert r["tests"]["ran"] == 0 and lab_containers(**{"lab.agent": "not-executable"}) == []


@docker
def test_the_box_is_removed_when_the_trial_fails_midway(home, monkeypatch):
    from rules import sandbox, trial as trial_module

    def broken_grader(*args, **kwargs):
        raise sandbox.SandboxError("the grader fell over (test)")

    monkeypatch.setattr(trial_module, "grade", broken_grader)
    r = trial(home, "stateful")
    assert (r["status"], r["error_kind"]) == ("error", "infrastructure") and "fell over" in r["error"], r
    assert len(r["tries"]) == 1 and lab_containers(**{"lab.agent": "stateful"}) == []


@docker
def test_box_output_is_streamed_capped_and_counted_in_full(grader_image):
    from rules import sandbox
    from rules.config import Limits

    box = sandbox.start_box(grader_image, env={"LAB_BOX_TEST": "from-env"}, workdir="/tmp",
                            limits=Limits(cpus=1, memory=256 * 1024**2, pids=64, timeout=60),
                            labels={"lab.role": "box-test"})
    try:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
        res = sandbox.box_exec(box, ["sh", "-c", "echo $LAB_BOX_TEST $(pwd); head -c 300000000 /dev/zero; echo END"],
                               timeout=120)
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss
        assert res.exit_code == 0 and res.output_bytes == len("from-env /tmp\n") + 300_000_000 + len("END\n")
        assert res.output.startswith("from-env /tmp\n") and res.output.endswith("END\n")
        assert len(res.output) < sandbox.OUTPUT_CAP + 100 and "bytes elided by lab" in res.output
        assert grown < 64 * 1024, f"reading 300 MB of output grew this process by {grown} KiB"
        assert sandbox.box_alive(box) and not box.dead
        late = sandbox.box_exec(box, ["sleep", "60"], timeout=1)
        assert late.timed_out and late.exit_code is None and box.dead and not sandbox.box_alive(box)
    finally:
        sandbox.stop_box(box)
        sandbox.stop_box(box)  # idempotent
    assert lab_containers(**{"lab.role": "box-test"}) == []
    with pytest.raises(sandbox.SandboxError, match="dead"):
        sandbox.box_exec(box, ["true"], timeout=5)


def test_the_two_streams_of_a_box_meet_only_between_lines(monkeypatch):
    """stdout and stderr come as frames of one attach stream; the output passes each stream's bytes on up to its
    last newline, so a line of stderr never lands inside a line of stdout (a JSON event of an agent, cut by a
    warning, was lost: the try's tokens with it), and each end line is still found however the frames cut it."""
    from rules.sandbox import box as boxes

    box = SimpleNamespace(marker="MARK", sent=3)
    frames = [(1, b'{"type": "result", "us'), (2, b"Warning: a notice\n"), (1, b'age": 7}\n{"type": "x'),
              (2, b"more\n\n"), (2, b"MARK 3 0\n"), (1, b'"}\n\nMA'), (1, b"RK 3 5\n")]
    monkeypatch.setattr(boxes, "_frames", lambda box, sock, deadline, watch=None: iter(frames))
    out, codes, timed_out, stopped = boxes._read_to_end(box, None, 0)
    assert codes == {1: 5, 2: 0} and not timed_out and not stopped
    assert out.text().splitlines() == ["Warning: a notice", '{"type": "result", "usage": 7}', "more", "",
                                       '{"type": "x"}', ""]
    split = [(1, b"line\n"), (1, b"\n"), (1, b"MARK 3 1\n"), (2, b"\nMARK 3 1\n")]  # the end line's newline alone
    monkeypatch.setattr(boxes, "_frames", lambda box, sock, deadline, watch=None: iter(split))
    out, codes, _, _ = boxes._read_to_end(box, None, 0)
    assert codes == {1: 1, 2: 1} and out.text().startswith("line\n")
    long = [(1, b"x" * (boxes.LINE_HOLD + 10)), (2, b"err\n"), (1, b"\nMARK 3 0\n"), (2, b"\nMARK 3 0\n")]
    monkeypatch.setattr(boxes, "_frames", lambda box, sock, deadline, watch=None: iter(long))
    out, codes, _, _ = boxes._read_to_end(box, None, 0)  # a partial line past LINE_HOLD is passed on, all but hold
    assert codes == {1: 0, 2: 0} and out.total == boxes.LINE_HOLD + 14


def test_what_counts_as_left_over_in_a_box():
    from rules.sandbox import left_over_in

    titles = ["UID", "PID", "PPID", "C", "STIME", "TTY", "TIME", "CMD"]
    row = lambda pid, ppid, cmd: ["root", pid, ppid, "0", "16:09", "?", "00:00:00", cmd]  # noqa: E731
    idle = [row("6711", "6690", "sh -c exec 3<&0; while :; do (read -r _ <&3) & wait $!; done"),
            row("6738", "6711", "sh -c exec 3<&0; while :; do (read -r _ <&3) & wait $!; done")]
    assert left_over_in({"Titles": titles, "Processes": idle}) == []
    assert left_over_in({"Titles": titles, "Processes": idle + [row("6800", "6711", "[sleep] <defunct>")]}) == []
    planted = idle + [row("6801", "6711", "sleep 300"), row("6802", "6801", "python3 -c 1"),
                      row("6803", "6711", "sleep 2147483647")]  # the idle sleep of old: an agent's program now
    assert left_over_in({"Titles": titles, "Processes": planted}) == ["sleep 300", "python3 -c 1", "sleep 2147483647"]


@docker
def test_a_process_the_commands_kill_cannot_reach_takes_the_box_with_it(grader_image):
    from rules import sandbox
    from rules.config import Limits

    box = sandbox.start_box(grader_image, limits=Limits(cpus=1, memory=256 * 1024**2, pids=64, timeout=60),
                            labels={"lab.role": "box-test"}, user="1000")
    try:
        assert sandbox.box_exec(box, ["true"], timeout=30).exit_code == 0 and not box.dead
        # a process of another user (root) beside the commands (uid 1000): out of BOX_EXEC's kill's reach
        api = sandbox.client().api
        api.unpause(box.id)  # the box is frozen between commands
        box.paused = False
        api.exec_start(api.exec_create(box.id, ["sleep", "300"], user="root")["Id"], detach=True)
        res = sandbox.box_exec(box, ["true"], timeout=30)
        assert res.exit_code == 0 and box.dead and "a process outlived the command (sleep 300)" == box.why_dead
        assert not sandbox.box_alive(box)
    finally:
        sandbox.stop_box(box)
    assert lab_containers(**{"lab.role": "box-test"}) == []


@docker
def test_a_work_tree_laid_anew_between_runs_gets_a_fresh_box(home, tmp_path):
    import shutil

    from rules import images
    from rules.agents import load_agents
    from rules.config import Limits
    from rules.trial import Trial, agent_container

    noop = load_agents(home / "evals" / "agents.toml")["noop"]
    t = Trial(agent=noop, task_dir=tmp_path / "task", run_dir=tmp_path / "run", scratch=tmp_path / "scratch",
              agent_image=noop.tag(images.GRADER), grader_image=images.GRADER, grade_limits=Limits())
    work = tmp_path / "scratch" / "work"
    for folder in (work, t.scratch / "in", t.scratch / "out", t.run_dir):
        folder.mkdir(parents=True)
    (work / "a.txt").write_text("first\n")
    look = ["sh", "-c", "cat /work/a.txt; test -e /tmp/mark && echo MARK; touch /tmp/mark"]
    labels = {"lab.role": "agent", "lab.agent": "box-anew"}
    with agent_container(t, {}) as box:
        box.begin_try()
        first = box.run(look, work, t.run_dir / "a.log", labels)
        box.begin_try()
        same = box.run(look, work, t.run_dir / "b.log", labels)
        assert (first.output, same.output, box.fresh, box.note) == ("first\n", "first\nMARK\n", False, "")
        shutil.rmtree(work)
        work.mkdir()
        (work / "a.txt").write_text("second\n")
        box.begin_try()
        anew = box.run(look, work, t.run_dir / "c.log", labels)
        assert anew.output == "second\n" and box.fresh is True and "made anew" in box.note
    assert lab_containers(**{"lab.agent": "box-anew"}) == []


@docker
def test_the_report_removes_the_boxes_a_killed_run_left_up(home):
    from rules import images, sandbox
    from rules.config import Limits

    dead = subprocess.Popen(["true"])
    dead.wait()  # a run killed by Ctrl-C: its process is gone, its box idles on
    gone = sandbox.start_box(images.GRADER, limits=Limits(cpus=1, memory=128 * 1024**2, pids=32, timeout=60),
                             labels={"lab.pid": str(dead.pid), "lab.role": "box-test"})
    live = sandbox.start_box(images.GRADER, limits=Limits(cpus=1, memory=128 * 1024**2, pids=32, timeout=60),
                             labels={"lab.role": "box-test"})  # this process's: a run still going
    try:
        assert sandbox.boxes_left()
        res = run_doit(home, "report", timeout=300)
        assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]
        left = set(lab_containers(**{"lab.role": "box-test"}))
        assert gone.id[:12] not in left and live.id[:12] in left
    finally:
        sandbox.stop_box(gone)
        sandbox.stop_box(live)


@docker
def test_a_watch_that_gives_a_reason_kills_the_command_in_a_box_and_in_a_fresh_container(grader_image, monkeypatch):
    """The watch ``box_exec`` and ``run`` call while a command runs (a trial's: the gateway's count of the try's
    budget): its first reason ends the command at once, as the timeout does but not called one; a watch that
    gives none ends nothing."""
    from rules import sandbox
    from rules.config import Limits
    from rules.sandbox import box as boxes
    from rules.sandbox import engine

    monkeypatch.setattr(boxes, "WATCH_EVERY", 0.5)
    monkeypatch.setattr(engine, "WATCH_EVERY", 0.5)
    calls: list[float] = []

    def watch() -> str:
        calls.append(time.monotonic())
        return "enough" if len(calls) >= 3 else ""

    limits = Limits(cpus=1, memory=128 * 1024**2, pids=32, timeout=120)
    box = sandbox.start_box(grader_image, limits=limits, labels={"lab.role": "box-test"})
    try:
        quiet = sandbox.box_exec(box, ["sh", "-c", "sleep 2; echo done"], timeout=60, watch=lambda: "")
        assert quiet.exit_code == 0 and not quiet.stopped and "done" in quiet.output
        res = sandbox.box_exec(box, ["sh", "-c", "echo started; sleep 300"], timeout=120, watch=watch)
        assert res.stopped == "enough" and not res.timed_out and res.exit_code is None and res.seconds < 30
        assert "started" in res.output and box.dead and len(calls) == 3
    finally:
        sandbox.stop_box(box)
    calls.clear()
    res = sandbox.run(grader_image, ["sleep", "300"], limits=limits, labels={"lab.role": "box-test"}, watch=watch)
    assert res.stopped == "enough" and not res.timed_out and res.exit_code is None and res.seconds < 30
