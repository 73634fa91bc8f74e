"""Trials against the real Docker engine, on a tiny Python tier rendered from the fixture upstream.

Every agent here is a few lines of shell written for the test (``TEST_AGENTS``), built on the ``noop`` image
(the grader image as it is). The tier: ``python-hello``, ``python-twice``, ``python-thrice`` (stubs fail) and
``python-ledger`` (its stub passes: free). Every solution is ``double(number)``.
"""
from __future__ import annotations

import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import AGENTS, PROJECT, run_doit  # noqa: E402
from fixture_upstream import GOOD_PY, STUB_PY, _python, make_upstream, write_exercise  # noqa: E402

docker = pytest.mark.docker

GOOD = r"printf 'def double(number):\n    return number * 2\n'"
WRONG = r"printf 'def double(number):\n    return number + 1\n'"  # passes test_one only
TEST_AGENTS = f"""
[solver]
image = "noop"
command = ["sh", "-c", '''for f in {{files}}; do {GOOD} > "$f"; done
echo '{{"tokens_sent": 100, "tokens_received": 7, "cost": 0.25}}' > {{out}}/usage.json''']
[solver.limits]
timeout = 60

[second-try]
image = "noop"
command = ["sh", "-c", '''if grep -q 'did not pass the tests' {{prompt}} && grep -q 'test_two' {{prompt}}
then {GOOD} > {{files}}; else {WRONG} > {{files}}; fi''']

[reader]
image = "noop"
command = ["sh", "-c", '''ls /task /answers /var/run/docker.sock 2>&1; cat /proc/mounts
grep -rlsI --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr 'number [*] 2' / | sed 's/^/FOUND /'
for f in $(grep -rlsI --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr 'number [*] 2' /); do cp "$f" {{files}}; done
echo reader done''']

[tamper-tests]
image = "noop"
command = ["sh", "-c", '''{WRONG} > {{files}}
for t in *_test.py; do printf 'import unittest\\nclass T(unittest.TestCase):\\n    def test_ok(self):\\n        pass\\n' > "$t"; done''']
[tamper-tests.limits]
timeout = 60

[tamper-build]
image = "noop"
command = ["sh", "-c", '''{WRONG} > {{files}}
printf '[pytest]\\naddopts = -k test_one\\n' > pytest.ini
printf '[tool:pytest]\\naddopts = -k test_one\\n' > setup.cfg
printf 'import sys\\nx = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")][0]\\nopen(x, "w").write("<testsuite><testcase name=\\\\"a\\\\"/></testsuite>")\\n' > pytest.py''']

[sleeper]
image = "noop"
command = ["sleep", "infinity"]
[sleeper.limits]
timeout = 3

[loud]
image = "noop"
command = ["sh", "-c", "yes lab-noise-lab-noise | head -c 200000000; head -c 300000000 /dev/zero > big.bin"]
[loud.limits]
memory = "256m"

[slow]
image = "noop"
command = ["sh", "-c", "sleep 2"]

[badnames]
image = "noop"
command = ["sh", "-c", '''{GOOD} > {{files}}; echo x > "$(printf 'bad\\377name.txt')"; mkfifo "$(printf 'pipe\\377')"
mkdir "$(printf 'dir\\376')"; echo y > "$(printf 'dir\\376/in\\377side')"; echo z > "{{out}}/$(printf 'note\\377.txt')"''']

[by-model]
image = "noop"
command = ["sh", "-c", '''if [ "$LAB_TEST_MODEL" = good ]; then {GOOD} > {{files}}; else {WRONG} > {{files}}; fi''']
[by-model.settings]
model = {{ env = "LAB_TEST_MODEL" }}

[repeater]
image = "noop"
command = ["sh", "-c", '''test -e marker && echo DIRTY; touch marker; {GOOD} > {{files}}''']
"""
TASKS = ["python-hello", "python-ledger", "python-thrice", "python-twice"]


