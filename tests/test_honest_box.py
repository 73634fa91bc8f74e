"""Red-team tests of one agent container per trial (``rules.sandbox`` boxes, ``rules.trial.AgentContainer``).

The agent runs as root in its box with Docker's default capabilities and a writable root filesystem, so it can
replace any program lab runs there later. The box's idle PID 1 starts ``sleep 2147483647`` again each time a
command's kill (``BOX_EXEC``) took its last one; an agent that put its own program at ``sleep`` gets a process
that ``_left_over`` takes for the idle sleep (same name, same parent), kept running after its command. These
tests show what such a process can and cannot do. Agents are a few lines of shell (and C: the grader image has
gcc) on the ``noop`` image, on ``tests/test_trial.py``'s fixture tier.
"""
from __future__ import annotations

import sys
import tarfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from test_trial import GOOD, WRONG, lab_containers, make_tier, trial  # noqa: E402

docker = pytest.mark.docker

# A C program planted at /usr/local/bin/sleep (first in PATH): the box's PID 1 runs it as "sleep 2147483647"
# once the command's kill took the real idle sleep. After DELAY microseconds it writes PAYLOAD to TARGET every
# 20 ms.
THIEF_C = r'''#include <stdio.h>
#include <unistd.h>
int main(void) { usleep(DELAY); for (;;) { FILE *o = fopen(TARGET, "a"); if (o) { fputs(PAYLOAD, o); fclose(o); } usleep(20000); } }
'''


def plant(target: str, payload: str, delay_us: int, mode: str = "a") -> str:
    """Shell lines that build the thief and put it at /usr/local/bin/sleep (``target``: a path, shell
    variables allowed; ``payload``: C string text, ``\\n`` for a newline)."""
    src = THIEF_C.replace('"a"', f'"{mode}"')
    return (f"cat > /tmp/thief.c <<'EOF'\n{src}EOF\n"
            f'gcc -DDELAY={delay_us} -DTARGET="\\"{target}\\"" -DPAYLOAD="\\"{payload}\\"" -o /tmp/thief /tmp/thief.c'
            " && mv /tmp/thief /usr/local/bin/sleep && echo planted")


# try 1 writes a wrong solution and plants a thief that writes the right one 0.05 s after the try ended
THIEF_AGENT = ("[sleep-thief]\nimage = \"noop\"\ncommand = [\"sh\", \"-c\", '''f=$(echo {files})\n"
               + plant("/work/$f", r"def double(number):\n    return number * 2\n", 50_000, mode="w")
               + f"\n{WRONG} > {{files}}''']\n")

# try 1 writes a wrong solution and removes the shell every exec in its box starts with
SH_BREAKER = f"""
[sh-breaker]
image = "noop"
command = ["sh", "-c", '''{WRONG} > {{files}}; rm -f /usr/bin/sh /bin/sh''']
"""


def _box(grader_image, work: Path):
    from rules import sandbox
    from rules.config import Limits

    return sandbox.start_box(grader_image, mounts=[sandbox.Mount(str(work), "/work")], workdir="/work",
                             limits=Limits(cpus=1, memory=512 * 1024**2, pids=128, timeout=120),
                             labels={"lab.role": "box-redteam"})


@docker
def test_a_process_named_like_the_idle_sleep_cannot_write_after_its_command(grader_image, tmp_path):
    """Hole (fixed): the thief outlived the command unseen and kept writing to the work tree while lab
    archived, digested and graded it. Now the box is frozen between commands."""
    from rules import sandbox

    work = tmp_path / "work"
    work.mkdir()
    box = _box(grader_image, work)
    try:
        res = sandbox.box_exec(box, ["sh", "-c", plant("/work/late.txt", "late\\n", 0)], timeout=120)
        assert res.exit_code == 0 and "planted" in res.output, res.output
        assert not box.dead, "a process that looks like the idle sleep is not taken for a leftover"
        before = (work / "late.txt").read_bytes() if (work / "late.txt").exists() else b""
        time.sleep(1.0)
        after = (work / "late.txt").read_bytes() if (work / "late.txt").exists() else b""
        assert after == before, f"something in the box wrote {len(after) - len(before)} bytes after its command"
        again = sandbox.box_exec(box, ["true"], timeout=60)  # a frozen box runs the next command all the same
        assert again.exit_code == 0 and not box.dead
    finally:
        sandbox.stop_box(box)
    assert lab_containers(**{"lab.role": "box-redteam"}) == []


