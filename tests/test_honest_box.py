"""Red-team tests of one agent container per trial (``rules.sandbox`` boxes, ``rules.trial.AgentContainer``) and
of what lab reads of what the agent leaves (work tree, ``/lab/out``).

The agent runs as root in its box with Docker's default capabilities and a writable root filesystem, so it can
replace any program lab runs there later (``sleep``, ``sh``, the libraries through ``/etc/ld.so.preload``). Each
test plants one such trick and checks that nothing the agent started runs after its try (the box is frozen
between tries), that a trick does not turn a fail into an ``error`` the next run redoes, and that lab's host-side
walks neither follow links nor crash. Fixed holes are regression tests; open ones strict xfails. Agents are a
few lines of shell (and C: the grader image has gcc) on the ``noop`` image, on ``tests/test_trial.py``'s
fixture tier.
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

# /lab/out/usage.json as a symlink to a file of the host (resolved on the host), or as a FIFO no one writes
OUT_TRICKS = f"""
[usage-link]
image = "noop"
command = ["sh", "-c", '''{GOOD} > {{files}}; ln -s HOST_FILE {{out}}/usage.json''']

[usage-fifo]
image = "noop"
command = ["sh", "-c", '''{GOOD} > {{files}}; mkfifo {{out}}/usage.json''']
"""

# a folder 2100 levels deep (deeper than Python's recursion limit, its path longer than PATH_MAX) in the work tree
# or in /lab/out; the solution wrong, so a second try follows
DEEP = "d=$1; i=0; while [ $i -lt 2100 ]; do mkdir a && cd a || break; i=$((i+1)); done; echo x > f; cd \"$d\""
DEEP_AGENTS = f"""
[deep-work]
image = "noop"
command = ["sh", "-c", '''{WRONG} > {{files}}; deep() {{ {DEEP}; }}; deep /work; echo made''']

[deep-out]
image = "noop"
command = ["sh", "-c", '''{WRONG} > {{files}}; cd {{out}}; deep() {{ {DEEP}; }}; deep {{out}}; echo made''']
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
    archived, digested and graded it. Now PID 1 never runs it, and the box is frozen between commands."""
    from rules import sandbox

    work = tmp_path / "work"
    work.mkdir()
    box = _box(grader_image, work)
    try:
        res = sandbox.box_exec(box, ["sh", "-c", plant("/work/late.txt", "late\\n", 0)], timeout=120)
        assert res.exit_code == 0 and "planted" in res.output, res.output
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
def test_no_process_a_command_left_runs_during_the_next(grader_image, tmp_path):
    """Hole (fixed): PID 1 started the agent's `sleep` as its idle one after every command, so it ran on in
    every later command of the trial. PID 1 now runs nothing from the box's filesystem after it starts."""
    from rules import sandbox

    work = tmp_path / "work"
    work.mkdir()
    box = _box(grader_image, work)
    try:
        assert sandbox.box_exec(box, ["sh", "-c", plant("/work/late.txt", "late\\n", 0)], timeout=120).exit_code == 0
        (work / "late.txt").unlink(missing_ok=True)
        res = sandbox.box_exec(box, ["/usr/bin/sleep", "1"], timeout=60)
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
        f.write("\n" + THIEF_AGENT + SH_BREAKER + DEEP_AGENTS + OUT_TRICKS.replace("HOST_FILE", str(home / "host-usage.json")))
    (home / "host-usage.json").write_text('{"tokens_sent": 999, "tokens_received": 999, "cost": 999}')
    res = run_doit(home, *[f"agent_image:{n}" for n in ("noop", "sleep-thief", "sh-breaker", "usage-link",
                                                         "usage-fifo", "deep-work", "deep-out")], "jobs=1", timeout=1200)
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
    """Hole (fixed): try 1 removed /bin/sh, so try 2's command could not start (exit 126 or 127): the trial was an
    ``error`` ("could not run"), kept apart from ``fail`` and redone by the next run: a failing agent could
    trade its fail for a fresh trial. Now try 2 runs again in a fresh container and is graded."""
    r = trial(home, "sh-breaker")
    assert (r["status"], r["error_kind"]) == ("fail", None), r
    one, two = r["tries"]
    assert one["outcome"] == "fail" and two["outcome"] == "fail" and two["agent"]["exit_code"] == 0, two
    assert two["agent"]["fresh_container"] is True and "could not run in the last one (exit 12" in two["note"], two
    assert lab_containers(**{"lab.agent": "sh-breaker"}) == []


def test_usage_json_is_read_only_as_a_regular_file(tmp_path):
    """Hole (fixed): ``read_usage_file`` followed a symlink (on the host: to any host file, ``/dev/zero`` would
    exhaust lab's memory) and opened a FIFO (lab waited for ever for a writer)."""
    import os
    import threading

    from rules.agents import read_usage_file

    host = tmp_path / "host.json"
    host.write_text('{"tokens_sent": 5}')
    assert read_usage_file(host) == {"tokens_sent": 5, "tokens_received": None, "tokens_cached": None, "cost": None}
    (tmp_path / "link.json").symlink_to(host)
    assert read_usage_file(tmp_path / "link.json") is None
    os.mkfifo(tmp_path / "fifo.json")
    got = []
    reader = threading.Thread(target=lambda: got.append(read_usage_file(tmp_path / "fifo.json")), daemon=True)
    reader.start()
    reader.join(5)
    assert got == [None], "lab waited on a FIFO the agent left as usage.json"