def test_progress_counts_results_and_estimates_from_this_runs_pace(tmp_path):
    import datetime as dt

    from rules.runs import progress, progress_line

    now = 1_000_000.0
    for i, (task, status) in enumerate((("a", "pass"), ("b", "fail"), ("c", "error"))):
        (tmp_path / task).mkdir()
        started = dt.datetime.fromtimestamp(now - 100 + 50 * i, dt.timezone.utc).isoformat()
        (tmp_path / task / "result.json").write_text(json.dumps({"status": status, "started": started}))
        os.utime(tmp_path / task / "result.json", (now, now))
    p = progress(tmp_path, ["a", "b", "c", "d", "e"], since=now - 500, now=now)
    assert (p["done"], p["passing"], p["errors"], p["done_now"]) == (2, 1, 1, 2)
    assert p["eta"] == pytest.approx(150.0)  # 50 s per trial since the first one started, 3 left
    assert progress_line("x", p) == "[x] 2/5 done, 1 passing, 1 errors, elapsed 0:08:20, ETA 0:02:30"
    # an error an earlier command left (a newcomer's stopped run) is still to be redone, not this run's error
    os.utime(tmp_path / "c" / "result.json", (now - 600, now - 600))
    assert progress(tmp_path, ["a", "b", "c", "d", "e"], since=now - 500, now=now)["errors"] == 0


def test_the_progress_of_a_command_naming_single_trials_counts_those_trials():
    """A newcomer's ``doit eval:tomo.m1/<task>`` printed ``[tomo.m1] 1/18 done ... ETA``: the whole run's count
    for a command that runs one trial. Named one by one, the trials are what the progress counts."""
    from rules.runs import command_folders

    folders = ["a", "b", "b@2", "c"]
    assert command_folders("tomo.m1", folders, ["eval:tomo.m1/b"]) == ["b"]
    assert command_folders("tomo.m1", folders, ["eval:tomo.m1/b", "eval:tomo.m1/b@2", "eval:x/a"]) == ["b", "b@2"]
    for whole in ([], ["run"], ["eval:tomo.m1"], ["eval:tomo.m1/a", "report"], ["eval:other/a"]):
        assert command_folders("tomo.m1", folders, whole) == folders, whole


def test_a_regraded_trial_says_this_commands_grading_time_apart_from_the_stored_trials():
    from rules.trial import summary_line

    result = {"task": "t", "status": "pass", "passed_try": 1, "seconds": 312.0}
    assert summary_line(result) == "t: pass (try 1) in 312.0 s"
    assert summary_line(result, regraded=4.25) == "t: pass (try 1) re-graded in 4.2 s (the trial it grades took 312.0 s)"


def test_progress_counts_a_stale_result_from_before_the_run_as_not_done(tmp_path):
    """A result an earlier command wrote counts as done only when its trial's up-to-date check (registered with
    the doit task, asked once) finds it current: a stale one is still to be redone by this run."""
    from rules import runs

    now = 1_000_000.0
    for task in ("a", "b", "c"):
        (tmp_path / task).mkdir()
        (tmp_path / task / "result.json").write_text(json.dumps({"status": "pass", "started": "2026-01-01T00:00:00"}))
        os.utime(tmp_path / task / "result.json", (now - 600, now - 600))  # before this run started
    asked = []

    def check(folder, current):
        asked.append(folder.name)
        return runs.record_verdict(folder, current)

    runs.register_check(tmp_path / "a", (check, [tmp_path / "a", True]))
    runs.register_check(tmp_path / "b", (check, [tmp_path / "b", False]))  # its task changed since
    p = runs.progress(tmp_path, ["a", "b", "c"], since=now - 500, now=now)
    assert (p["done"], p["passing"]) == (2, 2), "b is stale; c has no check known, as before"
    assert runs.progress(tmp_path, ["a", "b", "c"], since=now - 500, now=now)["done"] == 2
    assert sorted(asked) == ["a", "b"], "each check asked once per command"
    os.utime(tmp_path / "b" / "result.json", (now, now))  # b ran again in this run
    assert runs.progress(tmp_path, ["a", "b", "c"], since=now - 500, now=now)["done"] == 3


def test_followup_prompt_keeps_the_end_of_long_test_output():
    from rules.trial import FOLLOWUP_CHARS, followup_prompt

    output = "\n".join(f"line {i}" for i in range(5000)) + "\nFAILED test_two\n"
    text = followup_prompt("Do the thing.\n", output, ["a.py", "b.py"])
    assert text.startswith("Do the thing.") and "FAILED test_two" in text and "line 0\n" not in text
    assert "(shortened)" in text and "Fix the code in a.py, b.py" in text and len(text) < FOLLOWUP_CHARS + 600