@docker
@pytest.mark.xfail(strict=True, reason="open: a program the agent put at `sleep` is run by the box's PID 1 as its "
                   "idle sleep and runs again during the next command of the trial (frozen in between); fixing "
                   "it needs a PID 1 that runs nothing from the box's filesystem")
def test_no_process_a_command_left_runs_during_the_next(grader_image, tmp_path):
    from rules import sandbox

    work = tmp_path / "work"
    work.mkdir()
    box = _box(grader_image, work)
    try:
        assert sandbox.box_exec(box, ["sh", "-c", plant("/work/late.txt", "late\\n", 0)], timeout=120).exit_code == 0
        (work / "late.txt").unlink(missing_ok=True)
        res = sandbox.box_exec(box, ["sh", "-c", "sleep 0.5 2>/dev/null; /usr/bin/sleep 0.5"], timeout=60)
        assert res.exit_code == 0
        assert not (work / "late.txt").exists(), "the first command's thief ran during the second"
    finally:
        sandbox.stop_box(box)


@docker
@pytest.mark.xfail(strict=True, reason="open: the agent (root, Docker's default capabilities, default seccomp) "
                   "may ptrace the box's PID 1, which no kill from inside reaches; the box's freeze between "
                   "commands keeps it from the grading, not from the next try")
def test_the_agent_cannot_ptrace_the_boxs_pid_1(grader_image, tmp_path):
    from rules import sandbox

    work = tmp_path / "work"
    work.mkdir()
    box = _box(grader_image, work)
    src = r'''#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
int main(void) { if (ptrace(PTRACE_ATTACH, 1, 0, 0) != 0) { puts("REFUSED"); return 0; }
  waitpid(1, 0, __WALL); ptrace(PTRACE_DETACH, 1, 0, 0); puts("ATTACHED"); return 0; }
'''
    try:
        res = sandbox.box_exec(box, ["sh", "-c", f"cat > /tmp/pt.c <<'EOF'\n{src}EOF\ngcc -o /tmp/pt /tmp/pt.c && /tmp/pt"],
                               timeout=120)
        assert "REFUSED" in res.output, res.output
    finally:
        sandbox.stop_box(box)


# ---- a whole trial ----

@pytest.fixture(scope="module")
def home(tmp_path_factory, grader_image) -> Path:
    home = tmp_path_factory.mktemp("redteam") / "home"
    make_tier(home)
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write("\n" + THIEF_AGENT + SH_BREAKER)
    res = run_doit(home, "agent_image:noop", "agent_image:sleep-thief", "agent_image:sh-breaker", "jobs=1",
                   timeout=1200)
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


@docker
def test_a_try_is_graded_on_what_its_command_left_not_on_what_a_planted_sleep_wrote_later(home):
    """Hole (fixed): the thief rewrote the solution after the try ended, between the archive and the grading,
    so the verdict came from another tree than the archived one (and from work done past the try)."""
    r = trial(home, "sleep-thief", tries=1)
    (one,) = r["tries"]
    assert one["grade"] is not None and one["grade"]["ran"] > 0, r
    assert (r["status"], r["passed_try"]) == ("fail", None), "graded a tree written after the try had ended"
    run = home / "evals" / "aider" / "runs" / "sleep-thief" / "python-hello"
    with tarfile.open(run / one["work_archive"]) as tar:
        kept = tar.extractfile("hello.py").read().decode()
    assert "number + 1" in kept and "number * 2" not in kept
    assert lab_containers(**{"lab.agent": "sleep-thief"}) == []


@docker
def test_an_agent_that_breaks_its_own_container_fails_it_is_not_an_error_to_redo(home):
    """Hole (fixed): try 1 removed /bin/sh, so try 2's exec could not start (exit 126): the trial was an
    ``error`` ("could not run"), kept apart from ``fail`` and redone by the next run: a failing agent could
    trade its fail for a fresh trial."""
    r = trial(home, "sh-breaker")
    assert (r["status"], r["error_kind"]) == ("fail", None), r
    one, two = r["tries"]
    assert one["outcome"] == "fail" and two["outcome"] == "fail" and two["agent"]["exit_code"] in (126, 127)
    assert two["agent"]["fresh_container"] is False and "counted as the agent's failure" in two["note"], two
    assert lab_containers(**{"lab.agent": "sh-breaker"}) == []
