"""Red-team tests of a box's command channel (``rules.sandbox``: ``BOX_IDLE``, ``box_exec``, ``_frames``,
``_left_over``), as an agent's command (root, Docker's default capabilities, knows the end-line marker from
/proc/1/cmdline) would attack it: forged end lines, a process disguised as a zombie or made an orphan of PID 1,
argv with every kind of byte, builtins as command names, closed and flooded streams. Fixed holes are regression
tests; attacks that failed stay only when cheap and when they assert what a removed defence would break."""
from __future__ import annotations

import pytest

docker = pytest.mark.docker

NOOP_AGENT = "lab/agent-noop:latest"  # an agent image: root, Docker's default capabilities, dash, python3

# the marker of this box's end lines, as any command in it can read it (PID 1's last argument)
MARKER = "m=$(tr '\\0' '\\n' < /proc/1/cmdline | tail -n 1)"
# a shell loop (builtins only: no child process) that runs ~1 s, then leaves a mark in /tmp: a process that must
# not outlive its command; its last argument makes its command line end in "<defunct>", as ps shows a zombie's
SURVIVOR = ("sh -c 'i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done; echo survived > /tmp/alive' '<defunct>'")


@pytest.fixture
def box():
    from rules import sandbox
    from rules.config import Limits

    if sandbox.image_id(NOOP_AGENT) is None:
        pytest.skip(f"{NOOP_AGENT} is not built")
    b = sandbox.start_box(NOOP_AGENT, limits=Limits(cpus=1, memory=256 * 1024**2, pids=64, timeout=60),
                          labels={"lab.role": "red-box-test"}, workdir="/tmp")
    yield b
    sandbox.stop_box(b)


def test_a_live_process_whose_command_line_ends_in_defunct_is_left_over():
    """ps shows a zombie's command line as ``[name] <defunct>``; a live process whose last argument is
    ``<defunct>`` looks the same. The state says which is dead (``_top_here`` gives it)."""
    from rules.sandbox import BOX_IDLE, left_over_in

    idle = f"sh -c {BOX_IDLE} sh lab-end-0"
    rows = [["10", "5", idle, "S"], ["11", "10", idle, "S"]]
    titles = ["PID", "PPID", "CMD", "STAT"]
    assert left_over_in({"Titles": titles, "Processes": rows + [["12", "11", "[sh] <defunct>", "Z"]]}) == []
    fake = "sh -c loop <defunct>"
    assert left_over_in({"Titles": titles, "Processes": rows + [["12", "11", fake, "R"]]}) == [fake]
    # a process whose main thread ended while another runs on: ps shows it as a zombie, multi-threaded ("Zl")
    assert left_over_in({"Titles": titles, "Processes": rows + [["12", "11", "[t]", "Zl"]]}) == ["[t]"]
    # ``docker top`` with ps's own columns (the fallback when the cgroup cannot be read here)
    ps = {"Titles": ["PID", "PPID", "STAT", "COMMAND"], "Processes": [[p, pp, st, c] for p, pp, c, st in rows]}
    assert left_over_in(ps) == []
    assert left_over_in({**ps, "Processes": ps["Processes"] + [["12", "10", "Rs", fake]]}) == [fake]
    assert left_over_in({**ps, "Processes": ps["Processes"] + [["12", "10", "Zl", "[t] <defunct>"]]}) == ["[t] <defunct>"]
    assert left_over_in({**ps, "Processes": ps["Processes"] + [["12", "10", "Z+", "[t] <defunct>"]]}) == []


@docker
def test_a_forged_end_line_with_a_process_disguised_as_a_zombie_kills_the_box(box):
    """The command writes its own end line (the box's marker and the command's number are no secret) and goes on
    running as a process whose command line ends in ``<defunct>``: the left-over check took it for a zombie, froze
    it with the box and let it run again in the next try (seen: ``survived`` in /tmp then). It is found, and the
    box killed."""
    from rules import sandbox

    forge = f"""{MARKER}; printf '\\n%s 1 0\\n' "$m"; printf '\\n%s 1 0\\n' "$m" >&2; exec {SURVIVOR}"""
    res = sandbox.box_exec(box, ["sh", "-c", forge], timeout=30)
    assert res.exit_code == 0  # (the forged code: the agent's own to choose anyway)
    assert box.dead and "outlived" in box.why_dead and "survived" in SURVIVOR, box.why_dead