def test_special_files_are_removed_and_symlinks_kept(tmp_path):
    from rules.trial import remove_special_files, work_diff

    work, stub = tmp_path / "work", tmp_path / "stub"
    (work / "sub").mkdir(parents=True)
    stub.mkdir()
    os.mkfifo(work / "sub" / "pipe")
    (tmp_path / "host-secret").write_text("HOST-SECRET\n")
    (work / "link").symlink_to(tmp_path / "host-secret")
    (work / "a.py").write_text("x = 1\n")
    assert remove_special_files(work) == ["sub/pipe"]
    diff = work_diff(stub, work)
    assert "+x = 1" in diff and "HOST-SECRET" not in diff  # a link is never followed


def test_the_work_diff_compares_two_trees_of_one_name_in_two_folders(tmp_path):
    """A stub and a work tree need not be siblings nor differently named (a regrade, a red team's harness): the
    diff is of the two trees, labelled stub/ and work/, never of one tree against itself."""
    from rules.scan import scan
    from rules.tiers.aider.suspicions import TABLE
    from rules.trial import work_diff

    stub, work = tmp_path / "stub" / "python-bob", tmp_path / "graded" / "python-bob"
    stub.mkdir(parents=True)
    work.mkdir(parents=True)
    (stub / "bob.py").write_text("def hey(s):\n    pass\n")
    (work / "bob.py").write_text("import unittest\ndef hey(s):\n    return 'Whatever.'\n")
    diff = work_diff(stub, work)
    assert "--- stub/bob.py" in diff and "+++ work/bob.py" in diff and "+import unittest" in diff
    assert [(f["name"], f["file"]) for f in scan(diff, TABLE["python"])] == [("framework", "bob.py")]


def test_work_digest_sees_content_modes_links_and_empty_folders_but_not_times(tmp_path):
    from rules.trial import work_digest

    root = tmp_path / "w"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    os.symlink("a.py", root / "src" / "link")
    base = work_digest(root)
    os.utime(root / "src" / "a.py", (1, 1))
    assert work_digest(root) == base, "times do not count"
    changes = [lambda: (root / "src" / "a.py").write_text("x = 2\n"),
               lambda: (root / "src" / "a.py").chmod(0o755),
               lambda: (os.unlink(root / "src" / "link"), os.symlink("b.py", root / "src" / "link")),
               lambda: (root / "empty").mkdir(),
               lambda: (root / "src").chmod(0o700),
               lambda: (root / "src" / "a.py").rename(root / "src" / "b.py")]
    seen = {base}
    for change in changes:
        change()
        d = work_digest(root)
        assert d not in seen, change
        seen.add(d)


def test_file_names_that_are_not_utf8_are_recorded_escaped(tmp_path):
    from rules.files import write_json
    from rules.records import printable
    from rules.worktree import remove_special_files

    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(os.path.join(os.fsencode(work), b"pipe\xff"))
    removed = remove_special_files(work)
    record = printable({"removed_special_files": removed, "out_files": ["note\udcff.txt"], "n": 1, "ok": "é"})
    assert record == {"removed_special_files": ["pipe\\xff"], "out_files": ["note\\xff.txt"], "n": 1, "ok": "é"}
    write_json(tmp_path / "result.json", record)  # raised UnicodeEncodeError before
    assert json.loads((tmp_path / "result.json").read_text())["removed_special_files"] == ["pipe\\xff"]


def test_only_containers_of_a_run_provably_gone_are_cleaned_up():
    from rules.sandbox import owner_alive, run_labels

    here = run_labels()
    dead = subprocess.Popen(["true"])
    dead.wait()
    same = {**here, "lab.pid": str(dead.pid)}
    assert owner_alive(here, here), "this very run"
    assert not owner_alive(same, here), "this host and boot, pid no longer runs"
    assert not owner_alive({**here, "lab.start": "1"}, here), "the pid runs, but a process started at another time"
    assert not owner_alive({**same, "lab.boot": "another-boot"}, here), "this host rebooted since"
    assert owner_alive({**same, "lab.host": "ci-runner-7"}, here), "another host (a CI container): not provable"
    assert owner_alive({**same, "lab.pidns": "4026530000"}, here), "another pid namespace: its pids mean nothing here"
    assert owner_alive({"lab": "1", "lab.pid": str(dead.pid)}, here), "no run labels (an older lab): left alone"


