"""One lab command that runs tasks at a time in a lab home (``rules.tasks.hold_home``)."""
from __future__ import annotations

import os
import subprocess
import sys

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