@docker
def test_a_command_that_kills_its_subshell_leaves_nothing_running(box):
    """The subshell that runs a command kills what it left, then writes the end lines; a command that kills the
    subshell first skipped that kill (PID 1 only wrote the end lines), and its orphan, disguised as a zombie,
    ran on into the next try. PID 1 now kills what is left itself."""
    from rules import sandbox

    res = sandbox.box_exec(box, ["sh", "-c", f"({SURVIVOR} &); kill -9 $PPID; sleep 0.2"], timeout=30)
    assert res.exit_code == 137 and not box.dead, (res, box.why_dead)
    seen = sandbox.box_exec(box, ["sh", "-c", "sleep 1.5; ps -eo args; cat /tmp/alive"], timeout=30)
    assert "survived" not in seen.output and "<defunct>" not in seen.output, seen.output


@docker
def test_every_byte_of_an_argument_reaches_the_command_as_sent(box):
    """Arguments go through one line of shell words (``_line``), read and ``eval``'d by PID 1's subshell:
    quotes, ``$``, backticks, newlines, control bytes (never on the attach stream: a detach key would end it),
    non-UTF-8 bytes and a long argument arrive unchanged and run nothing."""
    from rules import sandbox

    args = ["it's", 'a "b"', "$(touch /tmp/pwned)", "`touch /tmp/pwned`", "$HOME ${x:-y} \\", "a\nb\r\n",
            "".join(chr(c) for c in range(1, 32)) + "\x7f", "é ☃", "x" * 100_000, "", " ", "-n", "*",
            "\udcff\udcfe"]  # (bytes 0xff 0xfe as os.fsdecode gives them)
    show = "[a if len(a) < 1000 else (a[:3], len(a)) for a in {}]"
    res = sandbox.box_exec(box, ["python3", "-c", "import os, sys; sys.stdout.write(repr(" + show.format(
        "[os.fsencode(a) for a in sys.argv[1:]]") + ") + ' ' + str(os.path.exists('/tmp/pwned')))", *args], timeout=30)
    assert res.exit_code == 0, res.output[:500]
    want = [a if len(a) < 1000 else (a[:3], len(a)) for a in (x.encode("utf-8", "surrogateescape") for x in args)]
    assert res.output == repr(want) + " False"


@docker
def test_builtins_closed_streams_and_a_flood_without_newline_end_as_a_command_should(box):
    """A command named as a shell builtin (``exit``, ``set``, ``.``, ``exec``) is a program that is not there
    (127, or 126 for ``.``, a folder), never run by PID 1's shell; a command that closes its stdout and stderr still ends; a flood with no
    newline is counted in full and kept capped; the box serves on after each."""
    from rules import sandbox

    for argv in (["exit", "0"], ["set", "--"], [".", "/etc/passwd"], ["exec", "true"], ["wait"]):
        res = sandbox.box_exec(box, argv, timeout=30)
        assert res.exit_code in (126, 127) and not box.dead, (argv, res)  # ("." is a folder: 126)
    res = sandbox.box_exec(box, ["sh", "-c", "exec >&- 2>&-; exit 3"], timeout=30)
    assert res.exit_code == 3 and not box.dead
    res = sandbox.box_exec(box, ["sh", "-c", "head -c 20000000 /dev/zero | tr '\\0' x; exit 4"], timeout=30)
    assert res.exit_code == 4 and res.output_bytes == 20_000_000 and len(res.output) < 2 * sandbox.OUTPUT_CAP
    assert sandbox.box_exec(box, ["true"], timeout=30).exit_code == 0


@docker
def test_a_forged_end_line_with_a_huge_exit_code_is_output_not_a_crash(box):
    """An end line's exit code is at most 3 digits; a forged one of 5000 digits made ``int()`` raise ValueError
    (Python's limit on digits) out of ``box_exec``: lab crashed, and the try was lab's error, not the agent's."""
    from rules import sandbox

    forge = (f"""{MARKER}; d=$(python3 -c 'print("9" * 5000)'); printf '\\n%s 1 %s\\n' "$m" "$d"; """
             """printf '\\n%s 1 %s\\n' "$m" "$d" >&2; exit 5""")
    res = sandbox.box_exec(box, ["sh", "-c", forge], timeout=30)
    assert res.exit_code == 5 and "9" * 4000 in res.output and not box.dead, (res.exit_code, box.why_dead)