def make_tier(home: Path) -> None:
    """Render the fixture's Python exercises into ``home``'s aider tier with a manifest (no proving: the
    fixture's stubs fail and its ledger passes by construction)."""
    from rules.tiers.aider import exercises as aider
    from rules.files import write_atomic, write_json

    up = make_upstream(home.parent / "upstream", only=["python/hello", "python/ledger"])
    for slug in ("twice", "thrice"):
        write_exercise(up, f"python/{slug}", _python(slug, STUB_PY, GOOD_PY))
    tier = home / "evals" / "aider"
    entries = []
    for ex in aider.discover(up, ["python"]):
        r = aider.render(ex)
        for rel, (data, mode) in r.task_files.items():
            write_atomic(tier / "tasks" / ex.task / rel, data, mode)
        for rel, (data, mode) in r.answer_files.items():
            write_atomic(tier / "answers" / ex.task / rel, data, mode)
        entries.append({"task": ex.task, "language": "python", "exercise": ex.slug, "published": True,
                        "status": "free" if ex.slug == "ledger" else "kept", "reason": ""})
    write_json(tier / "manifest.json", {"version": 1, "tier": "aider", "tasks": entries})
    (tier / "suite.toml").write_text('upstream = "none"\nref = "main"\nlanguages = ["python"]\n\n'
                                     '[prove]\ncpus = 1.0\nmemory = "1g"\npids = 256\ntimeout = 60\n')
    agents = AGENTS.read_text().replace('network = "bridge"', 'network = "host"')
    (home / "evals" / "agents.toml").write_text(agents + TEST_AGENTS)


@pytest.fixture(scope="module")
def home(tmp_path_factory, grader_image) -> Path:
    """A lab home with the tier and the test agents, their images built through doit."""
    home = tmp_path_factory.mktemp("trials") / "home"
    make_tier(home)
    names = ["noop", "solver", "second-try", "reader", "tamper-tests", "tamper-build", "sleeper", "loud", "slow",
             "badnames", "by-model", "repeater"]
    # jobs=1: doit's JSON reporter loses its output when actions run in threads (they swap sys.stdout)
    res = run_doit(home, *[f"agent_image:{n}" for n in names], "jobs=1", timeout=1200)
    assert res.code == 0, failure(res)
    return home


def failure(res) -> str:
    """What went wrong in a doit run: the tasks it ran, and the tails of its output and errors (doit prints a
    failed task's message on stdout)."""
    return f"ran: {sorted(res.ran)}\n" + res.stdout[-3000:] + "\n" + res.stderr[-2000:]


def trial(home: Path, agent: str, task: str = "python-hello", tries: int = 2) -> dict:
    """Run one trial in this process and return its result."""
    from rules import images
    from rules.agents import load_agents
    from rules.config import Limits
    from rules.trial import Trial, run_trial

    a = load_agents(home / "evals" / "agents.toml")[agent]
    tier = home / "evals" / "aider"
    t = Trial(agent=a, task_dir=tier / "tasks" / task, run_dir=tier / "runs" / agent / task,
              scratch=home / ".lab" / "trials" / agent / task, agent_image=a.tag(images.GRADER),
              grader_image=images.GRADER, grade_limits=Limits(cpus=1, memory=1024**3, pids=256, timeout=60),
              tries=tries)
    return run_trial(t, environ={})


def lab_containers(**labels) -> list[str]:
    filters = sum((["--filter", f"label={k}={v}"] for k, v in labels.items()), [])
    out = subprocess.run(["docker", "ps", "-aq", "--filter", "label=lab", *filters], capture_output=True, text=True)
    return out.stdout.split()


