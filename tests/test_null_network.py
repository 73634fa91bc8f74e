"""The null network (``sandbox.NULL``): no network, in a loopback-only namespace a worker thread keeps per role and
lends to one container after another; and the box's left-over check read from its cgroup (``_top_here``)."""
from __future__ import annotations

import shlex
import threading
import time

import pytest

docker = pytest.mark.docker

NETNS = ["python3", "-c", "import os, socket; print(os.readlink('/proc/self/ns/net'), "
                          "sorted(n for _, n in socket.if_nameindex()))"]


def netns(image: str, role: str) -> tuple[str, str]:
    """(network namespace, interfaces) of a fresh NULL container of ``role`` run in this thread."""
    from rules import sandbox
    from rules.config import Limits

    res = sandbox.run(image, NETNS, network=sandbox.NULL, labels={"lab.role": role}, read_only=True,
                      limits=Limits(cpus=1, memory=256 * 1024**2, pids=32, timeout=60))
    assert res.exit_code == 0, res.output
    ns, _, names = res.output.strip().partition(" ")
    return ns, names


@docker
def test_null_containers_have_loopback_only_and_share_a_namespace_one_after_another(grader_image):
    first, names = netns(grader_image, "null-test")
    assert names == "['lo']"
    again, _ = netns(grader_image, "null-test")
    assert again == first  # lent again, not made anew (what saves Docker's ~80 ms per container)
    other_role, _ = netns(grader_image, "null-test-other")
    assert other_role != first  # a grader never shares an agent's namespace

    seen: list[str] = []
    worker = threading.Thread(target=lambda: seen.append(netns(grader_image, "null-test")[0]))
    worker.start()
    worker.join()
    assert seen and seen[0] != first  # another worker thread: a namespace of its own (they run side by side)


@docker
def test_nothing_a_container_started_is_left_in_the_namespace_for_the_next(grader_image):
    from rules import sandbox
    from rules.config import Limits

    limits = Limits(cpus=1, memory=256 * 1024**2, pids=32, timeout=60)
    serve = ("import socket, os, time\n"
             "s = socket.socket(); s.bind(('127.0.0.1', 47123)); s.listen()\n"
             "if os.fork(): print('listening', flush=True); os._exit(0)\n"
             "os.setsid(); time.sleep(300)\n")
    probe = ("import socket\ntry:\n    socket.create_connection(('127.0.0.1', 47123), timeout=2); print('open')\n"
             "except OSError as e:\n    print('closed', type(e).__name__)\n")
    same = [sandbox.run(grader_image, ["python3", "-c", serve], network=sandbox.NULL, labels={"lab.role": "null-left"},
                        limits=limits, read_only=True)]
    assert "listening" in same[0].output
    # the listener's daemon outlived its command, never its container: the next one finds the port closed
    res = sandbox.run(grader_image, ["python3", "-c", probe], network=sandbox.NULL, labels={"lab.role": "null-left"},
                      limits=limits, read_only=True)
    assert res.output.strip() == "closed ConnectionRefusedError", res.output


@docker
def test_a_holder_removed_under_a_run_is_replaced(grader_image):
    from rules import sandbox
    from rules.sandbox.netns import _holders

    key = (threading.get_ident(), "null-gone", grader_image)
    netns(grader_image, "null-gone")
    holder = _holders[key]
    sandbox.client().api.remove_container(holder, force=True)  # another process's cleanup(only_dead_owners=False)
    _, names = netns(grader_image, "null-gone")  # (a namespace's inode number may be reused: compare holders)
    assert names == "['lo']" and _holders[key] != holder

    holder = _holders[key]
    sandbox.client().api.kill(holder)  # stopped, not removed: the container is created, then cannot start
    box = sandbox.start_box(grader_image, network=sandbox.NULL, labels={"lab.role": "null-gone"}, read_only=True)
    try:
        assert sandbox.box_exec(box, NETNS, timeout=60).output.split()[1:] == ["['lo']"]
        assert _holders[key] != holder
    finally:
        sandbox.stop_box(box)
    assert sandbox.client().api.containers(all=True, filters={"id": holder}) == []  # the dead one was removed