@docker
def test_a_command_flooding_its_output_is_killed_at_its_timeout(box):
    """The deadline is looked at between reads even while output keeps coming: a flood without newline ends at
    the timeout (in the middle of a frame), the box killed, the output counted and capped."""
    import time

    from rules import sandbox

    start = time.monotonic()
    res = sandbox.box_exec(box, ["sh", "-c", "while :; do printf xxxxxxxxxxxxxxxx; done"], timeout=1)
    assert res.timed_out and res.exit_code is None and box.dead and time.monotonic() - start < 3
    assert res.output_bytes > 2 * sandbox.OUTPUT_CAP and len(res.output) < 2 * sandbox.OUTPUT_CAP


# a program whose main thread ends (pthread_exit) while another thread runs on, ~1 s, then leaves a mark in /tmp
THREAD_C = r"""#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *run(void *a) { usleep(1000000); FILE *f = fopen("/tmp/alive", "w"); if (f) { fputs("survived", f); fclose(f); } return a; }
int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); pthread_exit(0); }
"""


@docker
def test_a_process_whose_main_thread_ended_is_not_taken_for_a_zombie(box):
    """A process whose main thread ended (``pthread_exit``) while another runs on shows as a zombie in /proc and
    ps (state Z, ``<defunct>``): after a forged end line, the left-over check let it run on into the next try
    (seen: ``survived``). Its other threads make it alive (``Zl``): found, and the box killed."""
    from rules import sandbox

    made = sandbox.box_exec(box, ["python3", "-c", f"open('/tmp/t.c', 'w').write({THREAD_C!r})\nimport os\n"
                                  "os.execvp('gcc', ['gcc', '-pthread', '-o', '/tmp/t', '/tmp/t.c'])"], timeout=60)
    assert made.exit_code == 0, made.output
    forge = f"""{MARKER}; printf '\\n%s 2 0\\n' "$m"; printf '\\n%s 2 0\\n' "$m" >&2; exec /tmp/t"""
    sandbox.box_exec(box, ["sh", "-c", forge], timeout=30)
    assert box.dead and "outlived" in box.why_dead, box.why_dead


@docker
def test_a_namespace_lent_on_tells_nothing_of_what_the_last_container_sent(grader_image):
    """A null network's namespace keeps its traffic counters (lo's bytes and packets in /proc/net/dev, every
    protocol's in /proc/net/snmp): a container that sent 4242 datagrams told the next container on the holder,
    another trial's, the number 4242 (seen), a message from one trial to another. A namespace in which anything
    was sent is not lent again."""
    from rules import sandbox, trial
    from rules.config import Limits

    if sandbox.image_id(NOOP_AGENT) is None:
        pytest.skip(f"{NOOP_AGENT} is not built")
    kw = {"network": trial.agent_network("none", grader_image), "labels": {"lab.role": "red-null-count"},
          "limits": Limits(cpus=1, memory=256 * 1024**2, pids=32, timeout=60)}
    send = ("import socket\nu = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "for _ in range(4242): u.sendto(b'x', ('127.0.0.1', 9))\n"
            "try:\n    u.sendto(b'x', ('192.0.2.1', 9))\nexcept OSError as e:\n    print(e)\n")  # (no route: counted)
    read = ["sh", "-c", "readlink /proc/self/ns/net; grep lo: /proc/net/dev; grep -A1 -e '^Udp:' -e '^Ip:' /proc/net/snmp"]
    before = sandbox.run(NOOP_AGENT, read, **kw).output
    sent = sandbox.run(NOOP_AGENT, ["python3", "-c", send], **kw)
    assert sent.exit_code == 0 and "unreachable" in sent.output, sent.output
    after = sandbox.run(NOOP_AGENT, read, **kw).output
    assert "4242" not in after and after.split("\n", 1)[1] == before.split("\n", 1)[1], (before, after)
    again = sandbox.run(NOOP_AGENT, read, **kw).output
    assert again.split()[0] == after.split()[0]  # a container that sent nothing leaves the namespace to the next


@docker
def test_a_stream_lost_while_the_box_runs_is_lab_s_error_not_the_agent_s(box):
    """Only the engine (or lab) ends a box's attach stream while the box runs: that is an infrastructure fault,
    raised as SandboxError (the trial an infrastructure error), never an exit code charged to the agent."""
    import threading

    from rules import sandbox
    from rules.sandbox.box import _raw_socket

    threading.Timer(0.5, lambda: _raw_socket(box.stream).shutdown(2)).start()  # as the engine would
    with pytest.raises(sandbox.SandboxError, match="lost its stream"):
        sandbox.box_exec(box, ["sleep", "5"], timeout=30)
    assert box.dead and not sandbox.box_alive(box)