@docker
def test_solver_passes_every_task_on_the_first_try(home):
    for task in TASKS:
        r = trial(home, "solver", task)
        assert (r["status"], r["passed_try"], len(r["tries"])) == ("pass", 1, 1), r
        run = home / "evals" / "aider" / "runs" / "solver" / task
        assert json.loads((run / "result.json").read_text()) == r
    assert r["version"] == 3 and r["tests"] == {"ran": 3, "passed": 3, "failed": 0}
    assert r["tries"][0]["suspicions"] == [], "an honest solution is scanned and carries no flag"
    assert r["usage"] == {"tokens_sent": 100, "tokens_received": 7, "tokens_cached": None, "cost": 0.25}
    assert r["images"]["agent"]["id"].startswith("sha256:") and r["images"]["grader"]["id"].startswith("sha256:")
    assert r["toolchains"]["python"].startswith("Python 3")
    assert r["agent_seconds"] > 0 and r["grading_seconds"] > 0 and r["tries"][0]["agent"]["exit_code"] == 0
    diff = (run / "work.diff").read_text()
    assert "+    return number * 2" in diff and "stub/twice.py" in diff
    assert (run / "agent-1.log").is_file() and "lab-check: ran=3 passed=3" in (run / "grade-1.log").read_text()
    assert (run / "out-1" / "usage.json").is_file()


@docker
def test_second_try_gets_the_test_output_and_passes(home):
    r = trial(home, "second-try")
    assert (r["status"], r["passed_try"]) == ("pass", 2)
    assert [t["outcome"] for t in r["tries"]] == ["fail", "pass"]
    assert r["tries"][0]["grade"]["failed_tests"] == 2
    followup = (home / "evals" / "aider" / "runs" / "second-try" / "python-hello" / "prompt-2.txt").read_text()
    assert "INSTRUCTIONS for hello" in followup and "test_two" in followup and "hello.py" in followup
    one = trial(home, "second-try", tries=1)
    assert (one["status"], len(one["tries"])) == ("fail", 1)


@docker
def test_a_try_that_changed_nothing_keeps_the_last_grading_and_a_changed_one_is_graded(home):
    from rules.config import Limits
    from rules.trial import Trial, regrade_trial
    from rules import images
    from rules.agents import load_agents

    r = trial(home, "noop")  # the stub fails; try 2 leaves the very tree try 1 left
    one, two = r["tries"]
    assert (r["status"], one["outcome"], two["outcome"]) == ("fail", "fail", "fail")
    assert "reused_from_try" not in one["grade"] and two["grade"]["reused_from_try"] == 1
    assert {k: v for k, v in two["grade"].items() if k != "reused_from_try"} == one["grade"]
    assert two["work_digest"] == one["work_digest"] and two["work_archive"] == one["work_archive"] == "work-1.tar.gz"
    assert r["grading_seconds"] == one["grade"]["seconds"]  # one grading ran
    run = home / "evals" / "aider" / "runs" / "noop" / "python-hello"
    assert "byte-identical to the one graded after try 1" in (run / "grade-2.log").read_text()
    assert "its grading stands" in two["note"] and not (run / "work-2.tar.gz").exists()
    changed = trial(home, "second-try")  # try 2 edits the work tree: graded afresh
    assert "reused_from_try" not in changed["tries"][1]["grade"]
    assert changed["tries"][0]["work_digest"] != changed["tries"][1]["work_digest"]
    # grading again: the kept tree is graded once, and try 2 keeps standing on try 1's new grading
    a = load_agents(home / "evals" / "agents.toml")["noop"]
    t = Trial(agent=a, task_dir=home / "evals" / "aider" / "tasks" / "python-hello", run_dir=run,
              scratch=home / ".lab" / "trials" / "noop" / "python-hello", agent_image=a.tag(images.GRADER),
              grader_image=images.GRADER, grade_limits=Limits(cpus=1, memory=1024**3, pids=256, timeout=60), tries=2)
    new = regrade_trial(t, r)
    assert new["graded"]["regraded"] and new["tries"][1]["grade"]["reused_from_try"] == 1
    assert new["tries"][1]["grade"]["seconds"] == new["tries"][0]["grade"]["seconds"] == new["grading_seconds"]