def _trial_in_thread(home, agent, seconds=180):
    import threading

    got = []
    runner = threading.Thread(target=lambda: got.append(trial(home, agent, tries=1)), daemon=True)
    runner.start()
    runner.join(seconds)
    assert got, f"the trial of {agent} did not end in {seconds} s"
    return got[0]


@docker
def test_a_usage_file_that_is_a_link_or_a_fifo_counts_for_nothing(home):
    linked = _trial_in_thread(home, "usage-link")
    assert linked["status"] == "pass" and linked["usage"] is None, linked["usage"]
    fifo = _trial_in_thread(home, "usage-fifo")
    assert fifo["status"] == "pass" and fifo["usage"] is None
    assert lab_containers(**{"lab.agent": "usage-link"}) == lab_containers(**{"lab.agent": "usage-fifo"}) == []


# a `sh` that, called as `sh -c BOX_EXEC sh CMD...`, runs CMD without the kill, then leaves behind a writer whose
# command line is the idle subshell's (a plain `sh -c ...` runs as it should)
FAKE_SH = """#!/usr/bin/dash
[ "$3" = sh ] || exec /usr/bin/dash "$@"
shift 3; "$@"; rc=$?
/tmp/launch
exit $rc
"""
def _launch_c() -> str:
    """A launcher that leaves /tmp/writer running, orphaned (its parent PID 1), under PID 1's own command line
    (``sh -c BOX_IDLE sh <the box's marker>``, copied from /proc/1/cmdline): what the idle subshell looks like."""
    return ("#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n"
            "int main(void) { if (fork() == 0) { setsid(); if (fork() == 0) {\n"
            "  static char buf[65536]; char *argv[64]; int n = 0; FILE *f = fopen(\"/proc/1/cmdline\", \"r\");\n"
            "  size_t len = fread(buf, 1, sizeof buf - 1, f);\n"
            "  for (size_t i = 0; i < len && n < 63; i += strlen(buf + i) + 1) argv[n++] = buf + i;\n"
            "  argv[n] = 0; execv(\"/tmp/writer\", argv); } }\n  return 0; }\n")


WRITER_C = r"""#include <stdio.h>
#include <unistd.h>
int main(void) { for (;;) { FILE *o = fopen("/work/late.txt", "a"); if (o) { fputs("late\n", o); fclose(o); }
  usleep(20000); } }
"""


@docker
def test_a_replaced_sh_does_not_skip_the_kill_after_the_command(grader_image, tmp_path):
    """Hole (fixed): every command ran as ``sh -c BOX_EXEC``, the box's ``sh``, which the agent may replace
    with one that leaves a process behind under the idle subshell's command line (``_left_over`` lets it be).
    The commands now run in PID 1's own shell (``/proc/1/exe``)."""
    from rules import sandbox
    from rules.sandbox.box import _left_over

    work = tmp_path / "work"
    work.mkdir()
    for name, text in (("fsh", FAKE_SH), ("launch.c", _launch_c()), ("writer.c", WRITER_C)):
        (work / name).write_text(text)
    box = _box(grader_image, work)
    try:
        planted = sandbox.box_exec(box, ["sh", "-c", "gcc -o /tmp/launch /work/launch.c && gcc -o /tmp/writer "
                                         "/work/writer.c && cp /work/fsh /tmp/fsh && chmod +x /tmp/fsh && "
                                         "mv /tmp/fsh /usr/bin/sh && echo ok"], timeout=120)
        assert "ok" in planted.output, planted.output
        assert sandbox.box_exec(box, ["true"], timeout=60).exit_code == 0
        assert not box.dead and _left_over(box) == []
        (work / "late.txt").unlink(missing_ok=True)
        res = sandbox.box_exec(box, ["/usr/bin/dash", "-c", "/usr/bin/sleep 1; test -e /work/late.txt && echo LATE"],
                               timeout=60)
        assert "LATE" not in res.output, "a process left by a replaced sh ran on into the next command"
    finally:
        sandbox.stop_box(box)
    assert lab_containers(**{"lab.role": "box-redteam"}) == []


