"""One lab command that runs tasks at a time in a lab home (``rules.cli.hold_home``)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import PROJECT, run_doit

HOLD = ("import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.pwrite(fd, b'pid 4242, `doit run agent=tomo`', 0)\n"
        "print('held', flush=True)\n"
        "time.sleep(120)\n")


def test_a_second_command_in_one_home_is_refused_while_one_runs_and_runs_after(lab_home):
    """Two `doit run`s at once in one home removed each other's trial scratch folders and ended sound trials in
    errors counted as the agent's (a newcomer's test); the second is refused, naming the first."""
    (lab_home / ".lab").mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lab_home / ".lab" / "home.lock")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        res = run_doit(lab_home, "report", timeout=300)
        said = res.stdout + res.stderr
        assert res.code != 0 and "another lab command is running in this home" in said, said[-2000:]
        assert "pid 4242, `doit run agent=tomo`" in said and "nothing was run" in said
        assert not (lab_home / "evals" / "aider" / "report.md").exists()
        listed = subprocess.run([sys.executable, "-m", "doit", "list", "-f", str(PROJECT / "dodo.py")], cwd=PROJECT,
                                env={**os.environ, "LAB_HOME": str(lab_home)}, capture_output=True, text=True,
                                timeout=300)  # `doit list` runs no task: never refused
        assert listed.returncode == 0 and "gen" in listed.stdout, listed.stdout[-2000:] + listed.stderr[-2000:]
    finally:
        holder.kill()
        holder.wait()
    res = run_doit(lab_home, "report", timeout=300)  # the holder is gone: the kernel dropped its lock
    assert "another lab command" not in res.stdout + res.stderr
    assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]


def _tree(home) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*"))


def test_commands_that_run_no_task_take_no_lock_and_make_nothing(lab_home):
    """`doit list`, `doit help` and `doit info` made .lab/, wrote the agents' definition stamps and parsed the
    command line by hand when dodo.py was imported; lab's loader now does its part only for a command that runs
    tasks."""
    before = _tree(lab_home)
    for args in (["list", "--all"], ["help"], ["help", "gen"], ["list", "agent=noop"]):
        res = run_doit(lab_home, *args, timeout=300)
        assert res.code == 0, (args, res.stdout[-2000:] + res.stderr[-2000:])
    res = run_doit(lab_home, "info", "report", timeout=300)  # exits 1: the report is never up to date
    assert "report" in res.stdout and "Traceback" not in res.stderr, res.stdout[-2000:] + res.stderr[-2000:]
    assert _tree(lab_home) == before, "no .lab/, no lock, no stamp"
    res = run_doit(lab_home, "report", timeout=300)  # runs a task: lock, and doit's database on disk
    assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert (lab_home / ".lab" / "doit.sqlite3").stat().st_size > 0 and (lab_home / ".lab" / "home.lock").is_file()


def test_doit_started_outside_the_lab_folder_says_where_to_start_it(lab_home):
    """doit reads its [tool.doit] table (which selects lab's loader) from the folder it starts in; elsewhere it
    would load dodo.py without lab's checks and lock, so dodo.py stops it with one line."""
    res = subprocess.run([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), "report"], cwd=lab_home,
                         env={**os.environ, "LAB_HOME": str(lab_home)}, capture_output=True, text=True, timeout=300)
    assert res.returncode != 0 and f"run doit in the lab folder ({PROJECT})" in res.stderr, res.stderr[-2000:]
    assert not (lab_home / ".lab").exists()


def test_a_stopped_command_writes_nothing_more(tmp_path):
    """After ``stop_writes`` (the stop handler's first step) a trial's thread that sees its container removed
    stores nothing: every write raises ``Stopped`` and leaves no file, not even a temporary one."""
    code = ("import sys; from pathlib import Path; from rules import files\n"
            "p = Path(sys.argv[1]); files.write_json(p / 'before.json', {'ok': 1}); files.stop_writes()\n"
            "try:\n    files.write_json(p / 'result.json', {'status': 'error'})\n"
            "except files.Stopped as exc:\n    print('refused:', exc)\n")
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=PROJECT, capture_output=True, text=True)
    assert res.returncode == 0 and "refused:" in res.stdout and "told to stop" in res.stdout, res.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["before.json"]


@pytest.mark.parametrize("target,said", [("gen:aider", "finished proofs are kept, the next gen does the rest"),
                                         ("eval:noop", "finished trials are kept, the next run does the rest")])
def test_a_stopped_command_says_what_it_keeps_and_nothing_of_its_threads_after(target, said):
    """The stop line names what the command was doing (a gen proves, a run runs trials); what the command's other
    threads print after it (they see their containers removed) goes nowhere."""
    import signal

    code = ("import sys, threading, time; from rules import cli\n"
            f"cli.use(cli.Command('run', ({target!r},), {{}}, True))\n"
            "def noisy():\n    while True:\n        print('APIError: 409 container is dead', file=sys.stderr)\n"
            "        time.sleep(0.01)\n"
            "from rules import sandbox; sandbox.remove_own = lambda: (time.sleep(0.2), 0)[1]\n"
            "threading.Thread(target=noisy, daemon=True).start(); time.sleep(0.05)\n"
            "cli._stopped(signal.SIGINT, None)\n")
    res = subprocess.run([sys.executable, "-c", "import signal\n" + code], cwd=PROJECT, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 128 + signal.SIGINT, res.stderr[-2000:]
    after = res.stderr.split("lab: stopped (SIGINT)", 1)[1]
    assert said in after and "container(s) removed" in after and "APIError" not in after, res.stderr[-2000:]