@docker
def test_an_agent_reading_for_answers_finds_nothing(home):
    r = trial(home, "reader")
    log = (home / "evals" / "aider" / "runs" / "reader" / "python-hello" / "agent-1.log").read_text()
    assert "reader done" in log and "FOUND" not in log
    assert "'/task': No such file" in log and "'/var/run/docker.sock': No such file" in log
    binds = sorted(line.split()[1] for line in log.splitlines() if line.startswith("/dev/")
                   and not line.split()[1].startswith("/etc/"))
    assert binds == ["/lab/in", "/lab/out", "/work"], "only the work tree, the prompt and the out folder"
    assert r["status"] == "fail"


@docker
@pytest.mark.parametrize("agent", ["tamper-tests", "tamper-build"])
def test_editing_tests_or_build_files_does_not_pass(home, agent):
    r = trial(home, agent, tries=1)
    assert r["status"] == "fail" and r["tests"]["ran"] == 3 and r["tests"]["failed"] == 2, r


@docker
def test_sleeping_forever_is_a_timeout_and_leaves_no_container(home):
    r = trial(home, "sleeper")  # each timed-out try is graded as it was, and the next try follows
    assert r["status"] == "timeout" and len(r["tries"]) == 2 and all(t["agent"]["timed_out"] for t in r["tries"])
    assert r["tries"][0]["grade"]["ran"] == 3 and r["agent_seconds"] < 30
    assert lab_containers(**{"lab.agent": "sleeper"}) == []


@docker
def test_huge_output_is_capped_and_a_huge_work_tree_not_graded(home):
    r = trial(home, "loud")
    run = home / "evals" / "aider" / "runs" / "loud" / "python-hello"
    assert (run / "agent-1.log").stat().st_size < 100_000
    assert r["tries"][0]["agent"]["output_bytes"] == 200_000_000, "every byte counted, 64 KiB kept"
    assert r["status"] == "fail" and "not graded" in r["tries"][0]["note"]
    assert not (run / "work.diff").exists() and not (home / ".lab" / "trials" / "loud" / "python-hello").exists()


@docker
def test_noop_through_doit_passes_only_the_free_task_then_reports(home):
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), "run", "agent=noop", "jobs=2"],
                          cwd=PROJECT, env={**os.environ, "LAB_HOME": str(home)}, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "[noop] 4/4 done, 1 passing, 0 errors" in proc.stdout, proc.stdout
    assert "| noop | 25.0% (1/4)" in proc.stdout  # the report is printed last
    data = json.loads((home / "evals" / "aider" / "report.json").read_text())
    noop = next(a for a in data["agents"] if a["agent"] == "noop")
    assert noop["pass_2"]["count"] == 1 and noop["pass_2"]["of"] == 4 and noop["without_free"]["pass_2"]["count"] == 0
    assert {row["task"]: row["outcomes"]["noop"] for row in data["matrix"]}["python-ledger"] == "pass@1"
    again = run_doit(home, "agent=noop", "jobs=1", timeout=600)
    assert again.code == 0 and not again.executed("eval:noop/"), "finished trials are never redone"