@docker
def test_an_idle_box_idles(grader_image, tmp_path):
    """PID 1 blocks in its subshell's read (it neither spins nor exits): after a command, the box holds PID 1
    and one subshell, and the same two a second later, with no CPU time spent."""
    from rules import sandbox

    work = tmp_path / "work"
    work.mkdir()
    box = _box(grader_image, work)
    try:
        assert sandbox.box_exec(box, ["sh", "-c", "for i in 1 2 3; do sleep 100 & done"], timeout=60).exit_code == 0
        api = sandbox.client().api
        api.unpause(box.id)
        box.paused = False
        time.sleep(0.5)
        first = api.top(box.id)["Processes"]
        time.sleep(1.5)
        second = api.top(box.id)["Processes"]
        assert len(first) == 2 and [r[1] for r in first] == [r[1] for r in second], (first, second)
        assert all(r[6] == "00:00:00" for r in second), second
        assert sandbox.box_exec(box, ["true"], timeout=60).exit_code == 0 and not box.dead
    finally:
        sandbox.stop_box(box)


@docker
def test_a_work_tree_too_deep_to_walk_is_the_agents_failure_not_a_crash(home):
    """Hole (fixed): lab's walks (``remove_special_files``, ``work_digest``, ``archive_work``, ``rmtree``) recurse;
    a folder 2100 levels deep made them raise RecursionError, so the trial ended with no record and the next
    run ran it again: a failing agent could buy itself a new trial."""
    r = trial(home, "deep-work")
    assert (r["status"], r["error"]) == ("fail", None), r
    (one,) = r["tries"]
    assert one["grade"] is None and "lab cannot read the work tree (folders nested deeper than" in one["note"], one
    assert "made" in logs(home, "deep-work")[0]
    assert lab_containers(**{"lab.agent": "deep-work"}) == []


@docker
def test_a_lab_out_too_deep_to_walk_keeps_nothing_of_it_and_the_trial_goes_on(home):
    r = trial(home, "deep-out")
    assert (r["status"], r["error"], len(r["tries"])) == ("fail", None, 2), r
    assert all(t["out_files"] == [] and "lab cannot read /lab/out" in t["note"] for t in r["tries"]), r["tries"]
    assert all(t["grade"] is not None for t in r["tries"])
    assert lab_containers(**{"lab.agent": "deep-out"}) == []


def logs(home: Path, agent: str, task: str = "python-hello") -> list[str]:
    run = home / "evals" / "aider" / "runs" / agent / task
    return [(run / f"agent-{n}.log").read_text() for n in (1, 2) if (run / f"agent-{n}.log").exists()]


NOKILL_C = r"""#include <errno.h>
#include <sys/types.h>
int kill(pid_t pid, int sig) { errno = ESRCH; return -1; }
"""


@docker
def test_a_preloaded_library_does_not_skip_the_kill_after_the_command(grader_image, tmp_path):
    """Hole (fixed): /etc/ld.so.preload made PID 1's shell (the next command's wrapper, when commands were
    ``docker exec``'d) load a `kill` that does nothing, so a process left under the idle subshell's command line
    ran on into the trial's later commands. Now PID 1's own subshell (a fork: no library is loaded anew) kills
    it; and PID 1 runs one idle subshell at a time, so a second one would be a leftover, and the box killed."""
    from rules import sandbox

    work = tmp_path / "work"
    work.mkdir()
    for name, text in (("nokill.c", NOKILL_C), ("launch.c", _launch_c()), ("writer.c", WRITER_C)):
        (work / name).write_text(text)
    box = _box(grader_image, work)
    try:
        planted = sandbox.box_exec(box, ["sh", "-c", "gcc -shared -fPIC -o /usr/local/lib/nokill.so /work/nokill.c && "
                                         "gcc -o /tmp/launch /work/launch.c && gcc -o /tmp/writer /work/writer.c && "
                                         "echo /usr/local/lib/nokill.so > /etc/ld.so.preload && echo ok"],
                                   timeout=120)
        assert "ok" in planted.output, planted.output
        launched = sandbox.box_exec(box, ["/tmp/launch"], timeout=60)  # every new program loads the `kill`
        assert launched.exit_code == 0
        if box.dead:  # the writer outlived the kill: the box went with it
            assert "a process outlived the command (sh -c exec 3<&0;" in box.why_dead, box.why_dead
        else:  # the writer was killed with the command: nothing writes during the next one
            (work / "late.txt").unlink(missing_ok=True)
            res = sandbox.box_exec(box, ["/usr/bin/dash", "-c", "/usr/bin/sleep 1; test -e /work/late.txt && echo LATE"],
                                   timeout=60)
            assert res.exit_code == 1 and "LATE" not in res.output, res.output
            assert not (work / "late.txt").exists()
    finally:
        sandbox.stop_box(box)


def test_a_second_idle_subshell_is_a_leftover():
    from rules.sandbox import BOX_IDLE, left_over_in

    titles = ["UID", "PID", "PPID", "CMD"]
    idle = f"sh -c {BOX_IDLE}"
    rows = [["root", "10", "5", idle], ["root", "11", "10", idle]]
    assert left_over_in({"Titles": titles, "Processes": rows}) == []
    assert left_over_in({"Titles": titles, "Processes": rows + [["root", "12", "10", idle]]}) == [idle]
    assert left_over_in({"Titles": titles, "Processes": rows + [["root", "13", "10", "[sh] <defunct>"]]}) == []