@docker
def test_the_left_over_check_reads_the_cgroup_as_docker_top_would(grader_image):
    from rules import sandbox
    from rules.config import Limits
    from rules.sandbox.box import _top_here

    box = sandbox.start_box(grader_image, limits=Limits(cpus=1, memory=256 * 1024**2, pids=64, timeout=60),
                            labels={"lab.role": "box-test"}, user="1000")
    api = sandbox.client().api
    try:
        assert box.procs and box.id in box.procs  # the local engine: read here, not through `docker top`
        for _ in range(50):  # (PID 1 forks its idle subshell a moment after the start: two snapshots may differ)
            here, engine = _top_here(box.procs, box.init), api.top(box.id)
            if sorted(r[0] for r in here["Processes"]) == sorted(r[1] for r in engine["Processes"]):
                break
            time.sleep(0.02)
        assert sandbox.left_over_in(here) == sandbox.left_over_in(engine) == []
        assert sorted(r[0] for r in here["Processes"]) == sorted(r[1] for r in engine["Processes"])
        assert [r[2] for r in here["Processes"]] == [r[-1] for r in engine["Processes"]]  # same command lines
        api.exec_start(api.exec_create(box.id, ["sleep", "300"], user="root")["Id"], detach=True)
        api.exec_start(api.exec_create(box.id, ["sh", "-c", "sleep 301 &"], user="root")["Id"],
                       detach=True)  # its sh ends at once: sleep 301 is left to the box's PID 1
        want = ["sleep 300", "sleep 301"]
        for _ in range(100):  # (the two snapshots are taken a moment apart while the processes start and end)
            here, engine = _top_here(box.procs, box.init), api.top(box.id)
            if sorted(sandbox.left_over_in(here)) == sorted(sandbox.left_over_in(engine)) == want:
                break
            time.sleep(0.02)
        assert sorted(sandbox.left_over_in(here)) == sorted(sandbox.left_over_in(engine)) == want
    finally:
        sandbox.stop_box(box)
    assert _top_here(box.procs, box.init) is None  # gone: the engine is asked, and says nothing is left


@docker
def test_a_command_run_at_once_in_a_new_box_finds_it_ready(grader_image):
    """The engine's start can return before the box's PID 1 runs its idle shell; an exec then failed with 126
    ("stat /proc/1/exe: permission denied"), an infrastructure fault counted as the agent's (seen once in ~150
    starts): ``start_box`` waits for it."""
    from rules import sandbox
    from rules.config import Limits

    for _ in range(40):
        box = sandbox.start_box(grader_image, network=sandbox.NULL, labels={"lab.role": "box-test"},
                                limits=Limits(cpus=1, memory=128 * 1024**2, pids=16, timeout=60))
        try:
            res = sandbox.box_exec(box, ["true"], timeout=30)
            assert res.exit_code == 0, res.output
        finally:
            sandbox.stop_box(box)


NOOP_AGENT = "lab/agent-noop:latest"  # an agent image: root, Docker's default capabilities


@docker
def test_a_box_cannot_leave_etc_hosts_or_resolv_conf_to_the_next_box_on_its_holder(grader_image):
    """A container joining ``container:<holder>`` gets the holder's /etc/hosts, /etc/resolv.conf and /etc/hostname
    (Docker bind-mounts the holder's files, writable unless the joining container is read-only): an agent box
    (root, not read-only) that rewrote them would leave its text to the next agent box of the thread, another trial
    (e.g. `localhost` pointed elsewhere, or a message). They are mounted read-only in it."""
    from rules import sandbox, trial
    from rules.config import Limits

    if sandbox.image_id(NOOP_AGENT) is None:
        pytest.skip(f"{NOOP_AGENT} is not built")
    limits = Limits(cpus=1, memory=256 * 1024**2, pids=64, timeout=60)
    labels = {"lab.role": "null-etc-test"}
    network = trial.agent_network("none", grader_image)
    files = ("/etc/hosts", "/etc/resolv.conf", "/etc/hostname")
    first = sandbox.start_box(NOOP_AGENT, network=network, labels=labels, limits=limits)
    try:
        wrote = sandbox.box_exec(first, ["sh", "-c", "; ".join(f"echo left-by-trial-A >> {f} || echo refused"
                                                                for f in files) + "; " + shlex.join(NETNS)],
                                 timeout=60).output
    finally:
        sandbox.stop_box(first)
    assert wrote.count("Read-only file system") == 3 and wrote.count("refused") == 3, wrote
    second = sandbox.start_box(NOOP_AGENT, network=network, labels=labels, limits=limits)
    try:
        seen = sandbox.box_exec(second, ["sh", "-c", f"cat {' '.join(files)}; {shlex.join(NETNS)}"], timeout=60).output
    finally:
        sandbox.stop_box(second)
    assert "left-by-trial-A" not in seen and "localhost" in seen
    ns = [line for line in wrote.splitlines() if line.startswith("net:")]
    assert ns and ns[0].split()[0] in seen  # the same namespace, lent from one box to the next: what is tested


# An agent image whose /bin/sh first leaves a loopback server behind (then runs the real shell): what an agent's
# author controls. The holder of a thread's agent namespace is started from the image of its first container.
EVIL_SH = """#!/bin/dash
(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 47999)); s.listen()
while True: c = s.accept()[0]; c.sendall(b"from-the-holder"); c.close()' >/dev/null 2>&1 &)
exec /bin/dash "$@"
"""