@docker
def test_resume_after_sigkill_finishes_every_trial_exactly_once(home):
    env = {**os.environ, "LAB_HOME": str(home)}
    cmd = [sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), "eval:slow", "jobs=1"]
    runs = home / "evals" / "aider" / "runs" / "slow"
    proc = subprocess.Popen(cmd, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and len(list(runs.glob("*/result.json"))) < 2:
        time.sleep(0.2)
    time.sleep(1.0)  # into the next trial: its agent is sleeping in a container
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {p.parent.name: p.read_bytes() for p in runs.glob("*/result.json")}
    assert 2 <= len(before) < len(TASKS)
    res = run_doit(home, "eval:slow", "jobs=1", timeout=600)
    assert res.code == 0, failure(res)
    after = {p.parent.name: p.read_bytes() for p in runs.glob("*/result.json")}
    assert sorted(after) == TASKS
    assert all(after[t] == data for t, data in before.items()), "a finished trial was run again"
    assert all(json.loads(d)["status"] in ("pass", "fail") for d in after.values())
    assert not list(runs.glob("**/.*.tmp")), "no half-written file"
    assert lab_containers(**{"lab.agent": "slow"}) == []


@docker
def test_file_names_that_are_not_utf8_do_not_lose_the_trial(home):
    r = trial(home, "badnames", tries=1)
    assert r["status"] == "pass", r
    assert r["tries"][0]["removed_special_files"] == ["pipe\\xff"]
    assert r["tries"][0]["out_files"] == ["note\\xff.txt"]
    run = home / "evals" / "aider" / "runs" / "badnames" / "python-hello"
    assert json.loads((run / "result.json").read_text(encoding="utf-8"))["tries"][0]["out_files"] == ["note\\xff.txt"]
    assert os.path.exists(os.path.join(os.fsencode(run), b"out-1", b"note\xff.txt")), "the file itself is kept"
    assert "bad" in (run / "work.diff").read_text()


@docker
def test_cleanup_removes_only_containers_of_runs_provably_gone(grader_image):
    from rules import sandbox

    here = sandbox.run_labels()
    dead = subprocess.Popen(["true"])
    dead.wait()
    mine = {**here, "lab.pid": str(dead.pid), "lab.role": "cleanup-test"}
    cases = {"gone": mine, "foreign": {**mine, "lab.host": "ci-runner-in-a-container", "lab.pidns": "4026530000"},
             "rebooted": {**mine, "lab.boot": "an-earlier-boot"}, "live": {**here, "lab.role": "cleanup-test"}}
    made = {name: sandbox.client().containers.create(grader_image, ["true"], labels={"lab": "1", **labels})
            for name, labels in cases.items()}
    try:
        sandbox.cleanup(only_dead_owners=True)
        left = set(lab_containers(**{"lab.role": "cleanup-test"}))
        kept = {name for name, c in made.items() if c.id[:12] in left}
        assert kept == {"foreign", "live"}
    finally:
        for c in made.values():
            try:
                c.remove(force=True)
            except Exception:
                pass


@docker
def test_two_models_of_one_agent_are_two_result_sets_side_by_side(home, monkeypatch):
    monkeypatch.delenv("LAB_TEST_MODEL", raising=False)
    runs = home / "evals" / "aider" / "runs"
    res = run_doit(home, "eval:by-model.good/python-hello", "model=good", "jobs=1", timeout=600)
    assert res.code == 0 and res.executed("eval:by-model.good/"), failure(res)
    monkeypatch.setenv("LAB_TEST_MODEL", "bad")  # the environment, when the command line gives none
    res = run_doit(home, "run", "agent=by-model", "jobs=1", timeout=900)
    assert res.code == 0, failure(res)
    assert res.executed("eval:by-model.bad/") == {f"eval:by-model.bad/{t}" for t in TASKS}, "model A's results never stand for B"
    good = json.loads((runs / "by-model.good" / "python-hello" / "result.json").read_text())
    bad = json.loads((runs / "by-model.bad" / "python-hello" / "result.json").read_text())
    assert (good["status"], good["run"], good["settings"], good["label"]) == ("pass", "by-model.good", {"model": "good"}, "by-model (good)")
    assert (bad["status"], bad["run"], bad["settings"], bad["label"]) == ("fail", "by-model.bad", {"model": "bad"}, "by-model (bad)")
    assert good["key"]["run"]["agent_digest"] != bad["key"]["run"]["agent_digest"] and good["repeat"] == bad["repeat"] == 1
    assert json.loads((runs / "by-model.bad" / "run.json").read_text()) == {
        "version": 1, "run": "by-model.bad", "agent": "by-model", "settings": {"model": "bad"}, "label": "by-model (bad)"}
    assert "[by-model.bad] 4/4 done, 0 passing" in res.stdout  # the wrong solution fails even the free task
    report = (home / "evals" / "aider" / "report.json").read_text()
    assert "by-model.bad" in report or "by-model (bad)" in report, "doit run reports the run"
    again = run_doit(home, "eval:by-model", "model=good", "jobs=1", timeout=600)
    assert again.code == 0 and again.executed("eval:by-model.good/") == {f"eval:by-model.good/{t}" for t in TASKS if t != "python-hello"}


@docker
def test_repeat_runs_each_trial_again_in_its_own_work_tree(home):
    res = run_doit(home, "eval:repeater", "repeat=2", "jobs=1", timeout=900)
    assert res.code == 0, failure(res)
    runs = home / "evals" / "aider" / "runs" / "repeater"
    assert sorted(p.name for p in runs.iterdir() if p.is_dir()) == sorted(TASKS + [f"{t}@2" for t in TASKS])
    for task in TASKS:
        for folder, k in ((task, 1), (f"{task}@2", 2)):
            r = json.loads((runs / folder / "result.json").read_text())
            assert (r["task"], r["repeat"], r["status"], r["run"]) == (task, k, "pass", "repeater")
            assert "DIRTY" not in (runs / folder / "agent-1.log").read_text(), "a fresh work tree for each repeat"
    again = run_doit(home, "eval:repeater", "repeat=2", "jobs=1", timeout=600)
    assert again.code == 0 and not again.executed("eval:repeater/")


# ---- the real aider CLI against a fixed-answer OpenAI-compatible server on 127.0.0.1 ----

FIXED_EDIT = "hello.py\n```python\ndef double(number):\n    return number * 2\n```\n"


class FakeOpenAI(http.server.BaseHTTPRequestHandler):
    """Answers every chat completion with FIXED_EDIT (aider's `whole` edit format) and usage counts."""

    requests: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        FakeOpenAI.requests.append({"path": self.path, "body": json.loads(body or b"{}")})
        reply = {"id": "chatcmpl-lab", "object": "chat.completion", "created": int(time.time()), "model": "lab-fake",
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": FIXED_EDIT},
                              "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass


@docker
def test_real_aider_cli_passes_with_a_fixed_edit_from_a_local_server(home, monkeypatch):
    res = run_doit(home, "agent_image:aider", "jobs=1", timeout=1800)
    assert res.code == 0, failure(res)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("AIDER_MODEL", "openai/lab-fake")
        monkeypatch.setenv("AIDER_EDIT_FORMAT", "whole")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-lab-test")
        monkeypatch.setenv("OPENAI_API_BASE", f"http://127.0.0.1:{server.server_port}/v1")
        res = run_doit(home, "eval:aider.openai-lab-fake.whole/python-hello", "jobs=1", timeout=900)
    finally:
        server.shutdown()
    run = home / "evals" / "aider" / "runs" / "aider.openai-lab-fake.whole" / "python-hello"
    r = json.loads((run / "result.json").read_text())
    assert (r["status"], r["passed_try"]) == ("pass", 1), (run / "agent-1.log").read_text()[-3000:]
    assert FakeOpenAI.requests and "INSTRUCTIONS for hello" in json.dumps(FakeOpenAI.requests[0]["body"])
    assert r["usage"]["tokens_sent"] == 1200 and r["usage"]["tokens_received"] == 30
    assert (r["settings"], r["label"]) == ({"model": "openai/lab-fake", "edit_format": "whole"}, "aider (openai/lab-fake, whole)")
    stamp = home / ".lab" / "agents" / "aider.openai-lab-fake.whole.json"
    assert "sk-lab-test" not in (run / "result.json").read_text() + stamp.read_text() + (run.parent / "run.json").read_text()


@docker
def test_a_stopped_run_removes_its_containers_and_keeps_its_finished_trials(home):
    """SIGTERM (or Ctrl-C) used to end doit at once and leave its containers up, an agent's running on (and
    spending) until the next run's cleanup (seen by a newcomer). The command now removes what it started."""
    env = {**os.environ, "LAB_HOME": str(home)}
    cmd = [sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), "eval:slow", "jobs=1"]
    runs = home / "evals" / "aider" / "runs" / "slow"
    for p in runs.glob("*/result.json"):
        p.unlink()
    proc = subprocess.Popen(cmd, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and not lab_containers(**{"lab.agent": "slow", "lab.pid": str(proc.pid)}):
        time.sleep(0.2)
    assert lab_containers(**{"lab.agent": "slow", "lab.pid": str(proc.pid)}), "the agent's container never started"
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert "lab: stopped (SIGTERM)" in err and "container(s) removed" in err, err[-2000:]
    assert lab_containers(**{"lab.pid": str(proc.pid)}) == []  # its agent's box, grader and network holders
    assert str(home) not in Path("/proc/self/mounts").read_text(), "the trial's capped scratch is unmounted"
    assert not list(runs.glob("**/.*.tmp")), "no half-written file"
    # the trial stopped under way stores no error of the stop's making (Docker's "409 ... marked for removal")
    assert not list(runs.glob("*/result.json")), [p.read_text()[:500] for p in runs.glob("*/result.json")]