@docker
def test_an_agent_image_cannot_run_a_process_in_the_namespace_another_agents_boxes_join(grader_image):
    """The holder runs ``sh -c BOX_IDLE`` from the image of the first container that asked for the namespace: an
    agent image's own /bin/sh then lives in the namespace every later box of the thread and role joins (other
    agents' trials): here a server on 127.0.0.1:47999 that the next agent's box reaches (it could as well squat the
    ports that agent's tests need, or carry a message from one trial to the next). An agent's container asks for
    ``null_network(<grader image>)``: its holder is lab's."""
    from rules import sandbox, trial
    from rules.config import Limits

    if sandbox.image_id(NOOP_AGENT) is None:
        pytest.skip(f"{NOOP_AGENT} is not built")
    evil = "lab/test-evil-holder:latest"
    sandbox.build_image(evil, f"FROM {NOOP_AGENT}\nCOPY sh /usr/bin/sh.evil\n"
                              "RUN chmod 755 /usr/bin/sh.evil && mv -f /usr/bin/sh.evil /usr/bin/sh\n",
                        files={"sh": EVIL_SH.encode()})
    limits = Limits(cpus=1, memory=256 * 1024**2, pids=64, timeout=60)
    labels = {"lab.role": "null-evil-test"}
    probe = ["python3", "-c", ("import os, socket\nprint(os.readlink('/proc/self/ns/net'))\ntry:\n"
                               "    c = socket.create_connection(('127.0.0.1', 47999), timeout=2)\n"
                               "    print('open', c.recv(100))\nexcept OSError as e:\n    print('closed', e)\n")]
    network = trial.agent_network("none", grader_image)  # what an agent's container runs with
    assert network != sandbox.NULL and grader_image in network
    first = sandbox.start_box(evil, network=network, labels=labels, limits=limits)
    first_ns = sandbox.box_exec(first, NETNS, timeout=60).output.split()[0]
    sandbox.stop_box(first)
    res = sandbox.run(NOOP_AGENT, probe, network=network, labels=labels, limits=limits)
    assert res.exit_code == 0, res.output
    assert "from-the-holder" not in res.output and "closed" in res.output
    assert first_ns in res.output  # the second joined the namespace the first had: it could have been reached


@docker
def test_a_grading_leaves_no_time_wait_port_that_the_next_grading_cannot_bind(grader_image):
    """TCP connections in TIME_WAIT (the side that closed first: here a server) belong to the namespace, not to a
    process: they outlive the container for ~60 s, and a server of the next grading on the holder that binds the
    same port (without SO_REUSEADDR) fails with EADDRINUSE, a failure counted against that trial's agent. No
    malice is needed: two gradings of a task whose tests serve on a fixed port, one after the other."""
    from rules import sandbox
    from rules.config import Limits

    limits = Limits(cpus=1, memory=256 * 1024**2, pids=32, timeout=60)
    kw = {"network": sandbox.NULL, "labels": {"lab.role": "null-tw-test"}, "limits": limits, "read_only": True,
          "capabilities": ()}
    serve = ("import socket\ns = socket.socket(); s.bind(('127.0.0.1', 47555)); s.listen()\n"
             "for _ in range(3):\n"
             "    c = socket.create_connection(('127.0.0.1', 47555))\n"
             "    a = s.accept()[0]; a.close(); c.recv(1); c.close()\n"
             "print('served')\n")
    bind = ("import socket\ntry:\n    socket.socket().bind(('127.0.0.1', 47555)); print('bound')\n"
            "except OSError as e:\n    print('cannot bind', e)\n")
    assert "served" in sandbox.run(grader_image, ["python3", "-c", serve], **kw).output
    res = sandbox.run(grader_image, ["python3", "-c", bind], **kw)
    assert "bound" in res.output, res.output


@docker
def test_a_container_finds_its_own_host_name_without_dirtying_the_namespace(grader_image):
    """A program that looks its own host name up (the JVM's JUnit report does) finds it in the holder's
    /etc/hosts; asked of the resolvers, each try added to the namespace's IP counters ("OutNoRoutes"), and a
    namespace whose counters moved is never lent again: every Java grading paid for a new one (~0.2 s)."""
    from rules import sandbox
    from rules.config import Limits

    look = ["python3", "-c", "import os, socket; print(os.readlink('/proc/self/ns/net'), "
                             "socket.gethostbyname(socket.gethostname()))"]
    kw = {"network": sandbox.NULL, "labels": {"lab.role": "null-host-test"}, "read_only": True,
          "limits": Limits(cpus=1, memory=256 * 1024**2, pids=32, timeout=60)}
    first, second = (sandbox.run(grader_image, look, **kw) for _ in range(2))
    assert first.exit_code == second.exit_code == 0, first.output + second.output
    assert first.output.split()[1] == "127.0.0.1"
    assert first.output.split()[0] == second.output.split()[0]  # lent again: nothing in its counters moved
